"""Signatures: validated before they are saved, compiled into one RE2 set, and symptom lines
acting as signatures by themselves."""

from __future__ import annotations

import pytest
import re2

from incidents.catalog import engine_specs
from incidents.logmatch import (
    IncidentSpec,
    LineCorpus,
    SignatureSpec,
    analyze,
    benign_lines,
    build_index,
    check_signature,
)

from .conftest import SMALL_INCIDENTS, SMALL_SIGNATURES

BENIGN = LineCorpus(
    [
        "[2024-05-01 12:00:00,001] [INFO] step=1200, loss=1.9213, lr=3.0e-04",
        "INFO: Started server process [4242]",
        "NCCL INFO Channel 00/02 : 0 1 2 3 4 5 6 7",
        "LOG (nnet3-chain-train[5.5]:main():nnet3-chain-train.cc:98) Wrote raw model",
    ]
    * 50
)


def test_it_accepts_a_good_signature():
    problems = check_signature(
        r"No space left on device",
        examples=["OSError: [Errno 28] No space left on device: '/data/exp'"],
        benign=BENIGN,
    )

    assert problems == []


def test_it_explains_a_pattern_that_does_not_compile_with_re2s_reason():
    problems = check_signature(r"(?<=CUDA )out of memory", examples=["x"], benign=BENIGN)

    assert len(problems) == 1
    assert problems[0].startswith("Does not compile in RE2:")
    assert "(?<=" in problems[0]


def test_it_refuses_a_pattern_that_matches_the_empty_string():
    problems = check_signature(r".*", examples=["anything"], benign=BENIGN)

    assert any("empty string" in problem for problem in problems)


def test_it_wants_examples():
    problems = check_signature(r"No space left on device", examples=[], benign=BENIGN)

    assert problems == ["Has no examples: add at least one real log line it must match."]


def test_it_says_when_no_example_matches():
    problems = check_signature(
        r"No space left on device", examples=["disk quota exceeded"], benign=BENIGN
    )

    assert problems == ["Matches none of its 1 example(s)."]


def test_it_names_the_example_it_misses():
    problems = check_signature(
        r"No space left on device",
        examples=["No space left on device", "disk quota exceeded"],
        benign=BENIGN,
    )

    assert problems == ["Does not match its example 2: 'disk quota exceeded'."]


def test_it_says_how_many_benign_lines_a_signature_fires_on():
    problems = check_signature(r"step=\d+", examples=["step=12"], benign=BENIGN)

    assert len(problems) == 1
    assert "Fires on 50 of 200 lines of healthy logs (25.0%; the limit is 1.0%)" in problems[0]


def test_it_refuses_a_signature_that_matches_a_generic_line():
    problems = check_signature(r"Traceback", examples=["Traceback (most"], benign=BENIGN)

    assert any("generic line" in problem for problem in problems)


def test_the_benign_corpus_is_read_once():
    assert benign_lines() is benign_lines()


def test_a_scan_of_other_lines_never_reuses_the_last_tuples_preparation():
    index = build_index(SMALL_INCIDENTS, SMALL_SIGNATURES)
    first = ("OSError: [Errno 28] No space left on device",)
    assert index.signatures.scan(first)
    assert index.signatures.scan(first) == index.signatures.scan(first)
    healthy = ("step 10 loss 1.23", "saved checkpoint")
    assert index.signatures.scan(healthy) == []
    changing = list(first)
    assert index.signatures.scan(changing)
    changing[:] = healthy
    assert index.signatures.scan(changing) == []


def test_build_index_skips_bad_patterns_and_says_why():
    signatures = [
        *SMALL_SIGNATURES,
        SignatureSpec("lookbehind", "gpu-oom", r"(?<=x)y"),
        SignatureSpec("everything", "gpu-oom", r".*"),
        SignatureSpec("optional", "gpu-oom", r"(?:oom)?"),
        SignatureSpec("unclosed", "gpu-oom", r"(out of memory"),
        SignatureSpec("orphan", "no-such-incident", r"orphan"),
        SignatureSpec("huge", "gpu-oom", r"a{1001}"),
    ]

    index = build_index(SMALL_INCIDENTS, signatures)

    assert index.rejected["lookbehind"].startswith("does not compile in RE2: invalid perl operator")
    assert index.rejected["unclosed"].startswith("does not compile in RE2: missing )")
    assert index.rejected["huge"].startswith("does not compile in RE2:")
    assert "empty string" in index.rejected["everything"]
    assert "empty string" in index.rejected["optional"]
    assert "unknown incident" in index.rejected["orphan"]
    assert not any(spec.key in index.rejected for spec in SMALL_SIGNATURES)


def test_a_catastrophic_pattern_is_harmless():
    signatures = [SignatureSpec("nested", "host-oom", r"(x+x+)+y"), *SMALL_SIGNATURES]
    index = build_index(SMALL_INCIDENTS, signatures)
    hostile = "\n".join(["x" * 4000] * 200 + ["(" * 3000 + "x"])

    report = analyze(hostile, index)

    assert "nested" not in index.rejected
    assert report.line_count == 201


def test_a_symptom_line_matches_with_other_numbers():
    incident = IncidentSpec(
        slug="ckpt-shard-missing",
        title="Checkpoint shard missing",
        stage="serve",
        symptom="FileNotFoundError: shard model-00003-of-00008.safetensors not found in "
        "/models/llama-70b (expected 8 shards, found 7)",
    )
    index = build_index([incident], [])
    log = (
        "INFO loading weights\n"
        "FileNotFoundError: shard model-00011-of-00030.safetensors not found in "
        "/mnt/ckpt/qwen-72b (expected 30 shards, found 29)\n"
    )

    report = analyze(log, index)

    top = report.suggestions[0]
    assert top.slug == "ckpt-shard-missing"
    assert top.confident
    assert top.evidence[0].kind == "symptom"
    assert top.evidence[0].line == 2


def test_a_vague_symptom_line_is_not_a_signature():
    incident = IncidentSpec(slug="vague", title="Vague", stage=None, symptom="Killed")

    index = build_index([incident], [])

    assert "too short" in index.rejected["symptom:vague:1"]


@pytest.mark.slow
def test_ten_thousand_signatures_compile_into_a_few_filters():
    incidents = [
        IncidentSpec(f"incident-{n}", f"Incident {n}", "train", f"component{n} failed badly")
        for n in range(1000)
    ]
    signatures = [
        SignatureSpec(str(n), f"incident-{n % 1000}", rf"component{n}\b.*(?:failed|timed out) \d+")
        for n in range(10_000)
    ]

    index = build_index(incidents, signatures)
    report = analyze("ERROR component4321 timed out 30 times", index)

    assert index.signatures.set_count == 3  # of 4,000 patterns each
    assert report.suggestions[0].slug == "incident-321"
    assert report.suggestions[0].evidence[0].signature == "4321"


def _naive_scan(signature_set, lines):
    """Every signature against every distinct line, one RE2 search each; a signature whose
    counter-pattern matches any of the lines is ruled out, as in a tail."""
    import re2

    where: dict[str, list[int]] = {}
    for number, text in enumerate(lines):
        if text:
            where.setdefault(text, []).append(number)
    compiled = [
        (signature, re2.compile(signature.pattern))
        for signature in signature_set.signatures
        if not (signature.unless and any(re2.compile(signature.unless).search(t) for t in where))
    ]
    return {
        (signature.key, text, tuple(numbers))
        for text, numbers in where.items()
        for signature, regex in compiled
        if regex.search(text)
    }


SCAN_LINES = [
    "OSError: [Errno 28] No space left on device",
    "",
    "step 1 ok",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "OSError: [Errno 28] No space left on device",
    "显存不足：CUDA out of memory 第3张卡",
    "two\nlines: No space left on device",
    "step 2 ok",
    "OSError: [Errno 28] No space left on device",
]


def test_scan_finds_what_a_search_per_signature_and_line_finds():
    index = build_index(SMALL_INCIDENTS, SMALL_SIGNATURES)
    hits = index.signatures.scan(SCAN_LINES)
    found = {(hit.signature.key, hit.text, hit.lines) for hit in hits}
    assert found == _naive_scan(index.signatures, SCAN_LINES)
    assert len(found) == len(hits) == 5  # one hit per signature and distinct line
    assert ("5", "two\nlines: No space left on device", (6,)) in found
    assert index.signatures.scan(["", ""]) == []


def test_scan_over_several_filters_and_literal_sets_finds_the_same(monkeypatch):
    from incidents.logmatch import prefilter, signatures

    monkeypatch.setattr(signatures, "FILTER_CHUNK", 2)
    monkeypatch.setattr(prefilter, "ATOMS_PER_SET", 2)
    index = build_index(SMALL_INCIDENTS, SMALL_SIGNATURES)
    assert index.signatures.set_count > 1
    hits = index.signatures.scan(SCAN_LINES)
    found = {(hit.signature.key, hit.text, hit.lines) for hit in hits}
    assert found == _naive_scan(index.signatures, SCAN_LINES)


def test_a_match_that_crosses_a_line_end_counts_on_no_line():
    """Lines are tried a batch at a time, joined by newlines: a pattern whose match would run
    from one line into the next (`\\s`, `[^:]`) is tried on each line alone, and a pattern
    that matches many lines of a batch is placed on each of them."""
    signatures = (
        SignatureSpec("across", "disk-full", r"device\s+full"),
        SignatureSpec("class", "disk-full", r"quota[^:]*exceeded"),
        SignatureSpec("many", "gpu-oom", r"(?i)cuda out of memory"),
    )
    lines = [
        "write failed: device",
        "full of old checkpoints",
        "quota of the project",
        "exceeded: 0 GPUs",
        *[f"rank {n}: CUDA out of memory" for n in range(150)],
        "tmpfs device  full",
        "quota exceeded",
    ]
    index = build_index(SMALL_INCIDENTS, signatures)
    hits = index.signatures.scan(lines)
    found = {(hit.signature.key, hit.text, hit.lines) for hit in hits}
    assert found == _naive_scan(index.signatures, lines)
    assert {hit.text for hit in hits if hit.signature.key != "many"} == {
        "tmpfs device  full",
        "quota exceeded",
    }
    assert sum(hit.signature.key == "many" for hit in hits) == 150


@pytest.mark.slow
def test_the_filters_find_what_a_search_per_signature_finds():
    """The filters find exactly what one RE2 search per signature and line finds, on the
    healthy corpus, every case tail and lines dense in the signatures' own words."""
    from pathlib import Path

    from bench.bench_engine import knowledge

    index = build_index(*knowledge(800))
    cases = Path(__file__).with_name("cases")
    lines = [*benign_lines()[::40]]
    for case in sorted(cases.glob("*.log")):
        lines += case.read_text(errors="replace").splitlines()[-8:]
    words = sorted(
        {w for s in index.signatures.signatures for w in s.pattern.split() if w.isalpha()}
    )
    lines += [" ".join(words[n : n + 60]) for n in range(0, len(words), 60)]
    found = {(hit.signature.key, hit.text, hit.lines) for hit in index.signatures.scan(lines)}
    assert found == _naive_scan(index.signatures, lines)


@pytest.mark.slow
def test_a_corpus_tries_many_patterns_at_once_with_the_answers_of_one_at_a_time():
    catalog_patterns = [spec.pattern for spec in engine_specs()[1]]
    patterns = [*catalog_patterns, r"step=\d+", r"(?i)info", r"(?<=x)y"]
    corpus = LineCorpus(benign_lines())

    corpus.scan(patterns)

    for pattern in patterns:
        try:
            compiled = re2.compile(pattern)
        except re2.error:
            assert corpus.fired(pattern) == ()
            continue
        expected = tuple(line for line in corpus.lines if compiled.search(line))
        assert corpus.fired(pattern) == expected, pattern
    assert len(corpus.fired(r"(?i)info")) > 1000  # repeats count, as the share does
