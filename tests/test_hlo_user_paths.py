"""What a JAX user chasing a bug does with HLO text: save what JAX prints under whatever name,
open it, run it against jax.jit, set breakpoints the way HLO names things, step through fusions.
Each test pins a defect found that way. The programs are generated in-process with small shapes;
the tests that need JAX skip without it."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg


def _jax():
    jax = pytest.importorskip("jax")
    return jax, pytest.importorskip("jax.numpy")


def _log_loop(x):
    """A fori_loop whose log goes NaN on the third iteration for x = [3, 4, 5]."""
    jax, jnp = _jax()
    return jax.lax.fori_loop(0, 6, lambda i, v: jnp.log(v - 0.5 * i), x)


X = np.array([3.0, 4.0, 5.0], np.float32)


def _texts():
    """(pre-optimization HLO, MLIR, post-optimization HLO) of the NaN loop."""
    jax, _ = _jax()
    lowered = jax.jit(_log_loop).lower(X)
    return lowered.as_text(dialect="hlo"), lowered.as_text(), lowered.compile().as_text()


# -- the language is read from the text, whatever the file is called ----------------------------

@pytest.mark.parametrize("which, name", [(1, "lowered.txt"), (1, "lowered.hlo"), (0, "module.mlir")])
def test_the_text_decides_the_language_not_the_file_name(tmp_path, which, name):
    # `open("out.txt", "w").write(lowered.as_text())` is MLIR in a .txt; an HLO dump renamed .mlir.
    jax, _ = _jax()
    path = tmp_path / name
    path.write_text(_texts()[which])
    got = hlodbg.load(path).run(X)
    np.testing.assert_allclose(np.asarray(got[0] if isinstance(got, list) else got),
                               np.asarray(jax.jit(_log_loop)(X)), rtol=1e-6, equal_nan=True)
