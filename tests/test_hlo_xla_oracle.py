"""HLO modules run by hlodbg and by XLA:CPU on the same random inputs: the HLO twins of the
StableHLO conformance tests. Each module below is our own, written to exercise an opcode's corner
cases (integer division by zero and overflow, shifts past the bit width, convolution dim_labels and
window attributes, clamped dynamic and gather indices, out-of-range conditional indices, negative
and interior padding, bit-width-changing bitcast-convert, ...). XLA's own parser reads the same
text (../shared/docs/hlo_text.md §10), so a module XLA refuses is a defect of this file.

Integers and booleans must agree exactly; floats within tests/hlo_oracle.tolerance.
Skipped without JAX, and until the HLO frontend (engine/syntax/hlo HLO object) is merged.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from hlodbg.engine.syntax import hlo as hlo_syntax
from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules

from .hlo_oracle import difference, leaves, parameter_inputs, run_xla

pytest.importorskip("jax")
needs_hlo_frontend = pytest.mark.skipif(
    not hasattr(hlo_syntax, "HLO"),
    reason="the HLO frontend is not merged yet (engine/syntax/hlo/__init__.py has no HLO object)")

ADD_F32 = """
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT sum = f32[] add(a, b)
}
"""

MODULES = {
    "elementwise_float": """
HloModule elementwise_float
ENTRY main {
  x = f32[12] parameter(0)
  y = f32[12] parameter(1)
  add = f32[12] add(x, y)
  sub = f32[12] subtract(x, y)
  mul = f32[12] multiply(add, sub)
  div = f32[12] divide(x, y)
  rem = f32[12] remainder(x, y)
  pow = f32[12] power(x, y)
  atan2 = f32[12] atan2(x, y)
  max = f32[12] maximum(x, y)
  min = f32[12] minimum(x, y)
  abs = f32[12] abs(x)
  sign = f32[12] sign(y)
  ROOT out = (f32[12], f32[12], f32[12], f32[12], f32[12], f32[12], f32[12], f32[12], f32[12], f32[12]) tuple(mul, div, rem, pow, atan2, max, min, abs, sign, sub)
}
""",
    "transcendental": """
HloModule transcendental
ENTRY main {
  x = f32[16] parameter(0)
  exp = f32[16] exponential(x)
  expm1 = f32[16] exponential-minus-one(x)
  ax = f32[16] abs(x)
  log = f32[16] log(ax)
  log1p = f32[16] log-plus-one(ax)
  tanh = f32[16] tanh(x)
  logistic = f32[16] logistic(x)
  sqrt = f32[16] sqrt(ax)
  rsqrt = f32[16] rsqrt(ax)
  cbrt = f32[16] cbrt(x)
  cos = f32[16] cosine(x)
  sin = f32[16] sine(x)
  tan = f32[16] tan(x)
  erf = f32[16] erf(x)
  ROOT out = (f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16], f32[16]) tuple(exp, expm1, log, log1p, tanh, logistic, sqrt, rsqrt, cbrt, cos, sin, tan, erf, ax)
}
""",
    "rounding": """
HloModule rounding
ENTRY main {
  x = f32[10] parameter(0)
  scale = f32[] constant(2.5)
  scales = f32[10] broadcast(scale), dimensions={}
  halves = f32[10] constant({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, -3.51, 0, -0})
  y = f32[10] multiply(x, scales)
  floor = f32[10] floor(y)
  ceil = f32[10] ceil(y)
  even = f32[10] round-nearest-even(halves)
  afz = f32[10] round-nearest-afz(halves)
  finite = pred[10] is-finite(y)
  ROOT out = (f32[10], f32[10], f32[10], f32[10], pred[10]) tuple(floor, ceil, even, afz, finite)
}
""",
    # The edge cases come in as parameters (INPUTS below): XLA:CPU's constant folder dies with
    # SIGFPE on a constant INT_MIN / -1 or x / 0 (jaxlib 0.10.2), while its compiled code follows
    # the semantics: x / 0 = -1 (unsigned: all ones), x % 0 = x, INT_MIN / -1 = INT_MIN, % = 0.
    "integer_division": """
HloModule integer_division
ENTRY main {
  n = s32[8] parameter(0)
  d = s32[8] parameter(1)
  q = s32[8] divide(n, d)
  r = s32[8] remainder(n, d)
  un = u32[4] parameter(2)
  ud = u32[4] parameter(3)
  uq = u32[4] divide(un, ud)
  ur = u32[4] remainder(un, ud)
  b = s8[4] parameter(4)
  bd = s8[4] parameter(5)
  bq = s8[4] divide(b, bd)
  br = s8[4] remainder(b, bd)
  ROOT out = (s32[8], s32[8], u32[4], u32[4], s8[4], s8[4]) tuple(q, r, uq, ur, bq, br)
}
""",
    "shifts": """
HloModule shifts
ENTRY main {
  x = s32[8] constant({1, -1, -2147483648, 12345, -8, 7, 2147483647, -100})
  s = s32[8] constant({0, 1, 31, 32, 33, -1, 5, 40})
  shl = s32[8] shift-left(x, s)
  sra = s32[8] shift-right-arithmetic(x, s)
  srl = s32[8] shift-right-logical(x, s)
  p = s32[8] parameter(0)
  psra = s32[8] shift-right-arithmetic(x, p)
  u = u8[6] constant({255, 1, 128, 7, 0, 200})
  us = u8[6] constant({1, 7, 8, 9, 3, 255})
  ushl = u8[6] shift-left(u, us)
  usrl = u8[6] shift-right-logical(u, us)
  usra = u8[6] shift-right-arithmetic(u, us)
  ROOT out = (s32[8], s32[8], s32[8], s32[8], u8[6], u8[6], u8[6]) tuple(shl, sra, srl, psra, ushl, usrl, usra)
}
""",
    # k is a parameter: XLA's constant folder counts -32 leading zeros in a negative constant.
    "bitwise_integer": """
HloModule bitwise_integer
ENTRY main {
  a = s32[6] parameter(0)
  k = s32[6] parameter(1)
  b = s32[6] multiply(a, k)
  and = s32[6] and(a, b)
  or = s32[6] or(a, k)
  xor = s32[6] xor(b, k)
  not = s32[6] not(k)
  popcnt = s32[6] popcnt(b)
  clz = s32[6] count-leading-zeros(k)
  neg = s32[6] negate(k)
  abs = s32[6] abs(k)
  mul = s32[6] multiply(k, k)
  ROOT out = (s32[6], s32[6], s32[6], s32[6], s32[6], s32[6], s32[6], s32[6], s32[6]) tuple(and, or, xor, not, popcnt, clz, neg, abs, mul)
}
""",
    # specials is a parameter: XLA's constant folder says a constant NaN is not TOTALORDER-equal to
    # itself, while its compiled code (and the total order) says it is.
    "compare_select_clamp": """
HloModule compare_select_clamp
ENTRY main {
  x = f32[8] parameter(0)
  specials = f32[8] parameter(1)
  lt = pred[8] compare(x, specials), direction=LT
  eq = pred[8] compare(specials, specials), direction=EQ
  ne = pred[8] compare(specials, specials), direction=NE
  total_lt = pred[8] compare(specials, x), direction=LT, type=TOTALORDER
  total_eq = pred[8] compare(specials, specials), direction=EQ, type=TOTALORDER
  sel = f32[8] select(lt, x, specials)
  lo = f32[8] constant({-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5})
  hi = f32[8] constant({0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5})
  clamped = f32[8] clamp(lo, x, hi)
  i = s32[8] iota(), iota_dimension=0
  ilo = s32[] constant(2)
  ihi = s32[] constant(5)
  iclamped = s32[8] clamp(ilo, i, ihi)
  ROOT out = (pred[8], pred[8], pred[8], pred[8], pred[8], f32[8], f32[8], s32[8]) tuple(lt, eq, ne, total_lt, total_eq, sel, clamped, iclamped)
}
""",
    "convert_saturating": """
HloModule convert_saturating
ENTRY main {
  x = f32[10] parameter(0)
  big = f32[10] constant({1e10, -1e10, 3.7, -3.7, 255.9, 256, -129, 0.5, -0.5, 100})
  y = f32[10] add(big, x)
  to_s32 = s32[10] convert(y)
  to_s8 = s8[10] convert(big)
  to_f16 = f16[10] convert(y)
  to_bf16 = bf16[10] convert(x)
  back = f32[10] convert(to_bf16)
  i = s32[10] iota(), iota_dimension=0
  p = pred[10] convert(i)
  f = f32[10] convert(p)
  ROOT out = (s32[10], s8[10], f16[10], f32[10], f32[10]) tuple(to_s32, to_s8, to_f16, back, f)
}
""",
    "bitcast_convert": """
HloModule bitcast_convert
ENTRY main {
  x = f32[6] parameter(0)
  bits = s32[6] bitcast-convert(x)
  halves = u16[6,2] bitcast-convert(x)
  bytes = u8[6,4] bitcast-convert(bits)
  pairs = f32[3,2] reshape(x)
  wide = f64[3] bitcast-convert(pairs)
  back = f32[6] bitcast-convert(bits)
  ROOT out = (s32[6], u16[6,2], u8[6,4], f64[3], f32[6]) tuple(bits, halves, bytes, wide, back)
}
""",
    "reduce_precision": """
HloModule reduce_precision
ENTRY main {
  x = f32[16] parameter(0)
  k = f32[] constant(1000)
  ks = f32[16] broadcast(k), dimensions={}
  y = f32[16] multiply(x, ks)
  half = f32[16] reduce-precision(y), exponent_bits=5, mantissa_bits=10
  brain = f32[16] reduce-precision(x), exponent_bits=8, mantissa_bits=7
  tiny = f32[16] reduce-precision(y), exponent_bits=2, mantissa_bits=1
  ROOT out = (f32[16], f32[16], f32[16]) tuple(half, brain, tiny)
}
""",
    "shape_ops": """
HloModule shape_ops
ENTRY main {
  x = f32[2,3,4] parameter(0)
  t = f32[4,2,3] transpose(x), dimensions={2,0,1}
  r = f32[8,3] reshape(t)
  rev = f32[8,3] reverse(r), dimensions={0,1}
  s = f32[3,2] slice(rev), slice={[1:7:2], [0:3:2]}
  c = f32[3,6] concatenate(s, s, s), dimensions={1}
  b = f32[2,3,6] broadcast(c), dimensions={1,2}
  ROOT out = (f32[8,3], f32[3,6], f32[2,3,6]) tuple(rev, c, b)
}
""",
    "pad_negative_interior": """
HloModule pad_negative_interior
ENTRY main {
  x = f32[4,5] parameter(0)
  v = f32[] constant(-7)
  p1 = f32[8,3] pad(x, v), padding=1_0_1x-1_-1
  p2 = f32[2,14] pad(x, v), padding=-1_-1x2_-1_2
  p3 = f32[4,5] pad(x, v), padding=0_0x0_0
  ROOT out = (f32[8,3], f32[2,14], f32[4,5]) tuple(p1, p2, p3)
}
""",
    "iota_dims": """
HloModule iota_dims
ENTRY main {
  a = s32[3,4] iota(), iota_dimension=0
  b = s32[3,4] iota(), iota_dimension=1
  f = f32[2,5] iota(), iota_dimension=1
  u = u8[300] iota(), iota_dimension=0
  eq = pred[3,4] compare(a, b), direction=EQ
  ROOT out = (s32[3,4], pred[3,4], f32[2,5], u8[300]) tuple(b, eq, f, u)
}
""",
    "dot_batch_dims": """
HloModule dot_batch_dims
ENTRY main {
  a = f32[3,4,5] parameter(0)
  b = f32[3,5,2] parameter(1)
  m = f32[4,5] parameter(2)
  n = f32[5] parameter(3)
  batch = f32[3,4,2] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,highest}
  mv = f32[4] dot(m, n), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  outer = f32[4,5] dot(mv, n), lhs_contracting_dims={}, rhs_contracting_dims={}
  ia = s32[2,3] constant({{1, -2, 3}, {4, 5, -6}})
  ib = s32[3,2] constant({{7, 8}, {9, -10}, {11, 12}})
  idot = s32[2,2] dot(ia, ib), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f32[3,4,2], f32[4], f32[4,5], s32[2,2]) tuple(batch, mv, outer, idot)
}
""",
    "convolution_dim_labels": """
HloModule convolution_dim_labels
ENTRY main {
  input = f32[2,7,6,3] parameter(0)
  kernel = f32[3,2,3,4] parameter(1)
  ROOT conv = f32[2,4,5,4] convolution(input, kernel), window={size=3x2 stride=2x1 pad=1_1x0_1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f
}
""",
    "convolution_groups_reversal": """
HloModule convolution_groups_reversal
ENTRY main {
  input = f32[1,4,9] parameter(0)
  kernel = f32[6,2,3] parameter(1)
  grouped = f32[1,6,9] convolution(input, kernel), window={size=3 pad=1_1 rhs_reversal=1}, dim_labels=bf0_oi0->bf0, feature_group_count=2
  dilated = f32[1,6,17] convolution(input, kernel), window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=bf0_oi0->bf0, feature_group_count=2
  ROOT out = (f32[1,6,9], f32[1,6,17]) tuple(grouped, dilated)
}
""",
    "gather_clamped": """
HloModule gather_clamped
ENTRY main {
  operand = f32[5,4] parameter(0)
  indices = s32[6,1] constant({{0}, {4}, {-3}, {9}, {2}, {2}})
  rows = f32[6,4] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  starts = s32[3,2] constant({{0, 0}, {3, 2}, {-1, 5}})
  windows = f32[3,2,3] gather(operand, starts), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}
  ROOT out = (f32[6,4], f32[3,2,3]) tuple(rows, windows)
}
""",
    "scatter_repeated_indices": ADD_F32 + """
ENTRY main {
  operand = f32[5,3] parameter(0)
  indices = s32[4] constant({1, 3, 1, 7})
  updates = f32[4,3] parameter(1)
  ROOT scattered = f32[5,3] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
}
""",
    "reduce_and_argmax": ADD_F32 + """
argmax {
  best = f32[] parameter(0)
  best_index = s32[] parameter(1)
  value = f32[] parameter(2)
  index = s32[] parameter(3)
  larger = pred[] compare(value, best), direction=GT
  max = f32[] select(larger, value, best)
  at = s32[] select(larger, index, best_index)
  ROOT pair = (f32[], s32[]) tuple(max, at)
}

ENTRY main {
  x = f32[4,6] parameter(0)
  zero = f32[] constant(0)
  sums = f32[6] reduce(x, zero), dimensions={0}, to_apply=add_f32
  total = f32[] reduce(x, zero), dimensions={0,1}, to_apply=add_f32
  positions = s32[4,6] iota(), iota_dimension=1
  lowest = f32[] constant(-inf)
  none = s32[] constant(-1)
  best = (f32[4], s32[4]) reduce(x, positions, lowest, none), dimensions={1}, to_apply=argmax
  ROOT out = (f32[6], f32[], (f32[4], s32[4])) tuple(sums, total, best)
}
""",
    "reduce_window_padded": """
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
""" + ADD_F32 + """
ENTRY main {
  x = f32[5,6] parameter(0)
  lowest = f32[] constant(-inf)
  zero = f32[] constant(0)
  pooled = f32[3,3] reduce-window(x, lowest), window={size=2x3 stride=2x2 pad=0_1x1_0}, to_apply=max_f32
  prefix = f32[5,6] reduce-window(x, zero), window={size=1x6 pad=0_0x5_0}, to_apply=add_f32
  dilated = f32[4,2] reduce-window(x, zero), window={size=2x2 stride=1x2 lhs_dilate=1x1 rhs_dilate=1x2}, to_apply=add_f32
  ROOT out = (f32[3,3], f32[5,6], f32[4,2]) tuple(pooled, prefix, dilated)
}
""",
    "select_and_scatter": """
ge_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}
""" + ADD_F32 + """
ENTRY main {
  operand = f32[4,6] parameter(0)
  source = f32[2,3] parameter(1)
  zero = f32[] constant(0)
  ROOT sas = f32[4,6] select-and-scatter(operand, source, zero), window={size=2x3 stride=2x2 pad=0_0x1_0}, select=ge_f32, scatter=add_f32
}
""",
    "sort_multi_operand": """
by_key_descending {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  ROOT gt = pred[] compare(k0, k1), direction=GT
}

by_value {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY main {
  keys = f32[3,8] parameter(0)
  values = s32[3,8] iota(), iota_dimension=1
  sorted = (f32[3,8], s32[3,8]) sort(keys, values), dimensions={1}, is_stable=true, to_apply=by_key_descending
  ties = s32[3,8] parameter(1)
  stable = s32[3,8] sort(ties), dimensions={0}, is_stable=true, to_apply=by_value
  ROOT out = ((f32[3,8], s32[3,8]), s32[3,8]) tuple(sorted, stable)
}
""",
    "while_tuple_state": """
HloModule while_tuple_state

body {
  state = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  acc = f32[4] get-tuple-element(state), index=1
  step = f32[4] get-tuple-element(state), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  scaled = f32[4] multiply(acc, step)
  grown = f32[4] add(scaled, step)
  ROOT out = (s32[], f32[4], f32[4]) tuple(next, grown, step)
}

condition {
  state = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  limit = s32[] constant(5)
  ROOT go = pred[] compare(i, limit), direction=LT
}

ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, x, x)
  loop = (s32[], f32[4], f32[4]) while(init), condition=condition, body=body
  count = s32[] get-tuple-element(loop), index=0
  value = f32[4] get-tuple-element(loop), index=1
  ROOT out = (s32[], f32[4]) tuple(count, value)
}
""",
    "conditional_index_and_pred": """
HloModule conditional_index_and_pred

negate_branch {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}

double_branch {
  t = (f32[3], f32[3]) parameter(0)
  a = f32[3] get-tuple-element(t), index=0
  b = f32[3] get-tuple-element(t), index=1
  ROOT s = f32[3] add(a, b)
}

exp_branch {
  x = f32[3] parameter(0)
  ROOT e = f32[3] exponential(x)
}

ENTRY main {
  x = f32[3] parameter(0)
  pair = (f32[3], f32[3]) tuple(x, x)
  in_range = s32[] constant(1)
  above = s32[] constant(7)
  below = s32[] constant(-1)
  c1 = f32[3] conditional(in_range, x, pair, x), branch_computations={negate_branch, double_branch, exp_branch}
  c2 = f32[3] conditional(above, x, pair, x), branch_computations={negate_branch, double_branch, exp_branch}
  c3 = f32[3] conditional(below, x, pair, x), branch_computations={negate_branch, double_branch, exp_branch}
  p = pred[] parameter(1)
  c4 = f32[3] conditional(p, x, x), true_computation=negate_branch, false_computation=exp_branch
  ROOT out = (f32[3], f32[3], f32[3], f32[3]) tuple(c1, c2, c3, c4)
}
""",
    "dynamic_slice_update_clamped": """
HloModule dynamic_slice_update_clamped
ENTRY main {
  x = f32[6,5] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] constant(5)
  j = s32[] constant(-2)
  k = s32[] constant(1)
  ds = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
  ds2 = f32[3,2] dynamic-slice(x, k, i), dynamic_slice_sizes={3,2}
  dus = f32[6,5] dynamic-update-slice(x, u, i, i)
  dus2 = f32[6,5] dynamic-update-slice(x, u, j, k)
  ROOT out = (f32[2,3], f32[3,2], f32[6,5], f32[6,5]) tuple(ds, ds2, dus, dus2)
}
""",
    "rng_bit_generator": """
HloModule rng_bit_generator
ENTRY main {
  state = u64[2] constant({42, 7})
  three_fry = (u64[2], u32[4,5]) rng-bit-generator(state), algorithm=rng_three_fry
  philox_state = u64[3] constant({1, 2, 3})
  philox = (u64[3], u64[3,2]) rng-bit-generator(philox_state), algorithm=rng_philox
  ROOT out = ((u64[2], u32[4,5]), (u64[3], u64[3,2])) tuple(three_fry, philox)
}
""",
    "fft_kinds": """
HloModule fft_kinds
ENTRY main {
  x = c64[3,8] parameter(0)
  r = f32[2,8] parameter(1)
  fft = c64[3,8] fft(x), fft_type=FFT, fft_length={8}
  ifft = c64[3,8] fft(x), fft_type=IFFT, fft_length={3,8}
  rfft = c64[2,5] fft(r), fft_type=RFFT, fft_length={8}
  irfft = f32[2,8] fft(rfft), fft_type=IRFFT, fft_length={8}
  ROOT out = (c64[3,8], c64[3,8], c64[2,5], f32[2,8]) tuple(fft, ifft, rfft, irfft)
}
""",
    "cholesky_triangular_solve": """
HloModule cholesky_triangular_solve
ENTRY main {
  x = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  gram = f32[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={highest,highest}
  rows = s32[4,4] iota(), iota_dimension=0
  cols = s32[4,4] iota(), iota_dimension=1
  diagonal = pred[4,4] compare(rows, cols), direction=EQ
  four = f32[] constant(4)
  fours = f32[4,4] broadcast(four), dimensions={}
  zero = f32[] constant(0)
  zeros = f32[4,4] broadcast(zero), dimensions={}
  shift = f32[4,4] select(diagonal, fours, zeros)
  spd = f32[4,4] add(gram, shift)
  l = f32[4,4] cholesky(spd), lower=true
  solved = f32[4,3] triangular-solve(l, b), left_side=true, lower=true, unit_diagonal=false, transpose_a=NO_TRANSPOSE
  right = f32[3,4] transpose(b), dimensions={1,0}
  solved_t = f32[3,4] triangular-solve(l, right), left_side=false, lower=true, transpose_a=TRANSPOSE
  ROOT out = (f32[4,4], f32[4,3], f32[3,4]) tuple(l, solved, solved_t)
}
""",
    "map_call_fusion": """
HloModule map_call_fusion

relu_product {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  p = f32[] multiply(a, b)
  z = f32[] constant(0)
  ROOT r = f32[] maximum(p, z)
}

scale_and_shift {
  x = f32[2,3] parameter(0)
  two = f32[] constant(2)
  twos = f32[2,3] broadcast(two), dimensions={}
  y = f32[2,3] multiply(x, twos)
  ROOT out = (f32[2,3], f32[2,3]) tuple(y, x)
}

fused {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  s = f32[2,3] subtract(p0, p1)
  ROOT t = f32[2,3] tanh(s)
}

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  mapped = f32[2,3] map(x, y), dimensions={0,1}, to_apply=relu_product
  called = (f32[2,3], f32[2,3]) call(mapped), to_apply=scale_and_shift
  first = f32[2,3] get-tuple-element(called), index=0
  ROOT fusion = f32[2,3] fusion(first, y), kind=kLoop, calls=fused
}
""",
    "complex_parts": """
HloModule complex_parts
ENTRY main {
  re = f32[5] parameter(0)
  im = f32[5] parameter(1)
  z = c64[5] complex(re, im)
  zz = c64[5] multiply(z, z)
  q = c64[5] divide(zz, z)
  a = f32[5] abs(z)
  r = f32[5] real(q)
  i = f32[5] imag(q)
  e = c64[5] exponential(z)
  ROOT out = (c64[5], f32[5], f32[5], f32[5], c64[5]) tuple(zz, a, r, i, e)
}
""",
    "collectives_one_replica": ADD_F32 + """
ENTRY main {
  x = f32[4,2] parameter(0)
  summed = f32[4,2] all-reduce(x), replica_groups={}, to_apply=add_f32
  gathered = f32[4,2] all-gather(summed), replica_groups={{0}}, dimensions={0}
  permuted = f32[4,2] collective-permute(gathered), source_target_pairs={{0,0}}
  id = u32[] replica-id()
  ROOT out = (f32[4,2], u32[]) tuple(permuted, id)
}
""",
    "batch_norm_inference": """
HloModule batch_norm_inference
ENTRY main {
  x = f32[2,3,4] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  mean = f32[3] parameter(3)
  v = f32[3] parameter(4)
  variance = f32[3] multiply(v, v)
  ROOT y = f32[2,3,4] batch-norm-inference(x, scale, offset, mean, variance), epsilon=0.001, feature_index=1
}
""",
    "scalar_predicate_and_bounds": """
HloModule scalar_predicate_and_bounds
ENTRY main {
  p = pred[] parameter(0)
  x = f32[3,4] parameter(1)
  y = f32[3,4] parameter(2)
  picked = f32[3,4] select(p, x, y)
  lo = f32[] constant(-0.25)
  hi = f32[] constant(0.5)
  ROOT clamped = f32[3,4] clamp(lo, picked, hi)
}
""",
    "scatter_overwrite_and_scalar": """
HloModule scatter_overwrite_and_scalar

take_update {
  old = s32[] parameter(0)
  ROOT new = s32[] parameter(1)
}

ENTRY main {
  operand = s32[4,3] parameter(0)
  indices = s32[2] parameter(1)
  updates = s32[2,3] parameter(2)
  rows = s32[4,3] scatter(operand, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=take_update
  vector = s32[5] parameter(3)
  at = s32[] parameter(4)
  value = s32[] parameter(5)
  one = s32[5] scatter(vector, at, value), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=take_update
  ROOT out = (s32[4,3], s32[5]) tuple(rows, one)
}
""",
    "omitted_shapes": """
HloModule omitted_shapes
ENTRY main {
  sum = add(f32[6] parameter(0), f32[6] parameter(1))
  bigger = compare(sum, maximum(sum, f32[6] parameter(2))), direction=GE
  ROOT out = tuple(multiply(sum, sum), bigger, select(bigger, sum, negate(sum)))
}
""",
    "reduce_window_base_dilation": ADD_F32 + """
ENTRY main {
  x = f32[5,4] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[8,3] reduce-window(x, zero), window={size=2x2 lhs_dilate=2x1 pad=0_0x0_0}, to_apply=add_f32
}
""",
    "topk_largest": """
HloModule topk_largest
ENTRY main {
  x = f32[3,7] parameter(0)
  ROOT top = (f32[3,3], s32[3,3]) topk(x), k=3, largest=true
}
""",
}


# Inputs chosen by hand where random ones would miss the corner cases.
INPUTS = {
    "bitwise_integer": [
        np.array([3, -2, 1, 0, -1, 1], np.int32),
        np.array([-1, 0, 255, -2147483648, 2147483647, 1024], np.int32),
    ],
    "compare_select_clamp": [
        np.array([0.3, 0.0, -0.0, 2.0, -1.0, 1.0, np.nan, -0.7], np.float32),
        np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0, -np.nan], np.float32),
    ],
    "integer_division": [
        np.array([7, -7, 7, -7, -2147483648, 5, 0, -1], np.int32),
        np.array([2, 2, -2, -2, -1, 0, 0, 3], np.int32),
        np.array([7, 4294967295, 0, 9], np.uint32),
        np.array([0, 2, 0, 4], np.uint32),
        np.array([-128, -128, 127, -5], np.int8),
        np.array([-1, 0, -1, 2], np.int8),
    ],
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_is_read_by_xla(name):
    """Each module is valid HLO: XLA's parser and compiler accept it (checks this file itself)."""
    tree, inputs = _prepared(name)
    assert run_xla(MODULES[name], inputs)


@needs_hlo_frontend
@pytest.mark.parametrize("name", sorted(MODULES))
def test_hlodbg_reproduces_xla(name):
    import hlodbg

    tree, inputs = _prepared(name)
    expected = run_xla(MODULES[name], inputs)
    with np.errstate(all="ignore"):
        results = leaves(hlodbg.load(MODULES[name]).run(*inputs))
    assert len(results) == len(expected), f"{len(results)} results, XLA gives {len(expected)}"
    problems = [f"result {i}: {d}" for i, (got, want) in enumerate(zip(results, expected))
                if (d := difference(got, want))]
    assert not problems, f"{name}: " + "; ".join(problems)


def _prepared(name: str):
    text = MODULES[name]
    (tree,) = parse_hlo_modules(text, f"{name}.hlo")
    return tree, INPUTS.get(name) or parameter_inputs(tree, zlib.crc32(name.encode()))
