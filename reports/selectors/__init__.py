"""Reads, named for the pages that use them. Aggregation happens in the database."""

from reports.selectors.matrix import (
    MATRIX_PER_STAGE,
    MATRIX_WEEKS,
    HeatCell,
    HeatRow,
    Matrix,
    MatrixEntry,
    MatrixParams,
    MatrixRow,
    matrix_get,
    matrix_incidents,
)
from reports.selectors.weekly import report_get, report_list, report_week_compute
from reports.selectors.weekly_page import RhythmRun, report_rhythm_run, report_week_page

__all__ = [
    "MATRIX_PER_STAGE",
    "MATRIX_WEEKS",
    "HeatCell",
    "HeatRow",
    "Matrix",
    "MatrixEntry",
    "MatrixParams",
    "MatrixRow",
    "RhythmRun",
    "matrix_get",
    "matrix_incidents",
    "report_get",
    "report_list",
    "report_rhythm_run",
    "report_week_compute",
    "report_week_page",
]
