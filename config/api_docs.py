"""The API docs pages, under the site's Content-Security-Policy.

Swagger UI comes from the split view: its start-up script is served as a file
(`/api/v1/docs/?script`) instead of inline, so these pages run scripts from 'self' only.
Redoc styles itself by injecting <style> elements (styled-components), so its page alone
may use inline styles; inline scripts stay forbidden there too, and its search index runs
in a worker started from a blob: URL.
"""

from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

swagger_view = SpectacularSwaggerSplitView.as_view(url_name="api-schema")
redoc_view = csp_update({"style-src": [UNSAFE_INLINE], "worker-src": [SELF, "blob:"]})(
    SpectacularRedocView.as_view(url_name="api-schema")
)
# They are pages: a visitor who is not signed in is sent to the sign-in page (DRF marks
# its views login_not_required, and would answer a bare 403).
swagger_view.login_required = redoc_view.login_required = True
