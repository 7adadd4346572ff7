"""The benign reference corpus: lines from healthy training and serving logs.

A signature that fires on more than a sliver of these lines would flag healthy jobs, so
`check_signature` refuses it. The corpus lives in `benign/*.log` next to this module.
"""

from __future__ import annotations

import functools
from pathlib import Path

BENIGN_DIR = Path(__file__).with_name("benign")


def benign_lines() -> list[str]:
    """Every non-blank line of `benign/*.log`, in file order (read once, then cached)."""
    return list(_load(BENIGN_DIR))


@functools.cache
def _load(folder: Path) -> tuple[str, ...]:
    lines: list[str] = []
    for path in sorted(folder.glob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        lines.extend(line.rstrip("\r") for line in text.split("\n") if line.strip())
    return tuple(lines)
