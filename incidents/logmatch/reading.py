"""Turn a pasted or uploaded log (bytes or str) into clean text lines.

Contract
--------
``read_input(data, limits)`` returns a ``ReadResult`` or raises one of the ``InputError``
subclasses, whose messages are meant for the person who pasted the log:

* ``InputTooLarge`` when the UTF-8 size exceeds ``limits.max_bytes`` (checked first);
* ``BinaryInput`` for a known binary signature (gzip, ELF, PNG, zip, ...) or a large share
  of NUL/control bytes or of undecodable bytes;
* ``EmptyInput`` when nothing but whitespace (or escape codes) remains.

Otherwise the text is decoded as UTF-8 (a UTF-16 byte-order mark is honoured); bytes that are
not UTF-8 but are GB18030 (GBK, from Chinese Windows consoles and older toolchains) with
Chinese text in them are decoded as GB18030; else each invalid sequence becomes U+FFFD and is
counted. NUL bytes and other control characters (except tab) are dropped, ANSI escape
sequences are stripped. Lines end at "\\n" ("\\r\\n" is one line end; a final newline adds no
empty line). A lone carriage return also ends a line, except that a progress bar redrawing
itself ("10%|█ |", "3/9 [00:01<00:02, 2.1it/s]") keeps only its last drawing: an error
printed between two redraws is never dropped. Lines longer than ``limits.max_line_chars``
are cut and counted. Every step is linear, so arbitrary bytes never crash or stall it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .types import BinaryInput, EmptyInput, InputTooLarge, Limits


@dataclass(frozen=True)
class ReadResult:
    lines: list[str]  # one entry per input line, in order
    invalid_bytes: int  # invalid UTF-8 sequences replaced
    cut_lines: int  # lines cut to limits.max_line_chars
    encoding: str = "utf-8"  # what the bytes were decoded as


_MAGIC = (
    b"\x1f\x8b",  # gzip
    b"\x7fELF",
    b"\x89PNG",
    b"PK\x03\x04",  # zip, jar, wheel, .pt checkpoints
    b"BZh",
    b"\xfd7zXZ\x00",
    b"\x28\xb5\x2f\xfd",  # zstd
    b"7z\xbc\xaf\x27\x1c",
    b"\xff\xd8\xff",  # JPEG
    b"GIF87a",
    b"GIF89a",
    b"%PDF-",
    b"\xca\xfe\xba\xbe",  # Java class, Mach-O fat
    b"\xcf\xfa\xed\xfe",  # Mach-O
    b"SQLite format 3\x00",
    b"\x89HDF",
    b"\x93NUMPY",
    b"RIFF",  # wav, avi
    b"fLaC",
    b"OggS",
    b"ID3",  # mp3
)
_BOMS = ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))

# C0 controls that never occur in a text log; tab, newline, carriage return, form feed and
# ESC (colour codes, stripped later) are allowed.
_CONTROL_BYTES = bytes([*range(0, 9), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
_TEXT_BYTES = bytes(b for b in range(256) if b not in _CONTROL_BYTES)
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")
_BINARY_SHARE = 0.10  # more than this share of control bytes: not a text log
_INVALID_SHARE = 0.30  # more than this share of undecodable bytes: not a text log
_SAMPLE = 1 << 16

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase line
    r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|\x1b[ -/]*[0-~]"  # other escapes: ESC ( B, ESC 7, ESC M ...
    r"|\x1b"  # a lone ESC left over from a cut sequence
)
_SURROGATES = re.compile("[\ud800-\udfff]")
_CJK = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_CHINESE_SHARE = 0.7
# A progress bar's drawing: a percentage, a bar of blocks or hashes, "3/9 [", a rate.
_PROGRESS_CHARS = 256
_PROGRESS = re.compile(r"\d%|[█▏▎▍▌▋▊▉#=]{3}|\d+/\d+ \[|\d(?:it|s|B)/s\b|s/it\b|\bETA\b")


_DEFAULT_LIMITS = Limits()


def read_input(data: bytes | str, limits: Limits = _DEFAULT_LIMITS) -> ReadResult:
    """Decode, clean and split a log; see the module docstring for the exact contract."""
    encoding = "utf-8"
    if isinstance(data, str):
        text, invalid = _from_str(data, limits)
    else:
        text, invalid, encoding = _from_bytes(bytes(data), limits)

    # Decided on the raw text: a last line made only of control characters is still a line.
    final_newline = text.endswith("\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if _control_count(text):
        text = _CONTROL_CHARS.sub("", text)
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise EmptyInput()

    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if final_newline:
        text = text[:-1]
    lines = text.split("\n")
    if "\r" in text:
        lines = [kept for line in lines for kept in _segments(line)]

    cap = limits.max_line_chars
    cut = 0
    if max(map(len, lines)) > cap:
        for i, s in enumerate(lines):
            if len(s) > cap:
                lines[i] = s[:cap]
                cut += 1
    return ReadResult(lines=lines, invalid_bytes=invalid, cut_lines=cut, encoding=encoding)


def _from_bytes(data: bytes, limits: Limits) -> tuple[str, int, str]:
    if len(data) > limits.max_bytes:
        raise InputTooLarge(len(data), limits.max_bytes)
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(encoding, errors="replace")
            return text, text.count("\ufffd"), encoding
    if data.startswith(_MAGIC):
        raise BinaryInput()
    sample = data[:_SAMPLE]
    _check_controls(len(sample.translate(None, _TEXT_BYTES)), len(sample))

    try:
        return data.decode("utf-8"), 0, "utf-8"
    except UnicodeDecodeError:
        pass
    chinese = _as_chinese(data)
    if chinese is not None:
        return chinese, 0, "gb18030"
    text = data.decode("utf-8", errors="replace")
    invalid = text.count("\ufffd") - data.count("\ufffd".encode())
    if invalid > 8 and invalid > _INVALID_SHARE * len(text):
        raise BinaryInput()
    return text, invalid, "utf-8"


def _as_chinese(data: bytes) -> str | None:
    """`data` decoded as GB18030 when that is what it is: it decodes without error and most
    of what is not ASCII is Chinese (GB18030 maps nearly any byte pairs to something, so
    decoding alone proves nothing)."""
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        return None
    wide = len(text) - len(text.encode("ascii", "ignore"))
    cjk = len(_CJK.findall(text))
    return text if wide and cjk >= _CHINESE_SHARE * wide else None


def _from_str(data: str, limits: Limits) -> tuple[str, int]:
    try:
        size = len(data.encode("utf-8"))
        invalid = 0
    except UnicodeEncodeError:  # lone surrogates, e.g. from a surrogateescape decode
        data, invalid = _SURROGATES.subn("\ufffd", data)
        size = len(data.encode("utf-8"))
    if size > limits.max_bytes:
        raise InputTooLarge(size, limits.max_bytes)
    sample = data[:_SAMPLE]
    _check_controls(_control_count(sample), len(sample))
    return data, invalid


def _control_count(text: str) -> int:
    """How many characters of ``_CONTROL_CHARS`` ``text`` holds (each is one UTF-8 byte, and
    no multi-byte sequence holds such a byte; bytes.translate is several times faster than a
    regex scan)."""
    data = text.encode("utf-8", "surrogatepass")
    return len(data) - len(data.translate(None, _CONTROL_BYTES))


def _check_controls(controls: int, total: int) -> None:
    # A few stray NULs are dropped; a text made largely of them is a binary file (or UTF-16
    # without a byte-order mark). Very short inputs need a higher share to be called binary.
    if controls and ((controls >= 8 and controls > _BINARY_SHARE * total) or controls * 3 > total):
        raise BinaryInput()


def _segments(line: str) -> list[str]:
    """What a line holding lone carriage returns printed: every non-empty segment, except
    that a run of progress-bar drawings (or of the same text drawn again) keeps its last."""
    segments = [segment for segment in line.split("\r") if segment.strip()]
    if not segments:
        return [""]
    kept = [
        segment
        for segment, following in zip(segments, [*segments[1:], None], strict=True)
        if following is None
        or not (segment == following or (_is_progress(segment) and _is_progress(following)))
    ]
    return kept


def _is_progress(segment: str) -> bool:
    # A drawing is short; looking at its start bounds the work on a hostile megabyte line.
    return _PROGRESS.search(segment[:_PROGRESS_CHARS]) is not None
