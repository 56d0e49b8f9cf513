"""What each known op is: operands, attributes (kind, default), regions, results, category.

One OpDef per op drives the pretty syntax (syntax/), the verifier's arity and attribute checks,
the graph's category colours and, later, the interpreter's dispatch. Definitions are registered
by the syntax modules next to their formats (`define(...)`), so an op is described once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

# Categories shared by the graph colours and the UI legend.
CATEGORIES = (
    "elementwise",
    "data_movement",
    "reduction",
    "contraction",
    "control_flow",
    "collective",
    "constant",
    "custom_call",
    "chlo",
    "quantization",
    "structural",
)


@dataclass(frozen=True)
class AttrSpec:
    kind: str
    required: bool = True
    default: Any = None


@dataclass
class OpDef:
    name: str
    operands: tuple[tuple[str, str], ...]  # (name, arity) with arity "" (one), "*" (any), "?"
    attrs: dict[str, AttrSpec]
    regions: tuple[str, ...]  # a trailing "*" on the last name means any number of regions
    results: str  # "1", "0", "*" or a fixed count such as "3"
    category: str
    syntax: Optional[Any] = None  # a syntax.format.Syntax, or None for generic-only ops
    is_terminator: bool = False
    summary: str = ""
    same_variadic_size: bool = False  # variadic operand groups split the operands evenly

    @property
    def min_operands(self) -> int:
        return sum(1 for _, arity in self.operands if arity == "")

    @property
    def variadic(self) -> bool:
        return any(arity in ("*", "?") for _, arity in self.operands)

    def operand_groups(self, count: int) -> Optional[dict[str, tuple[int, int]]]:
        """Which operand indices belong to each named group, for `count` operands; None if impossible."""
        fixed = self.min_operands
        groups = [(n, a) for n, a in self.operands]
        variadic = [n for n, a in groups if a in ("*", "?")]
        extra = count - fixed
        if extra < 0:
            return None
        sizes: dict[str, int] = {}
        if not variadic:
            if extra:
                return None
        elif len(variadic) == 1:
            name = variadic[0]
            arity = dict(groups)[name]
            if arity == "?" and extra > 1:
                return None
            sizes[name] = extra
        else:
            if self.same_variadic_size:
                if extra % len(variadic):
                    return None
                for name in variadic:
                    sizes[name] = extra // len(variadic)
            else:
                # Several groups without segment sizes: give everything to the first '*' group.
                star = [n for n in variadic if dict(groups)[n] == "*"]
                for name in variadic:
                    sizes[name] = 0
                if star:
                    sizes[star[0]] = extra
                elif extra > len(variadic):
                    return None
                else:
                    for name in variadic[:extra]:
                        sizes[name] = 1
        out: dict[str, tuple[int, int]] = {}
        index = 0
        for name, arity in groups:
            size = 1 if arity == "" else sizes[name]
            out[name] = (index, index + size)
            index += size
        return out

    def region_count_ok(self, count: int) -> bool:
        if self.regions and self.regions[-1].endswith("*"):
            return count >= len(self.regions) - 1
        return count == len(self.regions)

    def result_count_ok(self, count: int) -> bool:
        if self.results == "*":
            return True
        return count == int(self.results)


OPS: dict[str, OpDef] = {}


def _parse_operands(spec: str) -> tuple[tuple[str, str], ...]:
    out = []
    for word in spec.split():
        if word.endswith(("*", "?")):
            out.append((word[:-1], word[-1]))
        else:
            out.append((word, ""))
    return tuple(out)


def _parse_attrs(spec: str) -> dict[str, AttrSpec]:
    """`name:kind` (required), `name:kind?` (optional), `name:kind=default` (default valued)."""
    attrs: dict[str, AttrSpec] = {}
    for item in spec.split():
        name, _, kind = item.partition(":")
        if "=" in kind:
            kind, _, default_text = kind.partition("=")
            attrs[name] = AttrSpec(kind, False, default_text)
        elif kind.endswith("?"):
            attrs[name] = AttrSpec(kind[:-1], False, None)
        else:
            attrs[name] = AttrSpec(kind, True, None)
    return attrs


def define(
    name: str,
    operands: str = "",
    attrs: str = "",
    regions: str = "",
    results: str = "1",
    category: str = "elementwise",
    syntax: Any = None,
    terminator: bool = False,
    summary: str = "",
    same_variadic_size: bool = False,
) -> OpDef:
    if name in OPS:
        raise ValueError(f"op {name} is defined twice")
    opdef = OpDef(
        name,
        _parse_operands(operands),
        _parse_attrs(attrs),
        tuple(regions.split()),
        results,
        category,
        None,
        terminator,
        summary,
        same_variadic_size,
    )
    if syntax is not None:
        opdef.syntax = syntax.bind(opdef)
    OPS[name] = opdef
    return opdef


def lookup(name: str) -> Optional[OpDef]:
    return OPS.get(name)


def category_of(name: str) -> str:
    opdef = OPS.get(name)
    if opdef is not None:
        return opdef.category
    if name.startswith("chlo."):
        return "chlo"
    return "custom_call" if "custom" in name else "structural"


__all__ = ["AttrSpec", "OpDef", "OPS", "define", "lookup", "category_of", "CATEGORIES"]
