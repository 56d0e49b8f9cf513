"""shard_map bodies in Shardy's round-trip form → `sdy.manual_computation` (see shardy.py).

In the lowered HLO a manual computation is three instructions and their tuple plumbing:

    local  = custom_call @xla.sdy.GlobalToLocalShape(global...)   in_shardings, manual_axes
    body   = func.call @xla.sdy.manual_computation_body.N(local...)
    global = custom_call @xla.sdy.LocalToGlobalShape(body...)     out_shardings, manual_axes

(with `stablehlo.tuple` / `get_tuple_element` between them when there are several values). They
become one `sdy.manual_computation(global operands)` whose region is the body function's block,
moved in when this is its only call (the function then goes) or cloned; the body's tuple root is
returned element by element through `sdy.return`. A shard_map without operands has no
GlobalToLocalShape, one without results no LocalToGlobalShape. The shardings may also sit on the
call (XLA's older export).
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional

from ...ir.attributes import ArrayAttr, SdyManualAxes, SdyMesh, SdyShardingPerValue, SymbolRef
from ...ir.core import Block, Function, Module, Operation, Region, Value
from ...ir.errors import ParseError
from ...ir.types import TupleType
from .forms import implicit_get_tuple_element
from .ir_edit import (
    clone_block,
    custom_call_facts,
    erase_unused,
    insert_before,
    instruction_name,
    replace_uses,
    unpacked,
    value_name,
)
from .sdy_text import check_meshes, frontend_attributes, parse_sdy_value
from .tree import HloInstruction

GLOBAL_TO_LOCAL = "xla.sdy.GlobalToLocalShape"
LOCAL_TO_GLOBAL = "xla.sdy.LocalToGlobalShape"
# The name XLA gives a shard_map body computation (also `local_xla.sdy.manual_computation_body`).
MANUAL_BODY = "xla.sdy.manual_computation_body"
IN_SHARDINGS, OUT_SHARDINGS, MANUAL_AXES = "xla.sdy.in_shardings", "xla.sdy.out_shardings", "xla.sdy.manual_axes"
PER_VALUE = "a #sdy.sharding_per_value<[...]>"


# The HLO instruction an op was lowered from, when the module came from HLO text (the lowering's).
InstructionOf = Callable[[Operation], Optional[HloInstruction]]


def import_manual_computations(module: Module, meshes: Mapping[str, SdyMesh],
                               instruction_of: Optional[InstructionOf] = None) -> None:
    """Rewrite every call of a manual computation body, innermost first: a body holding another
    manual computation is moved or cloned once that one is an `sdy.manual_computation`."""
    while True:
        pending = [op for op in module.walk() if is_manual_call(op)]
        if not pending:
            return
        functions = module.functions
        ready = [call for call in pending
                 if not any(is_manual_call(inner) for inner in _callee_ops(functions, call))]
        if not ready:
            raise ParseError(f"the manual computation bodies call each other in a cycle (through "
                             f"'{callee_name(pending[0])}')", pending[0].pos)
        for call in ready:
            ManualCall(module, call, meshes, instruction_of).rewrite()


def is_manual_call(op: Operation) -> bool:
    return op.name == "func.call" and MANUAL_BODY in callee_name(op)


def callee_name(op: Operation) -> str:
    callee = op.attributes.get("callee")
    return callee.name if isinstance(callee, SymbolRef) else str(callee or "")


def _callee_ops(functions: Mapping[str, Function], call: Operation) -> list[Operation]:
    function = functions.get(callee_name(call))
    return [] if function is None else function.ops


def _custom_call_target(op: Optional[Operation]) -> str:
    if op is None or op.name != "stablehlo.custom_call":
        return ""
    return str(op.attributes.get("call_target_name", ""))


class ManualCall:
    def __init__(self, module: Module, call: Operation, meshes: Mapping[str, SdyMesh],
                 instruction_of: Optional[InstructionOf] = None):
        self.module = module
        self.instruction_of = instruction_of
        self.call = call
        self.meshes = meshes
        self.where = f"call '{instruction_name(call)}' of {callee_name(call)}"
        body = module.functions.get(callee_name(call))
        if body is None or body.is_declaration:
            raise ParseError(f"{self.where}: the module has no computation {callee_name(call)}", call.pos)
        self.body = body

    def error(self, message: str, op: Optional[Operation] = None) -> ParseError:
        return ParseError(f"{self.where}: {message}", (op or self.call).pos)

    # -- reading the pattern ------------------------------------------------------------------------

    def global_to_local(self) -> tuple[Optional[Operation], list[int]]:
        """The GlobalToLocalShape feeding the call, and which of its results each call operand is."""
        if not self.call.operands:
            return None, []
        locals_ = [unpacked(v) for v in self.call.operands]
        producer = locals_[0].defining_op
        for index, value in enumerate(locals_):
            if _custom_call_target(value.defining_op) != GLOBAL_TO_LOCAL or value.defining_op is not producer:
                raise self.error(f"operand {index} must be a result of the {GLOBAL_TO_LOCAL} custom call that "
                                 f"gives the body its local values; it is '{value_name(value)}' of "
                                 f"{value.defining_op.name if value.defining_op else 'a block argument'}")
        return producer, [next(i for i, r in enumerate(producer.results) if r is v) for v in locals_]

    def body_element(self, value: Value) -> Optional[int]:
        """Which of the body's results `value` is, or None when it is none of them."""
        results = self.call.results
        if len(results) > 1:
            return next((i for i, r in enumerate(results) if r is value), None)
        if not results:
            return None
        if results[0] is value and not isinstance(value.type, TupleType):
            return 0
        op = value.defining_op
        if op is not None and op.name == "stablehlo.get_tuple_element" and op.operands[0] is results[0]:
            return int(op.attributes["index"])
        return None

    def local_to_global(self) -> tuple[Optional[Operation], list[int]]:
        """The LocalToGlobalShape taking the body's results, and which body result each operand is."""
        users: dict[int, Operation] = {}
        for result in self.call.results:
            for user in result.users:
                if user.name == "stablehlo.get_tuple_element" and self.body_element(user.results[0]) is not None:
                    for inner in user.results[0].users:
                        users[id(inner)] = inner
                else:
                    users[id(user)] = user
        if not users:
            return None, []
        targets = [u for u in users.values() if _custom_call_target(u) == LOCAL_TO_GLOBAL]
        if len(users) != 1 or len(targets) != 1:
            names = ", ".join(sorted(f"'{instruction_name(u)}' ({u.name})" for u in users.values()))
            raise self.error(f"the body's results must all go to one {LOCAL_TO_GLOBAL} custom call and nowhere "
                             f"else; they are used by {names}")
        (target,) = targets
        elements = []
        for index, operand in enumerate(target.operands):
            element = self.body_element(operand)
            if element is None:
                raise self.error(f"operand {index} of {LOCAL_TO_GLOBAL} '{instruction_name(target)}' is not a "
                                 f"result of the body", target)
            elements.append(element)
        return target, elements

    def attribute(self, key: str, kind: type, expected: str, *sources: Optional[Operation]):
        """Frontend attribute `key` of the first of `sources` (then the call) that has it, parsed."""
        for op in (*sources, self.call):
            if op is not None and key in frontend_attributes(op):
                return parse_sdy_value(frontend_attributes(op)[key], kind, expected, op.pos, key,
                                       f"custom-call '{instruction_name(op)}'" if op is not self.call else self.where)
        return None

    def shardings(self, key: str, op: Optional[Operation], count: int, what: str) -> tuple:
        if op is None:
            return ()
        per_value = self.attribute(key, SdyShardingPerValue, PER_VALUE, op)
        if per_value is None:
            raise self.error(f"{_custom_call_target(op)} '{instruction_name(op)}' has no {key}", op)
        if len(per_value.shardings) != count:
            raise self.error(f"{key} of '{instruction_name(op)}' lists {len(per_value.shardings)} sharding(s) for "
                             f"{count} {what}(s)", op)
        check_meshes(per_value.shardings, self.meshes, f"{key} of '{instruction_name(op)}'", op.pos)
        return per_value.shardings

    # -- the rewrite ----------------------------------------------------------------------------------

    def rewrite(self) -> None:
        call = self.call
        entry, operand_order = self.global_to_local()
        exit_, elements = self.local_to_global()
        in_shardings = self.shardings(IN_SHARDINGS, entry, len(entry.operands) if entry else 0, "operand")
        out_shardings = self.shardings(OUT_SHARDINGS, exit_, len(exit_.results) if exit_ else 0, "result")
        axes = self.attribute(MANUAL_AXES, SdyManualAxes, "a #sdy<manual_axes{...}>", entry, exit_)
        if axes is None:
            raise self.error(f"no {MANUAL_AXES} on the call or its {GLOBAL_TO_LOCAL}/{LOCAL_TO_GLOBAL} custom calls")
        if entry is not None and (len(entry.operands) != len(entry.results) or
                                  sorted(operand_order) != list(range(len(entry.results)))):
            raise self.error(f"{GLOBAL_TO_LOCAL} '{instruction_name(entry)}' takes {len(entry.operands)} value(s) "
                             f"and gives {len(entry.results)}; the call must take each local value once", entry)
        for op in (entry, exit_):
            if op is not None and op.parent is not call.parent:
                raise self.error(f"'{instruction_name(op)}' is in another block than the call", op)
        attrs = custom_call_facts(exit_, (OUT_SHARDINGS, MANUAL_AXES)) if exit_ is not None else {}
        attrs |= {
            "in_shardings": SdyShardingPerValue(tuple(in_shardings[k] for k in operand_order)),
            "out_shardings": SdyShardingPerValue(tuple(out_shardings)),
            "manual_axes": axes,
            "hlo.computations": ArrayAttr([self.body.sym_name]),
            "hlo.manual_computation": self.written_record(entry, exit_),
        }
        operands = [entry.operands[k] for k in operand_order] if entry is not None else []
        result_types = list(exit_.result_types) if exit_ is not None else []
        names = [v.name for v in exit_.results] if exit_ is not None else []
        region = Region([self.body_block(elements)])
        place = exit_ if exit_ is not None else call
        manual = Operation("sdy.manual_computation", operands, result_types, attrs, [region], place.location,
                           place.pos, names)
        insert_before(exit_ or call, manual)
        for old, new in zip(exit_.results if exit_ is not None else (), manual.results):
            replace_uses(old, new)
        self.erase_plumbing(entry, exit_)

    def written_record(self, entry: Optional[Operation], exit_: Optional[Operation]) -> dict:
        """The instructions folded into the op besides the exit (whose name and place it takes), as
        the HLO printer needs them to write the three instructions back: names, shapes and
        attribute texts as written, with the get-tuple-elements between them. A shard_map without
        operands (results) has no enter (exit): its name is empty (its attributes absent)."""
        record = {"enter": instruction_name(entry) if entry is not None else "", "call": instruction_name(self.call)}
        if self.instruction_of is None:
            return record
        call = self.instruction_of(self.call)
        enter = self.instruction_of(entry) if entry is not None else None
        exit_inst = self.instruction_of(exit_) if exit_ is not None else None
        sources = [self.instruction_of(v.defining_op) for v in self.call.operands if _reads_tuple(v)]
        results = [self.instruction_of(v.defining_op) for v in (exit_.operands if exit_ is not None else ())
                   if _reads_tuple(v)]
        if (call is None or (entry is not None and enter is None) or (exit_ is not None and exit_inst is None)
                or None in sources or None in results):
            return record
        record.update({
            "enter_shape": enter.shape.text() if enter is not None else "", "call_shape": call.shape.text(),
            "enter_reads": ArrayAttr(i.name for i in sources), "call_reads": ArrayAttr(i.name for i in results),
            "enter_read_attributes": ArrayAttr(_written(i) for i in sources),
            "call_read_attributes": ArrayAttr(_written(i) for i in results),
            "enter_attributes": _written(enter) if enter is not None else {}, "call_attributes": _written(call),
        })
        if exit_inst is not None:
            record["exit_attributes"] = _written(exit_inst)
        return record

    def body_block(self, elements: list[int]) -> Block:
        """The body's block, moved out of its function when nothing else calls it, else a copy;
        its `func.return` becomes `sdy.return` of the results the LocalToGlobalShape takes."""
        name = self.body.sym_name
        calls = [op for op in self.module.walk() if op.name == "func.call" and callee_name(op) == name]
        if len(calls) == 1:
            block = self.body.regions[0].blocks.pop()
            self.module.operations.remove(self.body)
        else:
            block = clone_block(self.body.body, {})
        returned = block.terminator
        if returned is None or returned.name != "func.return":
            raise self.error(f"{name} does not end in a return")
        block.operations.remove(returned)
        erase_returned(returned)
        roots = returned.operands
        if len(roots) == 1 and isinstance(roots[0].type, TupleType):
            # The tuple root stays the computation's ROOT; its elements leave through implicit
            # get_tuple_elements, as the lowering returns an ENTRY's tuple root.
            values = [implicit_get_tuple_element(block, roots[0], e, returned.pos) for e in elements]
        else:
            values = [roots[e] for e in elements]
        block.append(Operation("sdy.return", values, [], pos=returned.pos, location=returned.location))
        return block

    def erase_plumbing(self, entry: Optional[Operation], exit_: Optional[Operation]) -> None:
        """The three instructions and the tuple ops between them, now unused."""
        block = self.call.parent
        start = block.operations.index(entry) if entry is not None else block.operations.index(self.call)
        stop = block.operations.index(exit_) if exit_ is not None else block.operations.index(self.call)
        plumbing = [op for op in block.operations[start:stop + 1]
                    if op in (entry, exit_, self.call) or _is_plumbing(op, (entry, self.call))]
        erase_unused(plumbing)
        for op in (exit_, self.call, entry):
            if op is not None and op.parent is not None:
                users = sorted({f"'{instruction_name(u)}'" for r in op.results for u in r.users})
                raise self.error(f"'{instruction_name(op)}' is also used by {', '.join(users)}, outside the "
                                 f"manual computation", op)


def _reads_tuple(value: Value) -> bool:
    op = value.defining_op
    return op is not None and op.name == "stablehlo.get_tuple_element"


def _written(inst: HloInstruction) -> dict:
    """An instruction's attributes as written (a get-tuple-element's index follows from its place)."""
    return {k: a.text for k, a in inst.attrs.items() if not (inst.opcode == "get-tuple-element" and k == "index")}


def _is_plumbing(op: Operation, sources: tuple) -> bool:
    """A tuple/get_tuple_element op over the results of `sources` (directly or through such ops)."""
    if op.name not in ("stablehlo.tuple", "stablehlo.get_tuple_element"):
        return False
    for value in op.operands:
        producer = value.defining_op
        if producer is None or not (producer in sources or _is_plumbing(producer, sources)):
            return False
    return True


def erase_returned(returned: Operation) -> None:
    """The old terminator, already out of its block: drop it from its operands' uses."""
    for value in {id(v): v for v in returned.operands}.values():
        value.uses = [(user, i) for user, i in value.uses if user is not returned]


__all__ = ["MANUAL_BODY", "import_manual_computations", "is_manual_call"]
