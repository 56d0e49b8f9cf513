"""Regenerates docs/hlodbg.svg, the README's screenshot: nan_in_loop.mlir stopped at its first NaN.

Run: .venv/bin/python docs/screenshot.py
"""
from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import numpy as np

import hlodbg
from hlodbg.ui.app import HlodbgApp

ROOT = Path(__file__).resolve().parents[1]


async def main() -> None:
    os.environ.setdefault("HLODBG_CACHE_DIR", tempfile.mkdtemp())
    program = hlodbg.load(ROOT / "tests" / "data" / "nan_in_loop.mlir")
    app = HlodbgApp(program, args=[np.full(4, 100, np.float32)], break_on="nan", memory="1G", persist=False)
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        app.save_screenshot(str(ROOT / "docs" / "hlodbg.svg"))


if __name__ == "__main__":
    asyncio.run(main())
