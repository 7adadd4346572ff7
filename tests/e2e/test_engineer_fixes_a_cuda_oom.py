"""An engineer pastes a CUDA out-of-memory tail, watches it run, copies the remedy, confirms
it fixed the job, and finds the recurrence on the incident page."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WORKER_TIMEOUT_MS

pytestmark = pytest.mark.django_db(transaction=True)

# The end of a real-looking DDP training log that died in backward().
CUDA_OOM_TAIL = """\
2026-11-30 14:02:11,508 INFO [trainer.py:388] epoch 3 step 14200 loss=1.8734 lr=2.4e-04 tokens/s=51234
2026-11-30 14:02:19,102 INFO [trainer.py:388] epoch 3 step 14210 loss=1.8691 lr=2.4e-04 tokens/s=50987
2026-11-30 14:02:24,877 WARNING [dataloader.py:97] batch 14213 has 8192 tokens, above the 6144 bucket; padding to 8192
[rank3]: Traceback (most recent call last):
[rank3]:   File "/opt/llm/train.py", line 412, in <module>
[rank3]:     main()
[rank3]:   File "/opt/llm/train.py", line 398, in main
[rank3]:     trainer.fit(model, loader)
[rank3]:   File "/opt/llm/trainer.py", line 251, in fit
[rank3]:     loss.backward()
[rank3]:   File "/usr/local/lib/python3.11/site-packages/torch/_tensor.py", line 626, in backward
[rank3]:     torch.autograd.backward(
[rank3]:   File "/usr/local/lib/python3.11/site-packages/torch/autograd/graph.py", line 823, in _engine_run_backward
[rank3]:     return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass
[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in use. Of the allocated memory 74.02 GiB is allocated by PyTorch, and 2.41 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
W1130 14:02:26.114000 140213 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 20417 closing signal SIGTERM
E1130 14:02:27.301000 140213 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 3 (pid: 20420) of binary: /usr/bin/python3
"""

# Every status the result box shows, recorded in the page as htmx swaps it in place.
WATCH_STATUS = """() => {
  window.kbSameDocument = true;
  window.kbStatuses = [document.querySelector("#analysis-result").dataset.status];
  document.body.addEventListener("htmx:afterSettle", () => {
    const box = document.querySelector("#analysis-result");
    if (box) window.kbStatuses.push(box.dataset.status);
  });
}"""

# The vertical space between consecutive lines of a <pre> of log lines, in pixels.
LINE_GAPS = """pre => {
  const boxes = [...pre.querySelectorAll(".ln")].map((line) => line.getBoundingClientRect());
  return boxes.slice(1).map((box, i) => Math.round(box.top - boxes[i].bottom));
}"""


def test_an_engineer_pastes_a_cuda_oom_and_confirms_the_remedy(visit, analyses, catalog, alice):
    page = visit.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=visit.base_url)
    visit.go("/analyses/new/")
    visit.sign_in("alice")  # the login form sends her on to the page she asked for
    expect(page.locator("h1")).to_have_text("Paste a log tail, get remedies")

    page.locator("#id_log").fill(CUDA_OOM_TAIL)
    page.locator("#id_log_path").fill("exp/llm-7b/log/train.3.log")
    page.get_by_role("button", name="Analyze", exact=True).click()

    # No worker yet: the tail waits in the queue and the page says so.
    expect(page.locator("#analysis-result [role=status]")).to_contain_text("Queued")
    analysis_url = page.url
    analysis_pk = re.search(r"/analyses/(\d+)/$", analysis_url)[1]
    page.evaluate(WATCH_STATUS)
    analyses.start()

    top = page.locator("article.suggestion").first
    expect(top).to_have_id("suggestion-gpu-oom", timeout=WORKER_TIMEOUT_MS)
    expect(page.locator("#analysis-result")).to_have_attribute("data-status", "done")
    # The result replaced the progress box in place: same document, swapped by htmx polling.
    assert page.url == analysis_url
    assert page.evaluate("window.kbSameDocument") is True, "the page reloaded"
    # htmx settles the swapped box a moment after the swap the expectation above saw.
    page.wait_for_function("window.kbStatuses.at(-1) === 'done'", timeout=WORKER_TIMEOUT_MS)
    statuses = page.evaluate("window.kbStatuses")
    assert statuses[0] == "queued" and statuses[-1] == "done", statuses
    expect(page.get_by_role("heading", name="Suggested remedies")).to_be_visible()
    # A keyboard or screen-reader user is told, and lands on the result.
    expect(page.locator("#analysis-announce")).to_have_text("Analysis finished: a confident match.")
    expect(page.locator("#analysis-result")).to_be_focused()
    expect(top.locator(".badge.ok")).to_have_text("confident")
    expect(top.locator(".ln.hit").first).to_contain_text("out of memory")
    expect(top.locator(".ln.hit").first).to_be_visible()
    # The evidence reads as consecutive log lines, not double-spaced.
    gaps = top.locator("pre.context").first.evaluate(LINE_GAPS)
    assert gaps and set(gaps) == {0}, gaps

    copy = top.get_by_role("button", name="Copy")
    copy.click()
    expect(top.locator("button.copy")).to_have_text("Copied")
    remedy = top.locator("#remedy-gpu-oom").inner_text()
    assert remedy.strip()
    assert page.evaluate("navigator.clipboard.readText()") == remedy

    top.get_by_role("button", name="This fixed it").click()
    expect(page.locator(".messages")).to_contain_text("Recorded as a recurrence of")
    expect(page.locator("#suggestion-gpu-oom")).to_contain_text("You confirmed this fixed it")

    page.locator("#suggestion-gpu-oom a.title").click()
    expect(page).to_have_url(re.compile(r"/incidents/gpu-oom/$"))
    recurrences = page.locator("#recurrences li")
    expect(recurrences.first).to_contain_text(f"Confirmed by analysis #{analysis_pk}")
    expect(recurrences.first).to_contain_text("alice")
    page.locator("section.facts").evaluate("box => box.scrollIntoView({block: 'start'})")
    visit.finish("engineer-fixes-a-cuda-oom")
