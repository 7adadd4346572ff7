"""API throttles that fail open: with the cache they count in out of reach (a shared Redis
that is down), a call goes through, with a warning in the log, instead of answering 500.

They count a caller by the address common.addresses names, as the sign-in lockout does. DRF's
own rule, with NUM_PROXIES unset, keys on the whole X-Forwarded-For header: a caller that
writes a new value in it each time is never throttled.
"""

from __future__ import annotations

from rest_framework import throttling

from common.addresses import client_address
from common.cache import warn_cache_unreachable


class FailOpen:
    def get_ident(self, request) -> str:
        return client_address(request) or ""

    def allow_request(self, request, view) -> bool:
        try:
            return super().allow_request(request, view)  # type: ignore[misc]
        except Exception as error:  # whatever the cache backend raises when it cannot answer
            warn_cache_unreachable("API throttles let calls through", error)
            return True


class AnonRateThrottle(FailOpen, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(FailOpen, throttling.UserRateThrottle):
    pass


class ScopedRateThrottle(FailOpen, throttling.ScopedRateThrottle):
    pass
