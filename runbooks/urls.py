from django.urls import path

from runbooks import views

app_name = "runbooks"

urlpatterns = [
    path("runbooks/", views.runbook_list, name="runbook-list"),
    # Before <slug>/ so that "runs" is never read as a runbook's slug.
    path("runbooks/runs/", views.run_list, name="run-list"),
    path("runbooks/runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("runbooks/<slug:slug>/", views.runbook_detail, name="runbook-detail"),
    path("runbooks/<slug:slug>/edit/", views.runbook_edit, name="runbook-edit"),
    path("runbooks/<slug:slug>/calculate/", views.runbook_calculate, name="runbook-calculate"),
    path("runbooks/<slug:slug>/runs/", views.run_start, name="run-start"),
]
