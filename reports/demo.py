"""A realistic history for demos, screenshots and benchmarks: weeks of incidents across stages
and disciplines, recurrences, analyses explained and not, knowledge gaps, feedback, floods.

Deterministic for a given seed and `today`. Rows are generated and inserted in batches
(bulk_create), never all held in memory, so 100k incidents and a million recurrences and
analyses take minutes, not hours.

What it adds is recognisable, so `replace=True` can take it out again: demo incidents have
slugs "demo-…", and every recurrence, analysis and feedback is by a demo user ("demo-…").
The catalog incidents recur and get analysed too, but their text is never changed (only
their recurrence counters and signature hit counters move, as they would in real use).
"""

from __future__ import annotations

import hashlib
import random
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.roles import ENGINEER, user_set_role
from common.weeks import day_start, week_monday
from incidents.models import (
    Analysis,
    AnalysisSuggestion,
    Feedback,
    Incident,
    KnowledgeGap,
    Recurrence,
    Signature,
    Tag,
)

DEMO_PREFIX = "demo-"
TEAM = ("ana", "chen", "dmitri", "farah", "li", "marta", "noah", "wei")
BATCH_SIZE = 5000


@dataclass(frozen=True)
class Pitfall:
    """A kind of failure; each demo incident is one instance of it with its own details."""

    key: str
    stage: str
    discipline: str
    severity: str
    tags: tuple[str, ...]
    en: dict[str, str]
    zh: dict[str, str]
    key_template: str  # the masked key line, as the engine would group it


def _material() -> dict:
    with (Path(__file__).with_name("demo_data.toml")).open("rb") as file:
        return tomllib.load(file)


MATERIAL = _material()
PITFALLS = tuple(
    Pitfall(
        key=item["key"],
        stage=item["stage"],
        discipline=item["discipline"],
        severity=item["severity"],
        tags=tuple(item["tags"]),
        en=item["en"],
        zh=item["zh-hans"],
        key_template=item["key_template"],
    )
    for item in MATERIAL["pitfall"]
)
# Unexplained tails (stage, line, masked template) and warning floods (line, template).
GAP_LINES = tuple((item["stage"], item["line"], item["template"]) for item in MATERIAL["gap"])
FLOOD_LINES = tuple((item["line"], item["template"]) for item in MATERIAL["flood"])
VALUES = {name: tuple(options) for name, options in MATERIAL["values"].items()}


@dataclass
class DemoResult:
    incidents: int = 0
    recurrences: int = 0
    analyses: int = 0
    suggestions: int = 0
    feedback: int = 0
    signatures: int = 0
    gaps: int = 0
    seconds: float = 0.0
    weeks: list[date] = field(default_factory=list)


@dataclass(frozen=True)
class _Known:
    """What later rows need of an incident: no model instance kept in memory."""

    pk: int
    slug: str
    title: str
    stage: str
    symptom: str
    created_at: datetime
    template: str


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format(**values)


def _values(rng: random.Random) -> dict[str, str]:
    values = {name: rng.choice(options) for name, options in VALUES.items()}
    values.update(
        lib_so=f"{values['lib']}_cuda.cpython-311-x86_64-linux-gnu.so",
        line=str(rng.randint(20, 400)),
        n=str(rng.randint(2, 900)),
        shard=f"{rng.randint(0, 4095):05d}",
        v1=str(rng.choice((32000, 64000, 151646, 128256))),
        v2=str(rng.choice((32001, 64512, 151936, 128000))),
        pid=str(rng.randint(1000, 99999)),
        workers=str(rng.choice((8, 16, 32))),
        gb=f"{rng.choice((1.5, 2.0, 4.0, 8.0, 12.0)):.2f}",
        dev=str(rng.randint(0, 7)),
        mb=str(rng.choice((1, 2, 4))),
        ga=str(rng.choice((8, 16, 32))),
        nodes=str(rng.choice((4, 8, 16, 32))),
        rank=str(rng.randint(0, 255)),
        ms=str(rng.choice((600000, 1800000, 2400, 3100, 4800))),
        a=f"{rng.choice((32000, 151936))}, 4096",
        b=f"{rng.choice((32001, 152064))}, 4096",
        job1=str(rng.randint(50000, 59999)),
        job2=str(rng.randint(50000, 59999)),
        drv=str(rng.choice((11040, 12020, 525))),
        qps=str(rng.choice((20, 40, 80, 160))),
        slo=str(rng.choice((800, 1500, 2000))),
        pct=str(rng.randint(5, 100)),
    )
    return values


def _re2_literal(text: str) -> str:
    return "".join("\\" + char if char in "\\.^$|?*+()[]{}" else char for char in text)


def _batches(items: Iterator, size: int) -> Iterator[list]:
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def demo_clear() -> None:
    """Remove what earlier runs added; catalog incidents keep their text and get their
    recurrence counters recomputed."""
    users = get_user_model().objects.filter(username__startswith=DEMO_PREFIX)
    with transaction.atomic():
        Analysis.objects.filter(submitted_by__in=users).delete()
        Recurrence.objects.filter(reported_by__in=users).delete()
        Incident.objects.filter(slug__startswith=DEMO_PREFIX).delete()
        KnowledgeGap.objects.filter(
            key_template__in=[template for _, _, template in GAP_LINES], analyses__isnull=True
        ).delete()
        _recount_recurrences(Incident.objects.all())


def _recount_recurrences(incidents) -> None:
    counts = (
        Recurrence.objects.filter(incident=OuterRef("pk"))
        .order_by()
        .values("incident")
        .annotate(n=Count("pk"))
        .values("n")
    )
    incidents.update(
        recurrence_count=Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))
    )


def _team() -> list:
    users = []
    model = get_user_model()
    for name in TEAM:
        user, created = model.objects.get_or_create(username=DEMO_PREFIX + name)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
            user_set_role(user=user, role=ENGINEER)
        users.append(user)
    return users


def demo_generate(
    *,
    incidents: int = 300,
    weeks: int = 16,
    seed: int = 7,
    recurrences: int | None = None,
    analyses: int | None = None,
    today: date | None = None,
    suggestions: bool = True,
    batch_size: int = BATCH_SIZE,
    replace: bool = False,
    log=None,
) -> DemoResult:
    """Add `incidents` demo incidents and their history over the last `weeks` weeks (and the
    current one so far). Defaults: 3 recurrences and 7 analyses per incident."""
    started = time.perf_counter()
    rng = random.Random(seed)
    result = DemoResult()
    say = log or (lambda message: None)
    recurrences = 3 * incidents if recurrences is None else recurrences
    analyses = 7 * incidents if analyses is None else analyses
    if replace:
        demo_clear()
        say("removed the previous demo data")

    zone = timezone.get_default_timezone()
    today = today or timezone.localdate(timezone=zone)
    first_monday = week_monday(today) - timedelta(weeks=weeks)
    start = day_start(first_monday)
    end = min(timezone.now(), day_start(today) + timedelta(hours=18))
    span = (end - start).total_seconds()
    result.weeks = [first_monday + timedelta(weeks=n) for n in range(weeks)]

    team = _team()
    tags = {
        name: tag
        for name in {t for p in PITFALLS for t in p.tags}
        for tag in [Tag.objects.get_or_create(name=name)[0]]
    }
    offset = Incident.objects.filter(slug__startswith=DEMO_PREFIX).count()

    # Every incident already in the book recurs and gets analysed too; the catalog's count as
    # known before the history starts.
    known: list[_Known] = []
    existing = Incident.objects.only("slug", "title", "stage", "symptom", "created_at")
    for item in existing.order_by("pk").iterator(chunk_size=batch_size):
        demo = item.slug.startswith(DEMO_PREFIX)
        known.append(
            _Known(
                item.pk,
                item.slug,
                item.title,
                item.stage,
                item.symptom[:300],
                item.created_at if demo else min(item.created_at, start),
                item.symptom[:120],
            )
        )
    say(f"{len(known)} existing incidents join the history")

    # Incidents: 30% were filed before the window, the rest across it.
    def incident_rows() -> Iterator[tuple[Incident, Pitfall]]:
        for number in range(offset, offset + incidents):
            pitfall = rng.choice(PITFALLS)
            values = _values(rng)
            en = {name: _fill(text, values) for name, text in pitfall.en.items()}
            zh = {name: _fill(text, values) for name, text in pitfall.zh.items()}
            if rng.random() < 0.3:
                created = start - timedelta(seconds=rng.random() * 365 * 86400)
            else:
                created = start + timedelta(seconds=rng.random() * span)
            incident = Incident(
                slug=f"{DEMO_PREFIX}{number:06d}",
                language="en",
                translations={"zh-hans": zh},
                stage=pitfall.stage,
                discipline=pitfall.discipline,
                severity=pitfall.severity,
                tag_list=", ".join(sorted(pitfall.tags)),
                reporter=rng.choice(team),
                occurred_on=timezone.localtime(created, zone).date(),
                created_at=created,
                **en,
            )
            incident.search_document = incident.build_search_document(list(pitfall.tags))
            yield incident, pitfall

    signature_rows: list[tuple[int, str]] = []
    for batch in _batches(incident_rows(), batch_size):
        created = Incident.objects.bulk_create([incident for incident, _ in batch])
        Incident.tags.through.objects.bulk_create(
            Incident.tags.through(incident_id=incident.pk, tag_id=tags[name].pk)
            for incident, (_, pitfall) in zip(created, batch, strict=True)
            for name in pitfall.tags
        )
        for incident, (_, pitfall) in zip(created, batch, strict=True):
            known.append(
                _Known(
                    incident.pk,
                    incident.slug,
                    incident.title,
                    incident.stage,
                    incident.symptom,
                    incident.created_at,
                    pitfall.key_template,
                )
            )
            signature_rows.append((incident.pk, _re2_literal(incident.symptom[:200])))
        result.incidents += len(created)
    say(f"{result.incidents} incidents")

    # Popularity: a few incidents recur a lot, most rarely (Zipf-like), catalog ones more.
    order = list(range(len(known)))
    rng.shuffle(order)
    weights = [0.0] * len(known)
    for rank, index in enumerate(order):
        weights[index] = (
            1.0
            / (rank + 1) ** 0.8
            * (4.0 if not known[index].slug.startswith(DEMO_PREFIX) else 1.0)
        )
    cumulative, total = [], 0.0
    for weight in weights:
        total += weight
        cumulative.append(total)

    def moment_after(created: datetime) -> datetime:
        low = max(start, created)
        return low + timedelta(seconds=rng.random() * max(1.0, (end - low).total_seconds()))

    def recurrence_rows() -> Iterator[Recurrence]:
        for index in rng.choices(range(len(known)), cum_weights=cumulative, k=recurrences):
            incident = known[index]
            yield Recurrence(
                incident_id=incident.pk,
                occurred_on=timezone.localtime(moment_after(incident.created_at), zone).date(),
                reported_by=rng.choice(team),
                note="",
            )

    for batch in _batches(recurrence_rows(), batch_size):
        result.recurrences += len(Recurrence.objects.bulk_create(batch))
    say(f"{result.recurrences} recurrences")

    gaps = {}
    for stage, line, template in GAP_LINES:
        gap, _ = KnowledgeGap.objects.get_or_create(
            key_hash=hashlib.sha256(template.encode()).hexdigest(),
            defaults={
                "key_template": template,
                "example_line": line.format(n=1, m=2),
                "stage": stage,
            },
        )
        gaps[template] = gap
    gap_seen: dict[str, list] = {}
    hits: dict[int, tuple[int, datetime]] = {}

    def analysis_rows() -> Iterator[tuple[Analysis, _Known | None]]:
        for _ in range(analyses):
            when = start + timedelta(seconds=rng.random() * span)
            progress = (when - start).total_seconds() / span
            user = rng.choice(team)
            flood = FLOOD_LINES[rng.randrange(len(FLOOD_LINES))] if rng.random() < 0.12 else None
            failed = rng.random() < 0.02
            explained = not failed and rng.random() < 0.55 + 0.25 * progress
            incident = None
            if explained:
                incident = known[rng.choices(range(len(known)), cum_weights=cumulative)[0]]
                if incident.created_at > when:
                    when = moment_after(incident.created_at)
                stage, line, template = incident.stage, incident.symptom, incident.template
            else:
                stage, line, template = rng.choice(GAP_LINES)
                line = line.format(n=rng.randint(1, 9999), m=rng.randint(1, 99))
            groups = [
                {
                    "template": "INFO <*> step <*> loss <*>",
                    "level": "INFO",
                    "count": rng.randint(20, 180),
                    "first_line": 1,
                    "last_line": 150,
                    "example": "INFO 11-28 step 120 loss 2.31",
                    "flood": False,
                },
            ]
            if flood:
                groups.append(
                    {
                        "template": flood[1],
                        "level": "WARNING",
                        "count": rng.randint(20, 4000),
                        "first_line": 10,
                        "last_line": 190,
                        "example": flood[0].format(n=rng.randint(1, 99), m=rng.randint(1, 9999)),
                        "flood": True,
                    }
                )
            groups.append(
                {
                    "template": template,
                    "level": "ERROR",
                    "count": 1,
                    "first_line": 200,
                    "last_line": 200,
                    "example": line,
                    "flood": False,
                }
            )
            report = {
                "stage": stage,
                "levels": {
                    "INFO": groups[0]["count"],
                    "WARNING": groups[1]["count"] if flood else 0,
                    "ERROR": 1,
                },
                "groups": groups,
                "suggestions": [
                    {
                        "slug": incident.slug,
                        "title": incident.title,
                        "score": 0.9,
                        "confident": True,
                        "evidence": [
                            {"line": 200, "text": line, "signature": None, "kind": "signature"}
                        ],
                        "why": "",
                    }
                ]
                if incident
                else [],
                "confident": bool(incident),
                "errors": [{"line": 200, "text": line}],
                "key_line": {"line": 200, "text": line},
                "key_template": template,
                "line_count": 200,
                "floods": [1] if flood else [],
            }
            analysis = Analysis(
                status=Analysis.Status.FAILED if failed else Analysis.Status.DONE,
                source=rng.choice(Analysis.Source.values),
                submitted_by=user,
                log_path=f"exp/{stage}/log/job.{rng.randint(1, 64)}.log",
                text=(flood[0].format(n=7, m=42) + "\n" if flood else "") + line,
                size_bytes=rng.randint(2000, 200000),
                report=None if failed else report,
                stage=stage,
                confident=bool(incident),
                top_incident_id=incident.pk if incident else None,
                key_template="" if failed else template,
                gap=gaps[template] if not incident and not failed else None,
                error="The analysis took too long and was stopped." if failed else "",
                attempts=1,
                created_at=when,
                queued_at=when,
                started_at=when,
                finished_at=when + timedelta(seconds=rng.random() * 2),
            )
            if incident:
                count, last = hits.get(incident.pk, (0, when))
                hits[incident.pk] = (count + 1, max(last, when))
            elif not failed:
                seen = gap_seen.setdefault(template, [0, when, when, line])
                seen[0] += 1
                seen[1], seen[2] = min(seen[1], when), max(seen[2], when)
                if when >= seen[2]:
                    seen[3] = line
            yield analysis, incident

    for batch in _batches(analysis_rows(), batch_size):
        created = Analysis.objects.bulk_create([analysis for analysis, _ in batch])
        result.analyses += len(created)
        confirmed = [
            (analysis, incident)
            for analysis, (_, incident) in zip(created, batch, strict=True)
            if incident
        ]
        if suggestions:
            result.suggestions += len(
                AnalysisSuggestion.objects.bulk_create(
                    AnalysisSuggestion(
                        analysis_id=analysis.pk,
                        incident_id=incident.pk,
                        rank=1,
                        score=0.9,
                        confident=True,
                        evidence=[
                            {"line": 200, "text": incident.symptom[:300], "kind": "signature"}
                        ],
                    )
                    for analysis, incident in confirmed
                )
            )
        answered = [pair for pair in confirmed if rng.random() < 0.2]
        fixed = [pair for pair in answered if rng.random() < 0.8]
        confirmations = Recurrence.objects.bulk_create(
            Recurrence(
                incident_id=incident.pk,
                occurred_on=timezone.localtime(analysis.created_at, zone).date(),
                reported_by_id=analysis.submitted_by_id,
                note=f"Confirmed by analysis #{analysis.pk}",
            )
            for analysis, incident in fixed
        )
        result.recurrences += len(confirmations)
        recurrence_of = {
            analysis.pk: recurrence
            for (analysis, _), recurrence in zip(fixed, confirmations, strict=True)
        }
        result.feedback += len(
            Feedback.objects.bulk_create(
                Feedback(
                    analysis_id=analysis.pk,
                    incident_id=incident.pk,
                    user_id=analysis.submitted_by_id,
                    verdict=Feedback.Verdict.FIXED
                    if analysis.pk in recurrence_of
                    else Feedback.Verdict.NOT_IT,
                    key_template=analysis.key_template,
                    recurrence=recurrence_of.get(analysis.pk),
                    created_at=min(
                        end, analysis.finished_at + timedelta(minutes=rng.randint(1, 600))
                    ),
                )
                for analysis, incident in answered
            )
        )
    say(f"{result.analyses} analyses, {result.feedback} feedback")

    for template, (count, first, last, line) in gap_seen.items():
        KnowledgeGap.objects.filter(pk=gaps[template].pk).update(
            analysis_count=count,
            first_seen=first,
            last_seen=last,
            example_line=line,
            explained_at=None,
        )
    result.gaps = len(gap_seen)

    def signature_objects() -> Iterator[Signature]:
        for incident_id, pattern in signature_rows:
            count, last = hits.get(incident_id, (0, None))
            yield Signature(
                incident_id=incident_id,
                pattern=pattern,
                note="demo",
                examples="",
                hit_count=count,
                last_hit_at=last,
                created_at=start - timedelta(days=90),
            )

    for batch in _batches(signature_objects(), batch_size):
        result.signatures += len(Signature.objects.bulk_create(batch))
    # The catalog's own signatures count the hits of their incidents' confident analyses.
    for item in known:
        if not item.slug.startswith(DEMO_PREFIX) and item.pk in hits:
            count, last = hits[item.pk]
            first = Signature.objects.filter(incident_id=item.pk).order_by("id").first()
            if first is not None:
                Signature.objects.filter(pk=first.pk).update(
                    hit_count=first.hit_count + count,
                    last_hit_at=max(filter(None, (first.last_hit_at, last))),
                )
    _recount_recurrences(Incident.objects.all())
    result.seconds = time.perf_counter() - started
    return result
