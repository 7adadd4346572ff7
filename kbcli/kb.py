"""`kb`: send a log tail to a running Incident KB and print the suggested remedies.

    tail -n 200 exp/tri3/log/align.1.log | kb analyze - --log-path exp/tri3/log/align.1.log

The server and the API token come from --url/--token or KB_URL/KB_TOKEN. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000"


class KbError(Exception):
    pass


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
    analyze.add_argument("--url", default=os.environ.get("KB_URL", DEFAULT_URL))
    analyze.add_argument("--token", default=os.environ.get("KB_TOKEN", ""))
    analyze.add_argument("--json", action="store_true", help="print the analysis as JSON")
    analyze.add_argument("--timeout", type=float, default=60.0, help="seconds to wait")
    analyze.set_defaults(run=_analyze)
    return parser


def _analyze(args) -> int:
    if not args.token:
        raise KbError("no API token: pass --token or set KB_TOKEN (see your account page).")
    text = _read(args.path)
    log_path = args.log_path or ("" if args.path == "-" else args.path)
    base = args.url.rstrip("/")
    created = _request(
        "POST", f"{base}/api/v1/analyses/", args.token, {"log": text, "log_path": log_path}
    )
    analysis = _wait(created["url"], args.token, args.timeout)
    if args.json:
        print(json.dumps(analysis, ensure_ascii=False, indent=2))
    else:
        print(_render(analysis))
    return 0 if analysis["status"] == "done" else 1


def _read(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()  # noqa: SIM115
    except OSError as error:
        raise KbError(f"cannot read {path}: {error.strerror}") from error
    return data.decode("utf-8", "replace")


def _wait(url: str, token: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    delay = 0.1
    while True:
        analysis = _request("GET", url, token)
        if analysis["status"] in ("done", "failed"):
            return analysis
        if time.monotonic() > deadline:
            raise KbError(
                f"still {analysis['status']} after {timeout:.0f}s; see {analysis['page']}"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


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
        raise KbError(_error_message(error)) from error
    except urllib.error.URLError as error:
        raise KbError(f"cannot reach {url}: {error.reason}") from error


def _error_message(error: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(error.read())["error"]
    except (ValueError, KeyError, TypeError):
        return f"HTTP {error.code}"
    details = "; ".join(
        f"{field}: {' '.join(map(str, msgs))}" for field, msgs in body.get("fields", {}).items()
    )
    return f"HTTP {error.code}: {body.get('message', '')} {details}".strip()


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
        key = (report.get("key_line") or {}).get("text", "")
        out.append(f"no confident match. key line: {key}")
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


if __name__ == "__main__":
    sys.exit(main())
