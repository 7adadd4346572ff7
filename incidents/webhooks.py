"""What a webhook says, in the three formats teams use: plain data in, a JSON body out."""

from __future__ import annotations

import base64
import hashlib
import hmac
import urllib.parse
from dataclasses import dataclass


class WebhookFailed(Exception):
    """The receiver did not take the message (worth another try)."""


@dataclass(frozen=True)
class Notice:
    """One caught failure as the team reads it (already in the webhook's language)."""

    title: str  # "kb run: train.py failed (exit 3) on gpu-07, job 4242"
    stage: str  # a label, "—" when unknown
    verdict: str  # the top suggestion, or "unexplained — a new knowledge gap"
    remedy: str  # its first lines, or ""
    link: str
    labels: dict[str, str]  # "stage", "verdict", "remedy", "open" in the webhook's language


def _lines(notice: Notice) -> list[str]:
    lines = [
        f"{notice.labels['stage']}: {notice.stage}",
        f"{notice.labels['verdict']}: {notice.verdict}",
    ]
    if notice.remedy:
        lines.append(f"{notice.labels['remedy']}: {notice.remedy}")
    return lines


def slack_payload(notice: Notice) -> dict:
    text = "\n".join(
        [f"*{notice.title}*", *_lines(notice), f"<{notice.link}|{notice.labels['open']}>"]
    )
    return {"text": text}


def feishu_payload(notice: Notice, *, secret: str = "", timestamp: int = 0) -> dict:
    content = [[{"tag": "text", "text": line}] for line in _lines(notice)]
    content.append([{"tag": "a", "text": notice.labels["open"], "href": notice.link}])
    body: dict = {
        "msg_type": "post",
        "content": {"post": {"zh_cn": {"title": notice.title, "content": content}}},
    }
    if secret:  # https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
        key = f"{timestamp}\n{secret}".encode()
        sign = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
        body.update(timestamp=str(timestamp), sign=sign)
    return body


def dingtalk_payload(notice: Notice) -> dict:
    text = "\n\n".join(
        [f"#### {notice.title}", *_lines(notice), f"[{notice.labels['open']}]({notice.link})"]
    )
    return {"msgtype": "markdown", "markdown": {"title": notice.title, "text": text}}


def dingtalk_signed_url(url: str, *, secret: str, timestamp_ms: int) -> str:
    """DingTalk's signed robots take the signature in the query string."""
    string = f"{timestamp_ms}\n{secret}".encode()
    digest = hmac.new(secret.encode(), string, hashlib.sha256).digest()
    sign = urllib.parse.quote_plus(base64.b64encode(digest))
    return f"{url}{'&' if '?' in url else '?'}timestamp={timestamp_ms}&sign={sign}"
