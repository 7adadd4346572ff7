"""Negative evidence: a signature names what rules it out, and a tail holding that is not
counted for it (a `No space left on device` on /dev/shm beside a `Bus error` is shared
memory, not a full disk)."""

from __future__ import annotations

from incidents.logmatch import IncidentSpec, SignatureSpec, analyze, build_index, check_counter

INCIDENTS = [
    IncidentSpec("disk-full", "Disk full", "data", "", "The experiment disk is full."),
    IncidentSpec("shm-too-small", "Shared memory too small", "train", "", "/dev/shm is small."),
]
DISK = SignatureSpec("disk", "disk-full", r"No space left on device", unless=r"/dev/shm|Bus error")
SHM = SignatureSpec("shm", "shm-too-small", r"(?i)unexpected bus error encountered in worker")

FULL_DISK = "\n".join(
    [
        "INFO step 1200 saving checkpoint to /data/exp/ckpt-1200",
        "OSError: [Errno 28] No space left on device: '/data/exp/ckpt-1200/model.pt'",
    ]
)
SMALL_SHM = "\n".join(
    [
        "ERROR: Unexpected bus error encountered in worker. This might be caused by "
        "insufficient shared memory (shm).",
        "OSError: [Errno 28] No space left on device: '/dev/shm/torch_2141_2397431'",
    ]
)


def _first(tail: str, signatures=(DISK, SHM)) -> str | None:
    report = analyze(tail, build_index(INCIDENTS, list(signatures)))
    return report.suggestions[0].slug if report.suggestions else None


def _slugs(tail: str, signatures=(DISK, SHM)) -> list[str]:
    report = analyze(tail, build_index(INCIDENTS, list(signatures)))
    return [suggestion.slug for suggestion in report.suggestions]


def test_a_signature_counts_where_nothing_rules_it_out():
    assert _first(FULL_DISK) == "disk-full"


def test_a_line_anywhere_in_the_tail_rules_the_signature_out():
    assert _first(SMALL_SHM) == "shm-too-small"
    assert "disk-full" not in _slugs(SMALL_SHM)


def test_without_the_counter_pattern_the_full_disk_would_have_been_offered():
    plain = SignatureSpec("disk", "disk-full", DISK.pattern)
    assert "disk-full" in _slugs(SMALL_SHM, (plain, SHM))


def test_the_counter_pattern_is_multi_line_anchored_per_line():
    anchored = SignatureSpec("disk", "disk-full", DISK.pattern, unless=r"^Bus error$")
    assert _first(FULL_DISK + "\nBus error", (anchored,)) is None
    assert _first(FULL_DISK + "\nnot a Bus error here", (anchored,)) == "disk-full"


def test_an_unusable_counter_pattern_keeps_the_signature_out_of_the_index_with_the_reason():
    broken = SignatureSpec("broken", "disk-full", DISK.pattern, unless=r"(shm")
    empty = SignatureSpec("empty", "disk-full", DISK.pattern, unless=r"x*")
    index = build_index(INCIDENTS, [broken, empty])
    assert "counter-pattern does not compile" in index.rejected["broken"]
    assert "counter-pattern matches the empty string" in index.rejected["empty"]
    assert index.signatures.signatures == ()


def test_check_counter_explains_what_would_make_it_useless():
    examples = ["OSError: [Errno 28] No space left on device: '/data/x'"]
    assert check_counter("", examples=examples) == []
    assert check_counter(r"/dev/shm", examples=examples) == []
    assert check_counter(r"(shm", examples=examples)[0].startswith(
        "The counter-pattern does not compile in RE2"
    )
    assert "empty string" in check_counter(r"(?:shm)?", examples=examples)[0]
    assert check_counter(r"/data/", examples=examples) == [
        "The counter-pattern rules out its own example 1: "
        "\"OSError: [Errno 28] No space left on device: '/data/x'\"."
    ]


def test_a_symptom_line_is_ruled_out_by_what_rules_out_the_signatures_that_recognise_it():
    with_symptom = [
        IncidentSpec(
            "disk-full",
            "Disk full",
            "data",
            "OSError: [Errno 28] No space left on device: '/data/exp/model.pt'",
            "The experiment disk is full.",
        ),
        INCIDENTS[1],
    ]
    index = build_index(with_symptom, [DISK, SHM])

    shm = analyze(SMALL_SHM, index).suggestions
    disk = analyze(FULL_DISK, index).suggestions

    assert shm[0].slug == "shm-too-small"
    assert not any(s.confident for s in shm if s.slug == "disk-full")  # similar text at most
    assert (disk[0].slug, disk[0].confident) == ("disk-full", True)


def test_a_ruled_out_line_is_no_evidence_by_resemblance_either():
    """The shm tail's ENOSPC line reads much like the full disk's own text; once the counter-
    pattern has ruled the disk signature out there, that resemblance does not bring it back."""
    incidents = [
        IncidentSpec(
            "disk-full",
            "Disk full",
            "data",
            "OSError: [Errno 28] No space left on device: '/dev/shm/torch_2141_2397431'",
            "The experiment disk is full.",
        ),
        INCIDENTS[1],
    ]
    report = analyze(SMALL_SHM, build_index(incidents, [DISK, SHM]))
    assert report.suggestions[0].slug == "shm-too-small"
    assert "disk-full" not in [suggestion.slug for suggestion in report.suggestions]
