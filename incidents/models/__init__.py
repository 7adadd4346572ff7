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
from incidents.models.rollup import (
    AnalysisDay,
    CellDay,
    IncidentCell,
    IncidentDay,
    TagCell,
    TagCellDay,
    WindowState,
    WindowTotal,
)
from incidents.models.webhook import Webhook

__all__ = [
    "EDITABLE_FIELDS",
    "TEXT_FIELDS",
    "Analysis",
    "AnalysisDay",
    "AnalysisSuggestion",
    "CellDay",
    "Feedback",
    "Incident",
    "IncidentCell",
    "IncidentDay",
    "IncidentText",
    "KnowledgeChange",
    "KnowledgeGap",
    "KnowledgeState",
    "Recurrence",
    "Signature",
    "Tag",
    "TagCell",
    "TagCellDay",
    "Webhook",
    "WindowState",
    "WindowTotal",
]
