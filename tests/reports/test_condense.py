"""One line per matrix column, with the remedy's command whole."""

import pytest

from reports.condense import condense_prevention, condense_remedy, shorten

REMEDY = """1. See what the card really has and who else is on it:
   nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv
   npu-smi info                       # Ascend: HBM-Usage(MB) per NPU
2. Lower the batch."""


@pytest.mark.parametrize(
    ("remedy", "lead", "command"),
    [
        (
            REMEDY,
            "See what the card really has and who else is on it",
            "nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv",
        ),
        ("run `make clean && make` then retry", "run", "make clean && make"),
        (
            "1. Confirm it was memory: free -g ; dmesg -T | grep -i oom ;\n2. More.",
            "Confirm it was memory",
            "free -g ; dmesg -T | grep -i oom",
        ),
        (
            "1. 先确认是内存问题：free -g ；dmesg -T\n2. 更多。",
            "先确认是内存问题",
            "free -g ；dmesg -T",
        ),
        ("Restart the worker with a bigger heap.", "Restart the worker with a bigger heap.", ""),
    ],
)
def test_it_finds_the_first_command_and_keeps_it_whole(remedy, lead, command):
    assert condense_remedy(remedy) == (lead, command)


def test_a_long_command_is_never_cut():
    command = "python train.py " + " ".join(f"--option-{n} {n}" for n in range(40))
    assert condense_remedy(f"1. Rerun:\n   {command}")[1] == command


def test_it_shortens_at_a_word_boundary():
    assert shorten("one two three four five", 16) == "one two three…"
    assert shorten("显存不足导致训练中断", 6) == "显存不足导…"
    assert shorten("  short\n text ", 40) == "short text"


def test_the_prevention_note_drops_the_discipline_name_it_starts_with():
    assert condense_prevention("Reconcile: check the list. Then more.") == "check the list."
    assert condense_prevention("小样试跑：先跑小样。然后放量。") == "先跑小样。"
    assert condense_prevention("Keep it simple: yes.") == "Keep it simple: yes."
