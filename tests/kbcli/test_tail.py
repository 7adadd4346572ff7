"""What `kb run` keeps of the output: the last lines, in order, whole, in bounded memory."""

from kbcli.kb import Tail

OUT, ERR = 1, 2


def test_it_keeps_the_last_lines_across_the_ring_boundary():
    tail = Tail(max_bytes=64)
    for n in range(100):
        tail.add(OUT, f"line {n:03d}\n".encode())
    assert tail.text(3) == "line 097\nline 098\nline 099"
    assert len(tail.ring) == 64  # however much was written


def test_stdout_and_stderr_interleave_by_line_never_mid_line():
    tail = Tail(max_bytes=1024)
    tail.add(OUT, b"epoch 1 step 1")  # a partial line: its end comes later
    tail.add(ERR, b"Traceback (most recent call last):\nRuntimeError: boom\n")
    tail.add(OUT, b"0 loss 2.3\n")
    assert tail.text(10).splitlines() == [
        "Traceback (most recent call last):",
        "RuntimeError: boom",
        "epoch 1 step 10 loss 2.3",
    ]


def test_a_chunk_larger_than_the_ring_keeps_its_end():
    tail = Tail(max_bytes=32)
    tail.add(ERR, b"x" * 100 + b"\nthe last line\n")
    assert tail.text(1) == "the last line"
