"""Paste a tail in the browser, watch it run, read the remedies, give feedback.

The worker's part is the real service (`analysis_run`), called here in-process; the real
worker processes are exercised in test_analysis_lifecycle.py.
"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from incidents.models import Analysis, Feedback, Incident, KnowledgeGap
from incidents.selectors import CONTEXT_CHARS
from incidents.services import analysis_run

pytestmark = pytest.mark.django_db

NEW = reverse("incidents:analysis-new")
OOM_TAIL = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "train.py", line 211, in <module>
[rank0]:     loss.backward()
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.
"""
UNKNOWN_TAIL = "ERROR: frobnicator quux exploded at stage 7 with code 0x2f\n"


def _submit(client, **data) -> Analysis:
    response = client.post(NEW, data)
    assert response.status_code == 302, response.content.decode()[-800:]
    analysis = Analysis.objects.latest("id")
    assert response["Location"] == analysis.get_absolute_url()
    return analysis


def _analysed(client, **data) -> Analysis:
    """Submit a tail and let the worker's service analyse it, as a worker would."""
    analysis = _submit(client, **data)
    analysis_run(analysis_id=analysis.pk)
    analysis.refresh_from_db()
    return analysis


def test_it_shows_progress_until_the_worker_is_done(alice_client, catalog):
    analysis = _submit(alice_client, log=OOM_TAIL)
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "Queued" in page
    assert 'hx-trigger="every 700ms"' in page
    analysis_run(analysis_id=analysis.pk)
    fragment = alice_client.get(analysis.get_absolute_url(), HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert "hx-trigger" not in body  # finished: polling stops
    assert "<html" not in body  # only the fragment
    assert 'id="suggestion-gpu-oom"' in body


def test_it_ranks_gpu_oom_first_with_the_evidence_highlighted(alice_client, catalog):
    analysis = _analysed(alice_client, log=OOM_TAIL, log_path="exp/llm/log/train.1.log")
    response = alice_client.get(analysis.get_absolute_url())
    suggestions = response.context["suggestions"]
    assert suggestions[0].incident.slug == "gpu-oom"
    assert suggestions[0].confident
    hits = [line for block in suggestions[0].context for line in block if line.evidence]
    assert any("CUDA out of memory" in line.text for line in hits)
    body = response.content.decode()
    assert 'class="ln hit"' in body
    assert 'data-copy="remedy-gpu-oom"' in body


def test_this_fixed_it_records_a_recurrence(alice_client, alice, catalog):
    analysis = _analysed(alice_client, log=OOM_TAIL)
    url = reverse("incidents:analysis-feedback", args=[analysis.pk])
    alice_client.post(url, {"incident": "gpu-oom", "verdict": "fixed"})
    incident = Incident.objects.get(slug="gpu-oom")
    assert incident.recurrence_count == 1
    assert incident.recurrences.get().reported_by == alice
    alice_client.post(url, {"incident": "gpu-oom", "verdict": "not-it"})  # changed their mind
    incident.refresh_from_db()
    assert incident.recurrence_count == 0
    assert Feedback.objects.get().verdict == "not-it"


def test_not_it_lowers_that_pairing_for_the_next_tail(alice_client, bob_client, catalog):
    first = _submit(alice_client, log=OOM_TAIL)
    analysis_run(analysis_id=first.pk)
    score = first.suggestions.get(incident__slug="gpu-oom").score
    url = reverse("incidents:analysis-feedback", args=[first.pk])
    alice_client.post(url, {"incident": "gpu-oom", "verdict": "not-it"})
    bob_client.post(url, {"incident": "gpu-oom", "verdict": "not-it"})
    second = _submit(alice_client, log=OOM_TAIL)
    analysis_run(analysis_id=second.pk)
    assert second.suggestions.get(incident__slug="gpu-oom").score < score


def test_feedback_is_only_for_suggested_incidents(alice_client, catalog):
    analysis = _analysed(alice_client, log=OOM_TAIL)
    url = reverse("incidents:analysis-feedback", args=[analysis.pk])
    alice_client.post(url, {"incident": "label-contamination", "verdict": "fixed"})
    assert not Feedback.objects.exists()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"log": ""}, "Paste a log tail or choose a file"),
        ({"log": "   \n\n  "}, "Paste a log tail or choose a file"),
        (
            {"file": SimpleUploadedFile("core", b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 64)},
            "binary",
        ),
        ({"log": OOM_TAIL, "log_path": "p" * 501}, "at most 500 characters"),
    ],
)
def test_it_explains_refused_input_and_stores_nothing(alice_client, data, message):
    response = alice_client.post(NEW, data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Analysis.objects.exists()


def test_it_analyses_an_uploaded_file(alice_client, catalog):
    upload = SimpleUploadedFile("train.log", OOM_TAIL.encode())
    analysis = _analysed(alice_client, file=upload, log_path="exp/llm/log/train.1.log")
    assert analysis.top_incident.slug == "gpu-oom"


def test_it_redacts_secrets_before_storing(alice_client, catalog):
    token = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7"
    analysis = _submit(alice_client, log=f"export HF_TOKEN={token}\n{OOM_TAIL}")
    assert token not in analysis.text
    assert analysis.redactions >= 1


def test_an_unexplained_tail_offers_to_draft_an_incident(alice_client, catalog):
    analysis = _analysed(alice_client, log=UNKNOWN_TAIL)
    assert not analysis.confident
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "No confident match" in page
    gap = KnowledgeGap.objects.get()
    assert gap.analysis_count == 1
    gaps = alice_client.get(reverse("incidents:gap-list")).content.decode()
    assert "frobnicator quux exploded" in gaps
    draft = alice_client.get(reverse("incidents:gap-draft", args=[gap.pk]), follow=True)
    form_page = draft.content.decode()
    assert "frobnicator quux exploded at stage 7" in form_page  # the key line, pre-filled
    assert f'name="gap" value="{gap.pk}"' in form_page


RUN_PL_TAIL = """\
steps/align_si.sh --nj 12 --cmd run.pl data/train data/lang exp/tri2 exp/tri2_ali
steps/align_si.sh: aligning data in data/train using model from exp/tri2, putting alignments in exp/tri2_ali
run.pl: 3 / 12 failed, log is in exp/tri2_ali/log/align.*.log<b>
"""


def test_a_tail_that_names_its_failed_jobs_log_says_to_read_that_log(alice_client, catalog):
    analysis = _analysed(alice_client, log=RUN_PL_TAIL)
    assert not analysis.confident
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "Line 3 says where the step's failed jobs wrote their cause" in page
    assert "<code>exp/tri2_ali/log/align.*.log&lt;b&gt;</code>" in page  # escaped as pasted
    assert "<code>kb run</code>" in page

    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "第 3 行指出了这一步失败的任务把原因写在哪里" in page


def test_a_tail_that_goes_on_to_the_failed_jobs_log_is_not_sent_back_to_it(alice_client, catalog):
    job_log = (
        "==> exp/tri2_ali/log/align.7.log <==\nERROR (gmm-align-compiled[5.5]:main()) frobnicated\n"
    )
    analysis = _analysed(alice_client, log=RUN_PL_TAIL + job_log)
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert 'id="job-log"' not in page


def test_filing_from_a_gap_links_the_gap_and_explains_it_on_rescore(alice_client, catalog):
    from incidents.services import analyses_rescore

    analysis = _analysed(alice_client, log=UNKNOWN_TAIL)
    gap = KnowledgeGap.objects.get()
    alice_client.post(
        reverse("incidents:incident-create"),
        {
            "gap": gap.pk,
            "title": "Frobnicator explodes",
            "symptom": "ERROR: frobnicator quux exploded at stage 7 with code 0x2f",
            "root_cause": "The frobnicator is fed an unsorted quux list.",
            "remedy": "sort -u quux.txt > quux.sorted",
            "discipline": "validate-first",
            "stage": "data",
            "severity": "medium",
        },
    )
    gap.refresh_from_db()
    assert gap.incident.slug == "frobnicator-explodes"
    result = analyses_rescore()
    assert result.newly_explained == [gap.pk]
    assert analyses_rescore().rescored == 0  # same knowledge: nothing to do again
    analysis.refresh_from_db()
    assert analysis.confident
    assert analysis.top_incident.slug == "frobnicator-explodes"


def test_a_just_filed_incident_matches_a_tail_with_other_numbers(alice_client, catalog):
    alice_client.post(
        reverse("incidents:incident-create"),
        {
            "title": "Sharded checkpoint index mismatch",
            "symptom": "ValueError: shard 17 of 64 missing in checkpoint index ckpt-000123.json",
            "root_cause": "Two jobs wrote the same checkpoint directory.",
            "remedy": "Write each run into exp/<run-id>/ckpt",
            "discipline": "reconcile",
            "stage": "train",
            "severity": "high",
        },
    )
    tail = "step 400 loss 2.1\nValueError: shard 3 of 32 missing in checkpoint index ckpt-000999.json\n"
    analysis = _analysed(alice_client, log=tail)
    assert analysis.top_incident.slug == "sharded-checkpoint-index-mismatch"


def test_nearby_evidence_lines_share_one_block(alice_client, catalog):
    tail = "\n".join(f"step {n} ok" for n in range(1, 21)) + "\n" + OOM_TAIL + OOM_TAIL
    analysis = _analysed(alice_client, log=tail)
    response = alice_client.get(analysis.get_absolute_url())
    top = response.context["suggestions"][0]
    numbers = [line.number for block in top.context for line in block]
    assert len(numbers) == len(set(numbers))  # no line shown twice
    assert len(top.context) == 1  # evidence four lines apart: one block, not two


def test_a_long_evidence_line_is_shown_around_what_the_signature_matched(alice_client, catalog):
    """A service's JSON error body is one long line: the page shows the part that matched,
    not only the line's first characters."""
    padding = "; ".join(f"frame {n}: dispatch handler returned status 500" for n in range(40))
    tail = f'ERROR worker | {{"detail": "{padding}; CUDA out of memory. Tried to allocate 2.00 GiB"}}\n'
    analysis = _analysed(alice_client, log=tail)

    response = alice_client.get(analysis.get_absolute_url())

    top = response.context["suggestions"][0]
    assert top.incident.slug == "gpu-oom"
    (shown,) = [line for block in top.context for line in block if line.evidence]
    assert "CUDA out of memory" in shown.text
    assert shown.text.startswith("…")
    assert len(shown.text) <= CONTEXT_CHARS + 1


def test_weak_candidates_fold_away_below_a_confident_match(alice_client, catalog):
    analysis = _analysed(alice_client, log="RuntimeError: CUDA error: out of memory\n")
    assert analysis.suggestions.filter(confident=False).exists()
    body = alice_client.get(analysis.get_absolute_url()).content.decode()
    confident_at = body.index('id="suggestion-gpu-oom"')
    folded_at = body.index('<details class="weaker"')
    assert confident_at < folded_at
    weak = analysis.suggestions.filter(confident=False).first().incident.slug
    assert body.index(f'id="suggestion-{weak}"') > folded_at


def test_without_a_confident_match_candidates_stay_open(alice_client, catalog):
    analysis = _analysed(alice_client, log="ERROR: nccl communicator is slow on node 3\n")
    assert not analysis.confident and analysis.suggestions.exists()
    assert (
        '<details class="weaker"'
        not in alice_client.get(analysis.get_absolute_url()).content.decode()
    )


def test_the_stage_runbook_is_offered_when_the_match_tells_the_stage(
    alice_client, catalog, runbooks
):
    analysis = _analysed(alice_client, log="RuntimeError: CUDA error: out of memory\n")
    assert analysis.stage == "" and analysis.confident  # the tail alone names no stage
    body = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert 'id="diagnose-runbook"' in body
    assert "/runbooks/diagnose-train/" in body


def test_a_paste_and_a_file_together_are_refused_in_chinese_too(alice_client, catalog):
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    upload = SimpleUploadedFile("train.log", OOM_TAIL.encode())
    response = alice_client.post(NEW, {"log": OOM_TAIL, "file": upload})
    assert response.status_code == 400
    assert "二选一" in response.content.decode()
    assert not Analysis.objects.exists()


def test_a_confirmation_is_worded_in_the_readers_language(alice_client, bob_client, catalog):
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    analysis = _analysed(alice_client, log=OOM_TAIL)
    url = reverse("incidents:analysis-feedback", args=[analysis.pk])
    alice_client.post(url, {"incident": "gpu-oom", "verdict": "fixed"})
    recurrence = Incident.objects.get(slug="gpu-oom").recurrences.get()
    assert (recurrence.analysis_id, recurrence.note) == (analysis.pk, "")
    detail = reverse("incidents:incident-detail", args=["gpu-oom"])
    assert f"Confirmed by analysis #{analysis.pk}" in bob_client.get(detail).content.decode()
    assert f"由分析 #{analysis.pk} 确认" in alice_client.get(detail).content.decode()


def test_the_explanation_names_the_signature_as_its_incident_page_shows_it(alice_client, catalog):
    analysis = _analysed(alice_client, log=OOM_TAIL)
    body = alice_client.get(analysis.get_absolute_url()).content.decode()
    hit = Incident.objects.get(slug="gpu-oom").signatures.get(hit_count__gt=0)

    assert f"Signature #{hit.pk} matched ERROR line 4" in body
    incident_page = alice_client.get(reverse("incidents:incident-detail", args=["gpu-oom"]))
    assert f'id="signature-{hit.pk}"' in incident_page.content.decode()
    assert f"#{hit.pk}</span>" in incident_page.content.decode()


ENGINE_FAILED_TAIL = """\
INFO 11-05 10:00:01 api_server.py:585] vLLM API server version 0.6.3
INFO 11-05 10:00:09 config.py:1652] Downcasting torch.float32 to torch.float16.
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/openai/api_server.py", line 194, in build_async_engine_client_from_engine_args
    raise RuntimeError(
RuntimeError: Engine process failed to start
"""


CUT_TAIL = """\
INFO 11-05 10:00:01 api_server.py:585] vLLM API server version 0.6.3
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 151, in init_device
    torch.cuda.set_device(self.device)
  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 399, in set_device
"""


@pytest.mark.parametrize(
    ("log", "english", "chinese"),
    [
        (
            ENGINE_FAILED_TAIL,
            "Line 6 only reports that something before it failed",
            "第 6 行只是报告它之前有东西失败了",
        ),
        (
            CUT_TAIL,
            "What you pasted stops inside a traceback, at line 5",
            "你粘贴的内容停在了一段 traceback 中间（第 5 行）",
        ),
    ],
    ids=["summary-of-an-earlier-failure", "cut-inside-a-traceback"],
)
def test_a_tail_that_does_not_hold_its_cause_says_where_to_look(
    alice_client, catalog, log, english, chinese
):
    analysis = _analysed(alice_client, log=log)
    assert not analysis.confident
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert english in page

    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert chinese in page


def test_a_paste_without_an_error_line_says_so_instead_of_an_empty_key_line(alice_client, catalog):
    description = "the job just stops after a while, nothing in the output\n"
    analysis = _analysed(alice_client, log=description)
    assert not analysis.confident
    body = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert 'id="no-key-line"' in body
    assert "Its key line:" not in body
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    body = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "没有可以引用的错误或警告行" in body
    assert "它的关键行" not in body


def test_an_unknown_error_line_is_still_quoted_as_the_key_line(alice_client, catalog):
    analysis = _analysed(alice_client, log=UNKNOWN_TAIL)
    body = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "Its key line:" in body
    assert "frobnicator quux exploded" in body
    assert 'id="no-key-line"' not in body
