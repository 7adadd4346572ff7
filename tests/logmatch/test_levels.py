"""classify / line_level: one level per line, for the formats our users paste."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incidents.logmatch.levels import RULES, classify, line_level, rule_name
from incidents.logmatch.types import Level

E, W, I = Level.ERROR, Level.WARNING, Level.INFO  # noqa: E741

SINGLE_LINES = [
    # Toolchains: their failure lines are errors whatever their punctuation
    ("ptxas fatal   : Unresolved extern function '_Z10kernelv'", E),
    (
        "ptxas /tmp/compile-ptx-src-9e79cc, line 59; error   : Feature '.bf16' requires .target sm_80",
        E,
    ),
    (
        "ptxas /tmp/tmpxft_0001.ptx, line 12; warning : Double is not supported. Demoting to float",
        W,
    ),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_89'", E),
    ("ptxas-blackwell fatal   : Value 'sm_110a' is not defined for option 'gpu-name'", E),
    # TensorFlow's and XLA's C++ log: a date, the time, then one severity letter
    (
        "2021-05-20 10:09:06.617783: E external/org_tensorflow/tensorflow/stream_executor/gpu/"
        "asm_compiler.cc:93] You are using ptxas 8.x, but TF requires ptxas 9.x",
        E,
    ),
    ("2023-01-05 12:00:01.123456: W tensorflow/core/common_runtime/bfc_allocator.cc:290] ok", W),
    ("2023-01-05 12:00:01.123456: I tensorflow/core/platform/cpu_feature_guard.cc:193] ok", I),
    ("PytorchStreamReader failed reading zip archive: failed finding central directory", E),
    # CANN's report of a device fault, also when its code prefix (EZ9999) was cut off
    (
        "        The error from device(chipId:2, dieId:0), serial number is 3, there is an"
        " exception of fftsplus aicore error, core id is 5, error code = 0x800000",
        E,
    ),
    ("query:compiler_depend.ts:61 NPU function error: acl::Foo(event_), error code is 507011", E),
    ("rtStreamSynchronize returned, error code = 0x0", I),
    ("/usr/bin/ld: cannot find -lcudart", E),
    ("Makefile:190: recipe for target 'all' failed", E),
    ("*** extras/check_dependencies.sh: Intel MKL is not installed ***", E),
    ("***** Running training *****", I),
    ("*** Starting epoch 3 ***", I),
    # A C function that names itself before saying it failed (llama.cpp, shell tools)
    ("gguf_init_from_file: invalid magic number 73726576", E),
    ("ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected", E),
    ("cp: cannot stat 'exp/tri3b/final.mdl': No such file or directory", E),
    ("llama_model_loader: loaded meta data with 19 key-value pairs and 291 tensors", I),
    # pip's and uv's error blocks open with a cross
    ("  × No solution found when resolving dependencies:", E),
    ("× Encountered error while generating package metadata.", E),
    ("  ╰─▶ Because torch==2.11.0+cpu has no wheels with a matching platform tag", I),
    ("print_info: file type   = Q4_K - Medium", I),
    # The shell failing to run a script: `Not a directory` as much as `No such file or directory`
    ("./run.sh: line 22: utils/prepare_lang.sh: Not a directory", E),
    ("run.sh: line 64: utils/parse_options.sh: No such file or directory", E),
    # A process or actor that died (Ray's ActorDiedError detail, a worker that died)
    (
        "The actor is dead because its worker process has died. Worker exit type: "
        "NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low "
        "on memory.",
        E,
    ),
    ("Worker proc VllmWorker-0 died unexpectedly, shutting down executor.", E),
    # The shell's `command not found` in other system languages
    ("wsj/s5/utils/prepare_lang.sh: linha 466: fstcompile: comando não encontrado", E),
    ("utils/prepare_lang.sh: 行 493: fstaddselfloops: 未找到命令", E),
    ("run.sh: Zeile 3: steps/align_si.sh: Befehl nicht gefunden", E),
    # Android's logcat, brief and threadtime layouts; a tag or message that says nothing of errors
    ("E/VoskAPI: MaybeCreateResampler():online-feature.cc:99) Sampling frequency mismatch", E),
    ("A/libc: Fatal signal 6 (SIGABRT), code -6 (SI_TKILL) in tid 29975 (pool-8-thread-1)", E),
    ("W/VoskAPI( 1234): Model loaded slowly", W),
    ("I/VoskAPI: Decoding finished", I),
    ("03-17 16:13:38.811  1702  2395 E Sherpa  : Wave file has an unknown sample rate", E),
    ("03-17 16:13:38.811  1702  2395 D Sherpa  : Error rate 0.12 on the batch", I),
    # llama.cpp's common log: a level letter after the time, whatever the message says
    (
        "3.49.305.569 E srv                send_error: task 1 | error = decoding exceeds the "
        "available context size. try increasing the context size.",
        E,
    ),
    (
        "llama_model_load: error loading model: check_tensor_dims: tensor 'token_embd.weight' "
        "has wrong shape; expected  4096, 128256, got  4096, 128258,     1,     1",
        E,
    ),
    ("0.00.012.345 W llama_context: n_ctx_per_seq (4096) < n_ctx_train (131072)", W),
    ("3.49.305.838 I srv  log_server_response: rid 3524 | POST /v1/embeddings | status 500", I),
    # Python logging
    ("2024-01-01 12:00:00,123 - trainer - ERROR - step failed", E),
    ("2024-01-01 12:00:00,123 - trainer - WARNING - slow step", W),
    ("2024-01-01 12:00:00,123 - trainer - INFO - step 10 done", I),
    ("ERROR:root:could not open shard", E),
    ("WARNING:tensorflow:From x.py:12: calling foo", W),
    ("[2024-01-01 12:00:00,123][WARNING] learning rate is high", W),
    ("[2024-01-01 12:00:00,123][ERROR] worker exited", E),
    ("CRITICAL: disk failure", E),
    ("FATAL: cannot continue", E),
    ("2024-04-27 10:13:05 | ERROR | stderr | boom", E),
    ("[INFO|trainer.py:1715] 2023-11-03 15:37:36,125 >> ***** Running training *****", I),
    ("wandb: ERROR api_key not configured (no-tty).", E),
    # exceptions without a traceback
    ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", E),
    ("torch.cuda.OutOfMemoryError: CUDA out of memory.", E),
    ("Exception: Expected exp/chain/tri6b_tree/ali.1.gz to exist.", E),
    ("huggingface_hub.utils._errors.GatedRepoError: 401 Client Error.", E),
    ("KeyboardInterrupt", E),
    ("/usr/lib/python3/site-packages/x.py:12: UserWarning: deprecated call", W),
    # glog and PyTorch c10
    ("E1130 12:00:00.123456 12345 file.cc:45] Check failed: x > 0", E),
    ("F1130 12:00:00.123456 12345 file.cc:45] fatal", E),
    ("W1130 12:00:00.123456 12345 file.cc:45] something odd", W),
    ("I1130 12:00:00.123456 12345 file.cc:45] started", I),
    ("[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout", E),
    ("[rank4]:[E1016 03:31:38.928463388 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog", E),
    ("[W ProcessGroupNCCL.cpp:1856] Warning: 0NCCL_BLOCKING_WAIT is not set", W),
    ("[rank7]:[W609 06:57:47.819535026 compiler_depend.ts:877] Warning: HCCL timeout", W),
    # Kaldi
    ("WARNING (gmm-align-compiled[5.5]:AlignUtteranceWrapper():align-utils.cc:93) Retrying", W),
    ("ERROR (gmm-align-compiled[5.5]:main():gmm-align-compiled.cc:120) bad model", E),
    ("LOG (gmm-align-compiled[5.5]:main():gmm-align-compiled.cc:127) Done 100 files, 0 errors", I),
    ("LOG (compute-wer[5.5]:main():compute-wer.cc:105) error rate computed", I),
    ("ASSERTION_FAILED (nnet3-train[5.5]:Foo():nnet.cc:12) Assertion failed: (x)", E),
    ("VLOG[2] (nnet3-train[5.5]:Bar():nnet.cc:88) objective -1.2", I),
    # NCCL / HCCL / Ascend
    ("node1:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed", W),
    ("node1:140:39062 [0] NCCL INFO Setting affinity for GPU 0", I),
    ("[ERROR] HCCL(1234,python):2024-01-01 HcclCommInit failed", E),
    ("EI9999: Inner Error! The device memory is not enough", E),
    ("EE9999: Inner Error, Please contact support engineer!", E),
    # DeepSpeed, vLLM
    ("[WARNING] [stage3.py:1850:step] 3 pytorch allocator cache flushes", W),
    ("[2023-04-28 06:51:29,903] [INFO] [loss_scaler.py:188:update_scale] [deepspeed] OVERFLOW!", I),
    ("ERROR 11-30 12:00:00 [engine.py:123] Engine background task failed", E),
    ("WARNING 11-30 12:00:00 [config.py:456] Casting torch.bfloat16 to torch.float16.", W),
    ("INFO 04-27 10:11:03 llm_engine.py:70] Initializing an LLM engine", I),
    ("(VllmWorker rank=0 pid=1) ERROR 11-30 12:00:00 [worker.py:1] RuntimeError: boom", E),
    # Slurm
    (
        "slurmstepd: error: *** JOB 123 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***",
        E,
    ),
    ("*** STEP 123.0 ON n1 CANCELLED AT 2024-01-01T00:00:00 ***", E),
    ("srun: error: n1: task 0: Exited with exit code 1", E),
    # shell, make, compilers
    ("+ python train.py --log-level error", I),
    ("++ export NCCL_DEBUG=WARN", I),
    ("make: *** [Makefile:12: all] Error 2", E),
    ("make[2]: *** [src/CMakeFiles/foo.dir/build.make:63: foo.o] Error 1", E),
    ("make[1]: Leaving directory '/home/u/error_project'", I),
    ("make[1]: Entering directory '/src/kaldi/src/base'", I),
    ("foo.cc:12:3: error: 'x' was not declared in this scope", E),
    ("foo.cc:12:3: warning: unused variable 'y' [-Wunused-variable]", W),
    ("warning: implicit declaration of function 'bar'", W),
    ("foo.cc:12:3: note: declared here", I),
    # CMake writes its level as "CMake Error" / "CMake Warning", not as an error: field
    ("CMake Error at CMakeLists.txt:12 (find_package):", E),
    ("CMake Error: The source directory does not exist.", E),
    (
        "CMake Error at /usr/share/cmake-3.28/Modules/CMakeDetermineCUDACompiler.cmake:270 (message):",
        E,
    ),
    ("CMake Warning at CMakeLists.txt:40 (message):", W),
    ("CMake Warning (dev) at CMakeLists.txt:5 (project):", W),
    ("CMake Deprecation Warning at CMakeLists.txt:1 (cmake_minimum_required):", W),
    ("-- Configuring done (CMake 3.28)", I),
    ("/usr/bin/ld: main.o: undefined reference to `kaldi::Foo()'", E),
    ("collect2: error: ld returned 1 exit status", E),
    # build tools that report a failed step without an "error:" field
    ("  *** CMake build failed", E),
    ("      *** CMake configuration failed", E),
    ("CMake Generate step failed.  Build files cannot be regenerated correctly.", E),
    ("  × Getting requirements to build wheel did not run successfully.", E),
    ("/usr/bin/nvcc: returned nonzero exit status", E),
    ("cc1plus: all warnings being treated as errors", E),
    ("error[E0658]: use of unstable library feature 'once_cell'", E),
    ("nvc-Error-Unknown switch: -fno-strict-overflow", E),
    (r"C:\torch\include\torch/all.h(4): fatal error C1189: #error:  C++17 or later", E),
    ("csrc/flash_api.cpp(212): error C2065: 'x': undeclared identifier", E),
    ("LINK : fatal error LNK1181: cannot open input file 'cudart.lib'", E),
    ("ops.cpp(40): warning C4267: 'argument': conversion from 'size_t' to 'int'", W),
    ("ld: library not found for -lomp", E),
    # signals and misc
    ("Segmentation fault (core dumped)", E),
    ("Killed", E),
    ("run.sh: line 12: 4321 Killed python train.py", E),
    ("Aborted (core dumped)", E),
    # Perl's die (Kaldi's run.pl, queue.pl) and the interpreter's own warnings
    ("usage: run.pl log-file command-line arguments... at utils/parallel/run.pl line 26.", E),
    ("queue.pl: job failed, log is in exp/tri1/log/align.1.log at utils/queue.pl line 96.", E),
    (
        "Use of uninitialized value $x in concatenation (.) or string at utils/int2sym.pl line 12.",
        W,
    ),
    ('Argument "abc" isn\'t numeric in addition (+) at local/score.pl line 40, <F> line 3.', W),
    ("epoch 3 done at 12:00, see exp/log line 4", I),
    ("panic: runtime error: index out of range", E),
    ("terminate called after throwing an instance of 'std::runtime_error'", E),
    ("OSError: [Errno 28] No space left on device", E),
    # a call that failed, however its return code is written after it
    ("Call aclrtSetDevice(device->id) failed : 507033 at file runtime/runtime.cc line 430", E),
    ("cudaMemcpyAsync(dst, src, n, kind, stream) failed", E),
    ("error loading model: unknown (magic, version) combination: 46554747, 00000002", E),
    ("error while parsing the config: unexpected token at line 3", E),
    ("error loading checkpoints is retried three times by default", I),
    # Chinese
    ("训练过程中发生错误：显存不足", E),
    ("任务失败，请检查配置", E),
    ("警告：学习率过大", W),
    ("连接超时，任务失败", E),
    ("无法连接到服务器，加载失败", E),
    ("未知错误：进程退出", E),
    ("节点 0 失败，正在重试", E),
    ("错误码：0x1f", E),
    # Chinese "no errors at all" and counts of zero are not errors
    ("全量重跑之后开发集词错误率涨了两个点，日志里没有任何报错", I),
    ("没有任何报错", I),
    ("未发现错误", I),
    ("检查完成，未发现任何异常", I),
    ("数据校验通过，无错误", I),
    ("训练结束，共 0 个错误", I),
    ("失败数：0", I),
    ("错误：0，警告：3", I),
    ("开发集错误率 12.3%", I),
    (
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidGraph: [ONNXRuntimeError] : 10 : "
        "INVALID_GRAPH : This is an invalidMul with domain_version of 13",
        E,
    ),
    (
        "NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an "
        "implementation for ConvInteger(10) node with name ''",
        E,
    ),
    ("[1]    9301 killed     python3 scripts/dream.py", E),
    ("zsh: killed     python finetune.py --config configs/lora.yaml", E),
    ("zsh: bus error  python train.py", E),
    ("sh: 1: 4567 killed   python x.py", E),
    ("[1]  + 30512 done       python main.py --epochs 50", I),
    (
        ":1:hip_fatbin.cpp           :687 : 114369963532 us:  No compatible code objects found "
        "for: gfx1152, value of HIP_FORCE_SPIRV_CODEOBJECT: 0",
        E,
    ),
    # plain lines and false positives
    ("epoch 3 step 1200 loss 2.345", I),
    ("error_rate=0.1 wer=12.3", I),
    ("errors: 0", I),
    ("Validation finished, no errors found", I),
    ("python run.py --warning-level 2", I),
    ("loading helpers from error_utils.py", I),
    ("0 warnings, 0 errors", I),
    ("export LOG_LEVEL=ERROR", I),
    ("", I),
]


@pytest.mark.parametrize(("line", "level"), SINGLE_LINES, ids=[s[:50] for s, _ in SINGLE_LINES])
def test_single_line(line, level):
    assert line_level(line) is level, rule_name(line)
    assert classify([line]) == [level]


def test_the_false_positive_guards_still_hold_next_to_the_new_rules():
    assert line_level("CMake Error at CMakeLists.txt:12 (find_package):") is E
    for line in ("error_rate=0.1 wer=12.3", "errors: 0", "Validation finished, no errors found"):
        assert line_level(line) is I, rule_name(line)
    assert rule_name("没有任何报错") == "chinese no errors"
    assert rule_name("未发现错误") == "chinese no errors"
    assert rule_name("任务失败，请检查配置") == "chinese error"


def test_the_rules_tell_zero_from_other_digits_and_nothing_else():
    """classify matches one digit key per line shape (digits.ZERO_OR_NOT: 0 stays, 1-9 become
    1). That is exact only while no rule names another digit or a class of some digits."""
    for name, pattern, _level in RULES:
        rest = re.sub(r"\\d|\[1-9\]|\{\d+(?:,\d*)?\}", "", pattern)
        assert set(re.findall(r"\d", rest)) <= {"0"}, name
        assert not re.search(r"\[[^\]]*\d[^\]]*\]", rest), name


DIGIT_PIECES = st.sampled_from(
    [
        "errors: ",
        "error: ",
        "exit code ",
        "exit status: ",
        "failed",
        " jobs failed",
        "no ",
        "0",
        "1",
        "5",
        "9",
        "10",
        "00",
        "E",
        "EI",
        "W",
        "I",
        " ",
        ":",
        "=",
        ".",
        "[",
        "]",
        "错误：",
        "失败数：",
        " 个错误",
        "E1130 12:00:00.123456 12345 file.cc:45] ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(DIGIT_PIECES, st.integers(0, 10**6).map(str))).map("".join), max_size=30
    )
)
def test_classify_equals_the_rule_table_on_every_line(lines):
    """Lines that share a digit key share a level: the same as matching every line alone."""
    assert classify(lines) == [line_level(line) for line in lines]


def test_lines_that_differ_in_digits_are_classified_once_each_correctly():
    lines = ["0 jobs failed", "3 jobs failed", "exit code 0", "exit code 2", "step 10", "step 20"]
    assert classify(lines) == [I, E, I, E, I, I]


def test_logger_level_field_beats_keywords_in_the_message():
    assert line_level("2024-01-01 - x - INFO - retried after RuntimeError: timeout") is I
    assert line_level("[INFO] 0 errors, Segmentation fault handler installed") is I


def test_rule_table_is_ordered_and_named():
    names = [name for name, _pattern, _level in RULES]
    assert len(names) == len(set(names))
    assert names.index("logger info") < names.index("exception")
    assert names.index("no errors") < names.index("error:")
    assert rule_name("plain text") is None
    assert rule_name("Killed") == "killed"


class TestTracebacks:
    def test_full_traceback_is_error(self):
        lines = [
            "epoch 1 loss 2.0",
            "Traceback (most recent call last):",
            '  File "train.py", line 10, in <module>',
            "    main()",
            '  File "train.py", line 5, in main',
            "    raise ValueError('bad config')",
            "ValueError: bad config",
            "cleanup done",
        ]
        assert classify(lines) == [I, E, E, E, E, E, E, I]

    def test_exception_line_without_error_suffix_ends_the_traceback(self):
        lines = [
            "Traceback (most recent call last):",
            '  File "x.py", line 1, in <module>',
            "StopIteration",
            "next run",
        ]
        assert classify(lines) == [E, E, E, I]

    def test_chained_exceptions(self):
        lines = [
            "Traceback (most recent call last):",
            '  File "a.py", line 1, in f',
            "KeyError: 'x'",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            '  File "a.py", line 3, in g',
            "RuntimeError: wrapped",
        ]
        assert classify(lines) == [E, E, E, I, E, I, E, E, E]

    def test_direct_cause_chain(self):
        lines = ["The above exception was the direct cause of the following exception:"]
        assert classify(lines) == [E]

    def test_tail_cut_inside_a_traceback(self):
        lines = [
            "    return cupy.ndarray(shape, dtype, order=order)",
            '  File "cupy/core/core.pyx", line 150, in cupy.core.core.ndarray.__init__',
            '  File "cupy/cuda/memory.pyx", line 517, in cupy.cuda.memory.alloc',
            "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 80384 bytes",
            "# Ended (code 256) at Sat Nov 17 12:59:03 SGT 2018",
        ]
        assert classify(lines) == [E, E, E, E, I]

    def test_prefixed_traceback_from_torchrun(self):
        lines = [
            "[rank0]: Traceback (most recent call last):",
            '[rank0]:   File "/w/train.py", line 12, in <module>',
            "[rank0]:     trainer.train()",
            "[rank0]: torch.OutOfMemoryError: CUDA out of memory.",
            "[rank1]: still running",
        ]
        assert classify(lines) == [E, E, E, E, I]

    def test_indented_traceback_inside_pip_output(self):
        lines = [
            "      running bdist_wheel",
            "      Traceback (most recent call last):",
            '        File "<string>", line 2, in <module>',
            "      OSError: CUDA_HOME environment variable is not set.",
            "      [end of output]",
        ]
        assert classify(lines) == [I, E, E, E, I]

    def test_blank_line_ends_a_cut_traceback(self):
        lines = ["Traceback (most recent call last):", '  File "x.py", line 1', "", "  indented"]
        assert classify(lines) == [E, E, I, I]

    def test_kaldi_stack_trace(self):
        lines = [
            "ERROR (online2-wav-nnet3-latgen-faster[5.5]:Foo():x.cc:45) dimension mismatch",
            "",
            "[ Stack-Trace: ]",
            "",
            "kaldi::MessageLogger::HandleMessage(kaldi::LogMessageEnvelope const&, char const*)",
            "main",
            "",
            "LOG (online2-wav-nnet3-latgen-faster[5.5]:main():x.cc:12) Done.",
        ]
        assert classify(lines) == [E, I, E, I, E, E, I, I]

    def test_java_frames_after_an_exception(self):
        lines = [
            "java.io.IOException: Connection reset",
            "\tat org.apache.hadoop.ipc.Client.call(Client.java:1475)",
            "\t... 12 more",
            "Caused by: java.net.SocketException: reset",
            "next",
        ]
        assert classify(lines) == [E, E, E, E, I]


def test_one_level_per_line_for_a_real_tail():
    lines = [
        "WARNING (gmm-align-compiled[5.5.1068]:AlignUtteranceWrapper():decoder-wrappers.cc:617) "
        "Retrying utterance 1-71 with beam 40",
        "LOG (gmm-align-compiled[5.5.1068]:main():gmm-align-compiled.cc:127) 1-72",
    ] * 50
    assert classify(lines) == [W, I] * 50


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=80), max_size=40))
def test_classify_never_crashes_and_keeps_length(lines):
    levels = classify(lines)
    assert len(levels) == len(lines)
    assert all(isinstance(level, Level) for level in levels)


def test_an_exception_whose_message_starts_on_the_next_line_keeps_it_an_error():
    lines = [
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "    x.cuda()",
        "AssertionError: ",
        "The accelerator driver on this host is too old (found version 9000).",
        "Please update the driver.",
        "",
        "epoch 3 done",
    ]

    levels = classify(lines)

    assert levels[4:6] == [Level.ERROR, Level.ERROR]
    assert levels[7] is Level.INFO


def test_canns_error_code_header_keeps_the_message_under_it_an_error():
    # vllm-project/vllm-ascend#12907: the reason is on the lines under the coded header
    lines = [
        "aclnnQuantMatmulWeightNz failed, error code is 161002",
        "AclNN_Parameter_Error(EZ1001):",
        "Tensor scale not implemented for DT_FLOAT16,",
        "should be in dtype support list",
        "[DT_UINT64, DT_BFLOAT16, DT_INT64, DT_FLOAT].",
    ]

    assert classify(lines) == [Level.ERROR] * 5


def test_a_cmake_message_error_keeps_its_indented_message_an_error():
    # ggml-org/llama.cpp#10719: the reason is on the lines under "CMake Error at … (message):"
    lines = [
        "-- CANN: SOC_VERSION auto-detected is:Ascend310B1",
        "CMake Error at /usr/local/Ascend/ascend-toolkit/latest/compiler/tikcpp/"
        "ascendc_kernel_cmake/host_config.cmake:20 (message):",
        "  SOC_VERSION ascend310b1 does not support, the support list is",
        "  ascend910b1;ascend910b2;ascend910b2c;ascend910b3;ascend910b4;ascend910a;ascend910proa;"
        "ascend910b;ascend910prob;ascend910premiuma;ascend310p1;ascend310p3;ascend310p3vir01;"
        "ascend310p3vir02;ascend310p3vir04;ascend310p3vir08",
        "Call Stack (most recent call first):",
        "",
        "-- Adding CPU backend variant ggml-cpu:  ",
    ]

    levels = classify(lines)

    assert levels[0] is Level.INFO
    assert levels[1:4] == [Level.ERROR, Level.ERROR, Level.ERROR]
    assert levels[6] is Level.INFO


def test_the_indented_lines_under_canns_traceback_are_errors_up_to_the_block_end():
    """CANN prints an error code, its cause and solution, then "TraceBack (most recent call
    last):" and the failed calls indented under it: those say what broke, though no line of
    them carries a level. The block ends at the first line not indented under its prefix."""
    lines = [
        "[PID: 389] 2026-05-01-10:59:14.702.326 Device_Absent/Abnormal(EL0001): Device not found.",
        "        Possible Cause: Device does not exist or is abnormal.",
        "        TraceBack (most recent call last):",
        "        Device[1] lost heartbeat.[FUNC:SyncTask][FILE:direct_hwts_engine.cc][LINE:407]",
        "        wait for compute device to finish, runtime result = 507010.[FUNC:ReportCallError]",
        "INFO 05-01 10:59:15 engine.py:12] shutting down",
        "        an indented line after the block",
        "(Worker pid=162657)         TraceBack (most recent call last):",
        "(Worker pid=162657)        Failed to ParseDynamicKernels.",
        "(EngineCore pid=162699)        a line of another process",
    ]

    assert classify(lines) == [E, I, E, E, E, I, I, E, E, I]
