"""Fallback matching by text similarity: TF-IDF cosine over character n-grams and words.

It lets an incident without signatures, or a plain description ("WER up 2 points after a
rerun", "显存不足"), find its incident. Character n-grams need no word boundaries, so Chinese
works; words add precision for English. Each incident is cut into passages (title, each symptom
line, each sentence of the description, and the whole text) and an incident scores the best
cosine of its passages, so a short query such as "显存不足" is not drowned by a long bilingual
description. Vectors are sparse dicts, precomputed once; a query touches only the postings of
its own features.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import re2

from .types import IncidentSpec

# Log furniture that every failure has: level words, bare or generic exception classes, errno
# brackets, traceback headers, paths. Left in, "OSError: [Errno 24] Too many open files" would
# resemble "OSError: [Errno 28] No space left on device" more than its message resembles
# anything. Specific exception classes (OutOfMemoryError, DistBackendError) stay.
# RE2: it runs on the lines of a pasted tail (a path starts after a character that cannot be
# in one; that character goes with the furniture, which becomes a space anyway).
_FURNITURE = re2.compile(
    r"\b(?:ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL|FATAL|NOTICE)\b"
    r"|\[Errno\s*\d+\]"
    r"|Traceback \(most recent call last\):?"
    r"|terminate called after throwing an instance of"
    r"|\b(?:\w+\.)*(?:OS|IO|Runtime|Value|Type|Key|Index|Attribute|Assertion|Lookup|Name"
    r"|System|Environment|Base|CalledProcess|Unicode(?:De|En)code)?(?:Error|Exception)\b"
    r"|(?:^|[^\w/])(?:~|\.{1,2})?/[\w.\-/]+"
    r"|\b\w+(?:/[\w.\-]+){2,}"
)
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[a-z_][a-z0-9_]{2,}")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
# Features in more than this share of the incidents tell them apart too little to be worth
# the postings they would cost at query time; in a large knowledge base, neither do features
# in more than a few dozen incidents (their low IDF adds little to any cosine, and their long
# postings would dominate the query time).
_MAX_DOCUMENT_SHARE = 0.5
_MAX_DOCUMENTS = 48
_QUERY_FEATURES = 80  # of a query, only the heaviest features are looked up
# Character n-grams find "determinize" close to "determinism": a passage counts only when it
# also shares this many telling units with the query (word stems, or Chinese 2-grams).
MIN_SHARED_UNITS = 2
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
    """CJK 2-grams, other character 3-grams and word stems of `text` without its log
    furniture, lower-cased, digits folded. (CJK 3-grams would double the features of Chinese
    text without adding much; 2-grams are the usual unit of Chinese retrieval.)"""
    message = _FURNITURE.sub(" ", text)
    normal = _SPACE.sub(" ", _DIGITS.sub("0", message.lower())).strip()
    counts: Counter[str] = Counter()
    for run in _CJK_RUN.findall(normal):
        counts.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            counts[run] += 1
    padded = f" {_CJK_RUN.sub(' ', normal)} "
    counts.update(padded[i : i + 3] for i in range(len(padded) - 2) if padded[i + 1] != " ")
    counts.update("w:" + word[:_STEM] for word in _WORD.findall(normal) if word not in _STOP_WORDS)
    return counts


@dataclass(frozen=True)
class SimilarityHit:
    incident: int  # index into SimilarityIndex.slugs
    score: float  # cosine, 0..1
    query: int  # index of the query that scored best


class SimilarityIndex:
    """Sparse TF-IDF vectors of the incidents, with an inverted index for queries."""

    def __init__(self, incidents: Sequence[IncidentSpec]):
        self.slugs = tuple(incident.slug for incident in incidents)
        owners: list[int] = []
        passages: list[dict[str, float]] = []
        document_frequency: Counter[str] = Counter()
        for number, incident in enumerate(incidents):
            terms, weighted = _document(incident.title, incident.symptom, incident.description)
            document_frequency.update(terms)
            owners += [number] * len(weighted)
            passages += weighted
        total = max(1, len(incidents))
        self._unknown_idf = math.log(total + 1) + 1.0
        self._idf = {
            feature: math.log((total + 1) / (count + 1)) + 1.0
            for feature, count in document_frequency.items()
        }
        indexed = {
            feature
            for feature, count in document_frequency.items()
            if total < 4 or (count / total <= _MAX_DOCUMENT_SHARE and count <= _MAX_DOCUMENTS)
        }
        self._owners = owners
        self._postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        idf, unknown = self._idf, self._unknown_idf
        for number, tf in enumerate(passages):
            weights = {feature: value * idf.get(feature, unknown) for feature, value in tf.items()}
            norm = math.sqrt(sum(weight * weight for weight in weights.values())) or 1.0
            for feature, weight in weights.items():
                if feature in indexed:
                    self._postings[feature].append((number, weight / norm))

    def _normalised(self, counts: Counter[str]) -> dict[str, float]:
        weights = {
            feature: (1.0 + math.log(count)) * self._idf.get(feature, self._unknown_idf)
            for feature, count in counts.items()
        }
        norm = math.sqrt(sum(weight * weight for weight in weights.values())) or 1.0
        return {feature: weight / norm for feature, weight in weights.items()}

    def score(self, text: str) -> dict[int, float]:
        """Cosine of `text` against every incident that shares a feature with it.

        An incident scores the best cosine of its passages.
        """
        query = self._normalised(features(text))
        # The heaviest features carry the cosine; the light ones would only cost time.
        heaviest = sorted(query.items(), key=lambda item: -item[1])[:_QUERY_FEATURES]
        sums: dict[int, float] = defaultdict(float)
        shared: Counter[int] = Counter()
        for feature, weight in heaviest:
            unit = _is_unit(feature)
            for document, doc_weight in self._postings.get(feature, ()):
                sums[document] += weight * doc_weight
                shared[document] += unit
        best: dict[int, float] = {}
        for document, value in sums.items():
            incident = self._owners[document]
            if shared[document] >= MIN_SHARED_UNITS and value > best.get(incident, 0.0):
                best[incident] = value
        return best

    def best_matches(self, queries: Iterable[str], top: int = 10) -> list[SimilarityHit]:
        """For each incident, its best cosine over `queries`; the `top` highest, best first."""
        best: dict[int, SimilarityHit] = {}
        for number, query in enumerate(queries):
            for incident, value in self.score(query).items():
                current = best.get(incident)
                if current is None or value > current.score:
                    best[incident] = SimilarityHit(incident, min(1.0, value), number)
        return sorted(best.values(), key=lambda hit: -hit.score)[:top]


def _is_unit(feature: str) -> bool:
    """A word stem, or a Chinese 2-gram: what "real content overlap" is counted in."""
    return feature.startswith("w:") or (
        len(feature) == 2 and _CJK_RUN.fullmatch(feature) is not None
    )


@functools.lru_cache(maxsize=50_000)
def _document(
    title: str, symptom: str, description: str
) -> tuple[frozenset[str], tuple[dict[str, float], ...]]:
    """An incident's terms and each passage's term weights (1 + log count), kept across
    rebuilds of the index: a change to the book costs what changed, not the whole book."""
    whole = f"{title}\n{symptom}\n{description}"
    passages = _passages(title, symptom, description, whole)
    weighted = tuple(
        {feature: 1.0 + math.log(count) for feature, count in features(passage).items()}
        for passage in passages
    )
    return frozenset(features(whole)), weighted


def _passages(title: str, symptom: str, description: str, whole: str) -> list[str]:
    pieces = [title, *symptom.splitlines()]
    pieces += _SENTENCE_END.split(description)
    kept = [piece.strip() for piece in pieces if len(piece.strip()) >= _MIN_PASSAGE_CHARS]
    return [*dict.fromkeys(kept), whole]
