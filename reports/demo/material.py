"""What demo incidents are made of (`demo_data.toml`): kinds of failure with English and
Chinese text, the values their placeholders take, unexplained lines and warning floods.

An incident happens on one platform, so the values it draws agree with each other: an NPU
out-of-memory names an NPU node, an Ascend card and `npu-smi`, never `gpu-node01`.
"""

from __future__ import annotations

import random
import tomllib
from dataclasses import dataclass
from pathlib import Path

PLATFORMS = ("gpu", "npu")


@dataclass(frozen=True)
class Pitfall:
    """A kind of failure; each demo incident is one instance of it with its own details."""

    key: str
    stage: str
    discipline: str
    severity: str
    tags: tuple[str, ...]
    platforms: tuple[str, ...]
    en: dict[str, str]
    zh: dict[str, str]
    key_template: str  # the masked key line, as the engine would group it

    def texts(self, values: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """Its English and Chinese text with the placeholders filled."""
        return (
            {name: text.format(**values) for name, text in self.en.items()},
            {name: text.format(**values) for name, text in self.zh.items()},
        )


def _material() -> dict:
    with Path(__file__).with_name("demo_data.toml").open("rb") as file:
        return tomllib.load(file)


MATERIAL = _material()
PITFALLS = tuple(
    Pitfall(
        key=item["key"],
        stage=item["stage"],
        discipline=item["discipline"],
        severity=item["severity"],
        tags=tuple(item["tags"]),
        platforms=tuple(item.get("platforms", PLATFORMS)),
        en=item["en"],
        zh=item["zh-hans"],
        key_template=item["key_template"],
    )
    for item in MATERIAL["pitfall"]
)
# Unexplained tails (stage, line, masked template) and warning floods (line, template).
GAP_LINES = tuple((item["stage"], item["line"], item["template"]) for item in MATERIAL["gap"])
FLOOD_LINES = tuple((item["line"], item["template"]) for item in MATERIAL["flood"])
_SHARED = {
    name: tuple(options) for name, options in MATERIAL["values"].items() if name not in PLATFORMS
}
_PER_PLATFORM = {
    platform: {name: tuple(options) for name, options in MATERIAL["values"][platform].items()}
    for platform in PLATFORMS
}


def draw_values(rng: random.Random, pitfall: Pitfall) -> dict[str, str]:
    """Values for every placeholder, all of one platform the pitfall can happen on."""
    platform = rng.choice(pitfall.platforms)
    options = {**_SHARED, **_PER_PLATFORM[platform]}
    values = {name: rng.choice(choices) for name, choices in options.items()}
    values.update(
        lib_so=f"{values['lib']}_C.cpython-311-x86_64-linux-gnu.so",
        line=str(rng.randint(20, 400)),
        n=str(rng.randint(2, 900)),
        shard=f"{rng.randint(0, 4095):05d}",
        v1=str(rng.choice((32000, 64000, 151646, 128256))),
        v2=str(rng.choice((32001, 64512, 151936, 128000))),
        pid=str(rng.randint(1000, 99999)),
        workers=str(rng.choice((8, 16, 32))),
        gb=f"{rng.choice((1.5, 2.0, 4.0, 8.0, 12.0)):.2f}",
        dev=str(rng.randint(0, 7)),
        mb=str(rng.choice((1, 2, 4))),
        ga=str(rng.choice((8, 16, 32))),
        nodes=str(rng.choice((4, 8, 16, 32))),
        rank=str(rng.randint(0, 255)),
        ms=str(rng.choice((600000, 1800000, 2400, 3100, 4800))),
        a=f"{rng.choice((32000, 151936))}, 4096",
        b=f"{rng.choice((32001, 152064))}, 4096",
        job1=str(rng.randint(50000, 59999)),
        job2=str(rng.randint(50000, 59999)),
        drv=str(rng.choice((11040, 12020, 525))),
        qps=str(rng.choice((20, 40, 80, 160))),
        slo=str(rng.choice((800, 1500, 2000))),
        pct=str(rng.randint(5, 100)),
    )
    return values
