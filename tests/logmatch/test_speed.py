"""A run that gets slower, or a server that loops, prints no error: the numbers and the
generated text are the evidence (speed.py, repetition.py)."""

from pathlib import Path

import pytest

from incidents.logmatch import IncidentSpec, analyze, build_index
from incidents.logmatch.repetition import repetition
from incidents.logmatch.speed import LINES_READ, speed_trend

BENIGN = Path(__file__).resolve().parents[2] / "incidents" / "logmatch" / "benign"
MEGATRON = (
    " iteration {n}/ 2000 | consumed samples: {s} | elapsed time per iteration (ms): {v} |"
    " learning rate: 5.000E-07 | lm loss: 1.79E+00 |"
)


def _megatron(values):
    return [MEGATRON.format(n=5 * i, s=320 * i, v=v) for i, v in enumerate(values, 1)]


def test_a_step_time_that_grows_is_a_slowdown():
    trend = speed_trend(_megatron([11075.6, 14642.7]))
    assert trend is not None and trend.line == 1
    assert "step time grows" in trend.query
    assert trend.seen == "the step time grows 1.32× over 2 logged values"


def test_a_step_time_that_falls_or_holds_is_no_finding():
    assert speed_trend(_megatron([15000.0, 11000.0, 10900.0, 11020.0])) is None
    assert speed_trend(_megatron([5361.6, 5290.7, 5329.9, 5301.2])) is None


def test_a_steady_small_growth_counts_a_noisy_one_does_not():
    assert speed_trend(_megatron([5361.6, 5470.7, 5829.9])) is not None
    assert speed_trend(_megatron([5361.6, 5829.9, 5470.7])) is None


def test_a_dropping_throughput_is_a_slowdown():
    lines = [f"step {i} | loss 2.1 | {v} samples/s" for i, v in enumerate([160, 150, 120, 90, 62])]
    assert "throughput" in speed_trend(lines).query


def test_tqdm_switching_from_it_per_s_to_s_per_it_is_one_series():
    lines = [
        "Training:  10%|█         | 100/1000 [00:40<06:00,  2.50it/s]",
        "Training:  20%|██        | 200/1000 [01:40<09:00,  1.30it/s]",
        "Training:  30%|███       | 300/1000 [03:40<19:00,  1.80s/it]",
    ]
    assert speed_trend(lines) is not None


def test_different_progress_bars_are_not_compared():
    lines = [
        "Map: 100%|██████████| 1000/1000 [00:00<00:00, 9000.00 examples/s]",
        "Filter: 100%|██████████| 1000/1000 [00:01<00:00, 800.00 examples/s]",
    ]
    assert speed_trend(lines) is None


def test_bars_that_end_within_their_first_second_are_no_run_slowing_down():
    """Downloads one after another, each bar done at once: no loop of the run's."""
    lines = [
        "9920512it [00:00, 14787158.04it/s]",
        "32768it [00:00, 770194.81it/s]",
        "1654784it [00:00, 12384715.71it/s]",
        "8192it [00:00, 314226.62it/s]",
    ]
    assert speed_trend(lines) is None


def test_a_server_throughput_that_follows_its_load_is_not_read():
    lines = [
        f"INFO [metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: {v}"
        " tokens/s, Running: 1 reqs, Waiting: 0 reqs"
        for v in (48.6, 30.2, 5.1, 0.0)
    ]
    assert speed_trend(lines) is None


def test_a_growing_time_to_first_token_is_a_latency_finding():
    lines = [f"request {i} done: TTFT {v} ms, TPOT 51.7 ms" for i, v in enumerate([130, 180, 390])]
    assert "time to first token" in speed_trend(lines).query


@pytest.mark.parametrize(
    "line",
    [
        "outputs=[CompletionOutput(index=0, text=' is is is is is is is is is is', finish_reason=length)]",
        "Output generated : `iguiguiguiguiguiguiguiguiguiguiguiguiguiguiguiguigu",
        "Answer: the answer is the answer is the answer is the answer is the answer is the answer is",
        "Generated text: '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'",
    ],
)
def test_generated_text_that_loops_is_found(line):
    assert repetition(["INFO loading model", line]).line == 1


@pytest.mark.parametrize(
    "line",
    [
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.",
        "tensor([nan, nan, nan, nan, nan, nan, nan, nan], device='cuda:0')",
        "ffff ffff ffff ffff ffff ffff ffff ffff",
        "[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]",
        "|██████████████████████████████████████| 100%",
        "WARNING!!! Out of Memory!!! ============================== ##########",
        "ask 10.251.126.5:50010 to delete blk_-9016 blk_-8695 blk_-7940 blk_-3543 blk_-1029 blk_-4444",
    ],
)
def test_identifiers_numbers_and_drawings_are_not_looping_text(line):
    assert repetition([line]) is None


@pytest.mark.parametrize("path", sorted(BENIGN.glob("*.log")), ids=lambda path: path.name)
def test_healthy_logs_show_no_slowdown_and_no_loop(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert speed_trend(lines) is None
    assert repetition(lines) is None


SLOW = IncidentSpec(
    slug="slow-training",
    title="Training is far slower than expected",
    stage="train",
    symptom="",
    description="Training slows down: the step time grows and the throughput drops.",
)
LOOP = IncidentSpec(
    slug="repetitive-generation",
    title="Generated text repeats itself",
    stage="serve",
    symptom="",
    description="Generated text repeats itself: the same words loop until max_tokens.",
)


def test_a_slowdown_is_a_lead_to_the_incident_that_describes_it_never_proof():
    report = analyze("\n".join(_megatron([11075.6, 14642.7])), build_index([SLOW, LOOP], []))
    top = report.suggestions[0]
    assert (top.slug, top.confident, top.evidence[0].kind) == ("slow-training", False, "trend")
    assert "1.32×" in top.why


def test_a_loop_is_a_lead_to_the_incident_that_describes_it():
    text = "Prompt: 'Paris is'\nGenerated text: ' is is is is is is is is is is'"
    top = analyze(text, build_index([SLOW, LOOP], [])).suggestions[0]
    assert (top.slug, top.confident) == ("repetitive-generation", False)
    assert "resembles the text of INFO line 2: “is” repeats 10 times in a row" in top.why


def _vllm_stats(usages):
    return [
        "INFO 07-10 10:01:05 metrics.py:341] Avg prompt throughput: 0.0 tokens/s, Avg generation"
        f" throughput: 812.3 tokens/s, Running: 64 reqs, Pending: {n} reqs, GPU KV cache usage: {u}%"
        for n, u in enumerate(usages)
    ]


def test_a_kv_cache_that_fills_up_is_a_finding():
    trend = speed_trend(_vllm_stats([61.0, 78.5, 93.2, 99.4]))
    assert trend.query == "KV cache usage climbs until the cache is full"
    sglang = (
        "[2024-09-10 08:01:0{n}] Decode batch. #running-req: 64, #token: 81920, token usage: {u}"
    )
    assert speed_trend([sglang.format(n=n, u=u) for n, u in enumerate([0.41, 0.77, 0.98])])


def test_a_kv_cache_that_stays_low_or_empties_is_no_finding():
    assert speed_trend(_vllm_stats([2.5, 2.6, 2.6])) is None
    assert speed_trend(_vllm_stats([99.0, 95.0, 91.0])) is None


def test_a_number_right_after_a_word_still_counts_a_word_inside_another_does_not():
    assert speed_trend([f"epoch 3 step {n} {v}it/s" for n, v in enumerate([3.0, 2.1, 1.2])])
    assert speed_trend([f"runtime {v} (cpu)" for v in (1.0, 2.0, 3.0)]) is None


def test_only_the_end_of_a_long_tail_is_read():
    slowing = _megatron([11075.6, 14642.7])
    filler = ["INFO heartbeat ok"] * LINES_READ
    assert speed_trend(slowing + filler) is None
    assert speed_trend(filler + slowing) is not None
    looping = ["text=' is is is is is is is is is is'"]
    assert repetition(looping + filler) is None
    assert repetition(filler + looping) is not None
