"""ProtocolWriter: the answering task writes its own line; a line the pipe takes in part still goes out whole."""

from __future__ import annotations

import fcntl
import os

import pytest
import trio
import trio.lowlevel

from ctxtrio.transport.stdio import ProtocolWriter

_PIPE_BYTES = 4096


def _pipe() -> tuple[int, int]:
    """A pipe whose buffer is one page, so a 20 KB line cannot go in at once."""
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    return read_fd, write_fd


async def _read_lines(read_fd: int, count: int) -> list[bytes]:
    stream = trio.lowlevel.FdStream(read_fd)
    data = b""
    while data.count(b"\n") < count:
        chunk = await stream.receive_some(65536)
        assert chunk, "the pipe closed early"
        data += chunk
    await stream.aclose()
    return data.splitlines(keepends=True)


async def test_a_line_the_pipe_takes_in_part_goes_out_whole_and_the_next_waits() -> None:
    """A 20 KB line into a one-page pipe: its writer returns at once (the rest is the writer task's); a
    second line waits and, cancelled while waiting, writes nothing; a third goes out after the first."""
    read_fd, write_fd = _pipe()
    writer = ProtocolWriter(write_fd)
    first = "1" * 20000 + "\n"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)
        with trio.fail_after(10):
            await writer.write(first)  # returns with most of the line still unwritten
        with trio.move_on_after(0.05) as waiting:
            await writer.write("2" * 100 + "\n")
        assert waiting.cancelled_caught, "a second line did not wait for the first"
        third = "3" * 100 + "\n"

        async def write_third() -> None:
            await writer.write(third)
            writer.close()

        nursery.start_soon(write_third)
        with trio.fail_after(10):
            lines = await _read_lines(read_fd, 2)
    await writer.aclose()
    assert lines == [first.encode(), third.encode()]


async def test_lines_leave_in_the_order_their_writers_took_them() -> None:
    """Five writers, each with a line larger than the pipe: every line whole, in the order written."""
    read_fd, write_fd = _pipe()
    writer = ProtocolWriter(write_fd)
    texts = [str(number) * 9000 + "\n" for number in range(5)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer.run)

        async def write_all() -> None:
            for text in texts:
                await writer.write(text)
            writer.close()

        nursery.start_soon(write_all)
        with trio.fail_after(10):
            lines = await _read_lines(read_fd, len(texts))
    await writer.aclose()
    assert lines == [text.encode() for text in texts]


async def test_a_reader_gone_ends_the_writer_task() -> None:
    """With the read end closed, the write that cannot go out makes run() raise BrokenResourceError."""
    read_fd, write_fd = _pipe()
    os.close(read_fd)
    writer = ProtocolWriter(write_fd)
    with pytest.RaisesGroup(trio.BrokenResourceError):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            await writer.write("x\n")
    await writer.aclose()
