"""The handbook's two calculators, in plain Python (no Django).

* Memory headroom per card: peak memory ≈ batch × per-sample cost + a fixed cost (weights,
  optimizer state, workspace). Two measured (batch, peak) points give both terms, and from
  them the largest batch that fits this card with a safety margin — so a batch size or a
  job count is never copied from a card with more memory.
* Scaling efficiency: with per-card compute time T and exposed communication time C per
  step, efficiency ≈ 1 / (1 + C/T).

Bad input raises `CalculatorInputError` carrying one `Problem` per input at fault, whose
`phrase` is an English `common.phrases.Phrase` that the web says again in the reader's
language.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from common.phrases import Phrase, gettext_noop

MEMORY_UNITS = {"MiB": 1.0, "GiB": 1024.0}
TIME_UNITS = {"ms": 1.0, "s": 1000.0}

# Plausibility bounds: beyond them the input is a typo or a wrong unit, not a card or a step.
MIN_CARD_MIB = 1024.0  # 1 GiB
MAX_CARD_MIB = 1024.0 * 1024.0  # 1 TiB; the largest accelerators hold a few hundred GiB
MAX_BATCH = 1_000_000
MAX_MARGIN_PERCENT = 50.0
MIN_COMPUTE_MS = 0.01
MAX_STEP_MS = 3_600_000.0  # one hour per step
MAX_CARDS = 100_000
# A fitted fixed cost below zero by more than this share of the smaller peak is not noise.
NEGATIVE_FIXED_TOLERANCE = 0.05
GOOD_EFFICIENCY = 0.9
FAIR_EFFICIENCY = 0.7


@dataclass(frozen=True)
class Problem:
    field: str | None  # the input at fault; None when it is the inputs taken together
    phrase: Phrase

    def __str__(self) -> str:
        return str(self.phrase)


class CalculatorInputError(ValueError):
    def __init__(self, problems: list[Problem]):
        self.problems = tuple(problems)
        super().__init__("; ".join(str(problem) for problem in problems))


@dataclass(frozen=True)
class MemoryHeadroom:
    per_sample_mib: float
    fixed_mib: float
    card_mib: float
    margin_percent: float
    usable_mib: float
    max_batch: int  # 0: not even one sample fits
    memory_at_max_mib: float
    planned_batch: int | None = None
    planned_mib: float | None = None

    @property
    def fits(self) -> bool:
        return self.max_batch >= 1

    @property
    def planned_fits(self) -> bool | None:
        if self.planned_batch is None:
            return None
        return self.planned_batch <= self.max_batch


@dataclass(frozen=True)
class ScalingEfficiency:
    compute_ms: float
    communication_ms: float
    efficiency: float  # between 0 and 1
    cards: int | None = None

    @property
    def ratio(self) -> float:
        """C/T: communication per unit of compute."""
        return self.communication_ms / self.compute_ms

    @property
    def percent(self) -> float:
        return self.efficiency * 100

    @property
    def effective_cards(self) -> float | None:
        """N cards at this efficiency do the work of this many perfectly scaled ones."""
        return None if self.cards is None else self.cards * self.efficiency

    @property
    def verdict(self) -> str:
        if self.efficiency >= GOOD_EFFICIENCY:
            return "good"
        return "fair" if self.efficiency >= FAIR_EFFICIENCY else "poor"


def memory_headroom(
    *,
    batch_a: object,
    memory_a: object,
    batch_b: object,
    memory_b: object,
    card_memory: object,
    memory_unit: str = "MiB",
    card_unit: str = "GiB",
    margin_percent: object = 10,
    planned_batch: object = None,
) -> MemoryHeadroom:
    """The largest batch that fits one card, from peaks measured at two batch sizes."""
    reader = _Reader()
    memory_scale = reader.unit("memory_unit", memory_unit, MEMORY_UNITS)
    card_scale = reader.unit("card_unit", card_unit, MEMORY_UNITS)
    b_a = reader.batch("batch_a", batch_a)
    b_b = reader.batch("batch_b", batch_b)
    m_a = reader.positive("memory_a", memory_a)
    m_b = reader.positive("memory_b", memory_b)
    card = reader.positive("card_memory", card_memory)
    margin = reader.number("margin_percent", margin_percent)
    planned = None if _blank(planned_batch) else reader.batch("planned_batch", planned_batch)
    reader.raise_problems()

    m_a, m_b, card = m_a * memory_scale, m_b * memory_scale, card * card_scale
    _check_plausible(reader, m_a, m_b, card, margin)
    per_sample, fixed = _fit_two_points(reader, (b_a, m_a), (b_b, m_b), card)
    usable = card * (1 - margin / 100)
    # The epsilon keeps an exact fit (e.g. 12.0 computed as 11.999…) from losing a sample.
    max_batch = max(0, math.floor((usable - fixed) / per_sample + 1e-9))
    return MemoryHeadroom(
        per_sample_mib=per_sample,
        fixed_mib=fixed,
        card_mib=card,
        margin_percent=margin,
        usable_mib=usable,
        max_batch=max_batch,
        memory_at_max_mib=fixed + per_sample * max_batch,
        planned_batch=planned,
        planned_mib=None if planned is None else fixed + per_sample * planned,
    )


def _check_plausible(reader: _Reader, m_a: float, m_b: float, card: float, margin: float) -> None:
    """Numbers no card or margin can have are a typo or a wrong unit (all in MiB)."""
    for name, value in (("memory_a", m_a), ("memory_b", m_b)):
        if value > MAX_CARD_MIB:
            reader.add(
                name,
                gettext_noop("%(value)s is more memory than any card holds: check the unit."),
                value=format_mib(value),
            )
    if not MIN_CARD_MIB <= card <= MAX_CARD_MIB:
        reader.add(
            "card_memory",
            gettext_noop(
                "%(value)s is not a plausible memory for one card (1 GiB to 1 TiB): "
                "check the number and the unit."
            ),
            value=format_mib(card),
        )
    if not 0 <= margin <= MAX_MARGIN_PERCENT:
        reader.add(
            "margin_percent",
            gettext_noop("The safety margin is a percentage from 0 to %(max)s."),
            max=f"{MAX_MARGIN_PERCENT:g}",
        )
    reader.raise_problems()


def _fit_two_points(
    reader: _Reader, a: tuple[int, float], b: tuple[int, float], card: float
) -> tuple[float, float]:
    """Per-sample and fixed memory (MiB) from peaks measured at two batch sizes."""
    (b_a, m_a), (b_b, m_b) = a, b
    if b_a == b_b:
        reader.add(
            "batch_b",
            gettext_noop(
                "Measure at two different batch sizes: both are %(batch)s, "
                "so the per-sample cost is unknown."
            ),
            batch=str(b_a),
        )
        reader.raise_problems()
    (b_lo, m_lo), (b_hi, m_hi) = sorted(((b_a, m_a), (b_b, m_b)))
    if m_hi <= m_lo:
        reader.add(
            None,
            gettext_noop(
                "Peak memory must grow with the batch size, but batch %(b_hi)s peaked at "
                "%(m_hi)s and batch %(b_lo)s at %(m_lo)s. Measure both on the same card, model "
                "and sequence length, and read the peak (max allocated), not the memory the "
                "framework reserved up front."
            ),
            b_hi=str(b_hi),
            m_hi=format_mib(m_hi),
            b_lo=str(b_lo),
            m_lo=format_mib(m_lo),
        )
    for name, value, batch in (("memory_a", m_a, b_a), ("memory_b", m_b, b_b)):
        if value > card:
            reader.add(
                name,
                gettext_noop(
                    "A peak of %(value)s at batch %(batch)s is more than the card holds "
                    "(%(card)s): check the units."
                ),
                value=format_mib(value),
                batch=str(batch),
                card=format_mib(card),
            )
    reader.raise_problems()

    per_sample = (m_hi - m_lo) / (b_hi - b_lo)
    fixed = m_lo - per_sample * b_lo
    if fixed < -NEGATIVE_FIXED_TOLERANCE * m_lo:
        reader.add(
            None,
            gettext_noop(
                "These two points imply a negative fixed cost (%(fixed)s): memory grew faster "
                "than the batch. Keep the sequence length the same in both runs and measure at "
                "batch sizes further apart."
            ),
            fixed=format_mib(fixed),
        )
        reader.raise_problems()
    return per_sample, max(fixed, 0.0)  # a slightly negative intercept is measurement noise


def scaling_efficiency(
    *,
    compute_time: object,
    communication_time: object,
    compute_unit: str = "ms",
    communication_unit: str = "ms",
    cards: object = None,
) -> ScalingEfficiency:
    """1 / (1 + C/T) from per-card compute time T and exposed communication time C per step."""
    reader = _Reader()
    compute_scale = reader.unit("compute_unit", compute_unit, TIME_UNITS)
    communication_scale = reader.unit("communication_unit", communication_unit, TIME_UNITS)
    compute = reader.positive("compute_time", compute_time)
    communication = reader.number("communication_time", communication_time)
    count = None if _blank(cards) else reader.whole("cards", cards, maximum=MAX_CARDS)
    reader.raise_problems()

    compute, communication = compute * compute_scale, communication * communication_scale
    if communication < 0:
        reader.add(
            "communication_time",
            gettext_noop(
                "Communication time cannot be negative; enter 0 when it is fully overlapped "
                "with compute."
            ),
        )
    if compute < MIN_COMPUTE_MS:
        reader.add(
            "compute_time",
            gettext_noop("%(value)s per step is too short to be a training step: check the unit."),
            value=format_ms(compute),
        )
    for name, value in (("compute_time", compute), ("communication_time", communication)):
        if value > MAX_STEP_MS:
            reader.add(
                name,
                gettext_noop(
                    "%(value)s per step is more than an hour: check the number and the unit."
                ),
                value=format_ms(value),
            )
    reader.raise_problems()
    return ScalingEfficiency(
        compute_ms=compute,
        communication_ms=communication,
        efficiency=1 / (1 + communication / compute),
        cards=count,
    )


class _Reader:
    """Turns raw inputs (numbers or the strings a form sends) into numbers, collecting problems."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, name: str | None, message: str, **params: str) -> None:
        self.problems.append(Problem(field=name, phrase=Phrase.of(message, params)))

    def raise_problems(self) -> None:
        if self.problems:
            raise CalculatorInputError(self.problems)

    def number(self, name: str, raw: object) -> float:
        value = _parse(raw)
        if value is None:
            self.add(name, gettext_noop("Enter a number, such as 12 or 7.5."))
            return math.nan
        return value

    def positive(self, name: str, raw: object) -> float:
        value = self.number(name, raw)
        if not math.isnan(value) and value <= 0:
            self.add(name, gettext_noop("Enter a number greater than zero."))
        return value

    def whole(self, name: str, raw: object, *, maximum: int) -> int:
        value = self.positive(name, raw)
        if math.isnan(value) or value <= 0:
            return 0
        if value != int(value):
            self.add(name, gettext_noop("Enter a whole number."))
        elif value > maximum:
            self.add(name, gettext_noop("At most %(max)s."), max=f"{maximum:,}")
        return int(value)

    def batch(self, name: str, raw: object) -> int:
        value = self.positive(name, raw)
        if math.isnan(value) or value <= 0:
            return 0
        if value != int(value):
            self.add(name, gettext_noop("A batch size is a whole number of samples."))
        elif value > MAX_BATCH:
            self.add(
                name,
                gettext_noop("A batch of more than %(max)s samples is not plausible."),
                max=f"{MAX_BATCH:,}",
            )
        return int(value)

    def unit(self, name: str, raw: str, units: dict[str, float]) -> float:
        if raw not in units:
            self.add(
                name,
                gettext_noop("Unknown unit “%(unit)s”: use %(units)s."),
                unit=str(raw)[:20],
                units=" / ".join(units),
            )
            return 1.0
        return units[raw]


def _blank(raw: object) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


def _parse(raw: object) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float | Decimal):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return None
    else:
        return None
    return value if math.isfinite(value) else None


def format_mib(value: float) -> str:
    """Memory in MiB as people read it: MiB below one GiB, GiB above."""
    if abs(value) >= 1024:
        return f"{value / 1024:,.1f} GiB"
    return f"{value:,.0f} MiB"


def format_ms(value: float) -> str:
    """A duration in ms as people read it: ms below a second, s above."""
    if abs(value) >= 1000:
        return f"{value / 1000:,.2f} s"
    return f"{value:,.2f} ms"
