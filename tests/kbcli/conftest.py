"""`kb` as users run it: the single file in its own process, with its own home directory."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

KB = Path(__file__).resolve().parents[2] / "kbcli" / "kb.py"

FAILING_SCRIPT = """\
import sys
print("epoch 1 step 10 loss 2.31")
print("[rank0]: Traceback (most recent call last):", file=sys.stderr)
print('[rank0]:   File "train.py", line 211, in <module>', file=sys.stderr)
print("[rank0]:     loss.backward()", file=sys.stderr)
print("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
      "GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.", file=sys.stderr)
sys.exit(3)
"""


class Kb:
    """Runs `kb.py` with a private HOME (its spool and configuration) against a server."""

    def __init__(self, home: Path, url: str, token: str):
        self.home = home
        self.env = {"PATH": os.environ["PATH"], "HOME": str(home), "KB_URL": url, "KB_TOKEN": token}

    def __call__(self, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(KB), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self.env, **env},
            cwd=self.home,
        )

    def start(self, *args: str, **env: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, str(KB), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**self.env, **env},
            cwd=self.home,
        )

    @property
    def spool(self) -> list[Path]:
        return sorted((self.home / ".cache" / "kb" / "spool").glob("*.json"))


@pytest.fixture
def kb(tmp_path, live_server, alice):
    home = tmp_path / "home"
    home.mkdir()
    return Kb(home, live_server.url, Token.objects.create(user=alice).key)


@pytest.fixture
def failing_script(tmp_path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(FAILING_SCRIPT)
    return path
