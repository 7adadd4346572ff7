"""infer_stage: log path first, then program names, then keywords."""

from __future__ import annotations

import re
from bisect import bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.vocabulary import STAGES
from incidents.logmatch import stages
from incidents.logmatch.reading import read_input
from incidents.logmatch.stages import LINE_RULES, infer_stage, infer_stage_clearly

PATHS = [
    ("exp/tri3/log/align.1.log", "train", "alignment"),
    ("exp/nnet3/tdnn/log/train.12.3.log", "train", "acoustic model training"),
    ("exp/tri2/log/acc.5.2.log", "train", "acoustic model training"),
    ("exp/tri3/decode_dev/log/decode.4.log", "serve", "decoding"),
    ("exp/make_mfcc/train/make_mfcc_train.1.log", "data", "feature extraction"),
    ("data/train/log/split.log", "data", "data directory"),
    ("./data/local/dict/lexicon.log", "data", "data directory"),
    ("build/CMakeFiles/CMakeError.log", "build", "build"),
    ("/home/u/k2/build/temp.linux-x86_64-3.8/make.log", "build", "build"),
    ("/var/log/vllm/api_server.log", "serve", "serving"),
    ("logs/finetune_llama.out", "train", "training"),
    ("C:\\runs\\exp\\tri1\\log\\align.3.log", "train", "alignment"),
]


@pytest.mark.parametrize(("path", "stage", "what"), PATHS, ids=[p for p, _s, _w in PATHS])
def test_stage_from_path(path, stage, what):
    found, reason = infer_stage(["nothing telling here"], path)
    assert found == stage
    assert reason == f"log path {path.replace(chr(92), '/')}: {what}"


def test_the_reason_of_the_documented_example():
    assert infer_stage([], "exp/tri3/log/align.1.log") == (
        "train",
        "log path exp/tri3/log/align.1.log: alignment",
    )


def test_path_beats_lines():
    lines = ["python -m vllm.entrypoints.openai.api_server --model x"]
    assert infer_stage(lines, "exp/tri3/log/align.1.log")[0] == "train"


def test_unhelpful_path_falls_back_to_lines():
    stage, reason = infer_stage(["torchrun --nproc_per_node 8 pretrain.py"], "/tmp/out.txt")
    assert stage == "train"
    assert reason.startswith("program torchrun (line 1)")


PROGRAMS = [
    ("gmm-align-compiled --beam=10 --retry-beam=40 final.mdl ark:- ark:-", "train"),
    ("compute-mfcc-feats --config=conf/mfcc.conf scp:wav.scp ark:-", "data"),
    ("nnet3-train --use-gpu=yes exp/nnet3/tdnn/0.mdl", "train"),
    ("torchrun --nnodes 2 --nproc_per_node 8 train.py", "train"),
    ("deepspeed --num_gpus 8 finetune.py --deepspeed ds_config.json", "train"),
    ("python -m vllm.entrypoints.openai.api_server --model Qwen", "serve"),
    ("make[1]: Entering directory '/src/kaldi/src'", "build"),
    ("-- The C compiler identification is GNU 9.4.0 (cmake)", "build"),
    ("gcc -O2 -c foo.c -o foo.o", "build"),
    ("utils/validate_data_dir.sh: Successfully validated data-directory data/train", "data"),
    ("steps/make_mfcc.sh --nj 10 data/train exp/make_mfcc/train mfcc", "data"),
    ("steps/align_fmllr.sh --nj 20 data/train data/lang exp/tri3b exp/tri3b_ali", "train"),
    ("nnet3-latgen-faster --beam=15 final.mdl HCLG.fst ark:feats.ark ark:lat.1", "serve"),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", "train"),
    (
        '  File "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 7',
        "train",
    ),
    ('  File "/icefall/egs/librispeech/ASR/zipformer/train.py", line 1318, in run', "train"),
    ("ptxas fatal   : Unresolved extern function '_Z3foov'", "build"),
    ("  Getting requirements to build wheel ... error", "build"),
    ("error: metadata-generation-failed", "build"),
    (
        '    File "/tmp/pip-build-env-xi8lzs5x/overlay/lib/site-packages/setuptools/build_meta.py"',
        "build",
    ),
    ("ERROR: Failed to build 'cffi' when getting requirements to build wheel", "build"),
    ("      *** scikit-build-core 0.10.7 using CMake 3.31.2 (wheel)", "build"),
    ("error: Microsoft Visual C++ 14.0 or greater is required.", "build"),
    ("In file included from /users/k/vllm-rocm/hipsrc/attention/attention_dtypes.h:", "build"),
    ("   Compiling tokenizers v0.13.3 (/tmp/pip-install-r6u5q10i/tokenizers)", "build"),
    ("FAILED: /root/deformconv/build/temp.linux-x86_64-3.9/src/cuda/deform_conv_cuda.o ", "build"),
    ("error: failed to run custom build command for `candle-kernels v0.5.1`", "build"),
    ("llama_model_load: error loading model: unknown model architecture: 'qwen3'", "serve"),
    ("11:32 $ python inference_magictime.py --config sample_configs/RealisticVision.yaml", "serve"),
    ('  File "/work/CosyVoice/cosyvoice/bin/infer.py", line 88, in main', "serve"),
    ("python tools/predict.py --weights best.pt --source images/", "serve"),
    ('  File "/home/u/Qwen-VL/web_demo_mm.py", line 12, in <module>', "serve"),
    (
        '  File "/opt/conda/envs/k2/lib/python3.8/site-packages/lhotse/audio.py", line 641,',
        "data",
    ),
    ('  File "/usr/lib/python3/site-packages/soundfile.py", line 1216, in _open', "data"),
    ('  File "/venv/lib/python3.10/site-packages/datasets/load.py", line 2129, in', "data"),
    ("mpirun -np 16 -H node1:8,node2:8 -bind-to none -x NCCL_DEBUG=INFO python main.py", "train"),
    ("ORTE was unable to reliably start one or more daemons.", "train"),
    ("pdsh@node1: node2: ssh exited with exit code 1", "train"),
    ("ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/", "build"),
    ("ERROR: No matching distribution found for torch==1.12.1+cu113", "build"),
    ("UnsatisfiableError: The following specifications were found to be incompatible", "build"),
    ("  × No solution found when resolving dependencies:", "build"),
]


@pytest.mark.parametrize(("line", "stage"), PROGRAMS, ids=[p[:40] for p, _s in PROGRAMS])
def test_stage_from_program_names(line, stage):
    found, reason = infer_stage(["starting", line, "done"])
    assert found == stage
    assert reason.startswith("program ")
    assert "(line 2)" in reason


KEYWORDS = [
    (["epoch 3 step 1200 loss 2.31 lr 1e-4"], "train"),
    (["FloatingPointError: Loss became infinite or NaN at iteration=756!"], "train"),
    (["RuntimeError: loss is nan, stopping training"], "train"),
    (["Avg prompt throughput: 12.3 tokens/s, KV cache usage: 98%"], "serve"),
    (["foo.o: In function `main':", "main.cc:(.text+0x1a): undefined reference to `bar'"], "build"),
    (["utt2spk is not in sorted order when sorted first on speaker-id"], "data"),
    (["handling request 42 from 10.0.0.1, serving with batch 8"], "serve"),
    (['INFO:     10.0.3.7:51512 - "POST /generate HTTP/1.1" 500 Internal Server Error'], "serve"),
    (
        [
            "[rank3]:[E ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=21, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600034 ms"
        ],
        "train",
    ),
    (
        [
            "RuntimeError: Gloo connectFullMesh failed with "
            "[../third_party/gloo/gloo/transport/tcp/pair.h:301] Connect timeout [none]"
        ],
        "train",
    ),
]


def test_pytorchs_compile_hint_under_a_cuda_error_is_not_a_build():
    lines = [
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ]
    assert infer_stage(lines) == (None, "")
    assert infer_stage(["gcc: fatal error: compilation terminated."])[0] == "build"


@pytest.mark.parametrize(("lines", "stage"), KEYWORDS, ids=[k[0][0][:40] for k in KEYWORDS])
def test_stage_from_keywords(lines, stage):
    found, reason = infer_stage(lines)
    assert found == stage
    assert reason.startswith("keyword ")


def test_a_module_named_request_in_a_traceback_is_no_serving_request():
    frame = '  File "/miniconda/envs/a/lib/python3.10/urllib/request.py", line 643, in error'
    assert infer_stage([frame]) == (None, "")
    assert infer_stage(["ValueError: bad request.", "retrying request 7"])[0] == "serve"


def test_a_vendors_request_for_support_is_no_serving_request():
    boilerplate = (
        "        Solution: Submit an issue to request for support at https://gitee.com/ascend"
    )
    assert infer_stage([boilerplate]) == (None, "")
    for served in ("request failed: upstream closed", "request {id} aborted", "request 失败"):
        assert infer_stage([served])[0] == "serve", served


def test_a_product_named_in_an_install_path_or_url_is_not_its_stage():
    """Installing vLLM names it in a URL and a venv path; the resolver's failure is the build."""
    lines = [
        "curl -fsSL https://raw.githubusercontent.com/vllm-project/vllm-metal/main/install.sh | bash",
        "Using Python 3.12.9 environment at: /Users/u/.venv-vllm-metal",
        "  × No solution found when resolving dependencies:",
    ]
    assert infer_stage(lines)[0] == "build"
    for served in (
        '  File "/usr/lib/python3/site-packages/vllm/engine/llm_engine.py", line 9, in step',
        "(VllmWorker TP1 pid=1035) ERROR 08-30 01:28:29 [multiproc_executor.py:611] boom",
        "INFO 01-02 [__init__.py:30] Platform plugin ascend is activated (vllm-ascend)",
    ):
        assert infer_stage([served])[0] == "serve", served


def test_later_evidence_weighs_more_and_programs_beat_keywords():
    lines = ["loading dataset, preprocessing done", "vllm engine started"]
    assert infer_stage(lines)[0] == "serve"


def test_a_flood_of_one_keyword_does_not_outvote_a_program():
    lines = ["epoch 1 loss 2.0"] * 1000 + ["make: *** [Makefile:12: all] Error 2"] * 2
    assert infer_stage(lines)[0] == "build"


@pytest.mark.parametrize("lines", [[], [""], ["hello world"], ["RuntimeError: boom"]])
def test_unknown(lines):
    assert infer_stage(lines) == (None, "")
    assert infer_stage(lines, "") == (None, "")
    assert infer_stage(lines, "/tmp/x.txt") == (None, "")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=30), st.one_of(st.none(), st.text(max_size=40)))
def test_never_crashes(lines, path):
    stage, reason = infer_stage(lines, path)
    assert stage in (*STAGES, None)
    assert (stage is None) == (reason == "")


# Failure tails as they get pasted, without their log path: the lines alone must give the stage,
# though some carry another stage's words too (utt2spk on a decoding command line). Keyed
# "<stage>/<what failed>".
TAILS = {
    "train/kaldi-align-retry": """\
steps/align_si.sh --nj 30 --cmd run.pl data/train data/lang exp/tri1 exp/tri1_ali
steps/align_si.sh: feature type is delta
steps/align_si.sh: aligning data in data/train using model from exp/tri1, putting alignments in exp/tri1_ali
WARNING (gmm-align-compiled[5.5.1068~1-4d21]:AlignUtteranceWrapper():decoder/decoder-wrappers.cc:819) Retrying utterance 1089-134686-0003 with beam 40
WARNING (gmm-align-compiled[5.5.1068~1-4d21]:AlignUtteranceWrapper():decoder/decoder-wrappers.cc:819) Retrying utterance 1089-134686-0011 with beam 40
WARNING (gmm-align-compiled[5.5.1068~1-4d21]:AlignUtteranceWrapper():decoder/decoder-wrappers.cc:834) Did not successfully decode file 1089-134686-0011, len = 1412
LOG (gmm-align-compiled[5.5.1068~1-4d21]:main():gmm-align-compiled.cc:135) Overall log-likelihood per frame is -8.91 over 401233 frames.
LOG (gmm-align-compiled[5.5.1068~1-4d21]:main():gmm-align-compiled.cc:137) Retried 2113 out of 2703 utterances.
LOG (gmm-align-compiled[5.5.1068~1-4d21]:main():gmm-align-compiled.cc:139) Done 2461, errors on 242
run.pl: job failed, log is in exp/tri1_ali/log/align.1.log
""",
    "train/nnet3-cuda-oom": """\
2026-11-24 03:12:40,118 [steps/nnet3/chain/train.py:428 - train - INFO ] Iter: 118/420   Jobs: 3   Epoch: 0.84/6.0 (14.1% complete)   lr: 0.000870
run.pl: job failed, log is in exp/chain/tdnn1a_sp/log/train.118.2.log
nnet3-chain-train --use-gpu=yes --apply-deriv-weights=False --l2-regularize=5e-05 --leaky-hmm-coefficient=0.1 --write-cache=exp/chain/tdnn1a_sp/cache.119 --xent-regularize=0.1 --print-interval=10 --momentum=0.0 --max-param-change=2.0 --backstop-norm=4.0 "nnet3-am-copy --raw=true --learning-rate=0.00087 exp/chain/tdnn1a_sp/118.mdl - |" exp/chain/tdnn1a_sp/den.fst ark:- exp/chain/tdnn1a_sp/119.2.raw
LOG (nnet3-chain-train[5.5.1068~1-4d21]:SelectGpuId():cu-device.cc:223) CUDA setup operating under Compute Exclusive Mode.
ERROR (nnet3-chain-train[5.5.1068~1-4d21]:AllocateNewRegion():cu-allocator.cc:491) Failed to allocate a memory region of 2097152000 bytes.  Possibly this is due to sharing the GPU.  Try switching the GPUs to exclusive mode (nvidia-smi -c 3) and using the option --use-gpu=wait to scripts like steps/nnet3/chain/train.py.  Memory info: free:1854M, used:14302M, total:16156M, free/total:0.114756
[ Stack-Trace: ]
nnet3-chain-train(kaldi::MessageLogger::LogMessage() const+0x82c) [0x55d3c1e2a1fc]
""",
    "train/torchrun-nccl-timeout": """\
[rank3]:[W1124 09:41:07.552931 ProcessGroupNCCL.cpp:1249] Warning: WorkNCCL(SeqNum=48812, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=1800000) ran for 1800094 milliseconds before timing out.
{'loss': 1.6412, 'grad_norm': 0.83, 'learning_rate': 1.94e-05, 'epoch': 1.37}
 46%|████▌     | 6121/13340 [7:02:11<8:13:40,  4.10s/it]
[rank3]:[E1124 09:41:07.553620 ProcessGroupNCCL.cpp:632] [Rank 3] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
[rank3]:[E1124 09:41:07.553708 ProcessGroupNCCL.cpp:638] [Rank 3] To avoid data inconsistency, we are taking the entire process down.
terminate called after throwing an instance of 'c10::DistBackendError'
W1124 09:41:09.001000 140112 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 88412 closing signal SIGTERM
E1124 09:41:10.220000 140112 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 3 (pid: 88415) of binary: /opt/conda/bin/python
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
train_sft.py FAILED
""",
    "serve/vllm-kv-cache": """\
INFO 11-24 14:02:11 [api_server.py:1090] Starting vLLM API server 0 on http://0.0.0.0:8000
INFO 11-24 14:02:11 [launcher.py:28] Available routes are:
INFO:     10.4.2.17:51822 - "POST /v1/chat/completions HTTP/1.1" 200 OK
INFO 11-24 14:05:41 [loggers.py:118] Engine 000: Avg prompt throughput: 8421.3 tokens/s, Avg generation throughput: 611.0 tokens/s, Running: 212 reqs, Waiting: 87 reqs, GPU KV cache usage: 99.6%, Prefix cache hit rate: 12.4%
WARNING 11-24 14:05:44 [scheduler.py:1579] Sequence group cmpl-7f1c preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=501
INFO:     10.4.2.17:51840 - "POST /v1/chat/completions HTTP/1.1" 200 OK
""",
    "build/kaldi-build-mkl": """\
Configuring KALDI to use MKL.
Checking compiler g++ ...
Checking OpenFst library in /opt/kaldi/tools/openfst-1.7.2 ...
Checking cub library in /opt/kaldi/tools/cub-1.8.0 ...
Doing OS specific configurations ...
On Linux: Checking for linear algebra header files ...
***configure failed: Could not find the MKL library directory.
Please use the switch --mkl-root and/or --mkl-libdir if you have MKL installed,
or try another math library, e.g. --mathlib=OPENBLAS (Kaldi may be slower). ***
make: *** [Makefile:33: kaldi.mk] Error 1
""",
    "build/flash-attn-wheel": """\
Collecting flash-attn==2.7.4.post1
  Downloading flash_attn-2.7.4.post1.tar.gz (6.0 MB)
Building wheels for collected packages: flash-attn
  Building wheel for flash-attn (setup.py) ... error
  error: subprocess-exited-with-error
  × python setup.py bdist_wheel did not run successfully.
  │ exit code: 1
      /usr/local/cuda/bin/nvcc -I/tmp/pip-install-x1/flash-attn/csrc/flash_attn -c csrc/flash_attn/src/flash_fwd_hdim128_bf16_sm80.cu -o build/temp.linux-x86_64-cpython-310/csrc/flash_attn/src/flash_fwd_hdim128_bf16_sm80.o -gencode arch=compute_80,code=sm_80
      nvcc fatal   : Unsupported gpu architecture 'compute_90a'
      ninja: build stopped: subcommand failed.
  ERROR: Failed building wheel for flash-attn
ERROR: Could not build wheels for flash-attn, which is required to install pyproject.toml-based projects
""",
    "data/kaldi-data-dir": """\
utils/fix_data_dir.sh data/train_sp
fix_data_dir.sh: kept all 28539 utterances.
fix_data_dir.sh: old files are kept in data/train_sp/.backup
utils/validate_data_dir.sh --no-feats data/train_sp
utils/validate_data_dir.sh: file data/train_sp/utt2spk is not in sorted order or has duplicates
utils/validate_data_dir.sh: Error: utt2spk and spk2utt do not seem to match
""",
    "data/hf-datasets-disk": """\
Running tokenizer on dataset (num_proc=32):  61%|██████    | 1184000/1941244 [04:12<02:41, 4690.12 examples/s]
Traceback (most recent call last):
  File "/opt/conda/lib/python3.10/site-packages/datasets/arrow_writer.py", line 584, in write_table
    self.pa_writer.write_table(pa_table, row_group_size)
  File "pyarrow/ipc.pxi", line 529, in pyarrow.lib._CRecordBatchWriter.write_table
OSError: [Errno 28] No space left on device
""",
    "serve/kaldi-decode": """\
steps/decode_fmllr.sh --nj 10 --cmd run.pl exp/tri3/graph data/test exp/tri3/decode_test
steps/decode.sh --scoring-opts  --num-threads 1 --skip-scoring false --acwt 0.083333 --nj 10 --cmd run.pl --beam 10.0 --model exp/tri3/final.alimdl --max-active 2000 exp/tri3/graph data/test exp/tri3/decode_test.si
decode.sh: feature type is lda
gmm-latgen-faster --max-active=2000 --beam=10.0 --lattice-beam=6.0 --acoustic-scale=0.083333 --allow-partial=true --word-symbol-table=exp/tri3/graph/words.txt exp/tri3/final.alimdl exp/tri3/graph/HCLG.fst "ark,s,cs:apply-cmvn --utt2spk=ark:data/test/split10/3/utt2spk scp:data/test/split10/3/cmvn.scp scp:data/test/split10/3/feats.scp ark:- |" "ark:|gzip -c > exp/tri3/decode_test.si/lat.3.gz"
ERROR (gmm-latgen-faster[5.5.1068~1-4d21]:ReadBasicType():base/io-funcs-inl.h:66) ReadBasicType: did not get expected integer type, 0 vs. 4.  You can change this code to use larger ints.
run.pl: job failed, log is in exp/tri3/decode_test.si/log/decode.3.log
""",
}


@pytest.mark.parametrize("name", TAILS)
def test_stage_of_a_failure_tail_from_its_lines_alone(name):
    stage = name.split("/")[0]
    assert infer_stage(read_input(TAILS[name].encode()).lines)[0] == stage


def _every_distinct_line(lines: list[str]) -> tuple[str | None, str]:
    """The reference: the rules scan every distinct line (no digit keys), as they once did."""
    if not lines:
        return None, ""
    last = dict(zip(lines, range(1, len(lines) + 1), strict=True))
    unique = list(last)
    text = "\n".join(s.replace("\n", " ") for s in unique)
    starts = [0]
    for s in unique[:-1]:
        starts.append(starts[-1] + len(s) + 1)
    hits: dict[int, dict[int, str]] = {}
    for m in stages._LINE_PATTERN.finditer(text):
        number = last[unique[bisect_right(starts, m.start()) - 1]]
        hits.setdefault(m.lastindex - 1, {}).setdefault(number, m.group().strip())
    scores = dict.fromkeys(STAGES, 0.0)
    best: dict[str, tuple[float, int, int, str]] = {}
    for rule, found in hits.items():
        stage, kind, _what, _pattern = LINE_RULES[rule]
        recent = sorted(found.items())[-stages._MAX_HITS :]
        contribution = sum(stages._WEIGHT[kind] * (1 + n / len(lines)) for n, _ in recent)
        scores[stage] += contribution
        if stage not in best or contribution > best[stage][0]:
            best[stage] = (contribution, rule, *recent[-1])
    winner = max(STAGES, key=lambda s: scores[s])
    if scores[winner] <= 0:
        return None, ""
    _c, rule, number, matched = best[winner]
    _stage, kind, what, _pattern = LINE_RULES[rule]
    return winner, f"{kind} {matched} (line {number}): {what}"


def test_no_line_rule_names_a_particular_digit():
    """Lines are scanned by digit key (digits.ALL_DIGITS: every digit becomes 0); exact only
    while the rules say \\d, never 3 as in nnet3."""
    for stage, _kind, what, pattern in LINE_RULES:
        rest = re.sub(r"\\d|\{\d+(?:,\d*)?\}", "", pattern)
        assert not re.findall(r"\d", rest), (stage, what)


def test_each_rule_is_exactly_one_capture_group():
    # The scan reads the rule of a hit from m.lastindex: group k + 1 must be rule k.
    assert stages._LINE_PATTERN.groups == stages._LINE_BYTES.groups == len(LINE_RULES)


def test_no_line_rule_reads_across_a_line_end():
    """Keys are scanned joined by newlines, so no rule may match one: [ \\t], not \\s."""
    for stage, _kind, what, pattern in LINE_RULES:
        for reads_newlines in ("\\s", "\\S", "\\W", "\\D", "[^"):
            assert reads_newlines not in pattern, (stage, what, reads_newlines)
        bare = re.sub(r"\[[^\]]*\]", "", re.sub(r"\\.", "", pattern))
        assert "." not in bare, (stage, what)


@pytest.mark.parametrize(
    ("line", "stage"),
    [
        ("nnet3-chain-train --use-gpu=yes", "train"),
        ("nnet2-latgen-faster --beam=13", "serve"),
        ("online2-wav-nnet3-latgen-faster --do-endpointing=false", "serve"),
        ("POST /v1/chat/completions HTTP/1.1 200", "serve"),
        ("utt2spk is not sorted", "data"),
        ("collect2: error: ld returned 1 exit status", "build"),
    ],
)
def test_tool_names_with_digits_are_still_recognised(line, stage):
    assert infer_stage([line])[0] == stage


STAGE_PIECES = st.sampled_from(
    [
        "epoch ",
        "loss: ",
        "lr=",
        "step ",
        "nnet3-train ",
        "nnet2-latgen-faster ",
        "torchrun ",
        "vllm ",
        "/v1/",
        "requests ",
        "make[2]: ",
        "gcc ",
        "utt2spk ",
        "decoding ",
        "compiling ",
        "iteration ",
        "tokens/s ",
        "checkpoint ",
        " ",
        "\t",
        "\n",
        ":",
        "=",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(STAGE_PIECES, st.integers(0, 10**5).map(str)), max_size=8).map("".join),
        max_size=40,
    )
)
def test_scanning_digit_keys_gives_the_answer_of_scanning_every_line(lines):
    assert infer_stage(lines) == _every_distinct_line(lines)


def test_scanning_digit_keys_on_a_long_tail():
    lines = [f"epoch {n // 100} step {n} loss: {n % 7}.{n % 97}" for n in range(3000)]
    lines[-3:] = ["torchrun --nproc_per_node 8 train.py", "vllm serve x", "gcc -O2 -c a.c"]
    assert infer_stage(lines) == _every_distinct_line(lines)


def test_a_runtime_error_that_names_its_source_under_cmakefiles_is_no_build():
    line = (
        "RuntimeError: init:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:292 NPU function "
        "error: aclrtGetDeviceCount, error code is 107001"
    )
    assert infer_stage_clearly([line])[0] != "build"
    assert (
        infer_stage_clearly(["Building CXX object src/CMakeFiles/dec.dir/lat.cc.o"])[0] == "build"
    )
