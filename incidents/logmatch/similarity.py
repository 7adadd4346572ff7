"""Fallback matching by text similarity: TF-IDF cosine over character n-grams and words.

It lets an incident without signatures, or a plain description ("WER up 2 points after a
rerun", "显存不足"), find its incident. Character n-grams need no word boundaries, so Chinese
works; words add precision for English. Each incident is cut into passages (title, each symptom
line, each sentence of the description, and the whole text) and an incident scores the best
cosine of its passages, so a short query such as "显存不足" is not drowned by a long bilingual
description. Vectors are precomputed once into postings of compact arrays; a query touches
only the postings of its own features.
"""

from __future__ import annotations

import copy
import math
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

import re2

from .types import IncidentSpec

# Log furniture that every failure has: level words, bare or generic exception classes, errno
# brackets, traceback headers, paths, object reprs and memory addresses. Left in,
# "OSError: [Errno 24] Too many open files" would resemble "OSError: [Errno 28] No space left
# on device" more than its message resembles anything. Specific exception classes
# (OutOfMemoryError, DistBackendError) stay.
# RE2: it runs on the lines of a pasted tail (a path starts after a character that cannot be
# in one; that character goes with the furniture, which becomes a space anyway).
_FURNITURE = re2.compile(
    r"\b(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL|FATAL|NOTICE)\b"
    r"|\[Errno\s*\d+\]"
    r"|Traceback \(most recent call last\):?"
    r"|terminate called after throwing an instance of"
    r"|\b(?:\w+\.)*(?:OS|IO|Runtime|Value|Type|Key|Index|Attribute|Assertion|Lookup|Name"
    r"|System|Environment|Base|CalledProcess|Unicode(?:De|En)code)?(?:Error|Exception)\b"
    r"|[^\w/]?/job:\w+/replica:\d+/task:\d+(?:/device:\w+:\d+)?"  # a TensorFlow device name
    r"|<[\w.]+ object at 0x[0-9a-fA-F]+>|\b0x[0-9a-fA-F]{10,}\b"  # an object's repr, an address
    r"|[(\[](?:[\w.]+ )?(?:address=[^,\s\]]+, )?pid=\d+(?:, ip=[\d.:]+)?[)\]]"  # a worker's tag
    r"|(?:^|[^\w/])(?:~|\.{1,2})?/[\w.\-/]+"
    r"|\b\w+(?:/[\w.\-]+){2,}"
)
_DIGITS = re.compile(r"\d+")
CODE_WEIGHT = 8  # counted as if the code were written this many times
# Error codes name a failure better than any wording, and folding their digits would make
# them all alike: each is kept whole as a feature of its own (CANN's EZ9999 / E40021, ACL and
# aclnn return codes, CUDA / NCCL / cuBLAS / cuDNN / ACL status names, errno names).
_CODES = re.compile(
    r"\bE[A-Z0-9]\d{4}\b"
    r"|\b(?:[1-5]0[0-7]|[1-5]61)\d{3}\b"
    r"|\b(?:cudaError|CUDA_ERROR_|CUBLAS_STATUS_|CUDNN_STATUS_|CUFFT_|CURAND_STATUS_|ACL_ERROR_"
    r"|ACLNN_ERR_|HCCL_E_|nccl(?=[A-Z]))\w+"
    r"|\bE(?:NOSPC|ADDRINUSE|ADDRNOTAVAIL|NOMEM|ACCES|PERM|NOENT|CONNREFUSED|CONNRESET|TIMEDOUT"
    r"|MFILE|NFILE|BUSY|NODEV|NOEXEC|PIPE|HOSTUNREACH|NETUNREACH|XDEV|NOTCONN|AGAIN)\b"
)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[a-z_][a-z0-9_]{2,}")
# An exception class named in CamelCase (`NoBackendError`, `ContextWindowExceededError`) also
# counts as its words: the class names the failure in words the incidents' texts use.
_CAMEL_NAME = re.compile(r"\b[A-Z]?[a-z]+(?:[A-Z][a-z]+)*(?:Error|Exception)\b")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
# Features in more than this share of the incidents tell them apart too little to be worth
# the postings they would cost at query time; in a large knowledge base, neither do features
# in more than a few dozen incidents (their low IDF adds little to any cosine, and their long
# postings would dominate the query time).
_MAX_DOCUMENT_SHARE = 0.5
_MAX_DOCUMENTS = 48
_QUERY_FEATURES = 80  # of a query, only the heaviest features are looked up
# Character n-grams find "determinize" close to "determinism": a passage counts only when it
# also shares this many telling units with the query (word stems, or Chinese 2-grams). A rare
# unit (in at most RARE_IN incidents: "sox", "EADDRINUSE", "TERM_MEMLIMIT") counts twice: one
# such word tells more than two common ones, but a passage that shares only that one word is a
# faint likeness (its cosine counts THIN_FACTOR), never an answer on its own.
MIN_SHARED_UNITS = 2
# An example line of an incident's signatures counts this share of its cosine: only a line
# worded nearly like it resembles it as much as the incident's own words, so a new wording of
# a known failure finds its incident, and an incident known only by its words (filed without
# signatures) is not crowded out by other incidents' example lines.
EXAMPLE_FACTOR = 0.5
RARE_IN = 2
THIN_FACTOR = 0.5
_SENTENCE_END = re.compile(r"(?<=[。；！？])|(?<=[.;!?])\s+|\n+")
_MIN_PASSAGE_CHARS = 4
# Words are cut to their first letters: a poor man's stemmer that lets "rerunning" meet
# "rerun" and "oscillates" meet "oscillating".
_STEM = 5
_STOP_WORDS = frozenset(
    (
        *("the", "and", "for", "with", "from", "that", "this", "was", "were", "are", "not"),
        *("but", "has", "have", "had", "when", "then", "than", "into", "after", "before"),
        *("over", "out", "its", "all", "any", "can", "will", "our", "you", "your", "one"),
        *("two", "per", "use", "used", "using"),
        # Words every failure log is full of: they tell no incident from another.
        *("error", "errors", "errno", "failed", "failure", "file", "files", "open", "grad"),
        *("line", "value", "found", "invalid", "unable", "cannot", "could", "call", "calls"),
        *("process", "return", "returned", "module", "input", "output", "run", "running"),
        *("self", "none", "true", "false", "args", "kwargs", "main", "lib", "site", "packages"),
        *("python", "torch", "line", "raise", "exception", "traceback", "recent", "most"),
    )
)


def features(text: str) -> Counter[str]:
    """CJK 2-grams, other character 3-grams, word stems and whole error codes of `text`
    without its log furniture, lower-cased, digits folded (except in the codes). (CJK
    3-grams would double the features of Chinese text without adding much; 2-grams are the
    usual unit of Chinese retrieval.)"""
    message = _FURNITURE.sub(" ", text)
    codes = Counter({"code:" + code.lower(): CODE_WEIGHT for code in _CODES.findall(message)})
    normal = _SPACE.sub(" ", _DIGITS.sub("0", message.lower())).strip()
    counts: Counter[str] = Counter()
    for run in _CJK_RUN.findall(normal):
        counts.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            counts[run] += 1
    padded = f" {_CJK_RUN.sub(' ', normal)} "
    counts.update(padded[i : i + 3] for i in range(len(padded) - 2) if padded[i + 1] != " ")
    counts.update("w:" + word[:_STEM] for word in _WORD.findall(normal) if word not in _STOP_WORDS)
    counts.update(
        "w:" + word[:_STEM]
        for name in _CAMEL_NAME.findall(message)
        for word in map(str.lower, _CAMEL_PART.findall(name))
        if len(word) >= 3 and word not in _STOP_WORDS
    )
    counts.update(codes)
    return counts


@dataclass(frozen=True)
class SimilarityHit:
    slug: str
    score: float  # cosine, 0..1
    query: int  # index of the query that scored best
    example: bool = False  # the best passage was an example line of a signature


@dataclass(frozen=True)
class _Part:
    """The passages of some incidents: for each passage its incident's number, and for each
    feature the passages that have it with their normalised weights, in compact arrays."""

    owners: array[int]
    postings: dict[str, tuple[array[int], array[float]]]
    examples: frozenset[int]  # the passages that are example lines of signatures


class SimilarityIndex:
    """Sparse TF-IDF vectors of the incidents, with an inverted index for queries.

    Built once over the whole book; a change to a few incidents (`changed`) shares what did
    not change and adds their new passages as a small part of its own, weighed with the
    book's statistics as they were, so a change costs what changed."""

    def __init__(self, incidents: Sequence[IncidentSpec]):
        self.slugs: tuple[str, ...] = tuple(incident.slug for incident in incidents)
        frequency: Counter[str] = Counter()
        for incident in incidents:  # one incident at a time: a large book never sits in memory
            frequency.update(features(_document(incident)).keys())
        total = max(1, len(incidents))
        self._unknown_idf = math.log(total + 1) + 1.0
        self._idf = {
            feature: math.log((total + 1) / (count + 1)) + 1.0
            for feature, count in frequency.items()
        }
        self._rare = frozenset(
            feature
            for feature, count in frequency.items()
            if count <= RARE_IN and total > 2 * RARE_IN and _is_unit(feature)
        )
        self._common = frozenset(
            feature
            for feature, count in frequency.items()
            if total >= 4 and (count / total > _MAX_DOCUMENT_SHARE or count > _MAX_DOCUMENTS)
        )
        self._parts: tuple[_Part, ...] = (self._part(incidents, first=0),)
        self._live = dict(zip(self.slugs, range(len(self.slugs)), strict=True))
        self.changes = 0  # incidents changed since the whole book was read

    @property
    def part_count(self) -> int:
        return len(self._parts)

    def changed(
        self, incidents: Sequence[IncidentSpec], removed: Iterable[str] = ()
    ) -> SimilarityIndex:
        """This index with `incidents` filed or replaced and the `removed` slugs gone."""
        new = copy.copy(self)
        new.slugs = (*self.slugs, *(incident.slug for incident in incidents))
        new._live = dict(self._live)
        for slug in removed:
            new._live.pop(slug, None)
        for number, incident in enumerate(incidents, start=len(self.slugs)):
            new._live[incident.slug] = number
        parts = [*self._parts, new._part(incidents, first=len(self.slugs))]
        # The changes' parts are merged as they pile up (the last two, once the newer is at
        # least half the older), so a query visits a few parts, not one per change; the
        # whole book's part is left alone, and read again after enough changes.
        live = set(new._live.values())
        while len(parts) > 2 and 2 * len(parts[-1].owners) >= len(parts[-2].owners):
            parts[-2:] = [_merged(parts[-2:], live)]
        new._parts = tuple(parts)
        new.changes = self.changes + len(incidents) + len(set(removed))
        return new

    def _part(self, incidents: Sequence[IncidentSpec], first: int) -> _Part:
        owners = array("i")
        postings: dict[str, tuple[array[int], array[float]]] = {}
        examples: set[int] = set()
        idf, unknown = self._idf, self._unknown_idf
        for number, incident in enumerate(incidents, start=first):
            for text, example in _passages(incident):
                passage = len(owners)
                owners.append(number)
                if example:
                    examples.add(passage)
                weights = {
                    feature: (1.0 + math.log(count)) * idf.get(feature, unknown)
                    for feature, count in features(text).items()
                }
                norm = math.sqrt(sum(weight * weight for weight in weights.values())) or 1.0
                for feature, weight in weights.items():
                    if feature in self._common:
                        continue
                    if feature not in postings:
                        postings[feature] = (array("i"), array("f"))
                    passages_of, weights_of = postings[feature]
                    passages_of.append(passage)
                    weights_of.append(weight / norm)
        return _Part(owners, postings, frozenset(examples))

    def _normalised(self, counts: Counter[str]) -> dict[str, float]:
        weights = {
            feature: (1.0 + math.log(count)) * self._idf.get(feature, self._unknown_idf)
            for feature, count in counts.items()
        }
        norm = math.sqrt(sum(weight * weight for weight in weights.values())) or 1.0
        return {feature: weight / norm for feature, weight in weights.items()}

    def score(self, text: str) -> dict[str, float]:
        """Cosine of `text` against every incident that shares a feature with it, by slug.

        An incident scores the best cosine of its passages.
        """
        return {slug: value for slug, (value, _) in self.scored(text).items()}

    def scored(self, text: str, *, examples: bool = True) -> dict[str, tuple[float, bool]]:
        """`score`, each with whether its best passage is an example line of its signatures
        (those passages left out unless `examples`)."""
        query = self._normalised(features(text))
        # The heaviest features carry the cosine; the light ones would only cost time.
        heaviest = sorted(query.items(), key=lambda item: -item[1])[:_QUERY_FEATURES]
        best: dict[int, float] = {}
        from_example: dict[int, bool] = {}
        for part in self._parts:
            sums: dict[int, float] = defaultdict(float)
            shared: Counter[int] = Counter()  # telling units shared, counted in C
            rare_shared: Counter[int] = Counter()
            postings, rare = part.postings, self._rare
            for feature, weight in heaviest:
                found = postings.get(feature)
                if found is None:
                    continue
                passages, weights = found
                for passage, doc_weight in zip(passages, weights, strict=True):
                    sums[passage] += weight * doc_weight
                if _is_unit(feature):
                    shared.update(passages)
                    if feature in rare:
                        rare_shared.update(passages)
            owners, skipped = part.owners, frozenset() if examples else part.examples
            for passage, units in shared.items():
                if passage in skipped:
                    continue
                if units + rare_shared[passage] >= MIN_SHARED_UNITS:
                    value, incident = sums[passage], owners[passage]
                    if units < MIN_SHARED_UNITS:
                        value *= THIN_FACTOR
                    if passage in part.examples:
                        value *= EXAMPLE_FACTOR
                    if value > best.get(incident, 0.0):
                        best[incident] = value
                        from_example[incident] = passage in part.examples
        live = self._live
        return {
            self.slugs[number]: (value, from_example[number])
            for number, value in best.items()
            if live.get(self.slugs[number]) == number
        }

    def best_matches(
        self, queries: Iterable[str], top: int = 10, without_examples: Container[int] = ()
    ) -> list[SimilarityHit]:
        """For each incident, its best cosine over `queries`; the `top` highest, best first.
        The queries numbered in `without_examples` are not compared with example lines."""
        best: dict[str, SimilarityHit] = {}
        for number, query in enumerate(queries):
            scored = self.scored(query, examples=number not in without_examples)
            for slug, (value, example) in scored.items():
                current = best.get(slug)
                if current is None or value > current.score:
                    best[slug] = SimilarityHit(slug, min(1.0, value), number, example)
        return sorted(best.values(), key=lambda hit: -hit.score)[:top]


def _merged(parts: Sequence[_Part], live: set[int]) -> _Part:
    """These parts as one, without the passages of incidents changed or removed since."""
    owners = array("i")
    postings: dict[str, tuple[array[int], array[float]]] = {}
    examples: set[int] = set()
    for part in parts:
        renumbered: dict[int, int] = {}
        for passage, owner in enumerate(part.owners):
            if owner in live:
                renumbered[passage] = len(owners)
                if passage in part.examples:
                    examples.add(len(owners))
                owners.append(owner)
        for feature, (passages, weights) in part.postings.items():
            for passage, weight in zip(passages, weights, strict=True):
                if (number := renumbered.get(passage)) is not None:
                    if feature not in postings:
                        postings[feature] = (array("i"), array("f"))
                    postings[feature][0].append(number)
                    postings[feature][1].append(weight)
    return _Part(owners, postings, frozenset(examples))


def _is_unit(feature: str) -> bool:
    """A word stem, an error code, or a Chinese 2-gram: what "real content overlap" is
    counted in."""
    return feature.startswith(("w:", "code:")) or (
        len(feature) == 2 and _CJK_RUN.fullmatch(feature) is not None
    )


def _whole(incident: IncidentSpec) -> str:
    return f"{incident.title}\n{incident.symptom}\n{incident.description}"


def _document(incident: IncidentSpec) -> str:
    """What the book's word statistics count of an incident: its text and its example lines."""
    return "\n".join((_whole(incident), *incident.examples))


def _passages(incident: IncidentSpec) -> list[tuple[str, bool]]:
    """The title, each symptom line, each sentence of the description, and the whole text;
    then each example line of its signatures (marked True)."""
    pieces = [incident.title, *incident.symptom.splitlines()]
    pieces += _SENTENCE_END.split(incident.description)
    kept = [piece.strip() for piece in pieces if len(piece.strip()) >= _MIN_PASSAGE_CHARS]
    texts = [*dict.fromkeys(kept), _whole(incident)]
    examples = [line for line in incident.examples if line not in kept]
    return [(text, False) for text in texts] + [(line, True) for line in examples]
