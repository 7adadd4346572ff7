"""Engine tests need no database: a small hand-made knowledge base, and the shipped catalog."""

from __future__ import annotations

import pytest

from incidents.catalog import engine_specs
from incidents.logmatch import IncidentSpec, KnowledgeIndex, SignatureSpec, build_index

SMALL_INCIDENTS = (
    IncidentSpec(
        slug="gpu-oom",
        title="Accelerator out of memory",
        stage="train",
        symptom="RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; "
        "15.78 GiB total capacity; 13.10 GiB already allocated)",
        description="Batch size or parallel jobs copied from a card with more memory. "
        "Re-estimate the per-card limit and rerun the tiny sample. "
        "显存不足：CUDA 或 NPU 报 out of memory。降低批大小或并行任务数，先跑小样。",
    ),
    IncidentSpec(
        slug="host-oom",
        title="Host memory exhausted",
        stage="train",
        symptom="std::bad_alloc",
        description="Memory not budgeted: corpus hours times peak per hour times jobs. "
        "MemoryError, process killed by the OOM killer, exit 137. 主机内存耗尽。",
    ),
    IncidentSpec(
        slug="disk-full",
        title="Disk full",
        stage="data",
        symptom="OSError: [Errno 28] No space left on device",
        description="Experiment directories silently eat the disk. Check df -BG. 磁盘空间不足。",
    ),
    IncidentSpec(
        slug="nan-loss",
        title="Loss becomes NaN",
        stage="train",
        symptom="loss is nan at step 1200",
        description="The loss falls, then NaN or Inf appears after some steps: an operator "
        "falls back to a path with poor precision. 损失变成 NaN。",
    ),
    IncidentSpec(
        slug="feature-config-drift",
        title="Error rate up after a full rerun",
        stage="data",
        symptom="",
        description="WER up a couple of points after a full rerun, with no error in the logs: "
        "a feature config changed without being synced. 全量重跑后词错误率上升。",
    ),
    IncidentSpec(
        slug="align-retry-flood",
        title="Alignment retries flood the log",
        stage="train",
        symptom="WARNING (gmm-align-compiled[5.5]:AlignUtteranceWrapper():decoder-wrappers.cc:"
        "385) Retrying utterance spk1-utt1 with beam 40",
        description="Transcripts or lexicon do not match the audio, or the beam is too narrow.",
    ),
    IncidentSpec(
        slug="collective-timeout",
        title="Collective operation timed out",
        stage="train",
        symptom="",
        description="A multi-node job hangs; the NCCL or HCCL watchdog times out a collective.",
    ),
)

SMALL_SIGNATURES = (
    SignatureSpec("1", "gpu-oom", r"(?i)(?:CUDA|NPU) out of memory"),
    SignatureSpec("2", "gpu-oom", r"cudaMalloc (?:failed|retries)"),
    SignatureSpec("3", "host-oom", r"std::bad_alloc|MemoryError|Cannot allocate memory"),
    SignatureSpec("4", "host-oom", r"^Killed$"),
    SignatureSpec("5", "disk-full", r"No space left on device|Errno 28"),
    SignatureSpec("6", "nan-loss", r"(?i)\bloss\b[^\n]{0,40}\bnan\b"),
    SignatureSpec("7", "align-retry-flood", r"Retrying utterance \S+ with beam"),
    SignatureSpec("8", "collective-timeout", r"Watchdog caught collective operation timeout"),
    SignatureSpec("9", "collective-timeout", r"(?i)nccl.*timeout"),
)


@pytest.fixture(scope="session")
def small_index() -> KnowledgeIndex:
    return build_index(SMALL_INCIDENTS, SMALL_SIGNATURES)


# A build whose nvcc step the OOM killer took: `Killed`, then only make's and CMake's reports
# of the failed step (the cause is the kill, not the last line).
KILLED_BUILD_STEP = "\n".join(
    [
        "[ 17%] Building NVCC (Device) object src/ATen/CMakeFiles/ATen.dir/THCTensorMode.cu.o",
        "Killed",
        "CMake Error at ATen_generated_THCTensorIndex.cu.o.Release.cmake:279 (message):",
        "  Error generating file",
        "make[2]: *** [src/ATen/CMakeFiles/ATen.dir/THCTensorIndex.cu.o] Error 1",
        "make[2]: *** Waiting for unfinished jobs....",
        "Makefile:127: recipe for target 'all' failed",
    ]
)


@pytest.fixture(scope="session")
def catalog_index() -> KnowledgeIndex:
    return build_index(*engine_specs())
