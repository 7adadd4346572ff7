"""The quick-reference matrix: ranking, filters, heat map, languages, exports, query count."""

import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from markdown_it import MarkdownIt

from incidents.models import Feedback, Incident
from incidents.services.rollups_build import rollups_window
from reports.selectors import MatrixParams, matrix_get
from tests.reports.conftest import analysis, feedback, incident, local, recurrence

pytestmark = pytest.mark.django_db
MATRIX = reverse("reports:matrix")


def _today():
    return timezone.localdate(timezone=timezone.get_default_timezone())


def _entries(matrix, stage):
    return [
        (entry.slug, entry.happened)
        for row in matrix.rows
        if row.stage == stage
        for entry in row.entries
    ]


def test_it_ranks_a_stage_by_recurrences_plus_unanswered_confident_analyses(alice, bob):
    today = _today()
    often = incident(stage="train", title="Often")
    sometimes = incident(stage="train", title="Sometimes")
    old = incident(stage="train", title="Long ago")
    for _ in range(2):
        recurrence(often, today - timedelta(days=3))
    analysis(when=local(today - timedelta(days=1), 9), top=often)
    confirmed = analysis(when=local(today - timedelta(days=2), 9), top=sometimes)
    feedback(confirmed, sometimes, alice, Feedback.Verdict.FIXED, local(today, 8))
    recurrence(sometimes, today - timedelta(days=2))  # what "this fixed it" records
    rejected = analysis(when=local(today - timedelta(days=2), 10), top=sometimes)
    feedback(rejected, sometimes, bob, Feedback.Verdict.NOT_IT, local(today, 9))
    for _ in range(5):
        recurrence(old, today - timedelta(weeks=13))  # outside the 12-week window

    matrix = matrix_get(params=MatrixParams(), language="en")

    assert _entries(matrix, "train") == [(often.slug, 3), (sometimes.slug, 1), (old.slug, 0)]
    assert matrix.end == today and matrix.start == today - timedelta(weeks=12) + timedelta(days=1)
    assert _entries(matrix_get(params=MatrixParams(weeks=26), language="en"), "train")[0] == (
        old.slug,
        5,
    )


def test_it_limits_each_stage_and_filters_by_tag_and_team(alice, bob, lena):
    today = _today()
    for n in range(4):
        made = incident(
            stage="data", tags=["kaldi"] if n % 2 else ["llm"], reporter=alice if n < 2 else bob
        )
        for _ in range(n):
            recurrence(made, today)
    mine = incident(stage="serve", reporter=lena)

    top = matrix_get(params=MatrixParams(per_stage=2), language="en")
    assert [happened for _, happened in _entries(top, "data")] == [3, 2]
    tagged = matrix_get(params=MatrixParams(tag="KALDI"), language="en")
    assert [happened for _, happened in _entries(tagged, "data")] == [3, 1]
    team = matrix_get(params=MatrixParams(reporters=("alice", "lena")), language="en")
    assert [happened for _, happened in _entries(team, "data")] == [1, 0]
    assert _entries(team, "serve") == [(mine.slug, 0)]


def test_the_heat_map_counts_each_cell_and_links_to_the_incident_list(alice_client):
    today = _today()
    first = incident(stage="train", discipline="tiny-sample")
    incident(stage="train", discipline="tiny-sample")
    incident(stage="build", discipline="version-lock")
    for _ in range(4):
        recurrence(first, today)

    matrix = matrix_get(params=MatrixParams(tag="gpu", reporters=("alice",)), language="en")
    cells = {(cell.stage, cell.discipline): cell for row in matrix.heat for cell in row.cells}
    assert len(cells) == 16
    assert (cells["train", "tiny-sample"].incidents, cells["train", "tiny-sample"].happened) == (
        0,
        0,
    )
    assert cells["train", "tiny-sample"].url == (
        "/incidents/?stage=train&discipline=tiny-sample&tag=gpu&reporter=alice"
    )

    matrix = matrix_get(params=MatrixParams(), language="en")
    cells = {(cell.stage, cell.discipline): cell for row in matrix.heat for cell in row.cells}
    busiest = cells["train", "tiny-sample"]
    assert (busiest.incidents, busiest.happened, busiest.level) == (2, 4, 5)
    assert (cells["build", "version-lock"].incidents, cells["build", "version-lock"].level) == (
        1,
        0,
    )
    page = alice_client.get(MATRIX).content.decode()
    assert 'href="/incidents/?stage=train&amp;discipline=tiny-sample"' in page
    assert alice_client.get(busiest.url).status_code == 200


def test_it_condenses_each_column_and_keeps_the_remedy_command_whole(alice_client, catalog):
    gpu = Incident.objects.get(slug="gpu-oom")
    recurrence(gpu, _today())
    entry = matrix_get(params=MatrixParams(), language="en").rows[2].entries[0]
    assert (entry.slug, entry.happened) == ("gpu-oom", 1)
    assert (
        entry.remedy_command
        == "nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv"
    )
    assert entry.prevention.startswith("every time the card type changes")
    assert "\n" not in entry.symptom + entry.root_cause + entry.prevention
    page = alice_client.get(MATRIX).content.decode()
    assert (
        '<code class="m-command">nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv</code>'
        in page
    )


def test_it_speaks_the_language_of_the_ui(alice_client, catalog):
    assert "Accelerator (GPU/NPU) out of memory" in alice_client.get(MATRIX).content.decode()
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    page = alice_client.get(MATRIX).content.decode()
    assert "加速卡（GPU/NPU）显存不足" in page
    assert 'lang="zh-hans"' in page
    markdown = alice_client.get(reverse("reports:matrix-markdown")).content.decode()
    assert "加速卡（GPU/NPU）显存不足" in markdown


def test_the_exports_hold_exactly_what_the_page_shows(alice_client, catalog):
    recurrence(Incident.objects.get(slug="disk-full"), _today())
    query = {"weeks": "4", "per_stage": "3"}
    matrix = matrix_get(params=MatrixParams(weeks=4, per_stage=3), language="en")
    shown = [entry for row in matrix.rows for entry in row.entries]

    response = alice_client.get(reverse("reports:matrix-csv"), query)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="incident-matrix-')
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    matrix_rows = [row for row in rows if row["Section"] == "matrix"]
    # A cell a spreadsheet would run as a formula ("--gpu-memory…", "=…") starts with "'".
    assert [(row["Slug"], row["Title"], row["Symptom"], row["Command"]) for row in matrix_rows] == [
        (entry.slug, entry.title, entry.symptom, _spreadsheet_safe(entry.remedy_command))
        for entry in shown
    ]
    assert len([row for row in rows if row["Section"] == "heatmap"]) == 16
    data_rows = [row for row in matrix_rows if row["Stage"] == "Data"]
    assert (data_rows[0]["Slug"], data_rows[0]["Rank"], data_rows[0]["Times"]) == (
        "disk-full",
        "1",
        "1",
    )

    markdown = alice_client.get(reverse("reports:matrix-markdown"), query).content.decode()
    assert markdown.startswith("# Quick-reference matrix")
    for entry in shown:
        assert entry.title in markdown
    assert "`df -BG . ; df -i .`" in markdown
    assert markdown.count("\n| ") == len(shown) + 4 + 5  # rows, a head per stage, heat map


def _spreadsheet_safe(text):
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def test_a_spreadsheet_formula_in_a_cell_is_neutralised(alice_client):
    incident(stage="build", title='=HYPERLINK("http://evil")')
    body = alice_client.get(reverse("reports:matrix-csv")).content.decode("utf-8-sig")
    assert "'=HYPERLINK" in body


def test_a_cell_with_a_semicolon_is_quoted_for_spreadsheets_that_split_on_it(alice_client):
    incident(stage="build", title="one; two", symptom="plain", root_cause="a;b")
    body = alice_client.get(reverse("reports:matrix-csv")).content.decode("utf-8-sig")
    assert '"one; two"' in body and '"a;b"' in body and ",plain," in body


HOSTILE = {
    "title": "<script>alert(1)</script> & friends",
    "symptom": "[click me](javascript:alert(1)) <javascript:alert(2)>",
    "root_cause": '<img src=x onerror="alert(3)"> ![beacon](https://evil.example/b.png)',
    "prevention": "`<b>` &lt;i&gt; </td><td>",
}


def _markup(tokens):
    for token in tokens:
        yield token.type
        yield from _markup(token.children or ())


def _text(tokens) -> str:
    return "".join(
        token.content if token.type in ("text", "code_inline") else _text(token.children or ())
        for token in tokens
    )


def _markdown_shown(body: str) -> str:
    """What a CommonMark renderer with GitHub's tables shows, after checking that it makes no
    HTML, link or image of it."""
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    kinds = set(_markup(tokens))
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}, body
    return _text(tokens)


def test_the_markdown_export_carries_no_markup_from_what_was_typed(alice_client):
    incident(stage="build", remedy="<script>r</script> then [x](javascript:y)", **HOSTILE)
    shown = _markdown_shown(alice_client.get(reverse("reports:matrix-markdown")).content.decode())
    for typed in (*HOSTILE.values(), "<script>r</script> then [x](javascript:y)"):
        assert typed in shown

    query = {"tag": "<script>t</script>", "reporter": "[a](javascript:b)"}
    shown = _markdown_shown(
        alice_client.get(reverse("reports:matrix-markdown"), query).content.decode()
    )
    assert "Tag: <script>t</script>." in shown and "Team: [a](javascript:b)." in shown


def test_it_explains_a_bad_filter(alice_client):
    response = alice_client.get(MATRIX, {"weeks": "5", "per_stage": "0"})
    assert response.status_code == 400
    assert response.context["form"].errors.keys() == {"weeks", "per_stage"}
    assert alice_client.get(reverse("reports:matrix-csv"), {"weeks": "x"}).status_code == 400


@pytest.mark.parametrize("n", [4, 40])
def test_the_page_is_a_fixed_number_of_queries(alice_client, alice, django_assert_num_queries, n):
    today = _today()
    for i in range(n):
        made = incident(stage=("build", "data", "train", "serve")[i % 4], tags=["gpu"])
        recurrence(made, today)
        analysis(when=local(today, 9), top=made)
    alice_client.get(MATRIX)  # the first request of the day counts the window up to today
    # session, user, is the window counted up to today, the tag, the ranking (with the heat
    # map), the shown incidents' texts
    with django_assert_num_queries(6):
        response = alice_client.get(MATRIX, {"tag": "gpu"})
    assert response.status_code == 200


@pytest.mark.parametrize("n", [4, 40])
def test_the_unfiltered_page_reads_the_rollups_in_a_fixed_number_of_queries(
    alice_client, django_assert_num_queries, n
):
    today = _today()
    for i in range(n):
        made = incident(stage=("build", "data", "train", "serve")[i % 4])
        recurrence(made, today)
        analysis(when=local(today, 9), top=made)
    alice_client.get(MATRIX)  # the first request of the day counts the window up to today
    # session, user, is the window counted up to today, the ranking (with the heat map),
    # the shown incidents' texts
    with django_assert_num_queries(5):
        response = alice_client.get(MATRIX)
    assert response.status_code == 200
    assert response.context["matrix"].total_happened == 2 * n
    with django_assert_num_queries(5):  # session, user, window, ranking, texts
        assert alice_client.get(reverse("reports-api:matrix")).status_code == 200


def test_a_window_counted_days_ago_catches_up_on_the_next_request(alice):
    today = _today()
    made = incident(stage="data")
    recurrence(made, today - timedelta(days=30))
    recurrence(made, today)
    last_week = today - timedelta(days=7)
    assert [(e.slug, e.happened) for e in _row(MatrixParams(weeks=4, until=last_week))] == [
        (made.slug, 1)
    ]
    rollups_window(weeks=4, today=last_week)  # as if nobody looked since
    recurrence(made, today - timedelta(days=1))  # after the window's day: counted on the roll
    assert [(e.slug, e.happened) for e in _row(MatrixParams(weeks=4))] == [(made.slug, 2)]


def _row(params):
    return matrix_get(params=params, language="en").rows[1].entries
