"""A signature whose line has several usual causes (`lead_only`) ranks its incident but never
makes it the answer; neither does the incident's symptom line when only such signatures
recognise it, and another signature of the incident still confirms it."""

from __future__ import annotations

import pytest
from django.utils import translation

from common.translation import phrase_text
from incidents.logmatch import IncidentSpec, SignatureSpec, analyze, build_index

BARE = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
WARNED = "\n".join(
    [
        "/usr/lib/python3.11/site-packages/torch/utils/checkpoint.py:87: UserWarning: "
        "None of the inputs have requires_grad=True. Gradients will be None",
        BARE,
    ]
)
INCIDENTS = [
    IncidentSpec(
        "frozen-inputs",
        "No gradient reaches the loss under gradient checkpointing",
        "train",
        BARE,
        "Only adapter weights require grad and no input of a checkpointed block does.",
    )
]
LOSS = SignatureSpec("loss", "frozen-inputs", r"does not require grad", lead_only=True)
CHECKPOINT = SignatureSpec(
    "checkpoint", "frozen-inputs", r"None of the inputs have requires_grad=True"
)


def _first(tail: str, signatures):
    report = analyze(tail, build_index(INCIDENTS, list(signatures)))
    return report.suggestions[0]


def test_a_symptom_line_only_lead_only_signatures_recognise_is_a_lead():
    first = _first(BARE, [LOSS, CHECKPOINT])
    assert first.slug == "frozen-inputs" and not first.confident


def test_the_same_symptom_line_confirms_when_its_signature_is_not_lead_only():
    sure = SignatureSpec(LOSS.key, LOSS.slug, LOSS.pattern)
    assert _first(BARE, [sure, CHECKPOINT]).confident


def test_a_symptom_line_no_signature_recognises_still_confirms():
    assert _first(BARE, [CHECKPOINT]).confident


def test_another_signature_of_the_incident_makes_it_the_answer():
    first = _first(WARNED, [LOSS, CHECKPOINT])
    assert first.slug == "frozen-inputs" and first.confident


def test_a_lead_on_the_line_another_signature_confirms_does_not_hide_the_proof():
    """A long line can hold a lead (a frame path quoted inside an error message) and the
    failure itself: the line speaks with the signature that confirms, even where the lead
    would score higher."""
    line = (
        'ERROR Failed to compile Op [Cast]. File "/opt/site-packages/tbe/common/errors.py", '
        "line 111"
    )
    incidents = [IncidentSpec("op-compile", "Operator compile failed", "train", "", "")]
    frame = SignatureSpec("frame", "op-compile", r'File "[^"]*site-packages/tbe/', lead_only=True)
    failed = SignatureSpec("failed", "op-compile", r"Failed to compile Op")
    first = analyze(line, build_index(incidents, [frame, failed])).suggestions[0]
    assert first.slug == "op-compile" and first.confident, first.why
    assert first.evidence[0].signature == "failed"


def test_the_answer_from_a_lead_line_and_its_proof_says_which_line_names_the_cause():
    """The strongest line of the answer is a lead-only one: the explanation says another line
    names the cause instead of calling the answer a mere lead, in both languages."""
    why = _first(WARNED, [LOSS, CHECKPOINT]).why

    with translation.override("en"):
        english = phrase_text(why)
    with translation.override("zh-hans"):
        chinese = phrase_text(why)

    assert "symptom line matched ERROR line 2, a line with several usual causes" in english
    assert "signature checkpoint matched" in english and "names the cause" in english
    assert "not the answer" not in english
    assert "点明了是哪一个" in chinese and "不是答案" not in chinese


def test_a_lead_alone_is_still_called_a_lead():
    tail = "ERROR: the adapter output does not require grad"
    with translation.override("en"):
        assert "(a lead, not the answer)" in phrase_text(_first(tail, [LOSS]).why)


# Lines of the shipped book that name a failure without its cause: each ranks the incident it
# usually is, never confidently. Each was confidently wrong on a real tail gathered blind.
NO_BACKEND = """\
  File "/usr/local/lib/python3.5/dist-packages/librosa/core/audio.py", line 112, in load
    with audioread.audio_open(os.path.realpath(path)) as input_file:
  File "/usr/local/lib/python3.5/dist-packages/audioread/__init__.py", line 116, in audio_open
    raise NoBackendError()
audioread.NoBackendError
"""
NCCL_SYSTEM_TRACE = """\
node-1:83:2520 [0] NCCL INFO Using network Socket
node-1:83:2520 [0] NCCL INFO include/socket.h:403 -> 2
node-1:83:2520 [0] NCCL INFO transport/net.cc:476 -> 2
node-1:83:2520 [0] NCCL INFO transport/net.cc:1202 -> 2 [Async thread]
"""
CUDNN_NOT_INITIALIZED = """\
  File "train.py", line 88, in train
    loss.backward()
RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED
"""
CATALOG_LEADS = [
    pytest.param(
        CUDNN_NOT_INITIALIZED, "version-mismatch", id="cuDNN not initialised: or no memory"
    ),
    pytest.param(
        NO_BACKEND, "audio-backend-missing", id="bare NoBackendError: or an unreadable file"
    ),
    pytest.param(NCCL_SYSTEM_TRACE, "nccl-network-setup", id="NCCL trace -> 2 with no WARN"),
    pytest.param(
        "[rank2]:[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=2109, OpType=_REDUCE_SCATTER_BASE, NumelIn=98566144, "
        "NumelOut=12320768, Timeout(ms)=1800000) ran for 1800099 milliseconds before timing out.\n",
        "collective-timeout",
        id="a watchdog timeout alone: a slow, stuck or busy rank, another collective, the network",
    ),
    pytest.param(
        '  File "train.py", line 88, in evaluate\n    torch.cuda.synchronize()\n'
        "AssertionError: Torch not compiled with CUDA enabled\n",
        "version-mismatch",
        id="no CUDA in torch: a CPU wheel, or CUDA-only code on a machine without a GPU",
    ),
    pytest.param(
        "IndexError: index 34 is out of bounds for dimension 0 with size 34\n",
        "index-out-of-range",
        id="indexed past the size: a token id past the vocabulary, or the code's own bug",
    ),
    pytest.param(
        "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket "
        "SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) timed out after "
        "1800000ms\n",
        "rank-busy-past-timeout",
        id="a store wait timed out over an open connection: a busy rank, or a dead one",
    ),
    pytest.param(
        "[ERROR] RUNTIME(278,python3):2025-08-26-03:01:17.587.983 [api_c_device.cc:23]278 "
        "rtGetDeviceCount:ErrCode=507899, desc=[driver error:internal error], InnerCode=0x7020010\n",
        "npu-device-unavailable",
        id="NPUs cannot be counted: devices not mounted, held, or hidden; not a driver fault",
    ),
    pytest.param(
        "ModuleNotFoundError: No module named 'colossalai.legacy'\n",
        "python-module-missing",
        id="a submodule missing: never built, or removed by a release",
    ),
    pytest.param(
        "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. "
        "1/4 clients joined.\n",
        "collective-timeout",
        id="a rendezvous timeout: a network, a busy or dead rank, a node never started",
    ),
    pytest.param(
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. "
        "See stack trace (above) for the root cause.\n",
        "concurrency-crash",
        id="a dead vLLM engine: whatever killed it is above",
    ),
    pytest.param(
        "[rank3]:[E109 22:46:25.936329218 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=493, OpType=ALLGATHER, NumelIn=1, "
        "NumelOut=4, Timeout(ms)=60000) ran for 60046 milliseconds before timing out.\n",
        "rank-busy-past-timeout",
        id="a one-element collective timed out late: a rank busy alone, or a peer lost",
    ),
]


@pytest.mark.parametrize(("tail", "slug"), CATALOG_LEADS)
def test_a_line_of_the_book_with_several_causes_is_a_lead(catalog_index, tail, slug):
    first = analyze(tail, catalog_index).suggestions[0]
    assert (first.slug, first.confident) == (slug, False)


def test_the_nccl_warn_line_that_starts_a_trace_decides_not_the_traces_code(catalog_index):
    """A WARN line says what failed; the `-> 2` lines after it only carry the code back up."""
    tail = (
        "worker-23:83:2526 [0] misc/socket.cc:503 NCCL WARN Net : Call to recv from "
        "10.96.188.199<41468> failed : Connection reset by peer\n" + NCCL_SYSTEM_TRACE
    )
    first = analyze(tail, catalog_index).suggestions[0]
    assert (first.slug, first.evidence[0].signature) == ("collective-timeout", "nccl-socket-warn")


def test_an_answer_its_evidence_confirms_ranks_above_a_higher_scoring_lead(catalog_index):
    """NCCL falling back to sockets is a lead for slow training and scores high; the WARN line
    of a failed receive confirms a lost peer. The answer comes first, the lead after it."""
    tail = (
        "worker-23:83:2526 [0] misc/socket.cc:503 NCCL WARN Net : Call to recv from "
        "10.96.188.199<41468> failed : Connection reset by peer\n"
        "node-1:83:2520 [0] NCCL INFO Using network Socket\n"
    )
    first, second = analyze(tail, catalog_index).suggestions[:2]
    assert (first.slug, first.confident) == ("collective-timeout", True)
    assert (second.slug, second.confident) == ("slow-training", False)
    assert second.score > first.score
    with translation.override("en"):
        assert (
            f"below {second.score:.2f} for slow-training, yet first because its evidence "
            "confirms it"
        ) in phrase_text(first.why)
    with translation.override("zh-hans"):
        assert f"低于 slow-training 的 {second.score:.2f}，但它的证据足以确认" in phrase_text(
            first.why
        )
