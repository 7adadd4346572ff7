"""A parallel step's output names the log of its failed job: `kb` sends that job's tail too."""

import sys

import pytest

from incidents.models import Analysis
from kbcli.kb import with_failed_job_log
from tests.kbcli.test_kb_watch import ALIGN_FAILED, ALIGN_OK, STILL_RUNNING

STEP_OUTPUT = """\
steps/align_si.sh --nj 12 --cmd run.pl data/train data/lang exp/tri2 exp/tri2_ali
steps/align_si.sh: aligning data in data/train using model from exp/tri2, putting alignments in exp/tri2_ali
{line}
"""

# Writes twelve jobs' logs as run.pl would, the tenth failed for want of disk, and ends as
# run.pl ends a step whose jobs failed.
KALDI_STEP = """\
import pathlib, sys
ok = {ok!r}
log = pathlib.Path("exp/tri2_ali/log")
log.mkdir(parents=True, exist_ok=True)
for job in range(1, 13):
    text = ok.format(n=job % 10)
    if job == 10:
        text = text.replace("# Accounting", "gzip: stdout: No space left on device\\n# Accounting")
        text = text.replace("Ended (code 0)", "Ended (code 1)")
    (log / f"align.{{job}}.log").write_text(text)
print("steps/align_si.sh: aligning data in data/train using model from exp/tri2")
print("run.pl: 1 / 12 failed, log is in exp/tri2_ali/log/align.*.log", file=sys.stderr)
sys.exit(1)
"""


def job_logs(root, logs: dict[int, str]):
    log = root / "exp" / "tri2_ali" / "log"
    log.mkdir(parents=True)
    for job, text in logs.items():
        (log / f"align.{job}.log").write_text(text)
    return log


@pytest.mark.parametrize(
    "line",
    [
        "run.pl: 2 / 12 failed, log is in exp/tri2_ali/log/align.*.log",
        "utils/queue.pl: 2 / 12 failed, log is in exp/tri2_ali/log/align.*.log",
        "queue.pl: job failed with status 1, log is in exp/tri2_ali/log/align.11.log",
        "slurm.pl: job failed, log is in exp/tri2_ali/log/align.11.log",
    ],
)
def test_the_first_failed_jobs_tail_follows_the_output_that_names_it(tmp_path, line):
    job_logs(tmp_path, {1: ALIGN_OK.format(n=1), 2: STILL_RUNNING, 11: ALIGN_FAILED})
    output = STEP_OUTPUT.format(line=line)

    sent = with_failed_job_log(output, [str(tmp_path / "elsewhere"), str(tmp_path)])

    assert sent.startswith(output.rstrip())
    assert sent.endswith("==> exp/tri2_ali/log/align.11.log <==\n" + ALIGN_FAILED.rstrip())


def test_jobs_are_taken_in_their_order_and_an_absolute_path_is_read_as_named(tmp_path):
    log = job_logs(tmp_path, {n: ALIGN_FAILED.replace("final.mdl", f"{n}.mdl") for n in (2, 10)})
    output = STEP_OUTPUT.format(line=f"run.pl: 2 / 12 failed, log is in {log}/align.*.log")

    sent = with_failed_job_log(output, ["/nonexistent"])

    assert f"==> {log}/align.2.log <==" in sent and "exp/tri2/2.mdl" in sent
    assert "10.mdl" not in sent


def test_a_path_with_glob_characters_of_its_own_is_read_as_named(tmp_path):
    log = tmp_path / "exp[v2]" / "log"
    log.mkdir(parents=True)
    (log / "align.3.log").write_text(ALIGN_FAILED)
    output = STEP_OUTPUT.format(line="run.pl: 1 / 4 failed, log is in exp[v2]/log/align.*.log")

    sent = with_failed_job_log(output, [str(tmp_path)])

    assert sent.endswith("==> exp[v2]/log/align.3.log <==\n" + ALIGN_FAILED.rstrip())


@pytest.mark.parametrize(
    ("logs", "line"),
    [
        ({}, "run.pl: 2 / 12 failed, log is in exp/tri2_ali/log/align.*.log"),
        (
            {1: ALIGN_OK.format(n=1)},
            "run.pl: 2 / 12 failed, log is in exp/tri2_ali/log/align.*.log",
        ),
        ({1: ALIGN_FAILED}, "run.pl: the logs are in exp/tri2_ali/log/align.*.log"),
    ],
)
def test_the_output_goes_alone_when_no_failed_jobs_log_is_named_or_found(tmp_path, logs, line):
    job_logs(tmp_path, logs)
    output = STEP_OUTPUT.format(line=line)
    assert with_failed_job_log(output, [str(tmp_path)]) == output


def test_a_log_named_long_before_the_end_is_not_followed(tmp_path):
    job_logs(tmp_path, {1: ALIGN_FAILED})
    named = "run.pl: job failed, log is in exp/tri2_ali/log/align.1.log\n"
    output = named + "".join(f"retrying, attempt {n}\n" for n in range(40))
    assert with_failed_job_log(output, [str(tmp_path)]) == output


@pytest.mark.django_db(transaction=True)
def test_kb_run_sends_the_failed_jobs_log_and_explains_the_failure_by_it(kb, workers, tmp_path):
    workers("kb-run")
    script = tmp_path / "align_si.py"
    script.write_text(KALDI_STEP.format(ok=ALIGN_OK))

    result = kb("run", "--", sys.executable, str(script))

    assert result.returncode == 1
    assert "[disk-full]" in result.stderr, result.stderr
    analysis = Analysis.objects.get()
    assert "==> exp/tri2_ali/log/align.10.log <==" in analysis.text
    assert "No space left on device" in analysis.text
    assert "Ended (code 0)" not in analysis.text
