"""`kb watch`: each log that ended in failure is sent once, across restarts."""

import pytest

from incidents.models import Analysis
from tests.services import broker, wait_until

ALIGN_OK = """\
# gmm-align-compiled --transition-scale=1.0 exp/tri2/final.mdl ark:- ark:- ark,t:- | gzip -c > exp/tri2_ali/ali.{n}.gz
# Started at Tue Dec  1 10:00:0{n} UTC 2026
#
gmm-align-compiled --transition-scale=1.0 exp/tri2/final.mdl ark:- ark:- ark,t:-
LOG (gmm-align-compiled[5.5]:main():gmm-align-compiled.cc:127) Done 1203 utterances, failed for 0
# Accounting: time=41 threads=1
# Ended (code 0) at Tue Dec  1 10:00:5{n} UTC 2026
"""
ALIGN_FAILED = """\
# gmm-align-compiled --transition-scale=1.0 exp/tri2/final.mdl ark:- ark:- ark,t:-
# Started at Tue Dec  1 10:00:00 UTC 2026
#
ERROR (gmm-align-compiled[5.5]:Read():kaldi-io.cc:227) Failed to open exp/tri2/final.mdl: No such file or directory
# Accounting: time=0 threads=1
# Ended (code 1) at Tue Dec  1 10:00:01 UTC 2026
"""
SLURM_CANCELLED = """\
epoch 3 step 1200 loss 1.92
slurmstepd: error: *** JOB 4242 ON gpu-07 CANCELLED AT 2026-11-30T03:12:44 DUE TO TIME LIMIT ***
"""
STILL_RUNNING = "# gmm-align-compiled ...\nLOG (gmm-align-compiled[5.5]:main()) aligning\n"


def kaldi_tree(root):
    """exp/ with 10 logs: 7 aligned, 1 still running, 1 failed Kaldi job, 1 cancelled."""
    log = root / "exp" / "tri2_ali" / "log"
    log.mkdir(parents=True)
    for n in range(1, 8):
        (log / f"align.{n}.log").write_text(ALIGN_OK.format(n=n))
    (log / "align.8.log").write_text(STILL_RUNNING)
    (log / "align.9.log").write_text(ALIGN_FAILED)
    (root / "slurm-4242.out").write_text(SLURM_CANCELLED)
    return log


@pytest.mark.django_db(transaction=True)
def test_it_sends_each_failed_log_once_across_restarts(kb, redis):
    log = kaldi_tree(kb.home)
    watch = ("watch", ".", "--settle", "0", "--wait", "0")
    with broker(redis.url):  # queued analyses wait in the broker: no worker is needed
        first = kb(*watch, "--once")
        assert first.returncode == 0, first.stderr
        assert Analysis.objects.count() == 2
        assert first.stderr.count("FAILED ") == 2

        restarted = kb(*watch, "--once")
        assert "FAILED" not in restarted.stderr and Analysis.objects.count() == 2

        watching = kb.start(*watch, "--interval", "0.1")
        try:
            assert wait_until(lambda: (kb.home / ".cache/kb/watch-state.json").exists(), 10)
            (log / "align.8.log").write_text(ALIGN_FAILED)
            assert wait_until(lambda: Analysis.objects.count() == 3, 20)
        finally:
            watching.terminate()
            watching.wait(10)
    kaldi = Analysis.objects.filter(log_path__endswith="align.9.log").get()
    assert (kaldi.source, kaldi.exit_status) == ("kb-watch", 1)
    assert kaldi.command.startswith("gmm-align-compiled")
    slurm = Analysis.objects.get(log_path__endswith="slurm-4242.out")
    assert "CANCELLED" in slurm.text and slurm.exit_status is None
    assert Analysis.objects.count() == 3
