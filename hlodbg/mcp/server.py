"""The tools `hlodbg mcp` offers an agent, over the MCP SDK's server (mcp.server.mcpserver).

Each tool is a Desk method (sessions.py) run on the sessions' thread; its text is bounded by the
server's limit (folders.page), and the tools that only look take an `offset` to read on. An
hlodbg error becomes the tool's error with hlodbg's message (file:line:col, the line and a caret
where there is a place); anything else is reported as a bug in hlodbg, its traceback on stderr.
"""
from __future__ import annotations

import asyncio
import sys
import traceback
from typing import Annotated, Callable, Literal, Optional

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from hlodbg import __version__
from hlodbg.engine.ir.errors import HlodbgError

from .folders import page
from .sessions import DEFAULT_TIMEOUT, STEPS, Desk

INSTRUCTIONS = """hlodbg steps through StableHLO (.mlir) and XLA HLO (.hlo) programs op by op, on the
CPU or an emulated TPU, recording every value so a run can go backwards too. To find a bug:
`load` a program (with its arguments .npz if there is one; else random ones from a seed), read
its `summary`, `run` to='nan' to stop just after the first op that makes a NaN, `read` values
(hlodbg expressions: %5, %x[0, :4], abs(%3).max()), `explain` the op (with at='1,0' for where one
element comes from) or `trace` an element back through the whole run, `step` both ways.
`memory` and `diff` report on the whole program. Every answer is cut at a fixed size; a cut one
says how to read on. Several programs may be open at once: each has a handle (p1, p2, ...)."""

Handle = Annotated[str, Field(description="the handle `load` gave the program (p1, p2, ...)")]
Offset = Annotated[int, Field(description="character to start the answer at (a cut answer says where to read on)",
                              ge=0)]
Device = Annotated[Optional[int], Field(description="on a grid: the device (0, 1, ...) to move and read on from now "
                                                     "on (default: the one in focus, at first 0)", ge=0)]
TimeLimit = Annotated[float, Field(description="seconds the run may take before it is interrupted where it is",
                                 gt=0)]

KEPT_ANSWERS = 16  # whole answers kept for reading on with `offset`
LOOK_ON = "look at the rest with summary, read or explain"

LOOKING = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
MOVING = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


def build_server(desk: Desk, limit: int) -> MCPServer:
    # Refusals are answers the agent reads, not news for the server's log: only warnings go to stderr.
    server: MCPServer = MCPServer("hlodbg", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    # The last whole answer of each question (the tool and its arguments but `offset`): reading on
    # with `offset` pages through that answer, not a new one (a `trace` of nan has moved the cursor).
    answers: dict[tuple, str] = {}

    async def answer(work: Callable[[], str], question: Optional[tuple] = None, offset: int = 0,
                     narrower: str = "") -> str:
        try:
            text = answers.get(question) if question is not None and offset else None
            if text is None:
                text = await asyncio.wrap_future(desk.call(work))
            if question is not None:
                answers.pop(question, None)
                answers[question] = text
                while len(answers) > KEPT_ANSWERS:
                    answers.pop(next(iter(answers)))
            return page(text, limit, offset, narrower or LOOK_ON, pageable=question is not None)
        except HlodbgError as e:
            raise ToolError(e.render() if e.pos is not None else e.message) from None
        except Exception as e:  # noqa: BLE001 - a bug in hlodbg must not end the agent's session
            traceback.print_exc(file=sys.stderr)
            raise ToolError(f"internal error: {type(e).__name__}: {e} (a bug in hlodbg; the traceback is on the "
                            "server's stderr)") from None

    @server.tool(annotations=MOVING, structured_output=False)
    async def load(
        program: Annotated[str, Field(description="the .mlir or .hlo file (relative: to the server's first root)")],
        args: Annotated[Optional[str], Field(description="its arguments: an .npz file (members arg0, arg1, ... or "
                                                         "the arguments' names), or a folder of NAME.npy")] = None,
        target: Annotated[Optional[str], Field(description="the machine it runs on: cpu (default), tpu-v5e, "
                                                           "tpu-v4, ...")] = None,
        entry: Annotated[str, Field(description="the function to run")] = "main",
        seed: Annotated[int, Field(description="seed of the random arguments not given")] = 0,
        replicas: Annotated[Optional[int], Field(description="grid replicas (default: the module's)")] = None,
        partitions: Annotated[Optional[int], Field(description="grid partitions (default: the module's)")] = None,
        memory: Annotated[Optional[str], Field(description="what the recording may hold, e.g. 512M or 2G (default: "
                                                           "the arguments' size, at least 256M)")] = None,
        fill_elided: Annotated[Optional[Literal["random", "zeros"]],
                               Field(description="give constants an HLO dump elided ({...}) random values or zeros, "
                                                 "so the program can run")] = None,
    ) -> str:
        """Open a program for debugging: a handle for the other tools and a summary of the program.
        The cursor starts before the first op; nothing has run yet."""
        return await answer(lambda: desk.load(program, args, target, entry, seed, replicas, partitions, memory,
                                             fill_elided))

    @server.tool(annotations=LOOKING, structured_output=False)
    async def summary(handle: Handle, offset: Offset = 0) -> str:
        """The program's functions, how many ops of each kind, the entry's arguments (with their
        values' summaries once read) and results, the grid and target, and where the cursor is."""
        return await answer(lambda: desk.summary(handle), ("summary", handle), offset)

    @server.tool(annotations=MOVING, structured_output=False)
    async def run(
        handle: Handle,
        to: Annotated[Optional[str], Field(description="stop there (for this run only): nan, inf (just after the "
                                                       "first op making one), %12, @fn:%3, a line number, file.py:42, "
                                                       "an op kind (stablehlo.dot_general), diverge, ...")] = None,
        condition: Annotated[Optional[str], Field(description="stop only where this hlodbg expression holds, e.g. "
                                                              "iteration == 3 or %x.max() > 10")] = None,
        time_limit: TimeLimit = DEFAULT_TIMEOUT,
        device: Device = None,
    ) -> str:
        """Run forward to `to`, else to the next breakpoint or the end; says where it stopped, the
        op that made what the breakpoint saw with its values, the next op and the stack."""
        return await answer(lambda: desk.run(handle, to, condition, time_limit, device))

    @server.tool(annotations=MOVING, structured_output=False)
    async def step(
        handle: Handle,
        how: Annotated[str, Field(description=f"one of {', '.join(STEPS)}: over an op (a call or loop whole), into "
                                              "it, out of the frame, and the same backwards; reverse runs backwards "
                                              "to the previous breakpoint")] = "over",
        count: Annotated[int, Field(description="how many steps", ge=1)] = 1,
        time_limit: TimeLimit = DEFAULT_TIMEOUT,
        device: Device = None,
    ) -> str:
        """Step the cursor forward or backward; says where it is now."""
        return await answer(lambda: desk.step(handle, how, count, time_limit, device))

    @server.tool(annotations=MOVING, structured_output=False)
    async def breakpoint(
        handle: Handle,
        spec: Annotated[Optional[str], Field(description="where to stop, as for run's `to`")] = None,
        condition: Annotated[Optional[str], Field(description="an hlodbg expression that must hold")] = None,
        clear: Annotated[bool, Field(description="remove every breakpoint first")] = False,
    ) -> str:
        """Add a breakpoint that every later run stops at (until cleared), or clear them; lists them."""
        return await answer(lambda: desk.breakpoint(handle, spec, condition, clear))

    @server.tool(annotations=LOOKING, structured_output=False)
    async def read(
        handle: Handle,
        expression: Annotated[str, Field(description="an hlodbg expression over the values the cursor sees: %5, "
                                                     "%x[0, :4], %5#1, abs(%3).max(), iteration")],
        device: Device = None,
        offset: Offset = 0,
    ) -> str:
        """A value where the cursor is: its summary (shape, range, mean, NaN/Inf counts) and its
        elements (all of a small value; the ends of each axis of a big one: read slices for more)."""
        return await answer(lambda: desk.read(handle, expression, device), ("read", handle, expression, device), offset,
                            "read a smaller slice")

    @server.tool(annotations=LOOKING, structured_output=False)
    async def explain(
        handle: Handle,
        op: Annotated[Optional[str], Field(description="the op: %12, @fn:%12, an HLO instruction name, a line "
                                                       "number (default: the op at the cursor)")] = None,
        at: Annotated[Optional[str], Field(description="an element of its result, e.g. 1,0,2 ('' for a scalar): "
                                                       "where it comes from")] = None,
        result: Annotated[Optional[int], Field(description="which result `at` is in (default 0)", ge=0)] = None,
        lang: Annotated[str, Field(description="en, ja or hi")] = "en",
        device: Device = None,
        offset: Offset = 0,
    ) -> str:
        """What the op does, with its values where the cursor is: operands and results, attributes
        decoded, how the result shape follows, and with `at` the operand elements that make it."""
        return await answer(lambda: desk.explain(handle, op, at, result, lang, device),
                            ("explain", handle, op, at, result, lang, device), offset)

    @server.tool(annotations=MOVING, structured_output=False)
    async def trace(
        handle: Handle,
        value: Annotated[str, Field(description="%v (the value the cursor sees), or nan / inf: the first one the "
                                                "run makes from the cursor on (the cursor moves there)")],
        at: Annotated[Optional[str], Field(description="the element of %v, e.g. 3,7 (default: its only element)")] = None,
        time_limit: TimeLimit = DEFAULT_TIMEOUT,
        device: Device = None,
        offset: Offset = 0,
    ) -> str:
        """Where one element came from, op by op back through the whole run (loops, calls), to the
        arguments and constants it depends on; for a NaN or Inf, to the op that first made one."""
        return await answer(lambda: desk.trace(handle, value, at, time_limit, device),
                            ("trace", handle, value, at, device), offset)

    @server.tool(annotations=LOOKING, structured_output=False)
    async def memory(
        handle: Handle,
        target: Annotated[Optional[str], Field(description="the machine (default: the program's)")] = None,
        top: Annotated[int, Field(description="buffers listed at each peak (0: all)", ge=0)] = 10,
        offset: Offset = 0,
    ) -> str:
        """Each device's peak memory, the buffers live there and whether it fits (static: nothing runs)."""
        return await answer(lambda: desk.memory(handle, target, top), ("memory", handle, target, top), offset,
                            "a smaller `top`")

    @server.tool(annotations=LOOKING, structured_output=False)
    async def diff(
        handle: Handle,
        against: Annotated[str, Field(description="the second target, e.g. tpu-v5e or cpu")],
        rtol: Annotated[Optional[float], Field(description="relative tolerance")] = None,
        atol: Annotated[Optional[float], Field(description="absolute tolerance")] = None,
        offset: Offset = 0,
    ) -> str:
        """Run the program on its target and on `against` in lockstep, on the same arguments, and name
        the first op whose result differs beyond the tolerance, with both values and why."""
        return await answer(lambda: desk.diff(handle, against, rtol, atol), ("diff", handle, against, rtol, atol),
                            offset)

    @server.tool(annotations=MOVING, structured_output=False)
    async def save(
        handle: Handle,
        expression: Annotated[str, Field(description="an hlodbg expression, as for read")],
        path: Annotated[str, Field(description="a .npy file name in the server's work folder (relative to it)")],
        overwrite: Annotated[bool, Field(description="replace a file already there")] = False,
    ) -> str:
        """Write a value where the cursor is to a .npy file in the work folder (nowhere else)."""
        return await answer(lambda: desk.save(handle, expression, path, overwrite))

    @server.tool(annotations=MOVING, structured_output=False)
    async def close(handle: Handle) -> str:
        """Close a program and free its recording."""
        for question in [q for q in answers if q[1] == handle]:
            del answers[question]
        return await answer(lambda: desk.close(handle))

    return server


__all__ = ["INSTRUCTIONS", "build_server"]
