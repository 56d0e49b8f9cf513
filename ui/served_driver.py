"""The driver of a session served in a browser (`hlodbg serve`): textual's web driver, except that
the app ends when the server's side of its input goes. textual's own stops reading and leaves
the app running, so a tab whose server went kept its process (and its CPU) forever."""
from __future__ import annotations

from textual import messages
from textual.drivers.web_driver import WebDriver


class ServedDriver(WebDriver):
    def run_input_thread(self) -> None:
        super().run_input_thread()
        if not self.exit_event.is_set():  # input ended without the app leaving: nobody sees it now
            self._app.post_message(messages.ExitApp())
