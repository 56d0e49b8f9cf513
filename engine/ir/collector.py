"""Building a program's IR without Python's cycle collector rescanning it as it grows.

A parsed module is a web of cycles (an op holds its results, each result its op; a block its ops,
each op its block) of about a dozen tracked objects per op, and all of it lives as long as the
session. While a parser allocates them, the collector keeps running: every young collection scans
the new objects and every full one the whole heap, so a 100k-op parse spent a third of its time
tracing objects that were never garbage, and merely pausing the collector would move that cost
to whatever runs next (the graph build, the first step), which then traces them all.

`build_long_lived(build)` pauses the collector while `build()` runs and, when it made a large
structure, freezes the heap (gc.freeze: later collections skip those objects). Frozen objects
are still freed by reference counting, but their cycles cannot be collected; so when the built
object (a Module, which nothing inside it points back to) is dropped, the heap is unfrozen again
and the next full collection frees the old program's cycles as it always would.
"""
from __future__ import annotations

import gc
import weakref
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

# Builds that leave fewer tracked objects than this (about 8,000 ops) are left to the collector:
# tracing them costs little, and small modules come and go by the thousand in test runs.
FREEZE_FROM_OBJECTS = 100_000

T = TypeVar("T")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run a block without cycle collections (reference counting still frees its temporaries)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_long_lived(build: Callable[[], T]) -> T:
    """`build()` with the collector paused; a large result is frozen until it is dropped."""
    was_enabled = gc.isenabled()
    with collector_paused():
        before = gc.get_count()[0]
        result = build()
        if was_enabled and gc.get_count()[0] - before >= FREEZE_FROM_OBJECTS:
            gc.freeze()
            weakref.finalize(result, gc.unfreeze).atexit = False
    return result
