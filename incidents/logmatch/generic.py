"""The guard against generic lines: lines that say something failed but not what or why.

`exit code 1`, a bare `Traceback (most recent call last):`, `Error`, `Killed` alone or a
`RuntimeError` with no message turn up at the end of almost every failure, so on their own
they prove nothing about which incident this is. Evidence from such a line is discounted and
can never make a suggestion confident.
"""

from __future__ import annotations

import functools
import re

import re2

# Examples a signature must not match (checked when a signature is saved).
GENERIC_SAMPLES = (
    "Traceback (most recent call last):",
    "Error",
    "ERROR",
    "error: 1",
    "Killed",
    "Aborted (core dumped)",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "RuntimeError",
    "RuntimeError: ",
    "exit code 1",
    "Process finished with exit code 1",
    "srun: error: node01: task 0: Exited with exit code 1",
    "ERROR: failed",
    "FAILED",
    "subprocess.CalledProcessError: Command '['bash', 'run.sh']' returned non-zero exit status 1.",
    "make: *** [Makefile:12: all] Error 2",
    '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl',
    "  CMakeLists.txt:22 (include)",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "[ERROR] 2025-06-23-10:51:59 (PID:603, Device:0, RankID:-1) ERR00100 PTA call acl api failed.",
)

# Every pattern here runs on pasted lines: RE2, so the work is linear in the line.
# A stack frame: Python (also behind a `[rank0]:`, logger, `(pid=…)` or `name |` prefix, and
# always indented), Java, gdb/C++, a CMake call stack (`  CMakeLists.txt:22 (include)`). A
# message that ends by quoting a frame (CANN's `… failed with errormsg/stack: File "…", line
# 111, in raise_tbe_python_err`) says what failed.
_PYTHON_FRAME_LINE = r'(?:^|[\])|>]:?\s|\s\s)\s*File "[^"]*", line \d+(?:, in \S+)?\s*$'
_CMAKE_FRAME_LINE = r"^\s+[^\s(]*(?:CMakeLists\.txt|\.cmake):\d+ \([A-Za-z_]\w*\)\s*$"
_FRAME = re2.compile(
    _PYTHON_FRAME_LINE + r"|^\s*(?:at [\w.$]+\(|#\d+\s+0x[0-9a-f]+)|" + _CMAKE_FRAME_LINE
)
_WHOLE_PYTHON_FRAME = re2.compile(_PYTHON_FRAME_LINE)
# The advice a runtime prints under every error of a kind, whatever went wrong: how to get
# an exact stack trace (CUDA_LAUNCH_BLOCKING, ASCEND_LAUNCH_BLOCKING, TORCH_USE_CUDA_DSA),
# where to read more (the Ascend log, TORCH_LOGS), torch_npu's summary of a failed ACL or HCCL
# call (`ERR00100 PTA call acl api failed`) and the category ACL gives its errors. Only as
# the end of a line: a line that quotes a whole log (`…failed\\n[Error]: …`) says more.
_BOILERPLATE = re2.compile(
    r"(?:CUDA kernel errors might be asynchronously reported at some other API call"
    r"|\bFor debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    r"|\bCompile with .?TORCH_USE_CUDA_DSA.? to enable device-side assertions"
    r"|\bSince the operator is called asynchronously, the stacktrace may be inaccurate"
    r"|\bASCEND_LAUNCH_BLOCKING=1 will force ops to run in synchronous mode"
    r"|\bRectify the fault based on the error information in the ascend log"
    r"|\bThe Inner error is reported as above\b"
    r"|\bThe internal ACL of the system is incorrect\b"
    r"|\bERR\d{5} [A-Z]+ (?:call \w+ api failed|internal error)\b"
    r"|\bSet TORCH_LOGS=\S+ and TORCHDYNAMO_VERBOSE=1 for more information"
    r"|\bYou can suppress this exception and fall back to eager by setting)[^\\]{0,240}$"
)
_NOISE = re2.compile(
    r"\b[\w.]*(?:Error|Exception|Exit|Warning)\b"  # exception and warning class names
    r"|\b(?:std|c10)::(?:runtime_error|exception|logic_error|system_error|Error)\b"
    r"|\b[\w.-]+\.(?:py|sh|cc|cpp|h|pl|c):?\d*"  # file names with line numbers
    r"|(?:/[\w.+-]+)+/?"  # paths
    r"|\b[0-9a-fx:.-]*\d[0-9a-fx:.-]*\b"  # numbers, addresses, times
)
_GENERIC_WORDS = frozenset(
    (
        *("error", "errors", "errored", "exception", "fatal", "failed", "failure", "fail"),
        *("traceback", "most", "recent", "call", "last", "exit", "exited", "exiting", "code"),
        *("status", "returned", "return", "non", "zero", "nonzero", "killed", "kill", "abort"),
        *("aborted", "aborting", "core", "dumped", "process", "processes", "job", "command"),
        *("with", "the", "a", "an", "of", "by", "in", "at", "on", "to", "is", "was", "see"),
        *("above", "for", "details", "signal", "srun", "slurmstepd", "task", "node", "rank"),
        *("worker", "main", "line", "file", "module", "info", "warning", "warn", "stack"),
        *("finished", "terminated", "terminating", "stopped", "unknown", "unexpected"),
        *("occurred", "during", "handling", "another", "following", "above", "directly"),
        *("cause", "caused", "raised", "raise", "make", "all", "python", "bash", "sh", "run"),
        *("makefile", "recipe", "target", "terminate", "called", "throwing", "thrown"),
        *("instance", "after", "what", "instead", "an"),
    )
)
# Exit codes and signals that do name a cause: 137 = SIGKILL (usually the OOM killer),
# 139 = SIGSEGV, 134 = SIGABRT. `exit code 1` says nothing; `exit code 137` does.
_TELLING_CODE = re2.compile(
    r"(?i)(?:exit|code|status|signal)\W{0,3}(?:-?9|1[23]\d|14[0-3])\b|\bSIG(?:KILL|SEGV|ABRT|BUS)\b"
)
# Lines a scheduler, a launcher, a build tool or a serving engine's supervisor prints
# *because* something else failed: they report the failure, while a line before them may
# explain it (a vLLM engine that died names no cause). A Slurm cancellation with its reason
# (`DUE TO TIME LIMIT`) explains itself and is not one of them.
_CONSEQUENCE = re2.compile(
    r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+(?:\s*\*\*\*)?\s*$"
    r"|(?:^|\s)Killed\s*$|\bexit(?:ed)? (?:with )?(?:exit )?(?:code|status)\W{0,3}-?\d+"
    r"|\b(?:g?make|ninja)(?:\[\d+\])?: \*\*\* .*\bError \d+|\brecipe for target\b.*\bfailed\b"
    r"|\breturned non-zero exit status\b|\bChildFailedError\b|\brun\.pl: job failed\b"
    r"|\b(?:queue|slurm)\.pl: .*\bfailed\b|\b\d+ / \d+ failed\b"
    r"|^#\s*Ended \(code [1-9]\d*\) at\b|\|W\|rescheduling job \S+\s*$"  # run.pl job log, SGE
    r"|\bCould not build wheels for\b|\bFailed building (?:wheel|editable) for\b"
    r"|\bFailed to build (?:installable wheels|'?[\w.\-]+'?\s*$"
    r"|'?[\w.\-]+'? when getting requirements)"
    r"|\bdid not run successfully\b|\bmetadata-generation-failed\b"
    r"|\bThis error originates from a subprocess, and is likely not a problem with pip\b"
    r"|\bEncountered error while generating package metadata\b"
    r"|\*\*\* CMake (?:build|configuration|install) failed|\bCMake Generate step failed\b"
    r"|\bConfiguring incomplete, errors occurred\b|\breturned nonzero exit status\b"
    r"|\bBackend subprocess exited when trying to invoke\b"
    r"|\berror: subprocess-exited-with-error\b|\bEngine background task failed\b"
    r"|\bEngineCore encountered a fatal error\b|\bEngine loop is not running\b"
    r"|\b(?:AsyncEngineDeadError|MQEngineDeadError|EngineDeadError)\b"
    r"|\bBackground loop has errored\b"
    r"|\bReceived (?:15|(?:Signals\.)?SIGTERM) death signal\b"
    r"|\bEngine core initialization failed\. See root cause above\b|\bEngineCore failed to start\b"
    r"|\bEngine process failed to start\b"
    r"|\bWorkerProc (?:failed to start|hit an exception)\b|\bWorker proc \S+ died unexpectedly\b"
    r"|\bWorker \S+ pid \d+ died, exit code\b|\bShard \d+ failed to start\b|\bShardCannotStart\b"
    r"|\bReceived sigquit from a child process\b"
    # FindCUDA's CMake wrapper of one nvcc call, a project's own message(FATAL_ERROR) header
    # (what it says follows on the next lines), and the shell's report of a crash
    r"|\bCMake Error at \S+\.cu\.o(?:bj)?\.(?:\w+\.)?cmake:\d+"
    r"|\bCMake Error at \S+:\d+ \(message\):\s*$"
    r"|(?:^|\s)Segmentation fault(?: \(core dumped\))?\s*$"
    # NCCL's name for the kind of failure; its `Last error:` line says what failed
    r"|\bncclInvalidUsage: This usually reflects invalid usage of NCCL library\b"
    r"|\bNCCL error in: \S+, (?:invalid usage|unhandled system error|unhandled cuda error"
    r"|internal error)\b"
)
# Lines that say an input a step expected is not there (`cp: cannot stat`, Kaldi's `Error
# opening input stream`, FileNotFoundError). In a pipeline they are usually the fallout of an
# earlier step that failed, whose own line explains them. The shell failing to run a script
# (`run.sh: line 22: utils/x.sh: No such file or directory`) is no fallout: it is the failure.
_MISSING_INPUT = re2.compile(
    r"(?i)\bcannot (?:stat|access|open)\b|\bNo such file or directory\b|\bno such file\b"
    r"|\bError opening input stream\b|\bFileNotFoundError\b|\b(?:does not|doesn't) exist\b"
    r"|\bunable to open file\b|\bcan(?:no|')t find (?:the )?(?:file|model|config)"
)
_SHELL_CANNOT_RUN = re2.compile(
    r"\bline \d+: \S+: (?:No such file or directory|Not a directory|command not found)"
)
_SUCCESS = re2.compile(r"(?i)\b(successfully|succeeded|completed|passed|validated)\b|成功")
_SUCCESS_DENIED = re2.compile(
    r"(?i)\b(not|never|no|cannot|can't|couldn't|didn't|un\w*|fail\w*|error\w*)\b|失败|未"
)
_PYTHON_FRAME = re2.compile(r'File "([^"]*)", line \d+')
_EXCEPTION_MESSAGE = re2.compile(r"\b[\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b:")
# A run of one character class, nothing to backtrack: `re`, whose matches cost less to take.
_WORDS = re.compile(r"[A-Za-z]+|[^\x00-\x7f]")
# Fewer informative letters than this and the line says nothing about the cause.
_MIN_INFORMATIVE_LETTERS = 8
# A line that is nothing but an exception's class ("audioread.exceptions.NoBackendError"): the
# class's own name is the message. Its words count, except those of Python's vague classes.
_BARE_EXCEPTION = re2.compile(
    r"^\s*(?:[A-Za-z_]\w*\.)*([A-Z][A-Za-z0-9]*?)(?:Error|Exception)\s*:?\s*$"
)
_CAMEL_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_VAGUE_CLASS_WORDS = _GENERIC_WORDS | frozenset(
    (
        *("runtime", "value", "type", "key", "index", "attribute", "lookup", "name", "system"),
        *("environment", "base", "assertion", "internal", "unknown", "user", "custom", "not"),
        *("implemented", "os", "io", "child", "called", "subprocess", "worker", "engine"),
        *("dead", "generic", "invalid", "argument", "state", "operation", "request", "http"),
        *("connection", "timeout", "reference", "arithmetic", "overflow", "syntax", "stop"),
    )
)


def frame_path(line: str) -> str | None:
    """The file a Python traceback's `File "…", line N` frame names; None for another line."""
    found = _PYTHON_FRAME.search(line)
    return found.group(1) if found else None


def is_python_frame(line: str) -> bool:
    """True for a line that is a Python traceback's `File "…", line N` frame (behind a prefix),
    not a message that ends by quoting one."""
    return _WHOLE_PYTHON_FRAME.search(line) is not None


def follows_frame(previous: str, line: str) -> bool:
    """True for the source line a Python traceback prints under a `File "…", line N` frame:
    code, not a message (an `XxxError: …` line is the message, even there)."""
    return bool(
        _PYTHON_FRAME.search(previous)
        and not _PYTHON_FRAME.search(line)
        and not _EXCEPTION_MESSAGE.search(line)
    )


def reports_success(line: str) -> bool:
    """True for a line that says a step went well (`Successfully validated data-directory`,
    `Build succeeded`): in a log without an error line, it tells nothing about the failure,
    however much it reads like an incident's text."""
    return _SUCCESS.search(line) is not None and _SUCCESS_DENIED.search(line) is None


def is_consequence(line: str) -> bool:
    """True for a line that reports a failure another line may explain: a job cancelled, a
    process killed, an exit code, a make target failed (see `_CONSEQUENCE`)."""
    return _CONSEQUENCE.search(line) is not None


def is_fallout(line: str) -> bool:
    """True for a line that says an expected input is missing (see `_MISSING_INPUT`): the
    fallout of an earlier failure, when an earlier line explains one."""
    return _MISSING_INPUT.search(line) is not None and _SHELL_CANNOT_RUN.search(line) is None


@functools.lru_cache(maxsize=8192)  # asked once per signature hit: the same lines again
def is_generic(line: str, enough: int = _MIN_INFORMATIVE_LETTERS) -> bool:
    """True when `line` alone does not say what went wrong (see the module docstring): fewer
    than `enough` letters of words that not every failure uses."""
    if _FRAME.search(line) or _BOILERPLATE.search(line):
        return True
    if _TELLING_CODE.search(line):
        return False
    bare = _BARE_EXCEPTION.match(line)
    if bare:
        words = _CAMEL_WORD.findall(bare.group(1))
        told = sum(len(w) for w in words if w.lower() not in _VAGUE_CLASS_WORDS)
        return told < enough
    informative = 0
    for found in _WORDS.finditer(_NOISE.sub(" ", line)):
        word = found.group(0)
        if word.lower() not in _GENERIC_WORDS:
            informative += len(word) if word.isascii() else 2
            if informative >= enough:
                return False
    return True
