"""A change to a few incidents compiles only them, and the index then answers as one built
from scratch over the changed book would."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from incidents.catalog import engine_specs
from incidents.logmatch import IncidentSpec, SignatureSpec, analyze, benign_lines, build_index
from incidents.logmatch.clues import LOG_LEAD_SHARE, SIMILARITY_WEIGHT
from incidents.logmatch.ranking import CONFIDENT, STAGE_AGREES

CASES = Path(__file__).with_name("cases")
STATISTICS_DRIFT = 0.1
FAINT_LEAD_AT_MOST = SIMILARITY_WEIGHT * LOG_LEAD_SHARE * STAGE_AGREES


def _case_lines() -> list[str]:
    lines = list(benign_lines()[::50])
    for case in sorted(CASES.glob("*.log")):
        lines += case.read_text(errors="replace").splitlines()[-12:]
    return lines


def _changed_book():
    """The shipped book, and the same book after a filing, an edit and a deletion."""
    incidents, signatures = engine_specs()
    by_slug = {incident.slug: incident for incident in incidents}
    filed = by_slug["disk-full"]
    edited = replace(by_slug["gpu-oom"], symptom="torch.OutOfMemoryError: HIP out of memory")
    deleted = "nan-loss"
    before_incidents = [i for i in incidents if i.slug != filed.slug]
    before = [s for s in signatures if s.slug != filed.slug]
    after_incidents = [edited if i.slug == edited.slug else i for i in incidents]
    after_incidents = [i for i in after_incidents if i.slug != deleted]
    new_oom = SignatureSpec("hip-oom", "gpu-oom", r"HIP out of memory\. Tried to allocate")
    kept_oom = [s for s in signatures if s.slug == "gpu-oom"][1:]
    after = [s for s in signatures if s.slug not in ("gpu-oom", deleted)] + kept_oom + [new_oom]
    changes = {
        "incidents": [filed, edited],
        "signatures": [s for s in signatures if s.slug == filed.slug] + kept_oom + [new_oom],
        "removed": [deleted],
    }
    return (before_incidents, before), (after_incidents, after), changes


def test_a_changed_index_finds_what_a_fresh_build_finds():
    before, after, changes = _changed_book()
    lines = _case_lines()

    changed = build_index(*before).changed(**changes)
    fresh = build_index(*after)

    def found(index):
        return {(hit.signature.key, hit.text, hit.lines) for hit in index.signatures.scan(lines)}

    assert found(changed) == found(fresh)
    assert {s.key for s in changed.signatures.signatures} == {
        s.key for s in fresh.signatures.signatures
    }
    assert changed.incidents.keys() == fresh.incidents.keys()
    assert changed.changes == 3


def test_a_changed_index_ranks_the_cases_as_a_fresh_build_does():
    before, after, changes = _changed_book()
    changed = build_index(*before).changed(**changes)
    fresh = build_index(*after)

    for case in sorted(CASES.glob("*.log")):
        tail = case.read_bytes()
        ours, theirs = analyze(tail, changed), analyze(tail, fresh)
        assert ours.confident == theirs.confident or _similarity_at_threshold(theirs), case.name
        assert _first(ours) in _first_places(theirs), case.name


def _first(report) -> str | None:
    """The first suggestion, unless it is only a faint lead: text that resembles an incident
    so little (below the similarity floor) that the drift of word statistics moves it across
    that floor, until the next whole build (the changed index keeps the statistics it was
    built with, see REBUILD_AFTER)."""
    shown = [s.slug for s in report.suggestions[:1] if s.score > FAINT_LEAD_AT_MOST]
    return shown[0] if shown else None


def _first_places(report) -> list[str | None]:
    """What may come first: the fresh build's first suggestion; for two leads whose scores
    differ by less than the word statistics drift, either of them; for a lead within that
    drift of the faint-lead floor, it or nothing."""
    first = [_first(report)]
    if report.suggestions and not report.confident:
        score = report.suggestions[0].score
        if abs(score - FAINT_LEAD_AT_MOST) <= FAINT_LEAD_AT_MOST * STATISTICS_DRIFT:
            first += [None, report.suggestions[0].slug]
    if report.suggestions and not report.confident and _likeness_only(report.suggestions[0]):
        # A word crossing the cut of words too common to tell (a share of the book) moves a
        # likeness by more than the drift; the changed index keeps the cut it was built with.
        first += [None, *(suggestion.slug for suggestion in report.suggestions[:3])]
    if len(report.suggestions) > 1 and not report.confident:
        leader, runner_up = report.suggestions[:2]
        close = runner_up.score >= leader.score * (1 - STATISTICS_DRIFT)
        if close and runner_up.score > FAINT_LEAD_AT_MOST:
            first.append(runner_up.slug)
    return first


def _likeness_only(suggestion) -> bool:
    return all(evidence.kind == "similar" for evidence in suggestion.evidence)


def test_a_deleted_incident_is_never_suggested_again():
    incidents, signatures = engine_specs()
    index = build_index(incidents, signatures).changed([], [], removed=["disk-full"])

    report = analyze("OSError: [Errno 28] No space left on device: '/data/exp'", index)

    assert "disk-full" not in {s.slug for s in report.suggestions}
    assert "disk-full" not in index.similarity.score("the disk is full, no space left")


def test_many_changes_keep_a_few_parts_and_answer_as_a_fresh_build():
    """Filings and edits one at a time, as a busy team makes them: the index merges its
    changes' parts as they pile up (a query visits a few, not one per change) and still
    finds and ranks what a build of the whole changed book does."""
    incidents, signatures = engine_specs()
    by_slug = {incident.slug: incident for incident in incidents}
    index = build_index(incidents, signatures)
    for n in range(60):
        slug = f"shard-checksum-{n % 40}"  # the last 20 are edits of earlier filings
        filed = IncidentSpec(
            slug,
            f"Shard manifest checksum mismatch, corpus v{n}",
            "data",
            f"ERROR shard-loader[{n}]: manifest checksum mismatch for shard {n} of corpus v{n}",
            "The manifest was regenerated while shards were still being copied.",
        )
        by_slug[slug] = filed
        pattern = SignatureSpec(f"shard-{n}", slug, rf"checksum mismatch for shard {n}\b")
        signatures = [s for s in signatures if s.slug != slug] + [pattern]
        index = index.changed([filed], [pattern])
    index = index.changed([], [], removed=["disk-full"])
    del by_slug["disk-full"]
    fresh = build_index(list(by_slug.values()), [s for s in signatures if s.slug != "disk-full"])

    assert index.signatures.part_count <= 8 and index.similarity.part_count <= 8
    assert {s.key for s in index.signatures.signatures} == {
        s.key for s in fresh.signatures.signatures
    }
    # (tail, whether it shows a failure the changed book knows): a healthy run's tail, or one
    # of the deleted incident, gets at most weak leads, which may differ, as the changes are
    # weighed with the book's statistics as they were; so may a failure the book reads only
    # through faint likenesses (`_first_places`)
    tails = [
        (case.read_bytes(), _label(case) not in ("none", "disk-full"))
        for case in sorted(CASES.glob("*.log"))[::5]
    ]
    tails += [
        (
            f"ERROR shard-loader[7]: manifest checksum mismatch for shard {n} of corpus v{n}".encode(),
            True,
        )
        for n in (3, 25, 59)
    ]
    for tail, failed in tails:
        ours, theirs = analyze(tail, index), analyze(tail, fresh)
        if failed:
            assert _same_first(ours, theirs) or _first(ours) in _first_places(theirs)
        assert ours.confident == theirs.confident or _similarity_at_threshold(theirs)


# Within this of the fresh build's first score, two incidents are a tie that the statistics
# as they were may break the other way (the changes' parts weigh words with the book's
# frequencies at their build).
TIE = 0.01


def _same_first(ours, theirs) -> bool:
    """Both give the same first suggestion, or ours is one the fresh build ties with it."""
    if not ours.suggestions or not theirs.suggestions:
        return not ours.suggestions and not theirs.suggestions
    top = theirs.suggestions[0]
    scores = {s.slug: s.score for s in theirs.suggestions}
    return scores.get(ours.suggestions[0].slug, -1.0) >= top.score - TIE


def _similarity_at_threshold(report) -> bool:
    """The first suggestion rests on similar text alone (a typed description) and scores
    within the statistics' drift of the threshold: the changes' parts weigh words with the
    book's frequencies at their build, so the two builds may fall either side of it."""
    first = report.suggestions[0] if report.suggestions else None
    return (
        first is not None
        and all(evidence.kind == "similar" for evidence in first.evidence)
        and abs(first.score - CONFIDENT) <= STATISTICS_DRIFT
    )


def _label(case: Path) -> str:
    expected = case.with_name(case.name.removesuffix(".log") + ".expected.json")
    return json.loads(expected.read_text(encoding="utf-8"))["slug"]
