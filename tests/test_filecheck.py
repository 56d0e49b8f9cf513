"""The benchmark's FileCheck (benchmarks/filecheck.py) on hand-made cases with known answers."""
import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "filecheck.py"
_spec = importlib.util.spec_from_file_location("filecheck", _PATH)
filecheck_module = importlib.util.module_from_spec(_spec)
sys.modules["filecheck"] = filecheck_module  # its dataclasses look their module up
_spec.loader.exec_module(filecheck_module)
filecheck = filecheck_module.filecheck

OUTPUT = """\
func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}
func.func @other() {
  return
}
"""


def check(lines: str, output: str = OUTPUT, prefixes=("CHECK",)):
    return filecheck(lines, output, prefixes)


def test_plain_checks_match_in_order_and_fail_out_of_order():
    assert check("// CHECK: stablehlo.add\n// CHECK: stablehlo.multiply") is None
    assert check("// CHECK: stablehlo.multiply\n// CHECK: stablehlo.add") is not None
    assert check("// CHECK: stablehlo.subtract") is not None


def test_whitespace_runs_match_any_run():
    assert check("// CHECK:   %0 =    stablehlo.add   %arg0,%arg0") is not None  # the comma needs its space
    assert check("// CHECK:   %0 =    stablehlo.add   %arg0, %arg0  ") is None


def test_regex_and_variables():
    assert check("// CHECK: %[[A:.*]] = stablehlo.add\n// CHECK: stablehlo.multiply %[[A]], %[[A]]") is None
    assert check("// CHECK: %[[A:.*]] = stablehlo.add\n// CHECK: return %[[A]]") is not None
    assert check("// CHECK: %{{[0-9]+}} = stablehlo.multiply") is None
    assert check("// CHECK: %{{[[:digit:]]+}} = stablehlo.multiply") is None
    # A use in the defining line is a back-reference.
    assert check("// CHECK: stablehlo.multiply [[X:%[0-9]+]], [[X]]") is None
    assert check("// CHECK: stablehlo.add [[X:%[a-z0-9]+]], [[X]] : tensor<3xf32>") is not None
    assert check("// CHECK: return [[UNDEFINED]]") is not None


def test_next_same_empty():
    assert check("// CHECK: stablehlo.add\n// CHECK-NEXT: stablehlo.multiply") is None
    assert check("// CHECK: stablehlo.add\n// CHECK-NEXT: return") is not None
    assert check("// CHECK: stablehlo.add\n// CHECK-SAME: %arg0 : tensor<2xf32>") is None
    assert check("// CHECK: stablehlo.add\n// CHECK-SAME: stablehlo.multiply") is not None
    assert check("// CHECK: return\n// CHECK-EMPTY:") is not None
    assert check("// CHECK: return\n// CHECK-NEXT: }\n// CHECK-NEXT: func.func", "return\n}\nfunc.func") is None


def test_labels_confine_the_checks_between_them():
    assert check("// CHECK-LABEL: @main\n// CHECK: stablehlo.add\n// CHECK-LABEL: @other\n// CHECK: return") is None
    # `multiply` is in @main's block, not @other's.
    assert check("// CHECK-LABEL: @main\n// CHECK-LABEL: @other\n// CHECK: stablehlo.multiply") is not None
    assert check("// CHECK-LABEL: @missing") is not None


def test_dag_matches_in_any_order_without_overlap_and_not_excludes_between():
    assert check("// CHECK-DAG: stablehlo.multiply\n// CHECK-DAG: stablehlo.add\n// CHECK: return") is None
    assert check("// CHECK-DAG: tensor<2xf32>\n// CHECK-DAG: tensor<2xf32>") is None
    assert check("// CHECK-DAG: stablehlo.add\n// CHECK-DAG: stablehlo.add") is not None
    assert check("// CHECK: stablehlo.add\n// CHECK-NOT: stablehlo.multiply\n// CHECK: return") is not None
    assert check("// CHECK: stablehlo.add\n// CHECK-NOT: stablehlo.subtract\n// CHECK: return") is None
    assert check("// CHECK: return\n// CHECK-NOT: stablehlo") is None
    assert check("// CHECK: @main\n// CHECK-NOT: stablehlo.multiply") is not None


def test_prefixes_and_count():
    lines = "// CHECK: stablehlo.add\n// CHECK-PRETTY: stablehlo.nonexistent\n// OTHER: stablehlo.nonexistent"
    assert check(lines) is None
    assert check(lines, prefixes=("CHECK", "CHECK-PRETTY")) is not None
    assert check("// CHECK-COUNT-2: return") is None
    assert check("// CHECK-COUNT-3: return") is not None
    assert check("// NOTHING: x") is not None  # no directive at all is not a pass
