from __future__ import annotations

from django.conf import settings
from django.db import connections, models
from django.db.models import Case, F, Q, Value, When
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Concat, Least, Length, Lower, Replace

# SQLite's FTS5 trigram index cannot see terms shorter than three characters ("显存"):
# those fall back to LIKE on the base table.
FTS_MIN_TERM = 3

# What each place a term appears in adds to an incident's relevance. A title (in any
# language) says what the incident is; each tag naming the term is a curator saying so again;
# the text counts each occurrence up to a cap, so that a long remedy never outweighs a title.
TITLE_WEIGHT = 3
PHRASE_IN_TITLE_WEIGHT = 6
TAG_WEIGHT = 2
TAG_CAP = 3
TEXT_CAP = 5


def _occurrences(expression, term: str):
    """How many times `term` occurs in `expression`, in SQL that SQLite and PostgreSQL share."""
    removed = Replace(expression, Value(term), Value(""))
    return (Length(expression) - Length(removed)) / Value(len(term))


def _titles():
    """The slug and the title in every language, lowercased, as one expression."""
    parts = [F("slug"), F("title")]
    for code, _name in settings.LANGUAGES:
        parts.append(
            Coalesce(KT(f"translations__{code}__title"), Value(""), output_field=models.CharField())
        )
    spaced = [piece for part in parts for piece in (part, Value(" "))]
    return Lower(Concat(*spaced, output_field=models.CharField()))


def _relevance(terms: list[str]):
    tags = Lower(F("tag_list"))
    score = Value(0)
    for term in terms:
        score += Case(When(Q(search_titles__contains=term), then=TITLE_WEIGHT), default=0)
        score += TAG_WEIGHT * Least(_occurrences(tags, term), Value(TAG_CAP))
        score += Least(_occurrences(F("search_document"), term), Value(TEXT_CAP))
    if len(terms) > 1:
        phrase = Q(search_titles__contains=" ".join(terms))
        score += Case(When(phrase, then=PHRASE_IN_TITLE_WEIGHT), default=0)
    return score


class IncidentQuerySet(models.QuerySet):
    def for_pages(self) -> IncidentQuerySet:
        """What the list rows and the detail page render, without N+1."""
        return self.select_related("reporter").prefetch_related("tags")

    def search(self, query: str) -> IncidentQuerySet:
        """Incidents whose text contains every term of the query, in any language, the most
        relevant first (an explicit sort given after this one replaces that order)."""
        terms = query.lower().split()
        if not terms:
            return self
        queryset = self
        if connections[self.db].vendor == "sqlite":
            long_terms = [term for term in terms if len(term) >= FTS_MIN_TERM]
            if long_terms:
                match = " AND ".join('"' + term.replace('"', '""') + '"' for term in long_terms)
                queryset = queryset.filter(
                    pk__in=RawSQL(
                        "SELECT rowid FROM incidents_incident_fts "
                        "WHERE incidents_incident_fts MATCH %s",
                        (match,),
                    )
                )
            like_terms = [term for term in terms if len(term) < FTS_MIN_TERM]
        else:
            like_terms = terms
        # PostgreSQL serves LIKE from the pg_trgm GIN index on search_document.
        for term in like_terms:
            queryset = queryset.filter(search_document__contains=term)
        return (
            queryset.alias(search_titles=_titles())
            .annotate(relevance=_relevance(terms))
            .order_by("-relevance", "-updated_at", "-id")
        )


class SignatureQuerySet(models.QuerySet):
    def enabled(self) -> SignatureQuerySet:
        return self.filter(enabled=True)
