"""Signatures: RE2 patterns that recognise an incident's log lines, compiled into one set.

All enabled signatures go into one `re2.Set`, so each distinct line of a tail is scanned once
however large the knowledge base; the set answers which patterns matched, and since it runs
line by line the line numbers come with it. (Signatures may name any digit, so unlike the rule
tables the scan cannot merge lines that differ only in their digits.) RE2 runs in linear time,
so a catastrophic pattern such as `(a+)+$` is harmless; a pattern that matches the empty
string would fire on every line and is refused. Each incident's symptom lines act as
signatures too: masked with `mask_line`, their literal parts escaped and every `<*>` turned
into a wildcard, so a just-filed incident matches at once, even with other numbers.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import re2

from common.phrases import Phrase, gettext_noop

from .generic import GENERIC_SAMPLES
from .templates import mask_line
from .types import IncidentSpec, SignatureSpec

if TYPE_CHECKING:
    from .benign import LineCorpus

# A 10k-pattern set fails to compile at RE2's default 8 MiB (and at 16 MiB); the budget is an
# upper bound, not an allocation.
SET_MAX_MEM = 256 << 20
SYMPTOM_KEY_PREFIX = "symptom:"
# Symptom lines with fewer literal characters than this are too vague to be a signature.
MIN_SYMPTOM_LITERAL = 12
# Where a signature has this many literal characters it counts as fully specific.
SPECIFIC_LITERAL = 24
# At index time a signature firing on more than this share of the healthy reference lines
# is refused as noise (saving one is refused at 1%, by `check_signature`).
INDEX_BENIGN_SHARE = 0.1
_WILDCARD = "<*>"
_MATCH_CHUNK = 2048  # patterns per set when one set over everything fails to compile


def re2_options(max_mem: int = 8 << 20) -> re2.Options:
    options = re2.Options()
    options.max_mem = max_mem
    options.log_errors = False  # RE2 would print every parse error to stderr through absl
    return options


def compile_error(pattern: str) -> str | None:
    """RE2's reason why `pattern` does not compile, or None when it compiles."""
    try:
        re2.compile(pattern, re2_options())
    except re2.error as error:
        reason = error.args[0] if error.args else "invalid pattern"
        return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
    except (TypeError, ValueError) as error:
        return str(error)
    return None


@dataclass(frozen=True)
class Signature:
    """A compiled signature: a catalog pattern, or one derived from a symptom line."""

    key: str  # SignatureSpec.key, or "symptom:<slug>:<n>"
    slug: str
    pattern: str
    kind: str  # signature | symptom
    benign_hits: int = 0  # lines of the healthy reference logs it fires on

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
    """Every usable signature in one RE2 set (or a few, if one would not compile)."""

    signatures: tuple[Signature, ...]
    rejected: dict[str, str] = field(default_factory=dict)
    _sets: list[tuple[re2.Set, int]] = field(default_factory=list, repr=False)

    @property
    def set_count(self) -> int:
        """How many RE2 sets hold the signatures: one, unless RE2 could not compile that."""
        return len(self._sets)

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
        if not self._sets:
            return []
        distinct = [text for text in dict.fromkeys(lines) if text]
        found: list[tuple[str, list[int]]] = []
        if len(self._sets) == 1:
            match = self._sets[0][0].Match
            for text, data in zip(distinct, _encoded(distinct), strict=True):
                indices = match(data)
                if indices:
                    found.append((text, indices))
        else:
            for text, data in zip(distinct, _encoded(distinct), strict=True):
                indices = _match_all(self._sets, data)
                if indices:
                    found.append((text, indices))
        if not found:
            return []
        where: dict[str, list[int]] = {text: [] for text, _indices in found}
        for number, text in enumerate(lines):
            if text in where:
                where[text].append(number)
        return [
            Hit(self.signatures[index], text, tuple(where[text]))
            for text, indices in found
            for index in indices
        ]


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
        if spec.slug in known:
            candidates.append(Signature(spec.key, spec.slug, spec.pattern, "signature"))
        else:
            rejected[spec.key] = f"points to an unknown incident {spec.slug!r}"
    for incident in incidents:
        for number, line in enumerate(_symptom_lines(incident.symptom), start=1):
            key = f"{SYMPTOM_KEY_PREFIX}{incident.slug}:{number}"
            pattern = symptom_pattern(line)
            if pattern is None:
                rejected[key] = "symptom line too short or too vague to act as a signature"
            else:
                candidates.append(Signature(key, incident.slug, pattern, "symptom"))
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


def _compile_valid(
    candidates: list[Signature], rejected: dict[str, str]
) -> tuple[list[Signature], list[tuple[re2.Set, int]]]:
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


def _match_all(sets: Sequence[tuple[re2.Set, int]], text: str | bytes) -> list[int]:
    found: list[int] = []
    for pattern_set, offset in sets:
        indices = pattern_set.Match(text)
        if indices:
            found.extend(offset + index for index in indices)
    return found


def _compile_sets(patterns: Sequence[str]) -> list[tuple[re2.Set, int]]:
    """One set for all patterns; if RE2 cannot compile that, sets of a chunk each."""
    if not patterns:
        return []
    try:
        return [(_compile_set(patterns), 0)]
    except re2.error:
        return [
            (_compile_set(patterns[start : start + _MATCH_CHUNK]), start)
            for start in range(0, len(patterns), _MATCH_CHUNK)
        ]


def _compile_set(patterns: Sequence[str]) -> re2.Set:
    pattern_set = re2.Set.SearchSet(re2_options(SET_MAX_MEM))
    for pattern in patterns:
        pattern_set.Add(pattern)
    pattern_set.Compile()
    return pattern_set


def _symptom_lines(symptom: str) -> list[str]:
    return [line.strip() for line in symptom.splitlines() if line.strip()]


def symptom_pattern(line: str) -> str | None:
    """An RE2 pattern for a symptom line: its masked template with literals escaped.

    Each `<*>` becomes `.*`: matching is per line and lines are capped, so the wildcard is
    bounded by the line, and a counted repeat such as `.{0,80}` would make the compiled
    program some forty times larger. Runs of whitespace match any whitespace. None when the
    line has too little literal text to say anything.
    """
    template = mask_line(line).strip()
    parts = [part.strip() for part in template.split(_WILDCARD)]
    literal = "".join(parts)
    if len(re.sub(r"\W", "", literal)) < MIN_SYMPTOM_LITERAL:
        return None
    pieces = [_escape_literal(part) for part in parts if part]
    return ".*".join(pieces)


def _escape_literal(text: str) -> str:
    return r"\s+".join(re2.escape(word) for word in text.split())


_LITERAL_SKIP = re.compile(r"\\[pP]\{[^}]*\}|\\[pP][A-Za-z]|\\[dDwWsSbBAzZ]|\[(?:\\.|[^\]\\])*\]")
_COUNTED_REPEAT = re.compile(r"\{(\d+)(?:,\d*)?\}")
_GROUP_NAME = re.compile(r"\?P?<\w+>")


def literal_length(pattern: str) -> int:
    """The least number of literal characters any match of `pattern` must contain (roughly).

    Counts escaped and plain characters, takes the shortest branch of each alternation, and
    drops what a `?`, `*` or `{0,…}` makes optional. Classes and wildcards count nothing.
    """
    text = _LITERAL_SKIP.sub("\x00", pattern)
    length, _ = _sequence_length(text, 0)
    return length


def _sequence_length(text: str, position: int) -> tuple[int, int]:
    """Literal length of the alternation starting at `position`, up to its closing `)`."""
    branches: list[int] = []
    current = 0
    last_atom = 0
    while position < len(text):
        char = text[position]
        if char == ")":
            position += 1
            break
        if char == "|":
            branches.append(current)
            current = last_atom = 0
            position += 1
            continue
        if char == "(":
            position += 1
            named = _GROUP_NAME.match(text, position)
            if named:
                position = named.end()
            elif text.startswith("?", position):
                closing = text.find(")", position)
                colon = text.find(":", position)
                if closing != -1 and (colon == -1 or closing < colon):
                    position = closing + 1  # a flag group such as (?i): no content
                    continue
                position = colon + 1 if colon != -1 else position + 1
            last_atom, position = _sequence_length(text, position)
        elif char == "{" and (repeat := _COUNTED_REPEAT.match(text, position)):
            if repeat.group(1) == "0":
                current -= last_atom
            last_atom = 0
            position = repeat.end()
            continue
        elif char in "*?":
            current -= last_atom
            last_atom = 0
            position += 1
            continue
        elif char == "+" or char in ".^$\x00":
            last_atom = 0
            position += 1
            continue
        elif char == "\\" and position + 1 < len(text):
            last_atom = 0 if text[position + 1].isspace() else 1
            position += 2
        else:
            last_atom = 0 if char.isspace() else 1
            position += 1
        current += last_atom
    branches.append(current)
    return max(0, min(branches)), position


def check_signature(
    pattern: str,
    *,
    examples: Sequence[str],
    benign: LineCorpus | None,
    max_benign_share: float = 0.01,
) -> list[Phrase]:
    """Problems that should stop `pattern` from being saved, in words; empty when it is fine.

    Checks that it compiles in RE2 (with RE2's reason when not), does not match the empty
    string, matches each of its examples (at least one must be given), matches no generic line
    that proves nothing alone, and fires on at most `max_benign_share` of the `benign` lines.
    """
    error = compile_error(pattern)
    if error:
        return [Phrase(gettext_noop("Does not compile in RE2: %(reason)s."), reason=error)]
    problems: list[Phrase] = []
    compiled = re2.compile(pattern, re2_options())
    if compiled.search("") is not None:
        problems.append(
            Phrase(
                gettext_noop(
                    "Matches the empty string, so it would fire on every line: "
                    "make it require text."
                )
            )
        )
    problems += _example_problems(compiled, examples)
    generic = [line for line in GENERIC_SAMPLES if compiled.search(line)]
    if generic:
        problems.append(
            Phrase(
                gettext_noop(
                    "Matches a generic line that proves nothing alone: %(line)s; "
                    "require the text that names the cause."
                ),
                line=_quote(generic[0]),
            )
        )
    if benign and (problem := _benign_problem(pattern, benign, max_benign_share)):
        problems.append(problem)
    return problems


def _example_problems(compiled: re2._Regexp, examples: Sequence[str]) -> list[Phrase]:
    """The pattern must match its examples, of which there must be at least one."""
    problems: list[Phrase] = []
    if not examples:
        problems.append(
            Phrase(gettext_noop("Has no examples: add at least one real log line it must match."))
        )
    else:
        missed = [number for number, line in enumerate(examples, 1) if not compiled.search(line)]
        if len(missed) == len(examples):
            problems.append(
                Phrase(gettext_noop("Matches none of its %(n)s example(s)."), n=str(len(examples)))
            )
        else:
            problems += [
                Phrase(
                    gettext_noop("Does not match its example %(n)s: %(line)s."),
                    n=str(number),
                    line=_quote(examples[number - 1]),
                )
                for number in missed
            ]
    return problems


def _benign_problem(pattern: str, benign: LineCorpus, max_share: float) -> Phrase | None:
    """Why the pattern fires on too many healthy lines, or None."""
    fired = benign.fired(pattern)
    share = len(fired) / len(benign)
    if share <= max_share:
        return None
    return Phrase(
        gettext_noop(
            "Fires on %(fired)s of %(total)s lines of healthy logs (%(share)s; "
            "the limit is %(limit)s), e.g. %(line)s."
        ),
        fired=f"{len(fired):,}",
        total=f"{len(benign):,}",
        share=f"{share:.1%}",
        limit=f"{max_share:.1%}",
        line=_quote(fired[0]),
    )


def _quote(line: str, width: int = 120) -> str:
    return repr(line if len(line) <= width else line[: width - 1] + "…")
