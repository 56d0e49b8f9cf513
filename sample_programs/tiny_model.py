"""Source of tiny_model.mlir, hlodbg's embedded sample (regenerate: python tiny_model.py).

A two-layer MLP applied for three steps of a loop with a residual connection, then a softmax:
it shows function calls, a while loop, a reduction and broadcasting in one screen of ops.
"""
import os

import jax
import jax.numpy as jnp

HEADER = """\
// hlodbg's embedded sample: what `jax.jit(model).lower(...).as_text(debug_info=True)` prints
// for model() in tiny_model.py (regenerate with `python tiny_model.py`).
//
// What to look for:
//  * @main runs a stablehlo.while (the fori_loop): `cond` tests the counter, `do` calls
//    @closed_call (one MLP step: dot_general -> maximum (ReLU) -> dot_general, plus a residual).
//  * After the loop, softmax: reduce(maximum) for the row max, exponential, reduce(add), divide.
//  * Every op carries loc(#locN): the aliases at the end lead to the line of tiny_model.py that
//    produced it, and to JAX's name stack such as jit(model)/reduce_max.

"""


def mlp(x, w1, w2):
    h = jnp.maximum(x @ w1, 0.0)
    return h @ w2


def model(x, w1, w2):
    def step(i, carry):
        return carry + 0.5 * mlp(carry, w1, w2)

    y = jax.lax.fori_loop(0, 3, step, x)
    return jax.nn.softmax(y, axis=-1)


if __name__ == "__main__":
    args = (
        jax.ShapeDtypeStruct((4, 8), jnp.float32),
        jax.ShapeDtypeStruct((8, 16), jnp.float32),
        jax.ShapeDtypeStruct((16, 8), jnp.float32),
    )
    lowered = jax.jit(model).lower(*args)
    text = lowered.as_text(debug_info=True)
    # Locations name this file relative to the sample folder, whoever regenerates it.
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    text = text.replace(here, "")
    with open(os.path.join(here, "tiny_model.mlir"), "w") as f:
        f.write(HEADER + text)
