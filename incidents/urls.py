from django.urls import path

from incidents.views import analyses, gaps, incidents, signatures

app_name = "incidents"

urlpatterns = [
    path("incidents/", incidents.incident_list, name="incident-list"),
    path("incidents/new/", incidents.incident_create, name="incident-create"),
    path("incidents/similar/", incidents.incident_similar, name="incident-similar"),
    path("incidents/<slug:slug>/", incidents.incident_detail, name="incident-detail"),
    path("incidents/<slug:slug>/edit/", incidents.incident_edit, name="incident-edit"),
    path(
        "incidents/<slug:slug>/recurrences/",
        incidents.recurrence_create,
        name="recurrence-create",
    ),
    path(
        "incidents/<slug:slug>/signatures/new/",
        signatures.signature_create,
        name="signature-create",
    ),
    path("signatures/<int:pk>/edit/", signatures.signature_edit, name="signature-edit"),
    path("signatures/try/", signatures.signature_try, name="signature-try"),
    path("analyses/new/", analyses.analysis_new, name="analysis-new"),
    path("analyses/<int:pk>/", analyses.analysis_detail, name="analysis-detail"),
    path("analyses/<int:pk>/feedback/", analyses.analysis_feedback, name="analysis-feedback"),
    path("gaps/", gaps.gap_list, name="gap-list"),
    path("gaps/<int:pk>/draft/", gaps.gap_draft, name="gap-draft"),
]
