"""Every program of the shared corpus parses, verifies, and round-trips through the printer."""
from __future__ import annotations

import pytest

from hlodbg.engine import parse_chunks, print_module, structural_key
from hlodbg.engine.verify import verify
from .helpers import PROGRAMS, corpus_files


FILES = corpus_files()


def _id(path) -> str:
    return path.name if path.parent.name != "quantized" else f"quantized/{path.name}"


@pytest.mark.skipif(not FILES, reason="../shared corpus is not present")
@pytest.mark.parametrize("path", FILES, ids=[_id(p) for p in FILES])
def test_corpus_file_parses_verifies_and_round_trips(path):
    text = path.read_text()
    modules = parse_chunks(text, str(path))
    assert modules, "no module parsed"
    for module in modules:
        verify(module)
        for generic in (False, True):
            printed = print_module(module, generic=generic)
            again = parse_chunks(printed, f"{path.name} (printed)")[0]
            assert structural_key(again) == structural_key(module)


@pytest.mark.skipif(not PROGRAMS.is_dir(), reason="../shared/programs is not present")
def test_real_programs_have_expected_structure():
    import hlodbg

    gpt = hlodbg.load(PROGRAMS / "gpt_tiny.mlir")
    assert gpt.entry.sym_name == "main"
    assert len(gpt.functions) > 1
    assert any(op.name == "stablehlo.gather" for op in gpt.ops)
    sharded = hlodbg.load(PROGRAMS / "sharded_mlp_4x2.mlir")
    assert sharded.num_partitions == 8 and sharded.num_replicas == 1
    (manual,) = [op for op in sharded.ops if op.name == "sdy.manual_computation"]
    assert [str(a) for a in manual.attributes["manual_axes"].axes] == ["x", "y"]
    mesh_op = sharded.module.operations[0]
    assert mesh_op.name == "sdy.mesh" and mesh_op.attributes["mesh"].shape == (4, 2)
