"""The result shape of an op, derived step by step with the op's own numbers.

Each rule is registered for the op names it explains (`@derives("stablehlo.pad")`) and returns
the derived shape after adding its steps; the arithmetic that the verifier also needs
(`infer_pad`, `infer_slice`, `infer_concatenate`, `infer_gather`, `window_count`,
`infer_dot_general`, `convolution_result_shape`, a collective's `group_size`) comes from
engine/verify/, so the explanation and the verifier cannot disagree. An op
without a rule whose tensor operands all have the result's shape is explained as such; any other
op's shape is the declared result type, and the explanation says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...ir.attributes import DenseElements
from ...ir.core import Operation
from ...ir.opdefs import lookup
from ...ir.phrases import Phrase
from ...ir.types import TensorType
from ...verify.collectives import group_size
from ...verify.contractions import infer_dot_general
from ...verify.convolution import convolution_result_shape
from ...verify.shape_inference import Fail, infer_concatenate, infer_gather, infer_pad, infer_slice, window_count
from .text import say

RESULT_SHAPE = Phrase("result shape: {shape}")
FIRST_RESULT_SHAPE = Phrase("shape of result #0: {shape}")  # an op of several results: the rule derives the first
DECLARED_ONLY = Phrase("there is no rule to derive the shape of {op}: the result shape is the declared result type {types}")
DYNAMIC_SHAPES = Phrase("the shapes are only known at run time (dynamic dimensions): the result shape is the declared result type {types}")
RULE_FAILED = Phrase("the attributes do not fit the operands ({reason}): the result shape is the declared result type {types}")
DECLARED_DIFFERS = Phrase("the declared result type says {declared}")
SAME_AS_OPERANDS = Phrase("the op works element by element: the result has the shape of its operands, {shape}")
SCALARS_APPLY = Phrase("the result has the shape of {name}, {shape}; each scalar operand ({scalars}) applies to every element")
KEEPS_SHAPE = Phrase("each result has the shape of the operand it comes from: {shapes}")

GATHER_BATCH = Phrase("start_indices has shape {shape}; without index_vector_dim {dim} that leaves the batch sizes {sizes}")
GATHER_OFFSETS = Phrase("slice_sizes {sizes} without collapsed_slice_dims {collapsed} and operand_batching_dims {batching} leaves the offset sizes {offsets}")
GATHER_RANK = Phrase("the result has {batch} batch + {offset} offset = {rank} dimensions; offset_dims {offset_dims} take the offset sizes in order, the other dimensions the batch sizes in order")
RESULT_DIM_OFFSET = Phrase("result dimension {dim}: offset dimension, size {size}")
RESULT_DIM_BATCH = Phrase("result dimension {dim}: batch dimension, size {size}")
SCATTER_RESULTS = Phrase("each result has the shape of the input it updates: {shape}")
SCATTER_UPDATES = Phrase("updates {shape}: update_window_dims {window} index inside the window; the other dimensions {scatter} follow scatter_indices {indices} without index_vector_dim {dim}: sizes {sizes}")
SLICE_DIM = Phrase("dimension {dim}: ceil(({limit} - {start}) / {stride}) = {size}")
PAD_DIM = Phrase("dimension {dim}: {low} + {size} + {gaps} × {interior} + {high} = {out}")
CONCAT_DIM = Phrase("dimension {dim} (the concatenate dimension): {sizes} add up to {total}")
CONCAT_OTHERS = Phrase("every other dimension is the same in every input")
RESHAPE = Phrase("reshape keeps the {count} elements of the operand {shape} and lays them out in the declared shape {result}, which also has {count} elements")
TRANSPOSE_DIM = Phrase("result dimension {dim} = operand dimension permutation[{dim}] = {source}, size {size}")
BROADCAST_FROM = Phrase("result dimension {dim}, size {size}: from operand dimension {source} (size {operand_size})")
BROADCAST_NEW = Phrase("result dimension {dim}, size {size}: new, the operand repeats along it")
BROADCAST_SIZES = Phrase("broadcast_sizes {sizes} come first, then the operand's shape {shape}")
DOT_BATCH = Phrase("batch dimensions (lhs {lhs}, rhs {rhs}) come first: sizes {sizes}")
DOT_CONTRACT = Phrase("contracting dimensions (lhs {lhs}, rhs {rhs}, sizes {sizes}) are summed over and disappear")
DOT_FREE = Phrase("then the free dimensions of {side} {dims}: sizes {sizes}")
CONV_BATCH = Phrase("output dimension {dim} (batch): input batch {size} / batch_group_count {groups} = {out}")
CONV_FEATURE = Phrase("output dimension {dim} (feature): the kernel's output feature size {out}")
WINDOW_DIM = Phrase("output dimension {dim} (spatial {k}): input {size} dilated by {base} → {dilated}, padded ({low}, {high}) → {padded}; window {window} dilated by {window_dilation} → {dilated_window}; ({padded} - {dilated_window}) / {stride} + 1 = {out}")
WINDOW_EMPTY = Phrase("output dimension {dim} (spatial {k}): the window ({dilated_window}) does not fit the padded input ({padded}): size 0")
REDUCE_DIMS = Phrase("dimensions {dims} (sizes {sizes}) are reduced away; the others keep their sizes")
DYNAMIC_SLICE = Phrase("the result has slice_sizes {sizes}, wherever the start indices place the slice")
UPDATE_SLICE = Phrase("the result has the operand's shape {shape}; the update {update} is written into it")
SELECT_AND_SCATTER = Phrase("the windows give the source its shape {source}; the result has the operand's shape {shape}")
IOTA = Phrase("the shape is the declared one; along iota_dimension {dim} the values count 0, 1, ... {last}")
ALL_GATHER = Phrase("dimension {dim} (all_gather_dim): {size} × {count} processes per group = {out}")
REDUCE_SCATTER = Phrase("dimension {dim} (scatter_dimension): {size} / {count} processes per group = {out}")
ALL_TO_ALL = Phrase("split_dimension {split}: {size} / split_count {count} = {split_out}; concat_dimension {concat}: {concat_size} × {count} = {concat_out}")
GROUP_SIZE_FROM_TYPES = Phrase("replica_groups alone do not fix the group size (it depends on the grid): {count} here, by the declared types")
XLA_BROADCAST_DIM = Phrase("dimension {dim}: operand sizes {sizes} → {size}")
XLA_BROADCAST_STRETCH = Phrase("dimension {dim}: operand sizes {sizes} → {size} (a size 1 stretches)")
XLA_BROADCAST_MAP = Phrase("broadcast_dimensions {dims} place the smaller operand's dimensions in the larger one's")
TOP_K = Phrase("the last dimension becomes k = {k}; the others stay as in the operand {shape}")

Rule = Callable[["Derivation"], tuple]
RULES: dict[str, Rule] = {}


def derives(*names: str) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for name in names:
            RULES[name] = rule
        return rule

    return register


@dataclass
class Derivation:
    op: Operation
    lang: str
    lines: list

    def say(self, phrase: Phrase, **fields) -> None:
        self.lines.append(say(phrase, self.lang, **fields))

    def attr(self, name: str, default=None):
        value = self.op.attributes.get(name, default)
        if value is None:
            raise LookupError(f"{self.op.name} has no {name} attribute")
        return value

    def ints(self, name: str, default=None) -> list[int]:
        value = self.attr(name, default)
        if isinstance(value, DenseElements):
            return [int(v) for v in value.array.reshape(-1)]
        return [int(v) for v in value]

    def operand(self, i: int) -> tuple:
        return tuple(self.op.operands[i].type.shape)

    def result(self, i: int = 0) -> tuple:
        return tuple(self.op.results[i].type.shape)


def derive_shape(op: Operation, lang: str) -> list[str]:
    """The lines of the "result shape" section."""
    d = Derivation(op, lang, [])
    tensors = [v.type for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
    declared = ", ".join(str(r.type) for r in op.results) or "()"
    rule = RULES.get(op.name) or (xla_broadcast if chlo_broadcasting(op) else None)
    if rule is None and not _elementwise(op):
        d.say(DECLARED_ONLY, op=op.name, types=declared)
        return d.lines
    if rule is not None and len(tensors) < len(op.operands) + len(op.results):
        d.say(DECLARED_ONLY, op=op.name, types=declared)  # tuples or tokens: the rules read tensor shapes
        return d.lines
    if not all(t.is_static for t in tensors):
        d.say(DYNAMIC_SHAPES, types=declared)
        return d.lines
    if rule is None:
        d.say(SAME_AS_OPERANDS, shape=list(d.result()))
        return d.lines
    try:
        shape = tuple(rule(d))
    except (Fail, LookupError, ValueError, ZeroDivisionError) as broken:
        d.lines.clear()
        d.say(RULE_FAILED, reason=getattr(broken, "message", None) or str(broken), types=declared)
        return d.lines
    d.say(RESULT_SHAPE if len(op.results) <= 1 else FIRST_RESULT_SHAPE, shape=list(shape))
    if op.results and isinstance(op.results[0].type, TensorType) and shape != d.result():
        d.say(DECLARED_DIFFERS, declared=str(op.results[0].type))
    return d.lines


def _elementwise(op: Operation) -> bool:
    """An elementwise op (of any dialect) whose operands and results all have one shape."""
    definition = lookup(op.name)
    if definition is None or definition.family != "elementwise":
        return False
    shapes = {v.type.shape for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)}
    return bool(op.operands) and bool(op.results) and len(shapes) == 1 and all(
        isinstance(v.type, TensorType) for v in op.results)


@derives("stablehlo.clamp", "stablehlo.select")
def _scalars_apply(d: Derivation) -> tuple:
    # clamp's min/max and select's pred may be scalars standing for every element.
    names = [name for name, _ in lookup(d.op.name).operands]
    scalars = [names[i] for i, v in enumerate(d.op.operands) if tuple(v.type.shape) == () != d.result()]
    if scalars:
        d.say(SCALARS_APPLY, name=names[1], shape=list(d.operand(1)), scalars=", ".join(scalars))
    else:
        d.say(SAME_AS_OPERANDS, shape=list(d.result()))
    return d.operand(1)


@derives("stablehlo.all_reduce", "stablehlo.collective_permute", "stablehlo.collective_broadcast",
         "stablehlo.collective_reduce", "stablehlo.cross-replica-sum", "stablehlo.sort", "stablehlo.reverse",
         "stablehlo.while", "stablehlo.optimization_barrier")
def _keeps_shape(d: Derivation) -> tuple:
    # Results correspond one to one with the (data) operands and keep their shapes.
    shapes = [list(v.type.shape) for v in d.op.operands[:len(d.op.results)]]
    d.say(KEEPS_SHAPE, shapes=shapes if len(shapes) > 1 else shapes[0])
    return tuple(shapes[0])


# -- data movement ---------------------------------------------------------------------------


@derives("stablehlo.gather")
def _gather(d: Derivation) -> tuple:
    dn = d.attr("dimension_numbers")
    sizes = d.ints("slice_sizes")
    indices = d.operand(1)
    ivd = dn.index_vector_dim
    shape = infer_gather(d.operand(0), indices, dn, sizes)
    batch = [s for i, s in enumerate(indices) if i != ivd]
    offsets = [s for i, s in enumerate(sizes) if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims]
    d.say(GATHER_BATCH, shape=list(indices), dim=ivd, sizes=batch)
    d.say(GATHER_OFFSETS, sizes=sizes, collapsed=list(dn.collapsed_slice_dims), batching=list(dn.operand_batching_dims),
          offsets=offsets)
    d.say(GATHER_RANK, batch=len(batch), offset=len(offsets), rank=len(shape), offset_dims=list(dn.offset_dims))
    for dim, size in enumerate(shape):
        d.say(RESULT_DIM_OFFSET if dim in dn.offset_dims else RESULT_DIM_BATCH, dim=dim, size=size)
    return shape


@derives("stablehlo.scatter")
def _scatter(d: Derivation) -> tuple:
    dn = d.attr("scatter_dimension_numbers")
    count = len(d.op.results)
    indices = d.operand(count)
    updates = d.operand(count + 1)
    ivd = dn.index_vector_dim
    window = list(dn.update_window_dims)
    d.say(SCATTER_RESULTS, shape=list(d.operand(0)))
    d.say(SCATTER_UPDATES, shape=list(updates), window=window, scatter=[i for i in range(len(updates)) if i not in window],
          indices=list(indices), dim=ivd, sizes=[s for i, s in enumerate(indices) if i != ivd])
    return d.operand(0)


@derives("stablehlo.slice")
def _slice(d: Derivation) -> tuple:
    start, limit = d.ints("start_indices"), d.ints("limit_indices")
    strides = d.ints("strides", [1] * len(start))
    shape = infer_slice(d.operand(0), start, limit, strides)
    for dim, size in enumerate(shape):
        d.say(SLICE_DIM, dim=dim, limit=limit[dim], start=start[dim], stride=strides[dim], size=size)
    return shape


@derives("stablehlo.pad")
def _pad(d: Derivation) -> tuple:
    low, high, interior = d.ints("edge_padding_low"), d.ints("edge_padding_high"), d.ints("interior_padding")
    operand = d.operand(0)
    shape = infer_pad(operand, low, high, interior)
    for dim, size in enumerate(operand):
        d.say(PAD_DIM, dim=dim, low=low[dim], size=size, gaps=max(size - 1, 0), interior=interior[dim], high=high[dim],
              out=shape[dim])
    return shape


@derives("stablehlo.concatenate")
def _concatenate(d: Derivation) -> tuple:
    dim = int(d.attr("dimension"))
    shapes = [tuple(v.type.shape) for v in d.op.operands]
    shape = infer_concatenate(shapes, dim)
    d.say(CONCAT_DIM, dim=dim, sizes=[s[dim] for s in shapes], total=shape[dim])
    d.say(CONCAT_OTHERS)
    return shape


@derives("stablehlo.reshape", "stablehlo.bitcast_convert")
def _reshape(d: Derivation) -> tuple:
    operand, result = d.operand(0), d.result()
    count = 1
    for n in operand:
        count *= n
    d.say(RESHAPE, count=count, shape=list(operand), result=list(result))
    return result


@derives("stablehlo.transpose")
def _transpose(d: Derivation) -> tuple:
    permutation = d.ints("permutation")
    operand = d.operand(0)
    shape = tuple(operand[p] for p in permutation)
    for dim, source in enumerate(permutation):
        d.say(TRANSPOSE_DIM, dim=dim, source=source, size=shape[dim])
    return shape


@derives("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(d: Derivation) -> tuple:
    dims = d.ints("broadcast_dimensions")
    operand, result = d.operand(0), d.result()
    for dim, size in enumerate(result):
        if dim in dims:
            source = dims.index(dim)
            d.say(BROADCAST_FROM, dim=dim, size=size, source=source, operand_size=operand[source])
        else:
            d.say(BROADCAST_NEW, dim=dim, size=size)
    return result


@derives("stablehlo.broadcast")
def _broadcast(d: Derivation) -> tuple:
    sizes = d.ints("broadcast_sizes")
    d.say(BROADCAST_SIZES, sizes=sizes, shape=list(d.operand(0)))
    return tuple(sizes) + d.operand(0)


@derives("stablehlo.dynamic_slice")
def _dynamic_slice(d: Derivation) -> tuple:
    sizes = d.ints("slice_sizes")
    d.say(DYNAMIC_SLICE, sizes=sizes)
    return tuple(sizes)


@derives("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(d: Derivation) -> tuple:
    d.say(UPDATE_SLICE, shape=list(d.operand(0)), update=list(d.operand(1)))
    return d.operand(0)


@derives("stablehlo.iota")
def _iota(d: Derivation) -> tuple:
    dim = int(d.attr("iota_dimension"))
    d.say(IOTA, dim=dim, last=d.result()[dim] - 1)
    return d.result()


@derives("chlo.top_k")
def _top_k(d: Derivation) -> tuple:
    k = int(d.attr("k"))
    operand = d.operand(0)
    d.say(TOP_K, k=k, shape=list(operand))
    return operand[:-1] + (k,)


# -- contractions and windows -----------------------------------------------------------------


def _dot_shape(d: Derivation, lb, rb, lc, rc) -> tuple:
    lhs, rhs = d.operand(0), d.operand(1)
    shape = infer_dot_general(lhs, rhs, lb, rb, lc, rc)
    lfree = [i for i in range(len(lhs)) if i not in lb and i not in lc]
    rfree = [i for i in range(len(rhs)) if i not in rb and i not in rc]
    if lb:
        d.say(DOT_BATCH, lhs=list(lb), rhs=list(rb), sizes=[lhs[i] for i in lb])
    d.say(DOT_CONTRACT, lhs=list(lc), rhs=list(rc), sizes=[lhs[i] for i in lc])
    d.say(DOT_FREE, side="lhs", dims=lfree, sizes=[lhs[i] for i in lfree])
    d.say(DOT_FREE, side="rhs", dims=rfree, sizes=[rhs[i] for i in rfree])
    return shape


@derives("stablehlo.dot_general")
def _dot_general(d: Derivation) -> tuple:
    dn = d.attr("dot_dimension_numbers")
    return _dot_shape(d, dn.lhs_batching_dimensions, dn.rhs_batching_dimensions, dn.lhs_contracting_dimensions,
                      dn.rhs_contracting_dimensions)


@derives("stablehlo.dot")
def _dot(d: Derivation) -> tuple:
    lhs_rank = len(d.operand(0))
    # dot contracts lhs's last dimension with rhs's first (rank-1 operands: their only one).
    return _dot_shape(d, (), (), (lhs_rank - 1,), (0,))


@dataclass(frozen=True)
class WindowDim:
    """One spatial dimension of a window: where it is and every number that sizes it."""

    k: int
    operand_dim: int
    size: int
    window: int
    stride: int
    base_dilation: int
    window_dilation: int
    low: int
    high: int

    @property
    def count(self) -> int:
        return window_count(self.size, self.window, self.stride, self.base_dilation, self.window_dilation,
                            self.low, self.high)


def window_dims(op: Operation) -> list[WindowDim]:
    """The window of a convolution, reduce_window or select_and_scatter, one entry per windowed
    dimension (a convolution's spatial dimensions; every operand dimension otherwise)."""
    a = op.attributes
    shape = tuple(op.operands[0].type.shape)
    dn = a.get("dimension_numbers")
    if "window_dimensions" in a or dn is None:
        dims = list(range(len(shape)))
        sizes = [int(v) for v in a.get("window_dimensions") or [1] * len(dims)]
        base = [int(v) for v in a.get("base_dilations") or [1] * len(dims)]
        window_dilation = [int(v) for v in a.get("window_dilations") or [1] * len(dims)]
    else:
        dims = list(dn.input_spatial_dimensions)
        kernel = tuple(op.operands[1].type.shape)
        sizes = [kernel[i] for i in dn.kernel_spatial_dimensions]
        base = [int(v) for v in a.get("lhs_dilation") or [1] * len(dims)]
        window_dilation = [int(v) for v in a.get("rhs_dilation") or [1] * len(dims)]
    strides = [int(v) for v in a.get("window_strides") or [1] * len(dims)]
    padding = a.get("padding")
    pads = [(int(lo), int(hi)) for lo, hi in padding.array.reshape(-1, 2)] if padding is not None else [(0, 0)] * len(dims)
    return [WindowDim(k, dim, shape[dim], sizes[k], strides[k], base[k], window_dilation[k], *pads[k])
            for k, dim in enumerate(dims)]


def _say_window(d: Derivation, w: WindowDim, out_dim: int) -> int:
    dilated = 0 if w.size == 0 else (w.size - 1) * w.base_dilation + 1
    padded = w.low + dilated + w.high
    dilated_window = 0 if w.window == 0 else (w.window - 1) * w.window_dilation + 1
    count = w.count
    if count == 0:
        d.say(WINDOW_EMPTY, dim=out_dim, k=w.k, dilated_window=dilated_window, padded=padded)
    else:
        d.say(WINDOW_DIM, dim=out_dim, k=w.k, size=w.size, base=w.base_dilation, dilated=dilated, low=w.low, high=w.high,
              padded=padded, window=w.window, window_dilation=w.window_dilation, dilated_window=dilated_window,
              stride=w.stride, out=count)
    return count


@derives("stablehlo.convolution")
def _convolution(d: Derivation) -> tuple:
    dn = d.attr("dimension_numbers")
    lhs, rhs = d.operand(0), d.operand(1)
    groups = int(d.op.attributes.get("batch_group_count", 1))
    window = window_dims(d.op)
    shape = convolution_result_shape(lhs, rhs, dn, [w.stride for w in window], [(w.low, w.high) for w in window],
                                     [w.base_dilation for w in window], [w.window_dilation for w in window], groups)
    d.say(CONV_BATCH, dim=dn.output_batch_dimension, size=lhs[dn.input_batch_dimension], groups=groups,
          out=shape[dn.output_batch_dimension])
    d.say(CONV_FEATURE, dim=dn.output_feature_dimension, out=shape[dn.output_feature_dimension])
    for w, out_dim in zip(window, dn.output_spatial_dimensions):
        _say_window(d, w, out_dim)
    return shape


@derives("stablehlo.reduce_window")
def _reduce_window(d: Derivation) -> tuple:
    return tuple(_say_window(d, w, w.operand_dim) for w in window_dims(d.op))


@derives("stablehlo.select_and_scatter")
def _select_and_scatter(d: Derivation) -> tuple:
    # The windows over the operand give the source's shape; the result has the operand's.
    positions = [_say_window(d, w, w.operand_dim) for w in window_dims(d.op)]
    d.say(SELECT_AND_SCATTER, source=positions, shape=list(d.operand(0)))
    return d.operand(0)


@derives("stablehlo.reduce")
def _reduce(d: Derivation) -> tuple:
    dims = d.ints("dimensions")
    operand = d.operand(0)
    d.say(REDUCE_DIMS, dims=dims, sizes=[operand[i] for i in dims])
    return tuple(n for i, n in enumerate(operand) if i not in dims)


# -- collectives --------------------------------------------------------------------------------


def _group_size(d: Derivation, by_types: int) -> int:
    """Processes per group: from replica_groups when the program fixes it (the verifier's rule),
    else the grid's, as the declared types show it."""
    size = group_size(d.op)
    if size is None:
        d.say(GROUP_SIZE_FROM_TYPES, count=by_types)
        return by_types
    return size


@derives("stablehlo.all_gather")
def _all_gather(d: Derivation) -> tuple:
    dim = int(d.attr("all_gather_dim"))
    operand = d.operand(0)
    count = _group_size(d, d.result()[dim] // max(operand[dim], 1))
    out = operand[dim] * count
    d.say(ALL_GATHER, dim=dim, size=operand[dim], count=count, out=out)
    return operand[:dim] + (out,) + operand[dim + 1:]


@derives("stablehlo.reduce_scatter")
def _reduce_scatter(d: Derivation) -> tuple:
    dim = int(d.attr("scatter_dimension"))
    operand = d.operand(0)
    count = _group_size(d, operand[dim] // max(d.result()[dim], 1))
    out = operand[dim] // count
    d.say(REDUCE_SCATTER, dim=dim, size=operand[dim], count=count, out=out)
    return operand[:dim] + (out,) + operand[dim + 1:]


@derives("stablehlo.all_to_all")
def _all_to_all(d: Derivation) -> tuple:
    split, concat, count = int(d.attr("split_dimension")), int(d.attr("concat_dimension")), int(d.attr("split_count"))
    shape = list(d.operand(0))
    split_size = shape[split]
    shape[split] //= count
    concat_size = shape[concat]
    shape[concat] *= count
    d.say(ALL_TO_ALL, split=split, size=split_size, count=count, split_out=split_size // count, concat=concat,
          concat_size=concat_size, concat_out=shape[concat])
    return tuple(shape)


# -- XLA-style implicit broadcasting (chlo.broadcast_*) ----------------------------------------


def xla_broadcast(d: Derivation) -> tuple:
    """numpy-style right-aligned broadcasting, or `broadcast_dimensions` placing the smaller operand."""
    shapes = [tuple(v.type.shape) for v in d.op.operands if isinstance(v.type, TensorType)]
    rank = max(len(s) for s in shapes)
    mapping = d.op.attributes.get("broadcast_dimensions")
    placed = []
    for s in shapes:
        dims = [int(v) for v in mapping] if mapping is not None and len(s) < rank else list(range(rank - len(s), rank))
        full = [1] * rank
        for size, dim in zip(s, dims):
            full[dim] = size
        placed.append(full)
    if mapping is not None:
        d.say(XLA_BROADCAST_MAP, dims=[int(v) for v in mapping])
    out = []
    for dim in range(rank):
        sizes = [p[dim] for p in placed]
        wanted = {n for n in sizes if n != 1}
        if len(wanted) > 1:
            raise ValueError(f"dimension {dim} has sizes {sizes}, which do not broadcast")
        out.append(wanted.pop() if wanted else 1)
        d.say(XLA_BROADCAST_STRETCH if len(set(sizes)) > 1 else XLA_BROADCAST_DIM, dim=dim, sizes=sizes, size=out[-1])
    return tuple(out)


def chlo_broadcasting(op: Operation) -> bool:
    """Whether a chlo op broadcasts its operands XLA-style (it has operands of different shapes or
    a broadcast_dimensions attribute, as every chlo.broadcast_* op may)."""
    shapes = {v.type.shape for v in op.operands if isinstance(v.type, TensorType)}
    return op.name.startswith("chlo.") and len(op.operands) > 1 and (len(shapes) > 1 or "broadcast_dimensions" in op.attributes)
