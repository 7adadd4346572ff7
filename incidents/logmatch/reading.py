"""Turn a pasted or uploaded log (bytes or str) into clean text lines.

Contract
--------
``read_input(data, limits)`` returns a ``ReadResult`` or raises one of the ``InputError``
subclasses, whose messages are meant for the person who pasted the log:

* ``InputTooLarge`` when the UTF-8 size exceeds ``limits.max_bytes`` (checked first);
* ``BinaryInput`` for a known binary signature (gzip, ELF, PNG, zip, ...) or a large share
  of NUL/control bytes or of undecodable bytes;
* ``EmptyInput`` when nothing but whitespace (or escape codes) remains.

Otherwise the text is decoded as UTF-8 (a UTF-16 byte-order mark is honoured), each invalid
sequence becomes U+FFFD and is counted, NUL bytes and other control characters (except tab)
are dropped, ANSI escape sequences are stripped. Lines are split on "\\n" only: "\\r\\n" is one
line end and a final newline adds no empty line. A carriage return inside a line (progress
bars redrawing themselves) keeps only the last non-empty segment, so the number of lines is
always the number of "\\n"-separated lines. Lines longer than ``limits.max_line_chars`` are cut
and counted. Every step is linear, so arbitrary bytes never crash or stall it.
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


_DEFAULT_LIMITS = Limits()


def read_input(data: bytes | str, limits: Limits = _DEFAULT_LIMITS) -> ReadResult:
    """Decode, clean and split a log; see the module docstring for the exact contract."""
    if isinstance(data, str):
        text, invalid = _from_str(data, limits)
    else:
        text, invalid = _from_bytes(bytes(data), limits)

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
        lines = [_last_segment(s) if "\r" in s else s for s in lines]

    cap = limits.max_line_chars
    cut = 0
    if max(map(len, lines)) > cap:
        for i, s in enumerate(lines):
            if len(s) > cap:
                lines[i] = s[:cap]
                cut += 1
    return ReadResult(lines=lines, invalid_bytes=invalid, cut_lines=cut)


def _from_bytes(data: bytes, limits: Limits) -> tuple[str, int]:
    if len(data) > limits.max_bytes:
        raise InputTooLarge(len(data), limits.max_bytes)
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(encoding, errors="replace")
            return text, text.count("\ufffd")
    if data.startswith(_MAGIC):
        raise BinaryInput()
    sample = data[:_SAMPLE]
    _check_controls(len(sample.translate(None, _TEXT_BYTES)), len(sample))

    text = data.decode("utf-8", errors="replace")
    invalid = text.count("\ufffd") - data.count("\ufffd".encode())
    if invalid > 8 and invalid > _INVALID_SHARE * len(text):
        raise BinaryInput()
    return text, invalid


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


def _last_segment(line: str) -> str:
    for segment in reversed(line.split("\r")):
        if segment.strip():
            return segment
    return ""
