"""The simulated users of bench/bench_load.py, and the figures they leave behind.

A `User` is one engineer in a browser: it signs in through the form, then mixes browsing,
searching, opening incidents, filing one and submitting a log tail for analysis (polling its
page as htmx does) until the deadline. Every request lands in one shared `Stats`; `report`
prints its latency percentiles per request type, the throughput and the errors.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import defaultdict

import requests

PASSWORD = "load-pw-5417"
POLL_EVERY = 0.7  # the analysis page's hx-trigger
SEARCHES = [
    "out of memory",
    "nccl",
    "timeout",
    "显存",
    "disk",
    "checkpoint",
    "NaN",
    "tokenizer",
    "cuda",
    "kaldi",
]
ACTIONS = {  # weight of each action in a user's mix
    "browse": 30,
    "search": 25,
    "incident": 25,
    "file": 5,
    "analyse": 15,
}


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.samples: list[str] = []
        self.accepted: list[int] = []
        self.seen_done: list[float] = []
        self.filed: list[str] = []

    def record(self, kind: str, seconds: float, ok: bool, detail: str = "") -> None:
        with self.lock:
            self.latency[kind].append(seconds * 1000)
            if not ok:
                self.errors[kind] += 1
                if len(self.samples) < 10:
                    self.samples.append(f"{kind}: {detail}")


class User:
    """One engineer in a browser: a session, and the requests a page visit makes."""

    def __init__(self, base: str, username: str, stats: Stats, slugs: list[str], rng):
        self.base, self.username, self.stats, self.slugs, self.rng = (
            base,
            username,
            stats,
            slugs,
            rng,
        )
        self.session = requests.Session()

    def request(self, kind: str, method: str, path: str, expect: int, **kwargs):
        started = time.perf_counter()
        try:
            response = self.session.request(
                method, self.base + path, allow_redirects=False, timeout=30, **kwargs
            )
        except requests.RequestException as error:
            self.stats.record(kind, time.perf_counter() - started, False, repr(error))
            return None
        ok = response.status_code == expect
        detail = f"{method} {path} → {response.status_code}"
        self.stats.record(kind, time.perf_counter() - started, ok, detail)
        return response if ok else None

    def sign_in(self) -> None:
        page = self.request("sign in: form", "GET", "/login/", 200)
        response = self.request(
            "sign in: post",
            "POST",
            "/login/",
            302,
            data={
                "username": self.username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": csrf(page),
            },
        )
        if response is None:
            raise SystemExit(f"{self.username} could not sign in")

    def browse(self) -> None:
        params = self.rng.choice(
            [{}, {}, {"page": "2"}, {"stage": "train"}, {"sort": "-recurrences"}]
        )
        self.request("browse /incidents/", "GET", "/incidents/", 200, params=params)

    def search(self) -> None:
        self.request(
            "search ?q=", "GET", "/incidents/", 200, params={"q": self.rng.choice(SEARCHES)}
        )

    def incident(self) -> None:
        with self.stats.lock:
            slug = self.rng.choice(self.slugs + self.stats.filed)
        self.request("incident page", "GET", f"/incidents/{slug}/", 200)

    def file(self) -> None:
        page = self.request("file: form", "GET", "/incidents/new/", 200)
        if page is None:
            return
        n = self.rng.randrange(10**6)
        symptom = f"ERROR shard-loader[{n}]: manifest checksum mismatch for shard {n % 977} of corpus v{n % 13}"
        self.request(
            "file: similar (htmx)",
            "GET",
            "/incidents/similar/",
            200,
            params={"symptom": symptom},
            headers={"HX-Request": "true"},
        )
        response = self.request(
            "file: post",
            "POST",
            "/incidents/new/",
            302,
            data={
                "csrfmiddlewaretoken": csrf(page),
                "title": f"Shard manifest checksum mismatch {self.username} {n}",
                "symptom": symptom,
                "root_cause": "The manifest was regenerated while shards were still being copied.",
                "remedy": f"python tools/verify_shards.py --manifest data/v{n % 13}/manifest.json --fix",
                "discipline": "reconcile",
                "prevention": "Reconcile shard counts and checksums before training starts.",
                "stage": "data",
                "severity": "medium",
                "environment": "8×A100, torch 2.4, CUDA 12.4",
                "tags": "shards, checksum",
            },
        )
        if response is not None:
            location = response.headers["Location"]
            with self.stats.lock:
                self.stats.filed.append(location.rstrip("/").rsplit("/", 1)[-1])
            self.request("incident page", "GET", location, 200)

    def analyse(self, tails, deadline: float) -> None:
        page = self.request("analysis: form", "GET", "/analyses/new/", 200)
        if page is None:
            return
        log_path, text = self.rng.choice(tails)
        started = time.perf_counter()
        response = self.request(
            "analysis: submit",
            "POST",
            "/analyses/new/",
            302,
            data={"csrfmiddlewaretoken": csrf(page), "log": text, "log_path": log_path},
        )
        if response is None:
            return
        location = response.headers["Location"]
        with self.stats.lock:
            self.stats.accepted.append(int(location.rstrip("/").rsplit("/", 1)[-1]))
        shown = self.request("analysis page", "GET", location, 200)
        while shown is not None and status_of(shown.text) in ("queued", "running"):
            if time.perf_counter() > deadline:
                return  # time is up; the drain below still waits for it
            time.sleep(POLL_EVERY)
            shown = self.request(
                "analysis: poll (htmx)", "GET", location, 200, headers={"HX-Request": "true"}
            )
        if shown is not None:
            with self.stats.lock:
                self.stats.seen_done.append((time.perf_counter() - started) * 1000)

    def run(self, tails, start: threading.Barrier, deadline_box: list[float], think: float) -> None:
        self.sign_in()
        start.wait()
        deadline = deadline_box[0]
        kinds, weights = zip(*ACTIONS.items(), strict=True)
        while time.perf_counter() < deadline:
            kind = self.rng.choices(kinds, weights)[0]
            if kind == "analyse":
                self.analyse(tails, deadline)
            else:
                getattr(self, kind)()
            time.sleep(self.rng.uniform(0, think))


def csrf(response) -> str:
    match = re.search(
        r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text if response else ""
    )
    return match.group(1) if match else ""


def status_of(html: str) -> str:
    match = re.search(r'id="analysis-result"[^>]*data-status="(\w+)"', html)
    return match.group(1) if match else "?"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def spread(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 50):7.0f} ms  p95 {percentile(values, 95):7.0f} ms  "
        f"p99 {percentile(values, 99):7.0f} ms"
    )


def report(args, stats: Stats, load_seconds: float, drain_seconds: float, setup_seconds: float):
    total = sum(len(v) for k, v in stats.latency.items() if not k.startswith("sign in"))
    errors = sum(stats.errors.values())
    print(
        f"load: {args.users} users, {load_seconds:.0f} s, think 0–{args.think:.1f} s; gunicorn -w {args.web_workers} "
        f"(sync), 2 celery workers (concurrency 1), Redis, PostgreSQL; {os.cpu_count()} CPUs; "
        f"setup {setup_seconds:.0f} s"
    )
    print(
        f"{'request':26s} {'count':>6s} {'p50 ms':>8s} {'p95 ms':>8s} {'p99 ms':>8s} {'errors':>7s}"
    )
    for kind in sorted(stats.latency):
        values = stats.latency[kind]
        print(
            f"{kind:26s} {len(values):6d} {percentile(values, 50):8.1f} {percentile(values, 95):8.1f} "
            f"{percentile(values, 99):8.1f} {stats.errors.get(kind, 0):7d}"
        )
    print(
        f"throughput: {total / load_seconds:.1f} requests/s ({total} requests, sign-ins excluded); "
        f"errors: {errors}"
    )
    for sample in stats.samples:
        print("  error:", sample)
