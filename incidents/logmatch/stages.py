"""Which pipeline stage a log comes from: build, data, train or serve.

Contract
--------
``infer_stage(lines, log_path=None)`` returns ``(stage, reason)`` where stage is one of
``STAGES`` or None, and reason is a short English `Phrase` naming the evidence, e.g.
``"log path exp/tri3/log/align.1.log: alignment"``. Unknown gives ``(None, "")``.

Evidence, strongest first:
1. the log path (Kaldi layout ``exp/<model>/log/<step>.<job>.log``, ``data/...``,
   ``make_mfcc``, ``decode_*``, build directories, generic words such as ``serve``/``train``);
2. program names in the lines (Kaldi binaries and recipe scripts, torchrun, deepspeed, vllm,
   cmake, gcc, ...), which weigh more than
3. keywords (training step/epoch/loss, requests/KV cache, undefined reference, utt2spk, ...).
Line evidence is scored per stage; later lines weigh up to twice as much as early ones,
because a tail ends where the job failed. Each rule counts at most ``_MAX_HITS`` times, so a
flood of one line cannot outvote everything else.

Cost: the rules are scanned once over the distinct *digit keys* of the lines (``digits``:
lines that differ only in their digits share a key; the line rules never name a particular
digit, they say ``\\d``), then every hit is spread back onto the lines behind its key. The
answer is the one a scan of every distinct line would give; a rule never reads across a line
end (``[ \\t]``, not ``\\s``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate, count
from operator import add

import re2

from common.phrases import Phrase, gettext_noop
from common.vocabulary import STAGES

from .digits import ALL_DIGITS, text_byte_keys

# fmt: off
# (stage, what it means, pattern on the normalised path). First match wins.
PATH_RULES: tuple[tuple[str, str, str], ...] = (
    ("serve", gettext_noop("decoding"), r"(?:^|/)decode[\w.\-]*(?:/|$)|(?:^|/)log/decode\."),
    ("data", gettext_noop("feature extraction"),
     r"(?:^|/)make_(?:mfcc|fbank|plp|pitch)\w*(?:/|$)|(?:^|/)log/make_(?:mfcc|fbank|plp)"),
    ("data", gettext_noop("CMVN statistics"),
     r"(?:^|/)(?:compute_)?cmvn\w*(?:/|$)|(?:^|/)log/cmvn"),
    ("data", gettext_noop("data directory"),
     r"^(?:\./)?data/|(?:^|/)(?:data_?prep|prepare_data|local/data)"),
    ("train", gettext_noop("alignment"),
     r"(?:^|/)log/(?:align|ali|fmllr|realign)[\w\-]*\.(?:\d+\.)*log$"),
    ("train", gettext_noop("acoustic model training"),
     r"(?:^|/)log/(?:train|acc|update|init|mixup|tree|compile_questions|est|compute_prob"
     r"|combine|get_egs|egs|shuffle|average|progress|cluster)[\w\-]*\.(?:\d+\.)*log$"),
    ("train", gettext_noop("Kaldi experiment directory"), r"^(?:\./)?exp/"),
    ("build", gettext_noop("build"),
     r"(?:^|/)(?:build|_build|cmake-build[\w\-]*|CMakeFiles)(?:/|$)"
     r"|(?:^|/)(?:config|CMakeOutput|CMakeError|make|build|compile|install)\.log$"),
    ("serve", gettext_noop("serving"), r"(?i)serv(?:e|er|ing)|vllm|sglang|inference|api"),
    ("train", gettext_noop("training"), r"(?i)train|finetun|pretrain|sft|rlhf"),
    ("data", gettext_noop("data preparation"), r"(?i)preprocess|prepar|dataset|download|tokeniz"),
    ("build", gettext_noop("build"), r"(?i)build|compil|install|configure"),
)

# (stage, kind, what it means, pattern). A "program" weighs 3, a "keyword" 1.
LINE_RULES: tuple[tuple[str, str, str, str], ...] = (
    # Kaldi binaries and recipe scripts.
    ("train", "program", gettext_noop("alignment"),
     r"\bgmm-align-compiled\b|\balign-equal-compiled\b|\bsteps/align_\w+\.sh\b"
     r"|\balign_(?:si|fmllr|sgmm\d?|basis_fmllr)\.sh\b"),
    ("train", "program", gettext_noop("GMM training"),
     r"\bgmm-(?:acc-stats-ali|est|init-mono|sum-accs|mixup|init-model)\b|\bcompile-train-graphs\b"
     r"|\bacc-tree-stats\b|\bbuild-tree\b|\bsteps/train_\w+\.sh\b"
     r"|\btrain_(?:mono|deltas|lda_mllt|sat)\.sh\b"),
    ("train", "program", gettext_noop("nnet3 training"),
     r"\bnnet\d-(?:chain-)?(?:train|get-egs|combine|compute-prob|shuffle-egs)\b"
     r"|\bsteps/nnet\d/(?:chain/)?train\w*\.py\b|\bnnet\d/train/"),
    ("data", "program", gettext_noop("feature extraction"),
     r"\bcompute-(?:mfcc|fbank|plp|spectrogram)-feats\b|\bcompute-and-process-kaldi-pitch-feats\b"
     r"|\bcompute-cmvn-stats\b|\bextract-segments\b|\bsteps/make_(?:mfcc|fbank|plp)\w*\.sh\b"
     r"|\bsteps/compute_cmvn_stats\.sh\b"),
    ("data", "program", gettext_noop("data directory preparation"),
     r"\b(?:utils/)?(?:validate|fix|copy|subset|combine)_data_dir\.sh\b|\butils/data/\w+\.sh\b"
     r"|\bprepare_lang\.sh\b|\blocal/\w*(?:data|prep)\w*\.(?:sh|py)\b"),
    ("serve", "program", gettext_noop("decoding"),
     r"\b(?:gmm|nnet\d|sgmm\d)-latgen-\w+\b|\bonline\d?-\w*(?:decode|latgen)\w*"
     r"|\bsteps/(?:nnet\d/)?decode\w*\.sh\b|\bmkgraph\.sh\b|\bcompute-wer\b"
     r"|\blattice-(?:best-path|scale|add-penalty)\b"),
    # Launchers, servers and build tools.
    ("train", "program", gettext_noop("training launcher"),
     r"\btorchrun\b|\btorch\.distributed\.(?:launch|run)\b|\bdeepspeed\b|\baccelerate launch\b"
     r"|\bllamafactory-cli train\b|\b[Mm]egatron\b|\bpretrain_\w+\.py\b|\btrain\w*\.py\b"
     r"|\bfinetune\w*\.py\b|\btorch/distributed/elastic/|\bmultiprocessing/spawn\.py\b"
     r"|\bChildFailedError\b|\bDistributedDataParallel\b|\bpytorch_lightning\b|\blightning/"
     r"|\btrainer\.fit\(|\bloss\.backward\(|\boptimizer\.step\(|\bmindspore/train/"
     r"|\bmodel\.train\(|\bmpirun\b|\bhorovodrun\b|\bprterun\b|\bORTE\b|\bpdsh@"),
    ("serve", "program", gettext_noop("serving engine"),
     # vLLM by name, not a word of a hyphenated name (a venv `.venv-vllm-metal`, a URL's
     # `vllm-project/`) that only installs it
     r"(?:^|[ \t/\\(\[{<\"'`=:,.\p{Han}])v[Ll][Ll][Mm](?:$|[ \t/\\()\]}>\"'`=:,.;!@<\p{Han}])"
     r"|\bvllm[-_]ascend\b|\(VllmWorker\b"
     r"|\bsglang\b|\btext-generation-(?:inference|launcher)\b|\btritonserver\b"
     r"|\bapi_server\b|\buvicorn\b|\bEngineCore\b|\bLLMEngine\b|\bllm_engine\b|\bollama\b"
     r"|\bllama-server\b|\bllama_model_load\w*|\bllm_load_\w+|\bllama\.cpp\b|\b[Mm]ind[Ii][Ee]\b"
     r"|\blmdeploy\b|\bxinference\b"
     # a script that runs a trained model: inference_x.py, infer.py, predict.py, x_demo.py
     r"|\b(?:\w+_)?(?:infer(?:ence)?|predict(?:ion)?|demo)(?:_\w+)?\.py\b"),
    ("build", "program", gettext_noop("build tool"),
     r"\b[Cc][Mm]ake\b|\bCMakeFiles/[\w.+/-]*\.(?:o|obj|make|cmake|log|txt|internal)\b"
     r"|\bmake(?:\[\d+\])?: |\bninja\b|\./configure\b"
     r"|(?:^|[ \t/])(?:gcc|g\+\+|clang\+?\+?|nvcc|c\+\+|ld|collect\d)(?:[ \t:]|$)"
     r"|\bsetup\.py (?:build|bdist_wheel|install|develop|egg_info)\b|\bbdist_wheel\b"
     r"|\bBuilding wheels?\b"
     r"|\bpip install\b|\bptxas\b|\bcc\dplus\b|\brecipe for target\b"
     r"|\bFailed (?:to )?build(?:ing)? wheel\b|\bconfigure: error\b"
     r"|\bpip-build-env-|\bbuild_meta\.py\b|\bget_requires_for_build_\w+|\bbuild_ext\b"
     r"|\bsubprocess-exited-with-error\b|\bmetadata-generation-failed\b"
     r"|\bGetting requirements to build\b|\bPreparing metadata \(|\bBuilding editable\b"
     r"|\bFailed to build (?:installable wheels|'?[\w.\-]+'? when getting requirements)"
     r"|\bscikit[-_]build|\bcargo (?:build|rustc)\b|\brustc\b"
     r"|\bMicrosoft (?:Visual )?C\+\+ (?:Build Tools|[\d.]+ (?:or greater )?is required)"
     r"|\bIn file included from\b|\bhipcc\b|\bcould not compile `|^[ \t]*Compiling [\w-]+ v\d"
     r"|^[ \t]*FAILED: [\w./\\:+-]+\.(?:o|obj)\b|\bfailed to run custom build command for `"
     r"|\bcargo:rerun-if-changed=|\bcpp_extension\.py\b"
     # a package manager resolving what to install
     r"|\bResolutionImpossible\b|\bNo matching distribution found for\b|\bResolvePackageNotFound\b"
     r"|\bUnsatisfiableError\b|\bversion solving failed\b|\bNo solution found when resolving\b"
     r"|\bbecause these package versions have conflicting dependencies\b"),
    ("data", "program", gettext_noop("data tool"),
     r"\blmplz\b|\bbuild_binary\b|\bsentencepiece\b|\bspm_train\b|\bimg\ddataset\b"
     r"|\bdatasets\.map\b|\bffmpeg\b|\bsox\b"
     # where a traceback reads audio or a data set: the data, whichever stage asked for it
     r"|\blhotse/|\bsoundfile\.py\b|\blibrosa/core/audio\.py\b|\bdatasets/(?:load|builder)\.py\b"),
    # Keywords.
    ("train", "keyword", gettext_noop("training progress"),
     r"(?i)\b(?:epoch|global_step|train(?:ing)? (?:step|loss)|grad(?:ient)? norm|learning rate"
     r"|loss scale|optimizer|backward|num epochs|running training|iteration[ \t]*[=:]?[ \t]*\d)"),
    ("train", "keyword", gettext_noop("loss and checkpoints"),
     r"(?i)\b(?:loss|lr)[ \t]*[:=][ \t]*[\d.]|\bloss (?:became |becomes |is |went )?(?:nan|inf)"
     r"|\bOVERFLOW\b"
     r"|\bGradient overflow\b|\bcheckpoint"),
    ("train", "keyword", gettext_noop("distributed training"),
     r"\bProcessGroup(?:[NH]CCL|Gloo)\b|\b[NH]CCL\b|\bGloo\b"
     r"|(?i:\ball_?reduce\b|\ballgather\b|\breduce_scatter\b)"
     r"|\[rank\d+\]|\blocal_rank\b|\bworld_size\b"),
    ("serve", "keyword", gettext_noop("serving"),
     r"(?i)\b(?:serving|api_server|tokens? per second|tokens/s|kv cache|gpu blocks"
     r"|max_model_len|max seq len|gpu_memory_utilization|/v\d/|chat/completions|latency"
     r"|throughput|inference|(?:GET|POST) /[\w./?=&%-]* HTTP/\d(?:\.\d)?)\b"
     # "request" as a word, not a module path (urllib/request.py in a download's traceback)
     # nor the verb of a vendor's boilerplate ("Submit an issue to request for support")
     r"|\brequests?(?:$|[,:;)'\"!?]|\.(?:$|[ \t])"
     r"|[ \t]+(?:$|[!-EG-eg-~\p{Han}]|f[!-NP-np-~\p{Han}]|fo[!-QS-qs-~\p{Han}]))"),
    ("serve", "keyword", gettext_noop("decoding"),
     r"(?i)\b(?:decod(?:e|ing|able)|lattice|transcrib\w*|recogni[sz]\w*)\b"),
    # Not the bare verb "compile": PyTorch ends every CUDA error with the hint "Compile with
    # `TORCH_USE_CUDA_DSA` to enable device-side assertions.", which says nothing of a build.
    ("build", "keyword", gettext_noop("compilation"),
     r"(?i)\b(?:configur(?:e|ing)|compil(?:ing|ation)|compile (?:error|failed|failure)s?"
     r"|undefined reference|linking"
     r"|building (?:cxx|c|cuda) object|no rule to make target|checking (?:for|compiler))\b"),
    ("data", "keyword", gettext_noop("data preparation"),
     r"(?i)\b(?:feature extraction|utt\dspk|spk\dutt|wav\.scp|reco\ddur|segments file"
     r"|data[- ]directory|data prep\w*|preprocess\w*|download(?:ing)? (?:data|dataset|corpus)"
     r"|running tokenizer on dataset|tokeniz(?:e|ing) (?:the )?(?:dataset|corpus))\b"),
)
# fmt: on
_WEIGHT = {"program": 3, "keyword": 1}

_MAX_HITS = 5
_PATH_COMPILED = tuple((stage, what, re.compile(p)) for stage, what, p in PATH_RULES)


def _named(i: int, pattern: str) -> str:
    # A leading (?i) must become a scoped flag group to join the alternation.
    if pattern.startswith("(?i)"):
        return f"(?P<r{i}>(?i:{pattern[4:]}))"
    return f"(?P<r{i}>{pattern})"


# RE2 scans the whole text once with a DFA (~100 MB/s whatever the number of rules); Python's
# re would try every alternative at every position, 50-100 times slower on a long tail. The
# scan reads UTF-8 bytes: no offset translation per match. Group k + 1 is rule k.
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.max_mem = 64 << 20
_LINE_SOURCE = "(?m)" + "|".join(_named(i, rule[3]) for i, rule in enumerate(LINE_RULES))
_LINE_PATTERN = re2.compile(_LINE_SOURCE, _RE2_OPTIONS)
_LINE_BYTES = re2.compile(_LINE_SOURCE.encode(), _RE2_OPTIONS)


def infer_stage(lines: Sequence[str], log_path: str | None = None) -> tuple[str | None, str]:
    """The stage of a log and a short reason; ``(None, "")`` when nothing points anywhere."""
    stage, reason, _clear = infer_stage_clearly(lines, log_path)
    return stage, reason


def infer_stage_clearly(
    lines: Sequence[str], log_path: str | None = None
) -> tuple[str | None, str, bool]:
    """`infer_stage`, and whether the evidence is clear: the log path, or a program of the
    stage (a build tool, a launcher, a Kaldi binary), not only its keywords."""
    if log_path:
        found = stage_from_path(log_path)
        if found:
            return (*found, True)
    stage, reason, kind = _stage_from_lines(lines)
    return stage, reason, kind == "program"


def stage_from_path(log_path: str) -> tuple[str, str] | None:
    path = log_path.strip().replace("\\", "/")
    for stage, what, pattern in _PATH_COMPILED:
        if pattern.search(path):
            return stage, Phrase(
                gettext_noop("log path %(path)s: %(what)s"), path=path, what=Phrase(what)
            )
    return None


def stage_from_lines(lines: Sequence[str]) -> tuple[str | None, str]:
    stage, reason, _kind = _stage_from_lines(lines)
    return stage, reason


def _stage_from_lines(lines: Sequence[str]) -> tuple[str | None, str, str]:
    """The stage, the reason, and the kind of rule behind it (program or keyword)."""
    if not lines:
        return None, "", ""
    # Each distinct line once, at its last position: a flood of one line is one piece of
    # evidence. Distinct lines that differ only in digits share a key and are scanned once.
    total = len(lines)
    last = dict(zip(lines, range(1, total + 1), strict=True))
    text = "\n".join(last)
    if text.count("\n") != len(last) - 1:
        text = "\n".join(s.replace("\n", " ") for s in last)
    distinct_keys = text_byte_keys(text, ALL_DIGITS)
    numbers = list(last.values())
    # key -> last line numbers of its distinct lines (all in C when no two lines share a key)
    numbers_of: Mapping[bytes, Sequence[int]] = dict(zip(distinct_keys, zip(numbers), strict=True))
    if len(numbers_of) != len(distinct_keys):
        shared: dict[bytes, list[int]] = {}
        for key, number in zip(distinct_keys, numbers, strict=True):
            shared.setdefault(key, []).append(number)
        numbers_of = shared
    keys = list(numbers_of)
    scanned = b"\n".join(keys)
    starts = list(map(add, accumulate(map(len, keys), initial=0), count()))  # len + 1 each

    hits: dict[int, dict[bytes, None]] = {}  # rule -> keys it fires on, in order of first hit
    for m in _LINE_BYTES.finditer(scanned):
        matched = m.group()
        at = m.start() + len(matched) - len(matched.lstrip())  # a match may open on "\n"
        hits.setdefault(m.lastindex - 1, {})[keys[bisect_right(starts, at) - 1]] = None

    scores = dict.fromkeys(STAGES, 0.0)
    best: dict[str, tuple[float, int, int]] = {}  # stage -> (contribution, rule, line)
    for rule, fired in hits.items():
        stage, kind, _what, _pattern = LINE_RULES[rule]
        if len(fired) == 1:
            found = numbers_of[next(iter(fired))]
        else:
            found = [n for key in fired for n in numbers_of[key]]
        recent = sorted(found)[-_MAX_HITS:]
        contribution = sum(_WEIGHT[kind] * (1 + number / total) for number in recent)
        scores[stage] += contribution
        if stage not in best or contribution > best[stage][0]:
            best[stage] = (contribution, rule, recent[-1])

    winner = max(STAGES, key=lambda s: scores[s])
    if scores[winner] <= 0:
        return None, "", ""
    _contribution, rule, number = best[winner]
    _stage, kind, what, _pattern = LINE_RULES[rule]
    message = {
        "program": gettext_noop("program %(text)s (line %(line)s): %(what)s"),
        "keyword": gettext_noop("keyword %(text)s (line %(line)s): %(what)s"),
    }[kind]
    reason = Phrase(
        message, text=_first_match(lines[number - 1], rule), line=str(number), what=Phrase(what)
    )
    return winner, reason, kind


def _first_match(line: str, rule: int) -> str:
    """The text of the first hit of ``rule`` when the rules scan ``line``."""
    for m in _LINE_PATTERN.finditer(line.replace("\n", " ")):
        if m.lastindex == rule + 1:
            return m.group().strip()
    return ""
