"""infer_stage: log path first, then program names, then keywords."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incidents.logmatch import stages
from incidents.logmatch.reading import read_input
from incidents.logmatch.stages import LINE_RULES, STAGES, infer_stage

DEV = Path(__file__).resolve().parents[3] / "shared" / "eval" / "dev"

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
]


@pytest.mark.parametrize(("line", "stage"), PROGRAMS, ids=[p[:40] for p, _s in PROGRAMS])
def test_stage_from_program_names(line, stage):
    found, reason = infer_stage(["starting", line, "done"])
    assert found == stage
    assert reason.startswith("program ")
    assert "(line 2)" in reason


KEYWORDS = [
    (["epoch 3 step 1200 loss 2.31 lr 1e-4"], "train"),
    (["Avg prompt throughput: 12.3 tokens/s, KV cache usage: 98%"], "serve"),
    (["foo.o: In function `main':", "main.cc:(.text+0x1a): undefined reference to `bar'"], "build"),
    (["utt2spk is not in sorted order when sorted first on speaker-id"], "data"),
    (["handling request 42 from 10.0.0.1, serving with batch 8"], "serve"),
]


@pytest.mark.parametrize(("lines", "stage"), KEYWORDS, ids=[k[0][0][:40] for k in KEYWORDS])
def test_stage_from_keywords(lines, stage):
    found, reason = infer_stage(lines)
    assert found == stage
    assert reason.startswith("keyword ")


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


@pytest.mark.skipif(not (DEV / "manifest.jsonl").is_file(), reason="dev tails not available")
def test_stage_on_real_failure_tails():
    """A regression guard on the real tails (which also carry other kinds of evidence)."""
    right = wrong = unknown = 0
    for line in (DEV / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        lines = read_input((DEV / f"{case['id']}.log").read_bytes()).lines
        stage, _reason = infer_stage(lines)
        if stage is None:
            unknown += 1
        elif stage == case["stage"]:
            right += 1
        else:
            wrong += 1
    assert right >= 28
    assert wrong <= 4


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
