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
# A Filter's own atom set is compiled with RE2's default budget, which holds the atoms of a
# few thousand patterns: signatures go into filters of this many each.
FILTER_CHUNK = 4000
_BATCH_LINES = 64  # distinct lines tried together before any is tried alone
_TEXT_ANCHOR = re.compile(r"\\[Az]")
SYMPTOM_KEY_PREFIX = "symptom:"
# Symptom lines with fewer literal characters than this are too vague to be a signature.
MIN_SYMPTOM_LITERAL = 12
# Where a signature has this many literal characters it counts as fully specific.
SPECIFIC_LITERAL = 24
# At index time a signature firing on more than this share of the healthy reference lines
# is refused as noise (saving one is refused at 1%, by `check_signature`).
INDEX_BENIGN_SHARE = 0.1
_WILDCARD = "<*>"


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
        if not self._sets:
            return []
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
