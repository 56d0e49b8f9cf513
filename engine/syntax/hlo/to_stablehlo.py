"""An HLO-derived module as StableHLO-only IR (`hlodbg print X.hlo --to stablehlo`).

The HLO frontend keeps HLO's shape of a program: tuples as values, fusions and async wrappers,
layout markers, HLO facts as attributes. This makes a new module with StableHLO's shape, that the
MLIR frontend reads and the interpreter runs to the same results:
- hlo.fusion becomes `func.call` of its fused computation (already a private function);
- hlo.conditional becomes `stablehlo.if` (pred) or `stablehlo.case` (index), each branch reading
  its operand by capture; a `stablehlo.while` over one tuple becomes a while over its elements;
- tuples are unpacked wherever StableHLO has several results: a get_tuple_element of a known
  tuple reads the element itself, and tuples nobody reads any more are dropped;
- a rotate shuffle is slices and a concatenate per dimension (XLA's ShuffleExpander);
- copy, domain, add_dependency and async-update are identities; async-start/-done run their
  computation synchronously (`func.call`) at the start; copy-start/-done likewise;
- a bitcast is a `stablehlo.reshape` when both layouts are the default row-major one (then the
  physical reinterpretation is a logical reshape); otherwise it stays `hlo.bitcast`, and so do
  the ops StableHLO has no spelling for — each named in the notes the CLI prints as comments;
- HLO's own attributes are dropped except what StableHLO carries too (mhlo.sharding,
  mhlo.frontend_attributes) and locations.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from ...ir.attributes import ArrayAttr, DenseArray, DenseElements, IntegerAttr, SymbolRef
from ...ir.core import Block, Function, Module, Operation, Region, Value
from ...ir.types import FunctionType, IntegerType, TensorType, TupleType, Type, element_type

_I32 = IntegerType(32)
_KEPT_MODULE_ATTRS = ("mhlo.num_replicas", "mhlo.num_partitions")
_IDENTITIES = ("hlo.copy", "hlo.domain", "hlo.add_dependency", "hlo.async_update")


def to_stablehlo(module: Module) -> Module:
    return convert_to_stablehlo(module)[0]


def convert_to_stablehlo(module: Module) -> tuple[Module, list[str]]:
    """The StableHLO module and notes on what could not be spelled in StableHLO (one line each)."""
    conversion = Conversion(module)
    return conversion.run(), conversion.notes


def stablehlo_attributes(attrs: dict) -> dict:
    """An op's attributes without HLO's own (`hlo.*`, `xla_shape`)."""
    return {k: v for k, v in attrs.items() if not k.startswith("hlo.") and k != "xla_shape"}


class Conversion:
    def __init__(self, module: Module):
        self.source = module
        self.notes: list[str] = []
        self.vmap: dict[int, Value] = {}
        self.placeholders: set[int] = set()  # ids of the zero constants made for unread elements

    def run(self) -> Module:
        src = self.source
        attrs = {k: v for k, v in src.attributes.items() if k in _KEPT_MODULE_ATTRS or k.startswith("mhlo.")}
        out = Module(src.name, attrs)
        out.source, out.pos, out.location = src.source, src.pos, src.location
        for op in src.operations:
            out.operations.append(self.function(op) if isinstance(op, Function) else self.clone(op, None))
        return out

    # -- functions and blocks ---------------------------------------------------------------------

    def function(self, fn: Function) -> Function:
        attrs = {k: v for k, v in fn.attributes.items()
                 if k not in ("arg_attrs", "res_attrs", "function_type") and not k.startswith("hlo.")}
        if fn.is_declaration:
            return Function("func.func", [], [], dict(fn.attributes), [], fn.location, fn.pos)
        block = self.block(fn.body)
        inputs = tuple(a.type for a in block.arguments)
        results = tuple(v.type for v in block.terminator.operands)
        attrs["function_type"] = FunctionType(inputs, results)
        arg_attrs = [stablehlo_attributes(fn.arg_attrs(i)) for i in range(len(inputs))]
        if any(arg_attrs):
            attrs["arg_attrs"] = ArrayAttr(arg_attrs)
        if fn.attributes.get("res_attrs") and len(fn.attributes["res_attrs"]) == len(results):
            attrs["res_attrs"] = ArrayAttr(stablehlo_attributes(dict(a)) for a in fn.attributes["res_attrs"])
        return Function("func.func", [], [], attrs, [Region([block])], fn.location, fn.pos)

    def block(self, src: Block, arguments: Optional[list[Value]] = None) -> Block:
        """A copy of `src`; its arguments map to `arguments` (captured values) when given."""
        out = Block(src.label)
        for i, arg in enumerate(src.arguments):
            if arguments is not None:
                self.vmap[id(arg)] = arguments[i]
            else:
                new = out.add_argument(arg.name, arg.type, arg.pos)
                new.location = arg.location
                self.vmap[id(arg)] = new
        for op in src.operations:
            self.convert(op, out)
        drop_dead_tuples(out, self.placeholders)
        return out

    def value(self, v: Value) -> Value:
        return self.vmap[id(v)]

    def emit(self, block: Block, name: str, operands: list[Value], types: list[Type], attrs: Optional[dict] = None,
             regions: Optional[list[Region]] = None, like: Optional[Operation] = None,
             names: Optional[list[str]] = None) -> Operation:
        op = Operation(name, operands, types, attrs or {}, regions or [], like.location if like else None,
                       like.pos if like else None, result_names=names)
        block.append(op)
        return op

    # -- one op -----------------------------------------------------------------------------------

    def convert(self, op: Operation, block: Block) -> None:
        rule: Optional[Callable[[Any, Operation, Block], Any]] = RULES.get(op.name)
        if op.name in _IDENTITIES:
            self.vmap[id(op.results[0])] = self.value(op.operands[0])
            return
        if rule is not None:
            result = rule(self, op, block)
            if result is not None:
                self.vmap[id(op.results[0])] = result
            return
        if op.name.startswith("hlo."):
            self.notes.append(f"{op.name} '{_name(op)}' has no StableHLO spelling; kept as the generic op \"{op.name}\"")
        self.clone(op, block)

    def clone(self, op: Operation, block: Optional[Block]) -> Operation:
        regions = [Region([self.block(r.block)]) for r in op.regions if r.blocks]
        new = Operation(op.name, [self.value(v) for v in op.operands], [r.type for r in op.results],
                        stablehlo_attributes(op.attributes), regions, op.location, op.pos,
                        result_names=[r.name for r in op.results])
        new.successors = list(op.successors)
        new.property_names = op.property_names
        for old, fresh in zip(op.results, new.results):
            self.vmap[id(old)] = fresh
        if op.name == "stablehlo.constant" and "hlo.implicit" in op.attributes:
            self.placeholders.add(id(new))  # the lowering's zeros for a context nothing may read
        if block is not None:
            block.append(new)
        return new

    # -- tuples ----------------------------------------------------------------------------------------

    def element(self, block: Block, value: Value, index: int, like: Optional[Operation] = None) -> Value:
        """Element `index` of a tuple value: the value itself when the tuple was built here."""
        maker = value.defining_op
        if maker is not None and maker.name == "stablehlo.tuple":
            return maker.operands[index]
        op = self.emit(block, "stablehlo.get_tuple_element", [value], [value.type.types[index]],
                       {"index": IntegerAttr(index, _I32)}, like=like)
        return op.results[0]

    def elements(self, block: Block, value: Value) -> list[Value]:
        return [self.element(block, value, i) for i in range(len(value.type.types))]

    def pack(self, block: Block, values: list[Value], like: Operation, name: str) -> Value:
        types = tuple(v.type for v in values)
        return self.emit(block, "stablehlo.tuple", values, [TupleType(types)], like=like, names=[name]).results[0]

    def zeros(self, block: Block, t: TensorType, like: Operation) -> Value:
        """A zero constant standing for a context or state element nothing reads (dropped when so)."""
        array = np.zeros(t.shape, dtype=t.numpy_dtype)
        op = self.emit(block, "stablehlo.constant", [], [t], {"value": DenseElements(t, array)}, like=like)
        self.placeholders.add(id(op))
        return op.results[0]

    # -- the rules ------------------------------------------------------------------------------------

    def get_tuple_element(self, op: Operation, block: Block) -> Value:
        return self.element(block, self.value(op.operands[0]), int(op.attributes["index"]), op)

    def fusion(self, op: Operation, block: Block) -> Value:
        return self.call(op, block, op.operands)

    def call(self, op: Operation, block: Block, operands: list[Value]) -> Value:
        callee = op.attributes["callee"]
        result_type = self.callee_result(callee, op)
        return self.emit(block, "func.call", [self.value(v) for v in operands], [result_type],
                         {"callee": callee, **stablehlo_attributes(_without(op.attributes, "callee", "kind"))},
                         like=op, names=[op.results[0].name]).results[0]

    def callee_result(self, callee: SymbolRef, op: Operation) -> Type:
        fn = self.source.functions.get(callee.name)
        if fn is None:
            raise ValueError(f"'{_name(op)}' calls @{callee.name}, which the module does not define")
        results = fn.function_type.results
        return results[0] if len(results) == 1 else TupleType(tuple(results))

    def async_start(self, op: Operation, block: Block) -> Value:
        """((operands...), result, state...): the computation runs here; the state is zeros."""
        result = self.call(op, block, op.operands)
        t: TupleType = op.results[0].type
        operands = self.pack(block, [self.value(v) for v in op.operands], op, f"{op.results[0].name}.operands")
        state = [self.zeros(block, s, op) for s in t.types[2:]]
        return self.pack(block, [operands, result, *state], op, op.results[0].name)

    def async_done(self, op: Operation, block: Block) -> Value:
        if not isinstance(op.operands[0].type, TupleType):  # a start that returns its result itself
            return self.value(op.operands[0])
        return self.element(block, self.value(op.operands[0]), 1, op)

    def copy_start(self, op: Operation, block: Block) -> Value:
        """(destination, source, u32 context): the copy is done at the start."""
        x = self.value(op.operands[0])
        t: TupleType = op.results[0].type
        return self.pack(block, [x, x, *[self.zeros(block, s, op) for s in t.types[2:]]], op, op.results[0].name)

    def copy_done(self, op: Operation, block: Block) -> Value:
        return self.element(block, self.value(op.operands[0]), 0, op)

    def bitcast(self, op: Operation, block: Block) -> Value:
        source, result = op.operands[0], op.results[0]
        if row_major_layout(self.xla_shape(source)) and row_major_layout(self.xla_shape(result)) and \
                _bit_width(source.type) == _bit_width(result.type):
            # Both buffers in row-major order: the bytes keep their logical order, so the bitcast
            # is a reshape, after a bitcast_convert when the element types differ (same width).
            value = self.value(source)
            if element_type(source.type) != element_type(result.type):
                converted = TensorType(source.type.shape, element_type(result.type))
                name = result.name if converted == result.type else f"{result.name}.bits"
                value = self.emit(block, "stablehlo.bitcast_convert", [value], [converted], like=op,
                                  names=[name]).results[0]
            if value.type == result.type:
                return value
            return self.emit(block, "stablehlo.reshape", [value], [result.type],
                             stablehlo_attributes(op.attributes), like=op, names=[result.name]).results[0]
        self.notes.append(f"hlo.bitcast '{_display(result.name)}' reinterprets {self.xla_shape(source) or source.type} as "
                          f"{self.xla_shape(result) or result.type}, which is no logical reshape; kept as the "
                          f"generic op \"hlo.bitcast\"")
        operand = self.value(source)
        if self.xla_shape(source) is not None:
            # The bitcast reads its operand's layout from the operand's producer: an identity copy
            # states it, whatever op produces the value here.
            operand = self.emit(block, "hlo.copy", [operand], [source.type], {"xla_shape": self.xla_shape(source)},
                                like=op, names=[f"{source.name}.laid_out"]).results[0]
        attrs = stablehlo_attributes(op.attributes)
        if self.xla_shape(result) is not None:
            attrs["xla_shape"] = self.xla_shape(result)
        return self.emit(block, "hlo.bitcast", [operand], [result.type], attrs, like=op, names=[result.name]).results[0]

    def shuffle(self, op: Operation, block: Block) -> Value:
        """A rotate shuffle as XLA's ShuffleExpander writes it: per dimension, the slice from the
        shift on, then the slice before it, concatenated."""
        value = self.value(op.operands[0])
        t = value.type
        for dim, shift in zip(op.attributes["dimensions"], op.attributes["shifts"]):
            dim, size = int(dim), t.shape[int(dim)]
            shift = int(shift) % size if size else 0
            if shift == 0:
                continue
            parts = []
            for start, limit in ((shift, size), (0, shift)):
                starts = [0] * t.rank
                limits = list(t.shape)
                starts[dim], limits[dim] = start, limit
                shape = tuple(limit - start if d == dim else n for d, n in enumerate(t.shape))
                parts.append(self.emit(block, "stablehlo.slice", [value], [TensorType(shape, t.element)],
                                       {"start_indices": DenseArray(tuple(starts)), "limit_indices": DenseArray(tuple(limits)),
                                        "strides": DenseArray((1,) * t.rank)}, like=op).results[0])
            value = self.emit(block, "stablehlo.concatenate", parts, [t], {"dimension": IntegerAttr(dim, IntegerType(64))},
                              like=op).results[0]
        return value

    def xla_shape(self, value: Value) -> Optional[str]:
        owner = value.defining_op
        if owner is not None:
            return owner.attributes.get("xla_shape")
        fn = value.owner.parent.parent if value.owner.parent is not None else None
        if isinstance(fn, Function) and value.owner is fn.body:
            return fn.arg_attrs(value.index).get("xla_shape")
        return None

    def conditional(self, op: Operation, block: Block) -> Value:
        selector = self.value(op.operands[0])
        branch_operands = [self.value(v) for v in op.operands[1:]]
        result = op.results[0]
        regions, types = [], None
        for region, operand in zip(op.regions, branch_operands):
            body = self.block(region.block, [operand])
            types = self.unpack_return(body, result.type)
            regions.append(Region([body]))
        is_pred = isinstance(element_type(selector.type), IntegerType) and element_type(selector.type).is_bool
        name = "stablehlo.if" if is_pred and len(regions) == 2 else "stablehlo.case"
        new = self.emit(block, name, [selector], types, stablehlo_attributes(op.attributes), regions, like=op,
                        names=_result_names(result, len(types)))
        return self.repack(block, new, result, op)

    def while_(self, op: Operation, block: Block) -> Optional[Value]:
        """A while over one tuple (HLO's) becomes a while over the tuple's elements."""
        if len(op.operands) != 1 or not isinstance(op.operands[0].type, TupleType):
            self.clone(op, block)
            return None
        result = op.results[0]
        t: TupleType = result.type
        inits = self.elements(block, self.value(op.operands[0]))
        regions = []
        for index, region in enumerate(op.regions):
            body = Block()
            args = [body.add_argument(f"{region.block.arguments[0].name}.{i}", e) for i, e in enumerate(t.types)]
            carried = self.pack(body, args, op, region.block.arguments[0].name)
            cloned = self.block(region.block, [carried])
            for inner in list(cloned.operations):
                body.append(inner)
            drop_dead_tuples(body, self.placeholders)
            if index == 1:
                self.unpack_return(body, t)
            regions.append(Region([body]))
        new = self.emit(block, "stablehlo.while", inits, list(t.types), stablehlo_attributes(op.attributes), regions,
                        like=op, names=_result_names(result, len(t.types)))
        return self.repack(block, new, result, op)

    def unpack_return(self, body: Block, result_type: Type) -> list[Type]:
        """A region returning a tuple returns its elements instead; the result types."""
        term = body.operations[-1]
        if not isinstance(result_type, TupleType) or len(term.operands) != 1:
            return [v.type for v in term.operands]
        body.operations.pop()
        _unuse(term)
        values = self.elements(body, term.operands[0])
        self.emit(body, term.name, values, [], like=term)
        drop_dead_tuples(body, self.placeholders)
        return [v.type for v in values]

    def repack(self, block: Block, new: Operation, result: Value, like: Operation) -> Value:
        if isinstance(result.type, TupleType):
            return self.pack(block, list(new.results), like, result.name)
        return new.results[0]


RULES: dict[str, Callable[[Conversion, Operation, Block], Any]] = {
    "stablehlo.get_tuple_element": Conversion.get_tuple_element,
    "hlo.fusion": Conversion.fusion,
    "hlo.conditional": Conversion.conditional,
    "stablehlo.while": Conversion.while_,
    "hlo.async_start": Conversion.async_start,
    "hlo.async_done": Conversion.async_done,
    "hlo.copy_start": Conversion.copy_start,
    "hlo.copy_done": Conversion.copy_done,
    "hlo.bitcast": Conversion.bitcast,
    "hlo.shuffle": Conversion.shuffle,
}


def _bit_width(t: Type) -> Optional[int]:
    if not isinstance(t, TensorType):
        return None
    try:
        return np.dtype(t.numpy_dtype).itemsize * 8 if t.element != IntegerType(1) else 8
    except (TypeError, ValueError):
        return None


def row_major_layout(shape: Optional[str]) -> bool:
    """Whether an HLO shape's layout orders its elements row-major (no layout written counts as
    the default, row-major one): minor-to-major descending, dimensions of size 1 aside (they do
    not move any element)."""
    if shape is None:
        return True
    match = re.fullmatch(r"[a-z0-9]+\[([^\]]*)\](?:\{([^}]*)\})?", shape.strip())
    if match is None:
        return False
    dims, layout = match.group(1), match.group(2)
    if layout is None:
        return True
    if not re.fullmatch(r"[\d,\s]*", layout) or not re.fullmatch(r"[\d,\s]*", dims):
        return False  # tiles, memory spaces or dynamic dimensions: not a plain order
    sizes = [int(d) for d in dims.split(",") if d.strip()]
    order = [int(d) for d in layout.split(",") if d.strip()]
    moving = [d for d in order if d < len(sizes) and sizes[d] != 1]
    return sorted(order) == list(range(len(sizes))) and moving == sorted(moving, reverse=True)


def drop_dead_tuples(block: Block, placeholders: set[int]) -> None:
    """Remove tuple and get_tuple_element ops nothing reads (after reads were forwarded to the
    elements) and the placeholder constants nothing reads, last first so chains of them go too."""
    for op in reversed(list(block.operations)):
        removable = op.name in ("stablehlo.tuple", "stablehlo.get_tuple_element") or id(op) in placeholders
        if removable and not any(r.uses for r in op.results):
            block.operations.remove(op)
            _unuse(op)


def _unuse(op: Operation) -> None:
    for operand in op.operands:
        operand.uses = [(user, i) for user, i in operand.uses if user is not op]


def _without(attrs: dict, *names: str) -> dict:
    return {k: v for k, v in attrs.items() if k not in names}


def _name(op: Operation) -> str:
    return _display(op.results[0].name) if op.results else op.name


def _display(name: str) -> str:
    """A value's name as the HLO text wrote it (the IR spells it `%name`)."""
    return name.lstrip("%")


def _result_names(result: Value, count: int) -> Optional[list[str]]:
    return [f"{result.name}.{i}" for i in range(count)] if isinstance(result.type, TupleType) else [result.name]


__all__ = ["RULES", "convert_to_stablehlo", "row_major_layout", "stablehlo_attributes", "to_stablehlo"]
