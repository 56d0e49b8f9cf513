"""What each known op is, whatever language spelled it: operands, attributes (kind, default),
regions, results, a category for colours, and its traits.

One OpDef per op, registered by the dialect modules of ir/opset/ (`define(...)`), answers every
question the engine asks about an op: the verifier's arity and attribute checks, the graph's
colours, and the traits below. Each input language keeps its own spelling of the op apart
(syntax/mlir registers a pretty format per op name). Traits:

- `is_terminator`: ends a block and hands its operands to the block's owner.
- `effect`: what running the op depends on besides its operands.
    "pure"            nothing: a constant input gives a constant result (the interpreter folds it);
    "impure"          the process it runs in or what it records (replica_id, tokens, checks): never
                      folded, but running it again in the same process gives the same answer, so
                      the debugger may recompute it;
    "not_replayable"  state outside the process's values (randomness, queues, other processes,
                      the outside world): never folded and never recomputed.
  A call (`callee_attr`) is "impure" itself and as replayable as the function it calls.
- `is_collective`: a rendezvous of the processes of a group (the grid meets there).
- `aliasing_regions`: its regions' arguments are the op's own operands or carried values (calls,
  loops, branches), so a frame's arguments need not be kept apart from the owner's values.
- `results_from`: where the op's results come from when its regions or callee run as frames:
  "returned", the values its last frame returns (calls, branches, fusions); "carried", the
  arguments of its last frame (a while loop's final condition sees the final state). The debugger
  recomputes such a result from inside that frame, where its checkpoints are, instead of running
  the op again whole.
- `expandable_body`: a combiner body the interpreter applies to whole arrays at once, which the
  debugger can replay as a region to show it element by element.
- `grid_layout`: says how a global value is laid out over the grid's devices (Shardy's manual
  computations and sharding annotations): the grid runs it (engine/ops/spmd.py) on the values
  wherever they live, a device's tile cut on that device.
- `owns_callee`: the function it calls exists for this call site alone (a fusion's fused
  computation, an async wrapper's): views draw the callee inside the op, not as a function apart.
- `float_math`: computes with the values of its float operands (arithmetic, transcendentals,
  comparisons, conversions, contractions, normalisations), as opposed to moving or testing their
  bits (data movement, bitcast_convert, select, sign-bit ops, constants). A device that flushes
  subnormals (a TPU) does so around these ops; an op with an expandable body computes what its body
  computes.

Ops without a definition are answered by their dialect (`DIALECT_EFFECTS`), so programs with ops
hlodbg does not know still get a clear error from the run, not a wrong answer from a trait.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

# Categories shared by the graph colours and the UI legend.
CATEGORIES = (
    "elementwise",
    "data_movement",
    "reduction",
    "contraction",
    "control_flow",
    "collective",
    "constant",
    "custom_call",
    "chlo",
    "quantization",
    "structural",
)


@dataclass(frozen=True)
class AttrSpec:
    kind: str
    required: bool = True
    default: Any = None


@dataclass
class OpDef:
    name: str
    operands: tuple[tuple[str, str], ...]  # (name, arity) with arity "" (one), "*" (any), "?"
    attrs: dict[str, AttrSpec]
    regions: tuple[str, ...]  # a trailing "*" on the last name means any number of regions
    results: str  # "1", "0", "*" or a fixed count such as "3"
    category: str
    is_terminator: bool = False
    summary: str = ""
    same_variadic_size: bool = False  # variadic operand groups split the operands evenly
    effect: str = "pure"  # "pure", "impure" or "not_replayable" (see the module docstring)
    is_collective: bool = False
    aliasing_regions: bool = False
    expandable_body: bool = False
    callee_attr: Optional[str] = None  # the attribute naming the function a call runs
    # How a collective forms its process groups: "reduction" (all_reduce's strategies),
    # "split" (all_to_all's), "pairs" (source/target pairs); None for everything else.
    process_groups: Optional[str] = None
    may_run_async: bool = False  # spec async_start C2: the op may be the body of an async_start
    # Quantized operands and results must be per-tensor quantized (the spec's Inputs/Outputs tables
    # say "per-tensor quantized tensor"); the verifier rejects per-axis ones.
    per_tensor_quantized: bool = False
    # A binary op whose operands may be swapped (StableHLO's Commutative trait): only such an op
    # may stand for a reduce body in the compact `applies` form.
    commutative: bool = False
    float_math: bool = False  # see the module docstring
    owns_callee: bool = False  # see the module docstring
    grid_layout: bool = False  # see the module docstring
    # The names stablehlo-opt gives the results (ODS names of a fixed group of results, or an
    # op's getAsmResultNames: `%output_state, %output = stablehlo.rng_bit_generator ...`);
    # `float_result_names` instead when the result's element type is not an integer.
    result_names: tuple[str, ...] = ()
    float_result_names: tuple[str, ...] = ()
    # The names its regions give their arguments (getAsmBlockArgumentNames): one for all
    # (`iterArg`), or one per operand segment (chlo.scan's `input`s then `carry`s).
    entry_argument_names: tuple[str, ...] = ()
    results_from: str = ""  # "", "returned" or "carried" (see the module docstring)

    @property
    def min_operands(self) -> int:
        return sum(1 for _, arity in self.operands if arity == "")

    @property
    def variadic(self) -> bool:
        return any(arity in ("*", "?") for _, arity in self.operands)

    def operand_groups(self, count: int) -> Optional[dict[str, tuple[int, int]]]:
        """Which operand indices belong to each named group, for `count` operands; None if impossible."""
        fixed = self.min_operands
        groups = [(n, a) for n, a in self.operands]
        variadic = [n for n, a in groups if a in ("*", "?")]
        extra = count - fixed
        if extra < 0:
            return None
        sizes: dict[str, int] = {}
        if not variadic:
            if extra:
                return None
        elif len(variadic) == 1:
            name = variadic[0]
            arity = dict(groups)[name]
            if arity == "?" and extra > 1:
                return None
            sizes[name] = extra
        else:
            if self.same_variadic_size:
                if extra % len(variadic):
                    return None
                for name in variadic:
                    sizes[name] = extra // len(variadic)
            else:
                # Several groups without segment sizes: give everything to the first '*' group.
                star = [n for n in variadic if dict(groups)[n] == "*"]
                for name in variadic:
                    sizes[name] = 0
                if star:
                    sizes[star[0]] = extra
                elif extra > len(variadic):
                    return None
                else:
                    for name in variadic[:extra]:
                        sizes[name] = 1
        out: dict[str, tuple[int, int]] = {}
        index = 0
        for name, arity in groups:
            size = 1 if arity == "" else sizes[name]
            out[name] = (index, index + size)
            index += size
        return out

    def region_count_ok(self, count: int) -> bool:
        if self.regions and self.regions[-1].endswith("*"):
            return count >= len(self.regions) - 1
        return count == len(self.regions)

    def result_count_ok(self, count: int) -> bool:
        if self.results == "*":
            return True
        return count == int(self.results)


OPS: dict[str, OpDef] = {}


def _parse_operands(spec: str) -> tuple[tuple[str, str], ...]:
    out = []
    for word in spec.split():
        if word.endswith(("*", "?")):
            out.append((word[:-1], word[-1]))
        else:
            out.append((word, ""))
    return tuple(out)


def _parse_attrs(spec: str) -> dict[str, AttrSpec]:
    """`name:kind` (required), `name:kind?` (optional), `name:kind=default` (default valued)."""
    attrs: dict[str, AttrSpec] = {}
    for item in spec.split():
        name, _, kind = item.partition(":")
        if "=" in kind:
            kind, _, default_text = kind.partition("=")
            attrs[name] = AttrSpec(kind, False, default_text)
        elif kind.endswith("?"):
            attrs[name] = AttrSpec(kind[:-1], False, None)
        else:
            attrs[name] = AttrSpec(kind, True, None)
    return attrs


def define(
    name: str,
    operands: str = "",
    attrs: str = "",
    regions: str = "",
    results: str = "1",
    category: str = "elementwise",
    terminator: bool = False,
    summary: str = "",
    same_variadic_size: bool = False,
    effect: str = "pure",
    collective: bool = False,
    aliasing_regions: bool = False,
    expandable_body: bool = False,
    callee_attr: Optional[str] = None,
    process_groups: Optional[str] = None,
    may_run_async: bool = False,
    per_tensor_quantized: bool = False,
    commutative: bool = False,
    float_math: bool = False,
    owns_callee: bool = False,
    grid_layout: bool = False,
    result_names: str = "",
    float_result_names: str = "",
    entry_argument_names: str = "",
    results_from: str = "",
) -> OpDef:
    if name in OPS:
        raise ValueError(f"op {name} is defined twice")
    if results_from not in ("", "returned", "carried"):
        raise ValueError(f"op {name}: results_from is 'returned', 'carried' or empty, not {results_from!r}")
    if effect not in EFFECTS:
        raise ValueError(f"op {name}: unknown effect {effect!r} (one of {', '.join(EFFECTS)})")
    opdef = OpDef(
        name,
        _parse_operands(operands),
        _parse_attrs(attrs),
        tuple(regions.split()),
        results,
        category,
        terminator,
        summary,
        same_variadic_size,
        effect,
        collective,
        aliasing_regions,
        expandable_body,
        callee_attr,
        process_groups,
        may_run_async,
        per_tensor_quantized,
        commutative,
        float_math,
        owns_callee,
        grid_layout,
        tuple(result_names.split()),
        tuple(float_result_names.split()),
        tuple(entry_argument_names.split()),
        results_from,
    )
    OPS[name] = opdef
    return opdef


def _trait(name: str, field: str, absent: Any) -> Any:
    """The OpDef field `field` of op `name`, or `absent` for an op hlodbg does not define."""
    opdef = OPS.get(name)
    return getattr(opdef, field) if opdef is not None else absent


def process_groups_of(name: str) -> Optional[str]:
    """How the collective `name` forms its process groups ("reduction", "split", "pairs"), or None."""
    return _trait(name, "process_groups", None)


def is_commutative(name: str) -> bool:
    """Whether the op is a commutative binary op (the short `applies` form of a reducer may name it)."""
    return _trait(name, "commutative", False)


def is_float_math(name: str) -> bool:
    """Whether the op computes with its float operands' values (not only moves their bits)."""
    return _trait(name, "float_math", False)


def may_run_async(name: str) -> bool:
    """Whether `name` may be the one op of an async_start's body."""
    return _trait(name, "may_run_async", False)


def lookup(name: str) -> Optional[OpDef]:
    return OPS.get(name)


EFFECTS = ("pure", "impure", "not_replayable")

# Ops hlodbg has no definition for take their dialect's effect: the test dialects record what
# they see, and Shardy's ops move data between devices.
DIALECT_EFFECTS = {"check": "impure", "interpreter": "impure", "sdy": "not_replayable"}


def effect_of(name: str) -> str:
    opdef = OPS.get(name)
    if opdef is not None:
        return opdef.effect
    return DIALECT_EFFECTS.get(name.partition(".")[0], "pure")


def is_foldable(op_name: str, has_regions: bool) -> bool:
    """Whether the interpreter may compute the op once when all its operands are constants."""
    return not has_regions and effect_of(op_name) == "pure"


def is_replayable(name: str) -> bool:
    """Whether running the op again in the same process reproduces its results (calls: their
    callee's ops decide as well)."""
    return effect_of(name) != "not_replayable"


def is_terminator(name: str) -> bool:
    return _trait(name, "is_terminator", False)


def is_collective(name: str) -> bool:
    return _trait(name, "is_collective", False)


def has_aliasing_regions(name: str) -> bool:
    return _trait(name, "aliasing_regions", False)


def results_from(name: str) -> str:
    """"returned", "carried" or "" (see the module docstring)."""
    return _trait(name, "results_from", "")


def has_expandable_body(name: str) -> bool:
    return _trait(name, "expandable_body", False)


def callee_attribute(name: str) -> Optional[str]:
    return _trait(name, "callee_attr", None)


def owns_callee(name: str) -> bool:
    """Whether the op's callee is its own body (drawn inside it rather than as a function apart)."""
    return _trait(name, "owns_callee", False)


def lays_out_on_grid(name: str) -> bool:
    """Whether the op says how a global value is laid out over the grid (see `grid_layout`)."""
    return _trait(name, "grid_layout", False)


def category_of(name: str) -> str:
    opdef = OPS.get(name)
    if opdef is not None:
        return opdef.category
    if name.startswith("chlo."):
        return "chlo"
    return "custom_call" if "custom" in name else "structural"


__all__ = [
    "AttrSpec", "CATEGORIES", "DIALECT_EFFECTS", "EFFECTS", "OPS", "OpDef", "callee_attribute", "category_of",
    "define", "effect_of", "has_aliasing_regions", "results_from", "has_expandable_body", "is_collective", "is_float_math",
    "is_foldable", "is_replayable", "is_terminator", "lays_out_on_grid", "lookup", "owns_callee",
]
