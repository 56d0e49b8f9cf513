"""XLA HLO's own ops (ir/opset/hlo.py): calls the compiler made, layout and scheduling markers,
and the arithmetic and state ops StableHLO has no op for.

Semantics follow openxla/xla docs/operation_semantics.md and the HLO evaluator
(xla/hlo/evaluator/hlo_evaluator.cc). Tuples are Python tuples; the ops that only order or place
buffers (copy, domain, add_dependency, async_update, copy_start/done) pass values on, since layouts
never change values — except in bitcast (hlo_bitcast.py).
"""
from __future__ import annotations

import re
import weakref
from typing import Any, Optional

import numpy as np

from ..ir.dtypes import TOKEN, as_value
from ..ir.phrases import Phrase
from ..ir.types import TensorType, TupleType, Type
from .chlo import mulhi
from .collectives import _channel, _exchange, _groups, _index_in, real_collective, receive, split_groups
from .collectives_provenance import RECEIVED, _group, collective_reach
from .control import call_
from .elementwise_provenance import SAME_INDEX, elementwise_provenance
from .provenance import ProvenanceQuery, Source, explains, reaches
from .registry import OpCall, op
from .shape import COPIED

# fusion is a call of the fused computation: the same frame the debugger steps into for func.call.
op("hlo.fusion")(call_)
# HLO's mulhi is chlo.mulhi: the high half of the double-width product.
op("hlo.mulhi")(mulhi)


@op("hlo.conditional")
def conditional(call: OpCall, selector: np.ndarray, *branch_operands: Any) -> Any:
    selector = np.asarray(selector)
    branches = len(call.op.regions)
    if selector.dtype == np.bool_:
        taken = bool(selector)
        index, kind = (0, "if.true") if taken else (1, "if.false")
    else:
        index = int(selector)
        # Out-of-range indices run the last branch (operation_semantics.md "Conditional").
        if index < 0 or index >= branches:
            index = branches - 1
        kind = f"case.{index}"
    return call.results(call.interpreter.run_region(call.op, index, [branch_operands[index]], kind))


def _fresh(value: Any) -> Any:
    """A copy of a value that shares no buffer with it (tuples copied element by element)."""
    if isinstance(value, tuple):
        return tuple(_fresh(v) for v in value)
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value


@op("hlo.copy")
def copy(call: OpCall, operand: Any) -> Any:
    return _fresh(operand)


explains("hlo.copy")(elementwise_provenance)  # each element is copied to the same index


@op("hlo.domain", "hlo.async_update")
def pass_on(call: OpCall, operand: Any) -> Any:
    return operand


@op("hlo.add_dependency")
def add_dependency(call: OpCall, operand: Any, token: Any) -> Any:
    return operand  # the token only orders the op after its producer


def _zero(t: Type) -> Any:
    """The zero value of `t` (tuples of zeros for tuple types): the context words of copy/async
    starts, whose values XLA leaves to the runtime and nothing reads."""
    if isinstance(t, TupleType):
        return tuple(_zero(e) for e in t.types)
    if isinstance(t, TensorType):
        return as_value(np.zeros(t.shape, t.numpy_dtype), t)
    return as_value(0, t)


def _tuple_result(call: OpCall, what: str) -> TupleType:
    t = call.result_type
    if not isinstance(t, TupleType) or len(t.types) < 2:
        raise call.error(f"result must be a tuple {what}, got {t}")
    return t


@op("hlo.copy_start")
def copy_start(call: OpCall, operand: Any) -> tuple:
    t = _tuple_result(call, "(destination, source, context)")
    return (_fresh(operand), operand, *(_zero(e) for e in t.types[2:]))


@op("hlo.copy_done")
def copy_done(call: OpCall, started: tuple) -> Any:
    return started[0]


@op("hlo.async_start")
def async_start(call: OpCall, *operands: Any) -> tuple:
    # Running the computation now is a valid schedule (the start/done pair only allows overlap);
    # its frame is the one the debugger steps into.
    t = _tuple_result(call, "((operands...), result, state...)")
    interpreter = call.interpreter
    callee = call.cached("callee", lambda: interpreter.callee(call.op))
    results = interpreter.call_function(callee, list(operands), call.op)
    result = results[0] if len(results) == 1 else tuple(results)
    return (tuple(operands), result, *(_zero(e) for e in t.types[2:]))


@op("hlo.async_done")
def async_done(call: OpCall, started: Any) -> Any:
    # A start that returns its result itself (not a tuple) is passed on.
    return started[1] if isinstance(call.operand_types[0], TupleType) else started


# -- stochastic_convert (StochasticConvertDecomposer, xla/hlo/transforms/expanders) ---------------


@op("hlo.stochastic_convert")
def stochastic_convert(call: OpCall, operand: np.ndarray, random: np.ndarray) -> np.ndarray:
    target = call.result_dtype
    if target.kind != "i":
        raise call.error(f"converts to signed integers only (as XLA does), not to {call.result_type}")
    random = np.asarray(random)
    if random.dtype.kind != "u" or random.shape != np.shape(operand):
        raise call.error(f"the random bits must be unsigned integers of the operand's shape, got {call.operand_types[1]}")
    x = np.asarray(operand).astype(np.float64)
    magnitude = np.abs(x)
    whole = np.floor(magnitude)
    # The fraction as a fixed-point number of the random bits' width: round up when the random
    # value is below it, so the chance of rounding up is the fraction itself.
    bits = random.dtype.itemsize * 8
    fraction = ((magnitude - whole) * 2.0 ** bits).astype(random.dtype)
    info = np.iinfo(target)
    rounded = whole + (random < fraction)
    result = np.where(x < 0, -rounded, rounded)
    result = np.where(x <= info.min, info.min, np.where(x >= info.max, info.max, result))
    return np.nan_to_num(result, nan=0.0).astype(target)


# -- set_dimension_size, rng_get_and_update_state -----------------------------------------------


@op("hlo.set_dimension_size", "stablehlo.set_dimension_size")
def set_dimension_size(call: OpCall, operand: np.ndarray, size: np.ndarray) -> np.ndarray:
    # With static shapes the array keeps every element; the size is a run-time fact that only
    # must fit the dimension's bound (XLA: elements past it are padding).
    dimension = int(call.attr("dimension"))
    shape = np.shape(operand)
    if not 0 <= dimension < len(shape):
        raise call.error(f"dimension {dimension} is not a dimension of {call.operand_types[0]}")
    n = int(np.asarray(size))
    if not 0 <= n <= shape[dimension]:
        raise call.error(f"size {n} does not fit dimension {dimension} (bound {shape[dimension]})")
    return operand


# The RNG state of each run: its entry frame (held weakly) and the counter, per interpreter.
_RNG_STATES: dict[int, tuple[Any, int]] = {}


@op("hlo.rng_get_and_update_state")
def rng_get_and_update_state(call: OpCall) -> np.ndarray:
    # XLA's state is a 128-bit counter returned as u64[2] (low word first), then advanced by
    # `delta`. Its seed is the compiler's; hlodbg starts every run at 0.
    interpreter = call.interpreter
    root = interpreter.frame
    while root.parent is not None:
        root = root.parent
    key = id(interpreter)
    held = _RNG_STATES.get(key)
    state = held[1] if held is not None and held[0]() is root else 0
    if held is None:  # a new interpreter: forget the runs that have ended
        for ended in [k for k, (run, _) in _RNG_STATES.items() if run() is None]:
            del _RNG_STATES[ended]
    _RNG_STATES[key] = (weakref.ref(root), (state + int(call.attr("delta"))) % (1 << 128))
    return np.array([state & (2 ** 64 - 1), state >> 64], dtype=np.uint64)


# -- ragged_all_to_all (jax.lax.ragged_all_to_all's semantics) --------------------------------------


@op("hlo.ragged_all_to_all")
@real_collective
def ragged_all_to_all(call: OpCall, operand: np.ndarray, output: np.ndarray, input_offsets: np.ndarray,
                      send_sizes: np.ndarray, output_offsets: np.ndarray, recv_sizes: np.ndarray) -> np.ndarray:
    # With N slices and a group of G processes, slice i goes to process i // (N / G), which writes
    # it into its `output` at the sender's output_offsets[i] (offsets in the receiver's buffer).
    groups = _groups(call, split_groups, call.interpreter.module)
    group, me = _index_in(groups, call.process)
    if group is None:
        return np.array(output)
    tables = [np.asarray(t).reshape(-1).astype(np.int64) for t in (input_offsets, send_sizes, output_offsets, recv_sizes)]
    slices = len(tables[0])
    if any(len(t) != slices for t in tables) or slices % len(group):
        raise call.error(f"input_offsets, send_sizes, output_offsets and recv_sizes must have the same length, a "
                         f"multiple of the group's {len(group)} processes; got {[len(t) for t in tables]}")
    per_process = slices // len(group)
    starts, sizes, targets, _ = tables
    pieces = []
    for i in range(slices):
        if not 0 <= starts[i] <= starts[i] + sizes[i] <= operand.shape[0]:
            raise call.error(f"slice {i} [{starts[i]}:{starts[i] + sizes[i]}] is outside the operand's "
                             f"{operand.shape[0]} rows")
        pieces.append((int(targets[i]), np.asarray(operand[starts[i]:starts[i] + sizes[i]])))
    contributions = _exchange(call, groups, tuple(pieces))
    result = np.array(output)
    expected = tables[3]
    for sender, sent in enumerate(contributions):
        for m in range(per_process):
            at, piece = sent[me * per_process + m]
            slot = sender * per_process + m
            if len(piece) != expected[slot]:
                raise call.error(f"recv_sizes[{slot}] = {expected[slot]}, but process {group[sender]} sends "
                                 f"{len(piece)} rows")
            if not 0 <= at <= at + len(piece) <= result.shape[0]:
                raise call.error(f"process {group[sender]} writes rows [{at}:{at + len(piece)}] outside the "
                                 f"output's {result.shape[0]} rows")
            result[at:at + len(piece)] = piece
    return result


# -- send / recv (operation_semantics.md "Send", "Recv"): the grid's channels ----------------------


# XLA's pipelined send/recv (collective_pipeline_parallelism_test.cc, collective_ops_test.cc) name
# their peers in the frontend attribute _xla_send_recv_source_target_pairs: each source's send goes
# to its target whatever the channel ids say, and a recv on a process no pair targets receives
# zeros (what XLA's tests expect of it). The ids are partitions on a grid of partitions (pipeline
# stages), replicas otherwise.
PEER_PAIRS = "_xla_send_recv_source_target_pairs"


def _peer_pairs(call: OpCall) -> Optional[list[tuple[int, int]]]:
    attrs = call.attr("mhlo.frontend_attributes", None)
    text = attrs.get(PEER_PAIRS) if isinstance(attrs, dict) else None
    if text is None:
        return None
    return [(int(s), int(t)) for s, t in re.findall(r"\{\s*(-?\d+)\s*,\s*(-?\d+)\s*\}", str(text))]


def _peer_key(call: OpCall, source: int, target: int) -> tuple:
    p = call.process
    if call.grid.num_partitions > 1:
        return ("peer", p.replica_id, source, target)
    return ("peer", p.partition_id, source, target)


def _hlo_channel(call: OpCall) -> int:
    if call.attr("channel_handle", None) is None:
        raise call.error("names no peer: it has neither a channel_id nor the frontend attribute "
                         f"{PEER_PAIRS}")
    return _channel(call)


def _peer_id(call: OpCall) -> int:
    return call.process.partition_id if call.grid.num_partitions > 1 else call.process.replica_id


@op("hlo.send")
def send(call: OpCall, data: Any, token: Any) -> tuple:
    t = _tuple_result(call, "(data, context, token)")
    pairs = _peer_pairs(call)
    if pairs is None:
        call.grid.channels[_hlo_channel(call)].append((data,))
    for source, target in pairs or ():
        if source == _peer_id(call):
            call.grid.channels[_peer_key(call, source, target)].append((data,))
    return (data, *(_zero(e) for e in t.types[1:-1]), TOKEN)


@op("hlo.send_done")
def send_done(call: OpCall, started: tuple) -> Any:
    return TOKEN


@op("hlo.recv")
def recv(call: OpCall, token: Any) -> tuple:
    t = _tuple_result(call, "(data, context, token)")
    pairs = _peer_pairs(call)
    sources = [s for s, target in pairs or () if target == _peer_id(call)]
    if pairs is not None and not sources:
        return (_zero(t.types[0]), *(_zero(e) for e in t.types[1:-1]), TOKEN)
    received = receive(call, _peer_key(call, sources[0], _peer_id(call)) if sources else _hlo_channel(call))
    if len(received) != 1:
        raise call.error(f"channel {_channel(call)} delivered {len(received)} values, hlo.recv takes one")
    data = received[0]
    try:
        value = as_value(data, t.types[0])
    except ValueError as e:
        raise call.error(f"the value sent on channel {_channel(call)}: {e}") from None
    return (value, *(_zero(e) for e in t.types[1:-1]), TOKEN)


@op("hlo.recv_done")
def recv_done(call: OpCall, started: tuple) -> tuple:
    return (started[0], TOKEN)


# -- shuffle (ShuffleExpander, xla/hlo/transforms/expanders) ----------------------------------------


@op("hlo.shuffle")
def shuffle(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # mode=rotate: dimension d rotated left by shifts[k] (taken modulo its size, XLA's NormalizeShift).
    out = np.asarray(operand)
    for dim, shift in zip(call.attr("dimensions"), call.attr("shifts")):
        out = np.roll(out, -int(shift), axis=int(dim))
    return out



# -- element provenance ---------------------------------------------------------------------------

PASSED_ON = Phrase("{op} passes its operand on unchanged: result{index} = operand{index}")
TOKEN_ORDERS = Phrase("the token only orders the op after its producer: result{index} = operand{index}")
SIZE_MARKED = Phrase("dimension {dim} is marked as holding {size} of its {bound} elements; the array keeps every "
                     "element: result{index} = operand{index}")
SIZE_PAST = Phrase("index {value} of dimension {dim} is past the size {size}: XLA treats the element as padding, "
                   "hlodbg keeps operand{index}")
ROTATED = Phrase("dimension {dim} rotates left by {shift}: ({index} + {shift}) mod {size} = {value}")
ROTATED_ELEMENT = Phrase("result{index} = operand{source}")


@explains("hlo.domain")
def domain_provenance(q: ProvenanceQuery):
    return q.answer([Source(0, q.index, SAME_INDEX)], [(PASSED_ON, {"op": q.op.name, "index": q.index})])


@explains("hlo.add_dependency")
def add_dependency_provenance(q: ProvenanceQuery):
    return q.answer([Source(0, q.index, SAME_INDEX)], [(TOKEN_ORDERS, {"index": q.index})])


@explains("hlo.set_dimension_size", "stablehlo.set_dimension_size")
def set_dimension_size_provenance(q: ProvenanceQuery):
    """The size is a run-time fact about the dimension, not an element's value: it is no source."""
    dim = int(q.attr("dimension"))
    bound = q.operand_shape(0)[dim]
    size = int(q.operand_value(1)) if q.operands is not None else "size"
    steps = [(SIZE_MARKED, {"dim": dim, "size": size, "bound": bound, "index": q.index})]
    if isinstance(size, int) and q.index[dim] >= size:
        steps.append((SIZE_PAST, {"value": q.index[dim], "dim": dim, "size": size, "index": q.index}))
    return q.answer([Source(0, q.index, SAME_INDEX)], steps)


@explains("hlo.shuffle")
def shuffle_provenance(q: ProvenanceQuery):
    """mode=rotate: result[..., i, ...] = operand[..., (i + shift) mod n, ...] along each shuffled dimension."""
    shape = q.operand_shape(0)
    source = list(q.index)
    steps = []
    for dim, shift in zip(q.attr("dimensions"), q.attr("shifts")):
        dim, shift = int(dim), int(shift)
        before = source[dim]
        source[dim] = (before + shift) % shape[dim]
        steps.append((ROTATED, {"dim": dim, "shift": shift, "index": before, "size": shape[dim], "value": source[dim]}))
    steps.append((ROTATED_ELEMENT, {"index": q.index, "source": tuple(source)}))
    return q.answer([Source(0, tuple(source), COPIED)], steps)


# ragged_all_to_all on a grid: the last slice written over a row made it (senders in group order).
OUTPUT_KEPT = Phrase("output element kept")
INPUT_OFFSET = Phrase("input offset")
SEND_SIZE = Phrase("send size")
OUTPUT_OFFSET = Phrase("output offset")
RAGGED_RECEIVED = Phrase("device {sender} {sender_process} sends its slice {slice} (its input rows {start}..{end}) to "
                         "rows {at}..{to} here: row {row} is its input row {source}")
RAGGED_KEPT = Phrase("no slice sent to device {device} {process} covers row {row}: it keeps output{index}")


@explains("hlo.ragged_all_to_all")
def ragged_all_to_all_provenance(q: ProvenanceQuery):
    """A row some sender's slice lands on is that sender's input row (with the slice's offsets and size,
    held fixed like gather's indices); any other row keeps this device's `output`."""
    grid, process, group, me, steps = _group(q)
    row = q.index[0]
    written = None
    if group is not None:
        per_process = q.operand_value(2).size // len(group)
        for sender in group:
            operands = q.operands if sender == process or q.peer_values is None else q.peer_values(sender)[0]
            starts, sizes, targets = (np.asarray(operands[k]).reshape(-1).astype(np.int64) for k in (2, 3, 4))
            for i in range(me * per_process, (me + 1) * per_process):
                if targets[i] <= row < targets[i] + sizes[i]:
                    written = (sender, i, int(starts[i]), int(sizes[i]), int(targets[i]))
    if written is None:
        steps.append((RAGGED_KEPT, {"device": grid.device_id(process), "process": process, "row": row,
                                    "index": q.index}))
        return q.answer([Source(1, q.index, OUTPUT_KEPT, process)], steps)
    sender, i, start, size, at = written
    source = start + row - at
    steps.append((RAGGED_RECEIVED, {"sender": grid.device_id(sender), "sender_process": sender, "slice": i,
                                    "start": start, "end": start + size - 1, "at": at, "to": at + size - 1,
                                    "row": row, "source": source}))
    return q.answer([Source(0, (source, *q.index[1:]), RECEIVED, sender), Source(2, (i,), INPUT_OFFSET, sender),
                     Source(3, (i,), SEND_SIZE, sender), Source(4, (i,), OUTPUT_OFFSET, sender)], steps)


reaches("hlo.ragged_all_to_all")(collective_reach)
