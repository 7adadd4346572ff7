"""The demo history's generator: its calendar, team and the incidents it knows, and the rows
it writes in batches (see history.py for what a run does)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.utils import timezone

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
from incidents.search_words import search_words
from reports.demo.material import FLOOD_LINES, GAP_LINES, PITFALLS, Pitfall, draw_values
from reports.demo.rows import (
    DEMO_PREFIX,
    analysis_report,
    batches,
    demo_gaps,
    demo_team,
    re2_literal,
    suggestion,
)

# Draws of a kind of failure and its values before a title already used is accepted again.
TITLE_DRAWS = 30


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
class Known:
    """What later rows need of an incident: no model instance kept in memory."""

    pk: int
    slug: str
    title: str
    stage: str
    symptom: str
    created_at: datetime
    template: str

    @property
    def demo(self) -> bool:
        return self.slug.startswith(DEMO_PREFIX)


class History:
    """One generated history: its calendar, team, the incidents it knows, what it counted."""

    def __init__(self, *, seed: int, weeks: int, today: date | None, batch_size: int):
        self.rng = random.Random(seed)
        self.zone = timezone.get_default_timezone()
        self.batch_size = batch_size
        today = today or timezone.localdate(timezone=self.zone)
        self.first_monday = week_monday(today) - timedelta(weeks=weeks)
        self.weeks = weeks
        self.start = day_start(self.first_monday)
        self.end = min(timezone.now(), day_start(today) + timedelta(hours=18))
        self.span = (self.end - self.start).total_seconds()
        self.team = demo_team()
        self.known: list[Known] = []
        self.cumulative: list[float] = []
        self.signature_rows: list[tuple[int, str]] = []
        self.hits: dict[int, tuple[int, datetime]] = {}  # incident → confident analyses, last
        self.gaps = demo_gaps()
        self.gap_seen: dict[str, list] = {}

    def mondays(self) -> list[date]:
        return [self.first_monday + timedelta(weeks=n) for n in range(self.weeks)]

    def local_date(self, moment: datetime) -> date:
        return timezone.localtime(moment, self.zone).date()

    def moment(self) -> datetime:
        return self.start + timedelta(seconds=self.rng.random() * self.span)

    def moment_after(self, created: datetime) -> datetime:
        low = max(self.start, created)
        span = max(1.0, (self.end - low).total_seconds())
        return low + timedelta(seconds=self.rng.random() * span)

    def shipped_incidents(self) -> list[Known]:
        """The catalog's incidents (no reporter): known before the history starts."""
        shipped = Incident.objects.filter(reporter__isnull=True).only(
            "slug", "title", "stage", "symptom", "created_at"
        )
        self.known = [
            Known(
                item.pk,
                item.slug,
                item.title,
                item.stage,
                item.symptom[:300],
                min(item.created_at, self.start),
                item.symptom[:120],
            )
            for item in shipped.order_by("pk").iterator(chunk_size=self.batch_size)
        ]
        return self.known

    def add_incidents(self, count: int, known: list[Known]) -> int:
        """Demo incidents, 30% filed before the window and the rest across it."""
        tags = {
            name: Tag.objects.get_or_create(name=name)[0]
            for name in sorted({t for p in PITFALLS for t in p.tags})
        }
        added = 0
        for batch in batches(self._incident_rows(count), self.batch_size):
            created = Incident.objects.bulk_create([incident for incident, _ in batch])
            Incident.tags.through.objects.bulk_create(
                Incident.tags.through(incident_id=incident.pk, tag_id=tags[name].pk)
                for incident, (_, pitfall) in zip(created, batch, strict=True)
                for name in pitfall.tags
            )
            for incident, (_, pitfall) in zip(created, batch, strict=True):
                known.append(
                    Known(
                        incident.pk,
                        incident.slug,
                        incident.title,
                        incident.stage,
                        incident.symptom,
                        incident.created_at,
                        pitfall.key_template,
                    )
                )
                self.signature_rows.append((incident.pk, re2_literal(incident.symptom[:200])))
            added += len(created)
        return added

    def _incident_rows(self, count: int) -> Iterator[tuple[Incident, Pitfall]]:
        titles: Counter[str] = Counter()
        for number in range(count):
            pitfall, en, zh = self._distinct_draw(titles)
            titles[en["title"]] += 1
            if self.rng.random() < 0.3:
                created = self.start - timedelta(seconds=self.rng.random() * 365 * 86400)
            else:
                created = self.moment()
            incident = Incident(
                slug=f"{DEMO_PREFIX}{number:06d}",
                language="en",
                translations={"zh-hans": zh},
                stage=pitfall.stage,
                discipline=pitfall.discipline,
                severity=pitfall.severity,
                tag_list=", ".join(sorted(pitfall.tags)),
                reporter=self.rng.choice(self.team),
                occurred_on=self.local_date(created),
                created_at=created,
                **en,
            )
            incident.search_document = incident.build_search_document(list(pitfall.tags))
            incident.search_words = search_words(incident.search_document)
            yield incident, pitfall

    def _distinct_draw(self, titles: Counter[str]) -> tuple[Pitfall, dict, dict]:
        """A kind of failure and its text, with a title not used yet if one can be found
        (at large sizes titles repeat: there are only so many combinations)."""
        for _ in range(TITLE_DRAWS):
            pitfall = self.rng.choice(PITFALLS)
            en, zh = pitfall.texts(draw_values(self.rng, pitfall))
            if not titles[en["title"]]:
                break
        return pitfall, en, zh

    def rank_popularity(self, known: list[Known]) -> None:
        """A few incidents recur a lot, most rarely (Zipf-like); shipped ones more."""
        order = list(range(len(known)))
        self.rng.shuffle(order)
        weights = [0.0] * len(known)
        for rank, index in enumerate(order):
            weights[index] = 1.0 / (rank + 1) ** 0.8 * (1.0 if known[index].demo else 4.0)
        total = 0.0
        self.cumulative = []
        for weight in weights:
            total += weight
            self.cumulative.append(total)

    def popular(self) -> Known:
        return self.known[self.rng.choices(range(len(self.known)), cum_weights=self.cumulative)[0]]

    def add_recurrences(self, count: int) -> int:
        def rows() -> Iterator[Recurrence]:
            for _ in range(count if self.known else 0):
                incident = self.popular()
                yield Recurrence(
                    incident_id=incident.pk,
                    occurred_on=self.local_date(self.moment_after(incident.created_at)),
                    reported_by=self.rng.choice(self.team),
                    note="",
                )

        return sum(
            len(Recurrence.objects.bulk_create(batch)) for batch in batches(rows(), self.batch_size)
        )

    def add_analyses(self, count: int, suggestions: bool, result: DemoResult) -> None:
        """Analyses, explained more often as the weeks go by; some confirmed or refuted."""
        rows = (self._analysis() for _ in range(count))
        for batch in batches(rows, self.batch_size):
            created = Analysis.objects.bulk_create([analysis for analysis, _ in batch])
            result.analyses += len(created)
            confirmed = [
                (analysis, incident)
                for analysis, (_, incident) in zip(created, batch, strict=True)
                if incident
            ]
            if suggestions:
                result.suggestions += len(
                    AnalysisSuggestion.objects.bulk_create(suggestion(*pair) for pair in confirmed)
                )
            recurrences, feedback = self._feedback(confirmed)
            result.recurrences += recurrences
            result.feedback += feedback

    def _analysis(self) -> tuple[Analysis, Known | None]:
        rng = self.rng
        when = self.moment()
        progress = (when - self.start).total_seconds() / self.span
        flood = FLOOD_LINES[rng.randrange(len(FLOOD_LINES))] if rng.random() < 0.12 else None
        failed = rng.random() < 0.02
        explained = self.known and not failed and rng.random() < 0.55 + 0.25 * progress
        incident = self.popular() if explained else None
        if incident is not None:
            if incident.created_at > when:
                when = self.moment_after(incident.created_at)
            stage, line, template = incident.stage, incident.symptom, incident.template
        else:
            stage, line, template = rng.choice(GAP_LINES)
            line = line.format(n=rng.randint(1, 9999), m=rng.randint(1, 99))
        flood_line = flood[0].format(n=rng.randint(1, 99), m=rng.randint(1, 9999)) if flood else ""
        analysis = Analysis(
            status=Analysis.Status.FAILED if failed else Analysis.Status.DONE,
            source=rng.choice(Analysis.Source.values),
            submitted_by=rng.choice(self.team),
            log_path=f"exp/{stage}/log/job.{rng.randint(1, 64)}.log",
            text=(flood_line + "\n" if flood else "") + line,
            size_bytes=rng.randint(2000, 200000),
            report=None
            if failed
            else analysis_report(stage, line, template, incident, flood, flood_line, rng),
            stage=stage,
            confident=incident is not None,
            top_incident_id=incident.pk if incident else None,
            key_template="" if failed else template,
            flooded=bool(flood) and not failed,
            gap=self.gaps[template] if incident is None and not failed else None,
            error="The analysis took too long and was stopped." if failed else "",
            attempts=1,
            created_at=when,
            queued_at=when,
            started_at=when,
            finished_at=when + timedelta(seconds=rng.random() * 2),
        )
        if incident is not None:
            hit_count, last = self.hits.get(incident.pk, (0, when))
            self.hits[incident.pk] = (hit_count + 1, max(last, when))
        elif not failed:
            seen = self.gap_seen.setdefault(template, [0, when, when, line])
            seen[0] += 1
            seen[1], seen[2] = min(seen[1], when), max(seen[2], when)
            if when >= seen[2]:
                seen[3] = line
        return analysis, incident

    def _feedback(self, confirmed: list[tuple[Analysis, Known]]) -> tuple[int, int]:
        """A fifth of the confirmed analyses get a verdict: mostly "this fixed it" (which
        records a recurrence), else "not it"."""
        answered = [pair for pair in confirmed if self.rng.random() < 0.2]
        fixed = [pair for pair in answered if self.rng.random() < 0.8]
        confirmations = Recurrence.objects.bulk_create(
            Recurrence(
                incident_id=incident.pk,
                occurred_on=self.local_date(analysis.created_at),
                reported_by_id=analysis.submitted_by_id,
                analysis_id=analysis.pk,
            )
            for analysis, incident in fixed
        )
        recurrence_of = {
            analysis.pk: recurrence
            for (analysis, _), recurrence in zip(fixed, confirmations, strict=True)
        }
        feedback = Feedback.objects.bulk_create(
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
                    self.end, analysis.finished_at + timedelta(minutes=self.rng.randint(1, 600))
                ),
            )
            for analysis, incident in answered
        )
        return len(confirmations), len(feedback)

    def close_gaps(self) -> int:
        for template, (count, first, last, line) in self.gap_seen.items():
            KnowledgeGap.objects.filter(pk=self.gaps[template].pk).update(
                analysis_count=count,
                first_seen=first,
                last_seen=last,
                example_line=line,
                explained_at=None,
            )
        return len(self.gap_seen)

    def add_signatures(self) -> int:
        """A signature per demo incident; shipped signatures count their incidents' hits."""

        def rows() -> Iterator[Signature]:
            for incident_id, pattern in self.signature_rows:
                count, last = self.hits.get(incident_id, (0, None))
                yield Signature(
                    incident_id=incident_id,
                    pattern=pattern,
                    note="demo",
                    examples="",
                    hit_count=count,
                    last_hit_at=last,
                    created_at=self.start - timedelta(days=90),
                )

        added = sum(
            len(Signature.objects.bulk_create(batch)) for batch in batches(rows(), self.batch_size)
        )
        for item in self.known:
            if not item.demo and item.pk in self.hits:
                count, last = self.hits[item.pk]
                first = Signature.objects.filter(incident_id=item.pk).order_by("id").first()
                if first is not None:
                    Signature.objects.filter(pk=first.pk).update(
                        hit_count=first.hit_count + count,
                        last_hit_at=max(filter(None, (first.last_hit_at, last))),
                    )
        return added
