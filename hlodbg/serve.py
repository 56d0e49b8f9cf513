"""The workshop server behind `hlodbg serve`: textual-serve's, with what a room of participants
(and a hostile web page in the teacher's own browser) needs.

- A secret token in the link it prints (as Jupyter's): a request without it (in the query, or the
  cookie the first page load sets) is refused with 403, unless the teacher chose `--no-token`.
- The WebSocket's Origin must be the server's own (its --public-url, or the address it listens
  on): a page elsewhere cannot drive a session through the participant's or teacher's browser.
- At most `max_sessions` sessions at once, each on a terminal of at most MAX_COLUMNS x MAX_ROWS.
- Each session gets its own folder (its exports, offered as downloads; its state), removed when
  it ends, and its process (a fork of a process that already imported and loaded everything, see
  serve_zygote.py) ends with its tab: asked to quit, then killed if it has not after STOP_GRACE.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import shutil
import signal
import tempfile
from typing import Optional
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from hlodbg.ui.session_files import SESSION_FOLDER

log = logging.getLogger("textual-serve")

MAX_COLUMNS, MAX_ROWS = 500, 200  # a wide monitor in a small font; 20000x20000 once took 1.9 GB
DEFAULT_MAX_SESSIONS = 40
STOP_GRACE = 3.0  # seconds a session has to leave after its tab closed, before it is killed
SESSION_DRIVER = "hlodbg.ui.served_driver:ServedDriver"


def new_token() -> str:
    return secrets.token_urlsafe(24)


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, as browsers send it in the Origin header."""
    parts = urlsplit(url)
    default_port = {"http": 80, "https": 443}.get(parts.scheme)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = "" if parts.port in (None, default_port) else f":{parts.port}"
    return f"{parts.scheme}://{host}{port}".lower()


def allowed_origins(public_url: str, host: str, port: int) -> frozenset[str]:
    """The pages that may open a session: the server's own, by its public URL, by the address it
    listens on, and by the loopback names a browser on this machine may use for it (only this
    server answers on its port there)."""
    origins = {origin_of(public_url), f"http://localhost:{port}", f"http://127.0.0.1:{port}", f"http://[::1]:{port}"}
    if host not in ("0.0.0.0", "::", ""):
        origins.add(origin_of(f"http://{'[' + host + ']' if ':' in host else host}:{port}"))
    return frozenset(origins)


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


class SessionService(AppService):
    """One browser tab's session: its process, its folder, and its end."""

    def __init__(self, command: str, *, folder: str, zygote=None, **kwargs):
        super().__init__(command, **kwargs)
        self.folder = folder
        self.zygote = zygote
        self.pid: Optional[int] = None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.update(session_environment(self.folder))
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24):
        if self.zygote is not None:
            try:
                process = await self.zygote.spawn(self._build_environment(width, height))
            except OSError as e:  # the zygote is gone: start the session the slow way
                log.warning("hlodbg: forking a session failed (%s); starting it as a new process", e)
                self.zygote = None
            else:
                self._process, self._stdin, self.pid = process, process.stdin, process.pid
                return process
        # A process group of its own, as a forked session has, so kill() ends it and its children.
        self._process = process = await asyncio.create_subprocess_shell(
            self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width, height), start_new_session=True)
        self._stdin, self.pid = process.stdin, process.pid
        return process

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(clamp(width, 1, MAX_COLUMNS), clamp(height, 1, MAX_ROWS))

    async def send_meta(self, data) -> bool:
        try:
            return await super().send_meta(data)
        except (OSError, AssertionError):  # the process has gone (or never started)
            return False

    async def stop(self) -> None:
        """Ask the session to quit; kill it (and what it started) if it has not left in STOP_GRACE."""
        if self._task is None:
            return
        task, self._task = self._task, None
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        await self.send_meta({"type": "quit"})
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
        except asyncio.TimeoutError:
            self.kill()
            await task
        except asyncio.CancelledError:
            self.kill()
            raise

    def kill(self) -> None:
        """End the session's process group now (it is a group of its own: see serve_zygote)."""
        if self.pid is None:
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def session_environment(folder: str) -> dict[str, str]:
    """What a session's process is told: its driver, its folder, and state kept in that folder
    (so nothing a session saves lands in the server user's own files)."""
    return {"TEXTUAL_DRIVER": SESSION_DRIVER, SESSION_FOLDER: folder,
            "HLODBG_STATE_DIR": os.path.join(folder, ".state"), "OPENBLAS_NUM_THREADS": "1"}


class _HideToken(logging.Filter):
    """The access log shows who joined, not the token they joined with."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _TOKEN_IN_URL.sub("token=…", str(record.msg))
        if record.args:
            record.args = tuple(_TOKEN_IN_URL.sub("token=…", a) if isinstance(a, str) else a for a in record.args)
        return True


_TOKEN_IN_URL = re.compile(r"token=[\w-]+")


class WorkshopServer(Server):
    def __init__(self, command: str, *, token: Optional[str], max_sessions: int = DEFAULT_MAX_SESSIONS,
                 zygote=None, **options):
        super().__init__(command, **options)
        self.token = token
        self.max_sessions = max_sessions
        self.zygote = zygote
        self.origins = allowed_origins(self.public_url, self.host, self.port)
        self.sessions: set[SessionService] = set()
        self.cookie = f"hlodbg_token_{self.port}"  # cookies do not tell ports apart: two servers, two names

    @property
    def link(self) -> str:
        """The address to hand out: with the token, when there is one."""
        return f"{self.public_url}/?token={self.token}" if self.token else f"{self.public_url}/"

    def _token_given(self, request: web.Request) -> Optional[str]:
        return request.match_info.get("token") or request.query.get("token") or request.cookies.get(self.cookie)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        # The page's WebSocket carries the token in its path (the page's script appends its own
        # query), so it reaches the server by whatever name --public-url gives, cookie or not.
        app.router.add_get("/ws/{token}", self.handle_websocket, name="session")
        return app

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        response = await super().handle_index(request)
        if self.token is not None:
            plain = f'data-session-websocket-url="{self._websocket_url()}"'
            with_token = f'data-session-websocket-url="{self._websocket_url()}/{self.token}"'
            response.text = response.text.replace(plain, with_token)
        return response

    def _websocket_url(self) -> str:
        """The page's WebSocket address, as textual-serve writes it into the page."""
        scheme = "wss" if self.public_url.startswith("https") else "ws"
        return f"{scheme}:{self.public_url.split(':', 1)[1]}/ws"

    @web.middleware
    async def _guard(self, request: web.Request, handler):
        if self.token is not None:
            given = self._token_given(request) or ""
            if not secrets.compare_digest(given.encode(), self.token.encode()):
                return web.Response(status=403, text="hlodbg serve: open the link with the token that the server "
                                                     "printed when it started (…/?token=…)\n")
        origin = request.headers.get("Origin")
        is_session = request.path == "/ws" or request.path.startswith("/ws/")
        if is_session and origin is not None and origin.rstrip("/").lower() not in self.origins:
            return web.Response(status=403, text=f"hlodbg serve: sessions open only from this server's own page, "
                                                 f"not from {origin}\n")
        if (is_session or request.path == "/") and len(self.sessions) >= self.max_sessions:
            return web.Response(status=503, text=f"hlodbg serve: all {self.max_sessions} sessions are taken; "
                                                 "try again when someone closes theirs\n")
        response = await handler(request)
        if self.token is not None and request.query.get("token") and not response.prepared:
            # The page's scripts, its WebSocket and its downloads carry the token from here on.
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict", path="/")
        return response

    def initialize_logging(self) -> None:
        super().initialize_logging()
        logging.getLogger("aiohttp.access").addFilter(_HideToken())

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve's banner, and its copy of the URL without the token, stay out."""

    async def on_shutdown(self, app: web.Application) -> None:
        for session in list(self.sessions):
            session.kill()

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
        """The browser's keys, sizes and pings; anything malformed is dropped, not a crash."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
                kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
                if kind == "stdin":
                    await app_service.send_bytes(str(data).encode("utf-8"))
                elif kind == "resize":
                    await app_service.set_terminal_size(int(data["width"]), int(data["height"]))
                elif kind == "ping":
                    await websocket.send_json(["pong", data])
                elif kind == "blur":
                    await app_service.blur()
                elif kind == "focus":
                    await app_service.focus()
            except (ValueError, TypeError, KeyError, IndexError):
                continue

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """A tab's session, on a terminal of a bounded size, in a folder of its own."""
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1 << 20)
        width = clamp(to_int(request.query.get("width", "80"), 80), 1, MAX_COLUMNS)
        height = clamp(to_int(request.query.get("height", "24"), 24), 1, MAX_ROWS)
        folder = tempfile.mkdtemp(prefix="hlodbg-session-")
        session = SessionService(self.command, folder=folder, zygote=self.zygote, write_bytes=websocket.send_bytes,
                                 write_str=websocket.send_str, close=websocket.close,
                                 download_manager=self.download_manager, debug=self.debug)
        self.sessions.add(session)
        try:
            await websocket.prepare(request)
            await session.start(width, height)
            try:
                await self._process_messages(websocket, session)
            finally:
                await session.stop()
        except asyncio.CancelledError:
            session.kill()
            await websocket.close()
        except Exception as error:
            log.exception(error)
            session.kill()
        finally:
            self.sessions.discard(session)
            shutil.rmtree(folder, ignore_errors=True)
        return websocket
