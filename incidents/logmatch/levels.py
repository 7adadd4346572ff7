"""Severity of each log line: INFO, WARNING or ERROR.

Contract
--------
``classify(lines)`` returns one ``Level`` per line, in order. It reads each line with an
ordered rule table (first match wins) and then applies context that a single line cannot
carry: Python tracebacks (header, frames, code lines, the final exception line, chained
"During handling ..." blocks, tails that start in the middle of a traceback), Java "at ..."
frames after an error, Kaldi / C++ stack traces and the indented calls under CANN's own
"TraceBack" header. Lines without any marker are INFO.
``line_level(line)`` is the context-free part, for a single line.

Cost: lines that differ only in their digits (a training tail's progress lines) are one digit
key (``digits.ZERO_OR_NOT``: the table tells ``0`` from the other digits and nothing else), so
the rule set runs once per distinct key, not per line; only the lines that can open or continue
a traceback are walked one by one.

The table is ordered from the most explicit to the most heuristic:
1. a level field written by a logger (``- ERROR -``, ``[WARNING]``, glog ``E1130``, Kaldi
   ``LOG (``, ``NCCL INFO``, vLLM ``ERROR 11-30``, shell ``+ cmd``, make's own lines): trusted
   even when the message itself mentions "error";
2. a few benign shapes that merely mention errors (``no errors``, ``errors: 0``, ``未发现错误``);
3. keyword rules: exception lines, ``error:``, signals, Slurm, Ascend codes, Chinese words.
Lowercase ``error``/``warning`` alone (``error_rate``, ``--warning-level``, ``error_utils.py``)
never makes a line an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from .digits import ZERO_OR_NOT, byte_keys
from .types import Level

E, W, I = Level.ERROR, Level.WARNING, Level.INFO  # noqa: E741 - table readability

_EXCEPTION_CLASS = r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception|Exit|Interrupt|Fault)"

_LOGCAT_TAG = r"[\w.$-]+(?:\(\s*\d+\))?: "  # `VoskAPI: `, `VoskAPI( 1234): `
_LOGCAT_TIME = r"\d\d-\d\d [\d:.]+\s+\d+\s+\d+"  # `01-02 12:34:56.789  1702  2395`

# (what it recognises, pattern, level). The first rule whose pattern is found decides.
# Patterns are RE2 syntax (no look-arounds; \w, \s and \b are ASCII): all of them run at once
# as one RE2 set, so a line costs one scan however long the table grows.
# fmt: off
RULES: tuple[tuple[str, str, Level], ...] = (
    # 1. Level fields written by a program or logger.
    ("shell xtrace", r"^\++ \S", I),
    ("make error", r"^\s*(?:g?make|ninja)(?:\[\d+\])?: \*\*\*", E),
    ("make progress", r"^\s*(?:g?make|ninja)(?:\[\d+\])?: (?:Entering|Leaving|Nothing to be)", I),
    ("cmake error", r"\bCMake (?:Deprecation )?Error\b", E),
    ("cmake warning", r"\bCMake (?:Deprecation )?Warning\b", W),
    ("kaldi error", r"^(?:ERROR|ASSERTION_FAILED) \(", E),
    ("kaldi warning", r"^WARNING \(", W),
    ("kaldi log", r"^(?:LOG|VLOG\[\d+\]) \(", I),
    # Android's logcat: `E/VoskAPI: …` (brief) or `01-02 12:34:56.789  123  456 E Tag: …`.
    ("logcat error", rf"^(?:[EFA]/{_LOGCAT_TAG}|{_LOGCAT_TIME} [EFA] )", E),
    ("logcat warning", rf"^(?:W/{_LOGCAT_TAG}|{_LOGCAT_TIME} W )", W),
    ("logcat info", rf"^(?:[VDI]/{_LOGCAT_TAG}|{_LOGCAT_TIME} [VDI] )", I),
    # llama.cpp's common log: `<minutes>.<seconds>.<ms>.<us> <level> <message>`.
    ("llama.cpp error", r"^\s*\d+\.\d\d\.\d{3}\.\d{3} E ", E),
    ("llama.cpp warning", r"^\s*\d+\.\d\d\.\d{3}\.\d{3} W ", W),
    ("llama.cpp info", r"^\s*\d+\.\d\d\.\d{3}\.\d{3} [IDT] ", I),
    ("glog error", r"(?:^|[\s\]:])[EF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)? +\d+ [\w.\-]+:\d+\]", E),
    ("glog warning", r"(?:^|[\s\]:])W\d{4} \d\d:\d\d:\d\d(?:\.\d+)? +\d+ [\w.\-]+:\d+\]", W),
    ("glog info", r"(?:^|[\s\]:])I\d{4} \d\d:\d\d:\d\d(?:\.\d+)? +\d+ [\w.\-]+:\d+\]", I),
    # TensorFlow's and XLA's C++ log (also under JAX): `2021-05-20 10:09:06.617783: E file.cc:93]`.
    ("tensorflow error", r"^\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [EF] \S+:\d+\]", E),
    ("tensorflow warning", r"^\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: W \S+:\d+\]", W),
    ("tensorflow info", r"^\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: I \S+:\d+\]", I),
    ("torch c10 error", r"\[[EF](?:\d{3,4} [\d:.]+)? [\w.\-]+:\d+\]", E),
    ("torch c10 warning", r"\[W(?:\d{3,4} [\d:.]+)? [\w.\-]+:\d+\]", W),
    ("torch c10 info", r"\[I(?:\d{3,4} [\d:.]+)? [\w.\-]+:\d+\]", I),
    ("nccl warn", r"\bNCCL WARN\b", W),
    ("nccl info", r"\bNCCL INFO\b", I),
    ("logger error", r"(?:^|[^=\w])(?:ERROR|CRITICAL|FATAL|SEVERE|PANIC|EMERG|ALERT)(?:$|\W)", E),
    ("logger warning", r"(?:^|[^=\w])(?:WARNING|WARN)(?:$|\W)", W),
    ("logger info", r"(?:^|[^=\w])(?:INFO|DEBUG|TRACE|NOTICE)(?:$|\W)", I),
    ("compiler note", r":\d+(?::\d+)?: note:", I),
    # 2. Benign mentions of errors.
    ("no errors", r"(?i)\b(?:no|zero|0|without)\s+(?:errors?|warnings?|failures?|failed)\b", I),
    ("zero errors", r"(?i)\b(?:errors?|warnings?|failures?|failed)\s*[:=]\s*0(?:$|[^\d.])", I),
    ("error rate", r"(?i)\berror[ _-]?rates?\b", I),
    ("chinese no errors", r"(?:没有|没|无|未|不存在|零)(?:任何|发现|出现|检测到|见到?|遇到)?"
        r"(?:任何)?(?:报错|错误|异常|失败)", I),
    ("chinese error rate", r"错误率|误码率", I),
    ("chinese zero errors", r"(?:报错|错误|异常|失败)(?:数|数量|个数)?\s*[:：=]\s*0(?:$|[^\w.])"
        r"|(?:^|[^\w.])0\s*个(?:报错|错误|异常|失败)", I),
    # 3. Keywords.
    ("traceback header", r"\bTraceback \(most recent call last\)", E),
    ("chained exception", r"^\s*(?:During handling of the above exception|The above exception)", E),
    ("exception", r"(?:^|[\s:\]|>)])" + _EXCEPTION_CLASS + r"(?::(?:\s|$)|$)", E),
    # ONNX Runtime names its exceptions by status (InvalidGraph, NotImplemented, Fail).
    ("onnxruntime status", r"\[ONNXRuntimeError\] : \d+ : [A-Z_]+ :", E),
    ("error:", r"(?:^|[\s:\]])(?:fatal )?(?:error|Error):(?:\s|$)", E),
    ("Error", r"(?:^|[:\]]\s+)Error\b", E),
    # llama.cpp and other C tools: "error loading model: …", "error while parsing config: …",
    # also behind the function that reports it ("llama_model_load: error loading model: …").
    ("error doing", r"^\s*(?:[a-z_]\w*: )?error (?:loading|reading|opening|parsing|writing"
     r"|creating|initiali[sz]ing|running|processing|while|during)\b[^:]{0,80}:\s", E),
    # C functions that name themselves: "gguf_init_from_file: invalid magic …",
    # "ggml_cuda_init: failed to initialize CUDA: …", "main: unable to load model".
    ("c function failure", r"^\s*[a-z_]\w*: (?:invalid|failed to|unable to|cannot|can't|could not"
     r"|couldn't)\b", E),
    ("fatal", r"(?:^|\s)(?:[Ff]atal(?: error)?:|panic:)", E),
    ("signal", r"\bSegmentation fault\b|\bcore dumped\b|\bBus error\b|\bIllegal instruction\b"
        r"|\bFloating point exception\b", E),
    ("toolchain fatal", r"(?:^|[\s/])(?:ptxas(?:-\w+)?|nvcc|nvlink|fatbinary|cicc|nvrtc|cc\dplus"
        r"|cc\d|collect\d|ld(?:\.(?:bfd|gold|lld))?|lld)(?:\.exe)?\s+(?:fatal|error)\s*:", E),
    # ptxas's own diagnostics on a PTX file: "ptxas /tmp/x.ptx, line 59; error   : Feature …".
    ("ptxas diagnostic", r"(?:^|[\s/])ptxas\S*\s+[^;]*, line \d+; error\s*:", E),
    ("ptxas warning", r"(?:^|[\s/])ptxas\S*\s+[^;]*, line \d+; warning\s*:", W),
    ("linker", r"(?:^|[\s/])ld(?:\.(?:bfd|gold|lld))?: "
        r"(?:cannot (?:find|open)|library not found)\b", E),
    ("msvc error", r"\b(?:fatal )?error (?:C|LNK|MSB|D)\d{4}\s*:", E),
    ("msvc warning", r"\bwarning (?:C|LNK|MSB|D)\d{4}\s*:", W),
    ("make recipe", r"\brecipe for target\b.*\bfailed\b", E),
    ("failure banner", r"^\s*\*\*\*[^*].*(?i:error|fail|missing|not found|not installed|cannot"
        r"|unable|required|please install).*[^*]\*\*\*\s*$", E),
    ("killed", r"(?:^|\s)(?:Killed|Aborted)(?:$|[\s.:])", E),
    # zsh's and dash's job-status reports name the signal in lower case:
    # "zsh: killed     python train.py", "[1]    9301 killed     python3 x.py".
    ("shell job status", r"^\s*(?:zsh: |\[\d+\]\s*[+-]?\s+\d+ |\S+: \d+: \d+ )(?:killed|abort"
        r"|segmentation fault|bus error|illegal hardware instruction|floating point exception"
        r"|terminated)\b", E),
    # Perl (Kaldi's run.pl, queue.pl, utils/*.pl): die and warn both end " at FILE line N.";
    # the interpreter's own warnings are known by their wording, the rest is a die.
    ("perl warning", r"^(?:Use of uninitialized value|Argument \"[^\"]*\" isn't numeric"
        r"|Useless use of|Name \"[^\"]+\" used only once|Deep recursion on|Possible precedence"
        r"|(?:readline|print|close)\(\) on (?:closed|unopened) filehandle)\b.* at \S+ line \d+", W),
    ("perl die", r"\sat \S+\.p[lm] line \d+\.\s*$", E),
    ("c++ terminate", r"\bterminate called\b|^\s*what\(\):", E),
    ("slurm", r"\*\*\* (?:JOB|STEP) .*\b(?:CANCELLED|FAILED|TIMEOUT)\b", E),
    ("ascend code", r"\bE[A-Z]\d{4}\b", E),
    # CANN's body of a device fault report, whose code prefix (EZ9999) a paste may cut off.
    ("device fault report", r"\bThe error from device\("
        r"|\berror code (?:is|=) ?(?:0x0*(?:[1-9]|[a-fA-F])|[1-9])", E),
    ("build step failed", r"\*\*\* CMake (?:build|configuration|install) failed"
        r"|\bCMake Generate step failed\b|\bdid not run successfully\b"
        r"|\breturned nonzero exit status\b|\ball warnings being treated as errors\b", E),
    ("rustc / nvhpc error", r"^\s*error\[E\d{4}\]:|\bnv(?:c|c\+\+|fortran)-(?:Error|Fatal)-", E),
    ("failure phrase", r"\b(?:[Ff]ailed (?:to|with|because)|FAIL(?:ED|URE)?)\b"
        r"|\b[A-Z]\w+ failed (?:reading|writing|opening|loading|finding|parsing)\b"
        r"|\bundefined reference to\b|\b[1-9]\d* (?:/ \d+ )?(?:jobs? |tasks? )?failed\b"
        r"|\b\w+\([^()]{0,120}\) failed\b"
        r"|\bNo such file or directory\b|\bNot a directory\b"
        r"|\b(?:has|have) died\b|\bis dead because\b|\bdied unexpectedly\b"
        r"|\bNo space left on device\b|\b[Cc]annot allocate memory\b|\b[Oo]ut of memory\b"
        r"|\bNo compatible code objects? found\b"
        r"|\bcommand not found\b|\bnon-zero exit status\b|\bexit (?:code|status):? [1-9]"
        r"|\bcomando (?:não encontrado|no encontrado|non trovato)|\borden no encontrada"
        r"|\bcommande introuvable|\bBefehl nicht gefunden|команда не найдена"
        r"|未找到命令|找不到命令", E),
    # pip's and uv's error blocks (and Rust's miette diagnostics) open with a cross:
    # "× No solution found when resolving dependencies:", "× Encountered error while …".
    ("diagnostic cross", r"^\s*× \S", E),
    ("chinese error", r"错误|失败|异常|报错", E),
    ("python warning", r"\b[A-Z]\w*Warning:", W),
    ("warning:", r"(?:^|[\s:\]])(?:[Ww]arning):", W),
    ("deprecated", r"\b[Dd]eprecated\b", W),
    ("chinese warning", r"警告", W),
)
# fmt: on


# "AssertionError: " alone, CANN's "AclNN_Parameter_Error(EZ1001):" or CMake's "CMake Error at
# FILE:LINE (message):": the message is on the lines that follow, up to a blank line or a line
# with a level of its own, and at most this many.
_EMPTY_MESSAGE_PATTERN = (
    r"^\s*" + _EXCEPTION_CLASS + r"(?:\(E[A-Z0-9]\d{4}\))?:\s*$"
    r"|^\s*CMake Error at \S+ \(message\):\s*$"
)
_EMPTY_MESSAGE = re2.compile(_EMPTY_MESSAGE_PATTERN)
MESSAGE_LINES = 12

# Lines that can open or continue a block walked by `classify` (tracebacks, stack traces).
_CONTEXT_HINT = (
    r"Traceback \(most recent call last\)|^\s*(?:During handling of|The above exception)"
    r'|\s+File "|\[ Stack-Trace: \]|^\s+at |^\s+\.\.\. \d+ more|^Caused by: '
    r"|TraceBack \(most recent call last\)"
    "|" + _EMPTY_MESSAGE_PATTERN
)
_HINT = len(RULES)  # the set's index of _CONTEXT_HINT, after every rule


def _rule_set() -> re2.Set:
    options = re2.Options()
    options.max_mem = 64 << 20
    rules = re2.Set.SearchSet(options)
    for _name, pattern, _level in RULES:
        rules.Add(pattern)
    rules.Add(_CONTEXT_HINT)
    rules.Compile()
    return rules


_RULE_SET = _rule_set()
_LEVELS = (*(level for _name, _pattern, level in RULES), Level.INFO)  # the hint: INFO

# RE2: these run on every pasted line, and `^(.*?)\s+File "` would be quadratic in `re`.
_TRACEBACK = re2.compile(r"Traceback \(most recent call last\):?")
_CHAINED = re2.compile(r"^\s*(?:During handling of the above exception|The above exception)")
_FRAME = re2.compile(r'^(.*?)\s+File "[^"]*", line \d+')
_JAVA_FRAME = re2.compile(r"^\s+at [\w$.<>/]+\(.*\)\s*$|^\s+\.\.\. \d+ more\s*$|^Caused by: ")
_STACK_TRACE = re2.compile(r"\[ Stack-Trace: \]")
# CANN's error block: after its own "TraceBack" header, the indented lines are the chain of
# failed calls under the error code ("Device[1] lost heartbeat", "Parse dynamic kernel config
# fail"), up to the first line that is not indented under the same prefix.
_CANN_TRACEBACK = re2.compile(r"TraceBack \(most recent call last\):?\s*$")
CANN_BLOCK_LINES = 40
_DIGITS = str.maketrans("0123456789", "0000000000")


def line_level(line: str) -> Level:
    """The level of one line on its own (the rule table, no context)."""
    found = _RULE_SET.Match(line)
    return _LEVELS[min(found)] if found else Level.INFO


def rule_name(line: str) -> str | None:
    """Which rule of the table decides ``line`` (for debugging and tests)."""
    found = _RULE_SET.Match(line)
    first = min(found) if found else _HINT
    return RULES[first][0] if first < _HINT else None


def classify(lines: Sequence[str]) -> list[Level]:
    """One level per line, using the rule table plus traceback and stack-trace context."""
    keys = byte_keys(lines, ZERO_OR_NOT)
    match = _RULE_SET.Match
    level_of: dict[bytes, Level] = {}
    hinted: set[bytes] = set()
    for key in dict.fromkeys(keys):
        found = match(key)
        if found:
            level_of[key] = _LEVELS[min(found)]
            if _HINT in found:
                hinted.add(key)
        else:
            level_of[key] = Level.INFO
    levels = [level_of[key] for key in keys]
    if hinted:
        _walk_blocks(lines, keys, hinted, levels)
    return levels


def _walk_blocks(
    lines: Sequence[str], keys: Sequence[bytes], hinted: set[bytes], levels: list[Level]
) -> None:
    """Tracebacks, stack traces and multi-line exception messages: the lines of such a block
    are errors. Only lines that can open or continue a block are looked at one by one."""
    prefix: str | None = None  # text before "Traceback"/"File", digits zeroed; None = no block
    stack_trace = ""  # "" outside, "start" after the Kaldi header, "in" inside the frames
    message_lines = 0  # lines left of an exception message that starts on the next line
    cann: str | None = None  # the prefix before CANN's indented block, digits zeroed
    cann_lines = 0
    for i, (line, key) in enumerate(zip(lines, keys, strict=True)):
        if cann is not None:
            zeroed = line.translate(_DIGITS)
            rest = zeroed[len(cann) :]
            if cann_lines and zeroed.startswith(cann) and rest[:1].isspace() and rest.strip():
                levels[i] = Level.ERROR
                cann_lines -= 1
                continue
            cann = None
        if key in hinted and (found := _CANN_TRACEBACK.search(line)):
            cann = line[: found.start()].translate(_DIGITS).rstrip()
            cann_lines = CANN_BLOCK_LINES
            levels[i] = Level.ERROR
            continue
        if message_lines:
            if line.strip() and levels[i] is Level.INFO and key not in hinted:
                levels[i] = Level.ERROR
                message_lines -= 1
                continue
            message_lines = 0
        if prefix is None and not stack_trace and key not in hinted:
            continue
        if stack_trace:
            if line.strip():
                levels[i] = Level.ERROR
                stack_trace = "in"
                continue
            if stack_trace == "in":
                stack_trace = ""
            continue
        if prefix is None and _EMPTY_MESSAGE.search(line):
            message_lines = MESSAGE_LINES  # pip's "RuntimeError:" with the message below
            continue
        if _STACK_TRACE.search(line):
            levels[i] = Level.ERROR
            stack_trace = "start"
            prefix = None
            continue

        header = _TRACEBACK.search(line)
        if header:
            prefix = line[: header.start()].translate(_DIGITS)
            levels[i] = Level.ERROR
            continue
        if _CHAINED.match(line):
            levels[i] = Level.ERROR
            prefix = None
            continue
        frame = _FRAME.match(line)
        if frame and (prefix is None or not line.translate(_DIGITS).startswith(prefix)):
            prefix = frame.group(1).translate(_DIGITS)
            _mark_cut_traceback(lines, levels, i, prefix)
        if prefix is not None:
            if not line.translate(_DIGITS).startswith(prefix):
                prefix = None
            elif not line[len(prefix) :].strip():
                prefix = None  # a blank line: the traceback was cut short
            else:
                levels[i] = Level.ERROR
                if line[len(prefix)] not in " \t":
                    if _EMPTY_MESSAGE.search(line[len(prefix) :]):
                        message_lines = MESSAGE_LINES
                    prefix = None  # the exception line ends the traceback
                continue
        if _JAVA_FRAME.match(line) and i and levels[i - 1] is Level.ERROR:
            levels[i] = Level.ERROR


def _mark_cut_traceback(
    lines: Sequence[str], levels: list[Level], first_frame: int, prefix: str
) -> None:
    """A frame with no "Traceback" header: the tail was cut inside a traceback, so the
    indented code lines just above the first visible frame belong to it too."""
    i = first_frame - 1
    while i >= 0 and levels[i] is not Level.ERROR:
        line = lines[i]
        if not line.translate(_DIGITS).startswith(prefix) or not line[len(prefix) :].strip():
            break
        if line[len(prefix)] not in " \t":
            break
        levels[i] = Level.ERROR
        i -= 1
