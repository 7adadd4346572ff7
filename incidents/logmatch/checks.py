"""What stops a signature from being saved, in words a lead can act on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import re2

from common.phrases import Phrase, gettext_noop

from .generic import GENERIC_SAMPLES
from .patterns import compile_error, counter_regex, re2_options

if TYPE_CHECKING:
    from .benign import LineCorpus


def check_signature(
    pattern: str,
    *,
    examples: Sequence[str],
    benign: LineCorpus | None,
    max_benign_share: float = 0.01,
) -> list[Phrase]:
    """Problems that should stop `pattern` from being saved, in words; empty when it is fine.

    Checks that it compiles in RE2 (with RE2's reason when not), does not match the empty
    string, matches each of its examples (at least one must be given), matches no generic line
    that proves nothing alone, and fires on at most `max_benign_share` of the `benign` lines;
    and that its counter-pattern (`unless`), if any, compiles, needs text and rules out none
    of the examples.
    """
    error = compile_error(pattern)
    if error:
        return [Phrase(gettext_noop("Does not compile in RE2: %(reason)s."), reason=error)]
    problems: list[Phrase] = []
    compiled = re2.compile(pattern, re2_options())
    if compiled.search("") is not None:
        problems.append(
            Phrase(
                gettext_noop(
                    "Matches the empty string, so it would fire on every line: "
                    "make it require text."
                )
            )
        )
    problems += _example_problems(compiled, examples)
    generic = [line for line in GENERIC_SAMPLES if compiled.search(line)]
    if generic:
        problems.append(
            Phrase(
                gettext_noop(
                    "Matches a generic line that proves nothing alone: %(line)s; "
                    "require the text that names the cause."
                ),
                line=_quote(generic[0]),
            )
        )
    if benign and (problem := _benign_problem(pattern, benign, max_benign_share)):
        problems.append(problem)
    return problems


def check_counter(unless: str, *, examples: Sequence[str]) -> list[Phrase]:
    """Problems that should stop a counter-pattern from being saved: it must compile in RE2,
    require text, and rule out none of the signature's own examples."""
    if not unless:
        return []
    error = compile_error(unless)
    if error:
        return [
            Phrase(
                gettext_noop("The counter-pattern does not compile in RE2: %(reason)s."),
                reason=error,
            )
        ]
    counter = counter_regex(unless)
    if counter.search("") is not None:
        return [
            Phrase(
                gettext_noop(
                    "The counter-pattern matches the empty string, so it would rule out "
                    "every tail: make it require text."
                )
            )
        ]
    return [
        Phrase(
            gettext_noop("The counter-pattern rules out its own example %(n)s: %(line)s."),
            n=str(number),
            line=_quote(line),
        )
        for number, line in enumerate(examples, 1)
        if counter.search(line) is not None
    ]


def _example_problems(compiled: re2._Regexp, examples: Sequence[str]) -> list[Phrase]:
    """The pattern must match its examples, of which there must be at least one."""
    problems: list[Phrase] = []
    if not examples:
        problems.append(
            Phrase(gettext_noop("Has no examples: add at least one real log line it must match."))
        )
    else:
        missed = [number for number, line in enumerate(examples, 1) if not compiled.search(line)]
        if len(missed) == len(examples):
            problems.append(
                Phrase(gettext_noop("Matches none of its %(n)s example(s)."), n=str(len(examples)))
            )
        else:
            problems += [
                Phrase(
                    gettext_noop("Does not match its example %(n)s: %(line)s."),
                    n=str(number),
                    line=_quote(examples[number - 1]),
                )
                for number in missed
            ]
    return problems


def _benign_problem(pattern: str, benign: LineCorpus, max_share: float) -> Phrase | None:
    """Why the pattern fires on too many healthy lines, or None."""
    fired = benign.fired(pattern)
    share = len(fired) / len(benign)
    if share <= max_share:
        return None
    return Phrase(
        gettext_noop(
            "Fires on %(fired)s of %(total)s lines of healthy logs (%(share)s; "
            "the limit is %(limit)s), e.g. %(line)s."
        ),
        fired=f"{len(fired):,}",
        total=f"{len(benign):,}",
        share=f"{share:.1%}",
        limit=f"{max_share:.1%}",
        line=_quote(fired[0]),
    )


def _quote(line: str, width: int = 120) -> str:
    return repr(line if len(line) <= width else line[: width - 1] + "…")
