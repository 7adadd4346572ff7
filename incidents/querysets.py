from __future__ import annotations

import time
from datetime import datetime
from itertools import combinations

from django.conf import settings
from django.db import connections, models
from django.db.models import F, Q, Value
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Concat, Lower

from common.memo import Memo
from incidents.catalog import tag_name_normalized
from incidents.search_words import WordQuery, word_query

# Trigram indexes cannot see terms shorter than three characters ("显存", "of"): those go to
# the word index.
FTS_MIN_TERM = 3

# What each place a term appears in adds to an incident's relevance. A title (in any
# language) says what the incident is; each tag naming the term is a curator saying so again;
# the text counts each occurrence up to a cap, so that a long remedy never outweighs a title.
TITLE_WEIGHT = 3
PHRASE_IN_TITLE_WEIGHT = 6
TAG_WEIGHT = 2
TAG_CAP = 3
TEXT_CAP = 5
# What a row of the incident list shows, and the keys it may be sorted by.
ROW_COLUMNS = (
    "slug",
    "title",
    "language",
    "translations",
    "stage",
    "discipline",
    "severity",
    "recurrence_count",
    "occurred_on",
    "updated_at",
    "reporter",
    "tag_list",
)
# A search shows this many of its matches at most, the most recently updated.
RANKED_AT_MOST = 500
# PostgreSQL: a search looks for those among this many most recently updated incidents first
# (the search indexes hold `updated_at` too, migration 0024: the index keeps the recent matches
# and only those rows are read), and among the older ones only when fewer are there: those it
# reads from the indexes, which is cheap since they are few. No search reads the book from end
# to end in date order.
RECENT_WINDOW = 50_000
EDGE_KEPT_SECONDS = 300
# A search with both kinds of terms: the word index's matches are often far fewer than the
# trigram index's (a digit or a Chinese pair beside an everyday English word), and the
# database, which cannot tell, read both and intersected them (106 ms at a million incidents
# for "checkpoint 3": the 405,000 rows of "checkpoint" for the one of "3"). So the older
# matches of its words alone are read first, up to this many; when that is all of them, the
# other terms are tested on those rows alone.
FEW_WORD_MATCHES = 2000
_edges: Memo[datetime | None] = Memo(size=4)


def _titles():
    """The slug and the title in every language, lowercased, as one expression."""
    parts = [F("slug"), F("title")]
    for code, _name in settings.LANGUAGES:
        parts.append(
            Coalesce(KT(f"translations__{code}__title"), Value(""), output_field=models.CharField())
        )
    spaced = [piece for part in parts for piece in (part, Value(" "))]
    return Lower(Concat(*spaced, output_field=models.CharField()))


def _relevance(queryset: models.QuerySet, terms: list[str]) -> RawSQL:
    """The relevance of a row to the search `terms`, as one SQL expression. It is written as
    SQL rather than composed of expressions: the ORM would resolve and compile the titles'
    expression once per term, which cost a search more than the rest of its page."""
    connection = connections[queryset.db]
    contains = "strpos({}, %s) > 0" if connection.vendor == "postgresql" else "instr({}, %s) > 0"
    least = "LEAST" if connection.vendor == "postgresql" else "MIN"
    table = connection.ops.quote_name(queryset.model._meta.db_table)
    tags = f"LOWER({table}.{connection.ops.quote_name('tag_list')})"
    document = f"{table}.{connection.ops.quote_name('search_document')}"
    titles, titles_params = _titles_sql(queryset)

    def occurrences(column: str, term: str) -> tuple[str, list]:
        return f"((LENGTH({column}) - LENGTH(REPLACE({column}, %s, ''))) / %s)", [term, len(term)]

    pieces: list[str] = []
    params: list = []
    for term in terms:
        in_tags, tag_params = occurrences(tags, term)
        in_text, text_params = occurrences(document, term)
        pieces += [
            f"CASE WHEN {contains.format(titles)} THEN %s ELSE 0 END",
            f"%s * {least}({in_tags}, %s)",
            f"{least}({in_text}, %s)",
        ]
        params += [*titles_params, term, TITLE_WEIGHT]
        params += [TAG_WEIGHT, *tag_params, TAG_CAP, *text_params, TEXT_CAP]
    if len(terms) > 1:
        pieces.append(f"CASE WHEN {contains.format(titles)} THEN %s ELSE 0 END")
        params += [*titles_params, " ".join(terms), PHRASE_IN_TITLE_WEIGHT]
    return RawSQL(" + ".join(pieces), params, output_field=models.IntegerField())


_titles_compiled: dict[str, tuple[str, tuple]] = {}


def _titles_sql(queryset: models.QuerySet) -> tuple[str, tuple]:
    """The SQL of `_titles()` for the queryset's database, compiled once per process."""
    db = queryset.db
    if db not in _titles_compiled:
        query = queryset.model.objects.using(db).annotate(search_titles=_titles()).query
        sql, params = query.get_compiler(using=db).compile(query.annotations["search_titles"])
        _titles_compiled[db] = (sql, tuple(params))
    return _titles_compiled[db]


class IncidentQuerySet(models.QuerySet):
    def for_pages(self) -> IncidentQuerySet:
        """What the detail page and the API render, without N+1 (tags: `tag_names`)."""
        return self.select_related("reporter")

    def for_rows(self) -> IncidentQuerySet:
        """What a list row renders and nothing more: the long text columns stay in the
        database; the row's tags are read off `tag_list`."""
        return self.select_related("reporter").only(*ROW_COLUMNS, "reporter__username")

    def tagged(self, name: str) -> IncidentQuerySet:
        """Incidents with the tag `name` (trimmed, in lower case, as tags are kept). PostgreSQL
        reads the names each incident stores in `tag_list`, which the facets index holds with
        stage, discipline and severity (migration 0025), so that filters which rarely meet
        are answered from one index; SQLite joins the tags."""
        name = tag_name_normalized(name)
        if connections[self.db].vendor == "postgresql" and TAG_SEPARATOR not in name:
            return self.filter(_TagListHas(F("tag_list"), Value(name)))
        return self.filter(tags__name=name)

    def with_facets(self, facets: dict[str, str | None]) -> IncidentQuerySet:
        """The incidents with every facet given (tag, stage, discipline, severity; an empty
        one is not asked). On PostgreSQL, two or more of them are read as pairs from the pairs
        index (migration 0026), whose entries for a pair are exactly the rows with both: the
        database neither intersects what each facet matches alone nor, guessing them
        independent, walks the book for a combination that rarely or never occurs."""
        asked = {name: (facets.get(name) or "").strip() for name in FACETS}
        asked = {name: value for name, value in asked.items() if value}
        if "tag" in asked:
            asked["tag"] = asked["tag"].lower()
        pairable = TAG_SEPARATOR not in asked.get("tag", "")
        if len(asked) >= 2 and pairable and connections[self.db].vendor == "postgresql":
            tokens = [f"{name}:{value}" for name, value in asked.items()]
            pairs = [f"{a}{FACET_PAIR_JOIN}{b}" for a, b in combinations(tokens, 2)]
            columns = [F("tag_list"), F("stage"), F("discipline"), F("severity")]
            return self.filter(_FacetPairsHave(*columns, Value(pairs)))
        queryset = self.tagged(asked.pop("tag")) if "tag" in asked else self
        return queryset.filter(**asked)

    def search(self, query: str) -> IncidentQuerySet:
        """The RANKED_AT_MOST most recently updated incidents whose text contains every term
        of the query, in any language, the most relevant first (an explicit sort given after
        this one replaces that order). Apply it after the other filters: it ranks the matches
        of the queryset it is given. Reads which incidents match, as one query, when called.

        A term of 3 characters or more is found anywhere in the text, through the trigram
        index; a shorter one through the word index (incidents/search_words.py): one or two
        Chinese characters anywhere, other letters and digits at the start of a word."""
        terms = query.lower().split()
        if not terms:
            return self
        vendor = connections[self.db].vendor
        long_terms = [term for term in terms if len(term) >= FTS_MIN_TERM]
        short_terms = {term: word_query(term) for term in terms if len(term) < FTS_MIN_TERM}
        queryset = self
        if vendor == "sqlite" and long_terms:
            phrases = [_fts_quoted(term) for term in long_terms]
            queryset = queryset.filter(pk__in=_fts_rowids("incidents_incident_fts", phrases))
        elif long_terms:
            # PostgreSQL serves LIKE from the pg_trgm GIN index on search_document.
            for term in long_terms:
                queryset = queryset.filter(search_document__contains=term)
        words = [asked for asked in short_terms.values() if not asked.empty]
        if words:
            queryset = queryset.filter(_words_match(vendor, words))
        for term, asked in short_terms.items():
            if not asked.complete:  # punctuation, or characters that must be adjacent
                queryset = queryset.filter(search_document__contains=term)
        # A search ranks its most recently updated matches and no more: the page then reads
        # those rows alone, whether a term is found in a thousand incidents or in a million.
        # They are read here, once, rather than by each query of the page (rows, count).
        words_only = self.filter(_words_match(vendor, words)) if words and long_terms else None
        recent = _most_recent(queryset, RANKED_AT_MOST, words_only=words_only)
        return (
            self.filter(pk__in=recent)
            .annotate(relevance=_relevance(self, terms))
            .order_by("-relevance", "-updated_at", "-id")
        )


def _most_recent(
    queryset: IncidentQuerySet, limit: int, *, words_only: IncidentQuerySet | None = None
) -> list[int]:
    """The pks of the `limit` most recently updated incidents of `queryset`, newest first.
    `words_only`: the same search with its word-index terms alone, when it has other terms."""
    order = ("-updated_at", "-id")
    edge = _recent_edge(queryset)
    if edge is None:
        return list(queryset.order_by(*order).values_list("pk", flat=True)[:limit])
    recent = list(
        queryset.filter(updated_at__gte=edge).order_by(*order).values_list("pk", flat=True)[:limit]
    )
    if len(recent) == limit:
        return recent
    remaining = limit - len(recent)
    if words_only is not None:
        few = _older(words_only, edge, FEW_WORD_MATCHES + 1, ordered=False)
        if len(few) <= FEW_WORD_MATCHES:
            older = queryset.filter(pk__in=few).order_by(*order).values_list("pk", flat=True)
            return recent + list(older[:remaining])
    return recent + _older(queryset, edge, remaining, ordered=True)


def _older(queryset: IncidentQuerySet, edge: datetime, count: int, *, ordered: bool) -> list[int]:
    """Up to `count` pks of the matches updated before `edge` (the most recent first when
    `ordered`). OFFSET 0 keeps the planner from walking the older rows in date order looking
    for the few that match (a walk as long as the book): it reads the matches, then sorts
    them. The date is tested outside it: inside, the indexes would be asked for every date
    before the edge, nearly every entry of their date column (97 ms at a million incidents for
    a term found once), where the terms' own entries are few."""
    sql, params = queryset.order_by().values("id", "updated_at").query.sql_with_params()
    order = "ORDER BY updated_at DESC, id DESC " if ordered else ""
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM ({sql} OFFSET 0) AS matches WHERE updated_at < %s {order}LIMIT %s",
            [*params, edge, count],
        )
        return [row[0] for row in cursor.fetchall()]


def _recent_edge(queryset: IncidentQuerySet) -> datetime | None:
    """PostgreSQL: when the RECENT_WINDOW-th most recently updated incident was updated, as
    this process read it in the last few minutes (any time splits the matches rightly into
    recent and older ones; this one keeps the recent part about RECENT_WINDOW rows). None on
    SQLite, and while the book holds fewer."""
    if connections[queryset.db].vendor != "postgresql":
        return None

    def read() -> datetime | None:
        rows = queryset.model._base_manager.using(queryset.db).order_by("-updated_at", "-id")
        edge = list(rows.values_list("updated_at", flat=True)[RECENT_WINDOW - 1 : RECENT_WINDOW])
        return edge[0] if edge else None

    database = connections[queryset.db].settings_dict["NAME"]
    return _edges.get((database, int(time.monotonic() // EDGE_KEPT_SECONDS)), read)


def _fts_quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _fts_rowids(table: str, phrases: list[str]) -> RawSQL:
    match = " AND ".join(phrases)
    return RawSQL(f"SELECT rowid FROM {table} WHERE {table} MATCH %s", (match,))


def _words_match(vendor: str, asked: list[WordQuery]):
    exact = [word for query in asked for word in query.exact]
    prefixes = [prefix for query in asked for prefix in query.prefixes]
    if vendor == "sqlite":
        phrases = [_fts_quoted(word) for word in exact] + [
            _fts_quoted(prefix) + "*" for prefix in prefixes
        ]
        return Q(pk__in=_fts_rowids("incidents_incident_words", phrases))
    # Words are letters and digits only, so quoting them as lexemes needs no escaping.
    tsquery = " & ".join([f"'{word}'" for word in exact] + [f"'{p}':*" for p in prefixes])
    return _WordsMatch(F("search_words"), Value(tsquery))


class _IndexedCondition(models.Func):
    """PostgreSQL: a condition written exactly as the expression of a GIN index, so that the
    index serves it; `shape` places the compiled column ({0}) and value ({1})."""

    output_field = models.BooleanField()
    shape = ""

    def as_sql(self, compiler, connection, **extra_context):
        compiled = [compiler.compile(expression) for expression in self.get_source_expressions()]
        sql = self.shape.format(*(piece for piece, _ in compiled))
        return sql, tuple(param for _, params in compiled for param in params)


class _WordsMatch(_IndexedCondition):
    """The words hold every lexeme of the tsquery (the index of migrations 0016 and 0024); the
    tsvector is made straight from the words, with no text-search parser in between."""

    shape = "array_to_tsvector(string_to_array({0}, ' ')) @@ ({1})::tsquery"


TAG_SEPARATOR = ", "  # as incidents.catalog.tag_list_text joins the names


class _TagListHas(_IndexedCondition):
    """The incident's stored tag names include the name (the facets index, migration 0025)."""

    shape = f"string_to_array({{0}}, '{TAG_SEPARATOR}') @> ARRAY[({{1}})::text]"


# As the pairs index's function (migration 0026) names, orders and joins an incident's facets.
FACETS = ("tag", "stage", "discipline", "severity")
FACET_PAIR_JOIN = "\x1f"


class _FacetPairsHave(_IndexedCondition):
    """The incident's facet pairs include every pair given (the pairs index, migration 0026)."""

    shape = "incident_facet_pairs({0}, {1}, {2}, {3}) @> ({4})::text[]"


class SignatureQuerySet(models.QuerySet):
    def enabled(self) -> SignatureQuerySet:
        return self.filter(enabled=True)
