"""Room on the stack for a program's deepest chain of calls.

The interpreter runs a call as a Python call (the call's evaluator runs its callee's steps), so a
run nests Python frames as deep as the program nests calls and regions. Call depth is data: a
program nesting deeper than the running thread has room for runs on a thread of its own, with a
stack and a recursion limit sized from the module's static depth (engine/ir/call_graph.py, worked
out once per module without recursion). Programs that fit, nearly all, run where they are.

`run_with_room(module, work)` is for a run that ends before it returns (Interpreter.run, a
lockstep comparison); `StackThread` keeps such a thread for a run that parks and resumes (the
debugger's greenlet, which lives on the thread that started it).
"""
from __future__ import annotations

import ctypes
import queue
import sys
import threading
import weakref
from typing import Callable, Optional, TypeVar

from ..ir.call_graph import call_depth
from ..ir.core import Module

T = TypeVar("T")

# Python frames one level of calls or regions takes in the deepest loop (the debugger's recorder
# takes about five; the plain loop three), with room to spare.
FRAMES_PER_LEVEL = 8
# Frames for what runs inside the innermost op (an evaluator, numpy, a breakpoint's expression).
INNERMOST_FRAMES = 100
# What a stack thread adds for everything else (the debugger's bookkeeping, a traceback's repr).
HEADROOM_FRAMES = 1000
# C stack per Python frame on a stack thread (a frame entered through C takes a few hundred bytes;
# the rest is margin). Thread stacks are reserved, not committed: untouched pages cost nothing.
STACK_BYTES_PER_FRAME = 2048
MIN_STACK_BYTES = 64 << 20

# The recursion limit threads other than ours were started with: what they have room for.
_ORDINARY_LIMIT = sys.getrecursionlimit()
_room = threading.local()  # .frames: the Python frames a stack thread has room for
_limit_lock = threading.Lock()
_stack_size_lock = threading.Lock()
_frames_of: "weakref.WeakKeyDictionary[Module, int]" = weakref.WeakKeyDictionary()


def frames_needed(module: Module) -> int:
    """The Python frames the deepest run of any function of `module` can nest."""
    found = _frames_of.get(module)
    if found is None:
        found = _frames_of[module] = call_depth(module) * FRAMES_PER_LEVEL + INNERMOST_FRAMES
    return found


def _frames_in_use() -> int:
    count, frame = 0, sys._getframe()
    while frame is not None:
        count, frame = count + 1, frame.f_back
    return count


def has_room(frames: int) -> bool:
    """Whether this thread can nest `frames` more Python frames."""
    room = getattr(_room, "frames", None)
    if room is None:
        room = min(_ORDINARY_LIMIT, sys.getrecursionlimit())
    return _frames_in_use() + frames <= room


_deep_threads = 0  # stack threads alive: while any is, the recursion limit is theirs


def _raise_recursion_limit(frames: int) -> None:
    # Process-wide (Python 3.11 has one limit), kept while any stack thread lives: a parked run
    # deeper than a lowered limit would fail at its next call when resumed.
    global _deep_threads
    with _limit_lock:
        _deep_threads += 1
        if sys.getrecursionlimit() < frames:
            sys.setrecursionlimit(frames)


def _restore_recursion_limit() -> None:
    # The last stack thread gone, the ordinary limit again: other threads' stacks were sized for
    # it, and a deeply nested file read by one of them must meet a RecursionError, not overflow
    # the C stack.
    global _deep_threads
    with _limit_lock:
        _deep_threads -= 1
        if _deep_threads == 0:
            sys.setrecursionlimit(_ORDINARY_LIMIT)


def _start_thread(target: Callable[[], None], frames: int, name: str) -> threading.Thread:
    """A daemon thread running `target` with room for `frames` Python frames."""
    frames = 2 * frames + HEADROOM_FRAMES
    _raise_recursion_limit(frames)

    def with_room() -> None:
        _room.frames = frames
        try:
            target()
        finally:
            _restore_recursion_limit()

    with _stack_size_lock:
        previous = threading.stack_size()
        threading.stack_size(max(MIN_STACK_BYTES, frames * STACK_BYTES_PER_FRAME))
        try:
            thread = threading.Thread(target=with_room, name=name, daemon=True)
            thread.start()
        except BaseException:
            _restore_recursion_limit()
            raise
        finally:
            threading.stack_size(previous)
    return thread


def _interrupt(thread: threading.Thread) -> None:
    """Raise KeyboardInterrupt in `thread` at its next bytecode (Ctrl-C reaches the main thread
    only; the run it waits for must stop too)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt))


def _wait(done: threading.Event, thread: threading.Thread) -> None:
    """Wait for `done`, passing a Ctrl-C on to `thread` and waiting for it to stop."""
    try:
        while not done.wait(0.05):
            pass
    except KeyboardInterrupt:
        if not done.is_set():
            _interrupt(thread)
            done.wait()
        raise


def run_with_room(module: Module, work: Callable[[], T]) -> T:
    """`work()`, on a thread with room for `module`'s deepest calls when this one has not."""
    frames = frames_needed(module)
    if has_room(frames):
        return work()
    outcome: list = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread as it is
            outcome.append((False, error))
        finally:
            done.set()

    _wait(done, _start_thread(run, frames, "hlodbg-deep-run"))
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value


class StackThread:
    """A thread with room for `frames` Python frames that runs the calls handed to it one at a
    time (`call`), for a run that parks between calls (a greenlet lives on the thread that started
    it). Closed by `close()` or when it is garbage."""

    def __init__(self, frames: int):
        self._jobs: "queue.SimpleQueue[Optional[tuple]]" = queue.SimpleQueue()
        self._thread = _start_thread(lambda: _serve(self._jobs), frames, "hlodbg-deep-session")
        self._finalizer = weakref.finalize(self, self._jobs.put, None)

    def call(self, work: Callable[[], T]) -> T:
        outcome: list = []
        done = threading.Event()
        self._jobs.put((work, outcome, done))
        _wait(done, self._thread)
        succeeded, value = outcome[0]
        if not succeeded:
            raise value
        return value

    def close(self) -> None:
        self._finalizer()


def _serve(jobs: "queue.SimpleQueue[Optional[tuple]]") -> None:
    while True:
        try:
            job = jobs.get()
        except KeyboardInterrupt:  # a Ctrl-C passed on just after its job ended
            continue
        if job is None:
            return
        work, outcome, done = job
        try:
            outcome.append((True, work()))
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread as it is
            outcome.append((False, error))
        finally:
            del work, job
            done.set()


def stack_thread_for(module: Module) -> Optional[StackThread]:
    """A StackThread for runs of `module` when this thread has no room for its deepest calls."""
    frames = frames_needed(module)
    return None if has_room(frames) else StackThread(frames)


__all__ = ["StackThread", "frames_needed", "has_room", "run_with_room", "stack_thread_for"]
