"""Helpers for Textual pilot tests: wait until workers and refreshes are done, press and wait, type a
command, read the console."""
from __future__ import annotations


async def settle(app, pilot) -> None:
    """Every worker done and the screen refreshed (twice: a finished worker may start another)."""
    for _ in range(2):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def press(app, pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(app, pilot)


async def type_command(app, pilot, text: str, prefix: str = "colon") -> None:
    await pilot.press(prefix)
    for ch in text:
        await pilot.press({" ": "space", "%": "percent_sign", "@": "at", ":": "colon"}.get(ch, ch))
    await pilot.press("enter")
    await settle(app, pilot)


def console_text(screen) -> str:
    return "\n".join(str(line.text) for line in screen.query_one("#console").lines)
