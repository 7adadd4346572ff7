"""Replace secrets in a pasted log with `[REDACTED:<kind>]` before anything stores or shows it.

The rules are project-owned and tested with planted samples of every kind. Each one keys on a
vendor prefix or on a named field (`password=`, `Authorization:`, `"private_key":`, `-p` of
mysql, `-u` of curl); the one rule without a name (an AWS secret key on its own) wants 40
characters of mixed case, digits and entropy, so hex hashes, UUIDs, git SHAs, paths and
numbers survive untouched. Redaction never changes the number of lines: a private-key block
keeps its lines (and their log prefixes), each body replaced.

Every pattern is RE2, so the work is linear in the text whatever was pasted; the checks made
in Python on a match look at a bounded stretch around it. With `addresses=True`, e-mail
addresses, private IPv4 addresses and internal host names are replaced too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import re2

_DISTINCT_CHARACTERS = 24
_OPTIONS = re2.Options()
_OPTIONS.max_mem = 64 << 20
_NAME_LOOKBACK = 64  # characters of a field name looked at before its secret
_LINE_LOOKBACK = 4096  # a line is at most this long once read


def _re(pattern: str) -> re2._Regexp:
    return re2.compile(pattern, _OPTIONS)


Check = Callable[[str, "re2._Match"], bool]


def _always(text: str, match: re2._Match) -> bool:
    return True


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re2._Regexp  # group 1, when it has one, is the secret; else the whole match
    hints: tuple[str, ...]  # RE2 patterns: the rule runs only if one of them occurs
    check: Check = _always
    # Where the secret is in a match, when that is not simply group 1 (or the whole match).
    locate: Callable[[str, re2._Match], tuple[int, int] | None] | None = None

    @property
    def mark(self) -> str:
        return f"[REDACTED:{self.kind}]"

    def span(self, text: str, match: re2._Match) -> tuple[int, int] | None:
        if self.locate is not None:
            return self.locate(text, match)
        if not self.check(text, match):
            return None
        return match.span(1) if self.pattern.groups else match.span()


# A token must not start mid-word ("task-…" is no OpenAI key): its pattern asks for the start
# of the text, or a character that cannot be part of a token, before it. So a token repeated
# without a break (a hostile paste) gives no match at all, not one per repeat to check.
_WORD_START = r"(?:^|[^A-Za-z0-9_\-])"


def _ends_a_word(text: str, match: re2._Match) -> bool:
    end = match.end(1)
    return end == len(text) or not (text[end].isalnum() or text[end] in "_-")


def _with_digit(text: str, match: re2._Match) -> bool:
    return any(char.isdigit() for char in match.group(1))


def _token(kind: str, pattern: str, hints: tuple[str, ...], check: Check = _always) -> _Rule:
    return _Rule(
        kind, _re(f"{_WORD_START}({pattern})"), tuple(re2.escape(hint) for hint in hints), check
    )


# --- values after a named field --------------------------------------------------------------

_NULL_WORDS = frozenset(("none", "null", "true", "false", "nil", "undefined", "required"))
_NULL_WORDS |= {"optional", "empty", "unset", "changeme", "redacted", "xxx", "****"}
_TOKENIZER_FIELD = _re(
    r"(?i)(?:^|[^a-z0-9])(?:pad|eos|bos|unk|sep|cls|mask|special|start|end)_token[\"']?\s*[:=]"
)
_NAME_CHARS = _re(r"[A-Za-z0-9_.\-]*$")
# A word of a vocabulary, not a credential: "Skipping unknown token: 'schwelten.'"
_VOCABULARY_TOKEN = _re(
    r"(?i)\b(?:unknown|unexpected|invalid|special|added|new|oov|missing|bad) token\s*[:=]\s*[\"']?$"
)
_GENERATED = _re(r"[0-9]|[A-Z].*[a-z]|[a-z].*[A-Z]|[^\w.\-]")
_NUMBER = _re(r"[0-9.]+")
_TOKEN_CHARS = _re(r"[A-Za-z0-9_\-.]+")
# What documentation writes where a secret goes: hf_xxx, sk-xxxxxxxx, YOUR_API_KEY, your-token.
_PLACEHOLDER = _re(r"(?i)(?:[a-z]{1,8}[_\-])?(?:x{3,}|\.{3,}|your[_\-]?[a-z_\-]*)[.,;:]?")


def _a_value(value: str) -> bool:
    """Not a null word, a number, a placeholder or a secret already replaced: something that
    can be a secret."""
    return not (
        "[REDACTED:" in value
        or value.lower().strip("'\"") in _NULL_WORDS
        or _NUMBER.fullmatch(value)
        or _PLACEHOLDER.fullmatch(value.strip("'\""))
        or value.startswith(("<", "${", "$(", "{{", "%", "***"))
    )


def _field_name(text: str, match: re2._Match) -> str:
    start = match.start()
    before = _NAME_CHARS.search(text[max(0, start - _NAME_LOOKBACK) : start])
    return (before.group(0) if before else "") + match.group(0)[: match.start(1) - start]


def _line_rest(text: str, position: int) -> str:
    end = text.find("\n", position, position + _LINE_LOOKBACK)
    return text[position:end] if end != -1 else text[position : position + _LINE_LOOKBACK]


def _secret_field(text: str, match: re2._Match) -> bool:
    """An assignment, a YAML or JSON field or a flag whose value is a credential rather than
    configuration or prose. Tokenizer fields (`pad_token=`) are configuration. After `=`, any
    value; after `:`, a value that looks generated (a digit, mixed case, a symbol), or one
    that is all there is to the rest of the line (`password: hunter`, as YAML writes it),
    never a word in a sentence ("provide a token: huggingface-cli login")."""
    value = match.group(1)
    if not _a_value(value) or _TOKENIZER_FIELD.search(_field_name(text, match)):
        return False
    if _VOCABULARY_TOKEN.search(text[max(0, match.start() - _NAME_LOOKBACK) : match.start(1)]):
        return False
    if "=" in match.group(0)[: match.start(1) - match.start()]:
        return True
    return bool(_GENERATED.search(value)) or not _line_rest(text, match.end(1)).strip(" \"'")


def _quoted_field(text: str, match: re2._Match) -> bool:
    return _a_value(match.group(1)) and not _TOKENIZER_FIELD.search(_field_name(text, match))


def _on_a_mysql_line(text: str, match: re2._Match) -> bool:
    start = text.rfind("\n", max(0, match.start() - _LINE_LOOKBACK), match.start()) + 1
    line = text[start : match.start()].lower()
    return ("mysql" in line or "mariadb" in line) and not match.group(1).isdigit()


def _high_entropy(text: str, match: re2._Match) -> bool:
    """40 characters that look like an AWS secret key: both cases, digits, and as varied as
    a random string (at least 24 different characters: a git SHA has at most 16, a long
    identifier or a repeated pattern far fewer)."""
    value = match.group(1)
    end = match.end(1)
    if end < len(text) and (text[end].isalnum() or text[end] in "/+="):
        return False
    return (
        value.lower() != value
        and value.upper() != value
        and not value.isalpha()
        and len(set(value)) >= _DISTINCT_CHARACTERS
    )


def _user_info(text: str, match: re2._Match) -> tuple[int, str] | None:
    """Where the user info of `scheme://user[:password]@host` starts, and the text of it (the
    host is after the last "@" of the authority: a password may itself hold "@" or "#")."""
    start, end = match.span(1)
    at = text.rfind("@", start, end)
    return (start, text[start:at]) if at > start else None


def _url_password(text: str, match: re2._Match) -> tuple[int, int] | None:
    """The password of `scheme://user:password@host`."""
    found = _user_info(text, match)
    if found is None:
        return None
    start, info = found
    colon = info.find(":")
    if colon == -1 or colon + 1 >= len(info):
        return None
    return start + colon + 1, start + len(info)


def _url_token(text: str, match: re2._Match) -> tuple[int, int] | None:
    """The user of `scheme://token@host` when it is no name but a generated token (a Sentry
    DSN's key, a token put where git expects a user): long, letters and digits."""
    found = _user_info(text, match)
    if found is None:
        return None
    start, user = found
    if len(user) < 16 or not _TOKEN_CHARS.fullmatch(user) or not _letters_and_digits(user):
        return None
    return start, start + len(user)


def _letters_and_digits(value: str) -> bool:
    return any(char.isdigit() for char in value) and any(char.isalpha() for char in value)


def _found_value(text: str, match: re2._Match) -> bool:
    """The value found can be a secret (see `_a_value`)."""
    return _a_value(match.group(1))


def _generated_value(text: str, match: re2._Match) -> bool:
    """A value that looks generated (a digit, mixed case, a symbol), not a word."""
    return _found_value(text, match) and bool(_GENERATED.search(match.group(1)))


def _token_like_value(text: str, match: re2._Match) -> bool:
    """A value of letters and digits both, as a token is (`--token abC123…`), not a word."""
    return _found_value(text, match) and _letters_and_digits(match.group(1))


# A flag whose next word is a credential: --token, --api-key, --hf-token, --secret, --password.
_SECRET_FLAG = (
    r"(?:token|api[_\-]?key|secret|passwd|pwd|credentials?|access[_\-]?key|auth[_\-]?key)"
)

# A secret's value ends at white space, and at CJK text or punctuation: a Chinese log writes
# `token=abc123，下载失败`, and the comma and what follows are no part of the token.
_SPACE_OR_WIDE = r"\s\x{3000}-\x{303F}\x{FF00}-\x{FFEF}\x{4E00}-\x{9FFF}"

_SECRET_NAME = (
    r"(?:pass(?:word|wd|phrase)|pwd|secret|token|credentials?"
    r"|(?:api|access|private|secret|auth|account|shared_?access)[_\-]?key)"
)

_RULES: tuple[_Rule, ...] = (
    _token(
        "github-token", r"gh[pousr]_[A-Za-z0-9]{36,255}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
    ),
    _token("github-token", r"github_pat_[A-Za-z0-9_]{40,255}", ("github_pat_",)),
    _token("gitlab-token", r"glpat-[A-Za-z0-9_\-]{20,}", ("glpat-",)),
    _token("huggingface-token", r"hf_[A-Za-z0-9]{30,}", ("hf_",), _ends_a_word),
    _token("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    _token(
        "openai-key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",), _with_digit
    ),
    _token("stripe-key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", ("_live_", "_test_")),
    _token("slack-token", r"xox[abposre]-[A-Za-z0-9\-]{10,}", ("xox",)),
    _token(
        "aws-access-key",
        r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}",
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
        _ends_a_word,
    ),
    _token("google-api-key", r"AIza[0-9A-Za-z_\-]{35}", ("AIza",)),
    _token("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", ("eyJ",)),
    _token("pypi-token", r"pypi-[A-Za-z0-9_\-]{50,}", ("pypi-",)),
    _token("sendgrid-key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", ("SG.",)),
    _Rule(
        "telegram-token",
        _re(r"(?:^|[^A-Za-z0-9])(?:bot)?([0-9]{8,10}:AA[A-Za-z0-9_\-]{32,33})"),
        (":AA",),
        _ends_a_word,
    ),
    _Rule(  # chat webhooks: the URL itself is the credential
        "webhook",
        _re(
            r"(?i)(?:hooks\.slack\.com/(?:services|workflows|triggers)/|discord(?:app)?\.com/api/webhooks/[0-9]+/"
            r"|open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=)"
            r"([A-Za-z0-9_\-/]{8,})"
        ),
        ("(?i)hooks.slack.com", "(?i)discord", "(?i)/open-apis/bot/", "(?i)qyapi.weixin"),
    ),
    _Rule(  # a whole PEM block on one line, as JSON holds it ("-----BEGIN…\nMII…\n-----END…")
        "private-key",
        _re(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(.*?)-----END [A-Z0-9 ]*PRIVATE KEY-----"),
        ("PRIVATE KEY",),
    ),
    _Rule(
        "aws-secret-key",
        _re(r"(?i)aws_secret_access_key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})"),
        ("(?i)aws_secret_access_key",),
    ),
    _Rule(
        "aws-secret-key",
        _re(r"(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})"),
        (r"[A-Za-z0-9/+]{40}",),
        _high_entropy,
    ),
    _Rule(
        "azure-key",
        _re(
            rf"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)=([^;{_SPACE_OR_WIDE}\"']{{8,}})"
        ),
        ("(?i)accountkey=", "(?i)sharedaccess"),
    ),
    _Rule(
        "url-password",
        _re(rf"://([^{_SPACE_OR_WIDE}/\"'<>\[\]]+)"),
        ("://[^/]*@",),
        locate=_url_password,
    ),
    _Rule(
        "url-token",
        _re(rf"://([^{_SPACE_OR_WIDE}/\"'<>\[\]]+)"),
        ("://[^/]*@",),
        locate=_url_token,
    ),
    _Rule(
        "authorization",
        _re(
            r"(?i)authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot|digest)\s+)?"
            rf"([^{_SPACE_OR_WIDE}\"',;\[]{{6,}})"
        ),
        ("(?i)authorization",),
    ),
    _Rule(
        "bearer-token",
        _re(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)"),
        ("(?i)bearer",),
    ),
    _Rule(
        "secret",
        _re(
            rf"(?:^|\s)(?:-u|--user)(?:\s+|=)[\"']?[^{_SPACE_OR_WIDE}:\"']+:([^{_SPACE_OR_WIDE}\"']{{3,}})"
        ),
        (r"-u\s", "--user"),
        _found_value,
    ),
    _Rule(
        "secret",
        _re(rf"(?:^|\s)-p([^{_SPACE_OR_WIDE}\"']{{3,}})"),
        ("(?i)mysql", "(?i)mariadb"),
        _on_a_mysql_line,
    ),
    _Rule(
        "secret",
        _re(rf"--password(?:=|\s+)[\"']?([^{_SPACE_OR_WIDE}\"']{{3,}})"),
        ("--password",),
        lambda text, match: _a_value(match.group(1)) and not match.group(1).startswith("-"),
    ),
    _Rule(
        "secret",
        _re(rf"(?i)\"[A-Za-z0-9_.\-]*?{_SECRET_NAME}(?:_?id)?\"\s*:\s*\"([^\"\n]{{1,256}})\""),
        (rf"(?i){_SECRET_NAME}",),
        _quoted_field,
    ),
    _Rule(
        "secret",
        _re(
            rf"(?i){_SECRET_NAME}[\"']?[ \t]*[:=：][ \t]*[\"']?"
            rf"([^{_SPACE_OR_WIDE}\"',;&<>${{}}()\[\]*]{{6,}})"
        ),
        (rf"(?i){_SECRET_NAME}\w*[\"']?[ \t]*[:=：]",),
        _secret_field,
    ),
    _Rule(  # a flag and its value as separate words: --api-key 5f4d…, --token abC…
        "secret",
        _re(
            rf"(?i)(?:^|\s)--?(?:[a-z][a-z0-9_\-]*)?{_SECRET_FLAG}\s+[\"']?([^{_SPACE_OR_WIDE}\"']{{8,}})"
        ),
        (rf"(?i){_SECRET_FLAG}\s",),
        _token_like_value,
    ),
    _Rule(
        "secret",
        _re(
            r"(?:^|[^A-Za-z0-9])(?:[A-Za-z0-9]+_)*(?:SK|AK|sk|ak)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{16,})"
        ),
        (r"(?i)[as]k[\"']?\s*[:=]",),
        _generated_value,
    ),
    _Rule(  # Chinese field names: 密码：…, 密钥=…, 令牌为: …
        "secret",
        _re(
            rf"(?:密码|口令|密钥|秘钥|私钥|令牌|授权码)[ \t]*(?:是|为)?[ \t]*[:：=][ \t]*[\"'“]?"
            rf"([^{_SPACE_OR_WIDE}\"'”，。；,;]{{3,}})"
        ),
        (r"(?:密码|口令|密钥|秘钥|私钥|令牌|授权码)",),
        _found_value,
    ),
    _Rule(  # .netrc: machine host login user password secret
        "secret",
        _re(r"(?i)\blogin\s+\S+\s+password\s+(\S+)"),
        ("(?i)password",),
        _found_value,
    ),
    _Rule(
        "secret",
        _re(rf"\bsshpass\b[^\n]*?\s-p\s*[\"']?([^{_SPACE_OR_WIDE}\"']+)"),
        ("sshpass",),
        _found_value,
    ),
    _Rule(
        "secret",
        _re(r"\bwandb login\s+(?:--?\S+\s+)*([0-9a-f]{40,86})\b"),
        ("wandb login",),
    ),
    _Rule(  # a Docker config.json's registry credentials, base64 of user:password
        "secret",
        _re(r"\"auth\"\s*:\s*\"([A-Za-z0-9+/=]{12,})\""),
        ('"auth"',),
    ),
    _Rule(
        "cookie",
        _re(r"(?i)(?:^|[^a-z0-9\-])(?:set-)?cookie\s*:\s*([^\n]*=[^\n]*)"),
        ("(?i)cookie",),
        lambda text, match: len(match.group(1).strip()) >= 8,
    ),
)

_ADDRESS_RULES: tuple[_Rule, ...] = (
    _Rule(
        "email",
        _re(r"([A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,})"),
        ("@",),
    ),
    _Rule(
        "ip",
        _re(
            r"(?:^|[^0-9.])(10(?:\.[0-9]{1,3}){3}|192\.168(?:\.[0-9]{1,3}){2}"
            r"|172\.(?:1[6-9]|2[0-9]|3[01])(?:\.[0-9]{1,3}){2})"
        ),
        (r"(?:10|192\.168|172\.[123][0-9])\.[0-9]",),
        lambda text, match: (
            _ends_a_word(text, match) and (match.end(1) == len(text) or text[match.end(1)] != ".")
        ),
    ),
    _Rule(
        "host",
        _re(
            r"(?i)(?:^|[^a-z0-9_.\-])([a-z0-9][a-z0-9\-]*(?:\.[a-z0-9\-]+)*"
            r"\.(?:internal|corp|intranet|lan|local|home\.arpa|cluster\.local))"
        ),
        (r"(?i)\.(?:internal|corp|intranet|lan|local|home\.arpa)",),
        _ends_a_word,
    ),
)


def _hint_set(rules: tuple[_Rule, ...]) -> tuple[re2.Set, list[_Rule]]:
    hints = re2.Set.SearchSet(_OPTIONS)
    owners: list[_Rule] = []
    for rule in rules:
        for hint in rule.hints:
            hints.Add(hint)
            owners.append(rule)
    hints.Compile()
    return hints, owners


_HINTS, _HINT_OWNERS = _hint_set((*_RULES, *_ADDRESS_RULES))

_PEM_BEGIN = _re(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----\s*$")
_PEM_END = _re(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = _re(r"^(.*?)([A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]*={1,2})\s*$")
_PEM_HEADER = _re(r"[A-Za-z\-]+: \S")


def redact(text: str, *, addresses: bool = False) -> tuple[str, int]:
    """Return `text` with every secret (and, with `addresses`, every e-mail address, private
    IP address and internal host name) replaced, and how many were replaced."""
    text, total = _redact_private_keys(text)
    hinted = {_HINT_OWNERS[index] for index in _HINTS.Match(text) or ()}
    rules = (*_RULES, *(_ADDRESS_RULES if addresses else ()))
    for rule in rules:
        if rule in hinted:
            text, count = _redact(rule, text)
            total += count
    return text, total


def without_secrets(text: str) -> str:
    """`text` with every secret in it replaced, as in a pasted log: what a person types into
    the book (an incident, a note, a signature's examples) is shown to all who read it."""
    return redact(text)[0] if text else text


def _redact(rule: _Rule, text: str) -> tuple[str, int]:
    pieces: list[str] = []
    done = 0
    for match in rule.pattern.finditer(text):
        span = rule.span(text, match)
        if span is None or span[0] < done:
            continue
        start, end = span
        pieces += (text[done:start], rule.mark)
        done = end
    if not pieces:
        return text, 0
    pieces.append(text[done:])
    return "".join(pieces), len(pieces) // 2


def _redact_private_keys(text: str) -> tuple[str, int]:
    """PEM blocks, their lines kept: each body line's key material replaced, a log prefix
    (`2024-05-01 INFO `) left as it was. A tail may cut a block before its END line, so the
    block also ends at the first line that does not look like one of its lines."""
    if "PRIVATE KEY" not in text:
        return text, 0
    lines = text.split("\n")
    count = 0
    index = 0
    while index < len(lines):
        begin = _PEM_BEGIN.search(lines[index])
        if not begin:
            index += 1
            continue
        count += 1
        prefix = lines[index][: begin.start()]
        index += 1
        while index < len(lines):
            line = lines[index]
            if _PEM_END.search(line):
                index += 1
                break
            content = line[len(prefix) :] if line.startswith(prefix) else line
            body = _PEM_BODY.match(content)
            if body:
                lines[index] = (
                    line[: len(line) - len(content)] + body.group(1) + "[REDACTED:private-key]"
                )
            elif content.strip() and not _PEM_HEADER.match(content):
                break
            index += 1
    return "\n".join(lines), count
