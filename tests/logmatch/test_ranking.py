"""Ranking: error lines over warnings, the last error over earlier ones, floods, stage,
specificity, feedback, and the guard against generic lines."""

from __future__ import annotations

import pytest

from incidents.logmatch import (
    IncidentSpec,
    Limits,
    SignatureSpec,
    analyze,
    build_index,
    mask_line,
)
from incidents.logmatch.generic import is_generic

from .conftest import KILLED_BUILD_STEP


def _index(*signatures: tuple[str, str, str | None]):
    """An index with one incident per (slug, pattern, stage), described by its slug only."""
    incidents = [
        IncidentSpec(slug=slug, title=slug.replace("-", " "), stage=stage, symptom="")
        for slug, _pattern, stage in signatures
    ]
    specs = [SignatureSpec(slug, slug, pattern) for slug, pattern, _stage in signatures]
    return build_index(incidents, specs)


def test_an_error_line_beats_a_warning_line():
    index = _index(("alpha", r"alpha subsystem degraded", None), ("beta", r"beta link lost", None))
    log = "ERROR: alpha subsystem degraded\nWARNING: beta link lost, retrying"

    report = analyze(log, index)

    assert [s.slug for s in report.suggestions] == ["alpha", "beta"]
    assert "ERROR line" in report.suggestions[0].why
    assert "beta" in report.suggestions[0].why


def test_the_last_error_beats_an_earlier_one():
    index = _index(("alpha", r"alpha subsystem degraded", None), ("beta", r"beta link lost", None))
    log = "\n".join(
        ["ERROR: alpha subsystem degraded"] + ["INFO: step"] * 50 + ["ERROR: beta link lost"]
    )

    report = analyze(log, index)

    assert report.suggestions[0].slug == "beta"
    assert report.key_line.number == 52


def test_a_flooding_warning_beats_a_single_one():
    index = _index(
        ("alpha", r"alpha queue is slow", None), ("beta", r"beta retry for utterance", None)
    )
    lines = [f"WARNING: beta retry for utterance utt{n}" for n in range(40)]
    log = "\n".join([*lines, "WARNING: alpha queue is slow"])

    report = analyze(log, index)

    assert report.suggestions[0].slug == "beta"
    assert "repeated 40 times" in report.suggestions[0].why


def test_stage_agreement_breaks_a_tie():
    index = _index(
        ("train-thing", r"resource busy", "train"), ("serve-thing", r"resource busy", "serve")
    )

    report = analyze("ERROR: resource busy while starting", index, log_path="/srv/vllm/serve.log")

    assert report.stage == "serve"
    assert report.suggestions[0].slug == "serve-thing"


def test_a_more_specific_signature_wins():
    index = _index(
        ("vague", r"memory", None),
        ("specific", r"No available memory for the cache blocks", None),
    )

    report = analyze("ValueError: No available memory for the cache blocks.", index)

    assert report.suggestions[0].slug == "specific"


def test_a_generic_line_alone_proves_nothing():
    index = _index(
        ("host-oom", r"^Killed$", None),
        ("crash", r"exit code 1", None),
        ("traceback", r"Traceback \(most recent call last\)", None),
    )
    log = (
        "Traceback (most recent call last):\nRuntimeError\nKilled\nProcess exited with exit code 1"
    )

    report = analyze(log, index)

    assert report.suggestions  # shown as leads ...
    assert not any(s.confident for s in report.suggestions)  # ... never as the answer


def test_a_generic_line_does_not_outrank_a_telling_one():
    index = _index(("host-oom", r"Killed", None), ("disk-full", r"No space left on device", None))
    log = "OSError: [Errno 28] No space left on device\nKilled"

    report = analyze(log, index)

    assert report.suggestions[0].slug == "disk-full"
    assert report.suggestions[0].confident


def test_a_long_literal_signature_tells_on_a_line_of_few_words():
    """'wave.Error: unknown format: 3' has few words of its own, but a signature that spells
    out the whole message says what failed: it is the answer, not a discounted hint."""
    index = _index(("audio-file-unreadable", r"wave\.Error: unknown format: \d+", None))
    log = (
        "Traceback (most recent call last):\n"
        '  File "wave.py", line 260, in _read_fmt_chunk\n'
        "wave.Error: unknown format: 3\n"
        "Failed to execute script align\n"
    )

    report = analyze(log, index)

    assert is_generic("wave.Error: unknown format: 3")
    assert report.suggestions[0].slug == "audio-file-unreadable"
    assert report.suggestions[0].confident


def test_a_message_that_quotes_a_stack_frame_is_not_a_stack_frame():
    """CANN ends its compile error by quoting the Python frame that raised it; the line still
    says what failed. A frame of a traceback, behind any logger prefix, says nothing."""
    index = _index(("compile", r"Failed to compile Op \[", None))
    quoted = (
        "[Stage-0] ERROR 01-21 17:28:55 [gpu_worker.py:226] E40021: Failed to compile Op"
        " [trans_Cast_2,]. (oppath: [Compile /opt/cast.py failed with errormsg/stack:"
        ' File "/opt/tbe/tbe_python_error_mgr.py", line 111, in raise_tbe_python_err'
    )
    framed = (
        '[Stage-0] ERROR 01-21 17:28:55 [gpu_worker.py:226]   File "/opt/Failed to compile Op'
        ' [x]/cast.py", line 111, in raise_tbe_python_err'
    )

    assert analyze(quoted, index).suggestions[0].confident
    assert not analyze(framed, index).suggestions[0].confident


def test_a_pasted_table_is_not_compared_with_incident_texts():
    """Column headings of nvidia-smi / npu-smi resemble every remedy that names the tool."""
    described = "check the card: npu-smi info shows AICore(%) and HBM-Usage(MB) per NPU"
    index = build_index([IncidentSpec("npu-oom", "NPU out of memory", "train", "", described)], [])
    table = "\n".join(
        [
            "+---------------------------+---------------+----------------------+",
            "| Chip                      | Bus-Id        | AICore(%)   HBM-Usage(MB) |",
            "+===========================+===============+======================+",
        ]
    )
    said = "npu-smi info: AICore(%) 0 and HBM-Usage(MB) 59681 on every NPU"

    assert analyze(table, index).suggestions == ()
    assert analyze(said, index).suggestions[0].slug == "npu-oom"


def test_scores_are_between_zero_and_one_and_sorted(small_index):
    log = "\n".join(
        [
            "WARNING: Retrying utterance spk1-utt1 with beam 40",
            "MemoryError",
            "std::bad_alloc",
            "OSError: [Errno 28] No space left on device",
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
        ]
    )

    report = analyze(log, small_index, limits=Limits(top=10))

    scores = [s.score for s in report.suggestions]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert {"gpu-oom", "disk-full", "host-oom"} <= {s.slug for s in report.suggestions}


def test_feedback_moves_an_incident(small_index):
    log = "OSError: [Errno 28] No space left on device\nstd::bad_alloc"
    before = analyze(log, small_index)
    template = mask_line("OSError: [Errno 28] No space left on device")

    demoted = analyze(log, small_index, feedback={(template, "disk-full"): -1.0})
    promoted = analyze(log, small_index, feedback={(template, "disk-full"): 1.0})

    score = {s.slug: s.score for s in before.suggestions}["disk-full"]
    demoted_score = {s.slug: s.score for s in demoted.suggestions}["disk-full"]
    promoted_score = {s.slug: s.score for s in promoted.suggestions}["disk-full"]
    assert demoted_score < score <= promoted_score
    assert not {s.slug: s for s in demoted.suggestions}["disk-full"].confident


def test_feedback_alone_can_explain_a_recurring_line(small_index):
    line = "ERROR: ckpt writer thread stalled on shard 7"
    feedback = {(mask_line(line), "disk-full"): 1.0}

    without = analyze(line, small_index)
    with_feedback = analyze(line, small_index, feedback=feedback)

    assert "disk-full" not in [s.slug for s in without.suggestions]
    assert with_feedback.suggestions[0].slug == "disk-full"
    assert with_feedback.suggestions[0].evidence[0].kind == "feedback"


def test_no_confident_match_means_a_knowledge_gap(small_index):
    log = "INFO: starting\nERROR: flux capacitor misaligned on node 12\nINFO: exiting"

    report = analyze(log, small_index)

    assert not report.confident
    assert report.key_line.number == 2
    assert report.key_template == mask_line("ERROR: flux capacitor misaligned on node 12")


def test_the_key_line_is_the_strongest_evidence_of_a_confident_match(small_index):
    log = "ERROR: flux capacitor misaligned\nRuntimeError: CUDA out of memory.\nINFO: bye"

    report = analyze(log, small_index)

    assert report.confident
    assert report.key_line.number == 2


def test_every_suggestion_explains_itself(small_index):
    report = analyze("MemoryError\nOSError: [Errno 28] No space left on device", small_index)

    first, second = report.suggestions[:2]
    assert all(s.why.endswith(".") for s in report.suggestions)
    assert second.slug in first.why


def test_a_line_a_signature_recognises_is_not_won_by_text_that_resembles_it():
    """`beta` only resembles the line (its description repeats its words); `alpha`'s
    signature recognises it: the signature ranks first."""
    incidents = [
        IncidentSpec("alpha", "alpha", None, "", description="descriptor limit"),
        IncidentSpec(
            "beta",
            "beta",
            None,
            "",
            description="workers communication no longer possible sharing strategy shared "
            "memory increase the limit workers communication sharing strategy",
        ),
    ]
    index = build_index(incidents, [SignatureSpec("a", "alpha", r"Too many open files")])
    log = (
        "RuntimeError: Too many open files. Communication with the workers is no longer "
        "possible. Please increase the limit or change the sharing strategy"
    )

    report = analyze(log, index)

    assert report.suggestions[0].slug == "alpha"
    assert report.suggestions[0].confident


def test_two_incidents_claiming_one_line_equally_are_not_an_answer():
    """The same error text is a signature of two incidents and no stage tells them apart:
    the training incident is shown first (serving logs name their engine), neither as the
    answer."""
    index = _index(
        ("served-fault", r"an illegal memory access was encountered", "serve"),
        ("trained-fault", r"an illegal memory access was encountered", "train"),
    )
    log = "RuntimeError: CUDA error: an illegal memory access was encountered"

    report = analyze(log, index)

    assert [s.slug for s in report.suggestions] == ["trained-fault", "served-fault"]
    assert not report.suggestions[0].confident


def test_a_bare_killed_at_the_end_is_a_lead_for_the_oom_killer(catalog_index):
    log = "iter 144: time:1.722(sec), total-loss 0.5882\nlabels\n[]\n\n**Killed**\n"

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "host-oom"
    assert not report.suggestions[0].confident
    assert "killed without a word" in report.suggestions[0].why


def test_what_a_killed_job_was_doing_does_not_outrank_the_kill(catalog_index):
    """The INFO lines above a bare `Killed` say what the job was doing (casting a model to
    float32), not why it died: no incident that merely resembles them comes first."""
    log = (
        "[INFO 2024-06-06 11:19:55,094 builder.py:91] Loading model with"
        " checkpoint=../llama3/Meta-Llama-3-8B/consolidated.00.pth, params=params.json\n"
        "[INFO 2024-06-06 11:19:55,404 builder.py:112] Loaded model with dtype=torch.bfloat16\n"
        "[INFO 2024-06-06 11:19:55,405 builder.py:197] model.to torch.float32\n"
        "Killed\n"
    )

    report = analyze(log, catalog_index)

    assert [s.slug for s in report.suggestions] == ["host-oom"]
    assert not report.suggestions[0].confident


def test_a_build_step_killed_without_a_word_is_the_oom_killer_not_its_cmake_report(
    catalog_index,
):
    log = "\n".join(
        [
            "[ 17%] Building NVCC (Device) object src/ATen/CMakeFiles/ATen.dir/THCTensorMode.cu.o",
            "Killed",
            "CMake Error at ATen_generated_THCTensorIndex.cu.o.Release.cmake:279 (message):",
            "  Error generating file",
            "  /tmp/pip-build/aten/build/src/ATen/CMakeFiles/ATen.dir/THCTensorIndex.cu.o",
            "",
            "src/ATen/CMakeFiles/ATen.dir/build.make:154: recipe for target 'x.cu.o' failed",
            "make[2]: *** [src/ATen/CMakeFiles/ATen.dir/THCTensorIndex.cu.o] Error 1",
            "make[2]: *** Waiting for unfinished jobs....",
            "make[1]: *** [src/ATen/CMakeFiles/ATen.dir/all] Error 2",
            "Makefile:127: recipe for target 'all' failed",
        ]
    )

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "host-oom"
    assert "killed without a word" in report.suggestions[0].why
    assert not any(s.confident for s in report.suggestions)
    compile_error = log.replace("Killed", "THCTensorMode.cu(12): error: identifier undefined")
    assert analyze(compile_error, catalog_index).suggestions[0].slug == "build-failure"


def test_the_key_line_of_a_killed_build_step_is_the_kill_not_makes_report(catalog_index):
    report = analyze(KILLED_BUILD_STEP, catalog_index)

    assert not report.confident
    assert report.key_line.text == "Killed"


def test_a_gaps_key_line_passes_over_makes_reports_of_the_failed_step(small_index):
    log = "\n".join(
        [
            "foo.cc:12: error: flux capacitor misaligned in frobnicate()",
            "make[2]: *** [CMakeFiles/foo.dir/foo.cc.o] Error 1",
            "make[2]: *** Waiting for unfinished jobs....",
            "make[1]: *** [CMakeFiles/foo.dir/all] Error 2",
        ]
    )

    report = analyze(log, small_index)

    assert not report.confident
    assert report.key_line.number == 1


def test_a_killed_that_another_line_explains_gets_no_kill_lead(catalog_index):
    log = "OSError: [Errno 28] No space left on device\nKilled\n"

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "disk-full"
    assert all("killed without a word" not in s.why for s in report.suggestions)


def test_a_warning_the_job_ran_past_still_leaves_the_kill_its_lead(catalog_index):
    """A warning confirms its incident, but the job went on loading after it and was then
    killed without a word: the kill is still offered as a reading."""
    log = (
        "/env/lib/python3.10/site-packages/bitsandbytes/cextension.py:34: UserWarning: The"
        " installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers,"
        " 8-bit multiplication, and GPU quantization are unavailable.\n"
        "INFO:Loading lmsys_vicuna-7b-delta-v1.1...\n"
        "Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]\n"
        "Killed\n"
    )

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "version-mismatch"
    assert any(
        s.slug == "host-oom" and "killed without a word" in s.why for s in report.suggestions
    )


def _drift_lead(report) -> bool:
    """Whether some suggestion rests on the drift lead (whatever its explanation says)."""
    return any(e.kind == "drift" for s in report.suggestions for e in s.evidence)


REMOTE_CODE_KEY_ERROR = """\
Traceback (most recent call last):
  File "/home/u/.cache/huggingface/modules/transformers_modules/Chat-8B/configuration_chat.py", line 51, in __init__
    if llm_config['architectures'][0] == 'LlamaForCausalLM':
KeyError: 'architectures'
"""


def test_an_api_error_raised_in_installed_code_is_a_lead_for_a_moved_dependency(catalog_index):
    report = analyze(REMOTE_CODE_KEY_ERROR, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert not report.suggestions[0].confident
    assert "API error at" in report.suggestions[0].why
    assert _drift_lead(report)


@pytest.mark.parametrize(
    "prefix",
    [
        "[rank1]: ",
        "(ActorModelRayActor pid=700388) ",
        "(VLLMEngine pid=3599803) (Worker pid=3600530) ",
        "(RayWorkerWrapper pid=5135, ip=10.0.0.4) ",
        "ERROR 09-15 13:02:43 [multiproc_executor.py:870] ",
    ],
)
def test_an_api_error_behind_a_launchers_line_prefix_is_a_drift_lead(catalog_index, prefix):
    """torchrun, Ray and vLLM put their own prefix before every line a worker prints."""
    log = "".join(prefix + line + "\n" for line in REMOTE_CODE_KEY_ERROR.splitlines())

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert _drift_lead(report)


def test_the_same_error_in_the_jobs_own_script_is_no_drift_lead(catalog_index):
    log = REMOTE_CODE_KEY_ERROR.replace(
        "/home/u/.cache/huggingface/modules/transformers_modules/Chat-8B", "/home/u/proj"
    )

    report = analyze(log, catalog_index)

    assert not _drift_lead(report)


def test_an_attribute_of_none_in_a_library_is_a_missing_input_not_a_drift(catalog_index):
    log = """\
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2210, in embedding
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
AttributeError: 'NoneType' object has no attribute 'shape'
"""
    report = analyze(log, catalog_index)

    assert not _drift_lead(report)


MISSING_SUBMODULE = """\
Traceback (most recent call last):
  File "/home/u/lib/python3.9/site-packages/modelscope/msdatasets/utils/hf_datasets_util.py", line 24, in <module>
    from {module} import DataFilesNotFoundError, DatasetNotFoundError
ModuleNotFoundError: No module named '{module}'
"""


def test_a_submodule_missing_from_the_package_another_package_imports_is_a_drift_lead(
    catalog_index,
):
    """datasets is installed (Python names the first part it cannot find), but not the
    release modelscope was written against."""
    report = analyze(MISSING_SUBMODULE.format(module="datasets.exceptions"), catalog_index)

    assert _drift_lead(report)
    assert "python-api-drift" in [s.slug for s in report.suggestions[:2]]


@pytest.mark.parametrize("module", ["modelscope._C", "datasets"])
def test_a_package_missing_its_own_submodule_or_a_whole_package_is_no_drift_lead(
    catalog_index, module
):
    report = analyze(MISSING_SUBMODULE.format(module=module), catalog_index)

    assert not _drift_lead(report)


def test_a_later_exception_of_another_kind_takes_the_drift_lead_away(catalog_index):
    log = REMOTE_CODE_KEY_ERROR + "RuntimeError: the run stopped for a reason of its own\n"

    report = analyze(log, catalog_index)

    assert not _drift_lead(report)


def test_a_signature_that_explains_the_tail_leaves_no_drift_lead(catalog_index):
    log = """\
  File "/opt/conda/lib/python3.10/site-packages/transformers/utils/import_utils.py", line 1510, in _get_module
    raise RuntimeError(
ImportError: cannot import name 'is_torch_fx_available' from 'transformers.utils'
"""
    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert report.suggestions[0].confident
    assert not _drift_lead(report)


IPYTHON_REMOTE_CODE = """\
~/.cache/huggingface/modules/transformers_modules/Org/Model-4B/67bccd1/modeling_chat.py in generate(self, pixel_values, input_ids)
    311             input_embeds = self.language_model.get_input_embeddings()(input_ids)
    312
...
-> 1330                 max_cache_length = past_key_values.get_max_length()
   1331             else:
   1332                 cache_length = past_length = past_key_values[0][0].shape[2]

AttributeError: 'DynamicCache' object has no attribute 'get_max_length'
"""


def test_an_ipython_frame_of_remote_code_above_its_numbered_source_is_a_drift_lead(
    catalog_index,
):
    report = analyze(IPYTHON_REMOTE_CODE, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert not report.suggestions[0].confident
    assert "API error at" in report.suggestions[0].why
    assert _drift_lead(report)


def test_an_ipython_frame_of_the_notebooks_own_code_is_no_drift_lead(catalog_index):
    """An attribute the notebook's own code reads (a method it calls on a named class is
    another reading: see the named-class test)."""
    log = (
        IPYTHON_REMOTE_CODE.replace(
            "~/.cache/huggingface/modules/transformers_modules/Org/Model-4B/67bccd1", "~/proj"
        )
        .replace("past_key_values.get_max_length()", "past_key_values.max_length")
        .replace("'get_max_length'", "'max_length'")
    )

    report = analyze(log, catalog_index)

    assert not _drift_lead(report)


def test_a_colab_frame_in_site_packages_is_installed_code(catalog_index):
    log = """\
[/usr/local/lib/python3.11/dist-packages/transformers/generation/utils.py](https://localhost:8080/#) in generate(self, inputs)
   2325             # 12. run sample
-> 2326             result = self._sample(
   2327                 input_ids,

KeyError: 'cache_position'
"""
    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert "API error at" in report.suggestions[0].why
    assert _drift_lead(report)


def test_a_frame_far_above_other_lines_is_not_the_raising_frame(catalog_index):
    log = REMOTE_CODE_KEY_ERROR.replace(
        "KeyError: 'architectures'\n",
        "loading the config\nchecking the fields\nmapping the names\nstill here\n"
        "KeyError: 'architectures'\n",
    )

    report = analyze(log, catalog_index)

    assert not _drift_lead(report)


def test_a_call_that_does_not_fit_a_signature_with_no_frame_shown_is_a_drift_lead(
    catalog_index,
):
    log = """\
model_inputs = self.prepare_inputs_for_generation(input_ids, **model_kwargs)
TypeError: prepare_inputs_for_generation() missing 1 required positional argument: 'past'
"""
    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert not report.suggestions[0].confident


@pytest.mark.parametrize(
    "error",
    [
        "TypeError: 'RunOptions' object does not support item assignment",
        "TypeError: 'BatchEncoding' object does not support item deletion",
        "TypeError: 'GenerateDecoderOnlyOutput' object is not subscriptable",
    ],
)
def test_an_object_of_a_named_class_used_as_a_dict_is_a_drift_lead(catalog_index, error):
    """The job's own code did `run_opts["x"] = 1`: the value was a dict in the release the
    code was written for."""
    log = f"""\
Traceback (most recent call last):
  File "/home/u/proj/main.py", line 518, in main
    run_opts["find_unused_parameters"] = True
{error}
"""
    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert _drift_lead(report)


@pytest.mark.parametrize(
    "error",
    [
        "TypeError: 'int' object is not subscriptable",
        "TypeError: 'NoneType' object is not subscriptable",
        "TypeError: 'RunOptions' object is not callable",
    ],
)
def test_a_built_in_or_missing_value_used_as_a_container_is_no_drift_lead(catalog_index, error):
    log = f"""\
Traceback (most recent call last):
  File "/home/u/proj/main.py", line 518, in main
    value = opts[0]
{error}
"""
    assert not _drift_lead(analyze(log, catalog_index))


_PYTEST_FAILURE = """\
    def test_load():
>       model = load_model("tiny")

tests/test_model.py:12:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def load_model(name):
>       return hub.cached_download(name).config.get_text_config()
E       AttributeError: 'PretrainedConfig' object has no attribute 'get_text_config'

{where}:33: AttributeError
"""


def test_an_api_error_in_pytests_layout_raised_in_installed_code_is_a_drift_lead(catalog_index):
    """pytest marks the exception with `E` and names the raising file below it."""
    where = "../miniconda3/lib/python3.9/site-packages/speechbrain/pretrained/fetching.py"

    report = analyze(_PYTEST_FAILURE.format(where=where), catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert _drift_lead(report)


def test_an_api_error_in_pytests_layout_raised_in_the_projects_code_is_no_drift_lead(
    catalog_index,
):
    log = (
        _PYTEST_FAILURE.format(where="src/model/loading.py")
        .replace(".config.get_text_config()", ".weights")
        .replace(
            "'PretrainedConfig' object has no attribute 'get_text_config'",
            "'Snapshot' object has no attribute 'weights'",
        )
    )
    report = analyze(log, catalog_index)

    assert not _drift_lead(report)


def test_a_call_that_does_not_fit_in_the_jobs_own_script_is_no_drift_lead(catalog_index):
    log = """\
Traceback (most recent call last):
  File "/home/u/proj/train.py", line 40, in <module>
    model = build(cfg)
TypeError: build() missing 1 required positional argument: 'vocab'
"""
    report = analyze(log, catalog_index)

    assert not _drift_lead(report)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            "output = self.model.generate(*args, **kwargs)",
            "TypeError: generate() missing 1 required positional argument: 'input'",
        ),
        (
            "text = self.recognizer.decode(feats, lang)",
            "TypeError: Recognizer.decode() takes 2 positional arguments but 3 were given",
        ),
    ],
)
def test_a_call_into_a_method_of_another_component_that_does_not_fit_is_a_drift_lead(
    catalog_index, call, error
):
    log = f"""\
Traceback (most recent call last):
  File "/home/u/FunASR-main/modelscope/models/audio/funasr/model.py", line 61, in forward
    {call}
{error}
"""
    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert not report.suggestions[0].confident


def test_a_method_an_object_of_a_named_class_lacks_where_the_job_calls_it_is_a_drift_lead(
    catalog_index,
):
    """The job's own script calls a method of a library's object that this release renamed
    or dropped: raised in the job's code, yet the class is another component's."""
    log = """\
Traceback (most recent call last):
  File "/home/u/asr/run_batch.py", line 40, in main
    result = pipeline.transcribe_batch(files, beam=5)
AttributeError: 'Pipeline' object has no attribute 'transcribe_batch'
"""
    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "python-api-drift"
    assert not report.suggestions[0].confident


@pytest.mark.parametrize(
    "source",
    ["    steps = trainer.max_steps", "    out = fn(x)", "    value = obj.compute(x)"],
)
def test_an_attribute_read_or_another_name_called_gives_no_drift_lead_in_the_jobs_code(
    catalog_index, source
):
    log = f"""\
Traceback (most recent call last):
  File "/home/u/proj/train.py", line 40, in main
{source}
AttributeError: 'Trainer' object has no attribute 'max_steps'
"""
    assert not _drift_lead(analyze(log, catalog_index))


def test_numpy2_removing_a_name_is_api_drift_unless_a_module_compiled_for_numpy1_shows(
    catalog_index,
):
    removed = (
        "AttributeError: `np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` instead.\n"
    )
    banner = (
        "A module that was compiled using NumPy 1.x cannot be run in\n"
        "NumPy 2.0.0 as it may crash. To support both 1.x and 2.x\n"
        "downgrade to 'numpy<2' or try to upgrade the affected module.\n\n"
    )

    alone = analyze(removed, catalog_index)
    with_banner = analyze(banner + removed, catalog_index)

    assert alone.suggestions[0].slug == "python-api-drift"
    assert alone.suggestions[0].confident
    assert with_banner.suggestions[0].slug == "version-mismatch"


def test_the_kill_lead_looks_past_the_shells_next_prompt(catalog_index):
    log = "Loading checkpoint shards:  50%|█████     | 1/2\nKilled\n(venv) user@host:~/proj$\n"

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "host-oom"
    assert report.key_line.number == 2


def test_zsh_reports_a_killed_command_in_lower_case(catalog_index):
    report = analyze("zsh: killed     python train.py --config cfg.yaml\n", catalog_index)

    assert report.suggestions[0].slug == "host-oom"


def _described(*incidents: tuple[str, str]):
    return build_index(
        [
            IncidentSpec(slug, slug.replace("-", " "), None, "", description=text)
            for slug, text in incidents
        ],
        [],
    )


def test_a_description_two_incidents_resemble_alike_is_a_lead_not_an_answer():
    """A typed description rests on similar text alone: when the next incident reads nearly
    as close, similarity ranks the two but cannot tell them apart."""
    index = _described(
        ("host-memory", "the job needs more system memory than the host has available"),
        ("card-memory", "the job needs more memory on the card than is available"),
        ("disk-space", "the disk holding the checkpoints is full"),
    )
    report = analyze("the model requires more memory than is available", index)

    assert {s.slug for s in report.suggestions[:2]} == {"host-memory", "card-memory"}
    assert not report.suggestions[0].confident


def test_a_description_one_incident_resembles_clearly_is_the_answer():
    index = _described(
        ("host-memory", "the job needs more system memory than the host has available"),
        ("disk-space", "the disk holding the checkpoints is full"),
    )
    report = analyze("the job needs more system memory than the host has", index)

    assert report.suggestions[0].slug == "host-memory"
    assert report.suggestions[0].confident


def test_a_program_named_alone_is_not_a_missing_data_file(catalog_index):
    """Python names a program it could not run by its bare name (no directory, no extension):
    that is a tool missing from PATH, not an artifact an earlier step failed to write."""
    program = analyze(
        "FileNotFoundError: [Errno 2] No such file or directory: 'sclite'", catalog_index
    )
    data = analyze(
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/train/text'", catalog_index
    )

    assert not (program.confident and program.suggestions[0].slug == "missing-artifact")
    assert data.confident and data.suggestions[0].slug == "missing-artifact"


def test_an_error_line_quoting_its_cause_after_a_colon_is_answered_by_the_cause():
    """A server, engine or build step that reports a failure and quotes its cause after a
    colon (`failed to load … version 1: Internal: …`) wraps that cause: the incident that the
    quoted text names is the answer, however much more literal text the wrapper's pattern
    holds."""
    index = _index(
        ("wrapper", r"failed to load the model '[^']+' from its repository version \d+", None),
        ("cause", r"shard quota gone", None),
    )
    log = "E1203 model_lifecycle.cc:626] failed to load the model 'llama' from its repository version 1: Internal: shard quota gone"

    report = analyze(log, index)

    assert [s.slug for s in report.suggestions] == ["cause", "wrapper"]


def test_a_quoted_cause_ahead_of_the_colon_or_on_a_warning_line_changes_nothing():
    """Only an error line wraps a cause, and only what comes after the wrapper and a colon is
    quoted: a cause named first, or a warning that names two things, keeps the usual order."""
    index = _index(
        ("wrapper", r"failed to load the model '[^']+' from its repository version \d+", None),
        ("cause", r"shard quota gone", None),
    )
    ahead = "ERROR shard quota gone; failed to load the model 'llama' from its repository version 1: retrying"
    warning = (
        "WARN failed to load the model 'llama' from its repository version 1: shard quota gone"
    )

    assert analyze(ahead, index).suggestions[0].slug == "wrapper"
    assert analyze(warning, index).suggestions[0].slug == "wrapper"


def test_triton_quoting_an_out_of_memory_error_is_out_of_memory(catalog_index):
    log = (
        "E0101 12:00:00.000 1 model_lifecycle.cc:626] failed to load 'llama' version 1: "
        "Internal: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        "E0101 12:00:00.100 1 model_repository_manager.cc:1186] failed to load 'llama'"
    )

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "gpu-oom"
    assert report.suggestions[0].confident


def test_a_gguf_tensor_of_the_wrong_shape_is_two_leads_not_an_answer(catalog_index):
    """llama.cpp's `has wrong shape` comes from a broken export as often as from an engine that
    does not know the model's variant: both are offered, neither as the answer."""
    log = (
        "error loading model: check_tensor_dims: tensor 'blk.0.attn_gate.weight' has wrong "
        "shape; expected 5120, 5120, got 5120, 6144, 1, 1\n"
        "llama_model_load_from_file_impl: failed to load model"
    )

    report = analyze(log, catalog_index)

    assert not report.confident
    leads = {suggestion.slug for suggestion in report.suggestions[:2]}
    assert leads == {"gguf-file-invalid", "unsupported-architecture"}


@pytest.mark.parametrize(
    ("line", "generic"),
    [
        ("audioread.exceptions.NoBackendError", False),
        ("torch.cuda.OutOfMemoryError", False),
        ("UnicodeDecodeError", False),
        ("RuntimeError", True),
        ("AssertionError", True),
        ("subprocess.CalledProcessError", True),
        ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", True),
        ("FileNotFoundError", True),
        ("NotImplementedError", True),
    ],
)
def test_a_line_that_is_only_an_exception_class_is_told_by_the_class_name(line, generic):
    """A bare exception line says what went wrong when its class is specific (no audio
    backend, out of memory, undecodable text); Python's vague classes and the wrappers of a
    child process say nothing."""
    assert is_generic(line) is generic


CUDA_ADVICE = """\
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""
ASCEND_ADVICE = """\
ERROR 06-23 10:51:59 [engine.py:458] The Inner error is reported as above. The process exits for this inner error, and the current working operator name is Identity.
ERROR 06-23 10:51:59 [engine.py:458] Since the operator is called asynchronously, the stacktrace may be inaccurate. If you want to get the accurate stacktrace, pleace set the environment variable ASCEND_LAUNCH_BLOCKING=1.
ERROR 06-23 10:51:59 [engine.py:458] Note: ASCEND_LAUNCH_BLOCKING=1 will force ops to run in synchronous mode, resulting in performance degradation. Please unset ASCEND_LAUNCH_BLOCKING in time after debugging.
[ERROR] 2025-06-23-10:51:59 (PID:603, Device:0, RankID:-1) ERR00100 PTA call acl api failed.
[Error]: The internal ACL of the system is incorrect.
        Rectify the fault based on the error information in the ascend log.
"""


@pytest.mark.parametrize("advice", [CUDA_ADVICE, ASCEND_ADVICE], ids=["cuda", "ascend"])
def test_the_advice_a_runtime_prints_under_every_error_says_nothing(catalog_index, advice):
    """How to get an exact stack trace and where to read more come with every CUDA or Ascend
    error: a tail cut before the real one is not any incident's, least of all confidently."""
    report = analyze(advice, catalog_index)

    assert not report.suggestions
    assert all(is_generic(line) for line in advice.splitlines())


def _rests_on(report, kind: str) -> bool:
    """Whether some suggestion rests on evidence of `kind` (a config or record lead, ranks
    in different collectives, a refused pin)."""
    return any(e.kind == kind for s in report.suggestions for e in s.evidence)


OWN_CONFIG_KEY_ERROR = """\
(venv) $ python train.py examples/librispeech/config.json
Traceback (most recent call last):
  File "train.py", line 145, in <module>
    run(config)
  File "train.py", line 80, in run
    start_and_end=data_cfg["start_and_end"])
KeyError: 'start_and_end'
"""


@pytest.mark.parametrize(
    "source",
    [
        '    start_and_end=data_cfg["start_and_end"])',
        "    n = self.model_config['start_and_end']",
        '    n = cfg["data"]["start_and_end"]',
        "    n = hparams['start_and_end']",
        # a dict that is read as attributes raises a KeyError too
        "    use_shm=self.configs.dataset_conf.start_and_end,",
    ],
)
def test_a_key_the_jobs_own_code_misses_in_its_config_is_a_lead_for_a_stale_config(
    catalog_index, source
):
    log = OWN_CONFIG_KEY_ERROR.replace('    start_and_end=data_cfg["start_and_end"])', source)

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "stale-recipe-config"
    assert not report.suggestions[0].confident
    assert "missing at" in report.suggestions[0].why
    assert _rests_on(report, "config")


@pytest.mark.parametrize(
    "source",
    [
        # not a configuration: a dataset row, a vocabulary, a function's keyword arguments
        '    text = example["start_and_end"]',
        "    ids = [token2id[t] for t in tokens]",
        '    value = kwargs["start_and_end"]',
        # the configuration is read, but the missing key is another one
        '    start_and_end=data_cfg["start"])',
        # an attribute of something that is no configuration, a method of a configuration
        "    n = example.start_and_end",
        "    n = data_cfg.start_and_end()",
    ],
)
def test_a_key_error_that_is_no_config_lookup_is_no_config_lead(catalog_index, source):
    log = OWN_CONFIG_KEY_ERROR.replace('    start_and_end=data_cfg["start_and_end"])', source)

    report = analyze(log, catalog_index)

    assert not _rests_on(report, "config")


OWN_CONFIG_ATTRIBUTE_ERROR = """\
Traceback (most recent call last):
  File "experiment.py", line 348, in <module>
    asr_brain.fit(params.epoch_counter, train_set, valid_set)
  File "experiment.py", line 249, in compute_objectives
    if params.ter_eval:
AttributeError: 'types.SimpleNamespace' object has no attribute 'ter_eval'
"""


@pytest.mark.parametrize(
    "source",
    [
        "    if params.ter_eval:",
        "    every = self.hparams.ter_eval + 1",
        "    run(args.ter_eval, cfg.model)",
    ],
)
def test_an_attribute_the_jobs_own_code_misses_in_its_config_is_a_lead_for_a_stale_config(
    catalog_index, source
):
    log = OWN_CONFIG_ATTRIBUTE_ERROR.replace("    if params.ter_eval:", source)

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "stale-recipe-config"
    assert not report.suggestions[0].confident
    assert _rests_on(report, "config")


@pytest.mark.parametrize("config_class", ["AttrDict", "EasyDict", "omegaconf.DictConfig"])
def test_an_attribute_missing_from_an_object_of_a_config_class_is_a_config_lead_by_any_name(
    catalog_index, config_class
):
    """`c.use_phonemes` names no configuration, but `'AttrDict' object` says it is one."""
    log = OWN_CONFIG_ATTRIBUTE_ERROR.replace("    if params.ter_eval:", "    if c.ter_eval:")
    log = log.replace("types.SimpleNamespace", config_class)

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "stale-recipe-config"
    assert not report.suggestions[0].confident
    assert _rests_on(report, "config")


def test_python_s_did_you_mean_after_a_missing_config_attribute_keeps_the_config_lead(
    catalog_index,
):
    """Python 3.10+ appends a suggestion: `… no attribute 'network_alpha'. Did you mean:
    'network_args'?`"""
    log = OWN_CONFIG_ATTRIBUTE_ERROR.replace(
        "has no attribute 'ter_eval'", "has no attribute 'ter_eval'. Did you mean: 'wer_eval'?"
    )

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "stale-recipe-config"
    assert _rests_on(report, "config")


def test_an_attribute_missing_from_an_object_of_another_class_by_another_name_is_no_config_lead(
    catalog_index,
):
    log = OWN_CONFIG_ATTRIBUTE_ERROR.replace("    if params.ter_eval:", "    if c.ter_eval:")

    report = analyze(log, catalog_index)

    assert not _rests_on(report, "config")


@pytest.mark.parametrize(
    "source",
    [
        # not a configuration: a model, a batch
        "    if model.ter_eval:",
        "    x = batch.ter_eval",
        # the configuration is read, but for another attribute, or the attribute is a call
        "    if params.ter_eval_all:",
        "    if params.ter_eval():",
        "    if params.wer_eval:",
    ],
)
def test_an_attribute_error_that_is_no_config_lookup_is_no_config_lead(catalog_index, source):
    log = OWN_CONFIG_ATTRIBUTE_ERROR.replace("    if params.ter_eval:", source)

    report = analyze(log, catalog_index)

    assert not _rests_on(report, "config")


def test_a_config_key_missing_inside_an_installed_package_is_a_drift_then_a_stale_config(
    catalog_index,
):
    log = OWN_CONFIG_KEY_ERROR.replace(
        'File "train.py", line 80', 'File "/usr/lib/python3/site-packages/speech/train.py", line 80'
    )

    report = analyze(log, catalog_index)

    slugs = [suggestion.slug for suggestion in report.suggestions]
    assert slugs[:2] == ["python-api-drift", "stale-recipe-config"]
    assert not any(suggestion.confident for suggestion in report.suggestions)
    assert [e.kind for e in report.suggestions[1].evidence] == ["config"]


JOBS_CODE_SETS_A_PACKAGES_BUILDER_CONFIG = """\
Traceback (most recent call last):
  File "/root/app/scripts/onnx2trt.py", line 134, in main
    builder = EngineBuilder(args.verbose)
  File "/root/app/scripts/onnx2trt.py", line 57, in __init__
    self.config.max_workspace_size = 12 * (2 ** 30)  # 12 GB
AttributeError: 'tensorrt_bindings.tensorrt.IBuilderConfig' object has no attribute 'max_workspace_size'
"""


@pytest.mark.parametrize(
    ("class_name", "first"),
    [
        ("tensorrt_bindings.tensorrt.IBuilderConfig", "python-api-drift"),
        ("vendorlib.engine.BuilderConfig", "python-api-drift"),
        ("omegaconf.dictconfig.DictConfig", "stale-recipe-config"),
        ("types.SimpleNamespace", "stale-recipe-config"),
    ],
)
def test_an_attribute_missing_from_a_packages_object_is_a_drift_before_a_stale_config(
    catalog_index, class_name, first
):
    """`self.config` in the job's own code, but the exception names the object's class with
    the package that defines it: that package's API moved (TensorRT 10 dropped
    `max_workspace_size`). A configuration class, or one of Python's own the job fills itself,
    keeps the configuration reading first."""
    log = JOBS_CODE_SETS_A_PACKAGES_BUILDER_CONFIG.replace(
        "tensorrt_bindings.tensorrt.IBuilderConfig", class_name
    )

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == first
    assert not any(suggestion.confident for suggestion in report.suggestions)
    assert {"python-api-drift", "stale-recipe-config"} <= {
        suggestion.slug for suggestion in report.suggestions[:2]
    }


INSTALLED_TRAINER_READS_USER_CONFIG = """\
Traceback (most recent call last):
  File "src/reward_modeling/training/trainer_rm.py", line 209, in main
    model = get_model(training_conf, tokenizer)
  File "envs/rm/lib/python3.10/site-packages/model_training/utils/utils.py", line 354, in get_model
    residual_dropout_lima=conf.residual_dropout_lima,
AttributeError: 'Namespace' object has no attribute 'residual_dropout_lima'. Did you mean: 'residual_dropout'?
"""

LIBRARY_CHECKOUT_READS_ANOTHER_PACKAGES_CONFIG = """\
Traceback (most recent call last):
  File "/mnt/Megatron-LM/megatron/training.py", line 368, in get_model
    model = model_provider_func(
  File "/mnt/Megatron-LM/megatron/core/models/gpt/gpt_model.py", line 89, in __init__
    rotary_interleaved=self.config.rotary_interleaved,
AttributeError: 'TransformerConfig' object has no attribute 'rotary_interleaved'
"""


@pytest.mark.parametrize(
    ("log", "first", "second"),
    [
        (INSTALLED_TRAINER_READS_USER_CONFIG, "stale-recipe-config", "python-api-drift"),
        (LIBRARY_CHECKOUT_READS_ANOTHER_PACKAGES_CONFIG, "stale-recipe-config", "python-api-drift"),
    ],
)
def test_an_attribute_missing_from_a_config_has_both_readings_as_leads(
    catalog_index, log, first, second
):
    """A config and the code that reads it: either one may be of another version. An object
    of a configuration class (`'Namespace' object`) is the job's own configuration even where
    an installed trainer reads it: a key the code now reads and the configuration lacks is
    first a configuration older than the code."""
    report = analyze(log, catalog_index)

    assert [suggestion.slug for suggestion in report.suggestions[:2]] == [first, second]
    assert not any(suggestion.confident for suggestion in report.suggestions)


CONFIG_LIBRARY_RAISES_FOR_THE_JOBS_LOOKUP = """\
Traceback (most recent call last):
  File "/home/me/evalkit/run.py", line 213, in main
    tasks = partitioner(cfg)
  File "/home/me/evalkit/evalkit/partitioners/naive.py", line 99, in __call__
    models = cfg['models']
  File "/opt/conda/lib/python3.10/site-packages/mmengine/config/config.py", line 1483, in __getitem__
    return self._cfg_dict.__getitem__(name)
  File "/opt/conda/lib/python3.10/site-packages/mmengine/config/config.py", line 131, in __getitem__
    return self.build_lazy(super().__getitem__(key))
  File "/opt/conda/lib/python3.10/site-packages/mmengine/config/config.py", line 98, in __missing__
    raise KeyError(name)
KeyError: 'models'
"""


def test_a_key_a_config_librarys_lookup_method_raises_for_the_jobs_own_lookup_is_a_stale_config(
    catalog_index,
):
    """mmengine's Config raises the KeyError in its own `__missing__`; the line that asked for
    the key is the job's `cfg['models']`, two lookup methods up: a configuration that lacks a
    key the code reads, before a dependency that moved."""
    report = analyze(CONFIG_LIBRARY_RAISES_FOR_THE_JOBS_LOOKUP, catalog_index)

    assert [s.slug for s in report.suggestions[:2]] == ["stale-recipe-config", "python-api-drift"]
    assert not any(suggestion.confident for suggestion in report.suggestions)


def test_a_config_librarys_lookup_method_asked_by_installed_code_stays_a_drift_first(
    catalog_index,
):
    log = CONFIG_LIBRARY_RAISES_FOR_THE_JOBS_LOOKUP.replace(
        "/home/me/evalkit/evalkit/", "/opt/conda/lib/python3.10/site-packages/evalkit/"
    )

    report = analyze(log, catalog_index)

    assert [s.slug for s in report.suggestions[:2]] == ["python-api-drift", "stale-recipe-config"]


def test_a_lookup_methods_caller_that_reads_no_config_key_gives_no_config_lead(catalog_index):
    """Climbing past the lookup methods finds the caller; a caller that reads no key of a
    configuration is no config lookup."""
    log = CONFIG_LIBRARY_RAISES_FOR_THE_JOBS_LOOKUP.replace(
        "    models = cfg['models']", "    models = loader[0]"
    )

    report = analyze(log, catalog_index)

    assert not _rests_on(report, "config")


def test_a_key_missing_from_the_jobs_own_config_dict_has_no_drift_reading(catalog_index):
    report = analyze(OWN_CONFIG_KEY_ERROR, catalog_index)

    assert report.suggestions[0].slug == "stale-recipe-config"
    assert not _drift_lead(report)


def test_a_signature_that_explains_the_tail_leaves_no_config_lead(catalog_index):
    """The KeyError is still the last exception; a line before it explains the run."""
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
        + OWN_CONFIG_KEY_ERROR
    )

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "gpu-oom"
    assert not _rests_on(report, "config")


OWN_DATASET_KEY_ERROR = """\
Traceback (most recent call last):
  File "finetune.py", line 212, in <module>
    train(args)
  File "finetune.py", line 70, in preprocess
    prompt = example["json_dialogue"]
KeyError: 'json_dialogue'
"""


@pytest.mark.parametrize(
    "source",
    [
        '    prompt = example["json_dialogue"]',
        "    turns = raw_sample['json_dialogue']",
        "    return json.loads(self.data[index]['json_dialogue'])",
        "    text = rows[i]['json_dialogue']",
    ],
)
def test_a_field_missing_from_one_record_of_the_data_is_a_lead_for_the_dataset_format(
    catalog_index, source
):
    log = OWN_DATASET_KEY_ERROR.replace('    prompt = example["json_dialogue"]', source)

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "sft-dataset-format"
    assert not report.suggestions[0].confident
    assert "one record of its data" in report.suggestions[0].why
    assert _rests_on(report, "record")


@pytest.mark.parametrize(
    "source",
    [
        # not one record: a function's keyword arguments, a lookup table, a model's weights
        '    prompt = kwargs["json_dialogue"]',
        "    ids = [token2id[t] for t in tokens]",
        "    param = params_dict['json_dialogue']",
        # a record is read, but for another key
        '    prompt = example["text"]',
    ],
)
def test_a_key_error_that_reads_no_record_is_no_record_lead(catalog_index, source):
    log = OWN_DATASET_KEY_ERROR.replace('    prompt = example["json_dialogue"]', source)

    report = analyze(log, catalog_index)

    assert not _rests_on(report, "record")


def test_a_record_field_missing_inside_an_installed_trainer_is_the_data_then_a_drift(
    catalog_index,
):
    """An installed trainer reads the user's records: the data leads, a moved API follows."""
    log = OWN_DATASET_KEY_ERROR.replace(
        'File "finetune.py", line 70',
        'File "/venv/lib/python3.10/site-packages/trl/sft.py", line 70',
    )

    report = analyze(log, catalog_index)

    slugs = [suggestion.slug for suggestion in report.suggestions]
    assert slugs[:2] == ["sft-dataset-format", "python-api-drift"]
    assert not any(suggestion.confident for suggestion in report.suggestions)
    assert [e.kind for e in report.suggestions[1].evidence] == ["drift"]


def test_a_signature_that_explains_the_tail_leaves_no_record_lead(catalog_index):
    log = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
        + OWN_DATASET_KEY_ERROR
    )

    report = analyze(log, catalog_index)

    assert report.suggestions[0].slug == "gpu-oom"
    assert not _rests_on(report, "record")


def test_code_a_syntax_error_quotes_is_no_evidence_of_what_it_would_raise(catalog_index):
    frame = '  File "/src/GPT_SoVITS/prepare_datasets/3-get-semantic.py", line 38'
    code = "    Felse:raise FileNotFoundError(pretrained_s2G)"
    log = "\n".join([frame, code, "          ^", "SyntaxError: invalid syntax"])

    report = analyze(log, catalog_index)

    assert not any(s.confident for s in report.suggestions)
    ran = "\n".join([frame + ", in <module>", code, "FileNotFoundError: exp/s2G.pth"])
    assert analyze(ran, catalog_index).suggestions[0].slug == "missing-artifact"


@pytest.mark.parametrize(
    "code",
    [
        '   1335     if str(e) == "Cannot copy out of meta tensor; no data!":',
        '    if str(e) == "Cannot copy out of meta tensor; no data!":',
        "--> 12 elif 'Cannot copy out of meta tensor' in str(err):",
    ],
)
def test_code_that_tests_for_a_message_is_no_evidence_of_that_failure(catalog_index, code):
    """A traceback prints the handler's source line; the tail ended in another error."""
    log = "\n".join(
        [
            "File ~/env/lib/python3.11/site-packages/torch/nn/modules/module.py:1335, in to(t)",
            code,
            "TypeError: the run failed for a reason of its own",
        ]
    )

    report = analyze(log, catalog_index)

    assert not any(s.confident for s in report.suggestions)
    raised = "NotImplementedError: Cannot copy out of meta tensor; no data!"
    meta = analyze("\n".join([code, raised]), catalog_index).suggestions[0]
    assert meta.slug == "meta-or-offloaded-model-moved"
    assert meta.confident


RANKS_IN_DIFFERENT_COLLECTIVES = """\
[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3437, OpType=ALLREDUCE, NumelIn=4311252, NumelOut=4311252, Timeout(ms)=600000) ran for 600057 milliseconds before timing out.
[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3437, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600076 milliseconds before timing out.
[rank1]:[E ProcessGroupNCCL.cpp:577] [Rank 1] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
[rank1]:[E ProcessGroupNCCL.cpp:583] [Rank 1] To avoid data inconsistency, we are taking the entire process down.
"""


@pytest.mark.parametrize(
    "log",
    [
        RANKS_IN_DIFFERENT_COLLECTIVES,
        RANKS_IN_DIFFERENT_COLLECTIVES.replace(
            "OpType=ALLREDUCE, NumelIn=1,", "OpType=BROADCAST, NumelIn=4311252,"
        ),
        RANKS_IN_DIFFERENT_COLLECTIVES.replace("WorkNCCL", "WorkHCCL"),
    ],
)
def test_ranks_waiting_in_different_collectives_at_one_step_prove_a_collective_mismatch(
    catalog_index, log
):
    report = analyze(log, catalog_index)

    first = report.suggestions[0]
    assert first.slug == "rank-collective-mismatch"
    assert first.confident
    assert first.evidence[0].kind == "mismatch"
    assert "diverged" in first.why


@pytest.mark.parametrize(
    "log",
    [
        # both ranks wait in the same collective: one of them is late, not on another path
        RANKS_IN_DIFFERENT_COLLECTIVES.replace(
            "NumelIn=1, NumelOut=1", "NumelIn=4311252, NumelOut=4311252"
        ),
        # another step of the same collective
        RANKS_IN_DIFFERENT_COLLECTIVES.replace(
            "SeqNum=3437, OpType=ALLREDUCE, NumelIn=1,", "SeqNum=3438, OpType=ALLREDUCE, NumelIn=1,"
        ),
    ],
)
def test_ranks_waiting_in_the_same_collective_or_at_other_steps_prove_no_mismatch(
    catalog_index, log
):
    report = analyze(log, catalog_index)

    assert not _rests_on(report, "mismatch")
    assert report.suggestions[0].slug != "rank-collective-mismatch"


REFUSED_PIN = """\
$ pip install -r requirements.txt
ERROR: Could not find a version that satisfies the requirement torch==1.4.0 (from versions: {offered})
ERROR: No matching distribution found for torch==1.4.0
"""


def _proves_python_too_new(report) -> None:
    """The refused pin is the answer, on the pin's own evidence, and nothing else is."""
    first, runner_up = report.suggestions[:2]
    assert first.slug == "python-too-new-for-pins"
    assert first.confident
    assert any(e.kind == "pin" for e in first.evidence)
    assert not runner_up.confident


@pytest.mark.parametrize(
    "offered", ["1.11.0", "1.8.0, 1.8.1, 1.9.0, 1.10.2, 1.11.0", "1.10.0+cu113, 1.11.0+cu113"]
)
def test_a_pin_older_than_every_release_pip_offers_proves_python_too_new(catalog_index, offered):
    report = analyze(REFUSED_PIN.format(offered=offered), catalog_index)

    _proves_python_too_new(report)


def test_a_pin_another_package_requires_is_read_the_same(catalog_index):
    """pip names the package that required the pin between the pin and the releases."""
    log = (
        "ERROR: Could not find a version that satisfies the requirement ctranslate2==4.4.0 "
        "(from whisperx) (from versions: 4.6.0)\n"
        "ERROR: No matching distribution found for ctranslate2==4.4.0\n"
    )
    report = analyze(log, catalog_index)

    _proves_python_too_new(report)


def test_the_pin_reading_says_why(catalog_index):
    report = analyze(REFUSED_PIN.format(offered="1.11.0, 1.12.0"), catalog_index)

    assert "never built for this Python" in report.suggestions[0].why
    assert "the runner-up reads only its words" in report.suggestions[0].why


@pytest.mark.parametrize(
    "offered",
    [
        "none",  # nothing for this platform at all: a wrong index or platform
        "1.0.0, 1.1.0, 1.2.0",  # only older releases: the pin does not exist yet
        "1.2.0, 1.3.0, 1.5.0, 1.6.0",  # the pin falls between releases: a typo or a yanked one
        "1.4.0.post1, 1.4.0.post2",  # builds of the same release, not newer ones
    ],
)
def test_a_pin_pip_lacks_among_older_or_no_releases_proves_nothing_about_python(
    catalog_index, offered
):
    report = analyze(REFUSED_PIN.format(offered=offered), catalog_index)

    assert not _rests_on(report, "pin")
    assert report.suggestions[0].slug == "dependency-conflict"
