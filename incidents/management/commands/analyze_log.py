import json
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from incidents import logmatch
from incidents.knowledge import feedback_map, knowledge_index


class Command(BaseCommand):
    help = (
        "Analyse a log tail against the knowledge base and print the report (PATH or - for stdin)."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="log file, or - to read standard input")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--templates-only", action="store_true", help="group lines only, skip matching"
        )
        parser.add_argument("--log-path", default=None, help="the log's path, for the stage")
        parser.add_argument(
            "--max-bytes", type=int, default=settings.ANALYSIS_MAX_BYTES, help="input cap in bytes"
        )

    def handle(self, *args, path, json: bool, templates_only: bool, log_path, max_bytes, **options):
        data = self._read(path, max_bytes)
        index, feedback = (None, None) if templates_only else self._knowledge()
        try:
            report = logmatch.analyze(
                data,
                index,
                log_path=log_path or (None if path == "-" else path),
                feedback=feedback,
                limits=logmatch.Limits(max_bytes=max_bytes),
            )
        except logmatch.InputError as error:
            raise CommandError(str(error)) from error
        if json:
            self.stdout.write(_dumps(logmatch.report_as_dict(report)))
        else:
            self.stdout.write(_summary(report))

    def _knowledge(self):
        try:
            index = knowledge_index()
            feedback = feedback_map()
        except DatabaseError as error:
            raise CommandError(
                f"Cannot read the knowledge base ({error}). "
                "Run manage.py migrate and manage.py seed_catalog first."
            ) from error
        if not index.incidents:
            self.stderr.write(
                "The knowledge base is empty, so nothing can match: run manage.py seed_catalog."
            )
        return index, feedback

    def _read(self, path: str, max_bytes: int) -> bytes:
        try:
            if path == "-":
                return sys.stdin.buffer.read(max_bytes + 1)
            with Path(path).open("rb") as handle:
                return handle.read(max_bytes + 1)
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}") from error


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _summary(report: logmatch.Report) -> str:
    lines = [
        f"stage: {report.stage or 'unknown'}"
        + (f" ({report.stage_reason})" if report.stage_reason else ""),
        "levels: " + ", ".join(f"{name} {count}" for name, count in report.levels.items()),
    ]
    floods = [group for group in report.groups if group.flood]
    for group in floods:
        lines.append(f"flood: {group.count}× {group.template}")
    if not report.suggestions or not report.confident:
        lines.append(
            "no confident match"
            + (
                f": key line {report.key_line.number}: {report.key_line.text}"
                if report.key_line
                else ""
            )
        )
    for rank, suggestion in enumerate(report.suggestions, start=1):
        mark = "confident" if suggestion.confident else "weak"
        lines.append(
            f"{rank}. {suggestion.slug} ({suggestion.score:.2f}, {mark}) {suggestion.title}"
        )
        lines.extend(f"     {e.line}: {e.text}" for e in suggestion.evidence[:3])
    return "\n".join(lines)
