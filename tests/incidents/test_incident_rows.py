"""The incident list's rows (written in Python for speed, issue 14): what each shows, in
both languages, escaped, from the row's own columns and one query for the page's tags."""

import html
import re
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import formats, translation

from incidents.models import Incident
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

LIST = reverse("incidents:incident-list")


def _row(body: str, slug: str) -> str:
    rows = [row for row in re.findall(r"<tr>.*?</tr>", body, re.S) if f">{slug}</div>" in row]
    assert len(rows) == 1, f"no single row for {slug}"
    return rows[0]


def _chinese(client) -> None:
    client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})


def test_a_row_shows_the_columns_and_the_tags_as_filter_links(alice_client, alice):
    IncidentFactory(
        slug="rank-oom",
        title="Rank 3 ran out of memory",
        stage="serve",
        discipline="tiny-sample",
        severity="critical",
        tags=["zeta", "gpu memory", "alpha"],
        occurred_on=date(2026, 3, 4),
        reporter=alice,
    )
    row = _row(alice_client.get(LIST).content.decode(), "rank-oom")

    assert '<a href="/incidents/rank-oom/">Rank 3 ran out of memory</a>' in row
    assert '<span class="badge stage-serve">Serve</span>' in row
    assert "<td>Tiny-sample trial run</td>" in row
    assert '<span class="sev sev-critical">Critical</span>' in row
    tags = re.findall(r'<a class="tag" href="\?tag=([^"]*)">([^<]*)</a>', row)
    assert tags == [("alpha", "alpha"), ("gpu%20memory", "gpu memory"), ("zeta", "zeta")]
    with translation.override("en"):
        assert formats.date_format(date(2026, 3, 4)) in row
    assert f'<td class="small">{alice.username}</td>' in row


def test_a_row_without_date_or_reporter_says_so(alice_client):
    IncidentFactory(slug="bare", occurred_on=None, reporter=None)
    row = _row(alice_client.get(LIST).content.decode(), "bare")
    assert row.count('<td class="small">—</td>') == 2


def test_a_row_speaks_chinese_on_a_chinese_page(alice_client, catalog):
    _chinese(alice_client)
    gpu_oom = Incident.objects.get(slug="gpu-oom")
    gpu_oom.occurred_on = date(2026, 3, 4)
    gpu_oom.save(update_fields=["occurred_on", "updated_at"])  # first on the list
    row = _row(alice_client.get(LIST).content.decode(), "gpu-oom")

    title = gpu_oom.translations["zh-hans"]["title"]
    assert f">{html.escape(title)}</a>" in row
    with translation.override("zh-hans"):
        for label in (
            gpu_oom.get_stage_display(),
            gpu_oom.get_discipline_display(),
            gpu_oom.get_severity_display(),
            formats.date_format(date(2026, 3, 4)),
        ):
            assert str(label) in row
        assert "2026" in formats.date_format(date(2026, 3, 4))


def test_rows_change_language_with_the_page_in_one_process(alice_client):
    IncidentFactory(slug="swap", stage="serve", occurred_on=date(2026, 3, 4))

    def shown(language: str) -> str:
        alice_client.post(reverse("language-set"), {"language": language, "next": "/"})
        return _row(alice_client.get(LIST).content.decode(), "swap")

    english, chinese, again = shown("en"), shown("zh-hans"), shown("en")

    assert again == english
    assert ">Serve</span>" in english and "Mar" in english
    with translation.override("zh-hans"):
        assert f">{Incident(stage='serve').get_stage_display()}</span>" in chinese
        assert formats.date_format(date(2026, 3, 4)) in chinese
    assert 'href="/incidents/swap/"' in english


def test_a_row_escapes_what_people_typed(alice_client):
    IncidentFactory(slug="typed", title='<script>alert("t")</script> & co', tags=['"><b>x'])
    row = _row(alice_client.get(LIST).content.decode(), "typed")
    assert "<script>" not in row and "<b>" not in row
    assert "&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; co" in row
    assert 'href="?tag=%22%3E%3Cb%3Ex">&quot;&gt;&lt;b&gt;x</a>' in row


def test_the_list_reads_no_long_text_column(alice_client):
    IncidentFactory(symptom="RuntimeError: a long symptom " * 50)
    with CaptureQueriesContext(connection) as queries:
        alice_client.get(LIST)
    page = [q["sql"] for q in queries.captured_queries if '"incidents_incident"."slug"' in q["sql"]]
    assert page, "the page's query of incidents"
    for column in ("symptom", "remedy", "search_document", "search_words", "environment"):
        assert f'"incidents_incident"."{column}"' not in page[0]


def test_the_filter_fields_show_what_each_request_asked(alice_client):
    def selected(body: str, name: str) -> list[str]:
        select = re.search(rf'<select name="{name}".*?</select>', body, re.S).group(0)
        return re.findall(r'<option value="([^"]*)" selected>', select)

    for stage in ("train", "data", "train", ""):
        body = alice_client.get(LIST, {"stage": stage}).content.decode()
        assert selected(body, "stage") == [stage]
    body = alice_client.get(LIST, {"stage": "data", "sort": "-recurrences"}).content.decode()
    assert selected(body, "stage") == ["data"] and selected(body, "sort") == ["-recurrences"]
    assert '<option value="train">Train</option>' in body

    _chinese(alice_client)
    body = alice_client.get(LIST, {"stage": "data"}).content.decode()
    assert selected(body, "stage") == ["data"]
    with translation.override("zh-hans"):
        from common.choices import Stage

        assert f'<option value="train">{Stage.TRAIN.label}</option>' in body
