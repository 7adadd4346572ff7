"""The shipped runbooks: complete in both languages, consistent, and loadable without Django."""

from __future__ import annotations

import dataclasses
import re
import tomllib

import pytest

from runbooks.catalog import (
    CALCULATORS,
    DISCIPLINES,
    KINDS,
    LANGUAGES,
    RUNBOOKS_PATH,
    STAGES,
    CatalogRunbook,
    RunbookStep,
    RunbookText,
    load_runbooks,
)

REQUIRED_SLUGS = {
    "diagnose-build",
    "diagnose-data",
    "diagnose-train",
    "diagnose-serve",
    "tiny-sample-trial",
    "checklist-version-lock",
    "checklist-validate-first",
    "checklist-tiny-sample",
    "checklist-reconcile",
    "weekly-rhythm",
    "local-vs-cluster",
    "multi-node-communication",
    "inference-memory-growth",
}
CJK = re.compile(r"[\u4e00-\u9fff]")
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

RUNBOOKS = load_runbooks()
BY_SLUG = {runbook.slug: runbook for runbook in RUNBOOKS}


def _ids(runbook: CatalogRunbook) -> str:
    return runbook.slug


each_runbook = pytest.mark.parametrize("runbook", RUNBOOKS, ids=_ids)


def test_it_loads_plain_frozen_dataclasses():
    assert RUNBOOKS
    runbook = RUNBOOKS[0]
    assert isinstance(runbook, CatalogRunbook)
    assert isinstance(runbook.texts["en"], RunbookText)
    assert all(isinstance(step, RunbookStep) for step in runbook.texts["en"].steps)
    with pytest.raises(dataclasses.FrozenInstanceError):
        runbook.slug = "changed"  # type: ignore[misc]


def test_it_reads_the_file_next_to_the_module_by_default(tmp_path):
    copy = tmp_path / "runbooks.toml"
    copy.write_text(RUNBOOKS_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    assert [r.slug for r in load_runbooks(copy)] == [r.slug for r in RUNBOOKS]


def test_it_has_unique_well_formed_slugs():
    slugs = [runbook.slug for runbook in RUNBOOKS]
    assert len(slugs) == len(set(slugs))
    assert all(SLUG.match(slug) for slug in slugs), slugs


def test_it_ships_every_required_runbook():
    assert not REQUIRED_SLUGS - set(BY_SLUG), REQUIRED_SLUGS - set(BY_SLUG)


@each_runbook
def test_it_uses_only_known_kinds_stages_disciplines_and_calculators(runbook):
    assert runbook.kind in KINDS
    assert runbook.stage in (*STAGES, "")
    assert runbook.discipline in (*DISCIPLINES, "")
    assert runbook.calculator in (*CALCULATORS, "")


@each_runbook
def test_it_has_every_language_with_the_same_number_of_steps(runbook):
    assert set(runbook.texts) == set(LANGUAGES)
    counts = {lang: len(text.steps) for lang, text in runbook.texts.items()}
    assert len(set(counts.values())) == 1, counts
    assert counts["en"] >= 3


@each_runbook
def test_it_fills_every_title_summary_and_step(runbook):
    for lang, text in runbook.texts.items():
        assert text.title.strip(), lang
        assert text.summary.strip(), lang
        for number, step in enumerate(text.steps, start=1):
            assert step.text.strip(), (lang, number)


@each_runbook
def test_it_writes_the_chinese_text_in_chinese(runbook):
    zh = runbook.texts["zh-hans"]
    assert CJK.search(zh.title)
    assert CJK.search(zh.summary)
    for number, step in enumerate(zh.steps, start=1):
        assert CJK.search(step.text), number
        if step.expected:
            assert CJK.search(step.expected), number


@each_runbook
def test_it_keeps_commands_identical_across_languages(runbook):
    en = [step.command for step in runbook.texts["en"].steps]
    for lang in LANGUAGES:
        assert [step.command for step in runbook.texts[lang].steps] == en, lang


@each_runbook
def test_it_pairs_expected_output_with_the_same_steps_in_every_language(runbook):
    en = [bool(step.expected) for step in runbook.texts["en"].steps]
    for lang in LANGUAGES:
        assert [bool(step.expected) for step in runbook.texts[lang].steps] == en, lang


@each_runbook
def test_it_keeps_commands_free_of_surrounding_blank_lines(runbook):
    for step in runbook.texts["en"].steps:
        assert step.command == step.command.strip(), step.command


def test_it_gives_each_diagnose_runbook_one_stage_and_the_stage_first_method():
    diagnose = [r for r in RUNBOOKS if r.kind == "diagnose"]
    assert sorted(r.stage for r in diagnose) == sorted(STAGES)
    for runbook in diagnose:
        steps = runbook.texts["en"].steps
        assert 'grep -rn "ERROR" exp/*/' in steps[0].command, runbook.slug
        # A build is read from its first error (make.log), every other stage from its tail.
        reads_log = "make.log" if runbook.stage == "build" else "tail -n 60"
        assert any(reads_log in step.command for step in steps), runbook.slug
        assert any("df -BG ." in step.command for step in steps), runbook.slug
        assert "kb analyze -" in steps[-1].command, runbook.slug


def test_it_gives_each_discipline_exactly_one_checklist():
    checklists = [r for r in RUNBOOKS if r.kind == "checklist"]
    assert sorted(r.discipline for r in checklists) == sorted(DISCIPLINES)
    for discipline in DISCIPLINES:
        assert BY_SLUG[f"checklist-{discipline}"].discipline == discipline


def test_it_shows_the_calculators_where_the_handbook_needs_them():
    assert BY_SLUG["diagnose-train"].calculator == "memory-headroom"
    assert BY_SLUG["multi-node-communication"].calculator == "scaling-efficiency"
    shown = {r.calculator for r in RUNBOOKS} - {""}
    assert shown == set(CALCULATORS)


def test_it_falls_back_to_english_for_an_unknown_language():
    runbook = BY_SLUG["weekly-rhythm"]
    assert runbook.text("fr") is runbook.texts["en"]
    assert runbook.text("zh-hans") is runbook.texts["zh-hans"]


def test_it_uses_only_keys_the_loader_reads():
    """Every key in the file is one the loader reads: a typo would otherwise vanish."""
    raw = tomllib.loads(RUNBOOKS_PATH.read_text(encoding="utf-8"))
    top = {"slug", "kind", "stage", "discipline", "calculator", *LANGUAGES}
    for entry in raw["runbook"]:
        assert set(entry) <= top, (entry["slug"], set(entry) - top)
        for lang in LANGUAGES:
            assert set(entry[lang]) <= {"title", "summary", "steps"}, (entry["slug"], lang)
            for step in entry[lang]["steps"]:
                assert set(step) <= {"text", "command", "expected"}, (entry["slug"], lang)


def test_the_chinese_runbooks_call_the_product_by_its_chinese_name():
    for runbook in load_runbooks():
        text = runbook.text("zh-hans")
        words = [text.title, text.summary, *(step.text for step in text.steps)]
        assert not [w for w in words if "Incident KB" in w], runbook.slug
