"""Secrets pasted with a log never reach storage: planted samples of every kind, and the
ordinary values of ML logs (hashes, UUIDs, SHAs, paths, numbers) left alone."""

from __future__ import annotations

import json
import random
import uuid

import pytest

from incidents.logmatch import analyze, redact, report_as_dict

# (kind, line with a planted secret, the secret itself)
PLANTED = [
    ("github-token", "export GITHUB_TOKEN={}", "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"),
    ("github-token", "push with {} failed", "github_pat_11ABCDEFG0" + "x7Yz" * 15),
    ("github-token", "remote: https://{}@github.com/org/repo.git", "gho_" + "Q" * 18 + "7" * 18),
    ("gitlab-token", "CI_JOB_TOKEN {} expired", "glpat-xY3zA9bC2dE5fG8hJ1kL"),
    (
        "huggingface-token",
        "huggingface-cli login --token {}",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678",
    ),
    (
        "openai-key",
        "openai.AuthenticationError: key {} revoked",
        "sk-proj-abc123DEF456ghi789JKL012mno345",
    ),
    ("openai-key", "OPENAI_API_KEY {}", "sk-1234567890abcdefghijklmnopqrstuvwxyzABCD"),
    ("anthropic-key", "ANTHROPIC_API_KEY {}", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"),
    ("slack-token", "posting to slack with {}", "xoxb-123456789012-1234567890123-abcdefghijAB"),
    ("aws-access-key", "botocore: access key {} denied", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-secret-key", "aws_secret_access_key = {}", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("google-api-key", "GOOGLE_API_KEY {}", "AIzaSyA-1234567890abcdefghijklmnopqrstu"),
    (
        "jwt",
        "Authorization failed for {}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
    ),
    (
        "pypi-token",
        "twine upload -p {} dist/*",
        "pypi-AgEIcHlwaS5vcmcCJGE4ZjY5YjgwLTNlMmQtNDY1Yi1hYjQ2LTk2ZjFkZjE0ZjU1OQ",
    ),
    ("url-password", "git clone https://alice:{}@gitlab.example.com/x.git", "s3cr3tP4ss"),
    ("url-password", "redis.exceptions.ConnectionError: redis://:{}@redis:6379/0", "hunter2pw"),
    ("secret", "connecting with password={} user=bob", "hunter2hunter2"),
    ("secret", 'config {{"api_key": "{}"}}', "abcdef123456"),
    ("secret", "db:\n  password: {}", "Tr0ub4dor&3"[:8]),
    ("secret", "python train.py --wandb-token={}", "0f1e2d3c4b5a69788796a5b4"),
    ("secret", "HF_TOKEN={} python serve.py", "my-private-t0ken"),
    ("authorization", "curl -H 'Authorization: Bearer {}' http://api", "abcdefghijklmnop1234"),
    ("authorization", "Authorization: token {}", "0123456789abcdef0123"),
    ("bearer-token", "requests sent bearer {}", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"),
    # Forms that once passed redaction.
    ("secret", 'config {{"password": "{}", "user": "bob"}}', "correct horse battery staple"),
    ("secret", "db:\n  password: {}\n  user: bob", "hunter"),
    ("secret", "+ mysql -uroot -p{} kb_prod < dump.sql", "Sup3rSecret"),
    ("secret", "mysqldump --password={} --all-databases", "Sup3rSecret"),
    ("secret", "psql --password {} -h db", "pgSecretPw"),
    ("secret", "curl -sS -u alice:{} https://artifacts.example.com/x.tar", "s3cr3tpw"),
    ("secret", "PGPASSWORD={} psql -h db kb", "plainpassword"),
    ("secret", "GET /logs?run=7&access_token={} 200", "3f9c2a8e7d6b5a49"),
    (
        "azure-key",
        "DefaultEndpointsProtocol=https;AccountName=kbstore;AccountKey={};EndpointSuffix=core",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    ),
    (
        "stripe-key",
        "stripe.error.AuthenticationError: {} revoked",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ),
    ("url-password", "could not connect: postgres://app:{}@db.example.com:5432/kb", "p@ss#w0rd"),
    (
        "aws-secret-key",
        "uploading with {} to s3://bucket",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "private-key",
        '{{"type": "service_account", "private_key": "{}", "client_email": "x"}}',
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n",
    ),
    (
        "secret",
        '{{"type": "service_account", "private_key_id": "{}"}}',
        "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
    ),
    # Forms a hostile tester found passing.
    (
        "webhook",
        "SLACK_WEBHOOK=https://hooks.slack.com/services/{}",
        "T0A1B2C3D/B4E5F6G7H/Xy9Zw8Vu7Ts6Rq5Po4Nm3Lk2",
    ),
    (
        "webhook",
        "POST https://discord.com/api/webhooks/1234567890/{} 404",
        "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abc",
    ),
    (
        "webhook",
        "飞书告警失败 https://open.feishu.cn/open-apis/bot/v2/hook/{}",
        "2f1a3b4c-5d6e-7f80-91a2-b3c4d5e6f708",
    ),
    (
        "webhook",
        "curl https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={}",
        "693a91f6-7e2c-4bc4-97a0-0ec2c1fa5aa1",
    ),
    (
        "sendgrid-key",
        "SENDGRID_API_KEY {}",
        "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",
    ),
    (
        "telegram-token",
        "telegram.error.InvalidToken: bot{} rejected",
        "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    ),
    (
        "url-token",
        "sentry: DSN https://{}@o123456.ingest.sentry.io/42 unreachable",
        "abcdef0123456789abcdef0123456789",
    ),
    (
        "secret",
        "machine api.wandb.ai login user password {}",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc",
    ),
    ("secret", 'sshpass -p "{}" ssh gpu-node03 nvidia-smi', "N0tMyRealPa55"),
    ("secret", "wandb login {}", "0123456789abcdef0123456789abcdef01234567"),
    (
        "secret",
        '{{"auths": {{"registry.example.com": {{"auth": "{}"}}}}}}',
        "ZGVwbG95OlRyMHViNGRvci1hbmQtMw==",
    ),
    (
        "secret",
        "python -m vllm.entrypoints.openai.api_server --api-key {} --port 8000",
        "5f4dcc3b5aa765d61d8327deb882cf99",
    ),
    ("secret", "huggingface-cli login --token {}", "abCDef1234567890XYZabc"),
    ("secret", "HUAWEICLOUD_SDK_SK={} python upload.py", "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0HgFeDcBa9876"),
    ("secret", "数据库密码：{}", "Zx9!kP2#qLm8"),
    ("secret", "password：{}", "Zx9!kP2#qLm8"),
    ("cookie", "> Cookie: {}", "sessionid=8f14e45fceea167a5a36dedd4bea2543; csrftoken=abc"),
]

NOT_SECRETS = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "pulling sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "md5 d41d8cd98f00b204e9800998ecf8427e  exp/tri3/final.mdl",
    "LOG (gmm-align-compiled[5.5]:main():gmm-align-compiled.cc:127) Done 4992, errors on 8",
    "/home/user/exp/tri3/ali.1.gz: No such file or directory",
    "max_tokens=512 num_tokens: 2048 token_count: 9 max_new_tokens=128",
    "tokenizer.pad_token = None, pad_token=<pad> eos_token: </s>",
    "tokenizer.pad_token = tokenizer.eos_token  # reusing eos_token=<|endoftext|>",
    "Using pad_token, but it is not set yet.",
    "loss=2.345 lr=0.0001 grad_norm=1.25 step=1200/90000",
    "serving on http://localhost:8000/v1/chat/completions",
    "hf_hub_download(repo_id='meta-llama/Llama-2-7b')",
    "task-1234567890abcdefghijkl1 finished; disk-full check ok",
    "secret: 12345678",
    "GatedRepoError: 401 Client Error. Cannot access gated repo, make sure you are authenticated.",
    "wandb: ERROR api_key not configured (no-tty). call wandb.login(key=[your_api_key])",
    "Please provide a token: huggingface-cli login",
    "export HF_TOKEN=${HF_TOKEN} and retry",
    "显存不足，批大小 32，token 数 4096",
    "git rev-parse HEAD: 3f786850e387550fdab836ed7e6dc881de23001b",
    "mkdir -p /data/exp && ssh -p2222 gpu-node01",
    "docker run -u 1000:1000 --rm train:latest",
    "Please enter your password: ",
    # ssh's prompt, then its answer on the next line: the value of a field never crosses a line
    "bob@10.0.0.2's password: \nPermission denied, please try again.",
    "请输入密码：\nPermission denied, please try again.",
    "db:\n  password: ${DB_PASSWORD}",
    "mysqld --password-file /run/secrets/db --port 3306",
    "export TRANSFORMERS_VERBOSITY=info; pad_token: [PAD]",
    '{"pad_token": "[PAD]", "eos_token": "</s>"}',
    "loaded shard ZmFrZS1zaGFyZC1uYW1lLWZvci10ZXN0cw in 2s",
    'ERROR: password authentication failed for user "kb"',
    "---------------Inter-token Latency----------------",
    "python generate.py --max-new-tokens 512 --tokenizer meta-llama/Llama-2-7b-hf",
    "vllm serve Qwen/Qwen2-7B --api-key EMPTY --port 8000",
    "--pad-token-id 0 --secret-name kb-secrets --token-budget 4096",
    "disk=/dev/nvme0n1p1 task_mask=0xff00ff00ff00ff00ff peak=13.2GB",
    "git clone https://git@github.com/org/repo.git",
    "Set-Cookie handling disabled",
    "or HF_TOKEN=hf_xxx in the job's environment",
    "Pipeline.from_pretrained('pyannote/x', use_auth_token=YOUR_AUTH_TOKEN)",
    "export OPENAI_API_KEY=sk-xxxxxxxx; api_key: your-api-key",
    "I0517 16:54:02.218433  1615 Dictionary.cpp:55] Skipping unknown token: 'schwelten.'",
]


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("token=abc123def456，下载失败，请检查网络", "，下载失败，请检查网络"),
        (
            "HF_TOKEN=hf_a1B2c3D4e5F6（容器里用 docker run -e 传入）",
            "（容器里用 docker run -e 传入）",
        ),
        ("数据库密码：Zx9kP2qLm8。连接失败", "。连接失败"),
        ("curl -u bob:s3cretpw，返回 401", "，返回 401"),
    ],
)
def test_a_secret_ends_where_chinese_text_goes_on(line, kept):
    redacted, count = redact(line)
    assert count == 1
    assert redacted.endswith("]" + kept)


@pytest.mark.parametrize(("kind", "template", "secret"), PLANTED, ids=[p[0] for p in PLANTED])
def test_it_redacts_each_kind_of_secret(kind, template, secret):
    text = template.format(secret)

    redacted, count = redact(text)

    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert count == 1


@pytest.mark.parametrize("line", NOT_SECRETS)
def test_it_leaves_ordinary_log_values_alone(line):
    assert redact(line) == (line, 0)


def test_it_keeps_the_user_and_host_of_a_url():
    redacted, _ = redact("fatal: https://alice:p4ssw0rd@git.example.com/repo.git not found")

    assert redacted == (
        "fatal: https://alice:[REDACTED:url-password]@git.example.com/repo.git not found"
    )


def test_it_redacts_a_private_key_block_line_by_line():
    key = "\n".join(["MIIEowIBAAKCAQEA7bq1" + "A" * 44] * 5)
    text = f"loading key\n-----BEGIN RSA PRIVATE KEY-----\n{key}\n-----END RSA PRIVATE KEY-----\nok"

    redacted, count = redact(text)

    assert count == 1
    assert "MIIEow" not in redacted
    assert redacted.count("\n") == text.count("\n")
    assert redacted.splitlines()[-1] == "ok"


def test_it_redacts_a_private_key_cut_off_by_the_tail():
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nTraceback (most"

    redacted, count = redact(text)

    assert count == 1
    assert "b3BlbnNz" not in redacted
    assert redacted.splitlines()[-1] == "Traceback (most"


def test_it_redacts_a_megabyte_of_log_quickly():
    rng = random.Random(3)
    lines = [
        f"[2024-05-01 12:00:{rng.randint(0, 59):02d}] INFO rank{rng.randint(0, 7)} step "
        f"{rng.randint(0, 99999)} loss={rng.random():.4f} ckpt {uuid.uuid4().hex}{uuid.uuid4().hex[:8]} "
        f"id={uuid.uuid4()} token=abc 显存 {rng.randint(1, 80)}GiB max_tokens=2048"
        for _ in range(7000)
    ]
    lines[100] += " password=hunter2hunter2"
    text = "\n".join(lines)

    _, count = redact(text)

    assert count == 1


def test_analysis_never_shows_a_planted_secret(small_index):
    token = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678"
    log = f"downloading with token {token}\nRuntimeError: CUDA out of memory ({token})"

    report = analyze(log, small_index)

    assert report.redactions == 2
    assert token not in json.dumps(report_as_dict(report), ensure_ascii=False)


def test_a_private_key_whose_lines_carry_a_log_prefix_is_redacted_with_its_lines():
    body = ["MIIEowIBAAKCAQEA7bq1" + "A" * 44, "x7Yz" * 16, "ab12" * 10 + "=="]
    prefix = "2026-11-30 10:00:00 INFO deploy: "
    text = "\n".join(
        [f"{prefix}-----BEGIN RSA PRIVATE KEY-----"]
        + [prefix + line for line in body]
        + [f"{prefix}-----END RSA PRIVATE KEY-----", f"{prefix}done"]
    )

    redacted, count = redact(text)

    assert count == 1
    assert not any(line in redacted for line in body)
    assert redacted.count("\n") == text.count("\n")
    assert redacted.splitlines()[1] == prefix + "[REDACTED:private-key]"
    assert redacted.splitlines()[-1] == f"{prefix}done"


def test_addresses_are_redacted_when_asked():
    line = (
        "job by ana@example.com on 10.3.1.4 and 192.168.0.12 via db-01.corp "
        "(public 8.8.8.8, localhost 127.0.0.1, version 10.3.1)"
    )
    redacted, count = redact(line, addresses=True)
    assert count == 4
    for gone in ("ana@example.com", "10.3.1.4", "192.168.0.12", "db-01.corp"):
        assert gone not in redacted
    assert "8.8.8.8" in redacted and "127.0.0.1" in redacted and "version 10.3.1)" in redacted
    assert redact(line) == (line, 0)  # not unless asked


@pytest.mark.parametrize(
    "shape",
    ["sk-" * 30000, "a" * 90000, "password=" * 10000, "://" + "a:" * 30000 + "@", "-p" * 40000],
)
def test_hostile_shapes_are_read_in_one_pass(shape):
    """Every rule is RE2: no shape makes the work grow faster than the text (the budget for
    such shapes is held in bench/bench_hostile.py)."""
    redacted, _ = redact(shape + "\nmysql -pS3cretPass")
    assert redacted.endswith("[REDACTED:secret]")
