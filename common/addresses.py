"""The client's address, as the sign-in lockout and the API throttles count it.

Behind TRUSTED_PROXY_COUNT proxies (0: none, REMOTE_ADDR is the client), the client is the
entry that many places from the right of X-Forwarded-For: each trusted proxy appends the
address it was called from, so what a client writes into the header itself stays on the left,
never counted. The same rule as Django REST framework's NUM_PROXIES.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str | None:
    remote = request.META.get("REMOTE_ADDR") or None
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if not proxies or not forwarded.strip():
        return remote
    hops = [hop.strip() for hop in forwarded.split(",")]
    chosen = hops[-min(proxies, len(hops))]
    try:
        return str(ipaddress.ip_address(chosen))
    except ValueError:  # not what a proxy writes: never stored as an address
        return remote
