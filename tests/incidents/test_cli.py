"""`manage.py analyze_log` and the `kb` console command."""

import io
import json
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token

from tests.incidents.test_analysis_lifecycle import OOM_TAIL
from tests.services import free_port


def _run(*args, stdin: str | None = None) -> dict:
    out = io.StringIO()
    if stdin is not None:
        sys_stdin, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        call_command("analyze_log", *args, stdout=out)
    finally:
        if stdin is not None:
            sys.stdin = sys_stdin
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_it_prints_the_documented_json_shape(tmp_path, catalog):
    log = tmp_path / "train.1.log"
    log.write_text("INFO start\nWARNING slow step\nWARNING slow step\n" + OOM_TAIL)
    report = _run(str(log), "--json")
    assert {"stage", "levels", "groups", "line_groups", "suggestions"} <= set(report)
    assert set(report["levels"]) == {"INFO", "WARNING", "ERROR"}
    assert len(report["line_groups"]) == 7
    group = report["groups"][0]
    assert {"template", "level", "count", "first_line", "last_line"} <= set(group)
    top = report["suggestions"][0]
    assert {"slug", "title", "score", "confident", "evidence"} <= set(top)
    assert top["slug"] == "gpu-oom" and top["confident"] is True
    assert {"line", "text"} <= set(top["evidence"][0])


@pytest.mark.django_db
def test_it_reads_standard_input_and_groups_only_when_asked(catalog):
    report = _run("-", "--json", "--templates-only", stdin="a 1\na 2\nb\n")
    assert report["suggestions"] == []
    assert report["line_groups"][0] == report["line_groups"][1] != report["line_groups"][2]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "message"),
    [("", "empty"), (None, "Cannot read")],
)
def test_it_explains_what_it_cannot_analyse(tmp_path, content, message):
    path = tmp_path / "x.log"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CommandError, match=message):
        call_command("analyze_log", str(path), "--json", stdout=io.StringIO())


@pytest.mark.django_db(transaction=True)
def test_kb_sends_a_tail_to_a_running_server_and_prints_the_remedy(live_server, workers, alice):
    workers("kb")
    token = Token.objects.create(user=alice).key
    result = subprocess.run(
        [sys.executable, "-m", "kbcli.kb", "analyze", "-", "--url", live_server.url],
        input=OOM_TAIL,
        capture_output=True,
        text=True,
        timeout=60,
        env={"KB_TOKEN": token, "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "[gpu-oom]" in result.stdout.splitlines()[2]
    assert "CUDA out of memory" in result.stdout
    assert "remedy:" in result.stdout


def test_kb_explains_a_missing_token():
    result = subprocess.run(
        [sys.executable, "-m", "kbcli.kb", "analyze", "-"],
        input="x",
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1
    assert "no API token" in result.stderr


def test_kb_explains_an_unreachable_server():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kbcli.kb",
            "analyze",
            "-",
            "--url",
            f"http://127.0.0.1:{free_port()}",
        ],
        input="x",
        capture_output=True,
        text=True,
        env={"KB_TOKEN": "t", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1
    assert "cannot reach" in result.stderr


@pytest.mark.django_db
def test_it_warns_that_an_empty_knowledge_base_matches_nothing(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(OOM_TAIL)
    err = io.StringIO()
    call_command("analyze_log", str(log), "--json", stdout=io.StringIO(), stderr=err)
    assert "run manage.py seed_catalog" in err.getvalue()


@pytest.mark.processes
def test_it_explains_a_database_that_was_never_migrated(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(OOM_TAIL)
    result = subprocess.run(
        [sys.executable, "manage.py", "analyze_log", str(log)],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": "/usr/bin:/bin",
            "VAR_DIR": str(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'new.sqlite3'}",
        },
    )
    assert result.returncode == 1
    assert "Run manage.py migrate and manage.py seed_catalog first." in result.stderr
    assert "Traceback" not in result.stderr
