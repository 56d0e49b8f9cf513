"""Inputs at the edges never crash hlodbg nor eat the machine: files with no module, splat
constants too big to hold, huge hex constants."""
from __future__ import annotations

import pytest

from hlodbg.cli import EXIT_BAD_INPUT, main

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")

NO_MODULE_FILES = {"empty.mlir": "", "blank.mlir": "\n  \n", "comment.mlir": "// only a comment\n// and another\n"}


@pytest.mark.parametrize("name", sorted(NO_MODULE_FILES))
@pytest.mark.parametrize("command", [["verify"], ["print"], ["run"], ["export", "-o", "{tmp}/out.svg"], ["check"]])
def test_every_command_reports_a_file_without_a_module(tmp_path, capsys, command, name):
    path = tmp_path / name
    path.write_text(NO_MODULE_FILES[name])
    args = [arg.format(tmp=tmp_path) for arg in command]
    status = main([args[0], str(path), *args[1:]])
    out, err = capsys.readouterr()
    message = f"{path} holds no module (the file is empty or only comments)"
    if command == ["check"]:  # check reports each file as one outcome and counts it as failed
        assert status == 1 and message in out and out.strip().endswith("0 passed, 1 failed")
    else:
        assert status == EXIT_BAD_INPUT and message in err and out == ""


HUGE_SPLAT = """func.func @main() -> tensor<512x1x6400x6400xf32> {
  %0 = stablehlo.constant dense<0.0> : tensor<512x1x6400x6400xf32>
  %1 = stablehlo.constant dense<"0x0000803F"> : tensor<512x1x6400x6400xf32>
  %2 = stablehlo.add %0, %1 : tensor<512x1x6400x6400xf32>
  return %2 : tensor<512x1x6400x6400xf32>
}
"""


def test_a_huge_splat_constant_parses_verifies_prints_and_draws_without_its_data():
    import tracemalloc

    import hlodbg
    from hlodbg.engine.ir.attributes import attribute_key
    from hlodbg.layouts.export import graph_view, styled_dot
    from hlodbg.layouts.labels import op_label, tooltip_lines

    tracemalloc.start()
    try:
        program = hlodbg.load(HUGE_SPLAT)  # 78.1 GiB per constant if materialised
        text = program.to_text()
        constants = [op for op in program.entry.ops if op.name == "stablehlo.constant"]
        labels = [line for op in constants for line in op_label(op) + tooltip_lines(op)]
        keys = [attribute_key(op.attributes["value"]) for op in constants]
        dot = styled_dot(graph_view(program.module))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    assert "dense<0.000000e+00> : tensor<512x1x6400x6400xf32>" in text and "dense<1.000000e+00> : tensor<512x1x6400x6400xf32>" in text
    assert any("splat 0" in line for line in labels) and any("splat 1" in line for line in labels)
    assert keys[0] != keys[1] and "splat" in dot
    assert all(op.attributes["value"].is_splat for op in constants)


def test_running_a_result_larger_than_the_machine_is_a_located_error(tmp_path, capsys, monkeypatch):
    from hlodbg.engine.run import interpreter

    monkeypatch.setattr(interpreter, "physical_memory", lambda: 16 << 30)  # the same on a bigger machine
    path = tmp_path / "huge.mlir"
    path.write_text(HUGE_SPLAT)
    assert main(["run", str(path)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert (f"{path}:2:3: error: stablehlo.constant: its result tensor<512x1x6400x6400xf32> needs 78.1 GiB, "
            "more than the 16.0 GiB of memory this machine has") in err
    assert "internal error" not in err


def test_an_evaluator_out_of_memory_names_the_op_and_its_line(monkeypatch):
    import hlodbg
    from hlodbg.engine.ir.errors import ExecutionError
    from hlodbg.engine.ops import control

    def no_memory(array):
        raise MemoryError("Unable to allocate 3.0 GiB")

    monkeypatch.setattr(control, "_readonly", no_memory)
    program = hlodbg.load("func.func @main() -> tensor<4xf32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
                          "  return %0 : tensor<4xf32>\n}\n")
    with pytest.raises(ExecutionError, match=r"^<string>:2:3: error: stablehlo.constant failed: out of memory \(Unable to allocate 3.0 GiB\)"):
        program.run()


def _hex_program(array, spelled: str = "") -> str:
    t = f"tensor<{'x'.join(map(str, array.shape))}xf32>"
    digits = spelled or "0x" + array.tobytes().hex().upper()
    return f'func.func @main() -> {t} {{\n  %0 = stablehlo.constant dense<"{digits}"> : {t}\n  return %0 : {t}\n}}\n'


def test_a_hex_constant_decodes_straight_from_the_source_within_twice_its_data():
    import tracemalloc

    import numpy as np

    from hlodbg.engine import parse_module

    data = np.arange(1024 * 1024, dtype=np.float32)  # 4 MiB of data, 8 MB of hex digits
    text = _hex_program(data.reshape(1024, 1024))
    tracemalloc.start()
    try:
        module = parse_module(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    value = next(op for op in module.function("main").ops if op.name == "stablehlo.constant").attributes["value"]
    assert np.array_equal(value.array.reshape(-1), data)
    assert peak < 2 * data.nbytes


@pytest.mark.parametrize("slice_digits", [4, 6, 1 << 20])
def test_hex_digits_decode_across_slices_and_report_bad_digits(monkeypatch, slice_digits):
    import numpy as np

    import hlodbg
    from hlodbg.engine import ParseError
    from hlodbg.engine.syntax.mlir import dense

    monkeypatch.setattr(dense, "HEX_SLICE", slice_digits)
    data = np.array([[1.5, -2.0, 3.25], [0.0, 7.0, -0.5]], np.float32)
    assert np.array_equal(hlodbg.load(_hex_program(data)).run()[0], data)
    spaced = "0x" + " ".join(f"{b:02X}" for b in data.tobytes())  # bytes.fromhex's spaced form
    assert np.array_equal(hlodbg.load(_hex_program(data, spaced)).run()[0], data)
    splat = hlodbg.load(_hex_program(data, "0x0000C03F")).run()[0]
    assert splat.shape == (2, 3) and (splat == 1.5).all()
    for bad in ("0x0000C03", "0x0000C03G", "0x0000C03F00"):
        with pytest.raises(ParseError, match=r"<string>:2:\d+: error: (malformed hex digits|hex literal has)"):
            hlodbg.load(_hex_program(data, bad))
