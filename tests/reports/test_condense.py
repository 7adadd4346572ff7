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


@pytest.mark.parametrize(
    "remedy",
    [
        # The step's sentence goes on in the next line: what follows the colon is half of it.
        "1. Check the batch: per_device_batch × steps must equal\n   the batch the LR was tuned for.",
        # An indented line that continues a sentence, not a command under a colon.
        "1. Profile one request (torch.profiler,\n   nsys profile) and look for tiny kernels.",
        "1. Warm up first; do not pass --skip-warmup /\n   --skip-server-warmup.",
        # A command with a sentence after it, in English or Chinese.
        "1. Look: grep -c label train.jsonl inside the target text.",
        "1. 找出泄漏字段：grep -c label train.jsonl 看目标文本里是否出现",
    ],
)
def test_a_piece_of_a_sentence_is_never_taken_for_a_command(remedy):
    assert condense_remedy(remedy)[1] == ""


def test_a_command_under_a_command_is_still_a_command():
    remedy = "1. Look:\n   nvidia-smi -q\n   npu-smi info\n2. More."
    assert condense_remedy(remedy)[1] == "nvidia-smi -q"


def test_every_shipped_command_is_whole_on_one_line_of_its_remedy():
    from incidents.catalog import load_catalog
    from reports.condense import remedy_command

    for incident in load_catalog():
        for language, text in incident.texts.items():
            command = remedy_command(text.remedy)
            assert not command or any(command in line for line in text.remedy.splitlines()), (
                incident.slug,
                language,
            )
