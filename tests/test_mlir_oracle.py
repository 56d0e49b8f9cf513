"""What hlodbg prints is real MLIR: jaxlib's C++ parser (the oracle) accepts it, pretty and generic."""
from __future__ import annotations

import pytest

from hlodbg.engine import parse_chunks, print_module
from .helpers import CONFORMANCE, PROGRAMS, SAMPLES


jax_mlir = pytest.importorskip("jax._src.interpreters.mlir")
ir = pytest.importorskip("jaxlib.mlir.ir")


def _files():
    files = [SAMPLES / "tiny_model.mlir"]
    if PROGRAMS.is_dir():
        files += sorted(PROGRAMS.glob("*.mlir"))
    if CONFORMANCE.is_dir():
        # jaxlib registers no quant dialect, so the quantized programs are left out here.
        files += sorted(CONFORMANCE.glob("*.mlir"))[::10]
    return files


@pytest.fixture(scope="module")
def context():
    return jax_mlir.make_ir_context()


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_printed_text_is_accepted_by_mlir(path, context):
    for module in parse_chunks(path.read_text(), str(path)):
        for generic in (False, True):
            text = print_module(module, generic=generic, debug_info=True)
            with context:
                ir.Module.parse(text)
