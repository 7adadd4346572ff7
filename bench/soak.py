"""Soak: the whole app under supervisord for a long stretch of mixed use, with faults.

Starts what `bin/start` starts (web, analyses worker, re-ranking worker, beat, and the
private Redis unless --broker names one) on a database of its own, seeded, then runs for
--minutes:

* pasters submit tails of 20 to 20,000 lines through the API and time paste → suggestions;
* for the first --idle-minutes nobody edits knowledge (the baseline), then editors file
  incidents, edit remedies and add or change signatures without pause;
* readers open the lists, the matrix and the weekly report;
* every --fault-every minutes a fault: kill -9 of the analyses worker in the middle of an
  analysis (time from the worker being back to that tail done), or kill -9 of Redis (time
  to finish the tails queued when it died); with --cache-url, Redis is the cache too.

Printed at the end: p50/p95 paste → suggestions idle and while editing (and their ratio,
target ≤ 2), process exits seen by supervisord, HTTP 5xx per endpoint, analyses accepted,
done, failed and lost, and each fault's recovery time.

    .venv/bin/python bench/soak.py --minutes 30                     # embedded default
    .venv/bin/python bench/soak.py --minutes 30 --database postgres://postgres@127.0.0.1/kb_soak \\
        --broker redis://127.0.0.1:6379/5 --cache-url redis://127.0.0.1:6379/6
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CASES = ROOT / "tests" / "logmatch" / "cases"
PY = str(ROOT / ".venv" / "bin" / "python")
SUPERVISORCTL = str(ROOT / ".venv" / "bin" / "supervisorctl")
PORT = 8791


class Soak:
    def __init__(self, args, env: dict[str, str], var: Path):
        self.args, self.env, self.var = args, env, var
        self.base = f"http://127.0.0.1:{PORT}"
        self.stop = threading.Event()
        self.editing = threading.Event()
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)  # idle / editing
        self.status: Counter[str] = Counter()
        self.server_errors: Counter[str] = Counter()
        self.accepted: list[int] = []
        self.faults: list[str] = []
        self.tails = _tails()

    # --- the app -----------------------------------------------------------------------
    def manage(self, *command: str) -> str:
        result = subprocess.run(
            [PY, "manage.py", *command], cwd=ROOT, env=self.env, capture_output=True, text=True
        )
        if result.returncode:
            raise SystemExit(result.stderr[-2000:])
        return result.stdout

    def start(self) -> None:
        conf = subprocess.run(
            [PY, "-m", "config.supervise", str(self.var)],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.conf = conf
        self.manage("migrate", "--noinput", "-v0")
        self.manage("seed_catalog")
        self.manage("seed_runbooks")
        self.manage("ensure_users")
        self.lead = self.manage("drf_create_token", "lead").split()[2]
        self.engineer = self.manage("drf_create_token", "engineer").split()[2]
        self.supervisord = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "supervisord"), "--configuration", conf],
            cwd=ROOT,
            env=self.env,
            stdout=(self.var / "soak-supervisord.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                state = requests.get(self.base + "/healthz", timeout=2).json()
                if state["workers"].get("analyses") and state["workers"].get("rescore"):
                    return
            except (requests.RequestException, ValueError):
                pass
            time.sleep(0.5)
        raise SystemExit("the app did not come up: see " + str(self.var / "soak-supervisord.log"))

    def shutdown(self) -> None:
        os.killpg(self.supervisord.pid, signal.SIGTERM)
        self.supervisord.wait(60)

    def pid(self, program: str) -> int:
        out = subprocess.run(
            [SUPERVISORCTL, "-c", self.conf, "pid", program], capture_output=True, text=True
        ).stdout.strip()
        return int(out) if out.isdigit() else 0

    def exits(self) -> Counter[str]:
        log = (self.var / "log" / "supervisord.log").read_text(errors="replace")
        return Counter(re.findall(r"exited: (\w+) \((?!exit status 0)", log))

    # --- HTTP ---------------------------------------------------------------------------
    def call(self, kind: str, method: str, path: str, token: str, **kwargs):
        try:
            response = requests.request(
                method,
                self.base + path,
                headers={"Authorization": f"Token {token}"},
                timeout=60,
                **kwargs,
            )
        except requests.RequestException as error:
            with self.lock:
                self.server_errors[f"{kind}: {error.__class__.__name__}"] += 1
            return None
        with self.lock:
            self.status[f"{kind} {response.status_code}"] += 1
            if response.status_code >= 500:
                self.server_errors[kind] += 1
        return response

    def paste(self, lines: int) -> int | None:
        text = self.tail(lines)
        response = self.call(
            "paste", "POST", "/api/v1/analyses/", self.engineer, json={"log": text}
        )
        if response is None or response.status_code != 202:
            return None
        analysis_id = response.json()["id"]
        with self.lock:
            self.accepted.append(analysis_id)
        return analysis_id

    def state(self, analysis_id: int) -> str:
        response = self.call("poll", "GET", f"/api/v1/analyses/{analysis_id}/", self.engineer)
        return response.json()["status"] if response is not None and response.ok else ""

    def wait_done(self, analysis_id: int, limit: float = 300) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            response = self.call("poll", "GET", f"/api/v1/analyses/{analysis_id}/", self.engineer)
            if response is not None and response.status_code == 200:
                status = response.json()["status"]
                if status in ("done", "failed"):
                    return status
            time.sleep(0.2)
        return "timeout"

    def tail(self, lines: int) -> str:
        failure = random.choice(self.tails)
        noise = [
            f"[2026-11-30 10:{n // 60 % 60:02d}:{n % 60:02d}] INFO step {n} loss {2 + (n % 97) / 100:.3f}"
            f" lr 3e-4 grad_norm {n % 7}.{n % 10} tokens/s {9000 + n % 500}"
            for n in range(max(0, lines - failure.count("\n") - 1))
        ]
        return "\n".join([*noise, failure])

    # --- the users ----------------------------------------------------------------------
    def paster(self) -> None:
        while not self.stop.is_set():
            lines = random.choice((20, 200, 2000, 20_000))
            started = time.monotonic()
            analysis_id = self.paste(lines)
            if analysis_id is None:
                continue
            phase = "editing" if self.editing.is_set() else "idle"
            status = self.wait_done(analysis_id)
            with self.lock:
                if status == "done":
                    self.latency[phase].append(time.monotonic() - started)
            time.sleep(random.uniform(0.5, 2.0))

    def editor(self) -> None:
        self.editing.wait()
        n = 0
        while not self.stop.is_set():
            n += 1
            slug = f"soak-{threading.get_ident() % 100_000}-{n}"
            self.call(
                "file",
                "POST",
                "/api/v1/incidents/",
                self.lead,
                json={
                    "slug": slug,
                    "title": f"Soak incident {n}",
                    "symptom": f"RuntimeError: soak component {n} lost its shard index {n * 7}",
                    "root_cause": "A soak test made it up.",
                    "remedy": f"rerun stage {n}",
                    "discipline": "validate-first",
                    "stage": random.choice(("build", "data", "train", "serve")),
                },
            )
            self.call(
                "edit",
                "PATCH",
                "/api/v1/incidents/gpu-oom/",
                self.lead,
                json={"remedy": f"Halve the micro-batch (edit {n}); rerun the tiny sample."},
            )
            self.call(
                "signature",
                "POST",
                "/api/v1/signatures/",
                self.lead,
                json={
                    "incident": slug,
                    "pattern": rf"soak component {n} lost its shard",
                    "examples": f"soak component {n} lost its shard index 3",
                },
            )
            self.stop.wait(random.uniform(*self.args.edit_pause))

    def reader(self) -> None:
        paths = ["/api/v1/incidents/?q=out+of+memory", "/api/v1/matrix/", "/api/v1/analyses/"]
        paths += ["/api/v1/gaps/", "/api/v1/incidents/?q=%E6%98%BE%E5%AD%98"]
        while not self.stop.is_set():
            path = random.choice(paths)
            self.call("read " + path.split("?")[0], "GET", path, self.engineer)
            time.sleep(random.uniform(0.2, 1.0))

    # --- faults -------------------------------------------------------------------------
    def kill_worker_mid_analysis(self) -> None:
        analysis_id = self.paste(20_000)
        if analysis_id is None:
            return
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.state(analysis_id) != "running":
            time.sleep(0.01)
        worker = self.pid("worker")
        os.killpg(os.getpgid(worker), signal.SIGKILL)
        killed = time.monotonic()
        while self.pid("worker") in (0, worker):
            time.sleep(0.2)
        back = time.monotonic()
        status = self.wait_done(analysis_id, 300)
        self.faults.append(
            f"kill -9 worker: back after {back - killed:.1f} s; its tail {status} "
            f"{time.monotonic() - back:.1f} s after the worker was back"
        )

    def kill_redis(self) -> None:
        if not self.pid("redis"):
            return  # an external broker: not ours to kill
        queued = [self.paste(200) for _ in range(5)]
        os.kill(self.pid("redis"), signal.SIGKILL)
        killed = time.monotonic()
        statuses = [self.wait_done(pk, 300) for pk in queued if pk]
        self.faults.append(
            f"kill -9 redis with 5 tails just queued: {Counter(statuses)} "
            f"{time.monotonic() - killed:.1f} s after the kill"
        )

    def faulter(self) -> None:
        faults = [self.kill_worker_mid_analysis, self.kill_redis]
        number = 0
        while not self.stop.wait(self.args.fault_every * 60):
            faults[number % len(faults)]()
            number += 1

    # --- the run ------------------------------------------------------------------------
    def run(self) -> None:
        threads = [threading.Thread(target=self.paster) for _ in range(self.args.pasters)]
        threads += [threading.Thread(target=self.editor) for _ in range(self.args.editors)]
        threads += [threading.Thread(target=self.reader) for _ in range(self.args.readers)]
        if self.args.fault_every:
            threads.append(threading.Thread(target=self.faulter))
        for thread in threads:
            thread.start()
        time.sleep(self.args.idle_minutes * 60)
        self.editing.set()
        time.sleep((self.args.minutes - self.args.idle_minutes) * 60)
        self.stop.set()
        for thread in threads:
            thread.join(600)

    def report(self) -> None:
        finals = Counter(self.wait_done(pk, 600) for pk in self.accepted)
        print(f"\nanalyses accepted {len(self.accepted)}: {dict(finals)}")
        for phase in ("idle", "editing"):
            values = sorted(self.latency[phase])
            if values:
                p95 = values[int(0.95 * (len(values) - 1))]
                print(
                    f"paste → suggestions, {phase}: n={len(values)} "
                    f"p50 {statistics.median(values):.2f} s, p95 {p95:.2f} s"
                )
        idle, editing = sorted(self.latency["idle"]), sorted(self.latency["editing"])
        if idle and editing:
            ratio = editing[int(0.95 * (len(editing) - 1))] / idle[int(0.95 * (len(idle) - 1))]
            print(f"p95 ratio editing/idle: {ratio:.2f} (target ≤ 2)")
        print(f"process exits seen by supervisord: {dict(self.exits())} (faults kill some)")
        print(f"HTTP 5xx or no answer: {dict(self.server_errors) or 0}")
        print(f"answers: {dict(sorted(self.status.items()))}")
        for fault in self.faults:
            print(fault)


def _tails() -> list[str]:
    tails = [path.read_text(errors="replace") for path in sorted(CASES.glob("*.log"))]
    return [tail for tail in tails if len(tail) < 200_000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--idle-minutes", type=float, default=5)
    parser.add_argument("--pasters", type=int, default=4)
    parser.add_argument("--editors", type=int, default=2)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument(
        "--edit-pause",
        type=float,
        nargs=2,
        default=(5.0, 15.0),
        help="seconds between one editor's rounds (file, edit, add a signature)",
    )
    parser.add_argument("--fault-every", type=float, default=6, help="minutes; 0: no faults")
    parser.add_argument("--database", help="DATABASE_URL (default: SQLite under a temp dir)")
    parser.add_argument("--broker", help="CELERY_BROKER_URL (default: the private Redis)")
    parser.add_argument("--cache-url", help="CACHE_URL (default: per-process memory)")
    args = parser.parse_args()
    var = Path(tempfile.mkdtemp(prefix="kb-soak-"))
    env = {**os.environ, "VAR_DIR": str(var), "WEB_PORT": str(PORT), "WEB_WORKERS": "2"}
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"):
        env.pop(name, None)
    for name, value in (
        ("DATABASE_URL", args.database),
        ("CELERY_BROKER_URL", args.broker),
        ("CACHE_URL", args.cache_url),
    ):
        if value:
            env[name] = value
    soak = Soak(args, env, var)
    soak.start()
    print(f"soak: {args.minutes} min in {var} (database {args.database or 'SQLite'})", flush=True)
    try:
        soak.run()
        soak.report()
    finally:
        soak.shutdown()


if __name__ == "__main__":
    main()
