"""A line that only reports that a job was stopped from outside ranks below the line that
says why, whichever comes last."""

from incidents.logmatch import analyze
from incidents.logmatch.generic import is_consequence, is_fallout

TIMEOUT = (
    "[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout:"
    " WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800094 milliseconds"
    " before timing out."
)
SIGTERM = (
    "torch.distributed.elastic.multiprocessing.api: [WARNING] Received 15 death signal,"
    " shutting down workers"
)


def test_a_launcher_told_to_stop_only_reports_the_failure():
    assert is_consequence(SIGTERM)
    assert is_consequence("WARNING: Received Signals.SIGTERM death signal, shutting down workers")
    assert not is_consequence("Received 2 death signal, shutting down workers")  # Ctrl-C


def test_the_cause_beside_it_ranks_first(catalog_index):
    report = analyze(f"{TIMEOUT}\n{SIGTERM}\n", catalog_index)
    assert report.suggestions[0].slug == "collective-timeout"
    alone = analyze(f"step 120 | loss 2.31\n{SIGTERM}\n", catalog_index).suggestions
    assert not any(suggestion.confident for suggestion in alone)  # who sent it is not said


BROKEN_LINKS = (
    "./run.sh: line 22: utils/prepare_lang.sh: Not a directory\n"
    "Preparing language models for test\n"
    "cp: cannot stat 'data/lang': No such file or directory\n"
    "ERROR (arpa2fst[5.5]:Input():kaldi-io.cc:756) Error opening input stream data/lang/words.txt\n"
)


def test_a_missing_input_is_fallout_unless_the_shell_cannot_run_a_script():
    assert is_fallout("cp: cannot stat 'data/lang': No such file or directory")
    assert is_fallout("ERROR (arpa2fst[5.5]:Input():kaldi-io.cc:756) Error opening input stream x")
    assert not is_fallout("./run.sh: line 22: utils/prepare_lang.sh: No such file or directory")
    assert not is_fallout("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")


def test_the_earlier_line_that_explains_a_missing_input_ranks_first(catalog_index):
    report = analyze(BROKEN_LINKS, catalog_index)
    assert report.suggestions[0].slug == "kaldi-path-missing"
    missing = analyze(BROKEN_LINKS.split("\n", 2)[2], catalog_index)  # no earlier line explains it
    assert missing.suggestions[0].slug == "missing-artifact"


def test_a_model_file_missing_after_its_download_failed_is_fallout_of_the_download(
    catalog_index,
):
    """faster-whisper falls back to the cache when the hub cannot be reached, and then cannot
    open the model file that was never downloaded."""
    assert is_fallout("RuntimeError: Unable to open file 'model.bin' in model '/cache/whisper'")
    assert is_fallout("ValueError: Can't find config.json at './sst2_lora'")
    tail = (
        "An error occured while synchronizing the model guillaumekln/faster-whisper-medium from"
        " the Hugging Face Hub:\n"
        "(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries"
        " exceeded with url: /api/models/guillaumekln/faster-whisper-medium/revision/main"
        " (Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED]"
        " certificate verify failed: self signed certificate in certificate chain'))\"))\n"
        "Trying to load the model directly from the local cache, if it exists.\n"
        "Traceback (most recent call last):\n"
        '  File "faster_whisper/transcribe.py", line 129, in __init__\n'
        "RuntimeError: Unable to open file 'model.bin' in model"
        " 'C:\\\\cache\\\\hub\\\\models--guillaumekln--faster-whisper-medium'\n"
    )
    assert analyze(tail, catalog_index).suggestions[0].slug == "hub-unreachable"


def test_a_stray_warning_before_a_missing_input_explains_nothing(catalog_index):
    tail = (
        "WARNING (gmm-align-compiled[5.5.1068]:AlignUtteranceWrapper():decoder/decoder-wrappers.cc:617)"
        " Retrying utterance spk012-utt0341 with beam 40\n"
        "cp: cannot stat 'exp/tri3/final.mdl': No such file or directory\n"
    )
    assert analyze(tail, catalog_index).suggestions[0].slug == "missing-artifact"


ENGINE_DEAD = "(EngineCore_DP0 pid=413) ERROR 11-10 12:30:57 [core.py:710] EngineCore encountered a fatal error."
NPU_OP_MISSING = (
    "(Worker_DP0_TP1_EP1 pid=507) ERROR 12-18 08:52:10 [multiproc_executor.py:822] RuntimeError:"
    " aclnnLightningIndexer or aclnnLightningIndexerGetWorkspaceSize not in libopapi.so,"
    " or libopapi.sonot found."
)


def test_a_serving_engine_that_died_only_reports_the_failure():
    assert is_consequence(ENGINE_DEAD)
    assert is_consequence(
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue."
    )
    assert is_consequence(
        "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already."
    )


def test_the_reason_the_engine_died_ranks_above_its_death(catalog_index):
    report = analyze(f"{NPU_OP_MISSING}\n{ENGINE_DEAD}\n", catalog_index)
    assert report.suggestions[0].slug == "ascend-op-no-binary"
    alone = analyze(
        f"INFO 11-10 12:30:50 [loggers.py:123] Running: 96 reqs\n{ENGINE_DEAD}\n", catalog_index
    )
    assert alone.suggestions[0].slug == "concurrency-crash"


def test_recipe_job_wrappers_only_report_the_failure():
    assert is_consequence(
        "# Ended (code 1) at Tue Oct 20 01:46:41 UTC 2020, elapsed time 255 seconds"
    )
    assert not is_consequence(
        "# Ended (code 0) at Tue Oct 20 01:46:41 UTC 2020, elapsed time 255 seconds"
    )
    assert is_consequence("12/01/2020 22:46:24|worker|master|W|rescheduling job 84.1")
    assert is_consequence("slurm.pl: 3 / 8 failed, log is in exp/tri3/log/align.*.log")


def test_the_job_log_line_naming_the_cause_ranks_above_its_ended_banner(catalog_index):
    tail = (
        "bash: line 1: compute-mfcc-feats: command not found\n"
        "# Accounting: time=0 threads=1\n"
        "# Ended (code 127) at Fri Feb 15 15:04:00 CST 2019, elapsed time 0 seconds\n"
    )
    report = analyze(tail, catalog_index)
    assert report.suggestions[0].slug == "kaldi-path-missing"


def test_a_serving_engine_that_failed_to_start_only_reports_it():
    for wrapper in (
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        "ERROR 06-30 13:53:19 [core.py:515] EngineCore failed to start.",
        "(VllmWorker rank=0 pid=2445155) ERROR 05-10 16:00:15 [multiproc_executor.py:470] WorkerProc hit an exception.",
        "ERROR 02-07 11:28:27 multiproc_worker_utils.py:124] Worker VllmWorkerProcess pid 645162 died, exit code: -15",
        "ERROR 09-29 05:54:52 [multiproc_executor.py:146] Worker proc VllmWorker-0 died unexpectedly, shutting down executor.",
        "2023-08-17T10:23:27.032737Z ERROR text_generation_launcher: Shard 0 failed to start",
        "Error: ShardCannotStart",
        "[2026-03-03 03:53:36] Received sigquit from a child process. It usually means the child failed.",
    ):
        assert is_consequence(wrapper), wrapper
    assert not is_consequence("ValueError: No available memory for the cache blocks.")


def test_the_cause_before_a_shard_that_failed_to_start_ranks_first(catalog_index):
    tail = (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 15.77 GiB"
        " total capacity; 15.37 GiB already allocated; 13.62 MiB free; 15.77 GiB allowed; 15.40 GiB"
        " reserved in total by PyTorch)\n"
        " rank=0\n"
        "Error: ShardCannotStart\n"
        "2023-08-17T10:23:27.032737Z ERROR text_generation_launcher: Shard 0 failed to start\n"
    )
    report = analyze(tail, catalog_index)
    assert report.suggestions[0].slug == "gpu-oom"


ENGINE_DIED = """\
(EngineCore pid=1426191) torch.AcceleratorError: CUDA error: an illegal memory access was encountered
(APIServer pid=1425872) ERROR 06-15 16:27:50 [serving.py:471]   File "/home/admin/vllm-sc/vllm/v1/engine/async_llm.py", line 660, in output_handler
(EngineCore pid=1426191) Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.
(APIServer pid=1425872) ERROR 06-15 16:27:50 [serving.py:471]     outputs = await engine_core.get_output_async()
(EngineCore pid=1426191) Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
(APIServer pid=1425872) ERROR 06-15 16:27:50 [serving.py:471]               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
(EngineCore pid=1426191)
(APIServer pid=1425872) ERROR 06-15 16:27:50 [serving.py:471]   File "/home/admin/vllm-sc/vllm/v1/engine/core_client.py", line 1046, in get_output_async
(APIServer pid=1425872) ERROR 06-15 16:27:50 [serving.py:471]     raise self._format_exception(outputs) from None
(APIServer pid=1425872) ERROR 06-15 16:27:50 [serving.py:471] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
"""


def test_an_incident_that_recognises_the_cause_too_is_not_demoted_for_the_consequence(
    catalog_index,
):
    """The serving engine's crash recognises both the illegal access and the dead engine;
    training's illegal access only the first. The consequence line must not weigh down the
    incident that also names the cause: in a serving tail, the serving incident answers."""
    first = analyze(ENGINE_DIED, catalog_index).suggestions[0]
    assert (first.slug, first.confident) == ("concurrency-crash", True)


NCCL_INVALID_USAGE = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:2897, invalid usage (run with NCCL_DEBUG=WARN for details),"
    " NCCL version 2.27.3\n"
    "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
    "Last error:\n"
)


def test_nccls_name_for_the_kind_of_failure_only_reports_it():
    assert is_consequence("ncclInvalidUsage: This usually reflects invalid usage of NCCL library.")
    assert is_consequence(
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:518,"
        " unhandled system error, NCCL version 2.4.8"
    )
    assert not is_consequence("Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000")


def test_the_last_error_nccl_names_ranks_above_the_kind_of_failure(catalog_index):
    """NCCL says `invalid usage` and then, under `Last error:`, what failed: no interface to
    bootstrap over is the network set up wrong, not two ranks on one GPU."""
    report = analyze(f"{NCCL_INVALID_USAGE}Bootstrap : no socket interface found\n", catalog_index)
    assert report.suggestions[0].slug == "nccl-network-setup"
    duplicate = "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000\n"
    assert analyze(f"{NCCL_INVALID_USAGE}{duplicate}", catalog_index).suggestions[0].slug == (
        "duplicate-gpu-ranks"
    )
    alone = analyze(NCCL_INVALID_USAGE, catalog_index).suggestions
    assert alone[0].slug == "duplicate-gpu-ranks"
