"""Adversarial pastes: no shape may make any stage of the analysis grow faster than the text.

Hypothesis builds tails from the shapes that once took minutes (long runs of one character
or token, separators repeated, near-matches of every signature family, prefixes of secrets
and host names repeated, very long lines) and each must be analysed within a budget some
fifty times what a linear analysis of the same size costs. This is the one test that reads a
clock, because the issue it guards against is time itself; the budget is far above any
machine's noise (a quadratic stage overshoots it a hundredfold), and the precise figures,
at the 2 MiB cap and 10,000 signatures, are bench/bench_hostile.py's.
"""

from __future__ import annotations

import time

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from incidents.catalog import engine_specs
from incidents.logmatch import InputError, Limits, analyze

BUDGET_SECONDS = 3.0  # for up to 64 KB; a linear analysis of that takes some 50 ms
LIMITS = Limits(max_bytes=70_000)

_, SIGNATURES = engine_specs()
UNITS = [
    *("a", " ", ".", "-", "=", ":", "/", "[", "(", '"', "'", "%", "#", "\t", "0", "1."),
    *("ERROR a.", "loss=1", "sk-", "x.com.", 'File "', "0x1", "Error", "E1234 ", "a:b:"),
    *("AKIA", "password=", "://a:", "hf_", "-----BEGIN ", "Traceback ", "显存", "at a.b("),
    *(spec.pattern[:12] for spec in SIGNATURES[::9]),
]


PREFIXES = ["", "loss=", "ERROR ", "WARNING ", "    ", "[rank0]: ", "Traceback: "]
ENDINGS = ["", "x", 'File "', ")", "@", ".com", ":1", "Error"]


@st.composite
def hostile_tails(draw) -> str:
    """A prefix, then one unit repeated to a long line, then an ending that fails or
    completes a match: the shape of every quadratic case found so far."""
    unit = draw(st.sampled_from(UNITS) | st.text(min_size=1, max_size=6))
    prefix, ending = draw(st.sampled_from(PREFIXES)), draw(st.sampled_from(ENDINGS))
    run = (unit * (4000 // len(unit) + 1))[: draw(st.integers(1000, 4000))]
    line = prefix + run + ending
    return _distinct_lines(line, draw(st.integers(1, 16)))


def _distinct_lines(line: str, count: int) -> str:
    """Identical lines are looked at once, which would hide a slow stage; a number and a
    space before each keeps the line's own start (a word boundary) intact."""
    return "\n".join(f"{n} {line}" for n in range(count))


KNOWN_SHAPES = [
    _distinct_lines("loss=" + "1" * 3994 + "x", 16),
    _distinct_lines(" " * 3994 + 'File "', 16),
    _distinct_lines("ERROR " + "a." * 1997, 16),
    _distinct_lines("WARNING " * 499, 16),
]


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(hostile_tails())
@example(tail=KNOWN_SHAPES[0])
@example(tail=KNOWN_SHAPES[1])
@example(tail=KNOWN_SHAPES[2])
@example(tail=KNOWN_SHAPES[3])
def test_no_shape_makes_the_analysis_grow_faster_than_the_text(catalog_index, tail):
    started = time.process_time()
    try:
        analyze(tail, catalog_index, limits=LIMITS)
    except InputError:
        return
    assert time.process_time() - started < BUDGET_SECONDS, (len(tail), tail[:80])
