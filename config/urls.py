from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

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
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("admin/", admin.site.urls),
]
