"""Where a failure caught by `kb run` or `kb watch` happened."""

from __future__ import annotations

from dataclasses import dataclass

from incidents import logmatch


@dataclass(frozen=True)
class JobOrigin:
    """Where a failure was caught (`kb run`, `kb watch`): the command and the machine."""

    command: str = ""
    exit_status: int | None = None
    host: str = ""
    cwd: str = ""
    job_id: str = ""

    def redacted(self, addresses: bool) -> tuple[dict, int]:
        """The fields to store, with secrets on the command line (a token) and in paths
        redacted as in the tail; and how many were."""
        command, in_command = logmatch.redact(self.command[:4000], addresses=addresses)
        cwd, in_cwd = logmatch.redact(self.cwd[:500], addresses=addresses)
        fields = {
            "command": command,
            "exit_status": self.exit_status,
            "host": self.host[:255],
            "cwd": cwd,
            "job_id": self.job_id[:64],
        }
        return fields, in_command + in_cwd
