"""Replace secrets in a pasted log with `[REDACTED:<kind>]` before anything stores or shows it.

The patterns are project-owned and tested with planted samples of every kind. Each one keys on
a vendor prefix or on a named field (`password=`, `Authorization:`), never on entropy alone, so
hex hashes, UUIDs, git SHAs, paths and numbers survive untouched. Redaction never changes the
number of lines: a private-key block keeps its lines, each body line replaced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]  # the pass is skipped unless one of these substrings occurs
    keeps_field: bool = False  # group 1 is a field name to keep, group 2 the secret

    @property
    def mark(self) -> str:
        return f"[REDACTED:{self.kind}]"


def _token(kind: str, prefix: str, body: str, hints: tuple[str, ...]) -> _Rule:
    """A token format with a fixed vendor prefix.

    It must not start mid-word ("task-…" is no OpenAI key); `_redact` checks that on each
    candidate, because a leading look-behind would hide the prefix from `re`'s fast scan.
    """
    return _Rule(kind, re.compile(rf"(?:{prefix}){body}"), hints)


_WORD_BEFORE = re.compile(r"[\w-]")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*$")
_GENERATED = re.compile(r"\d|[A-Z].*[a-z]|[a-z].*[A-Z]|[^\w.\-]")
_TOKENIZER_FIELD = re.compile(
    r"(?i)(?:^|[._\-])(?:pad|eos|bos|unk|sep|cls|mask|special|start|end)_token[\"']?\s*[:=]"
)

_RULES: tuple[_Rule, ...] = (
    _token(
        "github-token",
        r"gh[pousr]_",
        r"[A-Za-z0-9]{36,255}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _token("github-token", r"github_pat_", r"[A-Za-z0-9_]{40,255}", ("github_pat_",)),
    _token("gitlab-token", r"glpat-", r"[A-Za-z0-9_\-]{20,}", ("glpat-",)),
    _token("huggingface-token", r"hf_", r"[A-Za-z0-9]{30,}(?![\w-])", ("hf_",)),
    _token("anthropic-key", r"sk-ant-", r"[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    _token(
        "openai-key",
        r"sk-",
        r"(?:proj-|svcacct-|admin-)?(?=[A-Za-z_\-]*\d)[A-Za-z0-9_\-]{20,}",
        ("sk-",),
    ),
    _token("slack-token", r"xox[abposre]-", r"[A-Za-z0-9\-]{10,}", ("xox",)),
    _token(
        "aws-access-key",
        r"AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA",
        r"[A-Z0-9]{16}(?![A-Za-z0-9])",
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
    ),
    _token("google-api-key", r"AIza", r"[0-9A-Za-z_\-]{35}", ("AIza",)),
    _token("jwt", r"eyJ", r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", ("eyJ",)),
    _token("pypi-token", r"pypi-", r"[A-Za-z0-9_\-]{50,}", ("pypi-",)),
    _Rule(
        "aws-secret-key",
        re.compile(
            r"(?i)(aws_secret_access_key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        ("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"),
        keeps_field=True,
    ),
    _Rule(
        "url-password",
        re.compile(r"(://[^\s/:@\"'\[\]]*:)([^\s/@\"'\[\]]+)(?=@)"),
        ("@",),
        keeps_field=True,
    ),
    _Rule(
        "authorization",
        re.compile(
            r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot|digest)\s+)?)"
            r"([^\s\"',;\[]{6,})"
        ),
        ("uthorization", "UTHORIZATION"),
        keeps_field=True,
    ),
    _Rule(
        "bearer-token",
        re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9\-._~+/]{16,}=*)"),
        ("earer", "EARER"),
        keeps_field=True,
    ),
)

# A named secret in an assignment, a YAML/JSON field or a command-line flag. The field name
# must *end* in the secret word, so `max_tokens=512` and `token_count: 9` stay; numbers, null
# words and placeholders (`<token>`, `${TOKEN}`, `***`) are not secrets. Spelled without (?i)
# so that `re` can skip ahead by the first letters; `_is_secret_field` checks the whole name.
_ASSIGNMENT = _Rule(
    "secret",
    re.compile(
        r"((?:[Pp]ass(?:word|wd|phrase)|PASS(?:WORD|WD|PHRASE)|[Pp]wd|PWD|[Ss]ecret|SECRET"
        r"|[Tt]oken|TOKEN|[Cc]redentials?|CREDENTIALS?"
        r"|(?:[Aa]pi|API|[Aa]ccess|ACCESS|[Pp]rivate|PRIVATE|[Ss]ecret|SECRET|[Aa]uth|AUTH)"
        r"[_\-]?(?:[Kk]ey|KEY))"
        r"[\"']?\s*[:=]\s*[\"']?)"
        r"(?!(?i:none|null|true|false|nil|undefined|required|optional)\b)"
        r"(?![\d.]+(?![^\s\"',;&]))"
        r"([^\s\"',;&<>${}()\[\]*]{6,})"
    ),
    (),
    keeps_field=True,
)

# Which rules can fire at all, found by one RE2 pass over the text (a fraction of a
# millisecond per 100 KB): most logs hold no secret, and the assignment pattern alone costs
# `re` some 0.1 s/MB.
_ASSIGNMENT_HINT = r"(?i)(?:pass|pwd|secret|token|credential|key)\w*[\"']?\s*[:=]"


def _hint_set() -> tuple[re2.Set, list[_Rule]]:
    hints = re2.Set.SearchSet(re2.Options())
    owners: list[_Rule] = []
    for rule in _RULES:
        for hint in rule.hints:
            hints.Add(re2.escape(hint))
            owners.append(rule)
    hints.Add(_ASSIGNMENT_HINT)
    owners.append(_ASSIGNMENT)
    hints.Compile()
    return hints, owners


_HINTS, _HINT_OWNERS = _hint_set()

_PEM_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----")
_PEM_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]*|[A-Za-z\-]+: .*")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")


def redact(text: str) -> tuple[str, int]:
    """Return `text` with every secret replaced, and how many were replaced."""
    text, total = _redact_private_keys(text)
    hinted = {_HINT_OWNERS[index] for index in _HINTS.Match(text) or ()}
    for rule in (*_RULES, _ASSIGNMENT):
        if rule in hinted:
            text, count = _redact(rule, text)
            total += count
    return text, total


def _redact(rule: _Rule, text: str) -> tuple[str, int]:
    replaced = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal replaced
        start = match.start()
        if rule is _ASSIGNMENT:
            if not _is_secret_field(text, match):
                return match.group(0)
        elif not rule.keeps_field and start and _WORD_BEFORE.match(text[start - 1]):
            return match.group(0)
        replaced += 1
        return f"{match.group(1)}{rule.mark}" if rule.keeps_field else rule.mark

    return rule.pattern.sub(replace, text), replaced


def _is_secret_field(text: str, match: re.Match[str]) -> bool:
    """Whether an assignment match is a credential rather than configuration or prose.

    Tokenizer fields (`pad_token=`) are configuration. After a colon, a plain word is prose
    ("provide a token: huggingface-cli login"), so the value must look generated: a digit,
    mixed case or a symbol.
    """
    start = match.start()
    name_start = _NAME_CHARS.search(text, max(0, start - 64), start)
    name = (name_start.group(0) if name_start else "") + match.group(1)
    if _TOKENIZER_FIELD.search(name):
        return False
    if "=" in match.group(1):
        return True
    return bool(_GENERATED.search(match.group(2)))


def _redact_private_keys(text: str) -> tuple[str, int]:
    if "PRIVATE KEY" not in text:
        return text, 0
    lines = text.split("\n")
    count = 0
    index = 0
    while index < len(lines):
        if not _PEM_BEGIN.search(lines[index]):
            index += 1
            continue
        count += 1
        index += 1
        # A log tail may cut the block before its END line: take body-looking lines only.
        while index < len(lines):
            line = lines[index].rstrip("\r")
            if _PEM_END.search(line):
                index += 1
                break
            if not _PEM_BODY_LINE.fullmatch(line):
                break
            if line:
                lines[index] = "[REDACTED:private-key]"
            index += 1
    return "\n".join(lines), count
