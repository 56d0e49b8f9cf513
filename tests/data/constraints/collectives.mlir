// Verifier constraints of the collectives and communication ops (docs/spec.md at head):
// all_gather, all_reduce, reduce_scatter, all_to_all, collective_permute, send, recv, infeed,
// outfeed, after_all, create_token, replica_id, partition_id.
// Run by tests/test_verifier_constraints.py, which documents the directives.
//
// Not statically decidable (they need num_replicas / num_partitions, which only the run fixes,
// e.g. the grid of interpreter.run_parallel): all_gather C3, all_reduce C2, reduce_scatter C4,
// all_to_all C6 (`size(replica_groups)` is the number of replicas, partitions or processes), and
// the upper bound `< N` of collective_permute C4. Their static part is checked: the ids of
// replica_groups are 0..n-1 for the n ids given (C4 / C3 / C5 / C7), and process ids in
// source_target_pairs are not negative (C4).
// Unnumbered: a type the spec's Inputs table fixes carries the input's label (`I1`, `I2`); a
// result type the op fixes (a token, tensor<ui32>) is `inferred`.

// expect-error: stablehlo.all_gather C1
func.func @all_gather_dim(%a: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %r = "stablehlo.all_gather"(%a) {all_gather_dim = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.all_gather C2
func.func @all_gather_unique(%a: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %r = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.all_gather C4
func.func @all_gather_ids(%a: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %r = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 5]]> : tensor<1x2xi64>} : (tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.all_gather C5
func.func @all_gather_global_ids(%a: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %r = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids} : (tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.all_gather C6
// Variadic at head: each result follows its operand.
func.func @all_gather_result(%a: tensor<2x2xf32>, %b: tensor<3xi32>) -> tensor<6xi32> {
  %r:2 = "stablehlo.all_gather"(%a, %b) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x2xf32>, tensor<3xi32>) -> (tensor<4x2xf32>, tensor<5xi32>)
  func.return %r#1 : tensor<5xi32>
}

// -----

// expect-error: stablehlo.all_reduce C1
func.func @all_reduce_unique(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// expect-error: stablehlo.all_reduce C3
func.func @all_reduce_ids(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[1, 2]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// expect-error: stablehlo.all_reduce C4
func.func @all_reduce_global_ids(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>, use_global_device_ids} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// expect-error: stablehlo.all_reduce C5
// One computation serves every operand: each operand's element type must be promotable to its E.
// Here the first operand fits the body (i32) and the second (f32) does not.
func.func @all_reduce_body(%a: tensor<4xi32>, %b: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %r:2 = "stablehlo.all_reduce"(%a, %b) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xi32>, tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>)
  func.return %r#0, %r#1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// expect-error: stablehlo.all_reduce C6
func.func @all_reduce_shape(%a: tensor<4xf32>) -> tensor<2xf32> {
  %r = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.all_reduce C7
// The results have the computation's element type E (f32 here), not the operand's (bf16).
func.func @all_reduce_result_element(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xbf16>) -> tensor<4xbf16>
  func.return %r : tensor<4xbf16>
}

// -----

// expect-error: stablehlo.reduce_scatter C1
func.func @reduce_scatter_divisible(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %r : tensor<2x1xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C2
func.func @reduce_scatter_dim(%a: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = -1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C3
func.func @reduce_scatter_unique(%a: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C5
func.func @reduce_scatter_ids(%a: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 2]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C6
func.func @reduce_scatter_global_ids(%a: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C7
// The body's arguments must both be tensor<E>.
func.func @reduce_scatter_body(%a: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f64>):
    stablehlo.return %x : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C8
func.func @reduce_scatter_shape(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C9
func.func @reduce_scatter_element(%a: tensor<2x4xf32>) -> tensor<2x2xf64> {
  %r = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x2xf64>
  func.return %r : tensor<2x2xf64>
}

// -----

// expect-error: stablehlo.all_to_all C1
func.func @all_to_all_split_dim(%a: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 2 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}

// -----

// expect-error: stablehlo.all_to_all C2
func.func @all_to_all_divisible(%a: tensor<2x3xf32>) -> tensor<4x1xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x3xf32>) -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// -----

// expect-error: stablehlo.all_to_all C3
func.func @all_to_all_concat_dim(%a: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = -1 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}

// -----

// expect-error: stablehlo.all_to_all C4
func.func @all_to_all_count(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.all_to_all C5
func.func @all_to_all_unique(%a: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}

// -----

// expect-error: stablehlo.all_to_all C7
func.func @all_to_all_ids(%a: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 3]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}

// -----

// expect-error: stablehlo.all_to_all C8
func.func @all_to_all_group_size(%a: tensor<2x4xf32>) -> tensor<8x1xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<8x1xf32>
  func.return %r : tensor<8x1xf32>
}

// -----

// expect-error: stablehlo.all_to_all C9
// The result types are inferred from the operands: here the second result's shape is not.
func.func @all_to_all_result(%a: tensor<2x4xf32>, %b: tensor<2x2xi32>) -> tensor<2x2xi32> {
  %r:2 = "stablehlo.all_to_all"(%a, %b) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>, tensor<2x2xi32>) -> (tensor<4x2xf32>, tensor<2x2xi32>)
  func.return %r#1 : tensor<2x2xi32>
}

// -----

// expect-error: stablehlo.collective_permute C1
func.func @permute_pairs_shape(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1, 2]]> : tensor<1x3xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.collective_permute C2
func.func @permute_sources(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.collective_permute C3
func.func @permute_targets(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1], [2, 1]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.collective_permute C4
func.func @permute_negative(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, -1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.collective_permute C5
func.func @permute_result(%a: tensor<2xf32>) -> tensor<2xf64> {
  %r = "stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf64>
  func.return %r : tensor<2xf64>
}

// -----

// expect-error: stablehlo.send C1
// is_host_transfer = true needs channel type DEVICE_TO_HOST (2). The C++ verifier does not check
// the channel type; the spec does, and we follow the spec.
func.func @send_channel_type(%a: tensor<2xf32>, %t: !stablehlo.token) -> !stablehlo.token {
  %r = "stablehlo.send"(%a, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = true} : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  func.return %r : !stablehlo.token
}

// -----

// expect-error: stablehlo.send I1
func.func @send_inputs(%t: !stablehlo.token) -> !stablehlo.token {
  %r = "stablehlo.send"(%t, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
  func.return %r : !stablehlo.token
}

// -----

// expect-error: stablehlo.send I2
func.func @send_token(%a: tensor<2xf32>) -> !stablehlo.token {
  %r = "stablehlo.send"(%a, %a) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xf32>, tensor<2xf32>) -> !stablehlo.token
  func.return %r : !stablehlo.token
}

// -----

// expect-error: stablehlo.send inferred
// send's result type is inferred: a token.
func.func @send_result(%a: tensor<2xf32>, %t: !stablehlo.token) -> tensor<2xf32> {
  %r = "stablehlo.send"(%a, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xf32>, !stablehlo.token) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.recv C1
// is_host_transfer = true needs HOST_TO_DEVICE (3); as for send, only the spec checks this.
func.func @recv_channel_type(%t: !stablehlo.token) -> tensor<2xf32> {
  %r:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true} : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  func.return %r#0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.recv C2
func.func @recv_no_results(%t: !stablehlo.token) {
  "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (!stablehlo.token) -> ()
  func.return
}

// -----

// expect-error: stablehlo.recv C3
func.func @recv_payload(%t: !stablehlo.token) -> !stablehlo.token {
  %r:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (!stablehlo.token) -> (!stablehlo.token, !stablehlo.token)
  func.return %r#1 : !stablehlo.token
}

// -----

// expect-error: stablehlo.recv C4
func.func @recv_token_last(%t: !stablehlo.token) -> tensor<2xf32> {
  %r:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (!stablehlo.token) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %r#0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.recv I1
func.func @recv_token_operand(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r:2 = "stablehlo.recv"(%a) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xf32>) -> (tensor<2xf32>, !stablehlo.token)
  func.return %r#0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.infeed C1
func.func @infeed_no_results(%t: !stablehlo.token) {
  "stablehlo.infeed"(%t) : (!stablehlo.token) -> ()
  func.return
}

// -----

// expect-error: stablehlo.infeed C2
func.func @infeed_payload(%t: !stablehlo.token) -> !stablehlo.token {
  %r:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (!stablehlo.token, !stablehlo.token)
  func.return %r#1 : !stablehlo.token
}

// -----

// expect-error: stablehlo.infeed C3
func.func @infeed_token_last(%t: !stablehlo.token) -> tensor<2xf32> {
  %r = "stablehlo.infeed"(%t) : (!stablehlo.token) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.infeed I1
func.func @infeed_token_operand(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r:2 = "stablehlo.infeed"(%a) : (tensor<2xf32>) -> (tensor<2xf32>, !stablehlo.token)
  func.return %r#0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.outfeed I1
func.func @outfeed_inputs(%t: !stablehlo.token) -> !stablehlo.token {
  %r = "stablehlo.outfeed"(%t, %t) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
  func.return %r : !stablehlo.token
}

// -----

// expect-error: stablehlo.outfeed I2
func.func @outfeed_token(%a: tensor<2xf32>) -> !stablehlo.token {
  %r = "stablehlo.outfeed"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> !stablehlo.token
  func.return %r : !stablehlo.token
}

// -----

// expect-error: stablehlo.outfeed inferred
func.func @outfeed_result(%a: tensor<2xf32>, %t: !stablehlo.token) -> tensor<2xf32> {
  %r = "stablehlo.outfeed"(%a, %t) : (tensor<2xf32>, !stablehlo.token) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.after_all I1
func.func @after_all_inputs(%a: tensor<2xf32>) -> !stablehlo.token {
  %r = "stablehlo.after_all"(%a) : (tensor<2xf32>) -> !stablehlo.token
  func.return %r : !stablehlo.token
}

// -----

// expect-error: stablehlo.after_all inferred
func.func @after_all_result(%t: !stablehlo.token) -> tensor<i1> {
  %r = "stablehlo.after_all"(%t) : (!stablehlo.token) -> tensor<i1>
  func.return %r : tensor<i1>
}

// -----

// expect-error: stablehlo.create_token inferred
func.func @create_token_result() -> tensor<i1> {
  %r = "stablehlo.create_token"() : () -> tensor<i1>
  func.return %r : tensor<i1>
}

// -----

// expect-error: stablehlo.replica_id inferred
func.func @replica_id_result() -> tensor<i32> {
  %r = "stablehlo.replica_id"() : () -> tensor<i32>
  func.return %r : tensor<i32>
}

// -----

// expect-error: stablehlo.partition_id inferred
func.func @partition_id_result() -> tensor<1xui32> {
  %r = "stablehlo.partition_id"() : () -> tensor<1xui32>
  func.return %r : tensor<1xui32>
}

// -----

// expect-ok
func.func @main(%a: tensor<2x4xf32>, %h: tensor<4xbf16>, %i: tensor<2x2xi32>, %t: !stablehlo.token) -> (tensor<2x8xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4x2xf32>, tensor<4x1xi32>) {
  %g:2 = "stablehlo.all_gather"(%a, %i) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>, tensor<2x2xi32>) -> (tensor<2x8xf32>, tensor<2x4xi32>)
  %r = "stablehlo.all_reduce"(%h) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xbf16>) -> tensor<4xf32>
  %s = "stablehlo.reduce_scatter"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %x:2 = "stablehlo.all_to_all"(%a, %i) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<2x4xf32>, tensor<2x2xi32>) -> (tensor<4x2xf32>, tensor<4x1xi32>)
  %p = "stablehlo.collective_permute"(%s) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %t1 = "stablehlo.send"(%p, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true} : (tensor<2x2xf32>, !stablehlo.token) -> !stablehlo.token
  %v, %t2 = "stablehlo.recv"(%t1) {channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>} : (!stablehlo.token) -> (tensor<2x2xf32>, !stablehlo.token)
  %w, %t3 = "stablehlo.infeed"(%t2) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2x2xf32>, !stablehlo.token)
  %t4 = "stablehlo.outfeed"(%v, %w, %t3) {outfeed_config = ""} : (tensor<2x2xf32>, tensor<2x2xf32>, !stablehlo.token) -> !stablehlo.token
  %t5 = stablehlo.create_token : !stablehlo.token
  %t6 = stablehlo.after_all %t4, %t5 : !stablehlo.token
  %rid = stablehlo.replica_id : tensor<ui32>
  %pid = stablehlo.partition_id : tensor<ui32>
  func.return %g#0, %r, %p, %x#0, %x#1 : tensor<2x8xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4x2xf32>, tensor<4x1xi32>
}

// -----

// expect-error: stablehlo.all_gather I3
// replica_groups is a 2-dimensional tensor constant (Inputs table); a flat list is not a group list.
func.func @all_gather_flat_groups(%a: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %r = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[0, 1]> : tensor<2xi64>} : (tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.all_reduce I2
func.func @all_reduce_flat_groups(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.all_reduce"(%a) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<0> : tensor<1xi64>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter I3
func.func @reduce_scatter_3d_groups(%a: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[[0], [1]]]> : tensor<1x2x1xi64>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}

// -----

// expect-error: stablehlo.all_to_all I5
func.func @all_to_all_3d_groups(%a: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %r = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[[0], [1]]]> : tensor<1x2x1xi64>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}

// -----

// expect-error: stablehlo.collective_broadcast I2
func.func @collective_broadcast_flat_groups(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.collective_broadcast"(%a) {replica_groups = dense<[1, 0]> : tensor<2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.all_gather C6
// With a channel and no use_global_device_ids (cross_replica_and_partition) the group size is
// known only at run time, but dim(result, 1) must still be 32 times it: 100 is not.
func.func @all_gather_not_a_multiple(%a: tensor<128x32xf32>) -> tensor<128x100xf32> {
  %r = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<128x32xf32>) -> tensor<128x100xf32>
  func.return %r : tensor<128x100xf32>
}

// -----

// expect-error: stablehlo.reduce_scatter C8
// The same for reduce_scatter: dim(operand, 1) = 16 must be dim(result, 1) = 5 times the group size.
func.func @reduce_scatter_not_a_multiple(%a: tensor<4x16xf32>) -> tensor<4x5xf32> {
  %r = "stablehlo.reduce_scatter"(%a) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<4x16xf32>) -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// -----

// expect-ok
// Group sizes known only at run time: any multiple is accepted, and a zero-sized gather stays zero.
func.func @run_time_group_sizes(%a: tensor<128x32xf32>, %z: tensor<4x0xf32>, %b: tensor<4x16xf32>) -> (tensor<128x64xf32>, tensor<4x0xf32>, tensor<4x8xf32>) {
  %g = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<128x32xf32>) -> tensor<128x64xf32>
  %h = "stablehlo.all_gather"(%z) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<4x0xf32>) -> tensor<4x0xf32>
  %r = "stablehlo.reduce_scatter"(%b) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<4x16xf32>) -> tensor<4x8xf32>
  func.return %g, %h, %r : tensor<128x64xf32>, tensor<4x0xf32>, tensor<4x8xf32>
}
