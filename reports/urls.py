from django.urls import path

from reports import (
    converters,  # noqa: F401  (registers <isoweek:…>)
    views,
)

app_name = "reports"

urlpatterns = [
    path("matrix/", views.matrix, name="matrix"),
    path("matrix.csv", views.matrix_export, {"fmt": "csv"}, name="matrix-csv"),
    path("matrix.md", views.matrix_export, {"fmt": "md"}, name="matrix-markdown"),
    path("reports/weekly/", views.weekly_list, name="weekly-list"),
    path("reports/weekly/<isoweek:week>/", views.weekly_detail, name="weekly-detail"),
    path("reports/weekly/<isoweek:week>/build/", views.weekly_build, name="weekly-build"),
    path("reports/weekly/<isoweek:week>/review/", views.weekly_review, name="weekly-review"),
    path("reports/weekly/<isoweek:week>/report.csv", views.weekly_csv, name="weekly-csv"),
    path("reports/weekly/<isoweek:week>/trend.svg", views.weekly_chart, name="weekly-chart"),
]
