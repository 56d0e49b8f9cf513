"""Ops whose pretty syntax is not a plain format: constant, while, reduce, optimization_barrier,
the func dialect (func.func, call, return) and Shardy's mesh/manual_computation/sharding ops."""
from __future__ import annotations

from typing import Optional

from ...ir import attributes as A
from ...ir.core import Block, Function, Operation, Region
from ...ir.opset import is_commutative
from ...ir.types import FunctionType, TensorType, Type, format_result_types
from . import attribute_text as T
from .dialect_attrs import (
    parse_sdy_axis_names,
    parse_sdy_mesh_body,
    parse_sdy_per_value,
    parse_sdy_sharding_body,
)
from .format import Format, ParseState, Syntax, mlir_syntax


def _functional_types(p, state: ParseState) -> None:
    from .format import TYPE_DIRECTIVES

    TYPE_DIRECTIVES["functional"][0](state)


def _typed_argument(p):
    """`%name: type loc(...)?` as a region argument: (name, type, offset, location)."""
    p.skip_ws()
    offset = p.pos
    name = p.value_def_name()
    p.expect(":", "and the argument type")
    t = p.parse_type()
    return name, t, offset, p.opt_location()


# -- stablehlo.constant ---------------------------------------------------------------------------


class ConstantSyntax(Syntax):
    """`stablehlo.constant {attrs}? dense<...> : T`; generic-like `() <{value = ...}> : () -> T`
    when the value's type differs from the result type (quantized constants)."""

    def parse(self, p, name, names, pos):
        attrs: dict = {}
        if p.peek("("):
            p.expect("(")
            p.expect(")")
            if p.peek("<{"):
                p.accept("<")
                attrs.update(p.parse_attr_dict())
                p.expect(">")
            if p.peek("{"):
                for key, value in p.parse_attr_dict().items():
                    if key in attrs:
                        p.error(f"attribute '{key}' given twice")
                    attrs[key] = value
            p.expect(":")
            p.skip_ws()
            offset = p.pos
            ftype = p.parse_type()
            if not isinstance(ftype, FunctionType) or ftype.inputs or len(ftype.results) != 1:
                p.error(f"{name} has the type () -> T", offset)
            if "value" not in attrs:
                p.error(f"{name} needs a value attribute", offset)
            return Operation(name, [], [ftype.results[0]], attrs, pos=pos)
        if p.peek("{"):
            attrs = p.parse_attr_dict()
        p.skip_ws()
        offset = p.pos
        value = p.parse_attribute("a constant value such as dense<1.0> : tensor<f32>")
        if not isinstance(value, A.DenseElements):
            p.error(f"{name} takes a dense elements value such as dense<1.0> : tensor<f32>", offset)
        if "value" in attrs:
            p.error(f"{name} value given twice", offset)
        attrs["value"] = value
        return Operation(name, [], [value.type], attrs, pos=pos)

    def print(self, pr, op):
        value = op.attributes.get("value")
        rest = {k: v for k, v in op.attributes.items() if k != "value"}
        if isinstance(value, A.DenseElements) and value.type == op.result_types[0]:
            prefix = f" {T.format_attr_dict(rest)}" if rest else ""
            return f"{prefix} {T.format_attribute(value)}"
        props = T.format_attr_dict({"value": value})
        extra = f" {T.format_attr_dict(rest)}" if rest else ""
        return f"() <{props}>{extra} : () -> {op.result_types[0]}"


mlir_syntax("stablehlo.constant", ConstantSyntax())
mlir_syntax("arith.constant", ConstantSyntax())


# -- stablehlo.while ------------------------------------------------------------------------------


class WhileSyntax(Syntax):
    """`stablehlo.while(%iterArg = %init, ...) : T, ... attributes {..}? cond {...} do {...}`"""

    def parse(self, p, name, names, pos):
        p.expect("(", "after stablehlo.while")
        declared = []
        inits = []
        if not p.accept(")"):
            while True:
                p.skip_ws()
                offset = p.pos
                arg_name = p.value_def_name()
                p.expect("=", "between the loop variable and its initial value")
                inits.append(p.operand())
                declared.append((arg_name, offset))
                if not p.accept(","):
                    break
            p.expect(")")
        types: list[Type] = []
        if inits:
            p.expect(":", "and the types of the loop variables")
            p.skip_ws()
            offset = p.pos
            types = p.parse_type_list()
            if len(types) != len(inits):
                p.error(f"{len(inits)} loop variables but {len(types)} types", offset)
            for value, t in zip(inits, types):
                if value.type != t:
                    p.error(f"{value.name} has type {value.type}, but the loop variable is declared {t}", offset)
        attrs = {}
        if p.accept_keyword("attributes"):
            attrs = p.parse_attr_dict()
        arguments = [(n, t, off) for (n, off), t in zip(declared, types)]
        p.expect_keyword("cond", "to start the condition region of stablehlo.while")
        cond = p.parse_region(arguments)
        p.expect_keyword("do", "to start the body region of stablehlo.while")
        body = p.parse_region(arguments)
        return Operation(name, inits, types, attrs, [cond, body], pos=pos)

    def print(self, pr, op):
        cond, body = op.regions
        # The loop variables are declared with the operands' types; regions that take them as
        # other (compatible, less static) types print generically, which keeps those types.
        for region in (cond, body):
            if region.blocks and [a.type for a in region.blocks[0].arguments] != list(op.operand_types):
                return None
        cond_args = cond.blocks[0].arguments if cond.blocks else []
        names = [pr.name(a) for a in cond_args]
        for arg, arg_name in zip(body.blocks[0].arguments if body.blocks else [], names):
            pr.rename(arg, arg_name)
        header = ", ".join(f"{n} = {pr.name(v)}" for n, v in zip(names, op.operands))
        text = f"({header})"
        if op.operands:
            text += " : " + ", ".join(map(str, op.operand_types))
        if op.attributes:
            text += " attributes " + T.format_attr_dict(op.attributes)
        text += "\n" + pr.indent_text() + "cond " + pr.region(cond, print_entry_args=False)
        text += " do " + pr.region(body, print_entry_args=False)
        return text


mlir_syntax("stablehlo.while", WhileSyntax())


# -- stablehlo.reduce -----------------------------------------------------------------------------


class ReduceSyntax(Syntax):
    """`stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : ...`, or
    `... across dimensions = [1] : ... reducer(%a: T, %b: T) (%c: T, %d: T) { ... }`."""

    def parse(self, p, name, names, pos):
        inputs, inits = [], []
        while True:
            p.expect("(", "to start an (input init: value) pair")
            inputs.append(p.operand())
            p.expect_keyword("init", "in stablehlo.reduce")
            p.expect(":")
            inits.append(p.operand())
            p.expect(")")
            if not p.accept(","):
                break
        applies: Optional[str] = None
        applies_offset = 0
        if p.accept_keyword("applies"):
            p.skip_ws()
            applies_offset = p.pos
            applies = p.bare_id("the reducing op, such as stablehlo.add")
            if not is_commutative(applies):
                p.error(f"'applies' takes a commutative binary op of the stablehlo dialect (add, multiply, "
                        f"maximum, minimum, and, or, xor), got '{applies}'; write other bodies as "
                        f"'reducer(%a: T, %b: T) {{ ... }}'", applies_offset)
        p.expect_keyword("across", "in stablehlo.reduce")
        p.expect_keyword("dimensions")
        p.expect("=")
        from .format import parse_int_list

        dims = A.DenseArray(parse_int_list(p), "i64")
        attrs = {}
        if p.peek("{"):
            attrs = p.parse_attr_dict()
        attrs["dimensions"] = dims
        state = ParseState(p, self.opdef)
        state.all_operands = inputs + inits
        p.expect(":", "and the type of stablehlo.reduce")
        _functional_types(p, state)
        n = len(inputs)
        if applies is not None:
            if n != 1:
                p.error("the compact 'applies' form takes one input", applies_offset)
            region = self._compact_body(p, applies, inits[0].type, applies_offset)
        else:
            p.expect_keyword("reducer", "and the reducer region of stablehlo.reduce")
            pairs = []
            for _ in range(n):
                pair = p.delimited("(", lambda: _typed_argument(p), ")", "a reducer argument pair")
                if len(pair) != 2:
                    p.error("each reducer group declares two arguments: (%acc: T, %x: T)")
                pairs.append(pair)
            arguments = [pair[0] for pair in pairs] + [pair[1] for pair in pairs]
            region = p.parse_region(arguments)
        return Operation(name, inputs + inits, state.result_types, attrs, [region], pos=pos)

    def _compact_body(self, p, applies: str, init_type: Type, offset: int) -> Region:
        scalar = init_type
        if not isinstance(scalar, TensorType):
            p.error("reduce init values are tensors", offset)
        block = Block()
        lhs = block.add_argument("%lhs", scalar)
        rhs = block.add_argument("%rhs", scalar)
        inner = Operation(applies, [lhs, rhs], [scalar], {}, pos=p.at(offset))
        block.append(inner)
        block.append(Operation("stablehlo.return", [inner.results[0]], [], {}, pos=p.at(offset)))
        return Region([block])

    def print(self, pr, op):
        n = len(op.operands) // 2
        inputs, inits = op.operands[:n], op.operands[n:]
        pairs = ", ".join(f"({pr.name(a)} init: {pr.name(b)})" for a, b in zip(inputs, inits))
        rest = {k: v for k, v in op.attributes.items() if k != "dimensions"}
        dims = "[" + ", ".join(str(d) for d in op.attributes["dimensions"]) + "]"
        compact = _compact_reducer(op)
        text = pairs
        if compact is not None:
            text += f" applies {compact}"
        text += f" across dimensions = {dims}"
        if rest:
            text += " " + T.format_attr_dict(rest)
        text += " : " + str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))
        if compact is None:
            block = op.regions[0].blocks[0]
            args = block.arguments
            groups = []
            for i in range(n):
                a, b = args[i], args[i + n]
                groups.append(
                    f"({pr.name(a)}: {a.type}{pr.location_suffix(a)}, {pr.name(b)}: {b.type}{pr.location_suffix(b)})"
                )
            # As StableHLO's printReduceOp: each pair is followed by a space, then one more.
            text += "\n" + pr.indent_text() + " reducer" + "".join(g + " " for g in groups) + " " + pr.region(
                op.regions[0], print_entry_args=False
            )
        return text


def _compact_reducer(op: Operation) -> Optional[str]:
    """The op the compact `applies` form names, if the body is one it can spell (StableHLO's
    criteria E1-E5). Locations do not count, as in stablehlo-opt: the form must not depend on them
    (else the printed text, parsed again without locations, prints another way); the compact form
    read back gives the inner op the reduce's location."""
    if len(op.operands) != 2 or len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    block = op.regions[0].blocks[0]
    if len(block.arguments) != 2 or len(block.operations) != 2:
        return None
    inner, ret = block.operations
    if (
        not is_commutative(inner.name)  # the compact form parses back only for these
        or inner.regions
        or inner.attributes
        or len(inner.results) != 1
        or [v for v in inner.operands] != list(block.arguments)
        or ret.name != "stablehlo.return"
        or ret.operands != inner.results
        or inner.results[0].type != block.arguments[0].type
        or block.arguments[1].type != block.arguments[0].type
    ):
        return None
    # The compact form re-parses with a body over the init value's type; a body of another type
    # (an f64 body promoting f32 inputs, spec C6) must print in full to round-trip. The input's
    # element type is required too, since other readers of the compact form take it from there.
    body_type = block.arguments[0].type
    data, init = op.operands[0].type, op.operands[1].type
    if init != body_type or getattr(data, "element", None) != getattr(body_type, "element", None):
        return None
    if getattr(body_type, "shape", None) != ():
        return None  # the compact form re-parses with a body over 0-dimensional tensors (StableHLO's E3)
    return inner.name


mlir_syntax("stablehlo.reduce", ReduceSyntax())


# -- stablehlo.optimization_barrier -----------------------------------------------------------------


class OptimizationBarrierSyntax(Syntax):
    """`stablehlo.optimization_barrier {attrs}? %a, %b : T1, T2`, or `()` with no operands."""

    def parse(self, p, name, names, pos):
        attrs = p.parse_attr_dict() if p.peek("{") else {}
        if p.accept("("):
            p.expect(")")
            return Operation(name, [], [], attrs, pos=pos)
        state = ParseState(p, self.opdef)
        state.parse_all_operands()
        from .format import TYPE_DIRECTIVES

        p.expect(":", "and the operand types")
        TYPE_DIRECTIVES["pairwise"][0](state)
        return Operation(name, state.operands, state.result_types, attrs, pos=pos)

    def print(self, pr, op):
        prefix = f" {T.format_attr_dict(op.attributes)}" if op.attributes else ""
        if not op.operands:
            return f"{prefix}()" if prefix else "()"
        return f"{prefix} {pr.operands(op.operands)} : " + ", ".join(map(str, op.operand_types))


mlir_syntax("stablehlo.optimization_barrier", OptimizationBarrierSyntax())


# -- func dialect ---------------------------------------------------------------------------------


class FuncSyntax(Syntax):
    """`func.func private? @name(%arg0: T {attrs} loc(..), ...) -> (T {attrs}, ...) attributes {..} {..}`"""

    def parse(self, p, name, names, pos):
        visibility = None
        for word in ("public", "private", "nested"):
            if p.accept_keyword(word):
                visibility = word
                break
        sym = p.symbol("the function name, such as @main")
        p.expect("(", "to start the argument list")
        args = []
        arg_attrs = []
        arg_locs = []
        if not p.accept(")"):
            while True:
                p.skip_ws()
                offset = p.pos
                if p.peek_value():
                    arg_name = p.value_def_name()
                    p.expect(":", "and the argument type")
                else:
                    arg_name = None  # a declaration lists bare types
                t = p.parse_type()
                arg_attrs.append(p.parse_attr_dict() if p.peek("{") else {})
                arg_locs.append(p.opt_location())
                args.append((arg_name, t, offset))
                if not p.accept(","):
                    break
            p.expect(")", "to close the argument list")
        results: list[Type] = []
        res_attrs = []
        if p.accept("->"):
            if p.peek("(") and not self._is_function_result(p):
                p.accept("(")
                if not p.accept(")"):
                    while True:
                        results.append(p.parse_type())
                        res_attrs.append(p.parse_attr_dict() if p.peek("{") else {})
                        if not p.accept(","):
                            break
                    p.expect(")")
            else:
                results.append(p.parse_type())
                res_attrs.append({})
        attrs = {}
        if p.accept_keyword("attributes"):
            attrs = p.parse_attr_dict()
        attrs["sym_name"] = sym
        attrs["function_type"] = FunctionType(tuple(t for _, t, _ in args), tuple(results))
        if visibility is not None:
            attrs["sym_visibility"] = visibility
        if any(arg_attrs):
            attrs["arg_attrs"] = A.ArrayAttr(arg_attrs)
        if any(res_attrs):
            attrs["res_attrs"] = A.ArrayAttr(res_attrs)
        regions = []
        if p.peek("{"):
            p.skip_ws()
            body_offset = p.pos
            named = [a for a in args if a[0] is not None]
            if len(named) != len(args):
                p.error(f"function @{sym} with a body needs named arguments (%arg0: T)", args[0][2])
            arguments = [(n, t, off, loc) for (n, t, off), loc in zip(args, arg_locs)]
            regions.append(p.parse_region(arguments, isolated=True))
            if not regions[0].blocks:
                p.error(f"the body of @{sym} is empty; a function body ends with a return", body_offset)
        op = Function(name, [], [], attrs, regions, pos=pos)
        return op

    def _is_function_result(self, p) -> bool:
        """`-> (T) -> R` would be one function-typed result; rare but legal."""
        save = p.pos
        try:
            p.parse_type_list_parens()
            return p.peek("->")
        except Exception:  # noqa: BLE001 - a look-ahead: whatever fails to parse is not a signature
            return False
        finally:
            p.pos = save

    def print(self, pr, op):
        attrs = dict(op.attributes)
        ftype: FunctionType = attrs.pop("function_type")
        sym = attrs.pop("sym_name")
        visibility = attrs.pop("sym_visibility", None)
        arg_attrs = attrs.pop("arg_attrs", None)
        res_attrs = attrs.pop("res_attrs", None)
        head = f" {visibility}" if visibility else ""
        head += f" {A.SymbolRef(str(sym))}("
        params = []
        block = op.regions[0].blocks[0] if op.regions and op.regions[0].blocks else None
        for i, t in enumerate(ftype.inputs):
            extra = arg_attrs[i] if arg_attrs else {}
            text = f"{pr.name(block.arguments[i])}: {t}" if block is not None else str(t)
            if extra:
                text += " " + T.format_attr_dict(extra)
            if block is not None:
                text += pr.location_suffix(block.arguments[i])
            params.append(text)
        head += ", ".join(params) + ")"
        if ftype.results:
            if res_attrs and any(res_attrs):
                items = []
                for t, extra in zip(ftype.results, res_attrs):
                    items.append(f"{t} {T.format_attr_dict(extra)}" if extra else str(t))
                head += " -> (" + ", ".join(items) + ")"
            else:
                head += " -> " + format_result_types(ftype.results)
        if attrs:
            head += " attributes " + T.format_attr_dict(attrs)
        if block is not None:
            head += " " + pr.region(op.regions[0], print_entry_args=False)
        return head


mlir_syntax("func.func", FuncSyntax())


class CallSyntax(Syntax):
    """`call @f(%a, %b) : (T, T) -> R` (also spelled `func.call`)."""

    def parse(self, p, name, names, pos):
        callee = p.symbol("the callee, such as @f")
        p.expect("(")
        state = ParseState(p, self.opdef)
        state.parse_all_operands()
        p.expect(")")
        attrs = p.parse_attr_dict() if p.peek("{") else {}
        p.expect(":", "and the function type of the call")
        _functional_types(p, state)
        attrs["callee"] = A.SymbolRef(callee)
        return Operation("func.call", state.operands, state.result_types, attrs, pos=pos)

    def print(self, pr, op):
        attrs = {k: v for k, v in op.attributes.items() if k != "callee"}
        text = f" {op.attributes['callee']}({pr.operands(op.operands)})"
        if attrs:
            text += " " + T.format_attr_dict(attrs)
        return text + " : " + str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))


mlir_syntax("func.call", CallSyntax())
# func's format is `attr-dict ($operands^ : type($operands))?`: no space for no operands.
mlir_syntax("func.return", Format("$operands attr-dict %operand_types", space_before_empty_operands=False))
mlir_syntax("tensor.cast", Format("$source attr-dict : %cast"))


# -- Shardy ---------------------------------------------------------------------------------------


class SdyMeshSyntax(Syntax):
    """`sdy.mesh @mesh = <["x"=4, "y"=2]> {attrs}?`"""

    def parse(self, p, name, names, pos):
        sym = p.symbol("the mesh name, such as @mesh")
        p.expect("=")
        p.expect("<")
        mesh = parse_sdy_mesh_body(p)
        p.expect(">")
        attrs = p.parse_attr_dict() if p.peek("{") else {}
        attrs["sym_name"] = sym
        attrs["mesh"] = mesh
        return Operation(name, [], [], attrs, pos=pos)

    def print(self, pr, op):
        rest = {k: v for k, v in op.attributes.items() if k not in ("sym_name", "mesh")}
        text = f" {A.SymbolRef(op.attributes['sym_name'])} = <{op.attributes['mesh'].body()}>"
        return text + (f" {T.format_attr_dict(rest)}" if rest else "")


mlir_syntax("sdy.mesh", SdyMeshSyntax())


class ManualComputationSyntax(Syntax):
    """`sdy.manual_computation(%a) in_shardings=[...] out_shardings=[...] manual_axes={"x"}
    (%arg: T) { ... } : (T) -> R`"""

    def parse(self, p, name, names, pos):
        p.expect("(")
        state = ParseState(p, self.opdef)
        state.parse_all_operands()
        p.expect(")")
        p.expect_keyword("in_shardings")
        p.expect("=")
        in_shardings = A.SdyShardingPerValue(parse_sdy_per_value(p))
        p.expect_keyword("out_shardings")
        p.expect("=")
        out_shardings = A.SdyShardingPerValue(parse_sdy_per_value(p))
        p.expect_keyword("manual_axes")
        p.expect("=")
        axes = parse_sdy_axis_names(p)
        region = p.parse_region(p.delimited("(", lambda: _typed_argument(p), ")", "the body's arguments"), isolated=True)
        attrs = p.parse_attr_dict() if p.peek("{") else {}
        p.expect(":", "and the function type of sdy.manual_computation")
        _functional_types(p, state)
        attrs.update(in_shardings=in_shardings, out_shardings=out_shardings, manual_axes=A.SdyManualAxes(tuple(axes)))
        return Operation(name, state.operands, state.result_types, attrs, [region], pos=pos)

    def print(self, pr, op):
        a = op.attributes
        rest = {k: v for k, v in a.items() if k not in ("in_shardings", "out_shardings", "manual_axes")}
        block = op.regions[0].blocks[0]
        args = ", ".join(f"{pr.name(v)}: {v.type}{pr.location_suffix(v)}" for v in block.arguments)
        text = (
            f"({pr.operands(op.operands)}) in_shardings={a['in_shardings'].stripped()}"
            f" out_shardings={a['out_shardings'].stripped()} manual_axes={a['manual_axes'].stripped()} ({args}) " + pr.region(op.regions[0], print_entry_args=False)
        )
        if rest:
            text += " " + T.format_attr_dict(rest)
        return text + " : " + str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))


mlir_syntax("sdy.manual_computation", ManualComputationSyntax())
mlir_syntax("sdy.return", Format("attr-dict $results %operand_types"))


class ShardingOpSyntax(Syntax):
    """`sdy.sharding_constraint %x <@mesh, [{"x"}, {}]> : T` (and sdy.reshard)."""

    def parse(self, p, name, names, pos):
        operand = p.operand()
        p.expect("<", "to start the sharding")
        sharding = parse_sdy_sharding_body(p)
        p.expect(">")
        attrs = p.parse_attr_dict() if p.peek("{") else {}
        p.expect(":")
        result = p.parse_type()
        attrs["sharding"] = sharding
        return Operation(name, [operand], [result], attrs, pos=pos)

    def print(self, pr, op):
        rest = {k: v for k, v in op.attributes.items() if k != "sharding"}
        text = f" {pr.name(op.operands[0])} <{op.attributes['sharding'].body()}>"
        if rest:
            text += " " + T.format_attr_dict(rest)
        return text + f" : {op.result_types[0]}"


mlir_syntax("sdy.sharding_constraint", ShardingOpSyntax())
mlir_syntax("sdy.reshard", ShardingOpSyntax())

# `call` and `return` are the func dialect's short spellings inside functions.
ALIASES = {"call": "func.call", "return": "func.return"}
