"""The verifier: checks a parsed module against the StableHLO spec's per-op constraints.

`verify(module)` raises the first VerifyError in textual order; `verify_all(module)` returns every
error (at most one per op). Each message names the op, what is wrong and the spec constraint, e.g.
`stablehlo.add: operands must have the same shape: tensor<2xf32> vs tensor<3xf32> (C1)`, and the
error points at the op's position in the source.

Every op with an OpDef gets generic checks (operand, result and region counts, required attributes
and their kinds); the ops of the spec also get their own constraints, with result types inferred
where the spec defines them (see shape_inference.py). Ops without an OpDef are accepted as they
are. Dynamic dimensions are compared loosely so that valid programs are never rejected; quantized
element types follow the spec's rules (baseline types, per-tensor-only operands; quantized_types.py).
Each error cites the spec's constraint (C1, C2, ...) or, for a rule of an op's Inputs/Outputs
table, that row (I1, O1, ...); tests/data/constraints/ holds one program per constraint.
"""
from . import (  # noqa: F401  (each registers its checks)
    asynchronous,
    chlo,
    collectives,
    contractions,
    control_flow,
    convolution,
    custom_call,
    data_movement,
    elementwise,
    generators_quantization,
    hlo_ops,
    interpreter,
    linalg,
    reductions,
    rooted_collectives,
)
from .core import CHECKS, verify, verify_all

__all__ = ["CHECKS", "verify", "verify_all"]
