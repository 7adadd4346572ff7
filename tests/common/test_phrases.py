"""The engine's sentences read as English and carry what a translator needs."""

from common.phrases import Phrase
from incidents import logmatch

GPU_OOM = logmatch.IncidentSpec(
    slug="gpu-oom", title="GPU out of memory", stage="train", symptom="allocator gave up"
)
OOM_LINE = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."


def test_a_phrase_is_its_english_sentence_and_remembers_how_it_was_made():
    where = Phrase("%(level)s line %(line)s", level="ERROR", line="7")
    said = Phrase(
        "%(found)s; no other incident.", sentence=True, found=Phrase("saw %(w)s", w=where)
    )
    assert said == "Saw ERROR line 7; no other incident."
    assert said.as_dict() == {
        "message": "%(found)s; no other incident.",
        "params": {
            "found": {
                "message": "saw %(w)s",
                "params": {
                    "w": {
                        "message": "%(level)s line %(line)s",
                        "params": {"level": "ERROR", "line": "7"},
                        "sentence": False,
                    }
                },
                "sentence": False,
            }
        },
        "sentence": True,
    }


def test_a_message_without_values_keeps_its_percent_signs():
    assert Phrase("100% of lines") == "100% of lines"


def test_the_report_carries_each_sentence_also_as_a_phrase():
    index = logmatch.build_index(
        [GPU_OOM], [logmatch.SignatureSpec("1", "gpu-oom", r"CUDA out of memory")]
    )
    report = logmatch.analyze(
        f"step 10 loss=2.1\n{OOM_LINE}\n", index, log_path="exp/a/log/train.1.log"
    )
    data = logmatch.report_as_dict(report)
    top = data["suggestions"][0]
    assert top["why"].startswith("Signature 1 matched ERROR line 2")
    assert top["why_phrase"]["params"]["found"]["params"]["signature"] == "1"
    assert data["stage_reason"] == str(report.stage_reason)
    assert data["stage_phrase"]["message"] == "log path %(path)s: %(what)s"


def test_refused_input_says_why_in_a_phrase():
    error = logmatch.InputTooLarge(3_000_000, 2_097_152)
    assert str(error) == (
        "The log is 3,000,000 bytes; the limit is 2,097,152 bytes. Paste the last lines only."
    )
    assert isinstance(error.args[0], Phrase)
