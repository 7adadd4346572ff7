from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from common.views import healthz
from config import api_docs

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="incidents:incident-list"), name="home"),
    path("", include("accounts.urls")),
    path("", include("incidents.urls")),
    path("", include("runbooks.urls")),
    path("", include("reports.urls")),
    path("api/v1/", include("incidents.api.urls")),
    path("api/v1/", include("runbooks.api_urls")),
    path("api/v1/", include("reports.api_urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/docs/", api_docs.swagger_view, name="api-docs"),
    path("api/v1/redoc/", api_docs.redoc_view, name="api-redoc"),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
]

handler400 = "config.limits.bad_request"
handler403 = "config.limits.forbidden"
handler404 = "config.limits.not_found"
handler500 = "config.limits.server_error"
