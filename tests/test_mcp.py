"""`hlodbg mcp` driven by the MCP SDK's own client over stdio, as an agent's host drives it: the
tools listed, a program loaded and run to its first NaN, values read, the op explained, a path
outside the server's folders refused, an oversized answer cut with a note, errors as tool errors."""
from __future__ import annotations

import ast
import re
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import pytest

from hlodbg.cli import main
from hlodbg.mcp import MISSING_SDK

from .helpers import PROGRAMS, require_shared

DATA = Path(__file__).parent / "data"
TOOLS = {"load", "summary", "run", "step", "breakpoint", "read", "explain", "trace", "memory", "diff", "save", "close"}

# A reduction over a big value: its summary is short, its elements (printed when asked) are not.
BIG_PROGRAM = """func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = stablehlo.exponential %x : tensor<64x64xf32>
  %l = stablehlo.log %x : tensor<64x64xf32>
  %s = stablehlo.add %e, %l : tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}
"""

# A loop that never ends: a run is interrupted at its time limit, and goes on from there.
ENDLESS_PROGRAM = """func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.while(%v = %x) : tensor<f32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      %n = stablehlo.add %v, %one : tensor<f32>
      stablehlo.return %n : tensor<f32>
    }
  return %r : tensor<f32>
}
"""


@asynccontextmanager
async def hlodbg_mcp(workdir: Path, *roots: Path, extra: tuple = ()):
    pytest.importorskip("mcp", reason="the `mcp` extra is not installed")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    arguments = ["-m", "hlodbg", "mcp", "--workdir", str(workdir), *extra]
    for root in roots:
        arguments += ["--root", str(root)]
    params = StdioServerParameters(command=sys.executable, args=arguments)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session, tool: str, **arguments) -> str:
    result = await session.call_tool(tool, arguments)
    text = "".join(block.text for block in result.content if block.type == "text")
    assert not result.is_error, text
    return text


async def refused(session, tool: str, **arguments) -> str:
    result = await session.call_tool(tool, arguments)
    text = "".join(block.text for block in result.content if block.type == "text")
    assert result.is_error, text
    assert "Traceback" not in text
    return text


async def test_an_agent_finds_the_nan_of_a_loop(tmp_path):
    async with hlodbg_mcp(tmp_path / "work", DATA) as session:
        listed = await session.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        assert all(tool.description for tool in listed.tools)

        loaded = await call(session, "load", program="nan_in_loop.mlir", seed=0)
        handle = re.search(r"opened as (p\d+)", loaded).group(1)
        assert "@update (private): 2 arguments" in loaded and "stablehlo.sqrt: 1" in loaded

        stopped = await call(session, "run", handle=handle, to="nan")
        assert "breakpoint" in stopped and "nan" in stopped
        assert "made by event" in stopped and "%s = stablehlo.sqrt (line 25) in @update" in stopped
        assert "@update" in stopped.split("stack (outermost first):")[1]

        value = await call(session, "read", handle=handle, expression="%s")
        assert "1 NaN" in value and "nan" in value.splitlines()[1]
        operand = await call(session, "read", handle=handle, expression="%d[1]")
        assert float(operand.split("=")[1].split()[0]) < 0  # the square root's negative operand

        nan_at = next(i for i, word in enumerate(value.splitlines()[1].strip("[]").split(",")) if "nan" in word)
        explained = await call(session, "explain", handle=handle, op="%s", at=str(nan_at))
        assert "Takes the square root" in explained
        assert f"result({nan_at}) = sqrt(operand({nan_at})=-" in explained and ") = nan" in explained

        traced = await call(session, "trace", handle=handle, value="%s", at=str(nan_at))
        assert "stablehlo.sqrt" in traced and "argument arg0 (x)" in traced

        back = await call(session, "step", handle=handle, how="back")
        assert "next op (event" in back and "stablehlo.sqrt" in back

        # Errors are the tool's, in hlodbg's words.
        assert "no program open as 'p9'" in await refused(session, "read", handle="p9", expression="%s")
        unknown = await refused(session, "read", handle=handle, expression="%nowhere")
        assert "%nowhere" in unknown
        assert "step how='sideways'" in await refused(session, "step", handle=handle, how="sideways")

        # A breakpoint kept for later runs, with a condition in hlodbg's expressions; running backwards.
        listed = await call(session, "breakpoint", handle=handle, spec="%d", condition="iteration == 2")
        assert listed.count("%d") == 1 and "nan" not in listed  # run's `to` was for that run only
        at_two = await call(session, "run", handle=handle)
        assert "while.body #2" in at_two.split("stack (outermost first):")[1]
        assert await call(session, "read", handle=handle, expression="iteration") == "iteration = 2"
        assert "none" in await call(session, "breakpoint", handle=handle, clear=True)
        rewound = await call(session, "step", handle=handle, how="reverse")
        assert rewound.startswith("stopped: at the first op") and "next op (event 0)" in rewound

        # Nothing is evaluated but hlodbg's expressions.
        escape = await refused(session, "read", handle=handle, expression="__import__('os').system('true')")
        assert "not allowed" in escape

        closed = await call(session, "close", handle=handle)
        assert f"closed {handle}" in closed
        await refused(session, "summary", handle=handle)


async def test_paths_outside_the_folders_are_refused(tmp_path):
    program = tmp_path / "programs" / "big.mlir"
    program.parent.mkdir()
    program.write_text(BIG_PROGRAM)
    outside = tmp_path / "elsewhere.mlir"
    outside.write_text(BIG_PROGRAM)
    work = tmp_path / "work"
    async with hlodbg_mcp(work, program.parent) as session:
        # Reading: only under --root and the work folder, by any spelling of the path.
        for path in (str(outside), "../elsewhere.mlir"):
            text = await refused(session, "load", program=path)
            assert "outside the folders this server reads" in text and "--root" in text
        link = program.parent / "link.mlir"
        link.symlink_to(outside)
        assert "outside the folders" in await refused(session, "load", program="link.mlir")

        loaded = await call(session, "load", program="big.mlir")
        handle = re.search(r"opened as (p\d+)", loaded).group(1)
        await call(session, "step", handle=handle, count=2)
        # Writing: only in the work folder.
        for path in (str(tmp_path / "x.npy"), "../x.npy", "/tmp/x.npy"):
            text = await refused(session, "save", handle=handle, expression="%e", path=path)
            assert "outside the work folder" in text
        assert not (tmp_path / "x.npy").exists()
        saved = await call(session, "save", handle=handle, expression="%e[0:2, 0:3]", path="out/e.npy")
        assert "wrote" in saved
        written = np.load(work / "out" / "e.npy")
        assert written.shape == (2, 3)
        kept = await refused(session, "save", handle=handle, expression="%e", path="out/e.npy")
        assert "exists: pass overwrite=true" in kept and np.load(work / "out" / "e.npy").shape == (2, 3)
        await call(session, "save", handle=handle, expression="%e[0]", path="out/e.npy", overwrite=True)
        assert np.load(work / "out" / "e.npy").shape == (64,)
        shown = await call(session, "read", handle=handle, expression="%e[0:2, 0:3]")
        assert np.allclose(written, _elements(shown), rtol=1e-5)  # the printed elements


async def test_an_oversized_answer_is_cut_with_a_note(tmp_path):
    program = tmp_path / "big.mlir"
    program.write_text(BIG_PROGRAM)
    async with hlodbg_mcp(tmp_path / "work", tmp_path, extra=("--max-output", "400")) as session:
        loaded = await call(session, "load", program="big.mlir")
        assert len(loaded) <= 400 and "look at the rest with summary" in loaded  # load takes no offset
        handle = re.search(r"opened as (p\d+)", loaded).group(1)
        await call(session, "step", handle=handle, count=2)
        first = await call(session, "read", handle=handle, expression="%e")
        assert len(first) <= 400
        note = re.search(r"truncated: characters 0-(\d+) of (\d+) shown; call again with offset=(\d+)", first)
        assert note is not None, first
        shown, total, offset = (int(g) for g in note.groups())
        assert shown == offset and total > 400
        rest = await call(session, "read", handle=handle, expression="%e", offset=offset)
        assert first[:shown] + rest.split("\n… truncated")[0] != first[:shown]
        assert "read a smaller slice" in first
        past = await refused(session, "read", handle=handle, expression="%e", offset=total + 5)
        assert "past the end" in past

        # Reading on pages through the same answer, even where asking again would move on: a trace
        # of nan runs to the next NaN from the cursor.
        (tmp_path / "nan_in_loop.mlir").write_text((DATA / "nan_in_loop.mlir").read_text())
        loaded = await call(session, "load", program="nan_in_loop.mlir")
        handle = re.search(r"opened as (p\d+)", loaded).group(1)
        first = await call(session, "trace", handle=handle, value="nan")
        head = first.splitlines()[0]
        assert head.startswith("trace of ") and "nan" in head
        shown, total, offset = (int(g) for g in re.search(
            r"characters 0-(\d+) of (\d+) shown; call again with offset=(\d+)", first).groups())
        rest = await call(session, "trace", handle=handle, value="nan", offset=offset)
        whole = first[:shown] + rest.split("\n… truncated")[0]
        assert whole == _whole_trace_of_the_first_nan(tmp_path)[:len(whole)] and len(whole) > shown
        again = await call(session, "trace", handle=handle, value="nan")  # asked anew: the next NaN
        assert again.splitlines()[0] != head


async def test_a_shared_program_is_summarised_run_and_reported(tmp_path):
    """A shared program on its inputs: run to the end, its result read back equal to the expected
    one, the memory and diff reports, and two sessions open at once, each moved by its handle."""
    require_shared()
    async with hlodbg_mcp(tmp_path / "work", PROGRAMS) as session:
        loaded = await call(session, "load", program="mlp.mlir", args="mlp.inputs.npz")
        handle = re.search(r"opened as (p\d+)", loaded).group(1)
        assert "arg0 %arg0: tensor<8x16xf32>" in loaded and "entry results: tensor<8x4xf32>" in loaded
        assert "stablehlo.dot_general: 1" in loaded
        finished = await call(session, "run", handle=handle)
        assert "the run finished" in finished and "result 0: 8x4xf32" in finished
        summary = await call(session, "summary", handle=handle)
        assert "arg0 %arg0: tensor<8x16xf32> = 8x16xf32" in summary  # the arguments' values, read by the run
        assert "the run's results:\n  result 0: 8x4xf32" in summary

        back = await call(session, "step", handle=handle, how="back")
        returned = re.search(r"next op \(event \d+\): func.return .*\n  operand 0: (%\w+):", back).group(1)
        shown = await call(session, "read", handle=handle, expression=returned)
        expected = np.load(PROGRAMS / "mlp.expected.npz")["result0"]
        assert np.allclose(_elements(shown), expected, rtol=1e-4, atol=1e-5)

        memory = await call(session, "memory", handle=handle, top=3)
        assert "peak" in memory and "fits" in memory
        diff = await call(session, "diff", handle=handle, against="tpu-v5e")
        assert "compared between cpu and tpu-v5e" in diff

        other = await call(session, "load", program="mlp.mlir", args="mlp.inputs.npz")
        second = re.search(r"opened as (p\d+)", other).group(1)
        assert second != handle
        at_dot = await call(session, "run", handle=second, to="stablehlo.dot_general")
        assert "next op" in at_dot and "stablehlo.dot_general" in at_dot.split("next op")[1].splitlines()[0]
        again = await call(session, "read", handle=handle, expression=returned)
        assert again == shown  # the first session stayed where it was


async def test_a_run_that_never_ends_is_interrupted_and_a_bad_program_is_located(tmp_path):
    (tmp_path / "endless.mlir").write_text(ENDLESS_PROGRAM)
    (tmp_path / "broken.mlir").write_text(ENDLESS_PROGRAM.replace("stablehlo.add %v, %one", "stablehlo.add %v %one"))
    async with hlodbg_mcp(tmp_path / "work", tmp_path) as session:
        located = await refused(session, "load", program="broken.mlir")
        assert re.search(r"broken\.mlir:8:\d+: error: ", located) and "\n" + " " * 4 in located and "^" in located

        loaded = await call(session, "load", program="endless.mlir")
        handle = re.search(r"opened as (p\d+)", loaded).group(1)
        first = await call(session, "run", handle=handle, time_limit=0.5)
        assert "interrupted after 0.5 s" in first
        at = int(re.search(r"next op \(event (\d+)\)", first).group(1))
        second = await call(session, "run", handle=handle, time_limit=0.5)
        assert "interrupted" in second and int(re.search(r"next op \(event (\d+)\)", second).group(1)) > at
        counted = await call(session, "read", handle=handle, expression="iteration")
        assert int(counted.split("=")[1].split()[0]) > 0


async def test_the_devices_of_a_grid_program(tmp_path):
    """A sharded program on 8 devices: stopped at its all_reduce on device 0, read on device 1 (its
    own values), and the collective's element explained from both devices' contributions."""
    require_shared()
    async with hlodbg_mcp(tmp_path / "work", PROGRAMS) as session:
        loaded = await call(session, "load", program="sharded_mlp_4x2.mlir", args="sharded_mlp_4x2.inputs.npz")
        handle = re.search(r"opened as (p\d+)", loaded).group(1)
        assert "grid 1x8" in loaded
        stopped = await call(session, "run", handle=handle, to="stablehlo.all_reduce")
        assert "on device 0 of 8" in stopped and "= stablehlo.all_reduce" in stopped.split("next op")[1]
        mine = _elements(await call(session, "read", handle=handle, expression="%1[0, 0:3]"))
        theirs = _elements(await call(session, "read", handle=handle, expression="%1[0, 0:3]", device=1))
        assert not np.allclose(mine, theirs)  # each device multiplies its own shard
        explained = await call(session, "explain", handle=handle, at="0,0")
        contributions = re.findall(r"contribution: operand #0 \S+ at \(0, 0\)(?: of device \([^)]*\))? = (\S+)",
                                   explained)
        assert sorted(float(c) for c in contributions) == pytest.approx(sorted([mine[0], theirs[0]]), rel=1e-5)
        moved = await call(session, "step", handle=handle)
        assert "on device 1 of 8" in moved  # the device read last stays in focus


def test_without_the_sdk_the_command_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "hlodbg.mcp.server", raising=False)  # imported again, meeting the block
    for name in ("mcp", "mcp.server", "mcp.server.mcpserver"):
        monkeypatch.setitem(sys.modules, name, None)  # an import of it fails as if it were not installed
    assert main(["mcp"]) == 2
    err = capsys.readouterr().err
    assert MISSING_SDK in err and "pip install 'hlodbg[mcp]'" in err and "Traceback" not in err


@pytest.mark.parametrize(("option", "refusal"), [
    (["--max-output", "10"], "--max-output 10: expected 300 characters or more"),
    (["--max-open", "0"], "--max-open 0: expected 1 or more"),
    (["--root", "/nonexistent/folder"], "--root /nonexistent/folder: no such folder"),
])
def test_bad_options_are_refused_before_serving(option, refusal, capsys):
    assert main(["mcp", *option]) == 2
    assert refusal in capsys.readouterr().err


@pytest.mark.parametrize("start_in", ["/", "~"])
def test_started_in_the_root_or_home_folder_it_needs_roots_named(start_in, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(Path(start_in).expanduser())
    assert main(["mcp", "--workdir", str(tmp_path / "work")]) == 2
    assert "name the folders it may read programs from with --root DIR" in capsys.readouterr().err


def test_the_rest_of_hlodbg_does_not_need_the_sdk():
    import subprocess

    blocker = ("import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
               "from hlodbg.cli import main\n"
               "sys.exit(main(['run', sys.argv[1], '--seed', '1']))")
    done = subprocess.run([sys.executable, "-c", blocker, str(DATA / "nan_in_loop.mlir")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _whole_trace_of_the_first_nan(folder: Path) -> str:
    """What the server's `trace nan` answers on nan_in_loop.mlir, asked in this process."""
    from hlodbg.mcp.folders import Folders
    from hlodbg.mcp.sessions import Desk

    desk = Desk(Folders.make(str(folder / "work-here"), [str(folder)]))
    try:
        desk.call(lambda: desk.load("nan_in_loop.mlir")).result()
        return desk.call(lambda: desk.trace("p1", "nan")).result()
    finally:
        desk.close_all()


def _elements(shown: str) -> np.ndarray:
    """The elements `read` printed under the summary line."""
    return np.array(ast.literal_eval(shown.split("\n", 1)[1]))
