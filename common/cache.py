"""The shared cache, read and written so that a cache out of reach (a shared Redis that is
down) costs a miss, with a warning in the log, never a failed request."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache import cache

log = logging.getLogger(__name__)
# One warning a minute for each consequence is enough to see the cache is down, not one
# per request.
_WARN_EVERY_SECONDS = 60.0
_warned_at: dict[str, float] = {}


def cache_get(key: str) -> Any:
    """The value kept under `key`; None when there is none or the cache cannot answer."""
    try:
        return cache.get(key)
    except Exception as error:  # whatever the cache backend raises when it cannot answer
        warn_cache_unreachable("Values are computed again", error)
        return None


def cache_set(key: str, value: Any, timeout: float) -> None:
    try:
        cache.set(key, value, timeout)
    except Exception as error:  # whatever the cache backend raises when it cannot answer
        warn_cache_unreachable("Values are computed again", error)


def warn_cache_unreachable(consequence: str, error: Exception) -> None:
    now = time.monotonic()
    if now - _warned_at.get(consequence, -_WARN_EVERY_SECONDS) >= _WARN_EVERY_SECONDS:
        _warned_at[consequence] = now
        log.warning("%s: the cache is unreachable (%r)", consequence, error)
