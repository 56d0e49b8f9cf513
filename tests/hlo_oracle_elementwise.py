"""Element-wise, conversion and shape HLO modules of tests/test_hlo_xla_oracle.py (our own), and
the hand-chosen inputs of those whose corner cases random inputs would miss."""
import numpy as np

ELEMENTWISE = {
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
    "omitted_shapes": """
HloModule omitted_shapes
ENTRY main {
  sum = add(f32[6] parameter(0), f32[6] parameter(1))
  bigger = compare(sum, maximum(sum, f32[6] parameter(2))), direction=GE
  ROOT out = tuple(multiply(sum, sum), bigger, select(bigger, sum, negate(sum)))
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
