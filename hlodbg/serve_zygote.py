"""Sessions of `hlodbg serve` started by forking, not by starting Python again.

A new `python -m hlodbg open PROG` costs seconds of CPU before its first frame (importing numpy,
ml_dtypes, textual and the engine, parsing and checking PROG): thirty tabs opening together on
two cores waited most of a minute. So the server forks, before it starts serving, a *zygote*: a
process that has imported all of that and loaded the program once. For each tab the server sends
it the tab's three pipe ends (SCM_RIGHTS over a socket pair) and environment; the zygote forks a
child that takes the pipes as its standard streams and runs the session's command line, which then
finds everything already imported (copy-on-write: the children share those pages too).

Each child leads a process group of its own, so the server can end it and whatever it started
(Graphviz) at once. The zygote reaps its children and leaves when the server does (its socket
closes).
"""
from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import socket
import struct
import sys
from typing import Callable, Sequence

_PID = struct.Struct("!q")


class ForkedProcess:
    """What textual-serve's AppService uses of an asyncio subprocess: its pid and its streams."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader,
                 stderr: asyncio.StreamReader):
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr


class Zygote:
    """The server's side: `start(warm, run)` forks the zygote; `spawn(env)` asks it for a session."""

    def __init__(self, pid: int, channel: socket.socket):
        self.pid = pid
        self.channel = channel
        self._lock: asyncio.Lock | None = None

    @classmethod
    def start(cls, warm: Callable[[], None], run: Callable[[], int]) -> "Zygote":
        """Fork the zygote (call before any event loop or thread of the server starts): it calls
        `warm()` once, then `run()` in each session it forks, exiting with its status."""
        server_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            server_end.close()
            status = 1
            try:
                status = _zygote_main(zygote_end, warm, run)
            finally:
                os._exit(status)
        zygote_end.close()
        return cls(pid, server_end)

    async def spawn(self, environment: dict[str, str]) -> ForkedProcess:
        """A new session with `environment`; its standard streams are pipes to this process."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        loop = asyncio.get_running_loop()
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        try:
            async with self._lock:  # one request and its answer at a time
                message = json.dumps(environment).encode("utf-8")
                await loop.run_in_executor(None, self._ask, message, [stdin_read, stdout_write, stderr_write])
                answer = await loop.run_in_executor(None, self.channel.recv, _PID.size)
            if len(answer) != _PID.size:
                raise ConnectionError("the session zygote has gone")
            pid = _PID.unpack(answer)[0]
        except BaseException:
            for fd in (stdin_write, stdout_read, stderr_read):
                os.close(fd)
            raise
        finally:
            for fd in (stdin_read, stdout_write, stderr_write):
                os.close(fd)
        stdout = await _reader(loop, stdout_read)
        stderr = await _reader(loop, stderr_read)
        stdin = await _writer(loop, stdin_write)
        return ForkedProcess(pid, stdin, stdout, stderr)

    def _ask(self, message: bytes, fds: list[int]) -> None:
        socket.send_fds(self.channel, [message], fds)

    def close(self) -> None:
        self.channel.close()


async def _reader(loop, fd: int) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=2**20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0))
    return reader


async def _writer(loop, fd: int) -> asyncio.StreamWriter:
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", buffering=0))
    return asyncio.StreamWriter(transport, protocol, None, loop)


def _zygote_main(channel: socket.socket, warm: Callable[[], None], run: Callable[[], int]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the teacher's terminal is the server's to handle
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # finished sessions are reaped by the kernel
    warm()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 1 << 16, 3)
        except OSError:
            return 0
        if not message:
            return 0  # the server has gone
        pid = os.fork()
        if pid == 0:
            channel.close()
            os._exit(_session_main(json.loads(message), fds, run))
        for fd in fds:
            os.close(fd)
        try:
            channel.send(_PID.pack(pid))
        except OSError:
            return 0


def _session_main(environment: dict[str, str], fds: Sequence[int], run: Callable[[], int]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the session waits for its own children (Graphviz)
    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.update(environment)
    # textual reads its settings (the driver, colours, frame rate) from the environment when it is
    # imported, which the zygote did before this session's environment existed.
    import textual.constants

    importlib.reload(textual.constants)
    try:
        return run()
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            pass
