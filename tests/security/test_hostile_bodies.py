"""Hostile bodies at the log form and the API: each gets a clear 4xx in words or is accepted
and analysed; none gets a 500 (secrets: test_hostile_secrets.py)."""

from __future__ import annotations

import gzip
import json

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.html import escape

from incidents import services
from incidents.models import Analysis
from tests.security.conftest import UNEXPLAINED_TAIL, api_client_for

pytestmark = pytest.mark.django_db

PAGE = reverse("incidents:analysis-new")
API = reverse("incidents-api:analysis-list")
TOO_LARGE = "the limit is"
ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 64
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(2000)
GZIP = gzip.compress(UNEXPLAINED_TAIL.encode() * 100)


@pytest.fixture
def api(alice):
    return api_client_for(alice)


def _page_error(response) -> str:
    """The message a person sees on the form page (the first error block)."""
    html = response.content.decode()
    start = html.index('class="errors"')
    return html[start : start + 600]


def _run_last() -> Analysis:
    analysis = Analysis.objects.order_by("-pk").first()
    services.analysis_run(analysis_id=analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE, analysis.error
    return analysis


# --- too large -----------------------------------------------------------------------------


def _long_log(lines: int) -> bytes:
    return (
        b"".join(b"INFO step %08d of the long run\n" % n for n in range(lines)) + b"ERROR: the end"
    )


def test_of_a_paste_over_the_analysis_cap_the_last_lines_are_kept_with_a_note(alice_client):
    log = _long_log(settings.ANALYSIS_MAX_BYTES // 30 + 1000).decode()
    assert settings.ANALYSIS_MAX_BYTES < len(log) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = alice_client.post(PAGE, {"log": log})
    assert response.status_code == 302
    analysis = _run_last()
    assert analysis.text.endswith("ERROR: the end")
    assert analysis.text.startswith("INFO step ")  # whole lines: the cut one is dropped
    assert (analysis.size_bytes, analysis.analysed_bytes) == (
        len(log),
        len(analysis.text.encode()),
    )
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "Only the last 2.0" in page and "were analysed" in page


@pytest.mark.parametrize("megabytes", [3, 40])
def test_of_a_file_over_the_cap_its_tail_is_read_and_analysed(alice_client, megabytes):
    data = _long_log(megabytes * 1024 * 1024 // 30)
    response = alice_client.post(PAGE, {"file": SimpleUploadedFile("train.log", data)})
    assert response.status_code == 302
    analysis = _run_last()
    assert analysis.size_bytes == len(data)
    assert analysis.analysed_bytes <= settings.ANALYSIS_MAX_BYTES
    assert analysis.text.endswith("ERROR: the end")


def test_a_paste_and_a_file_together_are_refused_in_words(alice_client, api):
    body = {"log": "ERROR one", "file": SimpleUploadedFile("two.log", b"ERROR two")}
    response = alice_client.post(PAGE, body)
    assert response.status_code == 400
    assert "not both" in _page_error(response)
    body = {"log": "ERROR one", "file": SimpleUploadedFile("two.log", b"ERROR two")}
    response = api.post(API, body, format="multipart")
    assert response.status_code == 400
    assert "not both" in response.json()["error"]["fields"]["log"][0]
    assert not Analysis.objects.exists()


def test_the_first_lines_indentation_is_kept_as_pasted(alice_client):
    alice_client.post(PAGE, {"log": "    at Foo.bar(Foo.java:42)\nERROR boom"})
    assert Analysis.objects.get().text == "    at Foo.bar(Foo.java:42)\nERROR boom"


@pytest.mark.parametrize("kind", ["paste", "file"])
def test_a_body_over_the_request_cap_gets_413_in_words(alice_client, kind, settings):
    settings.ANALYSIS_MAX_UPLOAD_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    big = "y" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)
    body = {"log": big} if kind == "paste" else {"file": SimpleUploadedFile("a.log", big.encode())}
    response = alice_client.post(PAGE, body)
    assert response.status_code == 413
    assert TOO_LARGE in response.content.decode()
    assert "Paste or upload the last lines of the log only." in response.content.decode()
    assert 'class="topbar' in response.content.decode()  # a page of the site, not a bare error


def test_the_api_refuses_an_oversized_json_body_before_reading_it(api):
    big = json.dumps({"log": "z" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)})
    response = api.post(API, big, content_type="application/json")
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "too_large" and TOO_LARGE in error["message"]


def test_the_api_keeps_the_tail_of_a_log_over_the_analysis_cap(api):
    log = _long_log(settings.ANALYSIS_MAX_BYTES // 30 + 1000).decode()
    for body, kind in (
        ({"log": log}, "json"),
        ({"file": SimpleUploadedFile("b.log", log.encode())}, "multipart"),
    ):
        response = api.post(API, body, format=kind)
        assert response.status_code == 202
        assert response.json()["size_bytes"] == len(log)


def test_a_single_5_mb_line_keeps_its_end_at_the_default_cap(alice_client, api):
    line = b"E" * (5 * 1024 * 1024)
    page = alice_client.post(PAGE, {"file": SimpleUploadedFile("one.log", line)})
    assert page.status_code == 302
    analysis = _run_last()
    assert analysis.cut_lines == 1 and len(analysis.text) == 4096
    assert api.post(API, {"log": line.decode()}, format="json").status_code == 413


def test_a_single_5_mb_line_is_analysed_when_the_cap_allows_it(alice_client, settings):
    settings.ANALYSIS_MAX_BYTES = 6 * 1024 * 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 7 * 1024 * 1024
    line = b"RuntimeError: " + b"E" * (5 * 1024 * 1024) + b"\n"
    response = alice_client.post(PAGE, {"file": SimpleUploadedFile("one.log", line)})
    assert response.status_code == 302
    analysis = _run_last()
    assert analysis.report["line_count"] == 1
    assert len(analysis.text) < len(line)  # cut to the line cap before storage
    assert alice_client.get(analysis.get_absolute_url()).status_code == 200


def test_100k_copies_of_one_warning_are_grouped_into_one_flood(alice_client):
    line = "[WARNING] slow step\n"
    log = line * 100_000
    assert len(log) <= settings.ANALYSIS_MAX_BYTES
    response = alice_client.post(PAGE, {"file": SimpleUploadedFile("flood.log", log.encode())})
    assert response.status_code == 302
    analysis = _run_last()
    groups = [g for g in analysis.report["groups"] if g["count"] == 100_000]
    assert len(groups) == 1 and groups[0]["flood"], analysis.report["groups"][:3]
    page = alice_client.get(analysis.get_absolute_url())
    assert page.status_code == 200
    assert len(page.content) < 500_000  # a count in a table, not 100k rows


# --- not text ------------------------------------------------------------------------------


@pytest.mark.parametrize("blob", [ELF, PNG, GZIP], ids=["elf", "png", "gzip"])
def test_a_binary_upload_is_refused_in_words(alice_client, api, blob):
    page = alice_client.post(PAGE, {"file": SimpleUploadedFile("x.log", blob)})
    assert page.status_code == 400
    assert "binary" in _page_error(page).lower()
    response = api.post(API, {"file": SimpleUploadedFile("x.log", blob)}, format="multipart")
    assert response.status_code == 400
    assert "binary" in response.json()["error"]["fields"]["log"][0].lower()
    assert not Analysis.objects.exists()


def test_binary_bytes_pasted_as_text_are_refused_not_stored(api):
    response = api.post(API, {"log": ELF.decode("latin-1").replace("\x00", "")}, format="json")
    assert response.status_code == 400
    assert not Analysis.objects.exists()


def test_non_utf8_bytes_are_read_with_replacements(alice_client):
    data = b"step 1\nRuntimeError: caf\xe9 \xff\xfe broke on rank 3\n"
    response = alice_client.post(PAGE, {"file": SimpleUploadedFile("latin1.log", data)})
    assert response.status_code == 302
    analysis = _run_last()
    assert "caf\ufffd" in analysis.text


def test_the_page_says_what_was_cut_or_replaced(alice_client):
    data = b"x" * 5000 + b"\nRuntimeError: caf\xe9 \xff broke\nstep 2\n"
    alice_client.post(PAGE, {"file": SimpleUploadedFile("mixed.log", data)})
    analysis = _run_last()
    assert (analysis.cut_lines, analysis.invalid_bytes) == (1, 2)
    page = alice_client.get(analysis.get_absolute_url()).content.decode()
    assert "1 line longer than 4,096 characters was cut to that length." in page
    assert "2 byte sequences that were not text were replaced by" in page


def test_non_utf8_form_fields_do_not_fail(alice_client):
    body = b"log=RuntimeError%3A+caf%E9+%FF&log_path=exp%2F%FF.log"
    response = alice_client.post(PAGE, body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 302
    assert Analysis.objects.get().log_path.startswith("exp/")


def test_nul_bytes_in_a_pasted_field_are_refused_in_words(alice_client, api):
    page = alice_client.post(PAGE, {"log": "RuntimeError\x00: boom"})
    assert page.status_code == 400
    assert escape("Null characters are not allowed.") in page.content.decode()
    response = api.post(API, {"log": "RuntimeError\x00: boom"}, format="json")
    assert response.status_code == 400
    assert "Null characters" in response.json()["error"]["fields"]["log"][0]


def test_a_few_nul_bytes_in_an_uploaded_file_are_dropped(alice_client):
    data = b"step 1\nRuntimeError\x00: boom\x00 on rank 3\n" + UNEXPLAINED_TAIL.encode()
    response = alice_client.post(PAGE, {"file": SimpleUploadedFile("nul.log", data)})
    assert response.status_code == 302
    assert "\x00" not in _run_last().text


@pytest.mark.parametrize(
    "query",
    ["q=%00", "tag=%00", "stage=%00", "reporter=%00", "page=%00", "ordering=%00"],
)
def test_nul_bytes_in_query_strings_never_reach_the_database(alice_client, api, query):
    """PostgreSQL refuses NUL in a string: a filter must stop it first, not fail with 500."""
    assert alice_client.get(reverse("incidents:incident-list") + "?" + query).status_code < 500
    assert alice_client.get(reverse("reports:matrix") + "?" + query).status_code < 500
    for name in ("incident-list", "signature-list", "recurrence-list", "analysis-list"):
        url = reverse(f"incidents-api:{name}") + "?" + query
        assert api.get(url).status_code < 500, url


def test_nul_bytes_in_other_text_inputs_never_fail(alice_client, lena_client, api, world):
    htmx = {"HTTP_HX_REQUEST": "true"}
    similar = reverse("incidents:incident-similar") + "?symptom=CUDA%00out+of+memory"
    assert alice_client.get(similar, **htmx).status_code == 200
    tried = lena_client.post(
        reverse("incidents:signature-try"), {"pattern": "a\x00b", "sample": "a\x00b"}, **htmx
    )
    assert tried.status_code == 200
    for path in ("/incidents/new/", "/analyses/new/"):
        assert alice_client.post(path, {"title": "\x00", "log_path": "\x00"}).status_code == 400
    for path in ("/api/v1/incidents/a%00b/", "/api/v1/runbooks/a%00b/", "/api/v1/analyses/%00/"):
        response = api.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"]["status"] == 404
    assert alice_client.get("/incidents/a%00b/").status_code == 404
    patch = api.patch(
        reverse("incidents-api:incident-detail", args=[world.incident.slug]),
        {"title": "a\x00b"},
        format="json",
    )
    assert patch.status_code == 400


# --- malformed -----------------------------------------------------------------------------


def test_malformed_multipart_gets_a_clear_400(alice_client, api):
    body = b'--XYZ\r\nContent-Disposition: form-data; name="log"\r\n\r\nhello'  # no end
    page = alice_client.post(PAGE, body, content_type="multipart/form-data; boundary=XYZ")
    assert page.status_code in (302, 400)  # read leniently up to where it stops, or refused
    broken = alice_client.post(PAGE, body, content_type="multipart/form-data")  # no boundary
    assert broken.status_code == 400
    assert "could not be read" in broken.content.decode()
    response = api.post(API, body, content_type="multipart/form-data")
    assert response.status_code == 400
    assert response.json()["error"]["status"] == 400


@pytest.mark.parametrize(
    "body",
    ['{"log": "unterminated', "[1, 2, 3]", '"just a string"', "{", "null", '{"log": [1]}'],
)
def test_malformed_json_gets_the_error_body(api, body):
    response = api.post(API, body, content_type="application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["status"] == 400 and error["message"]


def test_json_that_is_not_utf8_gets_the_error_body(api):
    response = api.post(API, b'{"log": "caf\xe9"}', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["message"]


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/xml", "application/octet-stream", "image/png"]
)
def test_a_wrong_content_type_gets_415_with_the_error_body(api, content_type):
    response = api.post(API, UNEXPLAINED_TAIL, content_type=content_type)
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_json_posted_to_the_form_page_asks_for_a_log(alice_client):
    body = json.dumps({"log": UNEXPLAINED_TAIL})
    response = alice_client.post(PAGE, body, content_type="application/json")
    assert response.status_code == 400
    assert "Paste a log tail or choose a file." in _page_error(response)


def test_an_empty_body_asks_for_a_log(alice_client, api):
    assert alice_client.post(PAGE, {}).status_code == 400
    assert alice_client.post(PAGE, {"log": " \n\t "}).status_code == 400
    response = api.post(API, {}, format="json")
    assert response.status_code == 400
    assert "log" in response.json()["error"]["fields"]


def test_a_forged_host_gets_a_clear_400(alice_client):
    response = alice_client.get(PAGE, HTTP_HOST="evil.example.com")
    assert response.status_code == 400
    assert "could not be read" in response.content.decode()
