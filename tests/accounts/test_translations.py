"""The Simplified Chinese catalog is complete, and the pages speak it."""

import ast
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from incidents.models import Analysis
from incidents.services import analysis_run

PO = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%%|%[sd]")


def _unquote(line: str) -> str:
    body = line[line.index('"') + 1 : line.rindex('"')]
    return re.sub(r'\\(["\\nt])', lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), body)


def _entries() -> list[dict]:
    """Each entry of the .po: its flags and its msg* strings (continuation lines joined)."""
    entries = []
    for block in re.split(r"\n\s*\n", PO.read_text(encoding="utf-8").strip()):
        entry, key = {"flags": [], "fields": {}}, None
        for line in block.splitlines():
            if line.startswith("#,"):
                entry["flags"] += [flag.strip() for flag in line[2:].split(",")]
            elif line.startswith("#~"):
                entry["obsolete"] = True
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                entry["fields"][key] += _unquote(line)
            else:
                key = line.split(" ", 1)[0]
                entry["fields"][key] = _unquote(line)
        entries.append(entry)
    return entries


def test_the_catalog_is_for_one_plural_form():
    header = _entries()[0]
    assert header["fields"]["msgid"] == ""
    assert "Plural-Forms: nplurals=1; plural=0;" in header["fields"]["msgstr"]
    assert "fuzzy" not in header["flags"]


def test_every_entry_is_translated_and_none_is_fuzzy():
    entries = _entries()[1:]
    assert len(entries) > 400
    untranslated = [
        entry["fields"]["msgid"]
        for entry in entries
        if not all(value for key, value in entry["fields"].items() if key.startswith("msgstr"))
    ]
    fuzzy = [entry["fields"]["msgid"] for entry in entries if "fuzzy" in entry["flags"]]
    obsolete = [entry["fields"].get("msgid") for entry in entries if entry.get("obsolete")]
    assert untranslated == []
    assert fuzzy == []
    assert obsolete == []


def test_translations_keep_every_placeholder():
    for entry in _entries()[1:]:
        fields = entry["fields"]
        source = fields.get("msgid_plural", fields["msgid"])
        for key, value in fields.items():
            if key.startswith("msgstr"):
                assert sorted(PLACEHOLDER.findall(value)) == sorted(PLACEHOLDER.findall(source)), (
                    fields["msgid"]
                )


def _chinese(client):
    client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    return client


PAGES = [
    (
        "incidents:incident-list",
        [],
        ["事故记录本", "登记事故", "工序", "预防纪律", "最近更新（降序）"],
        ["Incident book", "File an incident", "(descending)"],
    ),
    (
        "incidents:incident-detail",
        ["gpu-oom"],
        ["根因", "处方", "预防", "复发", "编辑历史", "(创建)"],
        ["Root cause", "Edit history", "(created)"],
    ),
    (
        "incidents:analysis-new",
        [],
        ["粘贴日志尾段，获取处方", "日志尾段", "分析"],
        ["Paste a log tail", "Log tail"],
    ),
    ("incidents:gap-list", [], ["知识缺口", "关键行"], ["Knowledge gaps", "Key line"]),
    ("reports:matrix", [], ["速查矩阵", "工序 × 纪律", "时间窗口"], ["Quick-reference matrix"]),
    ("reports:weekly-list", [], ["周报", "立即生成"], ["Weekly reports", "Build it now"]),
    ("runbooks:runbook-list", [], ["操作手册", "清单执行记录"], ["Checklist runs"]),
    ("account", [], ["我的账户", "API 令牌", "负责人"], ["Your account", "API token"]),
]


@pytest.mark.parametrize(("name", "args", "chinese", "english"), PAGES)
def test_the_pages_speak_chinese(lena_client, catalog, name, args, chinese, english):
    page = _chinese(lena_client).get(reverse(name, args=args))
    assert page.status_code == 200
    assert page["Content-Language"] == "zh-hans"
    body = page.content.decode()
    for label in ["事故知识库", "分析日志", "退出登录", *chinese]:
        assert label in body, label
    for label in ["Sign out", "Analyze a log", *english]:
        assert label not in body, label


def test_an_engineer_gets_chinese_messages_and_form_errors(alice_client, catalog):
    client = _chinese(alice_client)
    response = client.post(
        reverse("incidents:recurrence-create", args=["gpu-oom"]),
        {"occurred_on": "2026-01-05", "note": ""},
        follow=True,
    )
    assert "已记录：又发生了一次。" in response.content.decode()
    response = client.post(reverse("incidents:incident-create"), {"root_cause": "a\nb"})
    assert response.status_code == 400
    body = response.content.decode()
    assert "请更正下面的错误；你输入的内容不会丢失。" in body
    assert "根因请写成一行、一句话。" in body


def test_english_stays_english(alice_client, catalog):
    body = alice_client.get(reverse("incidents:incident-list")).content.decode()
    assert "Incident book" in body
    assert "事故记录本" not in body


def _engine_messages() -> set[str]:
    """Every message marked with `common.phrases.gettext_noop` where Django is not imported:
    the engine, the calculators, the phrases themselves."""
    root = Path(settings.BASE_DIR)
    sources = [
        *(root / "incidents" / "logmatch").glob("*.py"),
        root / "runbooks" / "calculators.py",
        root / "common" / "phrases.py",
    ]
    messages = set()
    for source in sources:
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "gettext_noop"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                messages.add(node.args[0].value)
    return messages


def test_every_sentence_of_the_engine_is_in_the_catalog():
    catalog = {entry["fields"]["msgid"] for entry in _entries()[1:]}
    messages = _engine_messages()
    assert len(messages) > 40
    assert messages - catalog == set()


OOM_TAIL = (
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    "GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.\n"
)


def test_an_analysis_explains_itself_in_chinese(alice_client, catalog):
    client = _chinese(alice_client)
    response = client.post(
        reverse("incidents:analysis-new"), {"log": OOM_TAIL, "log_path": "exp/llm/log/train.1.log"}
    )
    analysis = Analysis.objects.get()
    analysis_run(analysis_id=analysis.pk)
    body = client.get(response["Location"]).content.decode()
    assert "日志路径 exp/llm/log/train.1.log：声学模型训练" in body
    assert "签名" in body and "命中第 1 行 ERROR" in body
    for english in ("matched", "log path", "no other incident"):
        assert english not in body, english


def test_refused_input_is_explained_in_chinese(alice_client):
    client = _chinese(alice_client)
    upload = SimpleUploadedFile("core", b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64)
    response = client.post(reverse("incidents:analysis-new"), {"file": upload})
    assert response.status_code == 400
    assert "这看起来是二进制文件，不是文本日志。" in response.content.decode()
