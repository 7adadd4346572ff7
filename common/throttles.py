"""API throttles that fail open: with the cache they count in out of reach (a shared Redis
that is down), a call goes through, with a warning in the log, instead of answering 500.

They count a caller by the address common.addresses names, as the sign-in lockout does. DRF's
own rule, with NUM_PROXIES unset, keys on the whole X-Forwarded-For header: a caller that
writes a new value in it each time is never throttled.
"""

from __future__ import annotations

import logging
import time

from rest_framework import throttling

from common.addresses import client_address

log = logging.getLogger(__name__)
# One warning a minute is enough to see the cache is down, not one per request.
_WARN_EVERY_SECONDS = 60.0
_warned_at = 0.0


class FailOpen:
    def get_ident(self, request) -> str:
        return client_address(request) or ""

    def allow_request(self, request, view) -> bool:
        try:
            return super().allow_request(request, view)  # type: ignore[misc]
        except Exception as error:  # whatever the cache backend raises when it cannot answer
            _warn(error)
            return True


def _warn(error: Exception) -> None:
    global _warned_at
    now = time.monotonic()
    if now - _warned_at >= _WARN_EVERY_SECONDS:
        _warned_at = now
        log.warning("API throttles let calls through: the cache is unreachable (%r)", error)


class AnonRateThrottle(FailOpen, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(FailOpen, throttling.UserRateThrottle):
    pass


class ScopedRateThrottle(FailOpen, throttling.ScopedRateThrottle):
    pass
