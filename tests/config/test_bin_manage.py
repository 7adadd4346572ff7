"""The README's commands work as written after bin/start: `bin/manage …`, from anywhere."""

import os
import re
import subprocess

import pytest

from tests.services import ROOT


@pytest.mark.processes
def test_bin_manage_runs_django_commands_from_any_directory(tmp_path):
    env = {**os.environ, "VAR_DIR": str(tmp_path / "var")}
    done = subprocess.run(
        [str(ROOT / "bin" / "manage"), "help", "generate_demo_data"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "--seed" in done.stdout


def test_the_readme_gives_no_command_that_needs_an_active_venv():
    readme = (ROOT / "README.md").read_text()
    assert not re.search(r"(?<![\w/])python manage\.py", readme)
    assert "bin/manage generate_demo_data" in readme
