"""The log engine: from a pasted tail to its stage, errors, grouped warnings and ranked remedies.

Plain Python, no Django: frozen dataclasses go in (`IncidentSpec`, `SignatureSpec`) and come
out (`Report`). Compile the knowledge base with `build_index`, analyse with `analyze`, store
or print `report_as_dict(report)`; `check_signature` validates a pattern before it is saved.
"""

from .analyze import KnowledgeIndex, analyze, build_index
from .benign import LineCorpus, benign_corpus, benign_lines
from .checks import check_counter, check_signature
from .masking import mask_line
from .reading import read_input
from .redact import redact, without_secrets
from .report_json import Bounds, report_as_dict
from .signatures import telling_examples
from .stages import infer_stage
from .types import (
    BinaryInput,
    EmptyInput,
    Evidence,
    Group,
    IncidentSpec,
    InputError,
    InputTooLarge,
    Level,
    Limits,
    Line,
    Report,
    SignatureSpec,
    Suggestion,
)

__all__ = [
    "BinaryInput",
    "Bounds",
    "EmptyInput",
    "Evidence",
    "Group",
    "IncidentSpec",
    "InputError",
    "InputTooLarge",
    "KnowledgeIndex",
    "Level",
    "Limits",
    "Line",
    "LineCorpus",
    "Report",
    "SignatureSpec",
    "Suggestion",
    "analyze",
    "benign_corpus",
    "benign_lines",
    "build_index",
    "check_counter",
    "check_signature",
    "infer_stage",
    "mask_line",
    "read_input",
    "redact",
    "report_as_dict",
    "telling_examples",
    "without_secrets",
]
