"""The layouts a TPU gives values nobody chose one for (tpu/default_layouts.py): every layout the
brief (../shared/docs/tpu.md §2.1-2.3) observed in real or TPU-style HLO, per generation."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from hlodbg.engine.machine.layout import format_shape, parse_shape
from hlodbg.engine.machine.tpu.default_layouts import default_layout, default_minor_to_major, storage_bits
from hlodbg.engine.machine.tpu.generations import GENERATIONS, TpuGeneration

V5E = GENERATIONS["tpu-v5e"]
TPU7X = GENERATIONS["tpu7x"]
# A chip before v4 (tiles hold at least two rows per 32-bit pack), to check the sublane factor.
V3 = TpuGeneration("tpu-v3", "TPU v3", 3, hbm_bytes=16 << 30, vmem_bytes=16 << 20, mxu_width=128)


def layout_text(shape_text: str, generation: TpuGeneration = V5E, **options) -> str:
    dtype, shape, _ = parse_shape(shape_text)
    return format_shape(dtype, shape, default_layout(shape, dtype, generation, **options))


@pytest.mark.parametrize("expected", [
    # entry_computation_layout of a TPU v5e dump (tpu.md §2.3, §5.1)
    "f32[16,8]{0,1:T(8,128)}", "f32[8,4]{0,1:T(4,128)}", "f32[4]{0:T(128)}", "f32[16,4]{0,1:T(4,128)}",
    # §2.2's checks, rank >= 2: the second-minor tile follows the physical second-minor size
    "s32[12,5]{0,1:T(8,128)}", "f32[1,6144]{1,0:T(1,128)}", "bf16[1,6144]{1,0:T(2,128)(2,1)}",
    "bf16[1,4096]{1,0:T(2,128)(2,1)}", "f32[4,4,128]{2,1,0:T(4,128)}", "f32[2048,2048]{1,0:T(8,128)}",
    "s32[2,2,2]{2,1,0:T(2,128)}", "bf16[4096,8192]{1,0:T(8,128)(2,1)}", "bf16[1024,2048]{1,0:T(8,128)(2,1)}",
    "s8[56,4096,4096]{2,1,0:T(8,128)(4,1)}", "s4[8,256]{1,0:T(8,128)(8,1)E(4)}",
    "pred[1,256]{1,0:T(4,128)(4,1)}", "pred[64,256]{1,0:T(8,128)(4,1)}", "f32[3,256]{1,0:T(4,128)}",
    "f8e4m3fn[1,1,6144,768]{3,2,1,0:T(8,128)(4,1)}",
    # rank 1: T(128 r) for r = the rows of 128 elements, at least the packing
    "f32[16]{0:T(128)}", "f32[64]{0:T(128)}", "f32[128]{0:T(128)}", "u32[256]{0:T(256)}",
    "f32[384]{0:T(512)}", "s32[301]{0:T(512)}", "s32[2048]{0:T(1024)}", "f32[2048]{0:T(1024)}",
    "bf16[4]{0:T(256)(128)(2,1)}", "bf16[128]{0:T(256)(128)(2,1)}", "bf16[4096]{0:T(1024)(128)(2,1)}",
    "bf16[8192]{0:T(1024)(128)(2,1)}", "pred[1]{0:T(512)(128)(4,1)}", "s4[100]{0:T(1024)(128)(8,1)E(4)}",
    # scalars: one tile of 128 x the packing; 512 bytes each
    "f32[]{:T(128)}", "s32[]{:T(128)}", "u32[]{:T(128)}", "bf16[]{:T(256)}", "f16[]{:T(256)}",
    "pred[]{:T(512)}", "s8[]{:T(512)}", "s4[]{:T(1024)E(4)}",
])
def test_observed_layouts_on_v5e(expected):
    assert layout_text(expected.split("{")[0]) == expected


def test_every_scalar_takes_512_bytes():
    for name in ("f32", "s32", "bf16", "f16", "s16", "pred", "s8", "u8", "f8e5m2", "s4", "u4"):
        dtype, shape, _ = parse_shape(f"{name}[]")
        assert default_layout(shape, dtype, V5E).physical_bytes(shape, dtype) == 512, name


def test_large_second_minor_tiling_on_tpu7x():
    assert layout_text("bf16[4096,8192]", TPU7X) == "bf16[4096,8192]{1,0:T(16,128)(2,1)}"
    assert layout_text("s8[6144,256]", TPU7X) == "s8[6144,256]{1,0:T(32,128)(4,1)}"
    assert layout_text("s4[8,32768,256]", TPU7X) == "s4[8,32768,256]{2,1,0:T(64,128)(8,1)E(4)}"
    assert layout_text("f32[64,128]", TPU7X) == "f32[64,128]{1,0:T(8,128)}"  # 32-bit: nothing to pack
    assert layout_text("bf16[1,4096]", TPU7X) == "bf16[1,4096]{1,0:T(2,128)(2,1)}"  # small stays small
    # the flag works both ways
    assert layout_text("bf16[4096,8192]", V5E, large_second_minor=True) == "bf16[4096,8192]{1,0:T(16,128)(2,1)}"
    assert layout_text("bf16[4096,8192]", TPU7X, large_second_minor=False) == "bf16[4096,8192]{1,0:T(8,128)(2,1)}"


def test_chips_before_v4_tile_two_rows_per_pack():
    assert layout_text("f32[1,256]", V3) == "f32[1,256]{1,0:T(2,128)}"
    assert layout_text("f32[2,256]", V3) == "f32[2,256]{1,0:T(2,128)}"
    assert layout_text("f32[]", V3) == "f32[]{:T(256)}"
    assert layout_text("f32[10]", V3) == "f32[10]{0:T(256)}"
    assert layout_text("bf16[1,256]", V3) == "bf16[1,256]{1,0:T(4,128)(2,1)}"


@pytest.mark.parametrize("shape, expected", [
    ((16, 8), (0, 1)), ((8, 4), (0, 1)), ((2048, 2048), (1, 0)), ((1, 6144), (1, 0)), ((2, 2, 2), (2, 1, 0)),
    ((8, 2), (0, 1)), ((4, 2), (0, 1)), ((8, 128), (1, 0)),  # 8 rows of 128: no padding, stays
    ((1000, 3), (0, 1)), ((3, 1000), (1, 0)), ((2, 3, 200), (2, 1, 0)), ((5, 300, 2), (1, 0, 2)), ((7,), (0,)),
])
def test_dim_order_by_padding_factor(shape, expected):
    assert default_minor_to_major(shape) == expected


def test_a_fixed_dim_order_gets_its_own_tiles():
    layout = default_layout((8, 300), np.float32, V5E, minor_to_major=(0, 1))
    assert str(layout) == "{0,1:T(8,128)}"  # the second-minor physical dim is the 300
    assert str(default_layout((300, 2), np.float32, V5E, minor_to_major=(0, 1))) == "{0,1:T(2,128)}"


def test_types_a_tpu_lacks_use_the_32_bit_rule_at_their_width():
    assert layout_text("f64[4,8,128]") == "f64[4,8,128]{2,1,0:T(8,128)}"
    assert layout_text("c64[16,256]") == "c64[16,256]{1,0:T(8,128)}"
    assert layout_text("s64[]") == "s64[]{:T(128)}"
    dtype, shape, layout = parse_shape(layout_text("c128[3,5]"))
    assert layout.physical_bytes(shape, dtype) == 4 * 128 * 16
    assert layout_text("f6e2m3fn[4,256]") == "f6e2m3fn[4,256]{1,0:T(4,128)(4,1)}"  # a byte each
    assert layout_text("s2[16,256]") == "s2[16,256]{1,0:T(16,128)(16,1)E(2)}"


def test_storage_bits():
    assert [storage_bits(t) for t in (np.float32, ml_dtypes.bfloat16, np.bool_, np.int8, ml_dtypes.int4,
                                      ml_dtypes.uint2, ml_dtypes.float4_e2m1fn, ml_dtypes.float6_e3m2fn,
                                      np.complex128)] == [32, 16, 8, 8, 4, 2, 4, 8, 128]


def test_default_layouts_store_and_load():
    rng = np.random.default_rng(3)
    for text in ("bf16[5,300]", "pred[1]", "s4[9,130]", "f32[]", "s8[3,4,5]", "bf16[4096]", "u2[3,200]"):
        dtype, shape, _ = parse_shape(text)
        layout = default_layout(shape, dtype, V5E)
        x = rng.integers(0, 2, size=shape).astype(dtype)
        buffer = layout.store(x)
        assert buffer.size == layout.physical_bytes(shape, dtype)
        assert np.array_equal(layout.load(buffer, shape, dtype), x), text
