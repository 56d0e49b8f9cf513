"""Reading the `#sdy...` MLIR attribute text Shardy's round-trip form keeps in HLO frontend
attributes (shardy.py), with the MLIR frontend's attribute reader, so an error points at the
character inside the HLO file (through the string's escapes) and says which attribute it is in."""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from ...ir.attributes import SdyMesh, SdySharding, SymbolRef
from ...ir.core import Module, Operation
from ...ir.errors import ParseError, SourcePos
from ..mlir.value_parser import ValueParser

MESHES_KEY = "xla.sdy.meshes"


def frontend_attributes(op: Operation) -> Mapping[str, str]:
    return op.attributes.get("mhlo.frontend_attributes") or {}


def parse_sdy_value(text: str, kind: type, expected: str, pos: Optional[SourcePos], key: str, where: str) -> Any:
    """The MLIR attribute `text` (the value of frontend attribute `key` of the instruction at `pos`),
    which must be a `kind`. Errors are ParseErrors at the character in the file when the value can
    be found on the instruction's line, else at `pos`."""
    offsets = value_offsets(pos, key, text)

    def place(offset: int) -> Optional[SourcePos]:
        if offsets is None or pos is None:
            return pos
        return SourcePos(pos.source, offsets[min(max(offset, 0), len(offsets) - 1)])

    reader = ValueParser(text, pos.filename if pos is not None else "<string>")
    try:
        value = reader.parse_attribute(expected)
        if not reader.at_end():
            reader.expected(f"the end of {key} after {expected}")
    except ParseError as error:
        offset = error.pos.offset if error.pos is not None else 0
        raise ParseError(f"{where}: in {key}: {error.message}", place(offset), error.notes) from None
    if not isinstance(value, kind):
        raise ParseError(f"{where}: {key} must be {expected}, not {text!r}", place(0))
    return value


def value_offsets(pos: Optional[SourcePos], key: str, text: str) -> Optional[list[int]]:
    """The file offset of each character of `text`, the value of `key=` on the line at `pos`
    (a quoted string, unescaped, or a `{...}` blob as written), plus its end; None when not found."""
    if pos is None:
        return None
    source = pos.source.text
    end = source.find("\n", pos.offset)
    end = len(source) if end < 0 else end
    for match in re.compile(r"(?<![\w.])" + re.escape(key) + r"\s*=\s*").finditer(source, pos.offset, end):
        start = match.end()
        if source.startswith('"', start):
            offsets = _string_offsets(source, start, text)
        elif source.startswith(text, start):
            offsets = list(range(start, start + len(text) + 1))
        else:
            offsets = None
        if offsets is not None:
            return offsets
    return None


_HEX_ESCAPE = re.compile(r"[0-9a-fA-F]{2}")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _string_offsets(source: str, quote: int, text: str) -> Optional[list[int]]:
    """Walk the quoted string opening at `quote` (escapes `\\"`, `\\n`, MLIR's `\\22`); the offset
    of each character it stands for, when it spells `text`."""
    chars: list[str] = []
    offsets: list[int] = []
    i = quote + 1
    while i < len(source) and source[i] != '"':
        offsets.append(i)
        if source[i] == "\\" and _HEX_ESCAPE.match(source, i + 1):
            chars.append(chr(int(source[i + 1:i + 3], 16)))
            i += 3
        elif source[i] == "\\":
            chars.append(_ESCAPES.get(source[i + 1:i + 2], source[i + 1:i + 2]))
            i += 2
        else:
            chars.append(source[i])
            i += 1
    offsets.append(i)
    return offsets if "".join(chars) == text else None


# -- meshes ----------------------------------------------------------------------------------------


def read_meshes(module: Module) -> dict[str, SdyMesh]:
    """The meshes of `xla.sdy.meshes` (`{mesh = #sdy.mesh<["x"=4]>, ...}`) by name: from the HLO
    header's frontend_attributes, or the module's `mhlo.frontend_attributes` (XLA's MLIR form)."""
    found = _header_meshes(module) or _module_attribute_meshes(module)
    if found is None:
        return {}
    text, pos = found
    where = f"module {module.name or ''}".rstrip()
    table = parse_sdy_value(text, dict, 'a dictionary of meshes such as {mesh = #sdy.mesh<["x"=4]>}', pos,
                            MESHES_KEY, where)
    for name, mesh in table.items():
        if not isinstance(mesh, SdyMesh):
            raise ParseError(f"{where}: {MESHES_KEY} gives '{name}' the value {mesh}, not a #sdy.mesh<...>", pos)
    return dict(table)


def _header_meshes(module: Module) -> Optional[tuple[str, Optional[SourcePos]]]:
    """From the HLO header (`hlo.header`, raw attribute texts): the meshes' `{...}` text, and the
    position of the header's frontend_attributes, on whose line value_offsets finds it."""
    header = module.attributes.get("hlo.header") or {}
    raw = header.get("frontend_attributes")
    if raw is None:
        return None
    raw = str(raw)
    pos = None
    if module.source is not None:
        offset = module.source.text.find(raw, module.pos.offset if module.pos is not None else 0)
        pos = SourcePos(module.source, max(offset, 0))
    from .attr_values import decode_frontend_attributes

    attrs = decode_frontend_attributes(raw, pos) if pos is not None else {}
    return (str(attrs[MESHES_KEY]), pos) if MESHES_KEY in attrs else None


def _module_attribute_meshes(module: Module) -> Optional[tuple[str, Optional[SourcePos]]]:
    attrs = module.attributes.get("mhlo.frontend_attributes") or {}
    if MESHES_KEY not in attrs:
        return None
    return str(attrs[MESHES_KEY]), module.pos


def mesh_size(mesh: SdyMesh) -> int:
    size = 1
    for _, axis in mesh.axes:
        size *= axis
    return size


def check_meshes(shardings: tuple[SdySharding, ...], meshes: Mapping[str, SdyMesh], where: str,
                 pos: Optional[SourcePos]) -> None:
    """Every sharding names a mesh the module defines."""
    for sharding in shardings:
        mesh = sharding.mesh
        if isinstance(mesh, SymbolRef) and mesh.name not in meshes:
            known = ", ".join("@" + n for n in meshes) or "none (the module has no xla.sdy.meshes)"
            raise ParseError(f"{where} names mesh @{mesh.name}, which the module does not define (meshes: {known})",
                             pos)


__all__ = ["check_meshes", "frontend_attributes", "mesh_size", "parse_sdy_value", "read_meshes", "value_offsets"]
