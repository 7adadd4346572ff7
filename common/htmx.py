def htmx_partial(request) -> bool:
    """True when htmx asks for a fragment (not a boosted full page)."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.boosted
