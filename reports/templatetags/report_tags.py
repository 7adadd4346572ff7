from django import template

register = template.Library()


@register.filter
def percent(value) -> str:
    """0.7312 (or "0.7312") → "73%"; nothing → "—"."""
    if value in (None, ""):
        return "—"
    try:
        return f"{round(float(value) * 100)}%"
    except (TypeError, ValueError):
        return "—"


@register.filter
def signed(value) -> str:
    """A week-over-week change: "+3", "−2", "±0"."""
    if value in (None, ""):
        return "—"
    value = int(value)
    return f"+{value}" if value > 0 else f"−{-value}" if value < 0 else "±0"


@register.filter
def trend_class(value) -> str:
    """More failures is bad news: up is red, down is green."""
    if value in (None, ""):
        return ""
    return "up" if int(value) > 0 else "down" if int(value) < 0 else "flat"
