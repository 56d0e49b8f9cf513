"""Device-set attributes of HLO text: replica groups, source-target pairs, shardings and the
sharding domains of `domain` instructions.

Replica groups come in three spellings (../shared/docs/hlo_text.md §6 "Replica groups"), all
decoded to the explicit list of groups (`[]` for `{}`, which means one group of every id):
- explicit `{{0,1},{2,3}}`;
- iota `[G,S]<=[d0,d1,...]T(p0,p1,...)`: iota(prod d).reshape(d).transpose(p).reshape(G, S);
- mesh axes `mesh['x'=2,'y'=4][, device_ids=(...)] {'x'}`: the mesh's device array with the
  listed (sub-)axes moved last, flattened and cut into groups of their combined size.
Shardings (§6 "Sharding") are checked against XLA's grammar and kept as the text the IR stores
in `mhlo.sharding` (engine/ir/sharding.py reads it for placement).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ...ir.errors import SourcePos
from ...ir.mesh_groups import mesh_axis_groups
from .attr_basic import read_int_list_list
from .attr_reader import AttrReader, read_whole
from .attr_records import read_metadata

# A mesh or a group list larger than this is refused rather than materialised.
MAX_DEVICES = 1 << 20


# -- iota device arrays ----------------------------------------------------------------------------


def _read_iota(r: AttrReader, count: int) -> np.ndarray:
    """`<=[d0,...]` with an optional `T(p0,...)`, read after the `<=`: the device ids in order."""
    start = r.mark()
    reshape = r.int_list("[", "]")
    if not reshape or any(d < 0 for d in reshape):
        r.error("expected a non-empty list of non-negative sizes after '<='", start)
    perm: tuple[int, ...] = tuple(range(len(reshape)))
    if r.peek(2) == "T(":
        r.i += 1
        perm_start = r.mark()
        perm = r.int_list("(", ")")
        if sorted(perm) != list(range(len(reshape))):
            r.error(f"T(...) must be a permutation of 0..{len(reshape) - 1}", perm_start)
    total = math.prod(reshape)
    if total != count:
        r.error(f"the iota [{','.join(map(str, reshape))}] holds {total} devices, expected {count}", start)
    if total > MAX_DEVICES:
        r.error(f"{total} devices is more than hlodbg reads ({MAX_DEVICES})", start)
    return np.arange(total).reshape(reshape).transpose(perm).reshape(-1)


# -- replica groups --------------------------------------------------------------------------------


def decode_replica_groups(text: str, pos: SourcePos, what: str = "replica_groups") -> list[list[int]]:
    """Any of the three forms → list of groups (rows), `[]` for `{}`."""
    r = AttrReader(text, pos, what)
    head = r.peek()
    if head == "{":
        groups = read_int_list_list(r)
    elif head == "[":
        start = r.mark()
        shape = r.int_list("[", "]")
        if len(shape) != 2:
            r.error(f"expected [groups,group_size] before '<=', found {len(shape)} sizes", start)
        r.expect("<=")
        groups = _read_iota(r, math.prod(shape)).reshape(shape).tolist()
    elif r.peek(4) == "mesh":
        groups = _read_mesh_groups(r)
    else:
        r.expected("replica groups: {{...},...}, [G,S]<=[...] or mesh[...] {...}")
    r.end()
    return groups


def decode_source_target_pairs(text: str, pos: SourcePos,
                               what: str = "source_target_pairs") -> list[tuple[int, int]]:
    """`{{0,1},{1,2}}` → [(source, target), ...]."""
    r = AttrReader(text, pos, what)

    def pair() -> tuple[int, int]:
        start = r.mark()
        values = r.int_list()
        if len(values) != 2:
            r.error(f"expected a {{source,target}} pair, found {len(values)} numbers", start)
        return values[0], values[1]

    pairs = r.list("{", "}", pair)
    r.end()
    return pairs


@dataclass(frozen=True)
class Mesh:
    """A named device mesh as HLO text writes it: axis names and sizes, and the device ids in
    row-major order over the axes."""

    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...]


def _axis_name(r: AttrReader) -> str:
    """`'x'`, `"x"` or `x` (jaxlib 0.10.2 quotes names, XLA's Mesh::ToString does not)."""
    if r.peek() in ("'", '"'):
        return r.string("an axis name")
    return r.word("an axis name")


def read_mesh(r: AttrReader) -> Mesh:
    """`mesh[x=2,'y'=4]` with an optional `, device_ids=(...)` (ids or `[..]T(..)`)."""
    r.expect("mesh")
    axes_at = r.mark()
    if r.peek() != "[":
        r.expected("'[' after mesh")
    axes: list[tuple[str, int]] = []

    def axis() -> None:
        start = r.mark()
        name = _axis_name(r)
        if any(name == n for n, _ in axes):
            r.error(f"mesh axis '{name}' appears twice", start)
        r.expect("=", "'=' and the axis size")
        size_at = r.mark()
        size = r.int("the axis size")
        if size <= 0:
            r.error("a mesh axis size must be positive", size_at)
        axes.append((name, size))

    r.list("[", "]", axis)
    total = math.prod(size for _, size in axes)
    if total > MAX_DEVICES:
        r.error(f"the mesh has {total} devices, more than hlodbg reads ({MAX_DEVICES})", axes_at)
    ids: tuple[int, ...] = tuple(range(total))
    save = r.mark()
    if r.accept(","):
        if r.peek(len("device_ids")) != "device_ids":
            r.i = save  # the comma belongs to whoever reads on
        else:
            r.attribute_name()
            r.expect("(", "'(' to start device_ids")
            start = r.mark()
            if r.peek() == "[":
                ids = tuple(int(i) for i in _read_iota(r, total))
                r.expect(")", "')' to end device_ids")
            else:
                listed: list[int] = []
                if not r.accept(")"):
                    listed.append(r.int("a device id"))
                    while r.accept(","):
                        listed.append(r.int("a device id"))
                    r.expect(")", "',' or ')' to end device_ids")
                ids = tuple(listed)
                if len(ids) != total:
                    r.error(f"device_ids lists {len(ids)} devices; the mesh has {total}", start)
                if len(set(ids)) != len(ids):
                    r.error("device_ids lists a device twice", start)
    return Mesh(tuple(axes), ids)


@dataclass(frozen=True)
class AxisRef:
    """An axis, or the sub-axis `name:(pre)size` of it: the `size` factor after the leading `pre`."""

    name: str
    pre: int = 1
    size: Optional[int] = None


def read_axis_ref(r: AttrReader, mesh: Mesh) -> AxisRef:
    start = r.mark()
    if r.peek().isdigit():
        index = r.int()
        if index >= len(mesh.axes):
            r.error(f"axis index {index} is past the mesh's {len(mesh.axes)} axes", start)
        name = mesh.axes[index][0]
    else:
        name = _axis_name(r)
    sizes = dict(mesh.axes)
    if name not in sizes:
        r.error(f"the mesh has no axis '{name}' (axes: {', '.join(n for n, _ in mesh.axes)})", start)
    if not r.accept(":"):
        return AxisRef(name)
    r.expect("(", "'(' and the sub-axis pre-size")
    pre = r.int("the sub-axis pre-size")
    r.expect(")")
    size = r.int("the sub-axis size")
    if pre <= 0 or size <= 0 or sizes[name] % (pre * size):
        r.error(f"sub-axis ({pre}){size} does not divide axis '{name}' of size {sizes[name]}", start)
    return AxisRef(name, pre, size)


def _read_mesh_groups(r: AttrReader) -> list[list[int]]:
    mesh = read_mesh(r)
    start = r.mark()
    refs = r.list("{", "}", lambda: read_axis_ref(r, mesh))
    try:
        return mesh_axis_groups(mesh.axes, mesh.device_ids, [(ref.name, ref.pre, ref.size) for ref in refs])
    except ValueError as e:
        r.error(str(e), start)


# -- shardings -------------------------------------------------------------------------------------

_SHARDING_WORDS = ("replicated", "manual", "maximal", "unknown", "unreduced")
_SUBGROUP_KINDS = ("maximal", "replicated", "manual", "unreduced")


def decode_sharding(text: str, pos: SourcePos, what: str = "sharding") -> str:
    """Check `text` is a sharding XLA accepts; return it (stripped) as the `mhlo.sharding` string."""
    r = AttrReader(text, pos, what)
    r.expect("{", "'{' to start the sharding")
    if r.peek() in ("{", "}"):
        if not r.accept("}"):
            while True:
                r.expect("{", "'{' to start a tuple element's sharding")
                _read_single_sharding(r)
                if not r.accept(","):
                    break
            r.expect("}", "',' or '}' to end the tuple sharding")
    else:
        _read_single_sharding(r)
    r.end()
    return text.strip()


def _read_single_sharding(r: AttrReader) -> None:
    """After the `{` of one sharding, through its `}`."""
    start = r.mark()
    if r.peek(4) == "mesh" or r.peek(12) == "maximal_mesh":
        _read_named_sharding(r)
        return
    kinds: list[str] = []
    devices: Optional[int] = None  # how many devices the text assigned
    explicit_count: Optional[int] = None  # tiles of a devices= that lists its ids
    seen: set[str] = set()
    while not r.accept("}"):
        if r.at_end():
            r.expected("'}' to end the sharding")
        at = r.mark()
        word = r.word("a sharding part (replicated, manual, maximal, devices=, ...)")
        if word in seen:
            r.error(f"'{word}' appears twice in the sharding", at)
        seen.add(word)
        if word in _SHARDING_WORDS:
            kinds.append(word)
        elif word == "last_tile_dim_replicate":
            pass
        elif word in ("shard_as", "shard_like"):
            r.int(f"the {word} group id")
        elif r.text.startswith("=", r.i):
            r.i += 1
            if word == "device":
                r.int("the device id")
                devices = 1
            elif word == "devices":
                devices, explicit = _read_tile_assignment(r)
                explicit_count = devices if explicit else None
            elif word == "metadata":
                _read_sharding_metadata(r)
            elif word == "last_tile_dims":
                r.list("{", "}", lambda: _read_subgroup_kind(r))
            else:
                r.error(f"unknown sharding attribute '{word}='; expected device=, devices=, metadata= "
                        "or last_tile_dims=", at)
        else:
            r.error(f"unexpected '{word}' in the sharding", at)
    if len(kinds) > 1:
        r.error(f"a sharding is one of {', '.join(_SHARDING_WORDS)}; found {' and '.join(kinds)}", start)
    kind = kinds[0] if kinds else "tiled"
    if "last_tile_dim_replicate" in seen and "last_tile_dims" in seen:
        r.error("a sharding has last_tile_dim_replicate or last_tile_dims, not both", start)
    if kind == "maximal" and devices != 1:
        r.error("a maximal sharding needs exactly one device (device=N)", start)
    if kind not in ("maximal", "tiled") and devices is not None:
        r.error(f"a {kind} sharding assigns no devices", start)
    if kind == "tiled" and "devices" not in seen:
        r.error("a tiled sharding needs devices=[dims]...", start)
    if kind == "tiled" and explicit_count is not None and explicit_count <= 1:
        r.error("a tiled sharding that lists its devices needs more than one", start)


def _read_tile_assignment(r: AttrReader) -> tuple[int, bool]:
    """`[2,1,4]0,1,2,...` or `[2,4]<=[8]` / `<=[2,4]T(1,0)`; returns (tile count, whether the ids
    were listed)."""
    start = r.mark()
    dims = r.int_list("[", "]")
    if not dims or any(d <= 0 for d in dims):
        r.error("expected a non-empty list of positive tile counts", start)
    count = math.prod(dims)
    if count > MAX_DEVICES:
        r.error(f"{count} tiles is more than hlodbg reads ({MAX_DEVICES})", start)
    if r.accept("<="):
        _read_iota(r, count)
        return count, False
    ids_at = r.mark()
    ids = [r.int("the device ids of the tile assignment")]
    while r.accept(","):
        ids.append(r.int("a device id"))
    if len(ids) != count:
        r.error(f"the tile assignment [{','.join(map(str, dims))}] needs {count} devices, found {len(ids)}",
                ids_at)
    return count, True


def _read_subgroup_kind(r: AttrReader) -> str:
    start = r.mark()
    word = r.word("a subgroup kind (manual, replicated, ...)")
    if word not in _SUBGROUP_KINDS:
        r.error(f"expected a subgroup kind ({', '.join(_SUBGROUP_KINDS)}), found '{word}'", start)
    return word


def _read_sharding_metadata(r: AttrReader) -> None:
    """`{op_name="..."}` or a list `{{...}, {...}}`: checked as metadata."""
    if r.peek() == "{" and r.text[r.i + 1:].lstrip().startswith("{"):
        r.list("{", "}", lambda: read_metadata(r))
    else:
        read_metadata(r)


def _read_named_sharding(r: AttrReader) -> None:
    """`{mesh[...], [{'y'}, {}], replicated={..}, unreduced={..}, manual={..}, metadata={..}}`,
    `{mesh[...], replicated|manual|unreduced}` or `{maximal_mesh[device_id=0]}` (HEAD's ParseMesh)."""
    if r.accept("maximal_mesh"):
        r.expect("[")
        key_at = r.mark()
        if r.attribute_name() != "device_id":
            r.error("expected device_id= in maximal_mesh", key_at)
        r.int("the device id")
        r.expect("]")
        if r.accept(","):
            _expect_metadata(r)
        r.expect("}", "'}' to end the sharding")
        return
    mesh = read_mesh(r)
    r.accept(",")
    r.skip()
    word_at = r.mark()
    for word in ("replicated", "unreduced", "manual"):
        if r.text.startswith(word, r.i) and not r.text.startswith(word + "=", r.i):
            r.i += len(word)
            if r.accept(","):
                _expect_metadata(r)
            r.expect("}", "'}' to end the sharding")
            return
    r.i = word_at

    def dimension() -> None:
        closed = True

        def entry() -> None:
            nonlocal closed
            if not closed:
                r.expected("'}' after '?'")
            if r.accept("?"):
                closed = False
                return
            read_axis_ref(r, mesh)

        r.list("{", "}", entry)

    r.list("[", "]", dimension)
    seen: set[str] = set()
    while not r.accept("}"):
        r.expect(",", "',' or '}' in the named sharding")
        at = r.mark()
        name = r.unique_attribute_name(seen, "replicated=, unreduced=, manual= or metadata=",
                                       "'{name}=' appears twice in the sharding")
        seen.add(name)
        if name == "metadata":
            _read_sharding_metadata(r)
        elif name in ("replicated", "unreduced", "manual"):
            r.list("{", "}", lambda: read_axis_ref(r, mesh))
        else:
            r.error(f"unknown named-sharding attribute '{name}='; expected replicated, unreduced, "
                    "manual or metadata", at)


def _expect_metadata(r: AttrReader) -> None:
    at = r.mark()
    if r.attribute_name("metadata=") != "metadata":
        r.error("expected metadata= after ','", at)
    _read_sharding_metadata(r)


def decode_domain(text: str, pos: SourcePos, what: str = "domain") -> dict[str, str]:
    """`{kind="sharding", entry={maximal device=0}, exit={replicated}}` → kind and the two shardings."""
    def read(r: AttrReader) -> dict[str, str]:
        r.expect("{")
        out: dict[str, str] = {}
        for _ in r.fields("the domain"):
            at = r.mark()
            key = r.unique_attribute_name(out, "kind=, entry= or exit=", "'{name}=' appears twice in the domain")
            if key == "kind":
                value_at = r.mark()
                out[key] = r.string("the domain kind")
                if out[key] != "sharding":
                    r.error(f"unsupported domain kind '{out[key]}'; XLA has only \"sharding\"", value_at)
            elif key in ("entry", "exit"):
                r.skip()
                value_at = r.mark()
                blob = r.balanced()
                out[key] = decode_sharding(blob, r.pos(value_at), f"domain {key}")
            else:
                r.error(f"unknown domain field '{key}='; expected kind=, entry= or exit=", at)
        for key in ("kind", "entry", "exit"):
            if key not in out:
                r.error(f"the domain has no {key}=", 0)
        return out
    return read_whole(text, pos, what, read)
