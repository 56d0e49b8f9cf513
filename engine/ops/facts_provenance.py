"""Element provenance of results made of facts rather than of operand elements, and of
cross-replica-sum.

get_dimension_size returns a size of its operand's shape, replica_id and partition_id the
device's place on the grid, hlo.rng_get_and_update_state the run's random-number counter: no
operand element determines them (an element of get_dimension_size's operand can change freely),
so their answers have no sources and the steps say what the value is made of instead.

cross-replica-sum is the legacy all_reduce with an add body over replica groups: the collectives'
answer (collectives_provenance.py) holds for it as it stands, so it is registered here.
"""
from __future__ import annotations

from ..ir.phrases import Phrase
from ..machine.process import ProcessId
from .collectives_provenance import all_reduce_provenance, collective_reach
from .provenance import ProvenanceQuery, explains, reaches

SIZE_OF_DIMENSION = Phrase("result() is the size of dimension {dim} of the operand's shape {shape}: {size}; "
                           "no element of the operand is read")
DEVICE_ID = Phrase("result() is the {what} of the device the op runs on: no operand is read")
DEVICE_ID_VALUE = Phrase("result() is the {what} of the device the op runs on, {process}: {value}; no operand is read")
RNG_STATE = Phrase("result{index} is a word of the run's random-number state counter (then advanced by delta "
                   "{delta}): no operand is read")

explains("stablehlo.cross-replica-sum")(all_reduce_provenance)
reaches("stablehlo.cross-replica-sum")(collective_reach)


@explains("stablehlo.get_dimension_size")
def get_dimension_size_provenance(q: ProvenanceQuery):
    dim, shape = int(q.attr("dimension")), q.operand_shape(0)
    return q.answer([], [(SIZE_OF_DIMENSION, {"dim": dim, "shape": shape, "size": shape[dim]})])


@explains("stablehlo.replica_id", "stablehlo.partition_id")
def device_id_provenance(q: ProvenanceQuery):
    what = q.op.name.split(".")[1]
    if q.process is not None:
        value = q.process.replica_id if what == "replica_id" else q.process.partition_id
        return q.answer([], [(DEVICE_ID_VALUE, {"what": what, "process": q.process, "value": value})])
    if q.results is not None:
        return q.answer([], [(DEVICE_ID_VALUE, {"what": what, "process": ProcessId(0, 0),
                                                "value": q.result_value(0)[()]})])
    return q.answer([], [(DEVICE_ID, {"what": what})])


@explains("hlo.rng_get_and_update_state")
def rng_state_provenance(q: ProvenanceQuery):
    return q.answer([], [(RNG_STATE, {"index": q.index, "delta": int(q.attr("delta", 0))})])
