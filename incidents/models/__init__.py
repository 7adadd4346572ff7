from incidents.models.analysis import (
    Analysis,
    AnalysisSuggestion,
    Feedback,
    KnowledgeGap,
    KnowledgeRescore,
)
from incidents.models.incident import (
    EDITABLE_FIELDS,
    TEXT_FIELDS,
    Discipline,
    Incident,
    IncidentText,
    Recurrence,
    Severity,
    Signature,
    Stage,
    Tag,
)

__all__ = [
    "EDITABLE_FIELDS",
    "TEXT_FIELDS",
    "Analysis",
    "AnalysisSuggestion",
    "Discipline",
    "Feedback",
    "Incident",
    "IncidentText",
    "KnowledgeGap",
    "KnowledgeRescore",
    "Recurrence",
    "Severity",
    "Signature",
    "Stage",
    "Tag",
]
