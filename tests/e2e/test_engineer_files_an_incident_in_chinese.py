"""An engineer switches the UI to Chinese, files an incident for an error the book has never
seen, and the next tail with that error (other numbers) gets it suggested first.

The Chinese catalog is still being written: text is checked through `zh()` (whatever the
catalog says today), the rest through the page's structure and ids.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WORKER_TIMEOUT_MS, zh

pytestmark = pytest.mark.django_db(transaction=True)

SYMPTOM = "FooRuntimeError: shard manifest 0007 lost 3 of 12 replicas"
SLUG = "shard-manifest-replicas-lost"
TITLE = "分片清单丢失副本 (shard manifest lost replicas)"
NEW_TAIL = """\
2026-11-30 21:40:02,113 INFO [prepare_shards.py:54] opening manifest s3://corpus/asr-zh/v12/manifest-0019.json
2026-11-30 21:40:02,871 INFO [prepare_shards.py:61] 16 replicas expected across 4 racks
2026-11-30 21:40:09,402 WARNING [replica.py:140] replica 7 on rack-c timed out after 5.0 s, retrying
Traceback (most recent call last):
  File "/opt/pipe/prepare_shards.py", line 88, in load_manifest
    shards.verify(manifest, min_replicas=12)
  File "/opt/pipe/shards.py", line 203, in verify
    raise FooRuntimeError(msg)
FooRuntimeError: shard manifest 0019 lost 5 of 16 replicas
"""


def test_an_engineer_files_an_incident_in_chinese_and_it_matches_next_time(
    visit, analyses, catalog, bob
):
    analyses.start()  # warms up while bob types
    page = visit.page
    visit.sign_in("bob")

    page.locator(".usernav").get_by_role("button", name="简体中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.locator('.usernav button[value="zh-hans"]')).to_have_class(
        re.compile(r"\bcurrent\b")
    )
    expect(page.locator(".mainnav")).to_contain_text(zh("Analyze a log"))

    page.locator('.pagehead a[href="/incidents/new/"]').click()
    expect(page.locator("h1")).to_have_text(zh("File an incident"))
    page.locator("#id_title").fill(TITLE)
    page.locator("#id_symptom").fill(SYMPTOM)
    page.locator("#id_root_cause").fill("对象存储机架 rack-c 下线，清单校验时三分之一副本不可达。")
    page.locator("#id_remedy").fill(
        "python -m pipe.shards rebuild --manifest manifest-0007.json --from-rack rack-a"
    )
    page.locator("#id_discipline").select_option("reconcile")
    page.locator("#id_prevention").fill("每次准备数据前核对副本数，少于 12 份即停止。")
    page.locator("#id_stage").select_option("data")
    page.locator("#id_severity").select_option("high")
    page.locator("#id_tags").fill("storage, 分片")
    page.locator("#id_slug").fill(SLUG)
    page.locator("form.incident-form button[type=submit]").click()

    expect(page).to_have_url(re.compile(rf"/incidents/{SLUG}/$"))
    expect(page.locator(".messages")).to_contain_text(
        zh("Incident filed. It is matchable from now on.")
    )
    expect(page.locator("h1")).to_have_text(TITLE)
    expect(page.locator("#symptom")).to_have_text(SYMPTOM)
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")

    page.locator('.mainnav a[href="/analyses/new/"]').click()
    expect(page.locator("h1")).to_have_text(zh("Paste a log tail, get remedies"))
    page.locator("#id_log").fill(NEW_TAIL)
    page.locator("#id_log_path").fill("data/asr-zh/log/prepare_shards.1.log")
    page.locator("form.analyze-form button[type=submit]").click()

    top = page.locator("article.suggestion").first
    expect(top).to_have_id(f"suggestion-{SLUG}", timeout=WORKER_TIMEOUT_MS)
    expect(top.locator("a.title")).to_have_text(TITLE)
    expect(top.locator(".ln.hit").first).to_contain_text(
        "shard manifest 0019 lost 5 of 16 replicas"
    )
    expect(page.locator("#analysis-result h2").first).to_have_text(zh("Suggested remedies"))
    expect(top.locator('button[name="verdict"][value="fixed"]')).to_have_text(zh("This fixed it"))
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    visit.finish("engineer-files-an-incident-in-chinese")
