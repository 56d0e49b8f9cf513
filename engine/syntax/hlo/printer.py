"""IR → XLA HLO text, in XLA's printing (hlo_text.md §1, §3): the inverse of lower.py.

The default is XLA's long form (`HloPrintOptions::Default()`, what `--xla_dump_to` and
`compile().as_text()` write): `HloModule name, header`, the stack-frame tables, computations
callees first with `%` names and signatures, `ENTRY` last, `ROOT` on each root, shapes with their
layouts, every attribute in XLA's syntax, and the HLO facts the lowering kept (metadata,
backend_config, sharding, frontend_attributes, control-predecessors, unconsumed attributes).
`short=True` is XLA's ShortParsable form: no `%`, no signatures, no metadata, no
control-predecessors.

The opcode table (opcodes.py) says which opcode an IR op prints as and raises its attributes; the
printer adds what the table leaves to it: operands, called computations, the generic facts, and the
contract's folds — a `stablehlo.tuple` marked `hlo.packs_results` prints as the one instruction whose
results it packs, ops marked `hlo.implicit` are not printed (an operand they made stands for the
value they came from), and a computation cloned into several ops' regions prints once, by the name
in the op's `hlo.computations`.

A module from the MLIR frontend prints too when its ops have HLO spellings; the first op without
one is a located error naming it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

from ...ir.attributes import ArrayAttr, SymbolRef
from ...ir.core import Block, Function, Module, Operation, Value
from ...ir.errors import HlodbgError
from ...ir.types import IntegerType, TupleType, element_type
from ...ir.walks import callees_first
from .ir_types import hlo_shape_text
from .literal_text import literal_text
from .opcodes import Opcode, opcode_of, raise_attributes
from .print_facts import MANUAL, argument_facts, is_implicit, pack_source, xla_shape_of
from .print_metadata import FrameIndex, stack_frame_tables
from .print_text import (
    frontend_attributes_text,
    hlo_name,
    indexed,
    indexed_shape,
    quoted,
    same_value,
    strip_layouts,
    tuple_element_texts,
    xla_order,
)
from .shardy import GRID_FROM_GROUPS, GRID_FROM_MESHES

# The header attributes the IR keeps as module attributes rather than in `hlo.header`.
_COUNTS = (("mhlo.num_replicas", "replica_count"), ("mhlo.num_partitions", "num_partitions"))
_TERMINATORS = ("func.return", "stablehlo.return", "sdy.return")
# Module-level ops whose HLO spelling is a header attribute (Shardy's meshes: frontend_attributes).
_IN_HEADER = ("sdy.mesh",)


class HloPrintError(HlodbgError):
    """An IR op or value that HLO text cannot spell."""


def print_module(module: Module, short: bool = False) -> str:
    return ModulePrinter(module, short).run()


@dataclass
class Computation:
    """One HLO computation to print: a function's body or a region cloned from it."""

    name: str
    block: Block
    is_entry: bool = False
    offset: Optional[int] = None  # where the text had it, to keep the text's order
    calls: list[str] = field(default_factory=list)
    attributes: dict = field(default_factory=dict)  # after the closing brace (execution_thread)
    in_sugar: bool = False  # built from a sugared async start, which prints it (async_sugar.py)


class ModulePrinter:
    def __init__(self, module: Module, short: bool):
        self.module = module
        self.short = short
        self.region_names: dict[int, str] = {}  # id(Region) -> its computation's name
        self.tuple_parameters: set[str] = set()  # regions of whiles over several values (from MLIR)
        self.frames = FrameIndex(stack_frame_tables(module.attributes.get("hlo.stack_frames")))
        self.computations: dict[str, Computation] = {}

    def run(self) -> str:
        check_spellable(self.module)
        self.collect()
        text = self.header() + "\n"
        frames = str(self.module.attributes.get("hlo.stack_frames") or "")
        if frames and not self.short:
            # Given back as written, followed by two blank lines as XLA prints it.
            text += frames.rstrip("\n") + "\n\n\n"
        # Each computation is followed by a blank line, the last one too (as XLA prints them).
        return text + "".join(ComputationPrinter(self, comp).run() + "\n" for comp in self.ordered()
                              if not comp.in_sugar)

    # -- the module header --------------------------------------------------------------------------

    def header(self) -> str:
        attrs = self.module.attributes
        items = [f"{k}={v}" for k, v in dict(attrs.get("hlo.header") or {}).items()]
        implied = self.grid_implied()
        counts = [f"{hlo}={int(attrs[ir])}" for ir, hlo in _COUNTS if int(attrs.get(ir, 1)) != 1 and ir not in implied]
        # XLA prints the replica and partition counts just before the frontend attributes.
        at = next((i for i, item in enumerate(items) if item.startswith("frontend_attributes=")), len(items))
        items[at:at] = counts
        name = self.module.name or (self.module.entry.sym_name if self.module.entry else "module")
        return "HloModule " + ", ".join([hlo_name(name)] + items) + "\n"

    def grid_implied(self) -> set[str]:
        """The counts the lowering read from elsewhere than the header, which XLA's text leaves
        out: "mhlo.num_partitions" from a shard_map program's meshes (JAX's pre-optimization text),
        "mhlo.num_replicas" from the collectives' replica groups."""
        attrs = self.module.attributes
        from_groups = {str(name) for name in attrs.get(GRID_FROM_GROUPS) or ()}
        return ({"mhlo.num_partitions"} if GRID_FROM_MESHES in attrs else set()) | from_groups

    # -- which computations, in which order ---------------------------------------------------------

    def collect(self) -> None:
        entry = self.module.entry
        for op in self.module.operations:
            if isinstance(op, Function) and not op.is_declaration:
                offset = op.pos.offset if op.pos is not None else None
                self.add(Computation(op.sym_name, op.body, op is entry, offset,
                                     attributes=dict(op.attributes.get("hlo.computation_attributes") or {}),
                                     in_sugar="hlo.async_wrapped" in op.attributes))
            elif op.name in _IN_HEADER and "frontend_attributes" in dict(self.module.attributes.get("hlo.header") or {}):
                continue
            elif not isinstance(op, Function):
                raise HloPrintError(f"'{op.name}' at the module's top level has no HLO spelling (HLO "
                                    f"modules hold computations only)", op.pos)

    def add(self, comp: Computation) -> None:
        if comp.name in self.computations:
            return
        self.computations[comp.name] = comp
        for op in comp.block.operations:
            for region, name in zip(op.regions, self.names_of_regions(op)):
                self.region_names[id(region)] = name
                if op.name == "stablehlo.while" and len(op.operands) != 1:
                    self.tuple_parameters.add(name)
                if name not in self.computations:
                    first = region.block.operations[0] if region.block.operations else None
                    offset = first.pos.offset if first is not None and first.pos is not None else None
                    args = region.block.arguments
                    if args and args[0].pos is not None:
                        offset = min(offset, args[0].pos.offset) if offset is not None else args[0].pos.offset
                    self.add(Computation(name, region.block, False, offset))
                comp.calls.append(name)
            for ref in _callees(op):
                comp.calls.append(ref)

    def names_of_regions(self, op: Operation) -> list[str]:
        """The computation names of an op's regions: `hlo.computations` as the lowering kept them,
        else (a module from MLIR) fresh names."""
        names = [str(n) for n in op.attributes.get("hlo.computations") or ()]
        while len(names) < len(op.regions):
            names.append(f"region_{len(self.region_names) + len(names)}")
        return names

    def ordered(self) -> list[Computation]:
        """Callees before callers (XLA's parser resolves names backwards), otherwise in the text's
        order; the entry last."""
        inf = float("inf")
        by_text = sorted(self.computations.values(), key=lambda c: (c.is_entry, inf if c.offset is None else c.offset))
        out: list[Computation] = []
        done: set[str] = set()

        def callees(comp: Computation) -> Iterator[Computation]:
            for name in comp.calls:
                callee = self.computations.get(name)
                if callee is None:
                    raise HloPrintError(f"computation '{comp.name}' calls '{name}', which the module does not define")
                yield callee

        def recursive(path: list[Computation], callee: Computation) -> None:
            raise HloPrintError(f"computation '{callee.name}' calls itself; HLO computations cannot recurse")

        for root in by_text:
            out.extend(callees_first(root, callees, lambda c: c.name, recursive, done))
        return out

    def name_prefix(self) -> str:
        return "" if self.short else "%"


def check_spellable(module: Module) -> None:
    """The first op HLO text cannot spell (a module from MLIR may have them), as a located error."""
    for op in module.walk():
        if isinstance(op, Function) or op.name in _TERMINATORS or op.name in _IN_HEADER or is_implicit(op):
            continue
        op = pack_source(op) or op  # a packing tuple prints as the instruction it packs
        if MANUAL in op.attributes:
            continue
        entry = opcode_of(op.name, op.attributes.get("hlo.opcode"))
        if entry is None:
            raise HloPrintError(f"'{op.name}' has no HLO opcode, so the module cannot be printed as HLO text",
                                op.pos)


def _callees(op: Operation) -> list[str]:
    """The functions an op calls by symbol (call, fusion, async-start, custom-call)."""
    out = []
    for value in op.attributes.values():
        refs = value if isinstance(value, ArrayAttr) else (value,)
        out.extend(r.name for r in refs if isinstance(r, SymbolRef))
    return out


class ComputationPrinter:
    """One computation: `[ENTRY] %name (params) -> shape {`, its instructions, `}`."""

    def __init__(self, module: ModulePrinter, comp: Computation):
        self.module = module
        self.comp = comp
        self.pct = module.name_prefix()
        self.names: dict[int, str] = {}  # id(Value) -> its instruction's name
        self.taken: set[str] = set()

    def run(self) -> str:
        block = self.comp.block
        root = self.root_value()
        for arg in block.arguments:
            self.name_value(arg)
        lines = []
        # Parameters go where the text had them (an instruction may not use one written after it).
        params = sorted(enumerate(block.arguments), key=lambda p: -1 if p[1].pos is None else p[1].pos.offset)
        if self.comp.name in self.module.tuple_parameters:
            lines, params = self.tuple_parameter_lines(), []
        for op in block.operations:
            if op.name in _TERMINATORS:
                continue
            if is_implicit(op) or self.is_packed(op):
                continue
            # Parameters written inside an instruction (XLA's nested operands) come before it too.
            used = {id(v) for v in self.operands_of(pack_source(op) or op)}
            while params and (_before(params[0][1], op) or any(id(a) in used for _, a in params)):
                lines.append(self.parameter_line(*params.pop(0), root))
            source = pack_source(op)
            if source is not None and MANUAL in source.attributes:
                lines.extend(self.manual_computation_lines(op, source, root))
            elif MANUAL in op.attributes:  # a shard_map of one result or none: nothing packs them
                lines.extend(self.manual_computation_lines(op, op, root))
            else:
                lines.extend(self.instruction_lines(op, root))
        lines[len(lines):] = [self.parameter_line(i, a, root) for i, a in params]
        if self.root_operands is not None:
            name = self.fresh("tuple")
            lines.append(f"ROOT {self.pct}{name} = {self.synthesized_shape} tuple({self.operand_list(self.root_operands)})")
        after = "".join(f", {k}={v}" for k, v in self.comp.attributes.items())
        return self.signature(root) + " {\n" + "".join("  " + line + "\n" for line in lines) + "}" + after + "\n"

    # -- the root ------------------------------------------------------------------------------------

    root_operands: Optional[list[Value]] = None  # several results returned without a tuple
    tuple_parameter: Optional[str] = None  # the one parameter standing for the block arguments

    def tuple_parameter_lines(self) -> list[str]:
        """A region of a while over several values (from MLIR) as HLO's one-tuple computation:
        the tuple parameter, and a get-tuple-element for each block argument."""
        args = self.comp.block.arguments
        self.tuple_parameter = self.fresh("param")
        shape = "(" + ", ".join(self.shape_of(a) for a in args) + ")"
        lines = [f"{self.pct}{self.tuple_parameter} = {shape} parameter(0)"]
        return lines + self.element_lines(self.tuple_parameter, shape, [self.names[id(a)] for a in args], None,
                                          fresh=False)

    synthesized_shape = ""

    def root_value(self) -> Optional[Value]:
        """The value the computation returns: the terminator's operand, the tuple behind the
        implicit get_tuple_elements of an ENTRY, or (several plain results, from MLIR) a tuple
        instruction made for them."""
        term = self.comp.block.terminator
        if term is None or term.name not in _TERMINATORS:
            raise HloPrintError(f"computation '{self.comp.name}' has no return", term.pos if term else None)
        values = list(term.operands)
        last = next((op for op in reversed(self.comp.block.operations[:-1]) if not is_implicit(op)), None)
        if not values:  # an ENTRY whose root is an empty tuple returns nothing: the root is that tuple
            if last is not None and len(last.results) == 1 and last.results[0].type == TupleType(()):
                return last.results[0]
        if (len(values) == 1 and last is not None and last.name == "stablehlo.tuple"
                and list(last.operands) == values):
            return last.results[0]  # an ENTRY whose root is a one-element tuple returns its element
        if len(values) == 1 and not is_implicit(values[0].defining_op):
            return values[0]
        root_tuple = self.tuple_built_from(values)
        if root_tuple is not None:
            return root_tuple
        sources = {id(v.defining_op.operands[0]) for v in values if is_implicit(v.defining_op)
                   and v.defining_op.name == "stablehlo.get_tuple_element"}
        if values and len(sources) == 1 and all(is_implicit(v.defining_op) for v in values):
            return values[0].defining_op.operands[0]
        # Several results and no tuple: the instruction XLA would have, a tuple of them.
        self.root_operands = values
        self.synthesized_shape = "(" + ", ".join(self.shape_of(v) for v in values) + ")"
        return None

    def tuple_built_from(self, values: list[Value]) -> Optional[Value]:
        """The last tuple of the block built from exactly `values`, in order: the ROOT tuple
        instruction whose elements an ENTRY (or an unpacking region) returns directly."""
        for op in reversed(self.comp.block.operations[:-1]):
            if op.name == "stablehlo.tuple" and not is_implicit(op) and list(op.operands) == values:
                return op.results[0]
        return None

    def signature(self, root: Optional[Value]) -> str:
        entry = "ENTRY " if self.comp.is_entry else ""
        if self.module.short:
            return f"{entry}{self.comp.name}"
        params = ", ".join(f"{self.names[id(a)]}: {indexed_shape(_logical(a.type))}" for a in self.comp.block.arguments)
        if self.tuple_parameter is not None:
            types = ", ".join(_logical(a.type) for a in self.comp.block.arguments)
            params = f"{self.tuple_parameter}: ({types})"
        result = indexed_shape(_logical(root.type) if root is not None else strip_layouts(self.synthesized_shape))
        return f"{entry}%{self.comp.name} ({params}) -> {result}"

    # -- names and shapes ----------------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        name, n = hlo_name(base), 1
        while name in self.taken:
            name, n = f"{hlo_name(base)}.{n}", n + 1
        self.taken.add(name)
        return name

    def name_value(self, value: Value) -> str:
        key = id(value)
        if key not in self.names:
            self.names[key] = self.fresh(value.name or "v")
        return self.names[key]

    def ref(self, value: Value) -> str:
        if id(value) not in self.names:
            op = value.defining_op
            raise HloPrintError(f"'{value.name}' is used in computation '{self.comp.name}' but not defined before "
                                f"it there (HLO computations cannot use values from outside them)",
                                op.pos if op is not None else value.pos)
        return self.pct + self.names[id(value)]

    def shape_of(self, value: Value, facts: Optional[dict] = None) -> str:
        """The value's shape as XLA prints it: with its layout when the text gave one, and the
        elements of long tuples counted by `/*index=5*/` comments."""
        shape = (facts or {}).get("xla_shape")
        if shape is None and value.is_block_argument:
            shape = xla_shape_of(value)
        if shape is not None:
            return indexed_shape(str(shape))
        try:
            return indexed_shape(hlo_shape_text(value.type))
        except ValueError as e:
            op = value.defining_op
            raise HloPrintError(f"'{value.name}' has {e}", op.pos if op is not None else value.pos) from None

    def arg_facts(self, arg: Value) -> dict:
        return argument_facts(arg)

    # -- lines -------------------------------------------------------------------------------------

    def is_packed(self, op: Operation) -> bool:
        """Whether `op` prints as part of the instruction its results are packed into."""
        if self.packed is None:
            self.packed = {id(pack_source(o)) for o in self.comp.block.operations if "hlo.packs_results" in o.attributes}
        return id(op) in self.packed

    packed: Optional[set[int]] = None

    def parameter_line(self, index: int, arg: Value, root: Optional[Value]) -> str:
        prefix = "ROOT " if arg is root else ""
        line = f"{prefix}{self.pct}{self.names[id(arg)]} = {self.shape_of(arg)} parameter({index})"
        return line + "".join(f", {k}={v}" for k, v in self.generic_attributes(self.arg_facts(arg), arg.location))

    def instruction_lines(self, op: Operation, root: Optional[Value]) -> list[str]:
        source = pack_source(op)
        facts_op = source if source is not None else op
        # A tuple-shaped constant is lowered to a tuple of constants that keeps the literal's text.
        literal = facts_op.attributes.get("hlo.literal")
        entry = opcode_of("stablehlo.constant") if literal is not None else \
            opcode_of(facts_op.name, facts_op.attributes.get("hlo.opcode"))
        if entry is None:
            raise HloPrintError(f"'{facts_op.name}' has no HLO opcode (HLO text cannot spell it)", facts_op.pos)
        lines: list[str] = []
        operands = self.operands_of(facts_op)
        if entry.hlo == "while" and len(operands) != 1:  # a while over several values (from MLIR)
            carried = self.fresh("tuple")
            shapes = ", ".join(self.shape_of(v) for v in operands)
            lines.append(f"{self.pct}{carried} = ({shapes}) tuple({self.operand_list(operands)})")
            body = self.pct + carried
        elif entry.hlo == "constant":
            body = str(literal) if literal is not None else literal_text(facts_op.attributes["value"])
        else:
            body = self.operand_list(operands)
        attrs = "".join(f", {k}={v}" for k, v in self.attributes(facts_op, entry))
        if source is None and len(op.results) != 1:
            return lines + self.unpacked_result_lines(op, entry, body, attrs)
        value = op.results[0]
        prefix = "ROOT " if value is root else ""
        shape = self.shape_of(value, facts_op.attributes)
        opcode = entry.hlo
        if "hlo.async_sugar" in facts_op.attributes:  # `exponential-start` for async-start, ...
            opcode = str(facts_op.attributes["hlo.async_sugar"]) + entry.hlo.removeprefix("async")
        return lines + [f"{prefix}{self.pct}{self.name_value(value)} = {shape} {opcode}({body}){attrs}"]

    def unpacked_result_lines(self, op: Operation, entry: Opcode, body: str, attrs: str) -> list[str]:
        """An op with no or several results (from MLIR) as HLO's one tuple-shaped instruction and a
        get-tuple-element for each result."""
        bases = {r.name.split("#")[0] for r in op.results if r.name}
        name = self.fresh(bases.pop() if len(bases) == 1 else entry.hlo)
        shape = "(" + ", ".join(self.shape_of(r) for r in op.results) + ")"
        names = [self.name_value(r) for r in op.results]
        return [f"{self.pct}{name} = {shape} {entry.hlo}({body}){attrs}"] + self.element_lines(
            name, shape, names, None, fresh=False)

    def manual_computation_lines(self, packed: Operation, op: Operation, root: Optional[Value]) -> list[str]:
        """A shard_map's sdy.manual_computation as XLA writes it: the GlobalToLocalShape custom call,
        the call of the body, the LocalToGlobalShape custom call, and the get-tuple-elements between
        them (lower.py keeps their names, shapes and attributes as written)."""
        record = dict(op.attributes[MANUAL])
        pct = self.pct
        body = self.module.region_names[id(op.regions[0])]
        lines, reads = [], ""
        if record["enter"]:  # a shard_map without operands has no GlobalToLocalShape
            enter = self.fresh(str(record["enter"]))
            lines.append(f"{pct}{enter} = {record['enter_shape']} custom-call({self.operand_list(op.operands)})"
                         + self.written_attributes(record["enter_attributes"]))
            lines += self.element_lines(enter, str(record["enter_shape"]), record["enter_reads"],
                                        record.get("enter_read_attributes"))
            # One local value is the custom call's own result; several are read out of its tuple.
            reads = ", ".join(pct + hlo_name(str(n)) for n in record["enter_reads"]) or pct + enter
        call = self.fresh(str(record["call"]))
        written = str(dict(record["call_attributes"]).get("to_apply", ""))
        # The body as written (`%` or not) unless the short form or a renamed body says otherwise.
        to_apply = written if written.lstrip("%") == body and not self.module.short else pct + body
        lines.append(f"{pct}{call} = {record['call_shape']} call({reads})"
                     + self.written_attributes(record["call_attributes"], {"to_apply": to_apply}))
        lines += self.element_lines(call, str(record["call_shape"]), record["call_reads"],
                                    record.get("call_read_attributes"))
        if not packed.results:  # a shard_map without results has no LocalToGlobalShape
            return lines
        value = packed.results[0]
        prefix = "ROOT " if value is root else ""
        results = ", ".join(pct + hlo_name(str(n)) for n in record["call_reads"]) or pct + call
        lines.append(f"{prefix}{pct}{self.name_value(value)} = {self.shape_of(value, op.attributes)} "
                     f"custom-call({results})" + self.written_attributes(record["exit_attributes"]))
        return lines

    def element_lines(self, tuple_name: str, shape: str, names, attributes, fresh: bool = True) -> list[str]:
        shapes = tuple_element_texts(shape)
        attributes = list(attributes or ({},) * len(names))
        return [f"{self.pct}{self.fresh(str(n)) if fresh else n} = {indexed_shape(shapes[i])} "
                f"get-tuple-element({self.pct}{tuple_name}), index={i}"
                + self.written_attributes(attributes[i]) for i, n in enumerate(names)]

    def written_attributes(self, attrs, replace: Optional[dict] = None) -> str:
        """Attributes kept as written; the short form leaves out what XLA's leaves out."""
        hidden = ("metadata", "control-predecessors") if self.module.short else ()
        replace = replace or {}
        return "".join(f", {k}={replace.get(k, v)}" for k, v in dict(attrs).items() if k not in hidden)

    def operands_of(self, op: Operation) -> list[Value]:
        """The instruction's operands: an operand an implicit op made stands for the values that op
        came from (the legacy index vector, the outfeed tuple, the stacked all-to-all operands);
        implicit constants (rng's shape) were never HLO operands."""
        out: list[Value] = []
        for operand in op.operands:
            origins = self.origins(operand)
            if is_implicit(operand.defining_op) and out and origins and origins[0] is out[-1]:
                origins = origins[1:]
            out.extend(origins)
        return out

    def origins(self, value: Value) -> list[Value]:
        op = value.defining_op
        if not is_implicit(op):
            return [value]
        out: list[Value] = []
        for operand in op.operands:
            for origin in self.origins(operand):
                if not out or out[-1] is not origin:
                    out.append(origin)
        return out

    def operand_list(self, values: list[Value]) -> str:
        refs = [self.ref(v) for v in values]
        return ", ".join(refs) if self.module.short else indexed(refs)  # XLA counts operands in its long form

    # -- attributes --------------------------------------------------------------------------------

    def attributes(self, op: Operation, entry: Opcode) -> list[tuple[str, str]]:
        """XLA's order: the opcode's own attributes, the called computations, then the generic
        ones (sharding, frontend_attributes, control-predecessors, the rest as written), metadata
        and backend_config."""
        raised = xla_order(entry.hlo, raise_attributes(op))
        for name, text in dict(op.attributes.get("hlo.spellings") or {}).items():
            if name in raised and same_value(name, raised[name], str(text)):
                raised[name] = str(text)
        wrapped = self.sugared_wrapped_op(op)
        if wrapped is not None:  # the start of a sugared async op: the wrapped op's attributes, no calls=
            inner = opcode_of(wrapped.name, wrapped.attributes.get("hlo.opcode"))
            out = list(raised.items()) + self.attributes(wrapped, inner)
        else:
            out = list(raised.items()) + self.computation_refs(op, entry)
        out += self.generic_attributes(op.attributes, op.location)
        if entry.hlo == "custom-call" and "hlo.backend_config" not in op.attributes:
            config = op.attributes.get("backend_config")
            if isinstance(config, str) and config:
                out.append(("backend_config", quoted(config)))
        return out

    def sugared_wrapped_op(self, op: Operation) -> Optional[Operation]:
        """The root op of the computation a sugared async start was built with (None otherwise)."""
        callee = op.attributes.get("callee")
        if "hlo.async_sugar" not in op.attributes or not isinstance(callee, SymbolRef):
            return None
        comp = self.module.computations.get(callee.name)
        if comp is None or not comp.in_sugar:
            return None
        root = comp.block.terminator.operands[0]
        return pack_source(root.defining_op) or root.defining_op

    def generic_attributes(self, attrs: dict, location=None) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        if "mhlo.sharding" in attrs:
            out.append(("sharding", str(attrs["mhlo.sharding"])))
        if attrs.get("mhlo.frontend_attributes"):
            out.append(("frontend_attributes", frontend_attributes_text(attrs["mhlo.frontend_attributes"])))
        if attrs.get("hlo.control_predecessors") and not self.module.short:
            names = ", ".join(self.pct + hlo_name(str(n)) for n in attrs["hlo.control_predecessors"])
            out.append(("control-predecessors", "{" + names + "}"))
        out += [(str(k), str(v)) for k, v in dict(attrs.get("hlo.extra") or {}).items()]
        if not self.module.short:
            # The metadata as written, else as the location says (region parameters, ops from MLIR).
            metadata = attrs.get("hlo.metadata") or self.module.frames.metadata_text(location)
            if metadata:
                out.append(("metadata", str(metadata)))
        if "hlo.backend_config" in attrs:
            out.append(("backend_config", str(attrs["hlo.backend_config"])))
        return out

    def computation_refs(self, op: Operation, entry: Opcode) -> list[tuple[str, str]]:
        names = [self.module.region_names[id(r)] for r in op.regions]
        out: list[tuple[str, str]] = []
        if names:
            if entry.hlo == "conditional":
                out += self.branch_refs(op, names)
            else:
                slots = [s for s in entry.regions if s in ("condition", "body", "select", "scatter", "to_apply")]
                if len(slots) != len(names):
                    raise HloPrintError(f"'{op.name}' has {len(names)} regions; HLO's {entry.hlo} takes "
                                        f"{len(slots)}", op.pos)
                out += [(slot, self.pct + name) for slot, name in zip(slots, names)]
        if entry.callee:
            hlo_attr, ir_attr = entry.callee
            value = op.attributes.get(ir_attr)
            if isinstance(value, SymbolRef):
                out.append((hlo_attr, self.pct + value.name))
            elif isinstance(value, ArrayAttr) and value:
                out.append((hlo_attr, "{" + ", ".join(self.pct + symbol.name for symbol in value) + "}"))
        return out

    def branch_refs(self, op: Operation, names: list[str]) -> list[tuple[str, str]]:
        """A pred-selected conditional names its true and false computations; an index-selected one
        lists its branches."""
        selector = element_type(op.operands[0].type)
        if isinstance(selector, IntegerType) and selector.is_bool and len(names) == 2:
            return [("true_computation", self.pct + names[0]), ("false_computation", self.pct + names[1])]
        return [("branch_computations", "{" + ", ".join(self.pct + n for n in names) + "}")]


def _before(arg: Value, op: Operation) -> bool:
    """Whether a parameter was written before `op` (parameters without positions go first)."""
    if arg.pos is None or op.pos is None:
        return True
    return arg.pos.offset < op.pos.offset


def _logical(t) -> str:
    return hlo_shape_text(t)


__all__ = ["HloPrintError", "ModulePrinter", "is_implicit", "pack_source", "print_module"]
