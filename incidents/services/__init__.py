"""Writes. Each function is one domain operation named `<entity>_<action>`."""

from incidents.services.analysis import (
    AnalysisRefused,
    analysis_request,
    analysis_run,
)
from incidents.services.feedback import FeedbackRefused, analysis_feedback
from incidents.services.incident import (
    incident_counted,
    incident_create,
    incident_delete,
    incident_index,
    incident_new_slug,
    incident_record_recurrence,
    incident_save_with_tags,
    incident_update,
    incidents_retagged,
    recurrence_delete,
    recurrence_update,
    signature_create,
    signature_delete,
    signature_mark_edited,
    signature_problems,
    signature_update,
    tags_from_names,
)
from incidents.services.knowledge import knowledge_changed
from incidents.services.origin import JobOrigin
from incidents.services.rescore import analyses_rescore
from incidents.services.sweep import analysis_sweep

__all__ = [
    "AnalysisRefused",
    "FeedbackRefused",
    "JobOrigin",
    "analyses_rescore",
    "analysis_feedback",
    "analysis_request",
    "analysis_run",
    "analysis_sweep",
    "incident_counted",
    "incident_create",
    "incident_delete",
    "incident_index",
    "incident_new_slug",
    "incident_record_recurrence",
    "incident_save_with_tags",
    "incident_update",
    "incidents_retagged",
    "knowledge_changed",
    "recurrence_delete",
    "recurrence_update",
    "signature_create",
    "signature_delete",
    "signature_mark_edited",
    "signature_problems",
    "signature_update",
    "tags_from_names",
]
