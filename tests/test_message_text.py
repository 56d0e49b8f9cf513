"""What a message prints is safe and readable (issue 32): a file name or an input line never
reaches the terminal with its control characters, a message quoting a huge shape stays a line of
sane width, and no doubled `%%` from formatting."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from hlodbg.cli import main
from hlodbg.engine import ExecutionError, ParseError
from hlodbg.engine.ir.errors import MESSAGE_WIDTH

from .helpers import interpret

ESCAPE = "\x1b[31m"
GOOD = "func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n  return %0 : tensor<f32>\n}\n"


def _output(capsys) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_a_file_name_with_a_terminal_escape_is_printed_escaped(tmp_path, capsys):
    good = tmp_path / f"good{ESCAPE}.mlir"
    good.write_text(GOOD)
    bad = tmp_path / f"bad{ESCAPE}.mlir"
    bad.write_text(GOOD.replace("stablehlo.constant", "stablehlo.bogus"))
    assert main(["verify", str(good)]) == 0
    assert main(["verify", str(bad)]) == 2
    assert main(["verify", str(tmp_path / f"missing{ESCAPE}.mlir")]) == 2
    out = _output(capsys)
    assert "\x1b" not in out
    assert out.count("\\x1b[31m") == 3 and "good\\x1b[31m.mlir: ok" in out and "bad\\x1b[31m.mlir:2:8: error:" in out


def test_the_files_a_run_writes_are_named_escaped(tmp_path, capsys):
    program = tmp_path / "p.mlir"
    program.write_text(GOOD)
    out, probe = tmp_path / f"out{ESCAPE}.npz", tmp_path / f"probe{ESCAPE}"
    assert main(["run", str(program), "--out", str(out)]) == 0
    assert main(["run", str(program), "--probe", str(probe)]) == 0
    said = _output(capsys)
    assert out.is_file() and probe.is_dir()
    assert "\x1b" not in said and "out\\x1b[31m.npz" in said and "probe\\x1b[31m/" in said


def test_control_characters_of_the_quoted_line_are_escaped_and_the_caret_still_points():
    text = "func.func @main() {\n  \"x\x07y\" = stablehlo.bogus\r\n}\n"
    with pytest.raises(ParseError) as info:
        from hlodbg.engine import parse_module

        parse_module(text, "bell.mlir")
    lines = info.value.render().split("\n")
    assert not any(c in info.value.render() for c in "\x07\r")
    quoted, caret = lines[1], lines[2]
    assert "\\x07" in quoted and not quoted.endswith("\\x0d")  # a CRLF line end is no part of the line
    column = info.value.col
    original = text.split("\n")[info.value.line - 1]
    assert quoted[len(caret) - 1] == ("\\" if original[column - 1] == "\x07" else original[column - 1])


def test_a_deep_dense_constant_gives_a_message_of_sane_width(tmp_path, capsys):
    depth = 5000
    wrong = f"tensor<{'1x' * (depth - 1)}2xf32>"  # 10 KB of type text the message quotes
    path = tmp_path / "deep.mlir"
    path.write_text(f"func.func @main() -> {wrong} {{\n"
                    f"  %0 = stablehlo.constant dense<{'[' * depth}1.0{']' * depth}> : {wrong}\n"
                    f"  return %0 : {wrong}\n}}\n")
    assert main(["verify", str(path)]) == 2
    lines = _output(capsys).splitlines()
    assert "literal of shape [1, 1, 1, ..., 1, 1] (rank 5000) does not match tensor<1x1x" in lines[0]
    quoted_type = lines[0].split(" does not match ")[1]
    assert "..." in quoted_type and quoted_type.endswith("1x2xf32>")  # clipped in the middle, its end kept
    assert max(map(len, lines)) <= len(str(path)) + len(":2:33: error: ") + MESSAGE_WIDTH


def test_a_bitcast_layout_message_names_the_operand_once():
    text = """
func.func @main(%p: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "hlo.bitcast"(%p) {xla_shape = "f32[3,2]{0,1}"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}"""
    with pytest.raises(ExecutionError, match="the layout of the operand %p is not given") as info:
        interpret(text, np.zeros((2, 3), np.float32))
    assert "%%" not in str(info.value)


def test_numpy_floating_point_warnings_do_not_reach_stderr(monkeypatch, tmp_path, capsys):
    import hlodbg.cli as cli

    def overflowing(args):  # any command computing on a program's values where they overflow
        print(np.float32(3e38) * np.float32(10), np.log(np.zeros(1, np.float32)), np.zeros(1) / 0)
        return 0

    monkeypatch.setattr(cli, "_cmd_verify", overflowing)
    path = tmp_path / "p.mlir"
    path.write_text(GOOD)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")  # what reaches the user's stderr, every time
        assert main(["verify", str(path)]) == 0
    assert "inf" in capsys.readouterr().out
    assert [str(w.message) for w in shown] == []
