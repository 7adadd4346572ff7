"""Signatures: RE2 patterns that recognise an incident's log lines, matched together.

All enabled signatures go into a few `re2.Filter`s (RE2's FilteredRE2): each pattern's
required literal atoms are matched in one pass by a case-insensitive literal set, and only the
patterns whose atoms occur are run, so each distinct line of a tail is scanned once however
large the knowledge base, and the line numbers come with it. (One `re2.Set` of every pattern
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
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import re2

from .patterns import (
    SET_MAX_MEM,
    compile_error,
    counter_regex,
    literal_length,
    re2_options,
    symptom_pattern,
)
from .types import IncidentSpec, SignatureSpec

# A Filter's own atom set is compiled with RE2's default budget, which holds the atoms of a
# few thousand patterns: signatures go into filters of this many each.
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

    @functools.cached_property
    def specificity(self) -> float:
        """0..1: how much literal text the pattern demands, the more the surer a hit."""
        return min(1.0, literal_length(self.pattern) / SPECIFIC_LITERAL)


@dataclass(frozen=True)
class Hit:
    signature: Signature
    text: str  # the line that matched, verbatim
    lines: tuple[int, ...]  # 0-based indices of every line with this exact text


@dataclass
class SignatureSet:
    """Every usable signature, in filters of FILTER_CHUNK patterns each."""

    signatures: tuple[Signature, ...]
    rejected: dict[str, str] = field(default_factory=dict)
    _sets: _Matcher | None = field(default=None, repr=False)

    @property
    def set_count(self) -> int:
        """How many filters hold the signatures."""
        return self._sets.filter_count if self._sets else 0

    def only(self, slugs: Iterable[str]) -> SignatureSet:
        """The signatures (catalog and symptom) of these incidents alone, in a set of their
        own: what a change to those incidents could now match."""
        wanted = set(slugs)
        kept = tuple(signature for signature in self.signatures if signature.slug in wanted)
        return SignatureSet(kept, {}, _compile_sets([signature.pattern for signature in kept]))

    def scan(self, lines: Sequence[str]) -> list[Hit]:
        """Which signatures match which lines; each distinct line is matched once.

        The distinct lines are encoded to UTF-8 in one go and handed to RE2 as bytes; line
        numbers are only collected for the few lines that something matched."""
        return self.scan_ruling(lines)[0]

    def scan_ruling(self, lines: Sequence[str]) -> tuple[list[Hit], list[Hit]]:
        """`scan`, and beside it the hits a counter-pattern ruled out: the lines those
        signatures recognise say this tail is not their incident."""
        if not self._sets:
            return [], []
        distinct = [text for text in dict.fromkeys(lines) if text]
        encoded = _encoded(distinct)
        found: list[tuple[str, list[int]]] = []
        for start in range(0, len(distinct), _BATCH_LINES):
            batch = encoded[start : start + _BATCH_LINES]
            if not self._sets.batch_may_match(b"\n".join(batch)):
                continue  # most lines match nothing: a batch of them is one call
            for text, data in zip(distinct[start : start + _BATCH_LINES], batch, strict=True):
                indices = self._sets.match(data)
                if indices:
                    found.append((text, indices))
        if not found:
            return [], []
        where: dict[str, list[int]] = {text: [] for text, _indices in found}
        for number, text in enumerate(lines):
            if text in where:
                where[text].append(number)
        hits = [
            Hit(self.signatures[index], text, tuple(where[text]))
            for text, indices in found
            for index in indices
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
                Signature(spec.key, spec.slug, spec.pattern, "signature", unless=spec.unless)
            )
    for incident in incidents:
        own = [c for c in candidates if c.slug == incident.slug]
        for number, line in enumerate(_symptom_lines(incident.symptom), start=1):
            key = f"{SYMPTOM_KEY_PREFIX}{incident.slug}:{number}"
            pattern = symptom_pattern(line)
            if pattern is None:
                rejected[key] = "symptom line too short or too vague to act as a signature"
            else:
                unless = _symptom_counter(line, own)
                candidates.append(Signature(key, incident.slug, pattern, "symptom", unless=unless))
    accepted, sets = _compile_valid(candidates, rejected)
    result = SignatureSet(tuple(accepted), rejected, sets)
    if not benign_lines:
        return result
    fired = Counter(hit.signature.key for hit in result.scan(benign_lines))
    limit = INDEX_BENIGN_SHARE * len(benign_lines)
    noisy = {key for key, count in fired.items() if count > limit}
    for key in noisy:
        rejected[key] = (
            f"fires on {fired[key]:,} of {len(benign_lines):,} lines of healthy logs, "
            "so it would flag every job"
        )
    kept = [replace(s, benign_hits=fired[s.key]) for s in accepted if s.key not in noisy]
    sets = _compile_sets([signature.pattern for signature in kept]) if noisy else sets
    return SignatureSet(tuple(kept), rejected, sets)


def _symptom_counter(line: str, signatures: Sequence[Signature]) -> str:
    """A symptom line is ruled out by what rules out the incident's own signatures that
    recognise it: `No space left on device` is no full disk beside `/dev/shm`."""
    counters = []
    for signature in signatures:
        usable = signature.unless and compile_error(signature.pattern) is None
        if usable and re2.compile(signature.pattern, re2_options()).search(line):
            counters.append(signature.unless)
    unique = list(dict.fromkeys(counters))
    return "|".join(f"(?:{counter})" for counter in unique) if len(unique) > 1 else "".join(unique)


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
    """Compile the candidates that RE2 accepts and that need some text to match.

    RE2 only says that a pattern failed to join the set, so each failure is compiled alone
    for the reason; the compiled set is matched against "" to find the patterns that match
    the empty string. If any is refused, the set is rebuilt without it.
    """
    accepted = []
    probe = re2.Set.SearchSet(re2_options(SET_MAX_MEM))
    for signature in candidates:
        try:
            probe.Add(signature.pattern)
        except re2.error:
            reason = compile_error(signature.pattern) or "RE2 refused it"
            rejected[signature.key] = f"does not compile in RE2: {reason}"
        else:
            accepted.append(signature)
    sets = _compile_sets([signature.pattern for signature in accepted])
    empty = set(_match_all(sets, ""))
    if not empty:
        return accepted, sets
    for index in empty:
        rejected[accepted[index].key] = "matches the empty string, so it would fire on every line"
    accepted = [signature for index, signature in enumerate(accepted) if index not in empty]
    return accepted, _compile_sets([signature.pattern for signature in accepted])


def _encoded(lines: list[str]) -> list[bytes]:
    """``lines`` in UTF-8, encoded together (a line holding a newline is encoded alone)."""
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:
        return [line.encode("utf-8", "surrogatepass") for line in lines]
    return text.encode("utf-8", "surrogatepass").split(b"\n")


class _Matcher:
    """The filters of a signature set. A pattern is matched on one line at a time, but most
    lines match nothing, so lines are first tried a batch at a time, joined by newlines: a
    pattern is added as `(?m)PATTERN` so that `^` and `$` still mean a line's ends, and a
    batch in which nothing matches needs no look at its lines. (A pattern may match across
    the joined lines, as `\\s` matches a newline: the lines of such a batch are then tried
    one by one, which decides.) The rare pattern anchored to the whole text (`\\A`, `\\z`)
    is tried on every line."""

    def __init__(self, patterns: Sequence[str]):
        numbered = list(enumerate(patterns))
        whole = [(n, p) for n, p in numbered if not _TEXT_ANCHOR.search(p)]
        alone = [(n, p) for n, p in numbered if _TEXT_ANCHOR.search(p)]
        self.batched = _filters([(n, f"(?m){p}") for n, p in whole])
        self.single = _filters(alone)
        self.filter_count = len(self.batched) + len(self.single)

    def batch_may_match(self, data: bytes) -> bool:
        return bool(self.single) or any(matcher.Match(data) for matcher, _ in self.batched)

    def match(self, data: bytes | str) -> list[int]:
        found: list[int] = []
        for matcher, numbers in (*self.batched, *self.single):
            indices = matcher.Match(data)
            if indices:
                found.extend(numbers[index] for index in indices)
        return found


def _filters(numbered: list[tuple[int, str]]) -> list[tuple[re2.Filter, list[int]]]:
    """Filters of FILTER_CHUNK patterns each, with the number of each of their patterns."""
    chunks = [
        numbered[start : start + FILTER_CHUNK] for start in range(0, len(numbered), FILTER_CHUNK)
    ]
    return [(_compile_filter([p for _, p in chunk]), [n for n, _ in chunk]) for chunk in chunks]


def _match_all(matcher: _Matcher | None, text: str | bytes) -> list[int]:
    return matcher.match(text) if matcher else []


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
