"""Which layout each value of a program gets on a TPU, and where that choice came from.

In order of precedence:
1. "option": `--layout NAME=SPEC` (the `options` mapping): NAME is `arg<i>` / `%arg<i>` or
   `result<i>` of the entry function, SPEC an XLA layout (`{1,0:T(8,128)}` or `1,0:T(8,128)`).
2. "given": what the program says, honoured verbatim —
   - an XLA HLO module's layouts (machine/xla_shapes.py): every instruction's and parameter's
     shape (`f32[8,128]{1,0:T(8,128)}`, tiles, E(n), S(n) included) and the module's
     `entry_computation_layout` for the entry's parameters and results ("given by the HLO
     module"); a piece of layout hlodbg does not model is an error at the instruction;
   - JAX's `mhlo.layout_mode = "{1,0:T(8,128)}"` on an entry argument or result (result layouts
     go to the value the entry returns; "default" and "auto" leave the choice to the compiler);
   - a `stablehlo.custom_call @LayoutConstraint` (jax's `with_layout_constraint`): its
     `result_layouts` (minor-to-major dims; JAX cannot pass tiles to it yet) fix its result's
     dim order.
   An argument's layout wins over a result layout for a returned argument (a TPU would copy).
3. "default": tpu/default_layouts.py's rules (approximate).

A layout given or chosen without tiles (`{0,1}`, a LayoutConstraint) is completed with the
default tiling for its dim order, as the TPU compiler completes it: no TPU buffer is untiled.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ...ir.core import Function, Module, Operation, Value
from ...ir.dtypes import element_dtype
from ...ir.errors import HlodbgError
from ...ir.types import TensorType
from ..layout import Layout, LayoutError
from ..xla_shapes import entry_layouts, given_layout, shape_layout
from .default_layouts import default_layout
from .generations import TpuGeneration

SOURCES = ("given", "option", "default")
_COMPILER_CHOOSES = ("default", "auto")  # mhlo.layout_mode values that give no layout
HLO_MODULE = "the HLO module"
SMEM = 2  # the memory space of copy-start's sync flags in TPU HLO (../shared/docs/tpu.md §1.6)


class LayoutOptionError(HlodbgError):
    """A `--layout NAME=SPEC` that names no entry argument/result or does not fit it."""


@dataclass(frozen=True)
class AssignedLayout:
    layout: Layout
    source: str  # "given" (in the program), "option" (--layout) or "default"
    given_by: str = ""  # for "given" by an HLO module's text: "the HLO module"

    @property
    def origin(self) -> str:
        """`given by the HLO module`, `option`, `default`: the source as reports show it."""
        return f"given by {self.given_by}" if self.source == "given" and self.given_by else self.source

    @property
    def approximate(self) -> bool:
        """True when the layout is hlodbg's inference of what the TPU compiler would pick."""
        return self.source == "default"


class LayoutAssignment:
    """The layout of every tensor value of `module` on a TPU of `generation`."""

    def __init__(self, module: Module, generation: TpuGeneration,
                 options: Optional[Mapping[str, str]] = None):
        # Weakly: TpuBackend keeps assignments per module, alive only as long as the module is.
        self._module = weakref.ref(module)
        self.generation = generation
        self.options = dict(options or {})
        self._layouts: dict[Value, AssignedLayout] = {}
        entry = module.entry
        if entry is not None and not entry.is_declaration:
            self._assign_options(entry)
            self._assign_entry_attributes(entry)
            self._assign_hlo_shapes(entry)  # the parameters' own shapes, before the entry layout's
            self._assign_entry_computation_layout(module, entry)
        elif self.options:
            raise LayoutOptionError(f"--layout {next(iter(self.options))}=...: the program has no entry "
                                    "function to take it")
        for op in module.walk():
            if op.name == "stablehlo.custom_call" and _call_target(op) == "LayoutConstraint":
                self._assign_layout_constraint(op)
            self._assign_hlo_shapes(op)

    @property
    def module(self) -> Optional[Module]:
        return self._module()

    def layout_for(self, value: Value) -> AssignedLayout:
        """The layout of tensor `value` (worked out the first time, then a dict lookup)."""
        try:
            return self._layouts[value]
        except KeyError:
            pass
        type = value.type
        if not isinstance(type, TensorType) or not type.is_static:
            raise LayoutError(f"{value.name or 'a value'} of type {type} has no TPU layout (only "
                              "statically shaped tensors do)")
        assigned = AssignedLayout(default_layout(type.shape, element_dtype(type), self.generation), "default")
        self._layouts[value] = assigned
        return assigned

    # -- the pieces ---------------------------------------------------------------------------
    def _complete(self, layout: Layout, value: Value) -> Layout:
        """`layout` checked against `value`'s rank, tiled by default when it has no tiles (except
        in SMEM, S(2), where TPU dumps keep scalars untiled: `u32[]{:S(2)}`)."""
        type = value.type
        layout.validate(len(type.shape))
        if not layout.tiles and layout.memory_space != SMEM:
            tiled = default_layout(type.shape, element_dtype(type), self.generation,
                                   minor_to_major=layout.minor_to_major)
            layout = Layout(layout.minor_to_major, tiled.tiles, layout.tail_padding_alignment,
                            layout.element_size_in_bits or tiled.element_size_in_bits, layout.memory_space)
        layout.physical_bytes(type.shape, element_dtype(type))  # sub-tiles that pad, E(n) that does not fit
        return layout

    def _set(self, value: Value, layout: Layout, source: str, given_by: str = "") -> None:
        if value not in self._layouts and isinstance(value.type, TensorType) and value.type.is_static:
            complete = self._complete(layout, value)
            if given_by and complete.tiles != layout.tiles:  # a CPU module's `{1,0}` on a TPU
                given_by += ", tiled by default"
            self._layouts[value] = AssignedLayout(complete, source, given_by)

    def _assign_options(self, entry: Function) -> None:
        returned = _returned_values(entry)
        for name, spec in self.options.items():
            key = name.strip().lstrip("%")
            value = None
            for prefix, values in (("arg", entry.arguments), ("result", returned)):
                if key.startswith(prefix) and key[len(prefix):].isdigit():
                    number = int(key[len(prefix):])
                    if number >= len(values):
                        raise LayoutOptionError(
                            f"--layout {name}={spec}: @{entry.sym_name} has {len(values)} "
                            f"{'arguments' if prefix == 'arg' else 'results'} ({prefix}0..{prefix}{len(values) - 1})"
                            if values else f"--layout {name}={spec}: @{entry.sym_name} has no "
                            f"{'arguments' if prefix == 'arg' else 'results'}")
                    value = values[number]
            if value is None:  # an argument's own name, as hlodbg shows it (%points)
                value = next((argument for argument in entry.arguments if argument.name == f"%{key}"), None)
            if value is None:
                raise LayoutOptionError(f"--layout {name}={spec}: name an entry argument or result as "
                                        "arg0, %arg0, the argument's name (%x) or result0")
            if not isinstance(value.type, TensorType) or not value.type.is_static:
                raise LayoutOptionError(f"--layout {name}={spec}: {key} is a {value.type}, not a "
                                        "statically shaped tensor")
            try:
                layout = Layout.parse(spec)
                if value in self._layouts:
                    raise LayoutOptionError(f"--layout {name}={spec}: {key} already has the layout "
                                            f"{self._layouts[value].layout} from another --layout option")
                self._set(value, layout, "option")
            except LayoutError as error:
                raise LayoutOptionError(f"--layout {name}={spec}: {error.message} ({key} is "
                                        f"{value.type})") from None

    def _assign_entry_attributes(self, entry: Function) -> None:
        for number, value in enumerate(entry.arguments):
            self._given(entry.arg_attrs(number), value, entry, f"argument {number}")
        for number, value in enumerate(_returned_values(entry)):
            self._given(entry.res_attrs(number), value, entry, f"result {number}")

    def _given(self, attrs: Mapping[str, Any], value: Value, where: Any, what: str) -> None:
        mode = attrs.get("mhlo.layout_mode")
        if mode is None or str(mode).strip() in _COMPILER_CHOOSES:
            return
        try:
            self._set(value, Layout.parse(str(mode)), "given")
        except LayoutError as error:
            raise LayoutError(f"mhlo.layout_mode of {what} of @{where.sym_name}: {error.message}",
                              pos=getattr(where, "pos", None)) from None

    def _assign_layout_constraint(self, op: Operation) -> None:
        layouts = op.attr("result_layouts")
        if not layouts:
            return
        for value, dims in zip(op.results, layouts):
            array = getattr(dims, "array", dims)
            try:
                self._set(value, Layout(tuple(int(d) for d in array)), "given")
            except LayoutError as error:
                raise LayoutError(f"result_layouts of @LayoutConstraint: {error.message}", pos=op.pos) from None

    def _assign_hlo_shapes(self, op: Operation) -> None:
        """The layouts an HLO module's instructions and parameters carry (`xla_shape`)."""
        values = list(op.results)
        if isinstance(op, Function) and not op.is_declaration:
            values = list(op.arguments)
        for value in values:
            # Read even when the value already has its layout (a returned value takes the entry
            # layout): a piece hlodbg does not model is an error at the instruction either way.
            layout = given_layout(value)  # located at the instruction when the text is at fault
            if layout is not None and value not in self._layouts:
                self._set_located(value, layout, getattr(op, "pos", None))

    def _assign_entry_computation_layout(self, module: Module, entry: Function) -> None:
        """The module's `entry_computation_layout`: the layouts of the entry's parameters and of
        what it returns (an instruction's own shape text comes first for a parameter; the
        entry layout wins for the values returned, as XLA copies a root into it)."""
        parameters, results = entry_layouts(module, entry)
        returned = _returned_values(entry)
        for kind, texts, values in (("parameter", parameters, entry.arguments), ("result", results, returned)):
            if not texts:
                continue
            if len(texts) != len(values):
                raise LayoutError(f"entry_computation_layout gives {len(texts)} {kind} shape(s), @{entry.sym_name} has "
                                  f"{len(values)}", pos=entry.pos)
            for number, (text, value) in enumerate(zip(texts, values)):
                if not isinstance(value.type, TensorType) or not value.type.is_static or value in self._layouts:
                    continue
                try:
                    layout = shape_layout(text, value)
                except LayoutError as error:
                    raise LayoutError(f"entry_computation_layout, {kind} {number}: {error.message}",
                                      pos=entry.pos) from None
                if layout is not None:
                    self._set_located(value, layout, entry.pos)

    def _set_located(self, value: Value, layout: Layout, pos) -> None:
        try:
            self._set(value, layout, "given", HLO_MODULE)
        except LayoutError as error:
            raise LayoutError(f"{value.name or 'a value'}: {error.message}", pos=pos) from None


def _call_target(op: Operation) -> str:
    return str(op.attr("call_target_name", ""))


def _returned_values(entry: Function) -> list[Value]:
    terminator = entry.body.terminator
    return list(terminator.operands) if terminator is not None else []


__all__ = ["AssignedLayout", "LayoutAssignment", "LayoutOptionError", "SOURCES"]
