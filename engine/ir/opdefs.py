"""What each known op is, whatever language spelled it: operands, attributes (kind, default),
regions, results, and every fact the rest of hlodbg asks about it.

One OpDef per op, registered by the dialect modules of ir/opset/ (`define(...)`), is the single
source of an op's facts; the tables elsewhere are derived from it or registered against it, and
tests/test_op_completeness.py fails when an op lacks one of them:

- `dialect`: the part of its name before the dot.
- `family`: what the op does, which provenance (ops/provenance.py's `explains_family`), fusion
  (run/fusion.py: "elementwise" ops fuse) and the numerics of a backend ask: one of FAMILIES.
- `colour`: the palette entry views draw it with (CATEGORIES): its family, except CHLO's ops, which
  are drawn in CHLO's own colour whatever they do.
- `types`: the rule its operand and result types follow. One of ELEMENT_TYPES (an element-wise op:
  its operands have that kind of element type, its result has the operands' type; the verifier
  checks it with one shared rule, verify/elementwise.py), "own" (the verifier registers a rule of
  the op's own: a missing one is an error, never a silently skipped check) or "none" (no type
  rule: the generic arity and attribute checks are all).
- `syntax`: its pretty MLIR format (syntax/mlir/format.py's language), "" when it has none or a
  syntax class of its own (syntax/mlir registers those).
- `hlo`: the HLO opcode that becomes it (syntax/hlo/opcodes.py; plain element-wise opcodes are
  derived from this fact), or "none": a decision every op must make.
- `transcendental` / `exact`: the numerics of a float element-wise op. Transcendental: a function
  each implementation approximates its own way (XLA's polynomials, numpy's kernels), so results
  differ by a few ULP between them and a TPU backend says so; exact: IEEE arithmetic, the one
  correctly rounded value of the exact result (a square, a sum, a rounding, a comparison), which
  hlodbg computes bit for bit as XLA on the CPU does (a TPU may still approximate a division:
  README's TPU table). An element-wise op with `float_math` is one of the two.

Traits:

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
from typing import Any, Callable, Optional

# The colours of the graph and the UI legend (an op's `colour`).
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

# What ops do (an op's `family`): the colours, less CHLO's (a dialect, not a family), plus the test
# dialects' checks.
FAMILIES = tuple(c for c in CATEGORIES if c != "chlo") + ("check",)

# The element types an element-wise op with a shared type rule takes (its `types`).
ELEMENT_TYPES = (
    "any",
    "bool_or_int",
    "int",
    "float_or_quantized",
    "float_complex_quantized",
    "int_float_complex_quantized",
    "signed_int_float_complex_quantized",
)
# `types` of an op whose verifier rule is its own, and of an op without a type rule.
OWN_TYPE_RULE = "own"
NO_TYPE_RULE = "none"
# `hlo` of an op no HLO opcode becomes.
NO_HLO = "none"


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
    family: str  # see the module docstring
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
    colour: str = ""  # the palette colour (see the module docstring)
    types: str = OWN_TYPE_RULE  # see the module docstring
    syntax: str = ""  # the pretty MLIR format, "" for none
    hlo: Optional[str] = None  # the HLO opcode, NO_HLO, or None while undecided
    transcendental: bool = False
    exact: bool = False

    @property
    def dialect(self) -> str:
        return self.name.partition(".")[0]

    @property
    def category(self) -> str:
        """The palette colour (its older name): ask `family` what the op does."""
        return self.colour

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
    family: str = "elementwise",
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
    colour: str = "",
    types: str = OWN_TYPE_RULE,
    syntax: str = "",
    hlo: Optional[str] = None,
    transcendental: bool = False,
    exact: bool = False,
) -> OpDef:
    if name in OPS:
        raise ValueError(f"op {name} is defined twice")
    if results_from not in ("", "returned", "carried"):
        raise ValueError(f"op {name}: results_from is 'returned', 'carried' or empty, not {results_from!r}")
    if effect not in EFFECTS:
        raise ValueError(f"op {name}: unknown effect {effect!r} (one of {', '.join(EFFECTS)})")
    _check_facts(name, family, colour or family, types, len(_parse_operands(operands)), float_math, transcendental,
                 exact)
    opdef = OpDef(
        name,
        _parse_operands(operands),
        _parse_attrs(attrs),
        tuple(regions.split()),
        results,
        family,
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
        colour or family,
        types,
        syntax,
        hlo,
        transcendental,
        exact,
    )
    OPS[name] = opdef
    for listener in _LISTENERS:
        listener(opdef)
    return opdef


def _check_facts(name: str, family: str, colour: str, types: str, operand_count: int, float_math: bool,
                 transcendental: bool, exact: bool) -> None:
    """The facts of one definition agree with each other (a typo is an error where it is written)."""
    if family not in FAMILIES:
        raise ValueError(f"op {name}: unknown family {family!r} (one of {', '.join(FAMILIES)})")
    if colour not in CATEGORIES + ("check",):
        raise ValueError(f"op {name}: unknown colour {colour!r} (one of {', '.join(CATEGORIES)})")
    if types not in ELEMENT_TYPES + (OWN_TYPE_RULE, NO_TYPE_RULE):
        raise ValueError(f"op {name}: types is one of {', '.join(ELEMENT_TYPES)}, "
                         f"{OWN_TYPE_RULE!r} or {NO_TYPE_RULE!r}, not {types!r}")
    if types in ELEMENT_TYPES and (family != "elementwise" or operand_count not in (1, 2)):
        raise ValueError(f"op {name}: a shared element type rule ({types}) is for element-wise ops of one or two "
                         "operands")
    if transcendental and exact:
        raise ValueError(f"op {name}: an op is transcendental or exact, not both")
    if (transcendental or exact) and not float_math:
        raise ValueError(f"op {name}: transcendental and exact describe float math (float_math=True)")


# Called with every definition, those made so far and those made later (see `when_defined`).
_LISTENERS: list[Callable[[OpDef], None]] = []


def when_defined(listener: Callable[[OpDef], None]) -> None:
    """Call `listener` with every op definition: each one made so far, then each new one as it is
    made. The layers above register what they derive from a definition this way (a pretty
    format, an HLO opcode), so an op defined after they were imported gets it as well."""
    _LISTENERS.append(listener)
    for opdef in list(OPS.values()):
        listener(opdef)


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


def family_of(name: str) -> str:
    """What the op does (one of FAMILIES); an op without a definition is "custom_call" or "structural"."""
    opdef = OPS.get(name)
    if opdef is not None:
        return opdef.family
    return "custom_call" if "custom" in name else "structural"


def is_transcendental(name: str) -> bool:
    """Whether each device approximates the op's function with its own polynomial."""
    return _trait(name, "transcendental", False)


def category_of(name: str) -> str:
    """The palette colour of op `name` (one of CATEGORIES, or "check")."""
    opdef = OPS.get(name)
    if opdef is not None:
        return opdef.colour
    if name.startswith("chlo."):
        return "chlo"
    return "custom_call" if "custom" in name else "structural"


__all__ = [
    "AttrSpec", "CATEGORIES", "DIALECT_EFFECTS", "EFFECTS", "ELEMENT_TYPES", "FAMILIES", "NO_HLO", "NO_TYPE_RULE",
    "OPS", "OWN_TYPE_RULE", "OpDef", "callee_attribute", "category_of", "define", "family_of", "is_transcendental",
    "when_defined", "effect_of", "has_aliasing_regions", "results_from", "has_expandable_body", "is_collective", "is_float_math",
    "is_foldable", "is_replayable", "is_terminator", "lays_out_on_grid", "lookup", "owns_callee",
]
