"""Single-op kernels: one op of a program as a StableHLO module XLA compiles, and the cache of
what XLA compiled.

The XLA backend (backend.py) runs an op by compiling a module whose `@main` is that op alone;
real collectives (collectives.py) build group-local modules the same way with rewritten
attributes. The two entry points, stable for both:

- `single_op_module(op, module=None, attributes=None, module_attributes=None) -> str`: the text of

      module @kernel attributes {module_attributes} {
        <the module-level symbols the op names: an sdy.mesh, a comparator function>
        func.func public @main(%arg0: <operand 0 type>, ...) -> (<result types>) {
          %result0, ... = "<op>"(%arg0, ...) <{...}> ({<its regions>}) {...} : (...) -> (...)
          "func.return"(%result0, ...)
        }
      }

  `@main`'s parameters are the op's operands and its results the op's results. XLA refuses a
  body that reads a value from outside the op (`captured_values(op)`), so such an op is not
  given to XLA (the backend's interpreter runs it). The op is printed in
  generic form (every op, known or not, has one), with `attributes` in place of its own when
  given, and every value inside it renamed in order, so two sites of the same op signature give
  the same text (one compile). `module` is where the op's symbols are looked up.
- `compiled(text, devices, replicas=1, partitions=1, platform="cpu") -> Executable`: `text`
  compiled by `runtime(platform)` for `devices` (runtime.py's Runtime.compile), once per
  (text, platform, device ids, replicas, partitions) in this process; `KERNELS.compiles` and
  `KERNELS.seconds` count what XLA was asked to compile.
"""
from __future__ import annotations

import re
import threading
import time
from typing import Any, Iterable, Optional, Sequence

from ...ir.core import Module, Operation, Value
from ...ir.types import FunctionType
from ...syntax.mlir import attribute_text
from ...syntax.mlir.printer import Printer
from .runtime import Executable, runtime

# A symbol reference in printed text: `@name` or `@"quoted name"`.
_SYMBOL = re.compile(r'@(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_][A-Za-z0-9_$.]*))')


def captured_values(op: Operation) -> list[Value]:
    """Values the op's regions use that are defined outside the op (StableHLO lets a body read
    enclosing values, XLA's exporter does not), in order of first use."""
    inside: set[int] = set()
    for region in op.regions:
        for block in region.blocks:
            inside.update(id(a) for a in block.arguments)
    for nested in op.walk():
        if nested is not op:
            inside.update(id(r) for r in nested.results)
    captured: dict[int, Value] = {}
    for nested in op.walk():
        if nested is op:
            continue
        for value in nested.operands:
            if id(value) not in inside:
                captured.setdefault(id(value), value)
    return list(captured.values())


def single_op_module(op: Operation, module: Optional[Module] = None, attributes: Optional[dict] = None,
                     module_attributes: Optional[dict] = None) -> str:
    """The text of a module whose `@main` runs `op` alone (see the module docstring)."""
    parameters = list(op.operands)
    printer = Printer(generic=True)
    for i, value in enumerate(parameters):
        printer.rename(value, f"%arg{i}")
    _number_inside(printer, op)
    printer.used.update(printer.names.values())
    printer.depth = 2
    body = printer.op(op if attributes is None else _WithAttributes(op, attributes))
    results = [printer.name(r) for r in op.results]
    signature = ", ".join(f"%arg{i}: {v.type}" for i, v in enumerate(parameters))
    result_types = ", ".join(str(r.type) for r in op.results)
    returned = (f'    "func.return"({", ".join(results)}) : '
                f'{FunctionType(tuple(r.type for r in op.results), ())}')
    head = "module @kernel"
    if module_attributes:
        head += " attributes " + attribute_text.format_attr_dict(module_attributes)
    lines = [head + " {"]
    lines.extend(_symbols_named(body, module))
    lines.append(f"  func.func public @main({signature}) -> ({result_types}) {{")
    lines.append(body)
    lines.append(returned)
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _number_inside(printer: Printer, op: Operation) -> None:
    """Name the op's results `%result<i>` and every value inside its regions `%v<k>` in order, so
    the text depends on what the op computes, not on the names its source gave."""
    for i, result in enumerate(op.results):
        printer.rename(result, f"%result{i}")
    count = 0
    for nested in op.walk():
        values: list[Value] = []
        for region in nested.regions:
            for block in region.blocks:
                values.extend(block.arguments)
        if nested is not op:
            values.extend(nested.results)
        for value in values:
            printer.rename(value, f"%v{count}")
            count += 1


def _symbols_named(text: str, module: Optional[Module]) -> list[str]:
    """The module-level ops (meshes, functions) that `text` names, and those they name in turn,
    printed at module level."""
    if module is None:
        return []
    table = {}
    for top in module.operations:
        name = _symbol_of(top)
        if name is not None:
            table[name] = top
    printed: list[str] = []
    seen: set[str] = set()
    pending = list(_names_in(text))
    while pending:
        name = pending.pop(0)
        if name in seen or name not in table:
            continue
        seen.add(name)
        printer = Printer(generic=True)
        printer.depth = 1
        top_text = printer.op(table[name])
        printed.append(top_text)
        pending.extend(_names_in(top_text))
    return printed


def _names_in(text: str) -> Iterable[str]:
    for match in _SYMBOL.finditer(text):
        yield match.group(1) if match.group(1) is not None else match.group(2)


def _symbol_of(op: Operation) -> Optional[str]:
    name = op.attributes.get("sym_name")
    if name is None:
        return None
    return getattr(name, "value", None) or str(name).strip('"')


class _WithAttributes:
    """An op seen with other attributes (what the printer reads of it), for group-local modules."""

    def __init__(self, op: Operation, attributes: dict):
        self._op = op
        self.attributes = attributes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._op, name)


class KernelCache:
    """Compiled executables by (module text, platform, device ids, replicas, partitions)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executables: dict[tuple, Executable] = {}
        self.compiles = 0  # how many modules XLA was asked to compile
        self.seconds = 0.0  # the time those compiles took

    def compiled(self, text: str, devices: Sequence[Any], replicas: int = 1, partitions: int = 1,
                 platform: str = "cpu", what: str = "a single-op module") -> Executable:
        key = (text, platform, tuple(d.id for d in devices), replicas, partitions)
        with self._lock:
            found = self._executables.get(key)
            if found is not None:
                return found
            start = time.perf_counter()
            executable = runtime(platform).compile(text, devices, replicas, partitions, what=what)
            self.seconds += time.perf_counter() - start
            self.compiles += 1
            self._executables[key] = executable
            return executable

    def clear(self) -> None:
        with self._lock:
            self._executables.clear()
            self.compiles = 0
            self.seconds = 0.0

    def __len__(self) -> int:
        return len(self._executables)


KERNELS = KernelCache()


def compiled(text: str, devices: Sequence[Any], replicas: int = 1, partitions: int = 1,
             platform: str = "cpu", what: str = "a single-op module") -> Executable:
    """`text` compiled for `devices`, once per process (KERNELS)."""
    return KERNELS.compiled(text, devices, replicas, partitions, platform, what)


__all__ = ["KERNELS", "KernelCache", "captured_values", "compiled", "single_op_module"]
