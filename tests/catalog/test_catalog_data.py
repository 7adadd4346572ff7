"""The shipped starter knowledge base (incidents/catalog/*.toml) is complete and sound.

Plain pytest, no database: `.venv/bin/pytest tests/catalog -p no:django`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import re2

from common.choices import Severity
from common.vocabulary import DISCIPLINES, LANGUAGES, STAGES
from incidents.catalog import CATALOG_DIR, CatalogIncident, load_catalog
from incidents.logmatch import check_counter
from incidents.logmatch.benign import LineCorpus
from incidents.models.incident import MAX_TAGS, Incident, Signature, Tag

REPO = Path(__file__).resolve().parents[2]
BENIGN_DIR = REPO / "incidents" / "logmatch" / "benign"

# slug -> (stage, discipline) of the first 24 (../catalog.md): a stable interface. Slugs are in
# URLs; stage and discipline drive the filters and which runbooks an incident links to, so a
# change here must be deliberate. Incidents added since are checked by the rules below.
EXPECTED = {
    "gpu-oom": ("train", "tiny-sample"),
    "host-oom": ("train", "tiny-sample"),
    "disk-full": ("data", "validate-first"),
    "collective-timeout": ("train", "tiny-sample"),
    "nan-loss": ("train", "validate-first"),
    "gradient-overflow": ("train", "tiny-sample"),
    "loss-divergence": ("train", "tiny-sample"),
    "config-dimension-mismatch": ("train", "version-lock"),
    "feature-config-drift": ("data", "version-lock"),
    "data-validation-failure": ("data", "validate-first"),
    "missing-artifact": ("data", "reconcile"),
    "shared-output-overwrite": ("train", "reconcile"),
    "align-retry-flood": ("train", "validate-first"),
    "queue-job-died": ("train", "validate-first"),
    "build-failure": ("build", "version-lock"),
    "version-mismatch": ("serve", "version-lock"),
    "kv-cache-exhausted": ("serve", "version-lock"),
    "high-first-token-latency": ("serve", "validate-first"),
    "concurrency-crash": ("serve", "tiny-sample"),
    "low-accelerator-utilization": ("serve", "version-lock"),
    "repetitive-generation": ("serve", "validate-first"),
    "slow-training": ("train", "tiny-sample"),
    "nic-packet-loss": ("train", "validate-first"),
    "label-contamination": ("data", "validate-first"),
}

# Signatures that may legitimately match another incident's examples or symptom, as
# {(owner slug, signature key): {other slugs whose examples it may match}}. Keep this list
# short and explained: every entry is a place where the ranking, not the signature, decides.
# The OOM family (gpu-oom / host-oom / kv-cache-exhausted), the network family
# (collective-timeout / nic-packet-loss / queue-job-died) and the toolchain family
# (build-failure / version-mismatch / missing-artifact vs disk-full) are kept disjoint.
ALLOWED_OVERLAPS: dict[tuple[str, str], set[str]] = {
    # CUDA error 700 (and the other kernel faults: 716, 719, 715) is the same line in a serving
    # engine under load and in a training step: the tail's stage decides between the two.
    ("concurrency-crash", "illegal-memory-access"): {"illegal-memory-access-training"},
    ("concurrency-crash", "serving-kernel-fault"): {"illegal-memory-access-training"},
    ("illegal-memory-access-training", "illegal-address"): {"concurrency-crash"},
    ("illegal-memory-access-training", "launch-failure"): {"concurrency-crash"},
    # ENOSPC on /dev/shm reads like a full disk; the shm signatures name /dev/shm, torch_ files
    # and NCCL's segment, which a counter-pattern on disk-full rules out.
    ("disk-full", "enospc-text"): {"shm-too-small"},
    ("disk-full", "errno-28"): {"shm-too-small"},
    # Triton quotes the error its Python backend raised while loading: a library attribute
    # gone after an upgrade is both a load failure and API drift; the tail's lines decide.
    ("python-api-drift", "module-attribute-missing"): {"triton-model-load-failed"},
    # …and the ONNX Runtime error it quotes when the model file is no ONNX at all (a git-lfs
    # pointer, a cut download): the artifact is the cause, Triton's refusal the consequence.
    ("missing-artifact", "onnx-model-unparsable"): {"triton-model-load-failed"},
    # llama.cpp's tensor of the wrong shape is a broken export as often as a variant of the
    # architecture the engine does not know: both incidents claim it, each as a lead only.
    ("gguf-file-invalid", "gguf-tensor-wrong-shape"): {"unsupported-architecture"},
    ("unsupported-architecture", "gguf-tensor-shape-unknown-variant"): {"gguf-file-invalid"},
    # NCCL's "unhandled system error" is a connection never set up as often as a peer lost in
    # the middle of a run: both incidents claim it, each as a lead only; raised by the job's
    # first collective, the mid-run reading is ruled out.
    ("collective-timeout", "nccl-system-error-mid-run"): {"nccl-network-setup"},
    ("nccl-network-setup", "nccl-unhandled-system-error"): {"collective-timeout"},
    # So is its "remote process exited or there was a network error" (NCCL result 6).
    ("collective-timeout", "nccl-system-remote-error"): {"nccl-network-setup"},
    ("nccl-network-setup", "nccl-remote-error-at-first-collective"): {"collective-timeout"},
}

BENIGN_MAX_RATIO = 0.01
MIN_BENIGN_LINES = 3000
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# a sentence boundary inside the text: ". X", "! X", "? X" (English) or 。！？ followed by more text
EN_BOUNDARY = re.compile(r"[.!?]\s+(?=[A-Z])")
ZH_BOUNDARY = re.compile(r"[。！？](?=.)")


def _options() -> re2.Options:
    opts = re2.Options()
    opts.log_errors = False
    return opts


@pytest.fixture(scope="module")
def catalog() -> list[CatalogIncident]:
    return load_catalog()


@pytest.fixture(scope="module")
def compiled(catalog) -> dict[tuple[str, str], object]:
    opts = _options()
    return {
        (incident.slug, sig.key): re2.compile(sig.pattern, opts)
        for incident in catalog
        for sig in incident.signatures
    }


@pytest.fixture(scope="module")
def benign_lines() -> list[tuple[str, int, str]]:
    lines = []
    for path in sorted(BENIGN_DIR.glob("*.log")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if text.strip():
                lines.append((path.name, number, text))
    return lines


def test_it_has_every_catalog_slug_once_with_its_stage_and_discipline(catalog):
    counts = Counter(incident.slug for incident in catalog)
    assert [slug for slug, n in counts.items() if n > 1] == []
    assert set(EXPECTED) <= set(counts)
    for incident in catalog:
        if incident.slug in EXPECTED:
            assert (incident.stage, incident.discipline) == EXPECTED[incident.slug], incident.slug


def test_it_uses_known_stages_disciplines_severities_and_lowercase_tags(catalog):
    for incident in catalog:
        assert incident.stage in STAGES, incident.slug
        assert incident.discipline in DISCIPLINES, incident.slug
        assert incident.severity in Severity.values, incident.slug
        assert 0 < len(incident.tags) <= MAX_TAGS, incident.slug  # what seeding accepts
        assert all(tag == tag.lower() and tag.strip() == tag for tag in incident.tags), (
            incident.slug
        )
        assert any(CJK.search(tag) for tag in incident.tags), f"{incident.slug}: no Chinese tag"


@pytest.mark.parametrize("language", LANGUAGES)
def test_it_has_every_column_in_both_languages(catalog, language):
    for incident in catalog:
        text = incident.texts.get(language)
        assert text is not None, f"{incident.slug}: no [{language}] table"
        for column in ("title", "symptom", "root_cause", "remedy", "prevention"):
            assert getattr(text, column).strip(), f"{incident.slug} [{language}] {column} is empty"
        assert len(text.title) <= 120, f"{incident.slug} [{language}] title too long"
        assert "\n" not in text.symptom.strip(), f"{incident.slug} [{language}] symptom is one line"


def _limit(model, field: str) -> int | None:
    return model._meta.get_field(field).max_length


def test_every_text_fits_the_column_it_is_seeded_into(catalog):
    """Seeding saves each text through the model's validation: a root cause one character
    over its column's limit stops `seed_catalog`, and with it the app's start."""
    columns = ("title", "symptom", "root_cause", "remedy", "prevention", "environment")
    for incident in catalog:
        for language, text in incident.texts.items():
            for column in columns:
                limit = _limit(Incident, column)
                assert len(getattr(text, column)) <= limit, (
                    f"{incident.slug} [{language}] {column}: {len(getattr(text, column))} > {limit}"
                )
        assert all(len(tag) <= _limit(Tag, "name") for tag in incident.tags), incident.slug
        assert len(", ".join(incident.tags)) <= _limit(Incident, "tag_list"), incident.slug
        for signature in incident.signatures:
            where = f"{incident.slug}:{signature.key}"
            assert len(signature.pattern) <= _limit(Signature, "pattern"), where
            assert len(signature.note) <= _limit(Signature, "note"), where
            assert len(signature.unless) <= _limit(Signature, "unless"), where
            assert len("\n".join(signature.examples)) <= _limit(Signature, "examples"), where


def test_it_writes_the_chinese_texts_in_chinese(catalog):
    for incident in catalog:
        zh = incident.texts["zh-hans"]
        # the symptom may stay a verbatim English log line; everything else is Chinese prose
        for column in ("title", "root_cause", "remedy", "prevention"):
            assert CJK.search(getattr(zh, column)), f"{incident.slug} zh-hans {column} has no CJK"
        assert zh.root_cause != incident.texts["en"].root_cause


def test_it_states_the_root_cause_in_one_sentence(catalog):
    for incident in catalog:
        en = incident.texts["en"].root_cause.strip()
        zh = incident.texts["zh-hans"].root_cause.strip()
        assert not EN_BOUNDARY.search(en), f"{incident.slug}: en root_cause has several sentences"
        assert not ZH_BOUNDARY.search(zh), (
            f"{incident.slug}: zh-hans root_cause has several sentences"
        )
        assert "\n" not in en and "\n" not in zh, incident.slug


def test_every_incident_has_signatures_with_unique_keys_and_examples(catalog):
    for incident in catalog:
        assert len(incident.signatures) >= 2, f"{incident.slug}: too few signatures"
        keys = [sig.key for sig in incident.signatures]
        assert len(keys) == len(set(keys)), f"{incident.slug}: duplicate signature keys"
        for sig in incident.signatures:
            assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", sig.key), sig.key
            assert sig.note.strip(), f"{incident.slug}/{sig.key}: no note"
            assert sig.examples, f"{incident.slug}/{sig.key}: no example"


def test_every_signature_compiles_in_re2_and_does_not_match_empty(catalog):
    opts = _options()
    for incident in catalog:
        for sig in incident.signatures:
            try:
                pattern = re2.compile(sig.pattern, opts)
            except re2.error as exc:  # pragma: no cover - the message is the point
                pytest.fail(f"{incident.slug}/{sig.key} does not compile in RE2: {exc}")
            assert pattern.search("") is None, f"{incident.slug}/{sig.key} matches the empty string"


def test_every_signature_matches_its_own_examples(catalog, compiled):
    misses = [
        f"{incident.slug}/{sig.key}: {example!r}"
        for incident in catalog
        for sig in incident.signatures
        for example in sig.examples
        if compiled[(incident.slug, sig.key)].search(example) is None
    ]
    assert misses == []


def test_no_signature_fires_on_the_benign_corpus(catalog, benign_lines):
    assert len(benign_lines) >= MIN_BENIGN_LINES, "the benign reference corpus is too small"
    total = len(benign_lines)
    where: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for name, number, text in benign_lines:
        where[text].append((name, number))
    corpus = LineCorpus([text for _, _, text in benign_lines])
    signatures = [(incident.slug, sig) for incident in catalog for sig in incident.signatures]
    corpus.scan(sig.pattern for _, sig in signatures)  # every pattern in one pass
    offenders = []
    for slug, sig in signatures:
        key, fired = sig.key, corpus.fired(sig.pattern)
        hits = [(*place, text) for text in dict.fromkeys(fired) for place in where[text]]
        if len(hits) / total > BENIGN_MAX_RATIO:
            offenders.append((len(hits), slug, key, hits[:3]))
    offenders.sort(reverse=True)
    report = "\n".join(
        f"{count} / {total} benign lines: {slug}/{key}\n"
        + "\n".join(f"    {name}:{number}: {text[:160]}" for name, number, text in sample)
        for count, slug, key, sample in offenders
    )
    assert not offenders, "signatures firing on more than 1% of benign lines:\n" + report


@pytest.fixture(scope="module")
def counters(catalog) -> dict[tuple[str, str], object]:
    return {
        (incident.slug, sig.key): re2.compile(sig.unless, _options())
        for incident in catalog
        for sig in incident.signatures
        if sig.unless
    }


def test_every_counter_pattern_is_usable_and_rules_out_none_of_its_own_examples(catalog):
    problems = [
        f"{incident.slug}/{sig.key}: {problem}"
        for incident in catalog
        for sig in incident.signatures
        for problem in check_counter(sig.unless, examples=sig.examples)
    ]
    assert problems == []


def test_no_signature_matches_another_incidents_examples_or_symptom(catalog, compiled, counters):
    """Each example and symptom taken as a tail of its own line; a signature that its
    counter-pattern rules out there does not count."""
    unexpected = []
    for (owner, key), pattern in compiled.items():
        allowed = ALLOWED_OVERLAPS.get((owner, key), set())
        counter = counters.get((owner, key))
        for incident in catalog:
            if incident.slug == owner or incident.slug in allowed:
                continue
            texts = [ex for sig in incident.signatures for ex in sig.examples]
            texts += [incident.texts[lang].symptom for lang in LANGUAGES]
            for text in texts:
                if pattern.search(text) and not (counter and counter.search(text)):
                    unexpected.append(f"{owner}/{key} -> {incident.slug}: {text[:120]!r}")
    assert unexpected == [], "\n".join(unexpected)


def test_the_allowed_overlaps_are_still_needed(catalog, compiled):
    for (owner, key), others in ALLOWED_OVERLAPS.items():
        pattern = compiled[(owner, key)]
        for other in others:
            incident = next(i for i in catalog if i.slug == other)
            texts = [ex for sig in incident.signatures for ex in sig.examples]
            assert any(pattern.search(t) for t in texts), f"stale overlap {owner}/{key} -> {other}"


def test_a_slug_or_signature_key_given_twice_is_refused(tmp_path):
    shipped = (CATALOG_DIR / "incidents.toml").read_text(encoding="utf-8")
    (tmp_path / "incidents.toml").write_text(shipped, encoding="utf-8")
    (tmp_path / "again.toml").write_text(shipped, encoding="utf-8")
    with pytest.raises(ValueError, match="twice"):
        load_catalog(tmp_path)
