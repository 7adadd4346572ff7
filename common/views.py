from django.contrib.auth.decorators import login_not_required
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from common.health import health


@require_GET
@never_cache
@login_not_required
def healthz(request):
    """For load balancers and operators: 200 while the web can serve (the database answers),
    else 503; the body says how the broker, the cache and the workers are."""
    state = health()
    return JsonResponse(state, status=200 if state["ok"] else 503)
