"""A workshop's thirty tabs opening at once on `hlodbg serve` (issue 32).

Starts `hlodbg serve` on 127.0.0.1 with a free port, then:
1. opens one session as the server starts, then another, and times each until the debugger's
   first screen arrives (the command line's placeholder, which only the main screen draws), with
   the CPU its process spent until then;
2. opens SESSIONS WebSocket clients together and times each the same way, then sums the resident
   memory of the server's whole process tree (RSS from /proc, and PSS, which counts the pages the
   forked sessions share once).
Targets: every tab within 20 s, the server under 8 GB, on 2 cores.

    .venv/bin/python benchmarks/serve_workshop.py [--sessions 30] [PROGRAM]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

FIRST_SCREEN = b"command (help)"  # the main screen's command line placeholder
TIMEOUT = 120.0
PAGE = os.sysconf("SC_PAGE_SIZE")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def memory_of(pids: list[int]) -> tuple[int, int]:
    """(RSS, PSS) in bytes summed over `pids`."""
    rss = pss = 0
    for pid in pids:
        try:
            rss += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
        except OSError:
            pass
    return rss, pss


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def open_session(url: str, started: float, server: int) -> tuple[float, float]:
    """(seconds until the first screen, CPU seconds the new session's process spent until then)."""
    before = set(process_tree(server))
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(url, timeout=TIMEOUT, max_msg_size=0) as ws:
            seen = b""
            while True:
                message = await asyncio.wait_for(ws.receive(), TIMEOUT)
                if message.type != aiohttp.WSMsgType.BINARY:
                    if message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                        raise RuntimeError("the session closed before its first screen")
                    continue
                seen = (seen + message.data)[-4096:]
                if FIRST_SCREEN in seen:
                    elapsed = time.perf_counter() - started
                    new = [p for p in process_tree(server) if p not in before]
                    cpu = sum(cpu_seconds(p) for p in new if Path(f"/proc/{p}").exists())
                    return elapsed, cpu


async def workshop(url: str, sessions: int, server: int) -> tuple[list[float], tuple[int, int]]:
    started = time.perf_counter()
    ready = asyncio.Event()
    times: list[float] = []

    async def tab() -> None:
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(url, timeout=TIMEOUT, max_msg_size=0) as ws:
                seen = b""
                while FIRST_SCREEN not in seen:
                    message = await asyncio.wait_for(ws.receive(), TIMEOUT)
                    if message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                        raise RuntimeError("a session closed before its first screen")
                    if message.type == aiohttp.WSMsgType.BINARY:
                        seen = (seen + message.data)[-4096:]
                times.append(time.perf_counter() - started)
                await ready.wait()  # every tab stays open until the memory is measured

    tasks = [asyncio.create_task(tab()) for _ in range(sessions)]
    while len(times) < sessions:
        failed = [t for t in tasks if t.done() and t.exception()]
        if failed:
            raise failed[0].exception()
        await asyncio.sleep(0.2)
    await asyncio.sleep(2)  # the sessions settle (their graphs laid out)
    memory = memory_of(process_tree(server))
    ready.set()
    await asyncio.gather(*tasks)
    return times, memory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("program", nargs="?", help="the program to serve (default: the embedded sample)")
    parser.add_argument("--sessions", type=int, default=30)
    options = parser.parse_args()
    port = free_port()
    hlodbg = Path(sys.executable).with_name("hlodbg")
    command = [str(hlodbg), "serve", *([options.program] if options.program else []), "--host", "127.0.0.1",
               "--port", str(port), "--max-sessions", str(options.sessions + 5)]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        line = server.stderr.readline()
        link = re.search(r"(http://\S+)", line)
        if link is None:
            print(f"the server did not start: {line}{server.stderr.read()}", file=sys.stderr)
            return 1
        token = re.search(r"token=([\w-]+)", link.group(1)).group(1)
        url = f"ws://127.0.0.1:{port}/ws?width=160&height=48&token={token}"
        wait_listening(port)
        first, cpu = asyncio.run(open_session(url, time.perf_counter(), server.pid))
        print(f"the first session, as the server starts (its sessions' zygote still loading): "
              f"first screen after {first:.2f} s, {cpu:.2f} s of CPU in its process")
        time.sleep(STOP_SETTLE)
        one, cpu = asyncio.run(open_session(url, time.perf_counter(), server.pid))
        print(f"one served session: first screen after {one:.2f} s, {cpu:.2f} s of CPU in its process")
        time.sleep(STOP_SETTLE)
        times, (rss, pss) = asyncio.run(workshop(url, options.sessions, server.pid))
        times.sort()
        print(f"{options.sessions} sessions opened together on {os.cpu_count()} cores: first screen after "
              f"{times[0]:.1f} s (first), {times[len(times) // 2]:.1f} s (median), {times[-1]:.1f} s (last)"
              f" [target: each within {TARGET_SECONDS} s] {verdict(times[-1] <= TARGET_SECONDS)}")
        print(f"server with {options.sessions} sessions: {rss / 2**30:.2f} GB RSS summed over its processes, "
              f"{pss / 2**30:.2f} GB PSS (shared pages counted once) [target: under {TARGET_GB} GB] "
              f"{verdict(rss < TARGET_GB * 2**30)}")
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            print("the server did not stop on SIGTERM within 30 s", file=sys.stderr)
            return 1
    return 0


TARGET_SECONDS, TARGET_GB = 20, 8
STOP_SETTLE = 4.0  # the first session's tab closed: its process leaves before the workshop starts

if __name__ == "__main__":
    sys.exit(main())
