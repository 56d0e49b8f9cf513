"""CHLO ops (docs/generated/chlo.md): JAX emits these for erf, lgamma, top_k, ... ."""
from __future__ import annotations

from ...ir import attributes as A
from ...ir.core import Operation
from ...ir.opset.chlo import scan_groups
from . import attribute_text as T
from .custom_ops import ConstantSyntax
from .format import TYPE_DIRECTIVES, ParseState, Syntax, mlir_syntax

# The Format-language forms are facts of the definitions (ir/opset/chlo.py); these are classes.
mlir_syntax("chlo.constant", ConstantSyntax())


# -- chlo.scan --------------------------------------------------------------------------------------

# The generic form states how the operands and results split into groups; the pretty form shows it.
_SEGMENTS = ("operandSegmentSizes", "resultSegmentSizes")


class ScanSyntax(Syntax):
    """`chlo.scan(%x, ...) inits (%c, ...) dimension=0 attributes {is_reverse = true}? { ^bb0(...): ... }
    : (inputs..., inits...) -> (outputs..., carries...)`"""

    def parse(self, p, name, names, pos):
        state = ParseState(p, self.opdef)
        p.expect("(", "after chlo.scan")
        state.parse_operand_group("inputs")
        p.expect(")", "to close the inputs of chlo.scan")
        p.expect_keyword("inits", "after the inputs of chlo.scan")
        p.expect("(")
        state.parse_operand_group("inits")
        p.expect(")", "to close the inits of chlo.scan")
        p.expect_keyword("dimension", "after the inits of chlo.scan")
        p.expect("=")
        attrs = {"dimension": A.IntegerAttr(p.integer("the scan dimension"), A.I64)}
        if p.accept_keyword("attributes"):
            for key, value in p.parse_attr_dict().items():
                if key in attrs:
                    p.error(f"attribute '{key}' given twice")
                attrs[key] = value
        region = p.parse_region()
        p.expect(":", "and the function type of chlo.scan")
        TYPE_DIRECTIVES["functional"][0](state)
        inputs, inits = len(state.groups["inputs"]), len(state.groups["inits"])
        outputs = len(state.result_types) - inits
        if outputs < 0:
            p.error(f"chlo.scan has {inits} inits but only {len(state.result_types)} results", state.type_pos)
        attrs["operandSegmentSizes"] = _segments(inputs, inits)
        attrs["resultSegmentSizes"] = _segments(outputs, inits)
        return Operation(name, state.operands, state.result_types, attrs, [region], pos=pos)

    def print(self, pr, op):
        inputs, inits = scan_groups(op)
        shown = {k: v for k, v in op.attributes.items() if k not in ("dimension", *_SEGMENTS)}
        # Spaced as StableHLO's ScanOp::print: `inits (`, and a space both before and after the
        # optional ` attributes {...}`.
        text = (f"({pr.operands(op.operands[:inputs])}) inits ({pr.operands(op.operands[inputs:inputs + inits])})"
                f" dimension={int(op.attributes['dimension'])} ")
        if shown:
            text += " attributes " + T.format_attr_dict(shown)
        return text + " " + pr.region(op.regions[0]) + " : " + TYPE_DIRECTIVES["functional"][1](op)


def _segments(*sizes: int) -> A.DenseArray:
    return A.DenseArray(tuple(sizes), "i32")


mlir_syntax("chlo.scan", ScanSyntax())
