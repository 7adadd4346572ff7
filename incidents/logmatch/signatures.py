"""Signatures: RE2 patterns that recognise an incident's log lines, matched together.

Each pattern's required literal atoms (see `prefilter`) are matched in one pass by a few
case-insensitive literal sets, and only the patterns whose atoms occur are run, so each
distinct line of a tail is scanned once however large the knowledge base, and the line
numbers come with it; no process holds every pattern compiled. (One `re2.Set` of every pattern
was as fast on ordinary lines, but on lines dense in the knowledge base's words its DFA
rebuilt its states byte after byte: 0.2 s for one 4 KB line.) Signatures may name any digit,
so unlike the rule tables the scan cannot merge lines that differ only in their digits. RE2
runs in linear time, so a catastrophic pattern such as `(a+)+$` is harmless; a pattern that
matches the empty string would fire on every line and is refused. Each incident's symptom
lines act as signatures too: masked with `mask_line`, their literal parts escaped and every
`<*>` turned into a wildcard, so a just-filed incident matches at once, even with other
numbers.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate

import re2

from .patterns import (
    SET_MAX_MEM,
    compile_error,
    counter_regex,
    literal_length,
    re2_options,
    symptom_pattern,
)
from .prefilter import AtomIndex, compiled, pattern_problem, required_atoms
from .types import IncidentSpec, SignatureSpec

# The patterns whose atoms cannot be told go into `re2.Filter`s (RE2's FilteredRE2) of this
# many each: a Filter's own atom set is compiled with RE2's default budget.
FILTER_CHUNK = 4000
_BATCH_LINES = 64  # distinct lines tried together before any is tried alone
_TEXT_ANCHOR = re.compile(r"\\[Az]")
SYMPTOM_KEY_PREFIX = "symptom:"
# Where a signature has this many literal characters it counts as fully specific.
SPECIFIC_LITERAL = 24
# At index time a signature firing on more than this share of the healthy reference lines
# is refused as noise (saving one is refused at 1%, by `check_signature`).
INDEX_BENIGN_SHARE = 0.1


@dataclass(frozen=True)
class Signature:
    """A compiled signature: a catalog pattern, or one derived from a symptom line."""

    key: str  # SignatureSpec.key, or "symptom:<slug>:<n>"
    slug: str
    pattern: str
    kind: str  # signature | symptom
    benign_hits: int = 0  # lines of the healthy reference logs it fires on
    unless: str = ""  # the counter-pattern: a tail with a line it matches rules the hit out
    lead_only: bool = False  # a hit ranks the incident, never confirms it (SignatureSpec)

    @functools.cached_property
    def specificity(self) -> float:
        """0..1: how much literal text the pattern demands, the more the surer a hit."""
        return min(1.0, literal_length(self.pattern) / SPECIFIC_LITERAL)


@dataclass(frozen=True)
class Hit:
    signature: Signature
    text: str  # the line that matched, verbatim
    lines: tuple[int, ...]  # 0-based indices of every line with this exact text


@dataclass(frozen=True)
class _Part:
    """Signatures compiled together, numbered as their matcher numbers its patterns (None:
    one refused after compiling, as too noisy)."""

    signatures: tuple[Signature | None, ...]
    matcher: _Matcher | None


class SignatureSet:
    """Every usable signature, and the matchers that find which ones a line matches.

    Built once over the whole book as one part; a change to a few incidents (`changed`)
    adds their signatures as a small part of its own and hides what the older parts held of
    them, so a change compiles only what changed."""

    def __init__(
        self, parts: Sequence[_Part], rejected: dict[str, str], live: dict[str, int] | None
    ):
        self._parts = tuple(parts)
        self.rejected = rejected
        self._live = live  # slug → the part that holds its signatures (None: the only part)

    @functools.cached_property
    def signatures(self) -> tuple[Signature, ...]:
        return tuple(
            signature
            for number, part in enumerate(self._parts)
            for signature in part.signatures
            if signature is not None and self._holds(number, signature.slug)
        )

    def _holds(self, part: int, slug: str) -> bool:
        return self._live is None or self._live.get(slug) == part

    @property
    def part_count(self) -> int:
        return len(self._parts)

    @property
    def set_count(self) -> int:
        """How many literal sets and filters the matchers run over a line."""
        return sum(part.matcher.filter_count for part in self._parts if part.matcher)

    def only(self, slugs: Iterable[str]) -> SignatureSet:
        """The signatures (catalog and symptom) of these incidents alone, in a set of their
        own: what a change to those incidents could now match."""
        wanted = set(slugs)
        kept = tuple(signature for signature in self.signatures if signature.slug in wanted)
        matcher = _compile_sets([signature.pattern for signature in kept])
        return SignatureSet([_Part(kept, matcher)], {}, None)

    def changed(
        self, new: SignatureSet, slugs: Iterable[str], removed: Iterable[str] = ()
    ) -> SignatureSet:
        """This set with the signatures of the incidents `slugs` replaced by those of `new`
        (built for those incidents alone), and those of the `removed` incidents gone."""
        live = (
            dict(self._live)
            if self._live is not None
            else {signature.slug: 0 for signature in self.signatures}
        )
        for slug in removed:
            live.pop(slug, None)
        for slug in slugs:
            live[slug] = len(self._parts)
        parts = [*self._parts, *new._parts]
        # The changes' parts are merged as they pile up (the last two, once the newer holds
        # at least half as many signatures), so a line meets a few matchers, not one per
        # change; the whole book's part is left alone, and compiled again after enough changes.
        while len(parts) > 2 and 2 * len(parts[-1].signatures) >= len(parts[-2].signatures):
            older = len(parts) - 2
            kept = tuple(
                signature
                for number, part in enumerate(parts[older:], start=older)
                for signature in part.signatures
                if signature is not None and live.get(signature.slug) == number
            )
            for slug, number in live.items():
                if number > older:
                    live[slug] = older
            parts[older:] = [_Part(kept, _compile_sets([s.pattern for s in kept]))]
        return SignatureSet(parts, {**self.rejected, **new.rejected}, live)

    def scan(self, lines: Sequence[str]) -> list[Hit]:
        """Which signatures match which lines; each distinct line is matched once.

        The distinct lines are encoded to UTF-8 in one go and handed to RE2 as bytes; line
        numbers are only collected for the few lines that something matched."""
        return self.scan_ruling(lines)[0]

    def scan_ruling(self, lines: Sequence[str]) -> tuple[list[Hit], list[Hit]]:
        """`scan`, and beside it the hits a counter-pattern ruled out: the lines those
        signatures recognise say this tail is not their incident."""
        parts = [(n, part) for n, part in enumerate(self._parts) if part.matcher]
        if not parts:
            return [], []
        distinct, encoded = _distinct_encoded(lines)
        found: list[tuple[str, list[Signature]]] = []
        for start in range(0, len(distinct), _BATCH_LINES):
            batch = encoded[start : start + _BATCH_LINES]
            joined = b"\n".join(batch)
            maybe = [
                (number, part, candidates)
                for number, part in parts
                if (candidates := part.matcher.batch_matches(joined))  # type: ignore[union-attr]
            ]
            if not maybe:
                continue  # most lines match nothing: a batch of them is one look
            matched: list[list[Signature]] = [[] for _ in batch]
            for number, part, candidates in maybe:
                for index, offsets in part.matcher.lines_matching(joined, batch, candidates):  # type: ignore[union-attr]
                    signature = part.signatures[index]
                    if signature and self._holds(number, signature.slug):
                        for offset in offsets:
                            matched[offset].append(signature)
            texts = distinct[start : start + _BATCH_LINES]
            found.extend((text, hit) for text, hit in zip(texts, matched, strict=True) if hit)
        if not found:
            return [], []
        where: dict[str, list[int]] = {text: [] for text, _matched in found}
        for number, text in enumerate(lines):
            if text in where:
                where[text].append(number)
        hits = [
            Hit(signature, text, tuple(where[text]))
            for text, matched in found
            for signature in matched
        ]
        return _split_ruled_out(hits, encoded)


def _split_ruled_out(hits: list[Hit], encoded: list[bytes]) -> tuple[list[Hit], list[Hit]]:
    """The hits whose signature no line of the tail rules out, and the others. Each
    counter-pattern is run once over the tail's distinct lines, joined (it is compiled
    multi-line: `^`/`$` are a line's ends)."""
    counters = {hit.signature.unless for hit in hits if hit.signature.unless}
    if not counters:
        return hits, []
    text = b"\n".join(encoded)
    ruling = {counter for counter in counters if counter_regex(counter).search(text) is not None}
    kept = [hit for hit in hits if hit.signature.unless not in ruling]
    ruled = [hit for hit in hits if hit.signature.unless in ruling]
    return kept, ruled


def build_signature_set(
    incidents: Iterable[IncidentSpec],
    signatures: Iterable[SignatureSpec],
    benign_lines: Sequence[str] = (),
) -> SignatureSet:
    """Compile the catalog signatures and the symptom lines into a `SignatureSet`.

    Never raises for a bad pattern: it is skipped and `rejected[key]` says why. Each
    signature learns how many of `benign_lines` (healthy logs) it fires on.
    """
    incidents = list(incidents)
    known = {incident.slug for incident in incidents}
    candidates: list[Signature] = []
    rejected: dict[str, str] = {}
    for spec in signatures:
        if spec.slug not in known:
            rejected[spec.key] = f"points to an unknown incident {spec.slug!r}"
        elif reason := counter_problem(spec.unless):
            rejected[spec.key] = reason
        else:
            candidates.append(
                Signature(
                    spec.key,
                    spec.slug,
                    spec.pattern,
                    "signature",
                    unless=spec.unless,
                    lead_only=spec.lead_only,
                )
            )
    by_slug: dict[str, list[Signature]] = defaultdict(list)
    for candidate in candidates:
        by_slug[candidate.slug].append(candidate)
    symptoms: dict[str, str] = {}
    for incident in incidents:
        own = by_slug[incident.slug]
        for number, line in enumerate(_symptom_lines(incident.symptom), start=1):
            key = f"{SYMPTOM_KEY_PREFIX}{incident.slug}:{number}"
            pattern = symptom_pattern(line)
            if pattern is None:
                rejected[key] = "symptom line too short or too vague to act as a signature"
            else:
                symptoms[key] = line
                candidates.append(
                    Signature(
                        key,
                        incident.slug,
                        pattern,
                        "symptom",
                        unless=_symptom_counter(line, own),
                        lead_only=_symptom_lead_only(line, own),
                    )
                )
    accepted, matcher = _compile_valid(candidates, rejected)
    accepted = _symptoms_other_leads_recognise(accepted, symptoms)
    result = SignatureSet([_Part(tuple(accepted), matcher)], rejected, None)
    if not benign_lines:
        return result
    fired = Counter(hit.signature.key for hit in result.scan(benign_lines))
    limit = INDEX_BENIGN_SHARE * len(benign_lines)
    for key, count in fired.items():
        if count > limit:
            rejected[key] = (
                f"fires on {count:,} of {len(benign_lines):,} lines of healthy logs, "
                "so it would flag every job"
            )
    kept = tuple(
        None if s.key in rejected else replace(s, benign_hits=fired[s.key]) for s in accepted
    )
    return SignatureSet([_Part(kept, matcher)], rejected, None)


def telling_examples(patterns: Iterable[tuple[str, Iterable[str]]]) -> tuple[str, ...]:
    """Of each (pattern, examples), the example lines its expression recognises, from where
    it matched: what an incident was seen saying, without the context lines pasted around
    them or the log prefix (time, process, source line) that any failure could have."""
    telling: dict[str, None] = {}
    for pattern, examples in patterns:
        telling.update(dict.fromkeys(_told(pattern, tuple(examples))))
    return tuple(telling)


@functools.lru_cache(maxsize=200_000)  # a rebuilt index reads only new signatures' examples
def _told(pattern: str, examples: tuple[str, ...]) -> tuple[str, ...]:
    try:  # a throwaway RE2: not kept among the compiled patterns, which search tails
        expression = re2.compile(pattern, re2_options())
    except re2.error:
        return ()
    told = []
    for example in examples:
        for line in example.splitlines():
            found = expression.search(line)
            if found and (text := line[found.start() :].strip()):
                told.append(text)
    return tuple(told)


def _symptoms_other_leads_recognise(
    accepted: list[Signature], symptoms: dict[str, str]
) -> list[Signature]:
    """A symptom line that a lead-only signature of any incident recognises has several usual
    causes (a bare collective timeout is one incident's symptom and another's lead): its own
    signature is a lead too. The lead-only signatures alone scan the symptom lines once."""
    leads = tuple(s for s in accepted if s.kind == "signature" and s.lead_only)
    if not leads or not symptoms:
        return accepted
    keys, lines = list(symptoms), list(symptoms.values())
    probe = SignatureSet([_Part(leads, _compile_sets([s.pattern for s in leads]))], {}, None)
    counted, ruled_out = probe.scan_ruling(lines)  # the other symptom lines are no tail
    found = {keys[index] for hit in counted + ruled_out for index in hit.lines}
    return [replace(s, lead_only=True) if s.key in found else s for s in accepted]


def _symptom_counter(line: str, signatures: Sequence[Signature]) -> str:
    """A symptom line is ruled out by what rules out the incident's own signatures that
    recognise it: `No space left on device` is no full disk beside `/dev/shm`."""
    with_counter = [signature for signature in signatures if signature.unless]
    counters = [signature.unless for signature in _recognising(line, with_counter)]
    unique = list(dict.fromkeys(counters))
    return "|".join(f"(?:{counter})" for counter in unique) if len(unique) > 1 else "".join(unique)


def _symptom_lead_only(line: str, signatures: Sequence[Signature]) -> bool:
    """A symptom line is a lead only when every signature of its incident that recognises it
    is one: the line has several usual causes, whether a signature or the symptom finds it."""
    if not any(signature.lead_only for signature in signatures):
        return False
    recognising = _recognising(line, signatures)
    return bool(recognising) and all(signature.lead_only for signature in recognising)


def _recognising(line: str, signatures: Sequence[Signature]) -> list[Signature]:
    """The usable signatures among `signatures` that match `line`."""
    return [
        signature
        for signature in signatures
        if compile_error(signature.pattern) is None
        and re2.compile(signature.pattern, re2_options()).search(line)
    ]


def counter_problem(unless: str) -> str | None:
    """Why a counter-pattern cannot be used (None when it can, or when there is none)."""
    if not unless:
        return None
    error = compile_error(unless)
    if error:
        return f"its counter-pattern does not compile in RE2: {error}"
    if counter_regex(unless).search(b"") is not None:
        return "its counter-pattern matches the empty string, so it would rule out every tail"
    return None


def _compile_valid(
    candidates: list[Signature], rejected: dict[str, str]
) -> tuple[list[Signature], _Matcher | None]:
    """The candidates that RE2 accepts and that need some text to match, and their matcher.
    Each pattern's verdict is kept per process, so a rebuilt index only judges new ones."""
    accepted = []
    for signature in candidates:
        problem = pattern_problem(signature.pattern)
        if problem:
            rejected[signature.key] = problem
        else:
            accepted.append(signature)
    return accepted, _compile_sets([signature.pattern for signature in accepted])


# The distinct lines of the last tuple of lines scanned, encoded: the benign corpus (a tuple,
# the same object every time) is scanned again for each incident filed or edited, which is
# the one scan a process repeats. A tuple cannot change, and the one kept here stays alive, so
# its identity is a safe key.
_last_prepared: tuple[tuple[str, ...], list[str], list[bytes]] | None = None


def _distinct_encoded(lines: Sequence[str]) -> tuple[list[str], list[bytes]]:
    """The distinct non-empty lines, in order, and each of them in UTF-8."""
    global _last_prepared
    kept = _last_prepared
    if kept is not None and kept[0] is lines:
        return kept[1], kept[2]
    distinct = [text for text in dict.fromkeys(lines) if text]
    encoded = _encoded(distinct)
    if isinstance(lines, tuple):
        _last_prepared = (lines, distinct, encoded)
    return distinct, encoded


def _encoded(lines: list[str]) -> list[bytes]:
    """``lines`` in UTF-8, encoded together (a line holding a newline is encoded alone)."""
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:
        return [line.encode("utf-8", "surrogatepass") for line in lines]
    return text.encode("utf-8", "surrogatepass").split(b"\n")


class _Matcher:
    """Which patterns match a line. Most patterns are tried only where one of their atoms
    occurs (see `prefilter`); the few whose atoms cannot be told are held compiled in
    filters, whose own literal atoms play the same part.

    A pattern is matched on one line at a time, but most lines match nothing, so lines are
    first tried a batch at a time, joined by newlines, and only the patterns that match the
    batch are then tried on its lines. A pattern is run as `(?m)PATTERN` so that `^` and `$`
    still mean a line's ends. (A pattern may match across the joined lines, as `\\s` matches
    a newline: trying it on each line decides.) The rare pattern anchored to the whole text
    (`\\A`, `\\z`) is tried on every line."""

    def __init__(self, patterns: Sequence[str]):
        self.patterns = [p if _TEXT_ANCHOR.search(p) else f"(?m){p}" for p in patterns]
        anchored = frozenset(n for n, p in enumerate(patterns) if _TEXT_ANCHOR.search(p))
        loose = [n for n in range(len(patterns)) if n not in anchored]
        requirements = [(n, required_atoms(patterns[n])) for n in loose]
        self.atoms = AtomIndex([(n, needs) for n, needs in requirements if needs])
        self.filters = _filters([(n, self.patterns[n]) for n, needs in requirements if not needs])
        self.anchored = anchored
        self.filter_count = len(self.atoms.sets) + len(self.filters)

    def batch_matches(self, data: bytes) -> list[int]:
        """The patterns that match somewhere in `data` (and every text-anchored one)."""
        found = [
            number
            for number in self.atoms.candidates(data)
            if compiled(self.patterns[number]).search(data) is not None
        ]
        for matcher, numbers in self.filters:
            found.extend(numbers[index] for index in matcher.Match(data) or ())
        return sorted([*found, *self.anchored]) if found or self.anchored else []

    def lines_matching(
        self, joined: bytes, batch: Sequence[bytes], among: Sequence[int]
    ) -> Iterator[tuple[int, list[int]]]:
        """Each of the patterns `among` with the lines of `batch` (`joined` by newlines) that
        it matches, as offsets into `batch`. A pattern is run once over the joined lines and
        each match is placed on its line; where a match crosses a line end (`\\s`, `[^x]`
        match a newline), or the pattern is anchored to the whole text, it is tried on each
        line instead, which decides."""
        starts = list(accumulate((len(line) + 1 for line in batch[:-1]), initial=0))
        for number in among:
            regex = compiled(self.patterns[number])
            offsets = None if number in self.anchored else _lines_of(regex, joined, starts)
            if offsets is None:
                offsets = [n for n, line in enumerate(batch) if regex.search(line) is not None]
            yield number, offsets


def _lines_of(regex: re2._Regexp, joined: bytes, starts: Sequence[int]) -> list[int] | None:
    """The lines (offsets of `starts`, where each line of `joined` begins) that hold a match
    of `regex`; None when a match crosses a line end. (No pattern matches the empty string.)"""
    lines: list[int] = []
    for match in regex.finditer(joined):
        start, end = match.span()
        if joined.find(b"\n", start, end) != -1:
            return None
        line = bisect_right(starts, start) - 1
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _filters(numbered: list[tuple[int, str]]) -> list[tuple[re2.Filter, list[int]]]:
    """Filters of FILTER_CHUNK patterns each, with the number of each of their patterns."""
    chunks = [
        numbered[start : start + FILTER_CHUNK] for start in range(0, len(numbered), FILTER_CHUNK)
    ]
    return [(_compile_filter([p for _, p in chunk]), [n for n, _ in chunk]) for chunk in chunks]


def _compile_sets(patterns: Sequence[str]) -> _Matcher | None:
    """The matcher of the patterns (every one already known to compile)."""
    return _Matcher(patterns) if patterns else None


def _compile_filter(patterns: Sequence[str]) -> re2.Filter:
    matcher = re2.Filter()
    options = re2_options(SET_MAX_MEM)
    for pattern in patterns:
        matcher.Add(pattern, options)
    matcher.Compile()
    return matcher


def _symptom_lines(symptom: str) -> list[str]:
    return [line.strip() for line in symptom.splitlines() if line.strip()]
