"""Type predicates and result-shape inference used by the verifier (core.py and the per-family checks).

Shapes are tuples whose entries are ints or None (a dynamic `?` dimension); a whole shape is None
for an unranked tensor. Unknown sizes are compatible with anything, so a dynamic program is only
rejected for what is certainly wrong. Quantized element types are compared loosely: the spec lets
quantized ops change scales and zero points (and storage widths, for dot and convolution), so two
quantized types, or a quantized type and a float, count as compatible element types here; the
ops whose spec rules are stricter use quantized_types.py.

Inference functions raise `Fail(message, constraint)`; the verifier adds the op name and position.
"""
from __future__ import annotations

from typing import Iterable, NoReturn, Optional, Sequence

from ..ir.types import (
    ComplexType,
    FloatType,
    IndexType,
    IntegerType,
    QuantizedType,
    TensorType,
    TokenType,
    TupleType,
    Type,
)

Dim = Optional[int]
Shape = Optional[tuple]


class Fail(Exception):
    """One broken constraint; `constraint` is the spec's label such as "C3" (or None); `notes`
    are extra lines the error shows under its message."""

    def __init__(self, message: str, constraint: Optional[str] = None, notes: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.constraint = constraint
        self.notes = tuple(notes)


def fail(message: str, constraint: Optional[str] = None, notes: tuple[str, ...] = ()) -> NoReturn:
    raise Fail(message, constraint, notes)


# ---------------------------------------------------------------------------------------------
# Element types
# ---------------------------------------------------------------------------------------------


def elem(t: Type) -> Type:
    return t.element if isinstance(t, TensorType) else t


def is_float_e(e: Type) -> bool:
    return isinstance(e, FloatType)


def is_complex_e(e: Type) -> bool:
    return isinstance(e, ComplexType)


def is_bool_e(e: Type) -> bool:
    return isinstance(e, IntegerType) and e.width == 1


def is_int_e(e: Type) -> bool:
    """Integer other than i1 (signless, signed or unsigned)."""
    return isinstance(e, (IntegerType, IndexType)) and not is_bool_e(e)


def is_signed_int_e(e: Type) -> bool:
    return is_int_e(e) and not (isinstance(e, IntegerType) and e.is_unsigned)


def is_unsigned_int_e(e: Type) -> bool:
    return isinstance(e, IntegerType) and e.is_unsigned and e.width != 1


def is_quant_e(e: Type) -> bool:
    return isinstance(e, QuantizedType)


def float_bits(e: FloatType) -> int:
    # Not FloatType.bit_width: it reads "f64" as a 6-bit type (its "f6" prefix test comes first).
    name = e.name
    if name in ("f16", "bf16"):
        return 16
    if name in ("f32", "f64"):
        return int(name[1:])
    if name == "tf32":
        return 19
    return e.bit_width


def num_bits(e: Type) -> Optional[int]:
    if isinstance(e, IntegerType):
        return e.width
    if isinstance(e, FloatType):
        return float_bits(e)
    if isinstance(e, ComplexType):
        return 2 * float_bits(e.element)
    if isinstance(e, QuantizedType):
        return e.storage.width
    if isinstance(e, IndexType):
        return 64
    return None


def real_part_type(e: Type) -> Type:
    return e.element if isinstance(e, ComplexType) else e


def element_compatible(a: Type, b: Type) -> bool:
    if a == b:
        return True
    if is_quant_e(a) or is_quant_e(b):
        other = b if is_quant_e(a) else a
        return is_quant_e(other) or is_float_e(other)
    return False


def hlo_element_compatible(a: Type, b: Type) -> bool:
    """The element types StableHLO's CompatibleOperandsAndResultElementType trait accepts together:
    equal types, or two quantized types that differ only in scales and zero points (the same
    storage type and range, expressed type and granularity); never a quantized and a plain type."""
    if a == b:
        return True
    if not (is_quant_e(a) and is_quant_e(b)):
        return False
    return (a.storage == b.storage and a.effective_min == b.effective_min and a.effective_max == b.effective_max
            and a.expressed == b.expressed and (a.quantized_dimension is None) == (b.quantized_dimension is None))


def is_promotable(src: Type, dst: Type) -> bool:
    """The spec's is_promotable(src, dst): whether a body over `dst` may take values of `src`.

    Both are booleans, integers (of any signedness), floats or complex numbers, and `dst` is at
    least as wide; quantized types promote to quantized types of the same expressed type with a
    storage type at least as wide.
    """
    if src == dst:
        return True
    if is_quant_e(src) or is_quant_e(dst):
        return (is_quant_e(src) and is_quant_e(dst) and src.expressed == dst.expressed
                and src.storage.width <= dst.storage.width)
    if is_int_e(src) and is_int_e(dst):
        return num_bits(src) <= num_bits(dst)
    if is_float_e(src) and is_float_e(dst):
        return float_bits(src) <= float_bits(dst)
    if is_complex_e(src) and is_complex_e(dst):
        return float_bits(src.element) <= float_bits(dst.element)
    return False  # booleans promote only to themselves


# ---------------------------------------------------------------------------------------------
# Shapes and whole types
# ---------------------------------------------------------------------------------------------


def shape_of(t: Type) -> Shape:
    return t.shape if isinstance(t, TensorType) else None


def rank_of(t: Type) -> Optional[int]:
    s = shape_of(t)
    return None if s is None else len(s)


def dim(t: Type, i: int) -> Dim:
    s = shape_of(t)
    if s is None:
        return None
    return s[i]


def dim_eq(a: Dim, b: Dim) -> bool:
    return a is None or b is None or a == b


def shapes_compatible(a: Shape, b: Shape) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(dim_eq(x, y) for x, y in zip(a, b))


def _bounds(t: TensorType) -> Optional[tuple]:
    encoding = t.encoding
    return getattr(encoding, "bounds", None) if encoding is not None else None


def within_bounds(a: TensorType, b: TensorType) -> bool:
    """No static dimension of one exceeds the bound the other gives that dimension (StableHLO's
    isCompatibleForHloTypeInference on bounded dynamism)."""
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        return True
    for x, y in ((a, b), (b, a)):
        bounds = _bounds(x)
        if bounds is None or len(bounds) != len(y.shape):
            continue
        if any(bound is not None and size is not None and size > bound for bound, size in zip(bounds, y.shape)):
            return False
    return True


def types_compatible(a: Type, b: Type) -> bool:
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return (shapes_compatible(a.shape, b.shape) and within_bounds(a, b)
                and element_compatible(a.element, b.element))
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.types) == len(b.types) and all(types_compatible(x, y) for x, y in zip(a.types, b.types))
    return a == b


def fmt_shape(shape: Shape) -> str:
    if shape is None:
        return "*"
    return "x".join("?" if d is None else str(d) for d in shape) if shape else "[]"


def fmt_types(types: Iterable[Type]) -> str:
    return "(" + ", ".join(map(str, types)) + ")"


def product(dims: Iterable[Dim]) -> Dim:
    n = 1
    for d in dims:
        if d is None:
            return None
        n *= d
    return n


def is_token(t: Type) -> bool:
    return isinstance(t, TokenType)


# ---------------------------------------------------------------------------------------------
# Small checks on dimension lists
# ---------------------------------------------------------------------------------------------


def check_unique(values: Sequence[int], what: str, constraint: Optional[str]) -> None:
    seen = set()
    for v in values:
        if v in seen:
            fail(f"{what} must be unique, but {v} appears twice in {list(values)}", constraint)
        seen.add(v)


def check_sorted(values: Sequence[int], what: str, constraint: Optional[str]) -> None:
    if list(values) != sorted(values):
        fail(f"{what} must be sorted, got {list(values)}", constraint)


def check_range(values: Sequence[int], bound: Optional[int], what: str, constraint: Optional[str],
                low: int = 0) -> None:
    """low <= v < bound for every value (no upper check when bound is None)."""
    for v in values:
        if v < low or (bound is not None and v >= bound):
            upper = "?" if bound is None else bound
            fail(f"{what} {v} is out of range [{low}, {upper})", constraint)


def check_window_lists(lists, count: int, count_words: str) -> None:
    """Window attributes (strides, dilations, sizes): each of `lists`, given as (name, values,
    constraint on its length, constraint on its values), has `count` entries, all positive.
    `count_words` says what `count` counts, e.g. "the operand has rank 2"."""
    for name, values, c_size, c_positive in lists:
        if len(values) != count:
            fail(f"{name} has {len(values)} entries but {count_words}", c_size)
        for i, v in enumerate(values):
            if v <= 0:
                fail(f"{name}[{i}] = {v} must be positive", c_positive)


# ---------------------------------------------------------------------------------------------
# Inference
# ---------------------------------------------------------------------------------------------


def window_count(size: Dim, window: Dim, stride: int, base_dilation: int, window_dilation: int,
                 pad_low: int, pad_high: int) -> Dim:
    """Number of window positions along one dimension (reduce_window, convolution)."""
    if size is None or window is None:
        return None
    dilated = 0 if size == 0 else (size - 1) * base_dilation + 1
    padded = pad_low + dilated + pad_high
    dilated_window = 0 if window == 0 else (window - 1) * window_dilation + 1
    if padded <= 0 or dilated_window > padded:
        return 0
    return (padded - dilated_window) // stride + 1


def infer_concatenate(shapes: Sequence[tuple], dimension: int) -> tuple:
    first = shapes[0]
    out = list(first)
    total: Dim = 0
    for k, s in enumerate(shapes):
        if len(s) != len(first):
            fail(f"input {k} has rank {len(s)} but input 0 has rank {len(first)}", "C2")
        for d, (a, b) in enumerate(zip(first, s)):
            if d != dimension and not dim_eq(a, b):
                fail(f"input {k} has shape {fmt_shape(s)}, which differs from {fmt_shape(first)} "
                     f"outside dimension {dimension}", "C2")
            if d != dimension and out[d] is None:
                out[d] = b
        total = None if total is None or s[dimension] is None else total + s[dimension]
    out[dimension] = total
    return tuple(out)


def infer_pad(shape: tuple, low: Sequence[int], high: Sequence[int], interior: Sequence[int]) -> tuple:
    out = []
    for i, d in enumerate(shape):
        if d is None:
            out.append(None)
            continue
        size = d + max(d - 1, 0) * interior[i] + low[i] + high[i]
        if size < 0:
            fail(f"padding makes dimension {i} negative ({size})", "C4")
        out.append(size)
    return tuple(out)


def infer_slice(shape: tuple, start: Sequence[int], limit: Sequence[int], strides: Sequence[int]) -> tuple:
    out = []
    for d, size in enumerate(shape):
        s, l, st = start[d], limit[d], strides[d]
        if st <= 0:
            fail(f"strides[{d}] = {st} must be positive", "C4")
        if s < 0 or s > l or (size is not None and l > size):
            fail(f"need 0 <= start_indices[{d}] <= limit_indices[{d}] <= dim(operand, {d}), "
                 f"got {s}, {l}, {size if size is not None else '?'}", "C3")
        out.append(-(-(l - s) // st))
    return tuple(out)


def implied_gather_operand(dn) -> tuple:
    """An unranked gather operand's shape as far as C1 fixes it: its rank, sizes unknown."""
    return (None,) * (len(dn.offset_dims) + len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims))


def infer_gather(operand: tuple, indices: Optional[tuple], dn, slice_sizes: Sequence[int]) -> Optional[tuple]:
    """The result shape, after checking C1-C21; with unranked start_indices (None) the checks
    that need their rank are skipped and no shape is inferred."""
    r = len(operand)
    offset_dims = list(dn.offset_dims)
    collapsed = list(dn.collapsed_slice_dims)
    obatch = list(dn.operand_batching_dims)
    ibatch = list(dn.start_indices_batching_dims)
    start_map = list(dn.start_index_map)
    ivd = dn.index_vector_dim
    if r != len(offset_dims) + len(collapsed) + len(obatch):
        fail(f"rank(operand) = {r} must equal size(offset_dims) + size(collapsed_slice_dims) + "
             f"size(operand_batching_dims) = {len(offset_dims) + len(collapsed) + len(obatch)}", "C1")
    if ivd < 0 or (indices is not None and ivd > len(indices)):
        fail(f"index_vector_dim {ivd} is out of range [0, {'?' if indices is None else len(indices)}]", "C2")
    index_count = None if indices is None else indices[ivd] if ivd < len(indices) else 1
    if index_count is not None and len(start_map) != index_count:
        fail(f"start_index_map has {len(start_map)} entries but start_indices provide {index_count} "
             "index components", "C3")
    check_unique(offset_dims, "offset_dims", "C4")
    check_sorted(offset_dims, "offset_dims", "C4")
    check_unique(collapsed + obatch, "collapsed_slice_dims and operand_batching_dims", "C6")
    check_sorted(collapsed, "collapsed_slice_dims", "C7")
    check_range(collapsed, r, "collapsed_slice_dims entry", "C8")
    check_sorted(obatch, "operand_batching_dims", "C10")
    check_range(obatch, r, "operand_batching_dims entry", "C11")
    check_unique(ibatch, "start_indices_batching_dims", "C13")
    check_range(ibatch, None if indices is None else len(indices), "start_indices_batching_dims entry", "C14")
    if ivd in ibatch:
        fail(f"index_vector_dim {ivd} cannot be a start_indices batching dimension", "C15")
    if len(obatch) != len(ibatch):
        fail("operand_batching_dims and start_indices_batching_dims have different sizes", "C16")
    for a, b in zip(obatch, ibatch if indices is not None else ()):
        if not dim_eq(operand[a], indices[b]):
            fail(f"batching dimension sizes differ: dim(operand, {a}) = {operand[a]} but "
                 f"dim(start_indices, {b}) = {indices[b]}", "C17")
    check_unique(start_map + obatch, "start_index_map and operand_batching_dims", "C18")
    check_range(start_map, r, "start_index_map entry", "C19")
    if len(slice_sizes) != r:
        fail(f"slice_sizes has {len(slice_sizes)} entries but the operand has rank {r}", "C20")
    # A slice size is None when it is only known at run time (dynamic_gather).
    for i, (s, d) in enumerate(zip(slice_sizes, operand)):
        if s is not None and (s < 0 or (d is not None and s > d)):
            fail(f"slice_sizes[{i}] = {s} is out of range [0, {d}]", "C21")
    for i in collapsed:
        if slice_sizes[i] is not None and slice_sizes[i] > 1:
            fail(f"slice_sizes[{i}] = {slice_sizes[i]} must be at most 1 for a collapsed dimension", "C9")
    for i in obatch:
        if slice_sizes[i] is not None and slice_sizes[i] > 1:
            fail(f"slice_sizes[{i}] = {slice_sizes[i]} must be at most 1 for a batching dimension", "C12")
    if indices is None:
        check_range(offset_dims, None, "offset_dims entry", "C5")
        return None
    batch_sizes = [d for i, d in enumerate(indices) if i != ivd]
    offset_sizes = [s for i, s in enumerate(slice_sizes) if i not in collapsed and i not in obatch]
    rank = len(batch_sizes) + len(offset_dims)
    check_range(offset_dims, rank, "offset_dims entry", "C5")
    out: list[Dim] = []
    bi = oi = 0
    for d in range(rank):
        if d in offset_dims:
            out.append(offset_sizes[oi])
            oi += 1
        else:
            out.append(batch_sizes[bi])
            bi += 1
    return tuple(out)


def check_scatter_shapes(operand: tuple, indices: tuple, updates: tuple, dn) -> None:
    """Scatter constraints C2, C4, C7-C22 on one input/updates pair."""
    r = len(operand)
    window_dims = list(dn.update_window_dims)
    inserted = list(dn.inserted_window_dims)
    ibatch = list(dn.input_batching_dims)
    sbatch = list(dn.scatter_indices_batching_dims)
    to_operand = list(dn.scatter_dims_to_operand_dims)
    ivd = dn.index_vector_dim
    if r != len(window_dims) + len(inserted) + len(ibatch):
        fail(f"rank(inputs[0]) = {r} must equal size(update_window_dims) + size(inserted_window_dims) + "
             f"size(input_batching_dims) = {len(window_dims) + len(inserted) + len(ibatch)}", "C2")
    check_unique(window_dims, "update_window_dims", "C7")
    check_sorted(window_dims, "update_window_dims", "C7")
    check_range(window_dims, len(updates), "update_window_dims entry", "C8")
    check_unique(inserted + ibatch, "inserted_window_dims and input_batching_dims", "C9")
    check_sorted(inserted, "inserted_window_dims", "C10")
    check_range(inserted, r, "inserted_window_dims entry", "C11")
    check_sorted(ibatch, "input_batching_dims", "C12")
    check_range(ibatch, r, "input_batching_dims entry", "C13")
    check_unique(sbatch, "scatter_indices_batching_dims", "C14")
    check_range(sbatch, len(indices), "scatter_indices_batching_dims entry", "C15")
    if ivd in sbatch:
        fail(f"index_vector_dim {ivd} cannot be a scatter_indices batching dimension", "C16")
    if len(ibatch) != len(sbatch):
        fail("input_batching_dims and scatter_indices_batching_dims have different sizes", "C17")
    for a, b in zip(ibatch, sbatch):
        if not dim_eq(operand[a], indices[b]):
            fail(f"batching dimension sizes differ: dim(inputs[0], {a}) = {operand[a]} but "
                 f"dim(scatter_indices, {b}) = {indices[b]}", "C18")
    if not 0 <= ivd <= len(indices):
        fail(f"index_vector_dim {ivd} is out of range [0, {len(indices)}]", "C22")
    index_count = indices[ivd] if ivd < len(indices) else 1
    if index_count is not None and len(to_operand) != index_count:
        fail(f"scatter_dims_to_operand_dims has {len(to_operand)} entries but scatter_indices provide "
             f"{index_count} index components", "C19")
    check_unique(to_operand + ibatch, "scatter_dims_to_operand_dims and input_batching_dims", "C20")
    check_range(to_operand, r, "scatter_dims_to_operand_dims entry", "C21")
    scatter_sizes = [d for i, d in enumerate(indices) if i != ivd]
    window_bounds = [d for i, d in enumerate(operand) if i not in inserted and i not in ibatch]
    expected_rank = len(scatter_sizes) + len(window_dims)
    if len(updates) != expected_rank:
        fail(f"updates have rank {len(updates)}, expected {expected_rank} "
             f"({len(scatter_sizes)} scatter dimensions + {len(window_dims)} window dimensions)", "C4")
    si = wi = 0
    for d in range(len(updates)):
        size = updates[d]
        if d in window_dims:
            bound = window_bounds[wi]
            if size is not None and bound is not None and size > bound:
                fail(f"update window dimension {d} has size {size}, larger than the operand's {bound}", "C4")
            wi += 1
        else:
            if not dim_eq(size, scatter_sizes[si]):
                fail(f"update scatter dimension {d} has size {size} but scatter_indices give "
                     f"{scatter_sizes[si]}", "C4")
            si += 1
