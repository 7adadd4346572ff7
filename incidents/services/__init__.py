"""Writes. Each function is one domain operation named `<entity>_<action>`."""

from incidents.services.analysis import (
    AnalysisRefused,
    FeedbackRefused,
    analyses_rescore,
    analysis_feedback,
    analysis_request,
    analysis_run,
    analysis_sweep,
)
from incidents.services.incident import (
    incident_create,
    incident_delete,
    incident_index,
    incident_new_slug,
    incident_record_recurrence,
    incident_save_with_tags,
    incident_update,
    signature_create,
    signature_delete,
    signature_mark_edited,
    signature_problems,
    signature_update,
    tags_from_names,
)
from incidents.services.knowledge import knowledge_changed

__all__ = [
    "AnalysisRefused",
    "FeedbackRefused",
    "analyses_rescore",
    "analysis_feedback",
    "analysis_request",
    "analysis_run",
    "analysis_sweep",
    "incident_create",
    "incident_delete",
    "incident_index",
    "incident_new_slug",
    "incident_record_recurrence",
    "incident_save_with_tags",
    "incident_update",
    "knowledge_changed",
    "signature_create",
    "signature_delete",
    "signature_mark_edited",
    "signature_problems",
    "signature_update",
    "tags_from_names",
]
