"""The opcode table: every HLO opcode (hlo_text.md §8, 136 at XLA HEAD) → the IR op it becomes and
how its attributes, operands and called computations map. The lowering (HLO → IR) reads it one
way and the printer (IR → HLO) the other way, so there is one list, never two. Which opcode an op
comes from is a fact of its definition (`OpDef.hlo`): the rows below add how attributes and
operands map where that takes more than the name, and the plain rows come from the definitions.

An entry says:
- `op`: the IR op name (`stablehlo.*` for the `=` rows, `chlo.*`, `func.call`, or an own `hlo.*`);
- `adapters`: attribute adapters (adapters.py), each consuming some HLO attributes;
- `regions`: HLO attributes naming computations cloned into the op's regions, in region order
  (`branch_computations` lists several);
- `callee`: the HLO attribute naming a computation called as a function, and the IR attribute
  holding its symbol;
- `results`: "one" when the instruction's value is the op's single result (tuples included),
  "pack" when a tuple-shaped instruction is the op's several results packed by a
  `stablehlo.tuple` marked `hlo.packs_results` (the contract's pack rule);
- `operands`: how HLO operands become IR operands when they differ (see forms.py);
- `marker`: for an IR op that several opcodes share, the value of its `hlo.opcode` attribute.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...ir.attributes import EnumAttr
from ...ir.opset import NO_HLO, OpDef, when_defined
from .adapters import (
    ALGORITHM,
    API_VERSION,
    BOOL,
    DISTRIBUTION,
    F32,
    FFT_TYPE,
    GATHER_DIMS,
    INT,
    INT32,
    INTS,
    ONE_OF_INTS,
    PRECISIONS,
    REDUCE_WINDOW,
    RESULT_ACCURACY,
    RNG_ALGORITHM,
    SCATTER_DIMS,
    SELECT_AND_SCATTER,
    SHUFFLE_MODE,
    STRING,
    TRANSPOSE,
    WORD,
    AliasesAdapter,
    AllToAllAdapter,
    CompareAdapter,
    ConvolutionAdapter,
    DotAdapter,
    Field,
    GroupsAdapter,
    Info,
    MapDimensionsAdapter,
    PadAdapter,
    PairsAdapter,
    RaggedDotAdapter,
    SliceAdapter,
)


@dataclass(frozen=True)
class Opcode:
    hlo: str
    op: str
    adapters: tuple = ()
    regions: tuple[str, ...] = ()
    callee: Optional[tuple[str, str]] = None  # (HLO attribute, IR attribute)
    results: str = "one"
    operands: str = "plain"
    marker: Optional[str] = None

    @property
    def consumes(self) -> tuple[str, ...]:
        names = [n for a in self.adapters for n in a.consumes]
        names += list(self.regions)
        if self.callee:
            names.append(self.callee[0])
        return tuple(names)


TABLE: dict[str, Opcode] = {}
# The IR ops that several opcodes share are told apart by their `hlo.opcode` marker.
BY_OP: dict[tuple[str, Optional[str]], Opcode] = {}


def _enter(entry: Opcode) -> None:
    TABLE[entry.hlo] = entry
    BY_OP.setdefault((entry.op, entry.marker), entry)


def _add(hlo: str, op: Optional[str] = None, *adapters, **kw) -> None:
    if hlo in TABLE:
        raise ValueError(f"opcode {hlo} listed twice")
    _enter(Opcode(hlo, op or "stablehlo." + hlo.replace("-", "_"), tuple(adapters), **kw))


# -- element-wise ----------------------------------------------------------------------------------
# The plain element-wise opcodes (`add`, `sqrt`, `erf`, ...) are facts of their ops' definitions
# (`OpDef.hlo`), read at the end of this file; these take attributes of their own.
_add("compare", None, CompareAdapter())
_add("reduce-precision", None, Field("exponent_bits", "exponent_bits", INT32),
     Field("mantissa_bits", "mantissa_bits", INT32))
_add("stochastic-convert", "hlo.stochastic_convert")

# -- shapes and data movement -----------------------------------------------------------------------
_add("broadcast", "stablehlo.broadcast_in_dim", Field("dimensions", "broadcast_dimensions", INTS, INTS.lower(()),
                                                     always_printed=True))
_add("reshape", None)
_add("dynamic-reshape", None, operands="size_vector")
_add("transpose", None, Field("dimensions", "permutation", INTS))
_add("reverse", None, Field("dimensions", "dimensions", INTS))
_add("slice", None, SliceAdapter())
_add("dynamic-slice", None, Field("dynamic_slice_sizes", "slice_sizes", INTS), operands="index_scalars")
_add("dynamic-update-slice", None, operands="index_scalars")
_add("concatenate", None, Field("dimensions", "dimension", ONE_OF_INTS))
_add("pad", None, PadAdapter())
_add("iota", None, Field("iota_dimension", "iota_dimension", INT))
_add("gather", None, GATHER_DIMS, Field("slice_sizes", "slice_sizes", INTS),
     Field("indices_are_sorted", "indices_are_sorted", BOOL, False))
_add("scatter", None, SCATTER_DIMS, Field("indices_are_sorted", "indices_are_sorted", BOOL, False),
     Field("unique_indices", "unique_indices", BOOL, False), regions=("to_apply",), results="pack")
_add("get-dimension-size", None, Field("dimensions", "dimension", ONE_OF_INTS))
_add("set-dimension-size", "hlo.set_dimension_size", Field("dimensions", "dimension", ONE_OF_INTS))
_add("tuple", None)
_add("get-tuple-element", None, Field("index", "index", INT32))
_add("copy", "hlo.copy")
_add("copy-start", "hlo.copy_start", Field("cross_program_prefetch_index", "cross_program_prefetch_index", INT))
_add("copy-done", "hlo.copy_done")
_add("bitcast", "hlo.bitcast")
_add("domain", "hlo.domain")
_add("add-dependency", "hlo.add_dependency")
_add("opt-barrier", "stablehlo.optimization_barrier")

# -- reductions, sorting, windows ----------------------------------------------------------------
_add("reduce", None, Field("dimensions", "dimensions", INTS), regions=("to_apply",), results="pack")
_add("reduce-window", None, REDUCE_WINDOW, regions=("to_apply",), results="pack")
_add("select-and-scatter", None, SELECT_AND_SCATTER, regions=("select", "scatter"))
_add("map", None, MapDimensionsAdapter(), regions=("to_apply",))
_add("sort", None, Field("dimensions", "dimension", ONE_OF_INTS), Field("is_stable", "is_stable", BOOL, False),
     regions=("to_apply",), results="pack")
_add("topk", "chlo.top_k", Field("k", "k", INT), Field("largest", "largest", BOOL), results="pack",
     operands="topk")
_add("scan", "chlo.scan", Field("dimensions", "dimension", ONE_OF_INTS), Field("is_reverse", "is_reverse", BOOL),
     Field("is_associative", "is_associative", BOOL), regions=("to_apply",), results="pack", operands="scan")

# -- contractions and linear algebra ------------------------------------------------------------
_add("dot", "stablehlo.dot_general", DotAdapter(), Field("operand_precision", "precision_config", PRECISIONS),
     Field("algorithm", "algorithm", ALGORITHM), operands="common_element")
_add("ragged-dot", "chlo.ragged_dot", RaggedDotAdapter())
_add("scaled-dot", "hlo.scaled_dot", DotAdapter())
_add("convolution", None, ConvolutionAdapter(), operands="common_element")
_add("fft", None, Field("fft_type", "fft_type", FFT_TYPE), Field("fft_length", "fft_length", INTS))
_add("cholesky", None, Field("lower", "lower", BOOL, False))
_add("triangular-solve", None, Field("left_side", "left_side", BOOL, False), Field("lower", "lower", BOOL, False),
     Field("unit_diagonal", "unit_diagonal", BOOL, False),
     Field("transpose_a", "transpose_a", TRANSPOSE, EnumAttr("NO_TRANSPOSE", "transpose")))
for _name in ("batch-norm-training", "batch-norm-inference", "batch-norm-grad"):
    _add(_name, None, Field("epsilon", "epsilon", F32), Field("feature_index", "feature_index", INT),
         results="pack")

# -- generators and constants ----------------------------------------------------------------------
_add("constant", None)
_add("rng", None, Field("distribution", "rng_distribution", DISTRIBUTION), operands="rng_shape")
_add("rng-bit-generator", None, Field("algorithm", "rng_algorithm", RNG_ALGORITHM, EnumAttr("DEFAULT", "rng_algorithm")),
     results="pack")
_add("rng-get-and-update-state", "hlo.rng_get_and_update_state", Field("delta", "delta", INT))

# -- control flow and calls ------------------------------------------------------------------------
_add("while", None, regions=("condition", "body"))
_add("conditional", "hlo.conditional", regions=("branch_computations", "true_computation", "false_computation"))
_add("call", "func.call", callee=("to_apply", "callee"))
_add("fusion", "hlo.fusion", Field("kind", "kind", WORD), callee=("calls", "callee"))
_add("custom-call", None, Field("custom_call_target", "call_target_name", STRING),
     Field("custom_call_has_side_effect", "has_side_effect", BOOL, False),
     Field("api_version", "api_version", API_VERSION), AliasesAdapter(),
     regions=(), callee=("called_computations", "called_computations"), results="pack")

# -- asynchronous wrappers -------------------------------------------------------------------------
_add("async-start", "hlo.async_start", Field("async_execution_thread", "execution_thread", STRING),
     callee=("calls", "callee"))
_add("async-update", "hlo.async_update")
_add("async-done", "hlo.async_done")

# -- collectives and communication ---------------------------------------------------------------
_add("all-reduce", None, GroupsAdapter(), regions=("to_apply",), results="pack")
_add("all-gather", None, Field("dimensions", "all_gather_dim", ONE_OF_INTS), GroupsAdapter(), results="pack")
_add("reduce-scatter", None, Field("dimensions", "scatter_dimension", ONE_OF_INTS), GroupsAdapter(),
     regions=("to_apply",))
_add("all-to-all", None, AllToAllAdapter(), GroupsAdapter(global_ids=False, written_out=True), results="pack",
     operands="all_to_all")
_add("ragged-all-to-all", "hlo.ragged_all_to_all", GroupsAdapter(global_ids=False))
_add("collective-permute", None, PairsAdapter(), GroupsAdapter(global_ids=False, groups=False))
_add("collective-broadcast", None, GroupsAdapter(global_ids=False))
_add("collective-reduce", "stablehlo.collective_reduce", GroupsAdapter(), regions=("to_apply",), results="pack")
_add("replica-id", None)
_add("partition-id", None)
_add("after-all", None)
_add("infeed", None, Field("infeed_config", "infeed_config", STRING, ""), results="pack")
_add("outfeed", None, Field("outfeed_config", "outfeed_config", STRING, ""), operands="outfeed")
for _name in ("send", "recv"):
    _add(_name, f"hlo.{_name}", GroupsAdapter(global_ids=False, groups=False, channel_zero=True),
         Field("is_host_transfer", "is_host_transfer", BOOL, False))
for _name in ("send-done", "recv-done"):
    _add(_name, f"hlo.{_name.replace('-', '_')}", Field("is_host_transfer", "is_host_transfer", BOOL, False))
_add("shuffle", "hlo.shuffle", Field("dimensions", "dimensions", INTS), Field("mode", "mode", SHUFFLE_MODE),
     Field("shifts", "shifts", INTS))

# The sugar forms of async collectives: the collective runs at the start (its own op, marked with
# the opcode), the done reads the start's result (an identity hlo.copy, marked likewise).
for _base in ("all-reduce", "all-gather", "collective-permute"):
    _start = TABLE[_base]
    _enter(Opcode(f"{_base}-start", _start.op, _start.adapters, _start.regions,
                  results="pack" if _base == "all-reduce" else "async_pack", marker=f"{_base}-start"))
    # all-reduce-start's value is the result itself (a tuple of results for several operands, as
    # collective_ops_test.cc writes it); the others' are tuples holding it at index 1.
    _enter(Opcode(f"{_base}-done", "hlo.copy" if _base == "all-reduce" else "hlo.async_done",
                  marker=f"{_base}-done"))


def _plain_opcode(opdef: OpDef) -> None:
    """The row of an op whose definition names its opcode and that has no row above: its HLO
    attributes are at most the result_accuracy a transcendental op may carry."""
    if opdef.hlo in (None, NO_HLO) or opdef.hlo in TABLE:
        return
    accuracy = (Field("result_accuracy", "result_accuracy", RESULT_ACCURACY),) if "result_accuracy" in opdef.attrs else ()
    _add(opdef.hlo, opdef.name, *accuracy)


when_defined(_plain_opcode)


def opcode_of(op_name: str, marker: Optional[str] = None) -> Optional[Opcode]:
    """The table entry an IR op came from (the printer's half)."""
    return BY_OP.get((op_name, marker))


def ops_of_opcode(ops, opcode: str) -> list:
    """The ops among `ops` that an HLO instruction of `opcode` became (`dot` → the
    stablehlo.dot_general ops, `get-tuple-element` → stablehlo.get_tuple_element), so people can
    name ops by the opcodes they read in the HLO text. Ops the lowering added that no instruction
    wrote (`hlo.implicit`) are left out; an opcode sharing its IR op with others is told apart by
    its `hlo.opcode` marker."""
    entry = TABLE.get(opcode)
    if entry is None:
        return []
    return [op for op in ops if op.name == entry.op and "hlo.implicit" not in op.attributes
            and op.attributes.get("hlo.opcode") == entry.marker]


def raise_attributes(op) -> dict[str, str]:
    """The HLO attribute texts of an IR op's own attributes (the printer's half of the adapters;
    generic facts, called computations and operands are the printer's to add)."""
    entry = opcode_of(op.name, op.attributes.get("hlo.opcode"))
    if entry is None:
        raise KeyError(f"no HLO opcode lowers to {op.name}")
    info = Info([v.type for v in op.operands], op.results[0].type if op.results else None)
    out: dict[str, str] = {}
    for adapter in entry.adapters:
        out.update(adapter.raise_(op.attributes, info))
    return out


__all__ = ["BY_OP", "Opcode", "TABLE", "opcode_of", "raise_attributes"]
