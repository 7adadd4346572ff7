"""Template mining: group lines that share a template (their masked form).

Contract
--------
Lines are masked first (``masking.mask_line``: variable tokens become ``<*>``).

``group(lines, levels, limits)`` groups lines by masked template, then merges templates that
differ in one place when that place is clearly a variable: at least ``_MIN_DISTINCT`` values
in the very same surroundings (user names, host names), or a value next to one that is already
a wildcard; a handful of values (GET/POST, Started/Stopped) stays apart as an enumeration.
Rounds repeat so that several variable places generalise (see ``_merge``); in CJK text a place
may span up to three characters. It returns the groups ordered by first appearance and, for
every input line, the index of its group: every line lands in exactly one group.

One generic configuration for every log: no rule knows about a particular system or file.
Cost: lines that differ only in their digits share a digit key (``digits.ALL_DIGITS``: no
masking pattern names a particular digit, and a digit always ends up inside a wildcard), so
each distinct key is masked once by one compiled ``re.sub`` pass over the joined keys (plus
cheap clean-up passes); a key whose template still shows a digit is masked line by line
instead. Per-line bookkeeping stays in C (dicts, zip, Counter), and the merge looks at the
*unique* templates only, within a fixed budget.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from .digits import ALL_DIGITS, str_keys
from .masking import WILDCARD, collapse_wildcards, mask_lines
from .types import Group, Level, Limits

# Merge tokens: runs of non-space text, but each CJK character on its own, so a Chinese
# sentence with one varying word still differs in one position only.
_CJK = "\u2e80-\u9fff\uac00-\ud7af\u3000-\u303f\uff00-\uffef"
_MERGE_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]$")
_CJK_FIRST = _CJK[0]  # every CJK token sorts at or after this character

# A position becomes a variable when at least this many distinct values share the exact same
# surrounding tokens. A handful of values (GET/POST, Started/Stopped) is usually an
# enumeration worth keeping apart; many values are identifiers (user names, host names).
_MIN_DISTINCT = 4
_MIN_TOKENS = 3  # two-token lines are too short to tell a variable from the message itself
_MIN_TOKENS_FIRST = 5  # the first word is usually the event's verb or component
_MAX_TOKENS = 120  # longer lines keep exact grouping
_SLOT_BUDGET = 150_000  # tokens looked at per round, in order of first appearance
_MAX_SPAN = 3  # a CJK variable (a name, a place) may span up to three characters
_MAX_ROUNDS = 4

_BY_SEVERITY = (Level.INFO, Level.WARNING, Level.ERROR)
_DEFAULT_LIMITS = Limits()


def _templates(lines: list[str]) -> list[str]:
    """``mask_line`` of every line, masking each distinct digit key once."""
    keys = str_keys(lines, ALL_DIGITS)
    distinct = list(dict.fromkeys(keys))  # a flood of one line, or of one line shape
    templates = mask_lines(distinct)
    template_of = dict(zip(distinct, templates, strict=True))
    masked = [template_of[key] for key in keys]
    # A digit that survives masking would differ between the lines behind one key (it never
    # does in practice): those lines are masked one by one.
    if "0" not in "".join(templates):
        return masked
    unsure = {key for key, template in template_of.items() if "0" in template}
    if unsure:
        exact = [number for number, key in enumerate(keys) if key in unsure]
        originals = list(dict.fromkeys(lines[number] for number in exact))
        template_of = dict(zip(originals, mask_lines(originals), strict=True))
        for number in exact:
            masked[number] = template_of[lines[number]]
    return masked


def group(
    lines: Sequence[str], levels: Sequence[Level], limits: Limits = _DEFAULT_LIMITS
) -> tuple[tuple[Group, ...], tuple[int, ...]]:
    """Group ``lines`` by template.

    Returns ``(groups, line_groups)``: groups ordered by first appearance, and for every input
    line the index of its group. A group's level is the most severe level among its lines;
    ``flood`` marks a WARNING group with at least ``limits.flood_count`` lines. Line numbers
    are 1-based. ``levels`` must have one entry per line.
    """
    if len(levels) != len(lines):
        raise ValueError(f"{len(levels)} levels for {len(lines)} lines")
    if not lines:
        return (), ()
    cap = limits.max_line_chars
    capped = [s if len(s) <= cap else s[:cap] for s in lines]
    masked = _templates(capped)

    # Per-line work stays in C (dict/zip/Counter/list comprehensions): only the unique
    # templates and the groups are visited by Python loops.
    template_ids: dict[str, int] = dict.fromkeys(masked, 0)
    templates = list(template_ids)
    for tid, template in enumerate(templates):
        template_ids[template] = tid
    cluster_of, cluster_text = _merge(templates)

    # Templates come in order of first appearance, so numbering clusters as they are first
    # met numbers the groups in order of first appearance too.
    group_of_cluster: dict[int, int] = {}
    for cluster in cluster_of:
        group_of_cluster.setdefault(cluster, len(group_of_cluster))
    group_of_template = [group_of_cluster[c] for c in cluster_of]
    line_groups = [group_of_template[template_ids[m]] for m in masked]

    n = len(line_groups)
    counts = Counter(line_groups)
    last = dict(zip(line_groups, range(1, n + 1), strict=True))  # later duplicates win
    first = dict(zip(reversed(line_groups), range(n, 0, -1), strict=True))  # so: the first
    # Compared by identity: hashing a Level is a Python call, and a paste has 80,000 lines.
    severity = [0] * len(group_of_cluster)
    for gi, level in zip(line_groups, levels, strict=True):
        if level is Level.ERROR:
            severity[gi] = 2
        elif level is Level.WARNING and not severity[gi]:
            severity[gi] = 1

    clusters = list(group_of_cluster)
    groups = []
    for gi, cluster in enumerate(clusters):
        level = _BY_SEVERITY[severity[gi]]
        groups.append(
            Group(
                template=cluster_text[cluster],
                level=level,
                count=counts[gi],
                first_line=first[gi],
                last_line=last[gi],
                example=lines[first[gi] - 1],
                flood=level is Level.WARNING and counts[gi] >= limits.flood_count,
            )
        )
    return tuple(groups), tuple(line_groups)


def _merge(templates: list[str]) -> tuple[list[int], dict[int, str]]:
    """Merge unique templates that differ only in variable positions.

    Templates that are identical except for one span of at most ``_MAX_SPAN`` tokens share a
    "slot" (the tokens before the span, the tokens after it); spans may differ in width, so a
    two- and a three-character Chinese name meet. A slot turns its span into ``<*>`` when its
    members show at least ``_MIN_DISTINCT`` different values there, or when one value already
    is (or contains) a wildcard: that place is known to vary. Rounds repeat until nothing
    changes, so templates differing in several variable places meet step by step. Returns
    the cluster id of every template (the index of its first member) and the text of every
    cluster.
    """
    parent = list(range(len(templates)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    current = [tuple(_MERGE_TOKEN.findall(t)) for t in templates]
    # For every current token, the range of original tokens it stands for (None: one each).
    ranges: list[tuple[tuple[int, int], ...] | None] = [None] * len(current)
    for _ in range(_MAX_ROUNDS):
        representative: dict[tuple[str, ...], int] = {}
        for i, toks in enumerate(current):
            rep = representative.setdefault(toks, i)
            if rep != i:
                union(rep, i)
        spans = _variable_spans(representative)
        if not spans:
            break
        for i, toks in enumerate(current):
            rep = representative[toks]
            if rep in spans:
                for m in spans[rep][1]:
                    union(rep, m)
                current[i], ranges[i] = _generalise(toks, ranges[i], spans[rep][0])

    clusters: dict[int, list[int]] = {}
    for i in range(len(templates)):
        clusters.setdefault(find(i), []).append(i)
    cluster_of = [0] * len(templates)
    text: dict[int, str] = {}
    for root, members in clusters.items():
        for m in members:
            cluster_of[m] = root
        text[root] = _joint(templates, current, ranges, members)
    return cluster_of, text


def _variable_spans(
    representative: dict[tuple[str, ...], int],
) -> dict[int, tuple[list[tuple[int, int]], list[int]]]:
    """For each template to generalise: its spans (start, width) and the templates it meets."""
    slots: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    budget = _SLOT_BUDGET
    for toks, i in representative.items():
        n = len(toks)
        if n < _MIN_TOKENS or n > _MAX_TOKENS:
            continue
        budget -= n
        if budget < 0:  # pathological input (thousands of unique long lines): stay bounded
            break
        # Chained hashes of every prefix and suffix make a slot key O(1) instead of O(n).
        prefix = [0] * (n + 1)
        for k in range(n):
            prefix[k + 1] = hash((prefix[k], toks[k]))
        suffix = [1] * (n + 1)
        for k in range(n - 1, -1, -1):
            suffix[k] = hash((toks[k], suffix[k + 1]))
        first = 0 if n >= _MIN_TOKENS_FIRST else 1
        if max(toks) < _CJK_FIRST:  # no CJK character: single-token spans only
            for p in range(first, n):
                slots.setdefault((prefix[p], suffix[p + 1]), []).append((i, p, 1))
            continue
        # Runs of single CJK characters: the only place a span wider than one token is tried,
        # since in spaced text a wide span would mostly glue two unrelated constants.
        cjk_run = [0] * (n + 1)
        for k in range(n - 1, -1, -1):
            cjk_run[k] = cjk_run[k + 1] + 1 if _CJK_CHAR.match(toks[k]) else 0
        for p in range(n):
            for w in range(1, max(1, min(_MAX_SPAN, cjk_run[p])) + 1):
                context = n - w
                if context < _MIN_TOKENS - 1 or (p == 0 and context < _MIN_TOKENS_FIRST - 1):
                    continue
                slots.setdefault((prefix[p], suffix[p + w]), []).append((i, p, w))

    by_template = {i: toks for toks, i in representative.items()}
    found: dict[int, tuple[list[tuple[int, int]], list[int]]] = {}
    for entries in slots.values():
        if len(entries) < 2:
            continue
        # Hashes only propose; the exact context decides (collisions are split apart here).
        exact: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[int, int, int]]] = {}
        for i, p, w in entries:
            toks = by_template[i]
            exact.setdefault((toks[:p], toks[p + w :]), []).append((i, p, w))
        for members in exact.values():
            if len(members) < 2:
                continue
            values = {by_template[i][p : p + w] for i, p, w in members}
            if len(values) >= _MIN_DISTINCT or any(
                WILDCARD in token for value in values for token in value
            ):
                ids = [i for i, _p, _w in members]
                for i, p, w in members:
                    entry = found.setdefault(i, ([], []))
                    entry[0].append((p, w))
                    entry[1].extend(ids)
    return found


def _generalise(
    toks: tuple[str, ...],
    ranges: tuple[tuple[int, int], ...] | None,
    spans: list[tuple[int, int]],
) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]]:
    """Replace each span (overlapping ones joined) by one wildcard token."""
    if ranges is None:
        ranges = tuple((k, k + 1) for k in range(len(toks)))
    covered = sorted(spans)
    joined: list[list[int]] = []
    for p, w in covered:
        if joined and p < joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], p + w)
        else:
            joined.append([p, p + w])
    out_toks: list[str] = []
    out_ranges: list[tuple[int, int]] = []
    k = 0
    for start, end in joined:
        out_toks.extend(toks[k:start])
        out_ranges.extend(ranges[k:start])
        out_toks.append(WILDCARD)
        out_ranges.append((ranges[start][0], ranges[end - 1][1]))
        k = end
    out_toks.extend(toks[k:])
    out_ranges.extend(ranges[k:])
    return tuple(out_toks), tuple(out_ranges)


def _joint(
    templates: list[str],
    current: list[tuple[str, ...]],
    ranges: list[tuple[tuple[int, int], ...] | None],
    members: list[int],
) -> str:
    """The template shared by ``members``, rebuilt on the first member's text.

    Positions where the members' generalised tokens disagree also become ``<*>``; quotes,
    brackets and trailing punctuation common to all the replaced texts stay around it
    (``"<*>",``), and the first member's spacing survives."""
    first = members[0]
    if len(members) == 1:  # generalising always joins two templates: this one is verbatim
        return templates[first]
    toks = current[first]
    aligned = [m for m in members if len(current[m]) == len(toks)]
    spans = [list(_MERGE_TOKEN.finditer(templates[m])) for m in aligned]
    replace: dict[int, str] = {}
    for q, token in enumerate(toks):
        originals = {
            _original_text(templates[m], found, _span(ranges[m], q))
            for m, found in zip(aligned, spans, strict=True)
        }
        if len(originals) > 1 or (token == WILDCARD and next(iter(originals)) != WILDCARD):
            head = _common_edge(originals, _OPENERS, reverse=False)
            tail = _common_edge(originals, _CLOSERS, reverse=True)
            replace[q] = head + WILDCARD + tail
    if not replace:
        return templates[first]
    text = templates[first]
    found = spans[0]
    out = []
    pos = 0
    for q in range(len(toks)):
        a, b = _span(ranges[first], q)
        if q in replace:
            out.append(text[pos : found[a].start()])
            out.append(replace[q])
            pos = found[b - 1].end()
    out.append(text[pos:])
    return collapse_wildcards("".join(out))


def _span(ranges: tuple[tuple[int, int], ...] | None, q: int) -> tuple[int, int]:
    return (q, q + 1) if ranges is None else ranges[q]


def _original_text(text: str, found: list[re.Match[str]], span: tuple[int, int]) -> str:
    return text[found[span[0]].start() : found[span[1] - 1].end()]


_OPENERS = frozenset("\"'([{")
_CLOSERS = frozenset("\"')]}:,;.")


def _common_edge(values: set[str], allowed: frozenset[str], *, reverse: bool) -> str:
    """The run of ``allowed`` characters that starts (or ends) every value."""
    edge = []
    sample = next(iter(values))
    for k in range(len(sample)):
        ch = sample[-1 - k] if reverse else sample[k]
        if ch not in allowed or any(
            len(v) <= k or (v[-1 - k] if reverse else v[k]) != ch for v in values
        ):
            break
        edge.append(ch)
    if reverse:
        edge.reverse()
    return "".join(edge)
