"""read_input: decoding, cleaning, splitting, caps and refusals."""

from __future__ import annotations

import gzip
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incidents.logmatch.reading import ReadResult, read_input
from incidents.logmatch.types import BinaryInput, EmptyInput, InputError, InputTooLarge, Limits


def lines_of(data: bytes | str, **limits: int) -> list[str]:
    return read_input(data, Limits(**limits)).lines


class TestSplitting:
    def test_bytes_and_str_give_the_same_lines(self):
        text = "first line\nsecond line\n第三行\n"
        assert lines_of(text) == lines_of(text.encode()) == ["first line", "second line", "第三行"]

    def test_crlf_is_one_line_end(self):
        assert lines_of(b"a\r\nb\r\nc") == ["a", "b", "c"]

    def test_a_final_newline_adds_no_line(self):
        assert lines_of("a\nb\n") == ["a", "b"]
        assert lines_of("a\nb") == ["a", "b"]

    def test_empty_lines_inside_are_kept(self):
        assert lines_of("a\n\nb\n\n") == ["a", "", "b", ""]

    def test_progress_bar_keeps_its_last_non_empty_segment(self):
        data = "start\n 10%|█         |\r 20%|██        |\r100%|██████████|\r\nnext\n"
        assert lines_of(data) == ["start", "100%|██████████|", "next"]

    def test_a_lone_carriage_return_ends_a_line_and_empty_segments_go(self):
        assert lines_of("a\rb\r\r   \r\nc") == ["a", "b", "c"]

    def test_an_error_between_two_redraws_is_never_dropped(self):
        data = (
            "INFO a\rRuntimeError: CUDA out of memory. Tried to allocate\rINFO cleanup finished\r"
        )
        assert lines_of(data) == [
            "INFO a",
            "RuntimeError: CUDA out of memory. Tried to allocate",
            "INFO cleanup finished",
        ]
        bars = " 10%|█   | 1/9 [00:01<00:08]\rERROR boom\r 20%|██  | 2/9\r 30%|███ | 3/9"
        assert lines_of(bars) == [" 10%|█   | 1/9 [00:01<00:08]", "ERROR boom", " 30%|███ | 3/9"]

    def test_the_same_text_drawn_again_is_one_line(self):
        assert lines_of("x\r" * 50 + "\n" + "y\ry\n" * 10 + "tail") == ["x", *["y"] * 10, "tail"]

    def test_result_type(self):
        result = read_input("a\n")
        assert isinstance(result, ReadResult)
        assert (result.invalid_bytes, result.cut_lines) == (0, 0)


class TestCleaning:
    def test_ansi_colour_codes_are_stripped(self):
        data = b"\x1b[31mERROR\x1b[0m boom\n\x1b[1;32mINFO\x1b[m ok\n"
        assert lines_of(data) == ["ERROR boom", "INFO ok"]

    def test_other_escape_sequences_are_stripped(self):
        data = "\x1b]0;title\x07\x1b[2K\x1b[1A\x1b(Bdone\x1b"
        assert lines_of(data) == ["done"]

    def test_nul_bytes_are_removed(self):
        assert lines_of(b"foo\x00bar\nbaz\n") == ["foobar", "baz"]

    def test_stray_control_characters_are_removed_but_tabs_kept(self):
        assert lines_of("a\x07b\x08c\td\n") == ["abc\td"]

    def test_control_characters_past_the_sample_are_removed_too(self):
        text = "x\n" * 50_000 + "显存\x00不足\x07\n" + "y\x7f"
        for data in (text, text.encode()):
            assert read_input(data).lines == ["x"] * 50_000 + ["显存不足", "y"]

    def test_byte_order_mark_is_dropped(self):
        assert lines_of("\ufeffhello".encode()) == ["hello"]

    def test_utf16_with_bom_is_decoded(self):
        data = "Windows log\r\nERROR 失败\r\n".encode("utf-16")
        assert lines_of(data) == ["Windows log", "ERROR 失败"]

    @pytest.mark.parametrize("encoding", ["gbk", "gb18030"])
    def test_a_chinese_windows_console_log_round_trips(self, encoding):
        text = (
            "训练开始\r\nRuntimeError: CUDA 显存不足（out of memory）\r\n错误：进程退出，代码 1\r\n"
        )
        result = read_input(text.encode(encoding))
        assert result.lines == text.replace("\r\n", "\n").splitlines()
        assert (result.encoding, result.invalid_bytes) == ("gb18030", 0)

    def test_mostly_chinese_gbk_is_not_refused_as_binary(self):
        data = ("错误：数据加载失败，文件不存在。\n" * 400).encode("gbk")
        assert read_input(data).lines == ["错误：数据加载失败，文件不存在。"] * 400

    def test_latin1_noise_is_not_taken_for_chinese(self):
        result = read_input("café crème ERROR\n".encode("latin-1"))
        assert (result.encoding, result.invalid_bytes) == ("utf-8", 2)


class TestInvalidUtf8:
    def test_invalid_sequences_are_replaced_and_counted(self):
        result = read_input(b"ok \xff end\nbad \xc3( and \xe2\x82\n")
        assert result.invalid_bytes == 3
        assert result.lines == ["ok \ufffd end", "bad \ufffd( and \ufffd"]

    def test_a_genuine_replacement_character_is_not_counted(self):
        result = read_input("already \ufffd here\n".encode())
        assert result.invalid_bytes == 0

    def test_lone_surrogates_in_str_are_replaced_and_counted(self):
        result = read_input("a\udcff b\n")
        assert result.lines == ["a\ufffd b"]
        assert result.invalid_bytes == 1


class TestCaps:
    def test_too_large_bytes_names_the_limit(self):
        with pytest.raises(InputTooLarge) as caught:
            read_input(b"x" * 101, Limits(max_bytes=100))
        assert caught.value.size == 101
        assert caught.value.limit == 100
        assert "100 bytes" in str(caught.value)
        assert "101 bytes" in str(caught.value)

    def test_the_limit_itself_is_accepted(self):
        assert lines_of(b"x" * 100, max_bytes=100) == ["x" * 100]

    def test_str_is_measured_in_utf8_bytes(self):
        with pytest.raises(InputTooLarge) as caught:
            read_input("错" * 40, Limits(max_bytes=100))  # 40 characters, 120 bytes
        assert caught.value.size == 120

    def test_default_limit_is_two_megabytes(self):
        with pytest.raises(InputTooLarge, match="2,097,152 bytes"):
            read_input(b"a\n" * (1024 * 1024 + 1))

    def test_long_lines_are_cut_and_counted(self):
        result = read_input("short\n" + "a" * 50 + "\n" + "b" * 51, Limits(max_line_chars=50))
        assert result.lines == ["short", "a" * 50, "b" * 50]
        assert result.cut_lines == 1

    def test_a_single_five_megabyte_line_is_cut_to_the_line_cap(self):
        data = b"RuntimeError: " + b"x" * (5 * 1024 * 1024)
        result = read_input(data, Limits(max_bytes=10 * 1024 * 1024))
        assert result.cut_lines == 1
        assert len(result.lines) == 1
        assert len(result.lines[0]) == Limits().max_line_chars


class TestRefusals:
    @pytest.mark.parametrize("data", [b"", "", "   \n\t\n", b"\n\n\n", b"\x1b[0m\x1b[2K\r\n"])
    def test_empty_input(self, data):
        with pytest.raises(EmptyInput, match="empty"):
            read_input(data)

    @pytest.mark.parametrize(
        "data",
        [
            gzip.compress(b"ERROR something\n" * 100),
            b"\x7fELF\x02\x01\x01" + bytes(200),
            b"\x89PNG\r\n\x1a\n" + bytes(100),
            b"PK\x03\x04" + b"model weights",
        ],
        ids=["gzip", "elf", "png", "zip"],
    )
    def test_known_binary_formats(self, data):
        with pytest.raises(BinaryInput, match="binary"):
            read_input(data)

    def test_mostly_nul_bytes(self):
        with pytest.raises(BinaryInput):
            read_input(b"a\x00\x00\x00b\x00\x00\x00c\x00\x00\x00" * 20)

    def test_utf16_without_bom_is_not_text(self):
        with pytest.raises(BinaryInput):
            read_input("plain text log line\n".encode("utf-16-le") * 5)

    def test_random_bytes(self):
        with pytest.raises(BinaryInput):
            read_input(random.Random(7).randbytes(4096))

    def test_control_characters_in_str(self):
        with pytest.raises(BinaryInput):
            read_input("\x01\x02\x03\x04" * 10 + "text")

    def test_a_few_nul_bytes_are_not_binary(self):
        assert lines_of(b"line one\x00\nline two\n" * 20)[0] == "line one"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_arbitrary_bytes_never_crash(data):
    try:
        result = read_input(data)
    except InputError:
        return
    assert result.lines
    assert all("\n" not in s and "\r" not in s and "\x00" not in s for s in result.lines)
    assert all(len(s) <= Limits().max_line_chars for s in result.lines)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_arbitrary_text_keeps_every_line(text):
    """Every line a newline ends is there; a lone carriage return may add lines, never lose
    one."""
    try:
        result = read_input(text)
    except InputError:
        return
    body = text.replace("\r\n", "\n")
    ended = body.count("\n") + (0 if body.endswith("\n") else 1)
    assert ended <= len(result.lines) <= ended + body.count("\r")
