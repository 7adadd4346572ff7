from django.urls import path

from reports import (
    api,
    converters,  # noqa: F401  (registers <isoweek:…>)
)

app_name = "reports-api"

urlpatterns = [
    path("matrix/", api.MatrixApi.as_view(), name="matrix"),
    path("reports/weekly/", api.WeeklyReportListApi.as_view(), name="weekly-list"),
    path(
        "reports/weekly/<isoweek:week>/", api.WeeklyReportDetailApi.as_view(), name="weekly-detail"
    ),
    path(
        "reports/weekly/<isoweek:week>/review/",
        api.WeeklyReportReviewApi.as_view(),
        name="weekly-review",
    ),
    path(
        "reports/weekly/<isoweek:week>/build/",
        api.WeeklyReportBuildApi.as_view(),
        name="weekly-build",
    ),
]
