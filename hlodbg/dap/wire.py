"""The Debug Adapter Protocol's framing: `Content-Length: N` headers, a blank line, N bytes of JSON.

`Wire` reads one message at a time from a byte stream and writes whole messages under a lock (the
reader thread answers `pause` while the session thread answers everything else). A message larger
than MAX_MESSAGE_BYTES is refused before it is read, so a client cannot make the server hold
unbounded memory; a body that is not JSON is skipped (its length was known), framing that cannot
be read ends the connection with a WireError saying why.
"""
from __future__ import annotations

import json
import threading
from typing import BinaryIO, Optional

from hlodbg.engine.ir.errors import HlodbgError

MAX_MESSAGE_BYTES = 64 << 20  # far more than any request (a setBreakpoints of thousands of lines is kilobytes)
MAX_HEADER_BYTES = 8 << 10


class WireError(HlodbgError):
    """The byte stream does not follow the protocol's framing: the connection cannot go on."""


class BadMessage(HlodbgError):
    """One message whose body is not a JSON object; the stream itself is still in step."""


class Wire:
    def __init__(self, reader: BinaryIO, writer: BinaryIO):
        self._reader = reader
        self._writer = writer
        self._lock = threading.Lock()
        self.closed = False

    def receive(self) -> Optional[dict]:
        """The next message, None at the end of the stream."""
        length = None
        read = 0
        while True:
            line = self._reader.readline(MAX_HEADER_BYTES)
            if not line:
                if read:
                    raise WireError("the stream ended inside a message's headers")
                return None
            read += len(line)
            if read > MAX_HEADER_BYTES or not line.endswith(b"\n"):
                raise WireError(f"a message's headers run past {MAX_HEADER_BYTES} bytes without the blank line "
                                "that ends them")
            text = line.decode("ascii", "replace").strip()
            if not text:
                if length is None:
                    if read == len(line):
                        read = 0  # blank lines between messages: tolerated
                        continue
                    raise WireError("a message's headers have no Content-Length")
                break
            name, sep, value = text.partition(":")
            if not sep:
                raise WireError(f"expected a header 'Name: value', got {text[:80]!r}")
            if name.strip().lower() == "content-length":
                if not value.strip().isdigit():
                    raise WireError(f"Content-Length must be a number of bytes, got {value.strip()[:40]!r}")
                length = int(value.strip())
                if length > MAX_MESSAGE_BYTES:
                    raise WireError(f"a message of {length:,} bytes is more than the {MAX_MESSAGE_BYTES:,} "
                                    "this server reads")
        body = self._read_exactly(length)
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise BadMessage(f"a message's body is not JSON in UTF-8: {e}") from None
        if not isinstance(message, dict):
            raise BadMessage(f"a message must be a JSON object, not {type(message).__name__}")
        return message

    def _read_exactly(self, length: int) -> bytes:
        chunks = []
        left = length
        while left:
            chunk = self._reader.read(left)
            if not chunk:
                raise WireError(f"the stream ended {left:,} bytes before the end of a {length:,}-byte message")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def send(self, message: dict) -> None:
        body = json.dumps(message, ensure_ascii=False, allow_nan=False, default=str).encode("utf-8")
        with self._lock:
            if self.closed:
                return
            try:
                self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                self._writer.flush()
            except (BrokenPipeError, ConnectionError, ValueError, OSError):
                self.closed = True  # the client went away: what is left to say has no one to hear it


__all__ = ["BadMessage", "MAX_MESSAGE_BYTES", "Wire", "WireError"]
