"""Installing `kb`: one file served by the server (no pip on the node), or `pip install`."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


def test_the_server_serves_the_single_file_command_to_anyone(tmp_path):
    response = Client().get("/kb.py")
    assert response.status_code == 200
    script = tmp_path / "kb"
    script.write_bytes(b"".join(response.streaming_content))
    assert script.read_bytes() == (ROOT / "kbcli" / "kb.py").read_bytes()
    script.chmod(0o755)
    usage = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert usage.returncode == 0 and "watch" in usage.stdout  # runs alone, with a shebang


def test_the_account_page_shows_the_one_line_install_with_the_token(alice, alice_client):
    token = Token.objects.create(user=alice).key
    page = alice_client.get(reverse("account")).content.decode()
    assert 'id="kb-install"' in page
    assert "http://testserver/kb.py -o ~/bin/kb" in page and token in page


def test_pip_install_provides_the_kb_command():
    for pyproject, target in [
        (ROOT / "pyproject.toml", "kbcli.kb:main"),
        (ROOT / "kbcli" / "pyproject.toml", "kb:main"),
    ]:
        assert tomllib.loads(pyproject.read_text())["project"]["scripts"]["kb"] == target
    assert (
        subprocess.run([sys.executable, "-m", "kbcli.kb", "--help"], capture_output=True).returncode
        == 0
    )
