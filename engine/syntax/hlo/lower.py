"""HLO parse tree → IR (the contract in hlo_text.md's companion, _briefs/hlo_contract.md).

The ENTRY computation becomes a public func.func, every computation called as a function (call,
fusion, async-start, custom-call's called_computations) a private one; computations used as
regions (to_apply, condition/body, branches, select/scatter) are cloned into each op using them.
Parameters are block arguments; each other instruction is one op (opcodes.py says which), named
after the instruction, at its position, with its metadata as location and its HLO facts kept as
attributes. Tuple-shaped results of multi-result ops are packed by a `stablehlo.tuple`; a tuple
ENTRY root is returned element by element through implicit get_tuple_element ops.
"""
from __future__ import annotations

from typing import Any, Optional

from ...ir.attributes import UNIT, ArrayAttr, DenseElements, ElidedElements, IntegerAttr, SymbolRef
from ...ir.core import Block, Function, Module, Operation, Region, Value
from ...ir.errors import ParseError
from ...ir.opset import OPS
from ...ir.types import FunctionType, IntegerType, TupleType, Type
from ..frontend import MAX_REGION_NESTING
from . import attr_values, literals
from .adapters import Field, Info
from .async_sugar import desugar_async
from .facts import GENERIC, generic_facts, location, shape_fact
from .forms import (
    implicit,
    implicit_get_tuple_element,
    lower_operands,
    pack_values,
    packed_result_types,
    smallest_first,
    tuple_all_to_all,
)
from .grid_named import grid_named
from .infer_shape import infer_result_type, shape_of_type
from .ir_types import ir_type, ssa_name
from .opcodes import TABLE, Opcode
from .shardy import GRID_FROM_GROUPS, import_shardy
from .tree import HloAttr, HloComputation, HloInstruction, HloModuleText

# The syntax of the attributes adapters other than Field read (a Field's Kind names its own).
DECODERS = {
    "window": "window", "dim_labels": "dim_labels", "feature_group_count": "int",
    "batch_group_count": "int", "operand_precision": "precision_list", "lhs_batch_dims": "int_list",
    "rhs_batch_dims": "int_list", "lhs_contracting_dims": "int_list", "rhs_contracting_dims": "int_list",
    "padding": "padding", "slice": "slice", "direction": "comparison_direction", "type": "comparison_type",
    "replica_groups": "replica_groups", "channel_id": "int", "use_global_device_ids": "bool",
    "dimensions": "int_list", "source_target_pairs": "source_target_pairs",
    "output_to_operand_aliasing": "output_to_operand_aliasing", "index_vector_dim": "int",
    "offset_dims": "int_list", "collapsed_slice_dims": "int_list", "start_index_map": "int_list",
    "operand_batching_dims": "int_list", "start_indices_batching_dims": "int_list",
    "update_window_dims": "int_list", "inserted_window_dims": "int_list",
    "scatter_dims_to_operand_dims": "int_list", "input_batching_dims": "int_list",
    "scatter_indices_batching_dims": "int_list", "lhs_ragged_dims": "int_list", "rhs_group_dims": "int_list",
}
# Attributes whose decoded IR form forgets how XLA wrote them (replica groups as a list, an iota
# `[2,4]<=[8]` or mesh axes): their text is kept in `hlo.spellings` for the printer to give back.
SPELLED = ("replica_groups",)
# Attributes hlodbg does not model that would change what an op computes: refused, not kept.
_CHANGES_VALUES = {
    "sparsity": "(a structured-sparse dot, XLA 2025) changes what the dot computes and hlodbg does not "
                "model it",
}
# Attributes naming one computation, and the one naming several.
_ONE_COMPUTATION = ("to_apply", "calls", "condition", "body", "true_computation", "false_computation",
                    "select", "scatter")
_COMPUTATION_LISTS = ("branch_computations", "called_computations")
# Opcodes whose called computation becomes a function rather than a region.
_FUNCTION_CALLERS = {name: entry.callee[0] for name, entry in TABLE.items() if entry.callee}


_COUNTS = (("replica_count", "mhlo.num_replicas"), ("num_partitions", "mhlo.num_partitions"))


def decode(decoder: str, attr: HloAttr) -> Any:
    """An attribute value through its attr_values decoder (errors come located from there)."""
    return attr_values.decode(attr, decoder)


def lower_module(tree: HloModuleText) -> Module:
    return ModuleLowering(tree).run()


class ModuleLowering:
    def __init__(self, tree: HloModuleText):
        self.tree = tree
        self.module = Module(tree.name or tree.entry.name)
        self.sugar = desugar_async(tree)  # `X-start(...)` → async-start of a wrapped computation
        self.computations = {c.name: c for c in tree.computations}
        self.cloning: list[str] = []  # the computations being cloned into regions, outermost first
        self.by_offset: Optional[dict[int, HloInstruction]] = None  # instruction_of's index

    def run(self) -> Module:
        tree, module = self.tree, self.module
        module.source = tree.source
        module.pos = tree.pos
        module.attributes.update(self.module_attributes())
        called = self.called_as_functions()
        for comp in tree.computations:
            if comp is tree.entry or comp.name in called:
                module.operations.append(self.function(comp, public=comp is tree.entry))
        # Shardy's round-trip form (JAX's sharded programs) → the Shardy IR the StableHLO form has.
        import_shardy(module, self.instruction_of)
        return module

    def instruction_of(self, op: Operation) -> Optional[HloInstruction]:
        """The instruction `op` was lowered from (found by the position of its name)."""
        if self.by_offset is None:
            self.by_offset = {inst.pos.offset: inst for comp in self.tree.computations
                              for inst in comp.instructions if inst.pos is not None}
        return self.by_offset.get(op.pos.offset) if op.pos is not None else None

    def module_attributes(self) -> dict:
        attrs = self.tree.attrs
        out: dict[str, Any] = {"hlo.language": "hlo"}
        for hlo, ir in _COUNTS:
            out[ir] = IntegerAttr(int(decode("int", attrs[hlo])) if hlo in attrs else 1)
        # As XLA's test runner sets the grid a test's module needs (collective_ops_test.cc leaves it
        # out of the text): the counts the header omits come from the collectives' groups, and the
        # printer leaves them out again.
        inferred = [(ir, n) for (hlo, ir), n in zip(_COUNTS, grid_named(self.tree)) if hlo not in attrs and n > 1]
        for ir, n in inferred:
            out[ir] = IntegerAttr(n)
        if inferred:
            out[GRID_FROM_GROUPS] = ArrayAttr(ir for ir, _ in inferred)
        # A count written as 1 stays in the header as written: left out, the printed text would
        # let the groups decide the grid instead.
        header = {k: a.text for k, a in attrs.items()
                  if k not in ("replica_count", "num_partitions") or int(out[dict(_COUNTS)[k]]) == 1}
        out["hlo.header"] = header
        if self.tree.stack_frames is not None and self.tree.stack_frames.text:
            out["hlo.stack_frames"] = self.tree.stack_frames.text
        return out

    def called_as_functions(self) -> set[str]:
        names: set[str] = set()
        for comp in self.tree.computations:
            for inst in comp.instructions:
                attr_name = _FUNCTION_CALLERS.get(inst.opcode)
                if attr_name and attr_name in inst.attrs:
                    names.update(self.computation_names(inst.attrs[attr_name]))
        return names

    def computation_names(self, attr: HloAttr) -> list[str]:
        if attr.name in _COMPUTATION_LISTS:
            names = [str(n) for n in decode("computation_list", attr)]
        else:
            names = [str(decode("computation", attr))]
        for name in names:
            if name not in self.computations:
                raise ParseError(f"no computation named '{name}' (computations must be defined before use)",
                                 attr.pos)
        return names

    # -- functions and regions --------------------------------------------------------------------

    def function(self, comp: HloComputation, public: bool) -> Function:
        block = Block()
        self.body(comp, block, terminator="func.return", flatten_root=public)
        inputs = tuple(a.type for a in block.arguments)
        results = tuple(v.type for v in block.terminator.operands)
        # Like the module, each function says it was written in HLO (for display: what to call its ops).
        attrs: dict[str, Any] = {"sym_name": comp.name, "function_type": FunctionType(inputs, results),
                                 "hlo.language": "hlo"}
        if not public:
            attrs["sym_visibility"] = "private"
        if comp.name in self.sugar.built:  # made from a sugared start: printed inside it, not on its own
            attrs["hlo.async_wrapped"] = UNIT
        if comp.attrs:  # execution_thread="..." after the closing brace
            attrs["hlo.computation_attributes"] = {k: a.text for k, a in comp.attrs.items()}
        arg_attrs = [self.parameter_facts(p) for p in comp.parameters()]
        if public:
            self.add_donations(arg_attrs)
        if any(arg_attrs):
            attrs["arg_attrs"] = ArrayAttr(arg_attrs)
        return Function("func.func", [], [], attrs, [Region([block])], pos=comp.pos)

    def parameter_facts(self, param: HloInstruction) -> dict:
        facts = shape_fact(param.shape)
        facts.update(generic_facts(param.attrs, decode))  # sharding, frontend attributes, metadata
        return facts

    def add_donations(self, arg_attrs: list[dict]) -> None:
        """The header's `input_output_alias` / `buffer_donor` on the entry parameters they donate,
        as JAX's MLIR spells donation (`tf.aliasing_output`, `jax.buffer_donor`), so the memory
        analysis frees a donated buffer after its last use as it does for MLIR programs. Only whole
        parameters (index `{}`) become facts: JAX passes no tuple parameters."""
        attrs = self.tree.attrs
        if "input_output_alias" in attrs:
            for alias in decode("input_output_alias", attrs["input_output_alias"]):
                if not alias.parameter_index and alias.parameter_number < len(arg_attrs):
                    output = alias.output_index[0] if alias.output_index else 0
                    arg_attrs[alias.parameter_number]["tf.aliasing_output"] = IntegerAttr(output, IntegerType(32))
        if "buffer_donor" in attrs:
            for parameter, index in decode("buffer_donor", attrs["buffer_donor"]):
                if not index and parameter < len(arg_attrs):
                    arg_attrs[parameter]["jax.buffer_donor"] = True

    def region(self, comp: HloComputation, unpack_root: bool) -> Region:
        """A copy of the computation as an op's region (each use gets its own)."""
        if comp.name in self.cloning:
            chain = " -> ".join([*self.cloning, comp.name])
            raise ParseError(f"computation '{comp.name}' uses itself as a region ({chain})", comp.pos)
        if len(self.cloning) >= MAX_REGION_NESTING:
            raise ParseError(f"computation '{comp.name}' would be a region nested more than {MAX_REGION_NESTING} "
                             f"deep (used as a body by {self.cloning[-1]}, itself one {len(self.cloning)} deep); "
                             f"hlodbg reads programs whose regions nest at most that deep", comp.pos)
        self.cloning.append(comp.name)
        try:
            block = Block()
            self.body(comp, block, terminator="stablehlo.return", flatten_root=unpack_root)
        finally:
            self.cloning.pop()
        return Region([block])

    def body(self, comp: HloComputation, block: Block, terminator: str, flatten_root: bool) -> Value:
        """Fill `block` with the computation; the terminator returns the root (its tuple elements
        when `flatten_root`). Returns the root value."""
        env: dict[str, Value] = {}
        params = comp.parameters()
        for index, param in enumerate(params):
            if param.shape is None:
                raise ParseError(f"parameter '{param.name}' has no shape: a parameter's shape must be written",
                                 param.opcode_pos)
            if (param.literal or "").strip() != str(index):
                raise ParseError(f"computation '{comp.name}' has no parameter({index}); parameter numbers "
                                 f"must run 0..{len(params) - 1}", param.pos)
            value = block.add_argument(ssa_name(param.name), ir_type(param.shape, param.pos), param.pos)
            if "metadata" in param.attrs:
                value.location = location(decode("metadata", param.attrs["metadata"]), self.tree.stack_frames)
            env[param.name] = value
        for inst in comp.instructions:
            if inst.opcode == "parameter":
                continue
            if inst.name in env:
                raise ParseError(f"instruction name '{inst.name}' is defined twice in '{comp.name}'", inst.pos)
            env[inst.name] = InstructionLowering(self, inst, env, block).run()
        root = env[comp.root.name]
        returned = [root]
        if flatten_root and isinstance(root.type, TupleType):
            built = root.defining_op
            if built is not None and built.name == "stablehlo.tuple" and built.parent is block:
                # A ROOT tuple instruction: return what it was built from (no reads to step through).
                returned = list(built.operands)
            else:
                returned = [implicit_get_tuple_element(block, root, i, comp.root.pos)
                            for i in range(len(root.type.types))]
        block.append(Operation(terminator, returned, [], pos=comp.root.pos))
        return root


class InstructionLowering:
    """One instruction → its op(s) appended to the block; `run()` returns the instruction's value."""

    def __init__(self, module: ModuleLowering, inst: HloInstruction, env: dict[str, Value], block: Block):
        self.module = module
        self.inst = inst
        self.env = env
        self.block = block

    def run(self) -> Value:
        inst = self.inst
        entry = TABLE.get(inst.opcode)
        if entry is None:
            raise ParseError(f"unknown HLO opcode '{inst.opcode}'", inst.opcode_pos)
        if entry.op not in OPS:  # an opcode of XLA's newest text that hlodbg has no op for yet
            raise ParseError(f"HLO opcode '{inst.opcode}' is not supported by hlodbg: no {entry.op} op is "
                             f"defined (it appeared in XLA after the versions JAX prints)", inst.opcode_pos)
        operands = [self.operand(o) for o in inst.operands]
        result_type = ir_type(inst.shape, inst.pos) if inst.shape is not None else None
        info = Info([v.type for v in operands], result_type, self.group_size())
        attributes = self.attributes(entry, info)
        regions, names = self.regions(entry)
        if inst.shape is None:  # XLA's parser infers some opcodes' shapes: so does hlodbg
            result_type = infer_result_type(inst.opcode, inst.name, operands, attributes, regions,
                                            self.callee_result(entry), inst.opcode_pos)
            inst.shape = shape_of_type(result_type, inst.pos)
        attributes.update(self.facts(entry))
        if entry.op == "stablehlo.custom_call":
            attributes["backend_config"] = self.backend_config(attributes)
            attributes.setdefault("called_computations", ArrayAttr())
        if names:
            attributes["hlo.computations"] = ArrayAttr(names)
        if entry.callee:
            attributes.update(self.callee(entry))
        if entry.marker:
            attributes["hlo.opcode"] = entry.marker
        if id(inst) in self.module.sugar.wrapped:
            attributes["hlo.async_sugar"] = self.module.sugar.wrapped[id(inst)]
        if entry.op == "stablehlo.constant" and isinstance(result_type, TupleType):
            return self.tuple_constant(result_type, attributes)
        if entry.op == "stablehlo.constant":
            attributes["value"] = self.constant_value(result_type)
        if entry.operands == "all_to_all" and "dimensions" not in self.inst.attrs:
            return tuple_all_to_all(self, entry, operands, attributes, result_type,
                                    location(self.metadata(), self.module.tree.stack_frames))
        operands = lower_operands(self, entry, operands, attributes)
        pack = entry.results in ("pack", "async_pack") and isinstance(result_type, TupleType)
        result_types = packed_result_types(entry, result_type, len(inst.operands)) if pack else [result_type]
        meta = self.metadata()
        op = Operation(entry.op, operands, result_types, attributes, regions, location(meta, self.module.tree.stack_frames),
                       inst.pos, result_names=self.result_names(len(result_types), pack))
        self.block.append(op)
        if pack:
            return self.pack(entry, op, result_type, operands)
        return op.results[0]

    # -- operands ---------------------------------------------------------------------------------

    def operand(self, ref) -> Value:
        value = self.env.get(ref.name)
        if value is None:
            raise ParseError(f"'{self.inst.name}' uses '{ref.name}', which is not defined before it in this "
                             f"computation", ref.pos)
        if ref.shape is not None:
            written = ir_type(ref.shape, ref.pos)
            if written != value.type:
                raise ParseError(f"operand '{ref.name}' is written with shape {ref.shape.text(False)}, but "
                                 f"'{ref.name}' has type {value.type}", ref.pos)
        return value

    def group_size(self) -> Optional[int]:
        """A collective's group size: its first replica group's, or every process when empty."""
        attr = self.inst.attrs.get("replica_groups")
        groups = decode("replica_groups", attr) if attr is not None else []
        if groups:
            return len(groups[0])
        module = self.module.module
        return module.num_partitions if "channel_id" in self.inst.attrs else module.num_replicas

    # -- attributes -------------------------------------------------------------------------------

    def attributes(self, entry: Opcode, info: Info) -> dict:
        inst = self.inst
        out: dict[str, Any] = {}
        for adapter in entry.adapters:
            values = {}
            for name in adapter.consumes:
                attr = inst.attrs.get(name)
                if attr is None:
                    continue
                decoder = adapter.kind.decoder if isinstance(adapter, Field) else DECODERS[name]
                values[name] = decode(decoder, attr)
            try:
                out.update(adapter.lower(values, info))
            except (ValueError, KeyError, TypeError, IndexError) as e:
                where = next((inst.attrs[n].pos for n in adapter.consumes if n in inst.attrs), inst.pos)
                what = ", ".join(adapter.consumes)
                message = e.args[0] if isinstance(e, ValueError) and e.args else f"unexpected value {e}"
                raise ParseError(f"{inst.opcode} '{inst.name}': bad {what}: {message}", where) from None
        return out

    def facts(self, entry: Opcode) -> dict:
        """The HLO facts (generic attributes, shape) and every attribute nobody consumed."""
        inst = self.inst
        out = shape_fact(inst.shape)
        out.update(generic_facts(inst.attrs, decode))
        consumed = set(entry.consumes) | set(GENERIC)
        extra = {name: a.text for name, a in inst.attrs.items() if name not in consumed}
        for name in extra:
            if name in _CHANGES_VALUES:
                raise ParseError(f"{inst.opcode} '{inst.name}': {name}= {_CHANGES_VALUES[name]}", inst.attrs[name].pos)
        if extra:
            out["hlo.extra"] = extra
        spellings = {name: inst.attrs[name].text for name in SPELLED if name in inst.attrs}
        if spellings:
            out["hlo.spellings"] = spellings
        return out

    def backend_config(self, attributes: dict) -> Any:
        """custom_call's backend_config: a string, or for the typed FFI (api_version 4) the MLIR
        attribute dictionary XLA prints (`{mode = 86 : ui8}`), read by the MLIR attribute reader
        in place, so its errors point into this file."""
        attr = self.inst.attrs.get("backend_config")
        if attr is None:
            return {} if int(attributes.get("api_version", 0)) == 4 else ""
        typed = int(attributes.get("api_version", 0)) == 4
        if typed and attr.text.lstrip().startswith("{"):
            from ..mlir.value_parser import ValueParser

            reader = ValueParser(attr.pos.source.text, attr.pos.source.name)
            reader.pos = attr.pos.offset
            return reader.parse_attr_dict()
        text = str(decode("backend_config", attr))
        if typed and text.lstrip().startswith("{") and "\\" not in attr.text:
            # XLA's custom_call tests also quote the dictionary (`backend_config="{value = 2 : i32}"`):
            # read it in place, inside the quotes.
            from ..mlir.value_parser import ValueParser

            reader = ValueParser(attr.pos.source.text, attr.pos.source.name)
            reader.pos = attr.pos.offset + attr.text.index('"') + 1
            return reader.parse_attr_dict()
        return text

    def metadata(self) -> Optional[dict]:
        attr = self.inst.attrs.get("metadata")
        return decode("metadata", attr) if attr is not None else None

    def result_names(self, count: int, pack: bool) -> list[str]:
        """The instruction's name; for packed results `%name#i` (ssa_name)."""
        if not pack:
            return [ssa_name(self.inst.name)]
        return [ssa_name(self.inst.name, i) for i in range(count)]

    # -- called computations ------------------------------------------------------------------------

    def regions(self, entry: Opcode) -> tuple[list[Region], list[str]]:
        regions, names = [], []
        unpack = entry.results == "pack"
        for attr_name in entry.regions:
            attr = self.inst.attrs.get(attr_name)
            if attr is None:
                continue
            for name in self.module.computation_names(attr):
                comp = self.module.computations[name]
                regions.append(self.module.region(comp, unpack))  # body() unpacks tuple roots only
                names.append(name)
        return regions, names

    def callee_result(self, entry: Opcode) -> Optional[Type]:
        """The result type of the function a call names (lowered before its callers)."""
        attr = self.inst.attrs.get(entry.callee[0]) if entry.callee else None
        if attr is None or attr.name in _COMPUTATION_LISTS:
            return None
        function = self.module.module.functions.get(self.module.computation_names(attr)[0])
        return function.function_type.results[0] if function is not None and function.function_type.results else None

    def callee(self, entry: Opcode) -> dict:
        hlo_name, ir_name = entry.callee
        attr = self.inst.attrs.get(hlo_name)
        if attr is None:
            if ir_name == "called_computations":
                return {}
            raise ParseError(f"{self.inst.opcode} '{self.inst.name}' needs {hlo_name}=<computation>", self.inst.pos)
        names = self.module.computation_names(attr)
        if ir_name == "called_computations":
            return {ir_name: ArrayAttr(SymbolRef(n) for n in names)}
        return {ir_name: SymbolRef(names[0])}

    # -- constants and packed results ---------------------------------------------------------------

    def constant_value(self, result_type: Type):
        inst = self.inst
        if inst.literal is None:
            raise ParseError(f"constant '{inst.name}' has no literal", inst.pos)
        value = literals.parse_literal(inst.literal, inst.literal_pos or inst.pos, inst.shape)
        return self.elements(result_type, value)

    def elements(self, result_type: Type, value) -> DenseElements:
        inst = self.inst
        if isinstance(value, literals.ElidedLiteral):
            return ElidedElements(result_type, inst.literal_pos or inst.pos, ssa_name(inst.name))
        return DenseElements(result_type, value)

    def tuple_constant(self, result_type: TupleType, attributes: dict) -> Value:
        """A tuple-shaped constant (custom_call_test.cc's `(f32[], f32[]) constant((7, 42))`): an
        implicit constant per array, nested tuples, and the outer tuple standing for the
        instruction, which keeps the literal's text to print it back as one constant."""
        inst = self.inst
        if inst.literal is None:
            raise ParseError(f"constant '{inst.name}' has no literal", inst.pos)
        value = literals.parse_literal(inst.literal, inst.literal_pos or inst.pos, inst.shape)
        counter = iter(range(1 << 30))

        def build(t: Type, v, outer: bool) -> Value:
            if not isinstance(t, TupleType):
                return implicit(self, "stablehlo.constant", [], t, {"value": self.elements(t, v)}, f"c{next(counter)}")
            parts = [build(e, v if isinstance(v, literals.ElidedLiteral) else v[i], False)
                     for i, e in enumerate(t.types)]
            if not outer:
                return implicit(self, "stablehlo.tuple", parts, t, {}, f"t{next(counter)}")
            op = Operation("stablehlo.tuple", parts, [t], {**attributes, "hlo.literal": inst.literal},
                           location=location(self.metadata(), self.module.tree.stack_frames), pos=inst.pos,
                           result_names=[ssa_name(inst.name)])
            self.block.append(op)
            return op.results[0]

        return build(result_type, value, True)

    def pack(self, entry: Opcode, op: Operation, result_type: TupleType, operands: list[Value]) -> Value:
        results = smallest_first(self, op) if entry.operands == "topk" and not op.attr("largest", True) else None
        return pack_values(self, entry, op, result_type, operands, results)


__all__ = ["DECODERS", "ModuleLowering", "decode", "lower_module"]
