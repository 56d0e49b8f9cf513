"""`hlodbg serve` attacked as a workshop participant, or a web page in the teacher's browser,
would: a real server on loopback, real sessions, a WebSocket client per tab."""
from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

aiohttp = pytest.importorskip("aiohttp")

from hlodbg.serve import MAX_COLUMNS, MAX_ROWS, SessionService, allowed_origins  # noqa: E402
from hlodbg.ui.session_files import SessionFiles  # noqa: E402
from hlodbg.ui.controller import CommandError  # noqa: E402

FIRST_SCREEN = b"command (help)"  # drawn only by the debugger's main screen
WAIT = 90.0  # seconds a session may take on a busy machine before a test gives up
FOREIGN = "http://evil.example"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    def __init__(self, process: subprocess.Popen, port: int, token: str, cwd: Path):
        self.process, self.port, self.token, self.cwd = process, port, token, cwd
        self.origin = f"http://127.0.0.1:{port}"

    def ws(self, token: bool = True, size: str = "width=200&height=50") -> str:
        return f"ws://127.0.0.1:{self.port}/ws?{size}" + (f"&token={self.token}" if token else "")

    def processes(self) -> set[int]:
        return set(_tree(self.process.pid)) - {self.process.pid}


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("server") / "a" / "b"  # `../../x.svg` from here is the temp folder
    cwd.mkdir(parents=True)
    port = _free_port()
    environment = {**os.environ, "HLODBG_STATE_DIR": str(cwd.parent / "state")}
    process = subprocess.Popen([sys.executable, "-m", "hlodbg", "serve", "--host", "127.0.0.1", "--port", str(port),
                                "--max-sessions", "2"], cwd=cwd, env=environment, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    token = re.search(r"\?token=([\w-]+)", line)
    assert token, line
    deadline = time.monotonic() + WAIT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline and process.poll() is None, "the server did not start"
            time.sleep(0.2)
    yield Served(process, port, token.group(1), cwd)
    if process.poll() is None:
        process.kill()
        process.wait()


async def _refused(url: str, **headers) -> int:
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            async with http.ws_connect(url, headers=headers):
                pass
        return refused.value.status


async def _read_until(ws, wanted: bytes, seen: bytes = b"") -> bytes:
    """The session's output until `wanted` is in it (text messages kept too, as bytes)."""
    while wanted not in seen:
        message = await asyncio.wait_for(ws.receive(), WAIT)
        if message.type == aiohttp.WSMsgType.BINARY:
            seen += message.data
        elif message.type == aiohttp.WSMsgType.TEXT:
            seen += message.data.encode()
        else:
            raise AssertionError(f"the session ended: {message!r}; output so far ends {seen[-300:]!r}")
    return seen


async def _type(ws, text: str) -> None:
    for key in text:
        await ws.send_json(["stdin", key])


def test_a_foreign_page_without_the_token_is_refused(served):
    assert asyncio.run(_refused(served.ws(token=False), Origin=FOREIGN)) == 403


def test_a_foreign_page_with_the_token_is_refused_too(served):
    assert asyncio.run(_refused(served.ws(), Origin=FOREIGN)) == 403
    assert asyncio.run(_refused(f"ws://127.0.0.1:{served.port}/ws/{served.token}", Origin=FOREIGN)) == 403
    assert asyncio.run(_refused(f"ws://127.0.0.1:{served.port}/ws/wrong-token")) == 403


def test_the_servers_own_page_needs_the_token(served):
    assert asyncio.run(_refused(served.ws(token=False), Origin=served.origin)) == 403

    async def pages():
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # keep an IP's cookies
            async with http.get(f"{served.origin}/") as without:
                assert without.status == 403
            async with http.get(f"{served.origin}/?token={served.token}") as page:
                assert page.status == 200 and "hlodbg_token" in page.headers.get("Set-Cookie", "")
                assert f'data-session-websocket-url="ws://127.0.0.1:{served.port}/ws/{served.token}"' in await page.text()
            async with http.get(f"{served.origin}/static/css/xterm.css") as styles:  # the cookie carries the token
                assert styles.status == 200

    asyncio.run(pages())


def test_with_the_token_and_its_own_origin_a_tab_gets_the_debugger(served):
    async def tab():
        async with aiohttp.ClientSession() as http:
            # as the page opens it: the token in the path, the page's own query after it
            url = f"ws://127.0.0.1:{served.port}/ws/{served.token}?width=120&height=40"
            async with http.ws_connect(url, headers={"Origin": served.origin}) as ws:
                await _read_until(ws, FIRST_SCREEN)

    asyncio.run(tab())


def test_an_export_lands_in_the_sessions_folder_and_is_downloaded(served):
    outside = served.cwd.parent.parent / "x.dot"  # .dot: written without Graphviz

    async def tab():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(served.ws(), headers={"Origin": served.origin}) as ws:
                seen = await _read_until(ws, FIRST_SCREEN)
                await _type(ws, ":export ../../x.dot\r")
                seen = await _read_until(ws, b"deliver_file_start", seen)
                key = re.search(rb'\["deliver_file_start", "([^"]+)"\]', seen).group(1).decode()
                async with http.get(f"{served.origin}/download/{key}?token={served.token}") as download:
                    assert download.status == 200
                    assert "filename=x.dot" in download.headers["Content-Disposition"]
                    assert b"digraph" in (await download.read())[:200]
                await _type(ws, ":export -\r")  # standard output carries the screen: refused
                await _read_until(ws, b"own folder", seen)

    asyncio.run(tab())
    assert not outside.exists() and not (served.cwd / "x.dot").exists()
    assert not list(served.cwd.parent.parent.rglob("*.dot"))


def test_an_expression_that_would_run_for_hours_gets_a_message(served):
    async def tab():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(served.ws(), headers={"Origin": served.origin}) as ws:
                seen = await _read_until(ws, FIRST_SCREEN)
                await _type(ws, ":print 10**10**10\r")
                await _read_until(ws, b"digits", seen)

    asyncio.run(tab())


def test_the_terminal_size_is_bounded_and_a_closed_tab_leaves(served):
    before = served.processes()

    async def tab():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(served.ws(size="width=20000&height=20000"), headers={"Origin": served.origin}) as ws:
                seen = await _read_until(ws, FIRST_SCREEN)
                sessions = served.processes() - before
                try:  # the rest of the first screen
                    while True:
                        seen += (await asyncio.wait_for(ws.receive(), 2)).data or b""
                except asyncio.TimeoutError:
                    pass
                return seen, sessions

    seen, sessions = asyncio.run(tab())
    rules = re.findall("─+", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode("utf-8", "replace")))
    assert sessions and max(map(len, rules)) == MAX_COLUMNS  # the screen's full-width rule: the clamped width
    deadline = time.monotonic() + WAIT
    while sessions & served.processes():
        assert time.monotonic() < deadline, "a closed tab's process stayed"
        time.sleep(0.2)


def test_sessions_past_the_maximum_are_turned_away(served):
    async def tabs():
        async with aiohttp.ClientSession() as http:
            first = await http.ws_connect(served.ws(), headers={"Origin": served.origin})
            second = await http.ws_connect(served.ws(), headers={"Origin": served.origin})
            try:
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(served.ws(), headers={"Origin": served.origin})
                assert refused.value.status == 503
                async with http.get(f"{served.origin}/?token={served.token}") as page:
                    assert page.status == 503 and "sessions are taken" in await page.text()
            finally:
                await first.close()
                await second.close()

    _wait_for_free_sessions(served)
    asyncio.run(tabs())


def _wait_for_free_sessions(served) -> None:
    """The previous tests' tabs have closed; their sessions leave within a few seconds."""
    deadline = time.monotonic() + WAIT
    while len(served.processes()) > 1:  # the zygote stays
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_the_server_stops_on_sigterm_with_its_sessions(served):
    _wait_for_free_sessions(served)

    async def tab():
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(served.ws(), headers={"Origin": served.origin}) as ws:
                await _read_until(ws, FIRST_SCREEN)
                everything = served.processes()
                served.process.send_signal(signal.SIGTERM)
                return everything

    everything = asyncio.run(tab())
    served.process.wait(WAIT)
    deadline = time.monotonic() + WAIT
    while any(Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]
              for pid in everything):
        assert time.monotonic() < deadline, "a session outlived the server"
        time.sleep(0.2)


def test_origins_a_session_may_come_from():
    assert allowed_origins("http://127.0.0.1:8000", "127.0.0.1", 8000) >= {"http://127.0.0.1:8000", "http://localhost:8000"}
    public = allowed_origins("https://dbg.example.org", "0.0.0.0", 8000)
    assert "https://dbg.example.org" in public and "http://evil.example" not in public
    assert all(origin.startswith(("https://dbg.example.org", "http://localhost:8000", "http://127.0.0.1:8000",
                                  "http://[::1]:8000")) for origin in public)


def test_a_served_session_writes_only_plain_names_into_its_folder(tmp_path):
    files = SessionFiles(tmp_path)
    assert files.place("../../x.svg") == str(tmp_path / "x.svg")
    assert files.place("/etc/passwd.json") == str(tmp_path / "passwd.json")
    (tmp_path / "link.svg").symlink_to(tmp_path.parent / "elsewhere.svg")
    assert files.place("link.svg") == str(tmp_path / "link.svg") and not (tmp_path / "link.svg").exists()
    for refused in ("-", "..", ".hidden.svg", ""):
        with pytest.raises(CommandError):
            files.place(refused)
    assert SessionFiles().place("../x.svg") == "../x.svg"  # a local session writes where its user says


def test_resizes_are_bounded_too():
    sent = []

    class Recording(SessionService):
        async def send_meta(self, data):
            sent.append(data)
            return True

    session = Recording("true", folder="/nonexistent", write_bytes=None, write_str=None, close=None,
                        download_manager=None)
    asyncio.run(session.set_terminal_size(20000, 20000))
    assert sent == [{"type": "resize", "width": MAX_COLUMNS, "height": MAX_ROWS}]


async def test_the_e_key_of_a_served_session_exports_into_its_folder(tmp_path, monkeypatch, private_hlodbg_dirs):
    import shutil

    import numpy as np

    import hlodbg
    from hlodbg.ui.app import HlodbgApp

    from .pilot import console_text, press, settle, type_command

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "session"
    folder.mkdir()
    program = hlodbg.load(Path(__file__).parent / "data" / "nan_in_loop.mlir")
    app = HlodbgApp(program, args=[np.full(4, 100, np.float32)], memory="1G", persist=False, downloads=folder)
    delivered = []
    monkeypatch.setattr(app, "deliver_binary", lambda path, **options: delivered.append(path))
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        if shutil.which("dot") is None:  # SVG needs Graphviz: where `e` writes is what is checked here
            exported = []
            real_export = app.controller.export
            monkeypatch.setattr(app.controller, "export", lambda path, *rest: exported.append(path) or
                                real_export(str(Path(path).with_suffix(".dot")), *rest))
        await press(app, pilot, "e")
        await settle(app, pilot)
        if shutil.which("dot") is None:
            assert exported == [str(folder / "nan_in_loop.svg")] and delivered == [str(folder / "nan_in_loop.svg")]
            assert (folder / "nan_in_loop.dot").exists()
        else:
            assert delivered == [str(folder / "nan_in_loop.svg")] and (folder / "nan_in_loop.svg").exists()
        await type_command(app, pilot, "export ../x.dot")
        await settle(app, pilot)
        assert delivered[-1] == str(folder / "x.dot") and (folder / "x.dot").read_text().startswith(("digraph", "strict"))
        await type_command(app, pilot, "print 10**10**10")
        await settle(app, pilot)
        assert "integer of about 10,000,000,000 digits" in console_text(app.screen)
    assert not list(tmp_path.glob("*.svg")) and not list(tmp_path.glob("*.dot"))


def test_a_session_that_does_not_leave_is_killed_with_what_it_started(monkeypatch):
    import hlodbg.serve as serve_module

    monkeypatch.setattr(serve_module, "STOP_GRACE", 0.5)

    async def stuck_session():
        # a session process that ignores the quit it is sent, with a child of its own
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "subprocess.Popen(['sleep', '300']); time.sleep(300)", start_new_session=True)
        session = serve_module.SessionService("true", folder="/nonexistent", write_bytes=None, write_str=None,
                                              close=None, download_manager=_NoDownloads())
        session.pid = process.pid
        session._task = asyncio.ensure_future(process.wait())  # "its output ends" only when it has gone
        await session.stop()
        return process.returncode

    assert asyncio.run(stuck_session()) == -signal.SIGKILL


class _NoDownloads:
    async def cancel_app_downloads(self, app_service_id):
        pass


async def test_without_a_token_only_the_origin_is_checked():
    from aiohttp.test_utils import TestClient, TestServer

    from hlodbg.serve import WorkshopServer

    server = WorkshopServer("true", token=None, max_sessions=1, host="127.0.0.1", port=8123)
    async with TestClient(TestServer(await server._make_app())) as client:
        assert (await client.get("/")).status == 200
        assert (await client.get("/ws", headers={"Origin": FOREIGN})).status == 403
