#!/usr/bin/env python3
"""`kb`: send failing jobs' log tails to Incident KB and print the suggested remedies.

    kb run -- steps/align_si.sh data/train data/lang exp/tri2 exp/tri2_ali
    kb watch exp/                     # every log that ends in failure, sent once
    tail -n 200 exp/tri3/log/align.1.log | kb analyze - --log-path exp/tri3/log/align.1.log

The server and the API token come from --url/--token, KB_URL/KB_TOKEN, or the file
~/.config/kb (lines `KB_URL=…` and `KB_TOKEN=…`). When the server cannot be reached, or no
token is set, a failure's tail waits in ~/.cache/kb/spool until `kb flush` (or the next `kb`
command) sends it. When the output ends by naming the log of a parallel step's failed job
(Kaldi's `run.pl: 4 / 32 failed, log is in exp/…/align.*.log`), that job's tail goes too:
the cause is in there. Standard library only: the file runs alone on a cluster login node.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import deque
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"
CHUNK = 1 << 20
F_SETPIPE_SZ = 1031  # Linux
COALESCE_BELOW = 1 << 16
COALESCE_SECONDS = 0.002
# The server analyses at most the last 2 MB of a tail; keeping more would only cost memory.
TAIL_BYTES = 2 << 20
JOB_ID_VARIABLES = ("SLURM_JOB_ID", "JOB_ID", "PBS_JOBID", "LSB_JOBID")


class KbError(Exception):
    pass


class Unreachable(KbError):
    """The server did not answer (or no token is set): what was to be sent is spooled."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except KbError as error:
        print(f"kb: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `kb analyze - | head`: the reader left, nothing to report
        sys.stderr.close()
        return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kb", description="Incident KB from the shell.")
    commands = parser.add_subparsers(required=True, metavar="command")

    analyze = commands.add_parser("analyze", help="analyse a log tail (a file, or - for stdin)")
    analyze.add_argument("path")
    analyze.add_argument("--log-path", default="", help="the log's path (tells the stage)")
    analyze.add_argument("--json", action="store_true", help="print the analysis as JSON")
    analyze.add_argument("--timeout", type=float, default=60.0, help="seconds to wait")
    analyze.set_defaults(run=_analyze)

    run = commands.add_parser("run", help="run a command; if it fails, send its tail")
    run.add_argument("--log", default="", help="also write the output to this file")
    run.add_argument("--lines", type=int, default=200, help="lines of the tail to send")
    run.add_argument("--wait", type=float, default=15.0, help="seconds to wait for the analysis")
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARG …]")
    run.set_defaults(run=_run)

    watch = commands.add_parser("watch", help="send each log that ends in failure, once")
    watch.add_argument("dirs", nargs="+", metavar="DIR")
    watch.add_argument(
        "--glob",
        action="append",
        default=[],
        help=f"also follow files matching this (default: {' '.join(WATCHED)})",
    )
    watch.add_argument("--interval", type=float, default=10.0, help="seconds between scans")
    watch.add_argument("--settle", type=float, default=5.0, help="seconds a log must be quiet")
    watch.add_argument("--once", action="store_true", help="scan once and exit")
    watch.add_argument("--lines", type=int, default=200, help="lines of the tail to send")
    watch.add_argument("--wait", type=float, default=10.0, help="seconds to wait for each analysis")
    watch.set_defaults(run=_watch)

    flush = commands.add_parser("flush", help="send the tails waiting in the spool")
    flush.set_defaults(run=_flush)

    for command in (analyze, run, watch, flush):
        command.add_argument("--url", default=None, help="the server (KB_URL)")
        command.add_argument("--token", default=None, help="your API token (KB_TOKEN)")
    return parser


# Configuration and the spool


def _config(args) -> tuple[str, str]:
    saved = _read_config_file()
    url = args.url or os.environ.get("KB_URL") or saved.get("KB_URL") or DEFAULT_URL
    token = args.token or os.environ.get("KB_TOKEN") or saved.get("KB_TOKEN") or ""
    return url.rstrip("/"), token


def _read_config_file() -> dict[str, str]:
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    try:
        lines = (base / "kb").read_text().splitlines()
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    return {key.strip(): value.strip().strip("'\"") for key, value in pairs}


def spool_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kb" / "spool"


def _spool(body: dict) -> Path:
    """Keep a submission for later: written whole (temporary file, then rename) or not at all."""
    directory = spool_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # tails may hold private paths
    path = directory / f"{body['key']}.json"
    temporary = directory / f".{body['key']}.tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(body, out, ensure_ascii=False)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    return path


def _flush(args) -> int:
    url, token = _config(args)
    sent, left = flush_spool(url, token)
    print(f"kb: sent {sent}, {left} waiting in {spool_dir()}", file=sys.stderr)
    return 0 if left == 0 else 1


def flush_spool(url: str, token: str) -> tuple[int, int]:
    """Send every spooled submission, oldest first; stop at the first the server cannot take.
    Each carries its own key, so one sent twice (a crash between sending and deleting it) is
    stored once by the server."""
    waiting = sorted(spool_dir().glob("*.json"), key=lambda path: path.stat().st_mtime)
    sent = 0
    for position, path in enumerate(waiting):
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            _submit(url, token, body)
        except FileNotFoundError:  # another kb sent it meanwhile
            continue
        except Unreachable:
            return sent, len(waiting) - position
        except (KbError, ValueError) as error:  # refused for good: kept aside, not resent
            print(f"kb: {path.name} refused: {error}", file=sys.stderr)
            path.rename(path.with_suffix(".refused"))
            continue
        path.unlink(missing_ok=True)
        sent += 1
    return sent, 0


def _flush_quietly(url: str, token: str) -> None:
    """What any `kb` command does on its way out: send what waits, say so only if it did."""
    try:
        if token and any(spool_dir().glob("*.json")):
            sent, _ = flush_spool(url, token)
            if sent:
                print(f"kb: sent {sent} spooled tail(s)", file=sys.stderr)
    except OSError as error:
        print(f"kb: the spool could not be sent: {error}", file=sys.stderr)


# Talking to the server


def _submit(url: str, token: str, body: dict) -> dict:
    if not token:
        raise Unreachable("no API token: set KB_TOKEN or put KB_TOKEN=… in ~/.config/kb")
    return _request("POST", f"{url}/api/v1/analyses/", token, body)


def _request(method: str, url: str, token: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Token {token}")
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        if error.code in (401, 403, 429) or error.code >= 500:
            raise Unreachable(_error_message(error)) from error
        raise KbError(_error_message(error)) from error
    except (urllib.error.URLError, OSError) as error:
        raise Unreachable(f"cannot reach {url}: {getattr(error, 'reason', error)}") from error


def _error_message(error: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(error.read())["error"]
    except (ValueError, KeyError, TypeError):
        return f"HTTP {error.code}"
    details = "; ".join(
        f"{field}: {' '.join(map(str, msgs))}" for field, msgs in body.get("fields", {}).items()
    )
    return f"HTTP {error.code}: {body.get('message', '')} {details}".strip()


def _wait(url: str, token: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    delay = 0.1
    while True:
        analysis = _request("GET", url, token)
        if analysis["status"] in ("done", "failed") or time.monotonic() > deadline:
            return analysis
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


# kb analyze


def _analyze(args) -> int:
    url, token = _config(args)
    if not token:
        raise KbError("no API token: pass --token or set KB_TOKEN (see your account page).")
    text = _read(args.path)
    log_path = args.log_path or ("" if args.path == "-" else args.path)
    beside = [] if args.path == "-" else [os.path.dirname(os.path.abspath(args.path))]
    text = with_failed_job_log(text, [os.getcwd(), *beside])
    created = _submit(url, token, {"log": text, "log_path": log_path})
    analysis = _wait(created["url"], token, args.timeout)
    if analysis["status"] not in ("done", "failed"):
        status, page = analysis["status"], analysis["page"]
        raise KbError(f"still {status} after {args.timeout:.0f}s; see {page}")
    if args.json:
        print(json.dumps(analysis, ensure_ascii=False, indent=2))
    else:
        print(_render(analysis))
    _flush_quietly(url, token)  # the server answers: what waits in the spool can go too
    return 0 if analysis["status"] == "done" else 1


def _read(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()  # noqa: SIM115
    except OSError as error:
        raise KbError(f"cannot read {path}: {error.strerror}") from error
    return data.decode("utf-8", "replace")


def _render(analysis: dict) -> str:
    if analysis["status"] == "failed":
        return f"analysis failed: {analysis['error']}"
    report = analysis.get("report") or {}
    levels = report.get("levels", {})
    out = [
        f"stage: {analysis['stage'] or 'unknown'}   "
        + "  ".join(f"{name} {levels.get(name, 0)}" for name in ("ERROR", "WARNING", "INFO")),
    ]
    for group in report.get("groups", []):
        if group.get("flood"):
            out.append(f"flood: {group['count']}x {group['template']}")
    suggestions = analysis.get("suggestions", [])
    if not analysis["confident"]:
        if key := (report.get("key_line") or {}).get("text", ""):
            out.append(f"no confident match. key line: {key}")
        else:
            out.append("no confident match, and no error or warning line to quote")
        if above := report.get("cause_above"):
            out.append(
                f"line {above['line']} only reports that something before it failed: "
                "send more of the log, from before that line"
            )
        if cut := report.get("cut_in_traceback"):
            out.append(
                f"the log stops inside a traceback at line {cut['line']}: "
                "send the lines after it, down to the exception"
            )
    for rank, s in enumerate(suggestions, start=1):
        mark = "confident" if s["confident"] else "weak"
        out.append(f"\n{rank}. {s['title']}  [{s['slug']}]  score {s['score']:.2f} ({mark})")
        out.extend(f"   line {e['line']}: {e['text']}" for e in s["evidence"][:3])
        if s["confident"]:
            out.append(f"   root cause: {s['root_cause']}")
            out.append("   remedy:")
            out.extend(f"     {line}" for line in s["remedy"].splitlines())
            out.append(f"   {s['url']}")
    out.append(f"\n{analysis['page']}")
    return "\n".join(out)


def _brief(analysis: dict, remedy_lines: int = 5) -> list[str]:
    """What `kb run` and `kb watch` print: the stage, the first suggestion, its remedy, a link."""
    if analysis["status"] == "failed":
        return [f"analysis failed: {analysis['error']}", analysis["page"]]
    if analysis["status"] != "done":
        return [f"analysis still {analysis['status']}: {analysis['page']}"]
    out = [f"stage: {analysis['stage'] or 'unknown'}"]
    top = (analysis.get("suggestions") or [None])[0]
    if top and analysis["confident"]:
        out.append(f"top suggestion: {top['title']} [{top['slug']}]")
        out.extend(f"  {line}" for line in top["remedy"].splitlines()[:remedy_lines])
    else:
        out.append("unexplained: a new knowledge gap")
    out.append(analysis["page"])
    return out


def _send_failure(url: str, token: str, body: dict, wait: float, prefix: str = "") -> None:
    """Send a failure (or spool it) and print what the server made of it."""
    try:
        created = _submit(url, token, body)
        analysis = _wait(created["url"], token, wait)
    except Unreachable as error:
        path = _spool(body)
        print(f"kb: {prefix}{error}; the tail waits in {path} (kb flush)", file=sys.stderr)
        return
    except KbError as error:
        print(f"kb: {prefix}the tail was not accepted: {error}", file=sys.stderr)
        return
    lines = _brief(analysis)
    if prefix:  # kb watch: one line per failure
        lines = [prefix + " | ".join(lines)]
    for line in lines:
        print(f"kb: {line}", file=sys.stderr)


def failure_body(
    tail: str,
    *,
    source: str,
    command: str,
    exit_status: int | None,
    log_path: str,
    key: str = "",
) -> dict:
    return {
        "key": key or uuid.uuid4().hex,
        "log": tail,
        "log_path": log_path,
        "source": source,
        "command": command[:2000],
        "exit_status": exit_status,
        "host": socket.gethostname(),
        "cwd": os.getcwd(),
        "job_id": next((os.environ[v] for v in JOB_ID_VARIABLES if os.environ.get(v)), ""),
    }


# kb run


class Tail:
    """The last bytes of the output in a fixed ring (bounded memory, nothing allocated per
    chunk), with which stream wrote each stretch: cut into lines only at the end, so stdout
    and stderr never splice mid-line."""

    def __init__(self, max_bytes: int = TAIL_BYTES):
        self.ring = bytearray(max_bytes)
        self.written = 0  # bytes ever added; the ring holds the last `size` of them
        self.size = 0
        self.stretches: deque[list[int]] = deque()  # [stream, length], oldest first
        self.lock = threading.Lock()

    def add(self, stream: int, data: bytes | memoryview) -> None:
        capacity = len(self.ring)
        data = memoryview(data)[-capacity:]
        with self.lock:
            at = self.written % capacity
            first = min(len(data), capacity - at)
            self.ring[at : at + first] = data[:first]
            self.ring[: len(data) - first] = data[first:]
            self.written += len(data)
            self.stretches.append([stream, len(data)])
            self.size += len(data)
            while self.size > capacity:
                excess = self.size - capacity
                if self.stretches[0][1] <= excess:
                    self.size -= self.stretches.popleft()[1]
                else:
                    self.stretches[0][1] -= excess
                    self.size = capacity

    def text(self, lines: int) -> str:
        with self.lock:
            start = (self.written - self.size) % len(self.ring)
            data = bytes(self.ring[start : start + self.size])
            data += bytes(self.ring[: self.size - len(data)])
            stretches = [tuple(stretch) for stretch in self.stretches]
        whole, pending, at = [], {}, 0
        for stream, length in stretches:
            piece = pending.pop(stream, b"") + data[at : at + length]
            at += length
            cut = piece.rfind(b"\n") + 1
            whole.append(piece[:cut])
            pending[stream] = piece[cut:]
        whole.extend(rest + b"\n" for rest in pending.values() if rest)
        joined = b"".join(whole)
        return b"\n".join(joined.splitlines()[-lines:]).decode("utf-8", "replace")


def _pump(source, sink_fd: int, log, tail: Tail) -> None:
    """Copy one stream of the command to our own, unchanged and at once; keep its tail.
    One buffer, read into again and again: no memory is allocated per chunk."""
    fd = source.fileno()
    with contextlib.suppress(ImportError, OSError):  # fewer, larger reads: a bigger pipe
        import fcntl

        fcntl.fcntl(fd, F_SETPIPE_SZ, CHUNK)
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    writing = True
    while count := os.readv(fd, [buffer]):
        chunk = view[:count]
        if writing:
            writing = _write_all(sink_fd, chunk)
        if log is not None:
            log.write(chunk)
        tail.add(sink_fd, chunk)
        if count < COALESCE_BELOW:
            # A chatty command writes small pieces, and waking kb for each costs more than the
            # command's own writes: let a moment's worth gather (a delay no reader can see).
            time.sleep(COALESCE_SECONDS)


def _write_all(fd: int, data: memoryview) -> bool:
    """False once our own output is gone (a closed pipe): the command runs on regardless."""
    view = data
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        return False
    return True


def _run(args) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise KbError("nothing to run: kb run [options] -- CMD [ARG …]")
    url, token = _config(args)
    log = open(args.log, "ab") if args.log else None  # noqa: SIM115
    try:
        status = _run_command(command, log, tail := Tail())
    finally:
        if log is not None:
            log.close()
    if status != 0:
        body = failure_body(
            with_failed_job_log(tail.text(args.lines), [os.getcwd()]),
            source="kb-run",
            command=shlex.join(command),
            exit_status=status,
            log_path=os.path.abspath(args.log) if args.log else "",
        )
        print(f"kb: {command[0]} exited with status {status}", file=sys.stderr)
        _send_failure(url, token, body, args.wait)
    _flush_quietly(url, token)
    return status


def _run_command(command: list[str], log, tail: Tail) -> int:
    """Run the command, pass its output through, and return its status as a shell would
    (128 + the signal that ended it). Signals sent to `kb` go on to the command."""
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as error:
        message = f"kb: {command[0]}: {error.strerror}"
        print(message, file=sys.stderr)
        tail.add(2, message.encode() + b"\n")
        return 127 if isinstance(error, FileNotFoundError) else 126
    # Ctrl-C and Ctrl-\ at a terminal reach the whole foreground group, the command too:
    # there kb only outlives them. Elsewhere (a scheduler signalling kb) they are passed on.
    keyboard = (signal.SIGINT, signal.SIGQUIT)
    passed_on = (*keyboard, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
    interactive = sys.stdin is not None and sys.stdin.isatty()
    previous = {
        number: signal.signal(
            number,
            signal.SIG_IGN
            if interactive and number in keyboard
            else lambda number, _frame: child.send_signal(number),
        )
        for number in passed_on
    }
    pumps = [
        threading.Thread(target=_pump, args=(child.stdout, 1, log, tail), daemon=True),
        threading.Thread(target=_pump, args=(child.stderr, 2, log, tail), daemon=True),
    ]
    # The kernel hands a signal sent to kb to any thread that does not block it, but only the
    # main thread runs the handler, and only once its wait for the command is interrupted: a
    # signal taken by a pump would never reach the command. The pumps inherit this mask.
    signal.pthread_sigmask(signal.SIG_BLOCK, passed_on)
    try:
        for pump in pumps:
            pump.start()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, passed_on)
    try:
        code = child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    # A background process the command left behind may hold its output open: do not wait
    # for it forever.
    for pump in pumps:
        pump.join(timeout=5)
    return 128 - code if code < 0 else code


# kb watch

WATCHED = ("**/log/*.log", "**/slurm-*.out")
KALDI_ENDED = re.compile(r"^# Ended \(code (-?\d+)\)", re.MULTILINE)
SLURM_FAILED = re.compile(
    r"slurmstepd: error: .*(CANCELLED|TIME LIMIT)|oom-kill|DUE TO TIME LIMIT|Out Of Memory"
)
TRACEBACK = "Traceback (most recent call last):"
# The last line of a traceback: the exception, after an optional launcher prefix ("[rank0]:").
EXCEPTION = re.compile(r"^(\[[^\]]*\]:?\s*)?[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b")


def log_failure(text: str) -> tuple[bool, int | None]:
    """Whether a log ended in failure, and the status it names (Kaldi's code), if any."""
    ended = KALDI_ENDED.findall(text)
    if ended:
        code = int(ended[-1])
        return code != 0, code
    lines = [line for line in text.splitlines() if line.strip()]
    if any(SLURM_FAILED.search(line) for line in lines[-20:]):
        return True, None
    last_traceback = max((i for i, line in enumerate(lines) if TRACEBACK in line), default=-1)
    if last_traceback >= 0 and EXCEPTION.match(lines[-1].strip()):
        # The traceback is the last block: only its frames and the exception follow it.
        return True, None
    return False, None


def _read_tail(path: Path, lines: int) -> str:
    with open(path, "rb") as log:
        log.seek(0, os.SEEK_END)
        log.seek(max(0, log.tell() - TAIL_BYTES))
        data = log.read()
    return b"\n".join(data.splitlines()[-lines:]).decode("utf-8", "replace")


# Kaldi's run.pl, queue.pl, slurm.pl (and their kin) end a failed parallel step by naming the
# log its failed jobs wrote, where the cause is; the recipe's own output only says they failed:
#   run.pl: 4 / 32 failed, log is in exp/tri1_ali/log/align.*.log
#   queue.pl: job failed with status 1, log is in exp/make_mfcc/train/make_mfcc.3.log
JOB_LOG = re.compile(r"\w\.pl: (?:job failed|\d+ / \d+ failed)\b.*\blog is in (\S+)\s*$")
JOB_LOG_LOOK_BACK = 20  # lines at the end of the output where run.pl's last words are
JOB_LOG_LINES = 60
JOB_LOGS_EXAMINED = 1000


def with_failed_job_log(text: str, directories: list[str], lines: int = JOB_LOG_LINES) -> str:
    """`text` followed by the tail of the first failed job's log that its last lines name,
    headed by that log's path as `tail` heads each of several files; `text` unchanged when
    it names none, or none can be read from `directories` (where relative paths start)."""
    named = [
        m.group(1)
        for line in text.splitlines()[-JOB_LOG_LOOK_BACK:]
        if "log is in" in line and (m := JOB_LOG.search(line))
    ]
    if not named:
        return text
    for directory in directories:
        # run.pl writes `*` for the job number; any other glob character is the path's own.
        pattern = glob.escape(os.path.join(directory, named[-1])).replace("[*]", "*")
        paths = sorted(glob.glob(pattern), key=_job_order)
        for path in paths[:JOB_LOGS_EXAMINED]:
            try:
                job_tail = _read_tail(Path(path), lines)
            except OSError:
                continue
            if log_failure(job_tail)[0]:
                shown = os.path.relpath(path, directory) if not os.path.isabs(named[-1]) else path
                return f"{text.rstrip()}\n==> {shown} <==\n{job_tail}"
    return text


def _job_order(path: str) -> list:
    """align.2.log before align.10.log."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


def _kaldi_command(text: str) -> str:
    """run.pl and queue.pl write the command as the first line of the log: `# prog args`."""
    first = text.split("\n", 1)[0]
    return first[2:] if first.startswith("# ") else ""


class WatchState:
    """What was sent, across restarts: a log is one failure per path, inode, size and mtime
    (a re-run that overwrites it is a new one). Saved whole, by rename, after each send."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.sent = set(json.loads(path.read_text())["sent"])
        except (OSError, ValueError, KeyError, TypeError):
            self.sent = set()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.write_text(json.dumps({"sent": sorted(self.sent)}))
        os.replace(temporary, self.path)


def _identity(path: Path, stat: os.stat_result) -> str:
    return f"{path}|{stat.st_ino}|{stat.st_size}|{stat.st_mtime_ns}"


def _matching(directories: list[str], patterns: tuple[str, ...]):
    """Every file under the directories that a pattern matches (polling: network file
    systems, which clusters use, do not deliver change events)."""
    for directory in directories:
        for root, _dirs, files in os.walk(directory):
            for name in files:
                path = Path(root, name).absolute()
                if any(path.match(pattern) for pattern in patterns):
                    yield path


def _watch(args) -> int:
    url, token = _config(args)
    patterns = (*WATCHED, *args.glob)
    state = WatchState(spool_dir().parent / "watch-state.json")
    examined: dict[Path, str] = {}  # unchanged since looked at: not read again
    print(f"kb: watching {' '.join(args.dirs)} for {' '.join(patterns)}", file=sys.stderr)
    try:
        while True:
            _scan(args, url, token, patterns, state, examined)
            _flush_quietly(url, token)
            if args.once:
                return 0
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def _scan(args, url, token, patterns, state: WatchState, examined: dict[Path, str]) -> None:
    now = time.time()
    for path in _matching(args.dirs, patterns):
        try:
            stat = path.stat()
        except OSError:
            continue  # gone since it was listed
        identity = _identity(path, stat)
        if examined.get(path) == identity or now - stat.st_mtime < args.settle:
            continue  # looked at already, or still being written
        examined[path] = identity
        if identity in state.sent:
            continue
        try:
            tail = _read_tail(path, args.lines)
        except OSError:
            continue
        failed, code = log_failure(tail)
        if not failed:
            continue
        key = hashlib.sha256(f"{socket.gethostname()}|{identity}".encode()).hexdigest()[:40]
        body = failure_body(
            tail,
            source="kb-watch",
            command=_kaldi_command(_read_head(path)),
            exit_status=code,
            log_path=str(path),
            key=key,
        )
        # Sent (or spooled) first, then remembered: a crash in between sends it again under
        # the same key, which the server stores once.
        _send_failure(url, token, body, args.wait, prefix=f"FAILED {path}: ")
        state.sent.add(identity)
        state.save()


def _read_head(path: Path) -> str:
    try:
        with open(path, "rb") as log:
            return log.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
