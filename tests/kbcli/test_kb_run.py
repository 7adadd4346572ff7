"""`kb run`: the command's output passes through, a failure is sent once and explained."""

import signal
import sys
from pathlib import Path

import pytest

from incidents.models import Analysis


@pytest.mark.django_db(transaction=True)
def test_it_sends_a_failure_once_explains_it_and_exits_with_its_status(kb, workers, failing_script):
    workers("kb-run")
    result = kb("run", "--", sys.executable, str(failing_script))

    assert result.returncode == 3
    assert result.stdout == "epoch 1 step 10 loss 2.31\n"  # unchanged, on its own stream
    assert "torch.OutOfMemoryError" in result.stderr
    assert "top suggestion: " in result.stderr and "[gpu-oom]" in result.stderr
    analysis = Analysis.objects.get()
    assert f"/analyses/{analysis.pk}/" in result.stderr
    assert "torch.OutOfMemoryError" in analysis.text
    assert (analysis.source, analysis.exit_status) == ("kb-run", 3)
    assert analysis.command.endswith("train.py") and analysis.host and analysis.cwd

    succeeded = kb("run", "--", sys.executable, "-c", "print('fine')")
    assert succeeded.returncode == 0 and succeeded.stdout == "fine\n"
    assert succeeded.stderr == ""
    assert Analysis.objects.count() == 1
    assert kb.spool == []


@pytest.mark.django_db
def test_it_exits_as_a_shell_would_when_the_command_is_killed_or_missing(kb):
    killed = kb(
        "run", "--wait", "0", "--", "sh", "-c", "kill -TERM $$", KB_URL="http://127.0.0.1:9"
    )
    assert killed.returncode == 128 + 15
    missing = kb("run", "--", "no-such-command-kb", KB_URL="http://127.0.0.1:9")
    assert missing.returncode == 127


TRAPS_TERM = """\
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))  # 7: it was this signal that ended it
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.django_db
def test_it_passes_a_schedulers_signal_on_to_the_command(kb):
    running = kb.start("run", "--", sys.executable, "-c", TRAPS_TERM, KB_URL="http://127.0.0.1:9")
    assert running.stdout.readline() == "ready\n"  # the output is passed on at once
    running.send_signal(signal.SIGTERM)
    assert running.wait(30) == 7, running.stderr.read()
    running.stdout.close()
    running.stderr.close()


@pytest.mark.django_db
def test_only_its_main_thread_can_take_a_signal_meant_for_the_command(kb):
    """The threads that pass the output on block the signals kb passes on: a signal the
    kernel gave one of them would never reach the command (the main thread, blocked waiting
    for it, would not wake), so the command would run on after a scheduler's SIGTERM."""
    running = kb.start("run", "--", sys.executable, "-c", TRAPS_TERM, KB_URL="http://127.0.0.1:9")
    assert running.stdout.readline() == "ready\n"

    tasks = Path(f"/proc/{running.pid}/task")
    masks = {int(task.name): _blocked_signals(task / "status") for task in sorted(tasks.iterdir())}
    running.send_signal(signal.SIGTERM)
    assert running.wait(30) == 7, running.stderr.read()
    running.stdout.close()
    running.stderr.close()

    pumps = [mask for tid, mask in masks.items() if tid != running.pid]
    assert len(pumps) >= 2
    passed_on = {signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1}
    assert all(passed_on <= mask for mask in pumps), pumps
    assert not passed_on & masks[running.pid]


def _blocked_signals(status: Path) -> set[int]:
    mask = next(
        int(line.split()[1], 16)
        for line in status.read_text().splitlines()
        if line.startswith("SigBlk:")
    )
    return {number for number in range(1, 65) if mask >> (number - 1) & 1}
