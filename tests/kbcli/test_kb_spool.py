"""Offline: a failure's tail waits in the spool and is sent once, whatever happens after."""

import shutil
import sys

import pytest

from incidents.models import Analysis
from tests.services import broker

DOWN = "http://127.0.0.1:9"  # nothing listens on the discard port


@pytest.mark.django_db(transaction=True)
def test_it_spools_while_the_server_is_down_and_flush_sends_each_once(
    kb, redis, failing_script, tmp_path
):
    with broker(redis.url):  # queued analyses wait in the broker: no worker is needed
        first = kb("run", "--", sys.executable, str(failing_script), KB_URL=DOWN)
        second = kb("run", "--", sys.executable, str(failing_script), KB_TOKEN="")
        assert (first.returncode, second.returncode) == (3, 3)
        assert "kb flush" in first.stderr and "no API token" in second.stderr
        assert len(kb.spool) == 2 and Analysis.objects.count() == 0
        # A flush that dies between sending and deleting leaves the file behind; kept aside
        # here, it is put back after the flush, as such a crash would leave it.
        kept = tmp_path / "kept.json"
        shutil.copy(kb.spool[0], kept)

        flushed = kb("flush")
        assert flushed.returncode == 0, flushed.stderr
        assert kb.spool == [] and Analysis.objects.count() == 2
        shutil.copy(kept, kb.home / ".cache" / "kb" / "spool" / "resent.json")

        again = kb("run", "--", sys.executable, "-c", "print('fine')")
    assert again.returncode == 0 and kb.spool == []
    assert Analysis.objects.count() == 2
    assert set(Analysis.objects.values_list("source", flat=True)) == {"kb-run"}
