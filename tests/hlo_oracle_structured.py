"""Contraction, window, indexing, control-flow, collective and linear-algebra HLO modules of
tests/test_hlo_xla_oracle.py (our own)."""

ADD_F32 = """
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT sum = f32[] add(a, b)
}
"""

STRUCTURED = {
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
