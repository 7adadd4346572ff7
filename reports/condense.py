"""One line per column for the quick-reference matrix. Plain text in, plain text out.

Truncation happens here, not in CSS, so that the page and its exports show the same words.
A remedy keeps its first command whole: that is what someone copies from a printed sheet.
"""

from __future__ import annotations

import re

# Sized so that a stage's row fits about two printed lines per column on landscape A4.
TITLE_CHARS = 70
SYMPTOM_CHARS = 70
ROOT_CAUSE_CHARS = 100
REMEDY_LEAD_CHARS = 60
REMEDY_ALONE_CHARS = 130
PREVENTION_CHARS = 90

STEP_RE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")
BACKTICKS_RE = re.compile(r"`([^`\n]+)`")
# A note written after a command, set off by two or more spaces: "npu-smi info   # Ascend".
TRAILING_NOTE_RE = re.compile(r"\s{2,}(?:#|\(|（).*$")
# A first word that names a program or an option rather than starting a sentence.
CODE_WORD_RE = re.compile(r"^(?:--?[A-Za-z]|[\w.]*[/=_$][\w./=$-]*|[a-z][\w]*[.-][\w.()-]+)")
PROGRAM_NAMES = (
    "awk bash cat cd conda cp curl cut deepspeed df diff dmesg docker du echo env ethtool "
    "export find free gcc git grep head ibstat jq kill kubectl ldconfig ldd ls make mkdir "
    "msprof mv nproc nsys nvcc perfquery pip ps python python3 rm rsync sacct sbatch "
    "scontrol sed sh sinfo sort squeue srun ssh strace strings tail tar torchrun uniq wc "
    "wget"
)
PROGRAMS = frozenset(PROGRAM_NAMES.split())
# A command is followed by prose on the same line: "grep -c X train.log. A handful …"
PROSE_AFTER_RE = re.compile(r"\.\s+[A-Z].*$|。.*$|\s*（[^（）]*）$")
# A sentence ends at a full stop followed by a capital (English) or right at "。" (Chinese):
# "check df -BG . against …" is one sentence.
SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])|(?<=[。！？])")
COLONS = (": ", "：")
# Three plain words in a row, outside quotes and parentheses: a sentence, not a command.
# Chinese words there are a sentence too (a <占位符> is not).
PROSE_RUN_RE = re.compile(r"(?<![\w/.-])[a-z]+ [a-z]+ [a-z]+(?![\w/.=-])|[\u4e00-\u9fff]{2}")
QUOTED_OR_NOTE_RE = re.compile(r"\"[^\"]*\"|'[^']*'|\([^()]*\)|（[^（）]*）|<[^<>]*>")
# What ends a clause at the end of a line; any other last character means the line wraps.
CLAUSE_ENDS = (".", ":", ";", "!", "?", "。", "：", "；", "！", "？")
# The discipline names prevention notes start with, in the words the catalog and teams use.
DISCIPLINE_NAMES = (
    "version lock",
    "validate first",
    "tiny-sample trial run",
    "tiny-sample trial run for serving",
    "reconcile",
    "artifact reconciliation",
    "版本锁定",
    "校验先行",
    "先校验",
    "小样试跑",
    "产物对账",
    "产物核对",
)
LABEL_PREFIX_RE = re.compile(
    r"^(?:" + "|".join(re.escape(name) for name in DISCIPLINE_NAMES) + r")\s*[:：]\s*",
    re.IGNORECASE,
)


def shorten(text: str, limit: int) -> str:
    """The text on one line, cut at a word boundary with an ellipsis when it is too long."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    return SENTENCE_END_RE.split(text, maxsplit=1)[0] if text else ""


def condense_title(title: str) -> str:
    return shorten(title, TITLE_CHARS)


def condense_symptom(symptom: str) -> str:
    return shorten(first_line(symptom), SYMPTOM_CHARS)


def condense_root_cause(root_cause: str) -> str:
    return shorten(first_sentence(root_cause), ROOT_CAUSE_CHARS)


def condense_prevention(prevention: str) -> str:
    """The prevention note without the discipline name it usually starts with ("Reconcile: …"),
    which the matrix already shows."""
    note = LABEL_PREFIX_RE.sub("", first_sentence(prevention), count=1)
    return shorten(note, PREVENTION_CHARS)


def _looks_like_command(text: str) -> bool:
    word = text.split(maxsplit=1)[0] if text else ""
    if not word or not (word in PROGRAMS or CODE_WORD_RE.match(word)):
        return False
    return not PROSE_RUN_RE.search(QUOTED_OR_NOTE_RE.sub(" ", text))


def _clean_command(text: str) -> str:
    text = PROSE_AFTER_RE.sub("", TRAILING_NOTE_RE.sub("", text.strip()))
    return text.strip().rstrip(";；,，").strip()


def _after_colon(line: str) -> str:
    positions = [(line.find(colon), colon) for colon in COLONS if colon in line]
    if not positions:
        return ""
    index, colon = min(positions)
    return line[index + len(colon) :]


def remedy_command(remedy: str) -> str:
    """The first command of a remedy, whole: a `quoted` span, the text after a step's colon, or
    an indented line under a step — whichever comes first in the text. A line the remedy
    wraps onto the next one, or that continues the sentence of the line before, holds a piece
    of a sentence, never a whole command: it is passed over."""
    lines = remedy.splitlines()
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        quoted = BACKTICKS_RE.search(line)
        if quoted:
            return quoted[1].strip()
        if _wraps_on(lines, index):
            continue
        if STEP_RE.match(line) or not line[:1].isspace():
            after = _clean_command(_after_colon(STEP_RE.sub("", line)))
            if _looks_like_command(after):
                return after
            continue
        if not _opens_a_line(lines, index):
            continue
        candidate = _clean_command(line)
        if _looks_like_command(candidate):
            return candidate
    return ""


def _wraps_on(lines: list[str], index: int) -> bool:
    """Whether the sentence of line `index` goes on in the next line (hard-wrapped text)."""
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if not following.strip() or not following[:1].isspace() or STEP_RE.match(following):
        return False
    if lines[index][:1].isspace() and _looks_like_command(_clean_command(following)):
        return False  # a command line under another one
    return not lines[index].rstrip().endswith(CLAUSE_ENDS)


def _opens_a_line(lines: list[str], index: int) -> bool:
    """Whether an indented line starts afresh: the line before ended a clause (a colon
    introducing commands, or a command of its own) rather than breaking a sentence."""
    before = next((line for line in reversed(lines[:index]) if line.strip()), "")
    return before.rstrip().endswith(CLAUSE_ENDS) or (
        before[:1].isspace() and _looks_like_command(_clean_command(before))
    )


def condense_remedy(remedy: str) -> tuple[str, str]:
    """(lead, command): the first step in a few words, and its command intact ("" when none)."""
    command = remedy_command(remedy)
    lead = STEP_RE.sub("", first_line(remedy))
    if command and command in lead:
        lead = lead.split(command)[0]
    lead = lead.replace("`", "").rstrip(" :：;")
    return shorten(lead, REMEDY_LEAD_CHARS if command else REMEDY_ALONE_CHARS), command
