"""Constants whose elements the text elided (`{...}`; `dense_resource<__elided__>` in MLIR): the
program opens, draws, exports and has its memory analysed without them; running one is refused
with a located message saying how to get full constants, unless `--fill-elided random|zeros` /
`fill_elided=` gives them values, which every view then marks as filled."""
from __future__ import annotations

import re

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.ir.attributes import DenseElements, ElidedElements
from hlodbg.engine.ir.errors import ExecutionError, HlodbgError
from hlodbg.engine.run.elided import FILLED, fill_elided
from hlodbg.layouts.labels import key_attributes, op_label

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")

PROGRAM = """
func.func @main(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<16xi32>, tensor<16xi1>) {
  %w = stablehlo.constant dense_resource<__elided__> : tensor<64xf32>
  %two = stablehlo.constant dense<2.0> : tensor<64xf32>
  %scaled = stablehlo.multiply %w, %two : tensor<64xf32>
  %y = stablehlo.add %scaled, %x : tensor<64xf32>
  %i = stablehlo.constant dense_resource<__elided__> : tensor<16xi32>
  %b = stablehlo.constant dense_resource<__elided__> : tensor<16xi1>
  return %y, %i, %b : tensor<64xf32>, tensor<16xi32>, tensor<16xi1>
}
"""
X = np.arange(64, dtype=np.float32)


@pytest.fixture
def path(tmp_path):
    file = tmp_path / "elided.mlir"
    file.write_text(PROGRAM)
    return file


def _constants(module) -> list:
    return [op for op in module.entry.ops if op.name == "stablehlo.constant"]


def test_running_is_refused_at_the_first_elided_constant_with_how_to_get_full_ones():
    program = hlodbg.load(PROGRAM)
    with pytest.raises(ExecutionError) as info:
        program.run(X)
    error = info.value
    assert (error.line, error.col) == (3, 27)
    text = error.render()
    assert "were elided from the text" in text and "tensor<64xf32>" in text
    for how in ("XLA_FLAGS=--xla_dump_large_constants", "HloPrintOptions.short_parsable()", "--fill-elided random"):
        assert how in text


def test_random_filling_is_reproducible_in_the_types_range_and_marks_the_ops():
    program = hlodbg.load(PROGRAM)
    assert program.fill_elided("random", seed=3) == 3
    w, i, b = (op for op in _constants(program.module) if op.attributes.get(FILLED))
    assert all(op.attributes[FILLED] == "random" for op in (w, i, b))
    floats, ints, bools = (op.attributes["value"].array for op in (w, i, b))
    assert floats.dtype == np.float32 and floats.shape == (64,) and np.all(np.abs(floats) <= 1) and floats.std() > 0.3
    assert ints.dtype == np.int32 and np.abs(ints.astype(np.int64)).max() > 1 << 20  # the type's whole range
    assert bools.dtype == np.bool_ and 0 < bools.sum() < 16
    y, got_i, got_b = program.run(X)
    np.testing.assert_array_equal(y, floats * 2 + X)
    np.testing.assert_array_equal(got_i, ints)
    again = hlodbg.load(PROGRAM, fill_elided=None)
    again.fill_elided("random", seed=3)
    np.testing.assert_array_equal(again.run(X)[0], y)  # same seed, same values
    assert not np.array_equal(hlodbg.load(PROGRAM).run(X, fill_elided="random", seed=4)[0], y)


def test_zeros_and_refilling_with_another_mode():
    program = hlodbg.load(PROGRAM, fill_elided="random")
    assert program.run(X)[0].any()
    assert program.fill_elided("zeros") == 3
    y, i, b = program.run(X)  # the kept interpreter does not keep the random values
    np.testing.assert_array_equal(y, X)
    assert not i.any() and not b.any()
    assert all(op.attributes[FILLED] == "zeros" for op in _constants(program.module) if FILLED in op.attributes)


def test_a_filled_constant_is_a_dense_one_of_its_type():
    module = hlodbg.load(PROGRAM).module
    elided = [op.attributes["value"] for op in _constants(module) if isinstance(op.attributes["value"], ElidedElements)]
    assert len(elided) == 3
    fill_elided(module, "zeros")
    for op, before in zip([op for op in _constants(module) if FILLED in op.attributes], elided):
        value = op.attributes["value"]
        assert type(value) is DenseElements and value.type == before.type


def test_an_unknown_fill_mode_is_refused():
    with pytest.raises(HlodbgError, match="--fill-elided 'ones': expected one of random, zeros"):
        hlodbg.load(PROGRAM, fill_elided="ones")


def test_graph_labels_mark_filled_constants():
    program = hlodbg.load(PROGRAM)
    w = _constants(program.module)[0]
    assert key_attributes(w) == []
    program.fill_elided("random")
    assert key_attributes(w) == ["filled: random (elided {...} constant)"]
    assert "filled: random (elided {...} constant)" in op_label(w)


def test_the_debugger_opens_and_stops_only_when_a_step_runs_an_elided_constant():
    program = hlodbg.load(PROGRAM)
    session = program.session([X], persist=False)
    assert session.position == 0 and session.error is None
    session.continue_()
    assert session.error is not None and "were elided from the text" in str(session.error)
    filled = hlodbg.load(PROGRAM).session([X], persist=False, fill_elided="zeros")
    filled.continue_()
    assert filled.error is None
    np.testing.assert_array_equal(filled.results[0], X)


def test_cli_run_refuses_then_runs_with_a_warning(path, capsys):
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3:27: error: the elements of this constant (tensor<64xf32>) were elided" in err
    assert "--fill-elided random" in err
    assert main(["run", str(path), "--fill-elided", "random", "--seed", "1"]) == 0
    err = capsys.readouterr().err
    assert ("warning: 3 elided constant(s) filled with random values (seed 1) by --fill-elided random: results "
            "computed from them are not the program's") in err


@pytest.mark.parametrize("command", [["export", "-o", "{out}.svg"], ["memory"], ["memory", "--target", "tpu-v5e"]])
def test_export_and_memory_need_no_filling(path, tmp_path, capsys, command):
    argv = [part.format(out=tmp_path / "graph") for part in command]
    assert main([argv[0], str(path), *argv[1:]]) == 0
    captured = capsys.readouterr()
    assert "elided" not in captured.err
    if argv[0] == "memory":
        assert "%w" in captured.out and "256 B" in captured.out
    else:
        assert (tmp_path / "graph.svg").stat().st_size > 0


def test_export_of_a_filled_program_marks_the_constants(path, tmp_path, capsys):
    out = tmp_path / "filled.svg"
    assert main(["export", str(path), "-o", str(out), "--fill-elided", "zeros"]) == 0
    assert "filled: zeros (elided {...} constant)" in out.read_text()


def test_check_takes_the_option(tmp_path, capsys):
    file = tmp_path / "checked.mlir"
    file.write_text("""
func.func @main() {
  %z = stablehlo.constant dense_resource<__elided__> : tensor<12xf32>
  %e = stablehlo.constant dense<0.0> : tensor<12xf32>
  check.expect_eq %z, %e : tensor<12xf32>
  return
}
""")
    assert main(["check", str(file)]) == 1
    assert "were elided from the text" in capsys.readouterr().out
    assert main(["check", str(file), "--fill-elided", "zeros"]) == 0


async def test_the_inspector_says_a_value_is_filled():
    from hlodbg.ui.app import HlodbgApp
    from hlodbg.ui.widgets.inspector import TensorInspector

    from .pilot import press, settle

    program = hlodbg.load(PROGRAM, fill_elided="random")
    app = HlodbgApp(program, args=[X], persist=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "n")  # %w computed
        inspector = app.screen.query_one(TensorInspector)
        assert inspector.selected.label == "%w"
        assert "filled: random (elided {...} constant)" in inspector.render_text()


def test_open_and_serve_take_the_option(path):
    from hlodbg.cli import _parser
    from hlodbg.ui_entry import build_app, serve_command

    command = serve_command(_parser().parse_args(["serve", str(path), "--fill-elided", "zeros"]))
    assert command[command.index("--fill-elided") + 1] == "zeros"
    app = build_app(_parser().parse_args(command[command.index("open"):]))
    assert app.error is None
    filled = [op for op in app.program.module.walk() if op.attributes.get(FILLED) == "zeros"]
    assert len(filled) == 3
    unfilled = build_app(_parser().parse_args(["open", str(path)]))
    assert unfilled.error is None  # opening needs no values of the constants


# -- the JAX corpus: `compile().as_text()` of the MLP elides its 32-element constant -------------------

def _eliding_corpus_program(directory):
    from .hlo_corpus import CORPUS, load_arrays

    name = next(program.name for program in CORPUS if program.elides_constants)
    data = load_arrays(directory / f"{name}.npz")
    inputs = [data[f"arg{i}"] for i in range(sum(1 for key in data if key.startswith("arg") and key[3:].isdigit()))]
    return directory / f"{name}.post_elided.hlo", directory / f"{name}.post.hlo", inputs


def test_a_compiled_jax_module_with_an_elided_constant_opens_draws_and_is_analysed(hlo_corpus_dir, tmp_path, capsys):
    elided, _, inputs = _eliding_corpus_program(hlo_corpus_dir)
    program = hlodbg.load(elided)
    assert any(isinstance(op.attributes.get("value"), ElidedElements) for op in program.module.walk())
    session = program.session(inputs, persist=False)
    assert session.error is None  # nothing ran the constant yet
    session.continue_()
    assert session.error is not None and "were elided from the text" in str(session.error)
    out = tmp_path / "mlp.svg"
    assert main(["export", str(elided), "-o", str(out)]) == 0 and out.stat().st_size > 0
    for target in ("cpu", "tpu-v5e"):
        assert main(["memory", str(elided), "--target", target]) == 0
    captured = capsys.readouterr()
    assert "on tpu-v5e" in captured.out and "error" not in captured.err


def test_a_compiled_jax_module_refuses_to_run_then_runs_filled(hlo_corpus_dir, capsys):
    elided, full, inputs = _eliding_corpus_program(hlo_corpus_dir)
    assert main(["run", str(elided)]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"{re.escape(str(elided))}:\d+:\d+: error: the elements of constant %?constant\.\d+ "
                     r"\(tensor<32xf32>\) were elided", err)
    assert "XLA_FLAGS=--xla_dump_large_constants" in err and "--fill-elided random" in err
    assert main(["run", str(elided), "--fill-elided", "random"]) == 0
    assert "warning: 1 elided constant(s) filled with random values (seed 0)" in capsys.readouterr().err
    # Filled with zeros it computes what the full module computes with that constant set to zeros.
    filled = hlodbg.load(elided, fill_elided="zeros")
    reference = hlodbg.load(full)
    (constant,) = [op for op in reference.module.walk() if op.name == "stablehlo.constant"
                   and op.results[0].type.shape == (32,)]
    constant.attributes["value"] = DenseElements(constant.results[0].type, np.zeros(32, np.float32))
    for got, want in zip(filled.run(*inputs), reference.run(*inputs)):
        np.testing.assert_array_equal(got, want)
