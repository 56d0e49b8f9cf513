"""The in-memory program: Module > Function > Region > Block > Operation, with SSA Values.

Every op keeps its name as written (`stablehlo.add`), its operands and results as Values, its
attributes decoded (see attributes.py), its regions, the producer location (`loc(...)`) and the
position of its text in the .mlir file, so the debugger can point at both.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional

from .attributes import ArrayAttr, SymbolRef, attribute_key
from .types import FunctionType, Type

if TYPE_CHECKING:
    from .errors import SourcePos
    from .locations import Location


class Value:
    """An SSA value: an op result or a block argument. `uses` lists (op, operand index) pairs."""

    __slots__ = ("name", "type", "owner", "index", "uses", "pos", "location")

    def __init__(self, name: str, type: Type, owner: Any, index: int, pos: "Optional[SourcePos]" = None):
        self.name = name
        self.type = type
        self.owner = owner
        self.index = index
        self.uses: list[tuple[Operation, int]] = []
        self.pos = pos
        self.location = None  # the producer's loc(...) for block arguments

    @property
    def is_block_argument(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def defining_op(self) -> Optional["Operation"]:
        return self.owner if isinstance(self.owner, Operation) else None

    @property
    def users(self) -> list["Operation"]:
        seen: dict[int, Operation] = {}
        for op, _ in self.uses:
            seen.setdefault(id(op), op)
        return list(seen.values())

    def __repr__(self) -> str:
        return f"<Value {self.name}: {self.type}>"


class Operation:
    """One op. `attributes` merges MLIR properties (`<{...}>`) and discardable attributes."""

    __slots__ = (
        "name",
        "operands",
        "results",
        "attributes",
        "regions",
        "location",
        "pos",
        "parent",
        "successors",
        "property_names",
    )

    def __init__(
        self,
        name: str,
        operands: list[Value],
        result_types: list[Type],
        attributes: Optional[dict[str, Any]] = None,
        regions: Optional[list["Region"]] = None,
        location: "Optional[Location]" = None,
        pos: "Optional[SourcePos]" = None,
        result_names: Optional[list[str]] = None,
    ):
        self.name = name
        self.operands = operands
        self.attributes = attributes if attributes is not None else {}
        self.regions = regions if regions is not None else []
        self.location = location
        self.pos = pos
        self.parent: Optional[Block] = None
        self.successors: list[str] = []
        # Names of attributes that arrived as properties in generic form (`<{...}>`), for ops
        # whose properties hlodbg does not know; known ops derive them from their definition.
        self.property_names: Optional[tuple[str, ...]] = None
        if result_names is None:
            # The parser names results from the text right after; builders may pass names.
            self.results = [Value("", t, self, i) for i, t in enumerate(result_types)]
        else:
            self.results = [Value(result_names[i], t, self, i) for i, t in enumerate(result_types)]
        for i, operand in enumerate(operands):
            operand.uses.append((self, i))
        for region in self.regions:
            region.parent = self

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def mnemonic(self) -> str:
        return self.name.split(".", 1)[-1]

    @property
    def result(self) -> Value:
        if len(self.results) != 1:
            raise ValueError(f"{self.name} has {len(self.results)} results")
        return self.results[0]

    @property
    def operand_types(self) -> list[Type]:
        return [v.type for v in self.operands]

    @property
    def result_types(self) -> list[Type]:
        return [v.type for v in self.results]

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attributes.get(name, default)

    def walk(self) -> Iterator["Operation"]:
        """This op and, depth first, every op nested in its regions."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.operations:
                    yield from op.walk()

    @property
    def parent_op(self) -> Optional["Operation"]:
        block = self.parent
        if block is None or block.parent is None:
            return None
        return block.parent.parent

    @property
    def function(self) -> Optional["Function"]:
        op = self.parent_op
        while op is not None and not isinstance(op, Function):
            op = op.parent_op
        return op

    def __repr__(self) -> str:
        results = ", ".join(v.name for v in self.results)
        prefix = f"{results} = " if results else ""
        where = f" at {self.pos}" if self.pos else ""
        return f"<Operation {prefix}{self.name}{where}>"


class Block:
    __slots__ = ("label", "arguments", "operations", "parent")

    def __init__(self, label: Optional[str] = None):
        self.label = label
        self.arguments: list[Value] = []
        self.operations: list[Operation] = []
        self.parent: Optional[Region] = None

    def add_argument(self, name: str, type: Type, pos=None) -> Value:
        value = Value(name, type, self, len(self.arguments), pos)
        self.arguments.append(value)
        return value

    def append(self, op: Operation) -> None:
        op.parent = self
        self.operations.append(op)

    @property
    def terminator(self) -> Optional[Operation]:
        return self.operations[-1] if self.operations else None


class Region:
    __slots__ = ("blocks", "parent")

    def __init__(self, blocks: Optional[list[Block]] = None):
        self.blocks = blocks if blocks is not None else []
        self.parent: Optional[Operation] = None
        for block in self.blocks:
            block.parent = self

    @property
    def block(self) -> Block:
        """The entry block (StableHLO regions have exactly one)."""
        return self.blocks[0]

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block


class Function(Operation):
    """`func.func`: a symbol, a signature, argument/result attributes and a body."""

    __slots__ = ()

    @property
    def sym_name(self) -> str:
        return str(self.attributes["sym_name"])

    @property
    def function_type(self) -> FunctionType:
        return self.attributes["function_type"]

    @property
    def visibility(self) -> str:
        return str(self.attributes.get("sym_visibility", "public"))

    @property
    def is_declaration(self) -> bool:
        return not self.regions or not self.regions[0].blocks

    @property
    def body(self) -> Block:
        return self.regions[0].blocks[0]

    @property
    def arguments(self) -> list[Value]:
        return self.body.arguments if not self.is_declaration else []

    def arg_attrs(self, index: int) -> dict:
        attrs = self.attributes.get("arg_attrs")
        return dict(attrs[index]) if attrs else {}

    def res_attrs(self, index: int) -> dict:
        attrs = self.attributes.get("res_attrs")
        return dict(attrs[index]) if attrs else {}

    @property
    def ops(self) -> list[Operation]:
        """Every op of the body, nested ones included, in textual order."""
        out: list[Operation] = []
        if not self.is_declaration:
            for op in self.body.operations:
                out.extend(op.walk())
        return out

    def __repr__(self) -> str:
        return f"<Function @{self.sym_name} {self.function_type}>"


class Module:
    """A parsed `module` (or a bare list of functions). Functions are looked up by name."""

    def __init__(self, name: Optional[str] = None, attributes: Optional[dict] = None):
        self.name = name
        self.attributes = attributes if attributes is not None else {}
        self.operations: list[Operation] = []
        self.location: "Optional[Location]" = None
        self.pos: "Optional[SourcePos]" = None
        self.source = None  # SourceText the module was parsed from
        self.resources: dict[str, dict[str, Any]] = {}
        # (the operations list as it was, the table made from it): a call names its callee by
        # symbol, and rebuilding the table per lookup is quadratic in a long chain of calls.
        self._function_table: tuple[list[Operation], dict[str, Function]] = ([], {})

    @property
    def functions(self) -> dict[str, Function]:
        return dict(self._functions())

    def _functions(self) -> dict[str, Function]:
        """The function table, remade whenever the operations list has changed (a list comparison
        is by identity first, at C speed)."""
        seen, table = self._function_table
        if seen != self.operations:
            table = {op.sym_name: op for op in self.operations if isinstance(op, Function)}
            self._function_table = (list(self.operations), table)
        return table

    def function(self, name: str) -> Function:
        """The function named `name`. `main`, the default entry everywhere, also names the module's
        entry function when no function is called main (an HLO module's ENTRY is `main.3`)."""
        functions = self._functions()
        found = functions.get(name)
        if found is not None:
            if found.sym_name == name:
                return found
            self._function_table = ([], {})  # a function renamed in place
            functions = self._functions()
        if name == "main" and name not in functions and self.entry is not None:
            return self.entry
        if name not in functions:
            raise KeyError(f"no function @{name} (functions: {function_list(functions, name)})")
        return functions[name]

    @property
    def entry(self) -> Optional[Function]:
        functions = self.functions
        if "main" in functions:
            return functions["main"]
        public = [f for f in functions.values() if f.visibility == "public"]
        return public[0] if public else next(iter(functions.values()), None)

    @property
    def num_replicas(self) -> int:
        return int(self.attributes.get("mhlo.num_replicas", 1))

    @property
    def num_partitions(self) -> int:
        return int(self.attributes.get("mhlo.num_partitions", 1))

    def walk(self) -> Iterator[Operation]:
        for op in self.operations:
            yield from op.walk()

    @property
    def op_count(self) -> int:
        """Ops inside functions, nested ones included (func.func itself not counted)."""
        return sum(1 for top in self.operations for op in top.walk() if op is not top)

    def __repr__(self) -> str:
        return f"<Module {self.name or ''} with {len(self.functions)} functions>"


def structural_key(module: Module, with_locations: bool = False):
    """A value equal for two modules exactly when their IR is the same.

    Compares op names, attribute values, types, region structure and use-def edges (by the
    position of the defining value), not SSA spellings or text positions.
    """
    numbering: dict[int, int] = {}

    def number(value: Value) -> int:
        key = id(value)
        if key not in numbering:
            numbering[key] = len(numbering)
        return numbering[key]

    def op_key(op: Operation):
        for r in op.results:
            number(r)
        regions = tuple(region_key(r) for r in op.regions)
        return (
            op.name,
            tuple(number(v) for v in op.operands),
            tuple(v.type for v in op.results),
            tuple(sorted((k, attribute_key(v)) for k, v in op.attributes.items())),
            regions,
            tuple(op.successors),
            str(op.location) if with_locations and op.location is not None else None,
        )

    def region_key(region: Region):
        blocks = []
        for block in region.blocks:
            args = tuple((number(a), a.type) for a in block.arguments)
            blocks.append((args, tuple(op_key(o) for o in block.operations)))
        return tuple(blocks)

    top = tuple(op_key(op) for op in module.operations)
    attrs = tuple(sorted((k, attribute_key(v)) for k, v in module.attributes.items()))
    return (module.name, attrs, top)


def function_list(names, wanted: str = "", limit: int = 10) -> str:
    """`@a, @b, ...` for a message saying which functions there are: a post-optimization HLO
    module has a thousand fused computations, so at most `limit`, those closest to `wanted` first."""
    import difflib

    names = list(names)
    if not names:
        return "none"
    first = difflib.get_close_matches(wanted, names, n=limit, cutoff=0.5) if wanted else []
    shown = first + [n for n in names if n not in first][: limit - len(first)]
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    return ", ".join("@" + n for n in shown) + more


def symbol_name(attr: Any) -> str:
    if isinstance(attr, SymbolRef):
        return attr.name
    if isinstance(attr, ArrayAttr) and attr:
        return symbol_name(attr[0])
    return str(attr)
