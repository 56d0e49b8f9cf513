"""Helpers for Textual pilot tests: wait until workers and refreshes are done, press and wait."""
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
