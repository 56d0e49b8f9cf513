"""hlo.bitcast: the one HLO op whose indexing is physical rather than logical.

The operand's bytes, laid out by its layout, are read back as the result in the result's layout
(the HLO evaluator's HandleBitcast copies the operand's buffer). Layouts come from the `xla_shape`
attribute the HLO frontend keeps on every op (and on every function argument): the operand's from
its producer, the result's from the bitcast itself. Tiled layouts are exact: storage goes through
machine/layout.py, the TPU backend's model of XLA's buffers.

A shape written without a layout has XLA's default layout `{rank-1,...,0}` (XLA's parser gives it
that), so a module that states no layout at all bitcasts in row-major order. When only one side
states a layout other than the default, the other side's is unknown (a computation used as a
region, say) and guessing would be wrong: the op refuses.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..ir.core import Block, Function, Operation, Value
from ..ir.errors import HlodbgError
from ..ir.phrases import Phrase, field_text
from ..machine.layout import Layout, LayoutError, format_shape, parse_shape
from .conversion import BIT_PATTERN
from .provenance import ProvenanceError, ProvenanceQuery, Source, explains
from .registry import OpCall, op


@op("hlo.bitcast")
def bitcast(call: OpCall, operand: np.ndarray) -> np.ndarray:
    operand = np.asarray(operand)
    shape, dtype = call.result_shape, call.result_dtype
    scalar_to_scalar = not shape and not call.op.operands[0].type.shape
    if scalar_to_scalar and operand.ndim and operand.dtype.itemsize == np.dtype(dtype).itemsize:
        # A scalar bitcast given many scalars at once (a sort comparator evaluated on whole keys):
        # a scalar has no layout, so each element's bits are simply re-read.
        return operand.view(dtype)
    source, target = call.cached("layouts", lambda: _layouts(call.op, call.error))
    try:
        have = source.physical_bytes(operand.shape, operand.dtype)
        need = target.physical_bytes(shape, dtype)
    except LayoutError as e:
        raise call.error(e.message) from None
    if have != need:
        raise call.error(f"the operand's buffer {format_shape(operand.dtype, operand.shape, source)} holds {have} "
                         f"bytes but the result {format_shape(dtype, shape, target)} needs {need}: a bitcast "
                         "keeps the bytes, so their sizes must agree")
    try:
        return target.load(source.store(operand), shape, dtype)
    except LayoutError as e:  # a layout that does not fit its shape (the xla_shape disagrees with the type)
        raise call.error(e.message) from None


def _layouts(op: Operation, error: Callable[..., HlodbgError]) -> tuple[Layout, Layout]:
    """(the operand's layout, the result's layout), defaults filled in where that is safe.

    `error(message, notes)` makes the error raised when they cannot be known: the evaluator's or
    the provenance question's."""
    operand = op.operands[0]
    source = _stated_layout(error, _shape_text_of(operand), f"the operand {operand.name}")
    target = _stated_layout(error, op.attributes.get("xla_shape"), "the result")
    operand_rank = len(operand.type.shape)
    result_rank = len(op.results[0].type.shape)
    if (source is None) != (target is None):
        given, rank_missing, missing = ((source, result_rank, "the result") if target is None
                                        else (target, operand_rank, f"the operand {operand.name}"))
        if given != Layout.row_major(len(given.minor_to_major)):
            raise error(
                f"the layout of {missing} is not given, and a bitcast reads its bytes in layout order; "
                f"the other side's layout is {given}, so the default {Layout.row_major(rank_missing)} cannot "
                "be assumed",
                ("dump the module after optimization (XLA prints every layout there), or write the layout "
                 "in the shape, e.g. f32[4,8]{1,0}",))
    return (source or Layout.row_major(operand_rank), target or Layout.row_major(result_rank))


def _stated_layout(error: Callable[..., HlodbgError], text: Optional[str], what: str) -> Optional[Layout]:
    """The layout written in an `xla_shape` text, or None when the text gave none."""
    if not text:
        return None
    try:
        _dtype, _dims, layout = parse_shape(str(text))
    except LayoutError as e:
        raise error(f"cannot read the layout of {what} from its shape {text}: {e.message}") from None
    return layout


def _shape_text_of(value: Value) -> Optional[str]:
    """The `xla_shape` the HLO text gave `value`: its producer's, or its function argument's."""
    producer = value.defining_op
    if producer is not None:
        # A producer of several results carries its tuple's shape: no one layout for this value.
        return producer.attributes.get("xla_shape") if len(producer.results) == 1 else None
    block = value.owner
    region = block.parent if isinstance(block, Block) else None
    function = region.parent if region is not None else None
    if isinstance(function, Function) and function.body is block:
        return function.arg_attrs(value.index).get("xla_shape")
    return None


# -- element provenance ---------------------------------------------------------------------------

BITCAST_SLOT = Phrase("result{index} is slot {slot} of the result's buffer in layout {layout}: bits {first}..{last}")
BITCAST_READS = Phrase("in the operand's layout {layout} those bits hold operand {elements}")
BITCAST_PADDING = Phrase("{count} slot(s) of those bits are padding of the operand's tiled layout: no element")


@explains("hlo.bitcast")
def bitcast_provenance(q: ProvenanceQuery):
    """The operand elements whose bits sit where result[index]'s bits are, each in its own layout."""

    def error(message: str, notes=()) -> ProvenanceError:
        return ProvenanceError(f"{q.op.name}: {message}", q.op.pos, tuple(notes))

    shape, operand_shape = q.result_shape(), q.operand_shape(0)
    source, target = q.memo.get("layouts") or q.memo.setdefault("layouts", _layouts(q.op, error))
    try:
        out_bits = target.element_bits(q.op.results[0].type.numpy_dtype)
        in_bits = source.element_bits(q.op.operands[0].type.numpy_dtype)
        slot = target.linear_index(q.index, shape)
        first, last = slot * out_bits, (slot + 1) * out_bits - 1
        slots = range(first // in_bits, last // in_bits + 1)
        held = [source.logical_index(s, operand_shape) for s in slots]
    except LayoutError as e:
        raise error(e.message) from None
    elements = [at for at in held if at is not None]
    steps = [(BITCAST_SLOT, {"index": q.index, "slot": slot, "layout": str(target), "first": first, "last": last})]
    if elements:
        steps.append((BITCAST_READS, {"layout": str(source), "elements": "  ".join(field_text(at) for at in elements)}))
    if len(elements) < len(held):
        steps.append((BITCAST_PADDING, {"count": len(held) - len(elements)}))
    return q.answer([Source(0, at, BIT_PATTERN) for at in elements], steps)
