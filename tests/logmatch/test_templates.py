"""mask_line and group: templates, counts, floods, merging, CJK, and Loghub-2k accuracy."""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from incidents.logmatch.levels import classify
from incidents.logmatch.masking import mask_line, mask_lines
from incidents.logmatch.templates import group
from incidents.logmatch.types import Group, Level, Limits

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "loghub2k"

MASKED = [
    ("Retrying utterance spk1-utt42 with beam 40", "Retrying utterance <*> with beam <*>"),
    ("worker 3 exited with code 137", "worker <*> exited with code <*>"),
    ("pointer 0x7f558bec9670 freed twice", "pointer <*> freed twice"),
    ("mask=ffffffff applied", "mask=<*> applied"),
    ("open /home/alice/exp/tri3/final.mdl failed", "open <*> failed"),
    ("reading ./data/train/wav.scp", "reading <*>"),
    ("request 8f14e45f-ceea-467f-a0e6-123456789abc timed out", "request <*> timed out"),
    ("connect to 10.0.0.12:29500 refused", "connect to <*> refused"),
    ("peer fe80::1ff:fe23:4567:890a unreachable", "peer <*> unreachable"),
    (
        "Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity)",
        "Tried to allocate <*> (GPU <*> total capacity)",
    ),
    ("elapsed 30 seconds, budget 1.5h", "elapsed <*>, budget <*>"),
    ("2024-01-01 12:00:00,123 - root - INFO - ready", "<*> - root - INFO - ready"),
    ("at Sun Jul 24 02:38:22 2005 from host", "at <*> from host"),
    ("loss=2.345 lr=1e-4 status=FAILED name='a b'", "loss=<*> lr=<*> status=<*> name=<*>"),
    (
        "Deleting block blk_-1608999687919862906 file /mnt/dfs/blk_-1608999687919862906",
        "Deleting block <*> file <*>",
    ),
    (
        "fetching https://huggingface.co/meta-llama/Llama-2-7b/resolve/main/config.json now",
        "fetching <*> now",
    ),
    ("lookup mirrors.example.com failed", "lookup <*> failed"),
    ("2034 bytes (1.98 KB) sent", "<*> sent"),
    ("connection from 84.102.20.2 () at Sun Jul 24", "connection from <*> at <*>"),
    ("第3个文件处理失败，错误码 1024", "第<*>个文件处理失败，错误码 <*>"),
    ("显存不足：已分配 15.2 GiB", "显存不足：已分配 <*>"),
    ("plain words stay as they are", "plain words stay as they are"),
    ("trailing spaces   ", "trailing spaces"),
]


@pytest.mark.parametrize(("line", "template"), MASKED, ids=[m[0][:40] for m in MASKED])
def test_mask_line(line, template):
    assert mask_line(line) == template


def test_mask_line_is_idempotent():
    for line, _template in MASKED:
        once = mask_line(line)
        assert mask_line(once) == once


def test_mask_lines_matches_mask_line_even_with_stray_newlines():
    lines = ["a 1", "b\n2", "c\r3", ""]
    assert mask_lines(lines) == [mask_line(s) for s in lines] == ["a <*>", "b <*>", "c <*>", ""]


def test_false_positive_words_are_not_masked():
    assert mask_line("error_rate errors no errors") == "error_rate errors no errors"


def levels_of(lines):
    return classify(lines)


def group_lines(lines, **limits):
    return group(lines, levels_of(lines), Limits(**limits))


class TestGroup:
    def test_identical_templates_share_a_group(self):
        lines = [
            "INFO step 1 loss 2.5",
            "WARNING (gmm-align-compiled[5.5]:Align():a.cc:93) Retrying utterance u1 with beam 40",
            "INFO step 2 loss 2.4",
            "WARNING (gmm-align-compiled[5.5]:Align():a.cc:93) Retrying utterance u2 with beam 40",
            "INFO step 3 loss 2.3",
        ]
        groups, line_groups = group_lines(lines)
        assert line_groups == (0, 1, 0, 1, 0)
        assert groups[0] == Group(
            template="INFO step <*> loss <*>",
            level=Level.INFO,
            count=3,
            first_line=1,
            last_line=5,
            example="INFO step 1 loss 2.5",
        )
        assert groups[1].count == 2
        assert groups[1].level is Level.WARNING
        assert (groups[1].first_line, groups[1].last_line) == (2, 4)
        assert groups[1].example == lines[1]
        assert not groups[1].flood

    def test_groups_are_ordered_by_first_appearance(self):
        lines = ["c 1", "a 1", "b 1", "a 2", "c 2"]
        groups, line_groups = group_lines(lines)
        assert [g.template for g in groups] == ["c <*>", "a <*>", "b <*>"]
        assert line_groups == (0, 1, 2, 1, 0)

    def test_level_is_the_most_severe_of_the_group(self):
        lines = ["job 1 finished", "job 2 finished", "job 3 finished"]
        levels = [Level.INFO, Level.ERROR, Level.WARNING]
        groups, _ = group(lines, levels)
        assert len(groups) == 1
        assert groups[0].level is Level.ERROR

    def test_flood_needs_a_warning_group_of_flood_count_lines(self):
        warn = [f"WARNING: retrying shard {i}" for i in range(5)]
        info = [f"INFO: shard {i} done" for i in range(5)]
        groups, _ = group_lines(warn + info, flood_count=5)
        assert [(g.level, g.count, g.flood) for g in groups] == [
            (Level.WARNING, 5, True),
            (Level.INFO, 5, False),
        ]
        groups, _ = group_lines(warn, flood_count=6)
        assert not groups[0].flood

    def test_levels_must_match_lines(self):
        with pytest.raises(ValueError, match="levels"):
            group(["a", "b"], [Level.INFO])

    def test_empty(self):
        assert group([], []) == ((), ())

    def test_long_lines_are_grouped_on_their_first_max_line_chars(self):
        lines = ["x" * 100 + "a", "x" * 100 + "b"]
        groups, _ = group_lines(lines, max_line_chars=100)
        assert len(groups) == 1
        assert groups[0].example == lines[0]


class TestMerge:
    def test_many_values_at_one_position_become_a_variable(self):
        users = ["root", "admin", "oracle", "guest", "test", "ubuntu"]
        lines = [f"Invalid user {u} from 10.0.0.{i}" for i, u in enumerate(users)]
        groups, line_groups = group_lines(lines)
        assert len(groups) == 1
        assert groups[0].template == "Invalid user <*> from <*>"
        assert groups[0].count == len(users)
        assert set(line_groups) == {0}

    def test_a_few_values_are_an_enumeration_and_stay_apart(self):
        lines = [f"VM {state} (Lifecycle Event)" for state in ("Started", "Paused", "Stopped")]
        groups, _ = group_lines(lines * 3)
        assert [g.template for g in groups] == [s for s in lines]

    def test_a_value_next_to_a_known_variable_joins_it(self):
        lines = [
            "Failed none for invalid user 123 from x port 22",
            "Failed none for invalid user admin from x port 22",
        ]
        groups, _ = group_lines(lines)
        assert len(groups) == 1
        assert groups[0].template == "Failed none for invalid user <*> from x port <*>"

    def test_several_variable_positions_merge_step_by_step(self):
        names = ["alpha", "beta", "gamma", "delta", "epsilon"]
        hosts = ["red", "green", "blue", "black", "white"]
        lines = [f"user {n} logged in from {h} ok" for n in names for h in hosts]
        groups, _ = group_lines(lines)
        assert len(groups) == 1
        assert groups[0].template == "user <*> logged in from <*> ok"

    def test_short_lines_are_not_merged(self):
        lines = ["removing chargen", "removing daytime", "removing echo", "removing ftp"]
        groups, _ = group_lines(lines)
        assert len(groups) == 4

    def test_merged_template_keeps_quotes_and_punctuation(self):
        frames = [f'  File "<{name}>", line 1, in <module>' for name in ("stdin", "string")]
        frames += ['  File "/opt/x.py", line 3, in <module>']
        groups, _ = group_lines(frames)
        assert [g.template for g in groups] == [' File "<*>", line <*>, in <module>']


class TestMlLogs:
    def test_kaldi_retry_warnings_form_one_flood_group(self):
        lines = []
        for i in range(30):
            lines.append(
                f"WARNING (gmm-align-compiled[5.5.1068]:AlignUtteranceWrapper():"
                f"decoder/decoder-wrappers.cc:617) Retrying utterance {i}-71 with beam 40"
            )
            lines.append(
                f"LOG (gmm-align-compiled[5.5.1068]:main():gmmbin/gmm-align-compiled.cc:127) {i}-72"
            )
        groups, _ = group_lines(lines)
        assert len(groups) == 2
        assert groups[0].count == 30
        assert groups[0].flood
        assert groups[0].level is Level.WARNING
        assert groups[1].level is Level.INFO

    def test_per_rank_nccl_lines_form_one_group(self):
        lines = [
            f"[rank{r}]:[E1016 03:31:38.92{r}019586 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog "
            f"caught collective operation timeout: WorkNCCL(SeqNum=9141, OpType=ALLREDUCE, "
            f"Timeout(ms)=600000) ran for 60000{r} milliseconds before timing out."
            for r in range(8)
        ]
        groups, _ = group_lines(lines)
        assert len(groups) == 1
        assert groups[0].count == 8
        assert groups[0].level is Level.ERROR

    def test_chinese_messages_with_numbers_group_together(self):
        lines = [f"第{i}个样本的标注缺失，跳过该条数据（共{i * 7}条）" for i in range(1, 6)]
        lines += ["模型加载完成"]
        groups, line_groups = group_lines(lines)
        assert len(groups) == 2
        assert line_groups == (0, 0, 0, 0, 0, 1)
        assert groups[0].template == "第<*>个样本的标注缺失，跳过该条数据（共<*>条）"

    def test_chinese_messages_with_a_varying_word_merge(self):
        names = ["张三", "李四", "王五", "赵六", "钱七"]
        lines = [f"用户{n}的任务提交失败" for n in names]
        groups, _ = group_lines(lines)
        assert len(groups) == 1

    def test_hundred_thousand_copies_of_one_warning(self):
        line = "WARNING (nnet3-train[5.5]:Train():nnet-training.cc:75) Gradient is NaN, skipping"
        lines = [line] * 100_000
        levels = [Level.WARNING] * len(lines)
        groups, line_groups = group(lines, levels)
        assert len(groups) == 1
        assert groups[0].count == 100_000
        assert groups[0].flood
        assert (groups[0].first_line, groups[0].last_line) == (1, 100_000)
        assert len(line_groups) == 100_000


def group_accuracy(truth, predicted):
    size = Counter(truth)
    groups = defaultdict(list)
    for i, p in enumerate(predicted):
        groups[p].append(i)
    ok = 0
    for idxs in groups.values():
        labels = {truth[i] for i in idxs}
        if len(labels) == 1 and size[next(iter(labels))] == len(idxs):
            ok += len(idxs)
    return ok / len(truth)


@pytest.mark.skipif(not LOGHUB.is_dir(), reason="Loghub-2k data not available")
def test_loghub_group_accuracy_stays_above_target():
    scores = {}
    for path in sorted(LOGHUB.glob("*/*_2k.log_structured.csv")):
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        lines = [r["Content"] for r in rows]
        _groups, line_groups = group(lines, [Level.INFO] * len(lines))
        scores[path.parent.name] = group_accuracy([r["EventId"] for r in rows], line_groups)
    assert len(scores) == 16
    assert sum(scores.values()) / len(scores) >= 0.90, scores
