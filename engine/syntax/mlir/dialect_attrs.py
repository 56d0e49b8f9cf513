"""Dialect attributes: `#stablehlo<enum V>`, `#stablehlo.gather<...>`, `#stablehlo.conv<...>`,
`#sdy.sharding<...>`, `#sdy.mesh<...>`; anything else is kept verbatim as an OpaqueAttr."""
from __future__ import annotations

from typing import Any

from ...ir import attributes as A

ENUMS: dict[str, tuple[str, ...]] = {
    "comparison_direction": ("EQ", "NE", "GE", "GT", "LE", "LT"),
    "comparison_type": ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"),
    "precision": ("DEFAULT", "HIGH", "HIGHEST"),
    "fft_type": ("FFT", "IFFT", "RFFT", "IRFFT"),
    "transpose": ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"),
    "rng_distribution": ("UNIFORM", "NORMAL"),
    "rng_algorithm": ("DEFAULT", "THREE_FRY", "PHILOX"),
    ".result_accuracy_mode": ("DEFAULT", "HIGHEST", "TOLERANCE"),
}


def parse_dialect_attribute(p, name: str, start: int) -> Any:
    """Called with the cursor just after `#name<`."""
    if name == "sdy" and p.accept_keyword("manual_axes"):
        axes = parse_sdy_axis_names(p)
        p.expect(">")
        return A.SdyManualAxes(axes)
    if "." not in name:
        return _enum_attribute(p, name, start)
    dialect, _, mnemonic = name.partition(".")
    if dialect == "stablehlo":
        if mnemonic == "conv":
            return parse_conv_body(p, start)
        if mnemonic == "bounds":
            return _bounds(p)
        if mnemonic in ENUM_MNEMONICS:
            value = p.bare_id(f"a {mnemonic} value")
            p.expect(">")
            return A.EnumAttr(value, "." + mnemonic, dialect)
        cls = A.STRUCT_ATTRS.get(name)
        if cls is not None:
            params = parse_params(p)
            try:
                return cls.from_params(params)
            except (KeyError, TypeError) as e:
                p.error(f"#{name} has no parameter {e}", start)
    if dialect == "sdy":
        if mnemonic == "sharding":
            sharding = parse_sdy_sharding_body(p)
            p.expect(">", "to close #sdy.sharding<...>")
            return sharding
        if mnemonic == "sharding_per_value":
            per_value = parse_sdy_per_value(p)
            p.expect(">")
            return A.SdyShardingPerValue(per_value)
        if mnemonic == "mesh":
            mesh = parse_sdy_mesh_body(p)
            p.expect(">")
            return mesh
    p.balanced("<", ">")
    return A.OpaqueAttr(p.text[start:p.pos])


ENUM_MNEMONICS = {"result_accuracy_mode"}


def _enum_attribute(p, dialect: str, start: int) -> A.EnumAttr:
    kind = p.bare_id("an enum kind such as comparison_direction")
    value = p.bare_id(f"a {kind} value")
    p.expect(">", "to close the enum attribute")
    allowed = ENUMS.get(kind)
    if allowed is not None and value not in allowed:
        p.error(f"'{value}' is not a {kind}; expected one of {', '.join(allowed)}", start)
    return A.EnumAttr(value, kind, dialect)


def parse_params(p) -> dict[str, Any]:
    """`k = v, k = v>` (the closing `>` consumed); `?` stands for an unknown (None). A trailing
    comma before `>` is accepted, as StableHLO's struct-attribute parser accepts it."""
    params: dict[str, Any] = {}
    if p.accept(">"):
        return params
    while True:
        if p.accept(">"):  # `k = v,>`
            return params
        p.skip_ws()
        offset = p.pos
        key = p.bare_id("a parameter name")
        if key in params:
            p.error(f"parameter '{key}' given twice", offset)
        p.expect("=", f"after '{key}'")
        params[key] = _param_value(p)
        if not p.accept(","):
            break
    p.expect(">", "to close the attribute parameters")
    return params


def _param_value(p) -> Any:
    if p.accept("?"):
        return None
    if p.peek("["):
        p.accept("[")
        items = []
        if not p.accept("]"):
            items.append(_param_value(p))
            while p.accept(","):
                items.append(_param_value(p))
            p.expect("]")
        return tuple(items)
    value = p.parse_attribute()
    if isinstance(value, A.IntegerAttr):
        return int(value)
    if isinstance(value, A.FloatAttr):
        return float(value)
    return value


def _bounds(p) -> A.TypeExtensions:
    bounds = []
    if not p.accept(">"):
        while True:
            bounds.append(None if p.accept("?") else p.integer("a bound or ?"))
            if not p.accept(","):
                break
        p.expect(">")
    return A.TypeExtensions(bounds=tuple(bounds))


# ---------------------------------------------------------------------------------------------
# Convolution dimension numbers: `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
# ---------------------------------------------------------------------------------------------


def parse_conv_body(p, start: int) -> A.ConvDimensionNumbers:
    if p.accept_keyword("raw"):
        params = parse_params(p)
        try:
            return A.ConvDimensionNumbers.from_params(params)
        except (KeyError, TypeError) as e:
            p.error(f"#stablehlo.conv has no parameter {e}", start)
    dims = parse_conv_dims(p)
    p.expect(">", "to close #stablehlo.conv<...>")
    return dims


def parse_conv_dims(p) -> A.ConvDimensionNumbers:
    p.skip_ws()
    offset = p.pos
    lhs = _conv_list(p, "bf")
    p.expect("x", "between the input and kernel layouts")
    rhs = _conv_list(p, "io")
    p.expect("->", "before the output layout")
    out = _conv_list(p, "bf")
    try:
        batch_in, feat_in, spatial_in = _layout(lhs, "b", "f")
        kin, kout, spatial_k = _layout(rhs, "i", "o")
        batch_out, feat_out, spatial_out = _layout(out, "b", "f")
    except ValueError as e:
        p.error(f"bad convolution layout: {e}", offset)
    if not (len(spatial_in) == len(spatial_k) == len(spatial_out)):
        p.error("input, kernel and output layouts have different numbers of spatial dimensions", offset)
    return A.ConvDimensionNumbers(
        batch_in, feat_in, spatial_in, kin, kout, spatial_k, batch_out, feat_out, spatial_out
    )


def _conv_list(p, letters: str) -> list[str]:
    p.expect("[", "to start a convolution layout")
    items = []
    if not p.accept("]"):
        while True:
            p.skip_ws()
            offset = p.pos
            token = p.opt_bare_id()
            if token is None:
                token = str(p.integer("a layout entry"))
            if token not in letters and not token.isdigit():
                p.error(f"'{token}' is not a layout entry (expected {', '.join(letters)} or a spatial index)", offset)
            items.append(token)
            if not p.accept(","):
                break
        p.expect("]")
    return items


def _layout(items: list[str], first: str, second: str):
    if items.count(first) != 1 or items.count(second) != 1:
        raise ValueError(f"each layout needs exactly one '{first}' and one '{second}'")
    spatial_entries = sorted((int(t), i) for i, t in enumerate(items) if t.isdigit())
    if [s for s, _ in spatial_entries] != list(range(len(spatial_entries))):
        raise ValueError("spatial dimensions must be numbered 0, 1, ... once each")
    return items.index(first), items.index(second), tuple(i for _, i in spatial_entries)


def format_conv_dims(d: A.ConvDimensionNumbers) -> str:
    def layout(rank, a, a_name, b, b_name, spatial):
        items = ["?"] * rank
        items[a] = a_name
        items[b] = b_name
        for k, dim in enumerate(spatial):
            items[dim] = str(k)
        return "[" + ", ".join(items) + "]"

    rank = len(d.input_spatial_dimensions) + 2
    return (
        layout(rank, d.input_batch_dimension, "b", d.input_feature_dimension, "f", d.input_spatial_dimensions)
        + "x"
        + layout(rank, d.kernel_input_feature_dimension, "i", d.kernel_output_feature_dimension, "o", d.kernel_spatial_dimensions)
        + "->"
        + layout(rank, d.output_batch_dimension, "b", d.output_feature_dimension, "f", d.output_spatial_dimensions)
    )


# ---------------------------------------------------------------------------------------------
# Shardy
# ---------------------------------------------------------------------------------------------


def parse_sdy_axis_names(p) -> tuple[str, ...]:
    """`{"x", "y"}`"""
    return tuple(p.delimited("{", lambda: p.string("an axis name"), "}", "the axis names"))


def parse_sdy_mesh_body(p) -> A.SdyMesh:
    p.expect("[", "to start the mesh axes")
    axes = []
    if not p.accept("]"):
        while True:
            name = p.string("an axis name")
            p.expect("=")
            axes.append((name, p.integer("an axis size")))
            if not p.accept(","):
                break
        p.expect("]")
    device_ids: list[int] = []
    if p.accept(","):
        p.expect_keyword("device_ids")
        p.expect("=")
        p.expect("[")
        if not p.accept("]"):
            device_ids.append(p.integer())
            while p.accept(","):
                device_ids.append(p.integer())
            p.expect("]")
    return A.SdyMesh(tuple(axes), tuple(device_ids))


def _sdy_axis(p) -> A.SdyAxisRef:
    name = p.string("an axis name such as \"x\"")
    sub = None
    if p.peek(":("):
        p.accept(":")
        p.expect("(")
        pre = p.integer()
        p.expect(")")
        sub = (pre, p.integer())
    return A.SdyAxisRef(name, sub)


def _sdy_axis_set(p) -> tuple[A.SdyAxisRef, ...]:
    return tuple(p.delimited("{", lambda: _sdy_axis(p), "}", "the axis set"))


def parse_sdy_sharding_body(p) -> A.SdySharding:
    p.skip_ws()
    if p.peek("@"):
        mesh: Any = A.SymbolRef(p.symbol())
    elif p.accept_keyword("mesh"):
        p.expect("<")
        mesh = parse_sdy_mesh_body(p)
        p.expect(">")
    else:
        mesh = p.parse_attribute("a mesh name such as @mesh")
    p.expect(",", "after the mesh")
    p.expect("[", "to start the dimension shardings")
    dims = []
    if not p.accept("]"):
        while True:
            dims.append(_sdy_dim(p))
            if not p.accept(","):
                break
        p.expect("]")
    replicated: tuple = ()
    unreduced: tuple = ()
    while p.accept(","):
        key = p.bare_id("replicated or unreduced")
        p.expect("=")
        if key == "replicated":
            replicated = _sdy_axis_set(p)
        elif key == "unreduced":
            unreduced = _sdy_axis_set(p)
        else:
            p.error(f"unknown sharding part '{key}'")
    return A.SdySharding(mesh, tuple(dims), replicated, unreduced)


def _sdy_dim(p) -> A.SdyDimSharding:
    p.expect("{", "to start a dimension sharding")
    axes = []
    closed = True
    if not p.accept("}"):
        while True:
            if p.accept("?"):
                closed = False
            else:
                axes.append(_sdy_axis(p))
            if not p.accept(","):
                break
        p.expect("}")
    priority = None
    p.skip_ws()
    if p.text.startswith("p", p.pos) and p.text[p.pos + 1:p.pos + 2].isdigit():
        p.pos += 1
        priority = p.integer()
    return A.SdyDimSharding(tuple(axes), closed, priority)


def parse_sdy_per_value(p) -> tuple[A.SdySharding, ...]:
    """`[<@mesh, [...]>, <@mesh, [...]>]`"""
    p.expect("[")
    shardings = []
    if not p.accept("]"):
        while True:
            p.expect("<")
            shardings.append(parse_sdy_sharding_body(p))
            p.expect(">")
            if not p.accept(","):
                break
        p.expect("]")
    return tuple(shardings)
