"""The compiled knowledge base, built from the database and kept per process.

Web processes and workers each keep one compiled index. Every change writes a new token
into one row (`KnowledgeState`) with the id of its last `KnowledgeChange`, so noticing a
change costs one primary-key read, at most once a second per process, whatever the size of
the book. A process then compiles only the incidents changed since its own index (see
`KnowledgeIndex.changed`). It reads the whole book at its first use and after a bulk write
that left no changes to follow; when changes pile up, it reads it again in a background
thread and swaps the new index in, so no request waits for that.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Case, Sum, Value, When

from incidents import logmatch
from incidents.catalog import LEAD_KINDS, incident_description, lead_slugs
from incidents.models import (
    TEXT_FIELDS,
    Feedback,
    Incident,
    KnowledgeChange,
    KnowledgeState,
    Signature,
)

# After this many incidents changed since the whole book was read, read it again (in the
# background): the statistics of the text similarity drift, and the index carries the
# older copies.
REBUILD_AFTER = 500


@dataclass(frozen=True)
class _Compiled:
    token: str
    last_change: int  # the KnowledgeChange up to which `index` is current…
    change_token: str  # …and the token that change wrote: the history `index` belongs to
    index: logmatch.KnowledgeIndex


_lock = threading.Lock()
_cached: _Compiled | None = None
_rebuilding: threading.Thread | None = None
_checked: tuple[float, KnowledgeState] | None = None


def knowledge_state() -> KnowledgeState:
    """The tokens of the knowledge and of people's feedback, read from the database at most
    every KNOWLEDGE_CHECK_SECONDS per process (a change this process made is seen at once)."""
    global _checked
    now = time.monotonic()
    if _checked is None or now - _checked[0] >= settings.KNOWLEDGE_CHECK_SECONDS:
        _checked = (now, KnowledgeState.current())
    return _checked[1]


def knowledge_state_forget() -> None:
    """This process changed the knowledge: read the tokens again on the next call."""
    global _checked
    _checked = None


def knowledge_warm() -> str:
    """Compile the knowledge now, and say so: a process about to fork its workers (gunicorn's
    master, Celery's) calls it, so that no worker's first request or task waits for the
    build and the workers share the index's memory until they change it. A database that
    cannot answer yet (not migrated, down) leaves the build to the first request."""
    started = time.perf_counter()
    try:
        with transaction.atomic():
            index = knowledge_index()
    except DatabaseError as error:
        return f"knowledge not compiled ahead: the database cannot answer yet ({error})"
    seconds = time.perf_counter() - started
    return f"knowledge compiled ahead: {len(index.incidents)} incidents in {seconds:.1f} s"


def knowledge_index() -> logmatch.KnowledgeIndex:
    return knowledge_current()[0]


def knowledge_current() -> tuple[logmatch.KnowledgeIndex, str]:
    """The compiled index, and the token of the knowledge it is current for."""
    global _cached
    state = knowledge_state()
    with _lock:
        if _cached is None or _cached.token != state.token:
            _cached = _brought_up_to(state, _cached)
        if _cached.index.changes >= REBUILD_AFTER:
            _rebuild_in_background(_cached)
        return _cached.index, _cached.token


def _rebuild_in_background(current: _Compiled) -> None:
    """Read the whole book again in a thread of this process, while requests go on with
    the index as it is."""
    global _rebuilding
    if _rebuilding is None or not _rebuilding.is_alive():
        _rebuilding = threading.Thread(
            target=_rebuild, args=(current,), name="knowledge-rebuild", daemon=True
        )
        _rebuilding.start()


def _rebuild(current: _Compiled) -> None:
    """Swap in a whole new index for `current`'s state, unless the knowledge moved on in
    the meantime. (The book may have changed while it was read: the changes after
    `current.last_change` are applied again on top, which reads those incidents anew.)"""
    global _cached
    try:
        fresh = _build()
    finally:
        connection.close()  # this thread's own
    with _lock:
        if _cached is current:
            _cached = _Compiled(current.token, current.last_change, current.change_token, fresh)


def _brought_up_to(state: KnowledgeState, held: _Compiled | None) -> _Compiled:
    """The index for `state`: `held` with the changes since it, when the log of changes
    still holds the change `held` was built at, as it was; or else the whole book."""
    if held is not None and 0 < held.last_change < state.last_change:
        changes = list(
            KnowledgeChange.objects.filter(
                pk__gte=held.last_change, pk__lte=state.last_change
            ).values_list("pk", "slug", "token")
        )
        tokens = {pk: token for pk, _, token in changes}
        if tokens.get(held.last_change) == held.change_token:
            slugs = {slug for pk, slug, _ in changes if pk > held.last_change}
            index = _changed(held.index, slugs)
            last = tokens.get(state.last_change, "")
            return _Compiled(state.token, state.last_change, last, index)
    written = KnowledgeChange.objects.filter(pk=state.last_change).values_list("token", flat=True)
    return _Compiled(state.token, state.last_change, written.first() or "", _build())


def _build() -> logmatch.KnowledgeIndex:
    return logmatch.build_index(*_specs(Incident.objects.all()))


def _changed(index: logmatch.KnowledgeIndex, slugs: set[str]) -> logmatch.KnowledgeIndex:
    """`index` with the incidents `slugs` read again (those no longer there removed)."""
    incidents, signatures = _specs(Incident.objects.filter(slug__in=slugs), slugs)
    removed = slugs - {incident.slug for incident in incidents}
    return index.changed(incidents, signatures, removed)


def _specs(
    incidents, slugs: Iterable[str] | None = None
) -> tuple[list[logmatch.IncidentSpec], list[logmatch.SignatureSpec]]:
    """The incidents and the enabled signatures of `slugs` (None: all), in two queries; each
    incident with the example lines of its signatures that are not leads."""
    signatures = _signature_specs(slugs)
    examples: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    for signature, lines in signatures:
        if not signature.lead_only:
            examples[signature.slug].append((signature.pattern, lines))
    return _incident_specs(incidents, examples), [signature for signature, _ in signatures]


def _incident_specs(
    incidents, examples: dict[str, list[tuple[str, list[str]]]]
) -> list[logmatch.IncidentSpec]:
    rows = incidents.values("slug", "stage", "translations", "tag_list", *TEXT_FIELDS)
    leads = {kind: lead_slugs(kind) for kind in LEAD_KINDS}
    return [
        logmatch.IncidentSpec(
            slug=row["slug"],
            title=row["title"],
            stage=row["stage"],
            symptom=row["symptom"],
            description=_description(row),
            **{f"{kind}_lead": row["slug"] in slugs for kind, slugs in leads.items()},
            examples=logmatch.telling_examples(examples.get(row["slug"], ())),
        )
        for row in rows.iterator(chunk_size=2000)
    ]


def signature_key(pk: int) -> str:
    """A stored signature's key in the engine: its number as its incident's page shows it
    (#N), which explanations quote."""
    return f"#{pk}"


def signature_pk(key: str) -> int | None:
    """The stored signature a key names; None for a key the catalog or a test gave."""
    number = key.removeprefix("#")
    return int(number) if key.startswith("#") and number.isdigit() else None


def _signature_specs(
    slugs: Iterable[str] | None = None,
) -> list[tuple[logmatch.SignatureSpec, list[str]]]:
    """The enabled signatures of `slugs` (None: all), each with its example lines."""
    signatures = Signature.objects.enabled()
    if slugs is not None:
        signatures = signatures.filter(incident__slug__in=slugs)
    return [
        (
            logmatch.SignatureSpec(
                key=signature_key(pk),
                slug=slug,
                pattern=pattern,
                unless=unless,
                lead_only=lead_only,
            ),
            examples.splitlines(),
        )
        for pk, slug, pattern, unless, lead_only, examples in signatures.values_list(
            "pk", "incident__slug", "pattern", "unless", "lead_only", "examples"
        ).iterator(chunk_size=2000)
    ]


def _description(row: dict) -> str:
    translations = (row["translations"] or {}).values()
    return incident_description(row, row["tag_list"], translations)


_feedback_cached: tuple[str, dict[tuple[str, str], float]] | None = None


def feedback_map() -> dict[tuple[str, str], float]:
    """(key template, incident slug) → adjustment in [-1, 1] from people's verdicts.

    Each "this fixed it" counts +1 and each "not it" −1; two verdicts reach the full weight.
    """
    global _feedback_cached
    state = knowledge_state().feedback_token
    with _lock:
        if _feedback_cached is None or _feedback_cached[0] != state:
            net = (
                Feedback.objects.values("key_template", "incident__slug")
                .annotate(
                    net=Sum(
                        Case(
                            When(verdict=Feedback.Verdict.FIXED, then=Value(1)),
                            default=Value(-1),
                        )
                    )
                )
                .values_list("key_template", "incident__slug", "net")
            )
            _feedback_cached = (
                state,
                {(t, slug): max(-1.0, min(1.0, n / 2)) for t, slug, n in net if t and n},
            )
        return _feedback_cached[1]
