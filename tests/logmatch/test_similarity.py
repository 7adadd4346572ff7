"""Similarity fallback: plain descriptions, Chinese text, and incidents without signatures."""

from __future__ import annotations

import pytest

from incidents.logmatch import IncidentSpec, analyze, build_index
from incidents.logmatch.generic import reports_success
from incidents.logmatch.similarity import SimilarityIndex, features

from .conftest import SMALL_INCIDENTS


@pytest.mark.parametrize(
    ("description", "slug"),
    [
        ("显存不足", "gpu-oom"),
        ("训练时显存不足，降低批大小后恢复", "gpu-oom"),
        ("WER up 2 points after a rerun", "feature-config-drift"),
        ("loss goes NaN after some steps", "nan-loss"),
        ("the disk is full, no space left", "disk-full"),
        ("主机内存耗尽", "host-oom"),
    ],
)
def test_a_plain_description_finds_its_incident(small_index, description, slug):
    report = analyze(description, small_index)

    assert report.suggestions[0].slug == slug


def test_an_incident_without_signatures_matches_by_its_text():
    incidents = [
        *SMALL_INCIDENTS,
        IncidentSpec(
            slug="tokenizer-no-pad",
            title="Tokenizer has no padding token",
            stage="serve",
            symptom="ValueError: Asking to pad but the tokenizer does not have a padding token.",
            description="Set tokenizer.pad_token = tokenizer.eos_token before batching.",
        ),
    ]
    index = build_index(incidents, [])
    log = (
        "Traceback (most recent call last):\n"
        '  File "serve.py", line 10, in <module>\n'
        "ValueError: Asking to pad, but the tokenizer has no padding token. Please select a "
        "token to use as `pad_token`."
    )

    report = analyze(log, index)

    assert report.suggestions[0].slug == "tokenizer-no-pad"


def test_unrelated_text_gets_no_confident_suggestion(small_index):
    report = analyze("the weather in Lisbon is sunny today", small_index)

    assert not report.confident


def test_similar_text_loses_to_a_signature_hit(small_index):
    log = (
        "WARNING: loss scale looks odd, WER might go up after a rerun\n"
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB"
    )

    report = analyze(log, small_index)

    assert report.suggestions[0].slug == "gpu-oom"
    assert report.suggestions[0].evidence[0].kind in ("signature", "symptom")


def test_a_passage_needs_real_content_overlap_not_only_letters_in_common():
    index = SimilarityIndex(
        [
            IncidentSpec("nondeterminism", "Nondeterministic results", "train", "", ""),
            IncidentSpec("disk", "Checkpoint directory fills the disk", "data", "", ""),
        ]
    )
    # "determinize" shares n-grams with "nondeterministic", and no word.
    assert index.score("make[3]: *** [determinize.lo] Error 1") == {}
    assert index.best_matches(["checkpoint directory filled up the whole disk"])[0].slug == "disk"


def test_an_exception_class_named_in_camel_case_counts_as_its_words():
    """`audioread.NoBackendError` says "no backend" as plainly as a sentence would."""
    assert {"w:backe", "w:excee", "w:conte"} <= set(
        features("audioread.NoBackendError ContextWindowExceededError")
    )
    assert "w:facto" not in features("GlooDeviceFactory::makeUVDevice()")  # no exception
    index = SimilarityIndex(
        [
            IncidentSpec("backend", "No audio backend can decode the file", "data", "", ""),
            IncidentSpec("disk", "Checkpoint directory fills the disk", "data", "", ""),
        ]
    )
    assert list(index.score("audioread.NoBackendError")) == ["backend"]


def test_words_every_failure_log_is_full_of_are_not_content():
    index = SimilarityIndex(
        [IncidentSpec("perm", "Cannot open file: error while running", "data", "", "")]
    )
    assert index.score("PermissionError: cannot open file, error while running") == {}


def test_one_rare_shared_word_is_a_faint_likeness_and_two_common_ones_are_not_needed():
    """ "sox: not found" shares one word with the book, and only one incident has it: that word
    tells more than two common ones, so the incident is found, at half its cosine. A word many
    incidents share still needs a second."""
    incidents = [
        IncidentSpec("audio", "Audio backend missing: sox or ffmpeg not installed", "data", "", ""),
        *(
            IncidentSpec(f"other{n}", f"Checkpoint {n} directory is missing files", "data", "", "")
            for n in range(6)
        ),
    ]
    index = SimilarityIndex(incidents)

    found = index.score("/bin/sh: 1: sox: not found")
    assert list(found) == ["audio"]
    whole = index.score("sox backend missing")["audio"]
    assert found["audio"] < whole
    assert index.score("directory: not found") == {}


def test_a_log_without_errors_is_not_likened_by_the_steps_that_went_well(catalog_index):
    step = "utils/validate_data_dir.sh: {} data-directory data/train"
    log = "stage 1: Feature Generation\n{}\nusage: make_fbank.sh <data-dir>\n"

    after_success = analyze(log.format(step.format("Successfully validated")), catalog_index)
    after_refusal = analyze(log.format(step.format("refused")), catalog_index)

    def cited(report):
        return {e.line for s in report.suggestions for e in s.evidence}

    assert "data-validation-failure" in [s.slug for s in after_refusal.suggestions]
    assert 2 in cited(after_refusal)
    assert 2 not in cited(after_success)


@pytest.mark.parametrize(
    ("line", "went_well"),
    [
        ("utils/validate_data_dir.sh: Successfully validated data-directory data/train", True),
        ("Build succeeded.", True),
        ("数据校验成功", True),
        ("  × Getting requirements to build wheel did not run successfully.", False),
        ("Validation failed: feats.scp not validated successfully", False),
        ("数据校验失败", False),
        ("stage 1: Feature Generation", False),
    ],
)
def test_a_line_that_reports_a_step_went_well(line, went_well):
    assert reports_success(line) is went_well


def test_an_error_code_the_incident_names_is_content_the_tail_shares():
    incidents = [
        IncidentSpec(
            slug="vector-core-fault",
            title="Vector core exception on the accelerator (507035)",
            stage="train",
            symptom="The operator kernel faulted on the device.",
        ),
        IncidentSpec(
            slug="sync-timeout",
            title="Accelerator synchronisation timeout (507046)",
            stage="train",
            symptom="An operator call waited on the device until the runtime gave up.",
        ),
    ]
    index = build_index(incidents, [])
    tail = "RuntimeError: call aclnnInplaceCopy failed on the device, error code is 507035\n"

    report = analyze(tail, index)

    assert report.suggestions[0].slug == "vector-core-fault"


def test_codes_keep_their_digits_and_other_numbers_are_folded():
    found = features("EZ9999 error code is 507035, cudaErrorIllegalAddress, pid 4242 ENOSPC")

    assert {"code:ez9999", "code:507035", "code:cudaerrorillegaladdress", "code:enospc"} <= set(
        found
    )
    assert not any(feature.startswith("code:") and "4242" in feature for feature in found)


def test_object_reprs_and_memory_addresses_are_not_content():
    """`<_io.BytesIO object at 0x7f45103fa090>` and a bare address are in every Python log:
    two lines that share only those are not alike."""
    index = SimilarityIndex(
        [
            IncidentSpec(
                "limits",
                "Request rejected",
                "serve",
                "Input rejected (<traceback object at 0x7f10f8ef1d40>) at 0x7f10f8ef1d40",
                "",
            )
        ]
    )

    assert index.score("Opening <_io.BytesIO object at 0x7f45103fa090> at 0x7f45103fa090") == {}


def test_the_tag_a_worker_process_puts_before_its_lines_is_not_content():
    """vLLM, Ray and Xinference tag each line with the process that wrote it
    (`(VllmWorkerProcess pid=3823309)`, `[address=0.0.0.0:37737, pid=1025864]`): two lines that
    share only such tags are not alike."""
    index = SimilarityIndex(
        [
            IncidentSpec(
                "slots",
                "No slot left",
                "serve",
                "[address=0.0.0.0:38479, pid=2210] (RayWorkerWrapper pid=1234, ip=10.0.0.1) failed",
                "",
            )
        ]
    )

    assert (
        index.score("[address=0.0.0.0:37737, pid=1025864] (RayWorkerWrapper pid=77) raised") == {}
    )
