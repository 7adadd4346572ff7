"""Secrets in a pasted log never reach the database, the pages, the API, the gaps, the weekly
report or its e-mail: each form of secret is redacted before storage."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from incidents import services
from incidents.models import Analysis, KnowledgeGap
from tests.security.conftest import api_client_for

pytestmark = pytest.mark.django_db

PAGE = reverse("incidents:analysis-new")
API = reverse("incidents-api:analysis-list")


@pytest.fixture
def api(alice):
    return api_client_for(alice)


def _run_last() -> Analysis:
    analysis = Analysis.objects.order_by("-pk").first()
    services.analysis_run(analysis_id=analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE, analysis.error
    return analysis


# --- secrets -------------------------------------------------------------------------------

SECRETS = {
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "huggingface": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "aws-access": "AKIA" + "IOSFODNN7EXAMPLE",
    "aws-secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "openai": "sk-proj-" + "abc123DEF456ghi789JKL012mno345PQR678",
    "url-password": "hunter2-Secret",
    "pem-body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    "prefixed-pem": "MIIEowIBAAKCAQEA7bq1PrefixedKeyMaterial0123456789abcd",
    "gcp-key": "MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQDgcp",
    "json-password": "correct horse battery staple",
    "yaml-password": "tr0ubadour",
    "mysql": "MySq1Secret",
    "psql": "PgS3cretWord",
    "curl": "CurlS3cret",
    "azure": "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "url-at-hash": "p@ss#w0rd",
    "bare-aws-secret": "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d",
    "path-password": "PathPassw0rd",
    "path-token": "3f9c2a8e7d6b5a49",
    "email": "ana.lopez@example.com",
    "internal-ip": "10.23.4.56",
    "internal-host": "gpu-db-01.corp",
}
SECRET_TAIL = "\n".join(
    [
        "step 1 loss 2.0",
        f"git clone https://{SECRETS['github']}@github.com/org/repo.git",
        f"export HF_TOKEN={SECRETS['huggingface']}",
        f"AWS_ACCESS_KEY_ID={SECRETS['aws-access']}",
        f"aws_secret_access_key = {SECRETS['aws-secret']}",
        f"openai.api_key = '{SECRETS['openai']}'",
        f"connecting to postgres://trainer:{SECRETS['url-password']}@db:5432/runs",
        "-----BEGIN PRIVATE KEY-----",
        SECRETS["pem-body"],
        "9y8x7w6v5u4t3s2r1q0p",
        "-----END PRIVATE KEY-----",
        "2026-11-30 10:00:00 INFO deploy: -----BEGIN RSA PRIVATE KEY-----",
        f"2026-11-30 10:00:00 INFO deploy: {SECRETS['prefixed-pem']}",
        "2026-11-30 10:00:00 INFO deploy: -----END RSA PRIVATE KEY-----",
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + SECRETS["gcp-key"]
        + '\\n-----END PRIVATE KEY-----\\n", "client_id": "1"}',
        f'settings {{"password": "{SECRETS["json-password"]}", "user": "kb"}}',
        f"  password: {SECRETS['yaml-password']}",
        f"+ mysql -ukb -p{SECRETS['mysql']} kb_prod",
        f"+ psql --password {SECRETS['psql']} -h db kb",
        f"+ curl -fsS -u ana:{SECRETS['curl']} https://artifacts.example.com/a.tgz",
        f"BlobEndpoint=https://kb.blob.core.windows.net/;AccountKey={SECRETS['azure']};",
        f"stripe.error.AuthenticationError: No such key {SECRETS['stripe']}",
        f"psycopg.OperationalError: postgres://kb:{SECRETS['url-at-hash']}@db:5432/kb failed",
        f"boto3 session with {SECRETS['bare-aws-secret']} for s3://runs",
        f"report to {SECRETS['email']} from {SECRETS['internal-ip']} ({SECRETS['internal-host']})",
        f"RuntimeError: upload failed with token {SECRETS['huggingface']}",
    ]
)
SECRET_PATH = (
    f"https://ana:{SECRETS['path-password']}@logs.example.com/run/7.log"
    f"?access_token={SECRETS['path-token']}"
)


def _assert_no_secret(*texts: str):
    for text in texts:
        for kind, secret in SECRETS.items():
            assert secret not in text, f"{kind} secret stored"


@pytest.mark.parametrize("via", ["page", "file", "api", "api-file"])
def test_secrets_are_redacted_before_storage(alice_client, api, via):
    path = {"log_path": SECRET_PATH}
    if via == "page":
        response = alice_client.post(PAGE, {"log": SECRET_TAIL, **path})
    elif via == "file":
        upload = SimpleUploadedFile("secrets.log", SECRET_TAIL.encode())
        response = alice_client.post(PAGE, {"file": upload, **path})
    elif via == "api":
        response = api.post(API, {"log": SECRET_TAIL, **path}, format="json")
    else:
        upload = SimpleUploadedFile("secrets.log", SECRET_TAIL.encode())
        response = api.post(API, {"file": upload, **path}, format="multipart")
    assert response.status_code in (202, 302)
    stored = Analysis.objects.get()
    _assert_no_secret(stored.text, stored.log_path)
    assert stored.log_path.startswith("https://ana:[REDACTED:url-password]@logs.example.com/")
    assert stored.redactions >= len(SECRETS)
    assert "[REDACTED:" in stored.text
    assert len(stored.text.splitlines()) == len(SECRET_TAIL.splitlines())
    analysis = _run_last()
    _assert_no_secret(json.dumps(analysis.report), analysis.key_template)
    _assert_no_secret(*KnowledgeGap.objects.values_list("example_line", flat=True))
    page = alice_client.get(analysis.get_absolute_url())
    _assert_no_secret(page.content.decode())
    body = api.get(reverse("incidents-api:analysis-detail", args=[analysis.pk])).content
    _assert_no_secret(body.decode())
    listed = api.get(reverse("incidents-api:analysis-list")).content
    _assert_no_secret(listed.decode())
    _assert_no_secret(alice_client.get(reverse("incidents:gap-list")).content.decode())
    _assert_no_secret(api.get(reverse("incidents-api:gap-list")).content.decode())


def test_no_secret_reaches_the_weekly_report_or_its_email(alice, lena, api, mailoutbox):
    from common.weeks import week_current
    from reports.services import report_week_build, report_week_mail

    api.post(API, {"log": SECRET_TAIL, "log_path": SECRET_PATH}, format="json")
    _run_last()
    lena.email = "lena@example.com"
    lena.save()
    report = report_week_build(week_start=week_current())
    _assert_no_secret(json.dumps(report.data))
    report_week_mail(report=report, force=True)
    for message in mailoutbox:
        _assert_no_secret(message.body, *(body for body, _ in message.alternatives))


def test_addresses_are_kept_when_the_team_says_so(alice_client, settings):
    settings.REDACT_ADDRESSES = False
    alice_client.post(PAGE, {"log": SECRET_TAIL})
    stored = Analysis.objects.get().text
    assert SECRETS["email"] in stored and SECRETS["internal-ip"] in stored
    assert SECRETS["yaml-password"] not in stored  # secrets go whatever the setting
