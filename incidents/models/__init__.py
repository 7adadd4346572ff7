from incidents.models.analysis import (
    Analysis,
    AnalysisSuggestion,
    Feedback,
    KnowledgeChange,
    KnowledgeGap,
    KnowledgeState,
)
from incidents.models.incident import (
    EDITABLE_FIELDS,
    TEXT_FIELDS,
    Incident,
    IncidentText,
    Recurrence,
    Signature,
    Tag,
)
from incidents.models.webhook import Webhook

__all__ = [
    "EDITABLE_FIELDS",
    "TEXT_FIELDS",
    "Analysis",
    "AnalysisSuggestion",
    "Feedback",
    "Incident",
    "IncidentText",
    "KnowledgeChange",
    "KnowledgeGap",
    "KnowledgeState",
    "Recurrence",
    "Signature",
    "Tag",
    "Webhook",
]
