"""Debugging a capture (engine/debug/capture_replay.py, `--capture` on open/run/diff): the program
runs in hlodbg's interpreter with the captured values in place of computed ones.

Captures here are written by tests/capture_helpers.py from hlodbg's own run, with chosen values
altered to stand in for what a real device did differently (a NaN at one loop iteration, one
device's value perturbed).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.debug.capture_replay import CAPTURED, COMPUTED, CaptureBackend, open_capture, value_source
from hlodbg.engine.run.capture_format import INDEX, MANIFEST, CaptureError
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.run.spmd import run_global

from .capture_helpers import write_capture
from .helpers import PROGRAMS, require_shared
from .pilot import settle

DATA = Path(__file__).resolve().parent / "data"
LOOP = DATA / "capture_loop.mlir"
X = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
# Op sites of capture_loop.mlir: the while, the call in its body, @step's multiply and add.
WHILE, CALL, MULTIPLY, ADD = "@main#1", "@main#7", "@step#3", "@step#4"


def at_iteration(i: int) -> str:
    """The context of @step's values in iteration i of the loop."""
    return f"{WHILE}[{i}]/{CALL}"


def loop_capture(tmp_path: Path, alter=None, name: str = "run.hlocap") -> Path:
    program = hlodbg.load(LOOP)
    return write_capture(program.module, LOOP.read_text(), [X], tmp_path / name, alter=alter)


def nan_at(iteration: int):
    def alter(context, site, result, device, array):
        if context == at_iteration(iteration) and site == ADD:
            array = array.copy()
            array[2] = np.nan
        return array
    return alter


def perturbed_at(iteration: int, factor: float = 1.01):
    """@step's multiply in iteration `iteration`, scaled by `factor`."""
    def alter(context, site, result, device, array):
        if context == at_iteration(iteration) and site == MULTIPLY:
            return (array * array.dtype.type(factor)).astype(array.dtype)
        return array
    return alter


def events_with_results(session):
    trace = session.trace
    return [e for e in range(len(trace)) if trace.ops[e].results and trace.done(e)]


# -- replay ------------------------------------------------------------------------------------------

def test_replaying_an_unaltered_capture_gives_the_run_and_every_value_is_captured(tmp_path):
    capture = open_capture(loop_capture(tmp_path))
    program = hlodbg.load(LOOP)
    backend = CaptureBackend(capture)
    replayed = Interpreter(program.module, backend=backend).run("main", capture.inputs())
    plain = Interpreter(program.module).run("main", [X])
    for ours, theirs in zip(replayed, plain):
        assert np.array_equal(ours, theirs)
    assert backend.replayed > 0 and backend.computed == 0

    session = program.debug(capture.inputs(), backend=backend, persist=False).session
    session.continue_()
    assert session.finished
    events = events_with_results(session)
    assert len(events) > 60
    assert {value_source(session, e) for e in events} == {CAPTURED}
    assert value_source(program.debug([X], persist=False).session, 0) is None  # not a capture: no word


def test_a_capture_backend_takes_the_options_of_the_backend_computing_what_it_did_not_capture(tmp_path):
    capture = open_capture(loop_capture(tmp_path))
    configured = CaptureBackend(capture).configured(excess_precision=False)
    assert configured.excess_precision is False and configured.base.excess_precision is False
    assert CaptureBackend(capture).excess_precision is True  # the original is left as it was


def test_the_python_api_debugs_a_capture(tmp_path):
    directory = loop_capture(tmp_path, nan_at(5))
    program = hlodbg.load(LOOP)
    session = program.debug(capture=str(directory), persist=False).session  # on the capture's inputs
    assert session.backend.describe() == "capture run.hlocap (xla:cpu, cpu)"
    session.break_at("nan")
    stop = session.continue_()
    assert session.event(stop.hits[0].event).iterations == (5,)
    with pytest.raises(CaptureError, match="captured on a 1x1 grid, not 1x2"):
        program.debug(capture=str(directory), persist=False, replicas=1, partitions=2)


def test_large_captured_arrays_are_memory_mapped_and_read_only(tmp_path, monkeypatch):
    from hlodbg.engine.debug import capture_replay

    capture = open_capture(loop_capture(tmp_path))
    backend = CaptureBackend(capture)
    program = hlodbg.load(LOOP)
    add = next(op for op in program.module.function("step").ops if op.name == "stablehlo.add")
    row = backend.row(at_iteration(2), ADD, 0)
    small = backend.read(row, add, 0)
    assert not isinstance(small.base, np.memmap) and not small.flags.writeable
    monkeypatch.setattr(capture_replay, "MAP_FROM_BYTES", 0)
    mapped = backend.read(row, add, 0)
    assert isinstance(mapped.base, np.memmap) and not mapped.flags.writeable
    assert type(mapped) is np.ndarray and np.array_equal(mapped, small)
    replayed = Interpreter(program.module, backend=backend).run("main", capture.inputs())
    assert np.array_equal(replayed[0], Interpreter(program.module).run("main", [X])[0])


def test_values_the_capture_left_out_are_computed_and_marked_so(tmp_path):
    directory = loop_capture(tmp_path)
    index = directory / INDEX
    lines = index.read_text().splitlines()
    kept = [line for line in lines if f",{MULTIPLY}," not in line]
    assert len(kept) < len(lines)
    index.write_text("\n".join(kept) + "\n")
    capture = open_capture(directory)
    program = hlodbg.load(LOOP)
    session = program.debug(capture.inputs(), backend=CaptureBackend(capture), persist=False).session
    session.continue_()
    sources = {session.trace.ops[e].name: value_source(session, e) for e in events_with_results(session)}
    assert sources["stablehlo.multiply"] == COMPUTED and sources["stablehlo.add"] == CAPTURED
    ops = {op.name: op for op in program.module.function("step").ops}
    backend = session.backend
    assert any("holds no value of this op" in note for note in backend.numerics_notes(ops["stablehlo.multiply"]))
    assert backend.numerics_notes(ops["stablehlo.add"]) == []
    plain = Interpreter(program.module).run("main", [X])
    assert np.array_equal(session.results[0], plain[0])


def test_a_loop_follows_the_captured_condition_not_its_own(tmp_path):
    # The device's loop ran 3 iterations (its condition said false at iteration 3): the replay does too.
    def stop_early(context, site, result, device, array):
        if context == f"{WHILE}[3]" and site == "@main#3":  # the condition's compare
            return np.array(False)
        return array

    capture = open_capture(loop_capture(tmp_path, stop_early))
    program = hlodbg.load(LOOP)
    session = program.debug(capture.inputs(), backend=CaptureBackend(capture), persist=False).session
    session.continue_()
    iterations = {session.trace.frame_records[r].iteration for r in range(len(session.trace.frame_records))}
    assert max(i for i in iterations if i is not None) == 3  # condition #0..#3, bodies #0..#2


# -- breakpoints meet the captured run -----------------------------------------------------------------

def test_run_break_on_nan_stops_at_the_iteration_the_device_made_it(tmp_path, capsys):
    directory = loop_capture(tmp_path, nan_at(5))
    assert main(["run", str(LOOP), "--capture", str(directory), "--break-on", "nan"]) == 3
    out = capsys.readouterr().out
    assert "first NaN produced by event" in out and "%s = stablehlo.add" in out
    assert "while.body #5" in out and "result %s (captured): NOT finite" in out
    # The plain run of the same program has no NaN at all.
    assert main(["run", str(LOOP), "--args", str(_npz(tmp_path)), "--break-on", "nan"]) == 0


def test_run_break_on_an_expression_meets_the_captured_run(tmp_path, capsys):
    def large_at_6(context, site, result, device, array):
        if context == at_iteration(6) and site == ADD:
            return np.full_like(array, 5000.0)
        return array

    directory = loop_capture(tmp_path, large_at_6)
    assert main(["run", str(LOOP), "--capture", str(directory), "--break-on", "abs(result).max() > 1e3"]) == 3
    out = capsys.readouterr().out
    assert "after event" in out and "%s = stablehlo.add" in out and "while.body #6" in out
    assert "result %s (captured): finite: 4xf32 min 5000" in out


def _npz(tmp_path: Path) -> Path:
    path = tmp_path / "x.npz"
    np.savez(path, arg0=X)
    return path


def test_a_session_nan_breakpoint_stops_at_iteration_5_and_stepping_back_keeps_the_captured_values(tmp_path):
    capture = open_capture(loop_capture(tmp_path, nan_at(5)))
    program = hlodbg.load(LOOP)
    # A tiny budget: values are dropped as the run goes, and read again (recomputed) when asked.
    session = program.debug(capture.inputs(), backend=CaptureBackend(capture), persist=False, memory="2K").session
    session.break_at("nan")
    stop = session.continue_()
    assert stop.reason == "breakpoint"
    hit = session.event(stop.hits[0].event)
    assert hit.op.name == "stablehlo.add" and hit.iterations == (5,)
    assert np.isnan(hit.outputs[0][2]) and value_source(session, hit.id) == CAPTURED
    session.continue_()
    assert session.finished
    store = session.timeline.view.store
    before = store.recomputed
    first_add = next(e for e in events_with_results(session) if session.trace.ops[e] is hit.op
                     and session.event(e).iterations == (5,))
    assert np.isnan(session.event(first_add).outputs[0][2])  # read back as captured, not recomputed
    assert store.recomputed >= before


def test_a_dropped_value_is_read_back_from_the_capture(tmp_path):
    capture = open_capture(loop_capture(tmp_path, perturbed_at(2, factor=3.0)))
    program = hlodbg.load(LOOP)
    session = program.debug(capture.inputs(), backend=CaptureBackend(capture), persist=False, memory="1K").session
    session.continue_()
    store = session.timeline.view.store
    multiplies = [e for e in events_with_results(session) if session.trace.ops[e].name == "stablehlo.multiply"]
    third = multiplies[2]
    wanted = capture.array(at_iteration(2), MULTIPLY)
    before = store.recomputed
    assert np.array_equal(session.event(third).outputs[0], wanted)
    assert store.recomputed > before  # it had been dropped: the replay of the op read the capture again


# -- diff ----------------------------------------------------------------------------------------------

def test_diff_of_an_unaltered_capture_is_clean(tmp_path, capsys):
    directory = loop_capture(tmp_path)
    assert main(["diff", str(LOOP), "--capture", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "none diverged" in out and "capture run.hlocap" in out and "and cpu" in out


def test_diff_of_a_perturbed_capture_names_the_perturbed_op_instance(tmp_path, capsys):
    directory = loop_capture(tmp_path, perturbed_at(3))
    assert main(["diff", str(LOOP), "--capture", str(directory), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    first = report["first"]
    assert first["label"].startswith("%m = stablehlo.multiply") and first["instance"] == 4
    assert "while.body #3" in first["frames"] and first["operands_agree"]
    assert report["diverged"] == 1  # the capture's later values are the device's own, unperturbed
    assert main(["diff", str(LOOP), "--capture", str(directory), "--against", "tpu-v5e"]) == 1
    assert "first divergence" in capsys.readouterr().out


def test_run_break_on_diverge_against_the_emulator(tmp_path, capsys):
    directory = loop_capture(tmp_path, perturbed_at(3))
    assert main(["run", str(LOOP), "--capture", str(directory), "--break-on", "diverge"]) == 3
    out = capsys.readouterr().out
    assert "%m = stablehlo.multiply (run 4)" in out and "while.body #3" in out


# -- a grid --------------------------------------------------------------------------------------------

def sharded_capture(tmp_path: Path, alter=None) -> tuple[Path, Path, list]:
    require_shared()
    path = PROGRAMS / "sharded_mlp_4x2.mlir"
    if not path.exists():
        pytest.skip("sharded_mlp_4x2.mlir is not in ../shared/programs")
    inputs = np.load(PROGRAMS / "sharded_mlp_4x2.inputs.npz")
    args = [inputs["arg0"], inputs["arg1"]]
    program = hlodbg.load(path)
    directory = write_capture(program.module, path.read_text(), args, tmp_path / "grid.hlocap", alter=alter, grid=(1, 8))
    return path, directory, args


def test_a_grid_capture_replays_per_device_and_diffs_clean(tmp_path, capsys):
    path, directory, args = sharded_capture(tmp_path)
    capture = open_capture(directory)
    assert capture.grid == (1, 8) and {r.device for r in capture.rows} == set(range(8))
    program = hlodbg.load(path)
    results = run_global(program.module, capture.inputs(), num_replicas=1, num_partitions=8,
                         backend=CaptureBackend(capture))
    expected = np.load(PROGRAMS / "sharded_mlp_4x2.expected.npz")
    assert np.allclose(results[0], expected[sorted(expected.files)[0]], rtol=2e-5, atol=1e-6)

    grid = program.debug(capture.inputs(), backend=CaptureBackend(capture), persist=False)
    grid.continue_()
    for process, session in grid.sessions.items():
        device = grid.device_id(process)
        inside = [e for e in events_with_results(session) if "/" in _context(session, e) or
                  _context(session, e).startswith("@main#")]
        assert inside, "the manual computation's values"
        assert {value_source(session, e) for e in inside} == {CAPTURED}
        e = inside[0]
        row = session.backend.row(_context(session, e), _site(session, e), 0)
        assert row is not None and row.device == device  # each device reads its own rows
    grid.close()

    assert main(["diff", str(path), "--capture", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "none diverged" in out and "on each of 8 devices" in out


def test_a_value_perturbed_on_one_device_is_named_on_that_device(tmp_path, capsys):
    def on_device_5(context, site, result, device, array):
        if device == 5 and site == "@main#1":  # the dot_general inside the manual computation
            return array + np.float32(1.0)
        return array

    path, directory, _ = sharded_capture(tmp_path, on_device_5)
    assert main(["diff", str(path), "--capture", str(directory), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    first = report["first"]
    assert first["device"] == 5 and first["partition"] == 5 and first["op"] == "stablehlo.dot_general"
    # The device's all_reduce gave what it captured (the sum of the unperturbed values): only
    # device 5's dot_general differs from the emulator.
    assert [found["device"] for found in report["first_by_device"]] == [5] and report["diverged"] == 1


def test_a_nan_one_device_made_stops_the_grid_on_that_device(tmp_path, capsys):
    def nan_on_device_3(context, site, result, device, array):
        if device == 3 and site == "@main#8":  # its reduce, inside the manual computation
            return np.full_like(array, np.nan)
        return array

    path, directory, _ = sharded_capture(tmp_path, nan_on_device_3)
    assert main(["run", str(path), "--capture", str(directory), "--break-on", "nan"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("device 3 (replica 0, partition 3) of 1x8:") and "%5 = stablehlo.reduce" in out


def _context(session, e):
    from hlodbg.engine.debug.capture_replay import record_context

    return record_context(session.trace, session.trace.frames[e])


def _site(session, e):
    from hlodbg.engine.run.capture_format import site

    return site(session.trace.ops[e])


# -- bad input -----------------------------------------------------------------------------------------

def test_a_capture_of_another_program_is_refused_naming_both_files(tmp_path, capsys):
    directory = loop_capture(tmp_path)
    other = tmp_path / "other.mlir"
    other.write_text(LOOP.read_text().replace("dense<8>", "dense<9>"))
    assert main(["run", str(other), "--capture", str(directory)]) == 2
    err = capsys.readouterr().err
    assert f"{other} is not the program captured in {directory}" in err
    assert str(directory / "program.mlir") in err and "Traceback" not in err
    assert "the capture has `%n = stablehlo.constant dense<8> : tensor<i32>` where PROG has `%n = stablehlo.constant dense<9>" in err
    # The same program spaced differently is the same program.
    spaced = tmp_path / "spaced.mlir"
    spaced.write_text("\n\n" + LOOP.read_text().replace("  %", "    %"))
    assert main(["run", str(spaced), "--capture", str(directory)]) == 0


@pytest.mark.parametrize("damage, message", [
    ("missing", "no capture at"),
    ("file", "is not a capture: a capture is a directory"),
    ("manifest", "cannot read"),
    ("no manifest", "has no capture.json"),
    ("index", "no index.csv"),
    ("value file", "cannot read"),
    ("value shape", "where the program has tensor<4xf32>"),
    ("value dtype", "'float99' is no dtype hlodbg knows; the index is damaged"),
])
def test_a_missing_or_corrupt_capture_gets_a_clear_message(tmp_path, capsys, damage, message):
    directory = loop_capture(tmp_path)
    if damage == "missing":
        shutil.rmtree(directory)
    elif damage == "file":
        shutil.rmtree(directory)
        directory.write_text("not a directory")
    elif damage == "manifest":
        (directory / MANIFEST).write_text("{ not json")
    elif damage == "no manifest":
        (directory / MANIFEST).unlink()
    elif damage == "index":
        (directory / INDEX).unlink()
    else:
        capture = open_capture(directory)
        row = next(r for r in capture.rows if r.site == ADD)
        if damage == "value file":
            (directory / row.file).write_bytes(b"garbage")
        elif damage == "value dtype":
            index = directory / INDEX
            index.write_text(index.read_text().replace(f",float32,{row.file}", f",float99,{row.file}"))
        else:
            np.save(directory / row.file, np.zeros(3, np.float32))
    for command in (["run"], ["diff"]):
        assert main([*command, str(LOOP), "--capture", str(directory)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and "internal error" not in err


def test_capture_does_not_go_with_another_target_or_grid(tmp_path, capsys):
    directory = loop_capture(tmp_path)
    assert main(["run", str(LOOP), "--capture", str(directory), "--target", "tpu-v5e"]) == 2
    assert "leave out --target tpu-v5e" in capsys.readouterr().err
    assert main(["diff", str(LOOP), "--capture", str(directory), "--layout", "arg0=0"]) == 2
    assert "--layout shapes a TPU emulator; with --capture add --against tpu-v5e" in capsys.readouterr().err
    assert main(["run", str(LOOP), "--capture", str(directory), "--partitions", "2"]) == 2
    assert "captured on a 1x1 grid" in capsys.readouterr().err


# -- the debugger --------------------------------------------------------------------------------------

@pytest.mark.usefixtures("private_hlodbg_dirs")
async def test_the_debugger_opens_a_capture_and_says_so(tmp_path):
    from hlodbg.cli import _parser
    from hlodbg.ui.widgets.inspector import TensorInspector
    from hlodbg.ui_entry import build_app

    from .pilot import console_text, press, type_command

    directory = loop_capture(tmp_path, nan_at(5))
    app = build_app(_parser().parse_args(["open", str(LOOP), "--capture", str(directory), "--break-on", "nan",
                                          "--no-save"]))
    assert app.error is None
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        status = str(screen.query_one("#status").render())
        assert "capture run.hlocap (xla:cpu, cpu)" in status
        assert screen.state.stop_reason == "breakpoint"
        assert any(f.description == "@main while.body #5" for f in screen.state.frames)
        text = screen.query_one(TensorInspector).render_text()
        assert "NaN" in text and "iteration 5, captured" in text
        out = tmp_path / "graph.svg"
        await type_command(app, pilot, f"export {out} --overlay nan")  # the graph coloured by the captured run
        # The console wraps a long path (pytest-xdist makes them longer): read it unwrapped.
        assert f"wrote {out}" in console_text(screen).replace("\n", "") and "first NaN" in out.read_text()
        await press(app, pilot, "C")  # back to the start: no NaN before iteration 5
        assert screen.state.position == 0
        await press(app, pilot, "c")
        assert any(f.description == "@main while.body #5" for f in screen.state.frames)
        await press(app, pilot, "n")  # over the tanh after the NaN: the value the step made
        text = screen.query_one(TensorInspector).render_text()
        assert "captured (just now)" in text and "just computed" not in text
    bad = build_app(_parser().parse_args(["open", str(DATA / "nan_in_loop.mlir"), "--capture", str(directory)]))
    assert bad.error is not None and "is not the program captured" in bad.error.render()


def test_serve_passes_the_capture_to_every_browser_session(tmp_path):
    import shlex

    from hlodbg.cli import _parser
    from hlodbg.ui_entry import build_app, server_options

    directory = loop_capture(tmp_path)
    args = _parser().parse_args(["serve", str(LOOP), "--capture", str(directory)])
    assert build_app(args).error is None
    options, _ = server_options(args, lambda: "example")
    command = shlex.split(options["command"])
    assert command[command.index("--capture") + 1] == str(directory)
    app = build_app(_parser().parse_args(command[command.index("open"):]))
    assert app.error is None and isinstance(app.options["backend"], CaptureBackend)


@pytest.mark.usefixtures("private_hlodbg_dirs")
async def test_the_grid_view_shows_each_real_devices_values(tmp_path):
    from hlodbg.cli import _parser
    from hlodbg.ui.widgets.grid_view import GridView
    from hlodbg.ui.widgets.inspector import TensorInspector
    from hlodbg.ui_entry import build_app

    from .pilot import press

    def device_5_differs(context, site, result, device, array):
        if device == 5 and site == "@main#1":  # its dot_general
            return np.full_like(array, 7.0)
        return array

    path, directory, _ = sharded_capture(tmp_path, device_5_differs)
    app = build_app(_parser().parse_args(["open", str(path), "--capture", str(directory), "--no-save"]))
    assert app.error is None
    async with app.run_test(size=(200, 55)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        status = str(screen.query_one("#status").render())
        assert "device 0 of 8" in status and "capture grid.hlocap (xla:cpu, 8 x cpu)" in status
        assert "HBM" not in status  # the CPU's memory, not an accelerator's
        await press(app, pilot, "s", "n")  # into the manual computation, over the dot_general
        assert screen.state.op.name == "stablehlo.all_reduce"
        view = screen.query_one(GridView)
        assert "in  16x16xf32 min 7 max 7" in view.text_of(5)  # what device 5 computed, as captured
        assert "min 7 max 7" not in view.text_of(4)
        await pilot.click(GridView, offset=view.offset_of(5))
        await settle(app, pilot)
        text = screen.query_one(TensorInspector).render_text()
        assert text.startswith("device 5 (replica 0, partition 5): %2 = stablehlo.all_reduce (captured)")


# -- XLA's tolerances ------------------------------------------------------------------------------------

def test_xla_tolerances_are_by_type_and_relative_to_the_largest_magnitude():
    import ml_dtypes

    from hlodbg.engine.debug.difference import XLA_TOLERANCE, compare_values

    big = np.array([1000.0, 1e-3], np.float32)
    near = np.array([1000.0, 1.001e-3], np.float32)
    assert compare_values(big, near).diverged  # element by element, the small one is 0.1% off
    assert not compare_values(big, near, XLA_TOLERANCE).diverged  # 1e-6 is well within 2e-5 of 1000
    assert compare_values(np.float32([1, 2]), np.float32([1, 2.001]), XLA_TOLERANCE).diverged
    assert not compare_values(np.float64([1, 2]), np.float64([1, 2 + 1e-10]), XLA_TOLERANCE).diverged
    assert compare_values(np.float64([1, 2]), np.float64([1, 2 + 1e-8]), XLA_TOLERANCE).diverged
    bf16 = np.dtype(ml_dtypes.bfloat16)
    assert not compare_values(np.array([1, 2], bf16), np.array([1, 2.015], bf16), XLA_TOLERANCE).diverged
    assert compare_values(np.int32([1, 2]), np.int32([1, 3]), XLA_TOLERANCE).diverged  # integers: exact
    assert not compare_values(np.float32([np.nan, np.inf]), np.float32([np.nan, np.inf]), XLA_TOLERANCE).diverged
    assert compare_values(np.float32([1, np.nan]), np.float32([1, 1]), XLA_TOLERANCE).diverged


def test_diff_of_a_capture_takes_given_tolerances_instead(tmp_path, capsys):
    directory = loop_capture(tmp_path, perturbed_at(3, factor=1.00001))
    assert main(["diff", str(LOOP), "--capture", str(directory)]) == 0  # within XLA's f32 tolerance
    assert "XLA's tolerances" in capsys.readouterr().out
    assert main(["diff", str(LOOP), "--capture", str(directory), "--rtol", "1e-7"]) == 1
    assert "(rtol 1e-07, atol 0)" in capsys.readouterr().out


# -- real captures (hlodbg capture, XLA on the CPU) ---------------------------------------------------------

def real_capture(tmp_path: Path, program: Path, inputs: Path) -> Path:
    pytest.importorskip("jax")
    directory = tmp_path / "real.hlocap"
    assert main(["capture", str(program), "--args", str(inputs), "--target", "xla:cpu", "-o", str(directory)]) == 0
    return directory


def test_a_real_capture_of_a_loop_replays_and_diffs_clean(tmp_path, capsys):
    directory = real_capture(tmp_path, LOOP, _npz(tmp_path))
    capture = open_capture(directory)
    program = hlodbg.load(LOOP)
    session = program.debug(capture.inputs(), backend=CaptureBackend(capture), persist=False).session
    session.continue_()
    sources = {}
    for e in events_with_results(session):
        sources.setdefault(session.trace.ops[e].name, set()).add(value_source(session, e))
    assert sources["stablehlo.tanh"] == {CAPTURED} and sources["stablehlo.compare"] == {CAPTURED}
    assert sources["stablehlo.constant"] == {COMPUTED}  # left out: their values are in the program text
    plain = Interpreter(program.module).run("main", [X])
    assert np.allclose(session.results[0], plain[0], rtol=2e-5)
    capsys.readouterr()
    assert main(["diff", str(LOOP), "--capture", str(directory)]) == 0
    assert "none diverged" in capsys.readouterr().out


def test_the_emulator_takes_the_target_options_a_real_bf16_capture_needs(tmp_path, capsys):
    program = DATA / "capture_bf16.mlir"
    inputs = tmp_path / "x.npz"
    np.savez(inputs, arg0=np.linspace(-3, 3, 8, dtype=np.float32))
    directory = real_capture(tmp_path, program, inputs)
    capsys.readouterr()
    # XLA keeps the f32 product a bf16 result is converted from (excess precision), and so does the
    # emulator by default; told to round every op as StableHLO says, it parts there.
    assert main(["diff", str(program), "--capture", str(directory)]) == 0
    capsys.readouterr()
    assert main(["diff", str(program), "--capture", str(directory), "--per-op-rounding"]) == 1
    out = capsys.readouterr().out
    assert "%wide = stablehlo.convert" in out
    assert main(["diff", str(program), "--capture", str(directory), "--excess-precision"]) == 0


def test_a_real_capture_of_sharded_mlp_4x2_diffs_clean_against_the_emulator(tmp_path, capsys):
    require_shared()
    path = PROGRAMS / "sharded_mlp_4x2.mlir"
    if not path.exists():
        pytest.skip("sharded_mlp_4x2.mlir is not in ../shared/programs")
    directory = real_capture(tmp_path, path, PROGRAMS / "sharded_mlp_4x2.inputs.npz")
    capsys.readouterr()
    assert main(["diff", str(path), "--capture", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "none diverged" in out and "on each of 8 devices" in out and "(xla:cpu, 8 x cpu)" in out


def test_a_real_capture_of_a_nan_inside_a_loop_stops_at_its_iteration(tmp_path, capsys):
    inputs = tmp_path / "hundred.npz"
    np.savez(inputs, arg0=np.full(4, 100, np.float32))  # sqrt turns NaN in iteration 3 (see the program)
    program = DATA / "nan_in_loop.mlir"
    directory = real_capture(tmp_path, program, inputs)
    capsys.readouterr()
    assert main(["run", str(program), "--capture", str(directory), "--break-on", "nan"]) == 3
    out = capsys.readouterr().out
    assert "%s = stablehlo.sqrt" in out and "while.body #3" in out
    capture = open_capture(directory)
    session = hlodbg.load(program).debug(capture.inputs(), backend=CaptureBackend(capture), persist=False).session
    session.break_at("nan")
    stop = session.continue_()
    hit = session.event(stop.hits[0].event)
    assert hit.op.name == "stablehlo.sqrt" and hit.iterations == (3,) and value_source(session, hit.id) == CAPTURED
