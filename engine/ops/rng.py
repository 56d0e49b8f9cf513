"""Random numbers: rng (implementation-defined draws) and rng_bit_generator (XLA's exact bits).

`rng_bit_generator` reproduces XLA's CPU backend bit for bit: XLA expands the op
(rng_bit_generator_expander.cc) into the Threefry-2x32 (20 rounds) and Philox-4x32 (10 rounds)
generators of its prng library, with `DEFAULT` meaning Philox on CPU. Both are counter based, so
every output word is computed at once from its counter with whole-array uint32/uint64
arithmetic; only the rounds are a Python loop.

`rng` is implementation-defined (the spec leaves the generator open). hlodbg draws from a numpy
`Generator` seeded by the op's offset in the source file, the process and how many times this
op has run in this interpreter; a run is therefore reproducible, every execution of the op in a
loop draws fresh numbers, and two runs of the same program draw the same ones.
"""
from __future__ import annotations

import numpy as np

from ..ir.dtypes import bit_width, integer_bounds, is_float_dtype, narrow
from ..ir.phrases import Phrase
from .provenance import ProvenanceQuery, Source, explains
from .registry import OpCall, op

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)

# -- rng ---------------------------------------------------------------------------------------


@op("stablehlo.rng")
def rng(call: OpCall, a: np.ndarray, b: np.ndarray, shape: np.ndarray) -> np.ndarray:
    dims = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    if any(d < 0 for d in dims):
        raise call.error(f"shape operand {list(dims)} has a negative dimension")
    declared = call.result_type.shape
    if declared is not None and all(d is not None and d >= 0 for d in declared) and tuple(declared) != dims:
        raise call.error(f"shape operand {list(dims)} differs from the result type {call.result_type}")
    dtype = call.result_dtype
    generator = np.random.default_rng(_seed(call))
    distribution = str(call.attr("rng_distribution", "UNIFORM"))
    if distribution == "NORMAL":
        return _normal(call, generator, a, b, dims, dtype)
    return _uniform(call, generator, a, b, dims, dtype)


def _seed(call: OpCall) -> np.random.SeedSequence:
    count = call.memo.get("rng_runs", 0)
    call.memo["rng_runs"] = count + 1
    offset = call.op.pos.offset if call.op.pos is not None else 0
    process = call.process
    return np.random.SeedSequence([offset, count, process.replica_id, process.partition_id])


def _uniform(call: OpCall, generator: np.random.Generator, a: np.ndarray, b: np.ndarray, dims, dtype) -> np.ndarray:
    if is_float_dtype(dtype):
        low, high = float(np.asarray(a, np.float64)), float(np.asarray(b, np.float64))
    else:
        wide = np.uint64 if dtype.kind == "u" else np.int64  # int2/int4 and bool widen to int64
        low, high = int(np.asarray(a).astype(wide)), int(np.asarray(b).astype(wide))
    if not low < high:
        raise call.error(f"UNIFORM needs a < b, got a = {low} and b = {high} (the interval [a, b) is empty)")
    if is_float_dtype(dtype):
        values = narrow(low + (high - low) * generator.random(dims), dtype)
        # Rounding to a narrow type can reach b itself; the interval is half-open.
        return np.where(values.astype(np.float64) >= high, narrow(np.float64(low), dtype), values)
    if dtype == np.bool_:
        return np.zeros(dims, np.bool_)  # [false, true) holds only false
    draw_dtype = np.uint64 if integer_bounds(dtype)[1] > np.iinfo(np.int64).max else np.int64
    values = generator.integers(low, high, size=dims, dtype=draw_dtype)
    return narrow(values, dtype)


def _normal(call: OpCall, generator: np.random.Generator, a: np.ndarray, b: np.ndarray, dims, dtype) -> np.ndarray:
    if not is_float_dtype(dtype):
        raise call.error(f"NORMAL needs a floating-point result, got {call.result_type}")
    mu, sigma = float(np.asarray(a, np.float64)), float(np.asarray(b, np.float64))
    if sigma < 0:
        raise call.error(f"NORMAL needs a standard deviation b >= 0, got {sigma}")
    return narrow(generator.normal(mu, sigma, size=dims), dtype)


# -- rng_bit_generator -----------------------------------------------------------------------


@op("stablehlo.rng_bit_generator")
def rng_bit_generator(call: OpCall, initial_state: np.ndarray) -> list:
    algorithm = str(call.attr("rng_algorithm", "DEFAULT"))
    if algorithm == "DEFAULT":
        algorithm = "PHILOX"  # what XLA's CPU compiler expands DEFAULT to
    state = np.asarray(initial_state).astype(_U64).reshape(-1)
    output_type = call.result_types[1]
    dims = tuple(output_type.shape)
    dtype = output_type.numpy_dtype
    width = bit_width(dtype)
    if not (width < 32 or width in (32, 64)) or dtype == np.bool_ or dtype.kind == "c":
        raise call.error(f"cannot generate random bits for {output_type}")
    if algorithm == "THREE_FRY":
        if state.size != 2:
            raise call.error(f"THREE_FRY needs a state of 2 ui64 words, got {state.size}")
        bits, new_state = _threefry_bits(state, dims, width)
    elif algorithm == "PHILOX":
        if state.size not in (2, 3):
            raise call.error(f"PHILOX needs a state of 2 or 3 ui64 words, got {state.size}")
        bits, new_state = _philox_bits(state, dims, width)
    else:
        raise call.error(f"unknown rng_algorithm {algorithm}")
    state_out = new_state.astype(call.result_types[0].numpy_dtype)
    return [state_out, _bits_as(bits, dtype, width)]


def _bits_as(bits: np.ndarray, dtype: np.dtype, width: int) -> np.ndarray:
    """Reinterpret unsigned words (uint32 or uint64) as `dtype`, keeping the low `width` bits."""
    if width >= 32:
        return bits.astype(np.uint64 if width == 64 else np.uint32).view(dtype)
    # Narrower outputs keep the low bits of 32-bit words, as XLA's narrowing conversion does.
    low = (bits & np.uint32((1 << width) - 1)).astype(np.uint8 if width <= 8 else np.uint16)
    if dtype.itemsize * 8 == width or is_float_dtype(dtype):
        return low.view(dtype)  # sub-byte floats (f4, f6) sit in the low bits of their byte
    # 2- and 4-bit integers: build them from their bit patterns.
    lo, _ = integer_bounds(dtype)
    values = low.astype(np.int64)
    if lo < 0:
        values = np.where(values >= (1 << (width - 1)), values - (1 << width), values)
    return values.astype(dtype)


# Threefry-2x32 ---------------------------------------------------------------------------------

_THREEFRY_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)


def _rotl32(v: np.ndarray, distance: int) -> np.ndarray:
    return (v << np.uint32(distance)) | (v >> np.uint32(32 - distance))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, key0: int, key1: int) -> tuple[np.ndarray, np.ndarray]:
    """20 rounds of Threefry-2x32 on counter words (x0, x1) under the 64-bit key (key0, key1)."""
    ks = (np.uint32(key0), np.uint32(key1), np.uint32(0x1BD11BDA ^ key0 ^ key1))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for block in range(5):
        rotations = _THREEFRY_ROTATIONS[:4] if block % 2 == 0 else _THREEFRY_ROTATIONS[4:]
        for r in rotations:
            x0 = x0 + x1
            x1 = _rotl32(x1, r) ^ x0
        # Key injection after every four rounds.
        x0 = x0 + ks[(block + 1) % 3]
        x1 = x1 + ks[(block + 2) % 3] + np.uint32(block + 1)
    return x0, x1


def _threefry_counters(start: np.uint64, count: int) -> tuple[np.ndarray, np.ndarray]:
    counters = start + np.arange(count, dtype=_U64)
    return (counters & _MASK32).astype(_U32), (counters >> _SHIFT32).astype(_U32)


def _threefry_bits(state: np.ndarray, dims: tuple, width: int) -> tuple[np.ndarray, np.ndarray]:
    key = int(state[0])
    key0, key1 = key & 0xFFFFFFFF, key >> 32
    size = int(np.prod(dims, dtype=np.int64))
    if width == 64:
        x0, x1 = _threefry_counters(state[1], size)
        y0, y1 = threefry2x32(x0, x1, key0, key1)
        bits = y0.astype(_U64) | (y1.astype(_U64) << _SHIFT32)
        return bits.reshape(dims), state + np.array([0, size], _U64)
    # 32 bits and narrower: XLA halves the shape along one dimension and fills the two halves
    # from the two Threefry output words, interleaved along that dimension.
    half, split = _split_in_halves(dims)
    half_size = int(np.prod(half, dtype=np.int64))
    x0, x1 = _threefry_counters(state[1], half_size)
    y0, y1 = threefry2x32(x0, x1, key0, key1)
    new_state = state + np.array([0, half_size], _U64)
    if split is None:  # a scalar takes the first word of a one-element half
        return y0.reshape(()), new_state
    pair = np.stack([y0.reshape(half), y1.reshape(half)], axis=split + 1)
    merged_shape = dims[:split] + (2 * half[split],) + dims[split + 1:]
    merged = pair.reshape(merged_shape)
    index = [slice(None)] * len(dims)
    index[split] = slice(0, dims[split])
    return merged[tuple(index)], new_state


def _split_in_halves(dims: tuple) -> tuple[tuple, int | None]:
    """The half shape XLA generates and the dimension it split (None for a scalar)."""
    if not dims:
        return (1,), None
    split = next((i for i, d in enumerate(dims) if d % 2 == 0), None)
    if split is None:
        split = max(range(len(dims)), key=lambda i: (dims[i], -i))
    half = list(dims)
    half[split] = -(-dims[split] // 2)
    return tuple(half), split


# Philox-4x32 -----------------------------------------------------------------------------------

_PHILOX_W32A = 0x9E3779B9
_PHILOX_W32B = 0xBB67AE85
_PHILOX_M4x32A = np.uint64(0xD2511F53)
_PHILOX_M4x32B = np.uint64(0xCD9E8D57)


def philox4x32(words: list[np.ndarray], key0: int, key1: int) -> list[np.ndarray]:
    """10 rounds of Philox-4x32 on counter words (low first) under the key (key0, key1)."""
    x0, x1, x2, x3 = words
    for _ in range(10):
        p0 = x0.astype(_U64) * _PHILOX_M4x32A
        p1 = x2.astype(_U64) * _PHILOX_M4x32B
        hi0, lo0 = (p0 >> _SHIFT32).astype(_U32), (p0 & _MASK32).astype(_U32)
        hi1, lo1 = (p1 >> _SHIFT32).astype(_U32), (p1 & _MASK32).astype(_U32)
        x0, x1, x2, x3 = hi1 ^ x1 ^ np.uint32(key0), lo1, hi0 ^ x3 ^ np.uint32(key1), lo0
        key0 = (key0 + _PHILOX_W32A) & 0xFFFFFFFF
        key1 = (key1 + _PHILOX_W32B) & 0xFFFFFFFF
    return [x0, x1, x2, x3]


def _philox_blocks(counter_low: int, counter_high: int, blocks: int, key: int) -> tuple[list[np.ndarray], tuple[int, int]]:
    """Philox outputs for the 128-bit counters counter, counter + 1, ..., and the next counter."""
    low = np.uint64(counter_low) + np.arange(blocks, dtype=_U64)
    # A low word that wrapped around carries into the high word.
    high = np.where(low < np.uint64(counter_low), np.uint64((counter_high + 1) & 0xFFFFFFFFFFFFFFFF), np.uint64(counter_high))
    words = [(low & _MASK32).astype(_U32), (low >> _SHIFT32).astype(_U32),
             (high & _MASK32).astype(_U32), (high >> _SHIFT32).astype(_U32)]
    out = philox4x32(words, key & 0xFFFFFFFF, key >> 32)
    total = counter_low + blocks
    next_counter = (total & 0xFFFFFFFFFFFFFFFF, (counter_high + (total >> 64)) & 0xFFFFFFFFFFFFFFFF)
    return out, next_counter


def _philox_bits(state: np.ndarray, dims: tuple, width: int) -> tuple[np.ndarray, np.ndarray]:
    key = int(state[0])
    if state.size == 3:
        counter = (int(state[1]), int(state[2]))
    else:  # a 2-word state is read reversed as the 128-bit counter (state[1] low, key high)
        counter = (int(state[1]), int(state[0]))
    size = int(np.prod(dims, dtype=np.int64))
    if width == 64:
        blocks = -(-size // 2)
        out, next_counter = _philox_blocks(*counter, blocks, key)
        lo = out[0].astype(_U64) | (out[1].astype(_U64) << _SHIFT32)
        hi = out[2].astype(_U64) | (out[3].astype(_U64) << _SHIFT32)
        bits = np.stack([lo, hi], axis=1).reshape(-1)[:size]
    else:
        blocks = -(-size // 4)
        out, next_counter = _philox_blocks(*counter, blocks, key)
        bits = np.stack(out, axis=1).reshape(-1)[:size]
    if state.size == 3:
        new_state = np.array([key, next_counter[0], next_counter[1]], _U64)
    else:
        new_state = np.array([key, next_counter[0]], _U64)
    return bits.reshape(dims), new_state


# -- element provenance ---------------------------------------------------------------------------

LOWER_BOUND = Phrase("lower bound a")
UPPER_BOUND = Phrase("upper bound b")
MEAN_A = Phrase("mean a")
DEVIATION_B = Phrase("standard deviation b")
KEY_WORD = Phrase("key word")
COUNTER_WORD = Phrase("counter word")
CARRY_WORD = Phrase("low counter word (its carry)")

RNG_UNIFORM = Phrase("result{index} = a + (b - a)·u, u drawn uniformly from [0, 1) (the generator is "
                     "implementation-defined; hlodbg's is reproducible per run)")
RNG_INTEGERS = Phrase("result{index} is drawn uniformly from the integers a .. b-1 (the generator is "
                      "implementation-defined; hlodbg's is reproducible per run)")
RNG_FALSE = Phrase("a boolean drawn from [false, true) is always false: result{index} reads no operand")
RNG_NORMAL = Phrase("result{index} = a + b·z, z drawn from the standard normal distribution (the generator is "
                    "implementation-defined; hlodbg's is reproducible per run)")
RNG_SHAPE_ONLY = Phrase("the shape operand only fixes the result's shape")
BITS_FROM_STATE = Phrase("{algorithm} makes output{index} from the key (initial_state(0)) and its counter "
                         "(initial_state {counter}): its rounds mix every bit of both")
STATE_KEY = Phrase("the key is passed on: output_state(0) = initial_state(0)")
STATE_COUNTER = Phrase("the counter word advances past the blocks this op used: output_state{index} = "
                       "initial_state{index} + {advance} (mod 2^64)")
STATE_CARRY = Phrase("the counter's high word changes only by the carry out of its low word: output_state(2) = "
                     "initial_state(2) + the carry of initial_state(1) + {advance}")


@explains("stablehlo.rng")
def rng_provenance(q: ProvenanceQuery):
    """a and b are scalars shared by every element; the shape operand determines no element."""
    dtype = q.op.results[0].type.numpy_dtype
    if str(q.attr("rng_distribution", "UNIFORM")) == "NORMAL":
        return q.answer([Source(0, (), MEAN_A), Source(1, (), DEVIATION_B)],
                        [(RNG_NORMAL, {"index": q.index}), (RNG_SHAPE_ONLY, {})])
    if dtype == np.bool_:
        return q.answer([], [(RNG_FALSE, {"index": q.index})])
    draw = RNG_UNIFORM if is_float_dtype(dtype) else RNG_INTEGERS
    return q.answer([Source(0, (), LOWER_BOUND), Source(1, (), UPPER_BOUND)],
                    [(draw, {"index": q.index}), (RNG_SHAPE_ONLY, {})])


@explains("stablehlo.rng_bit_generator")
def rng_bit_generator_provenance(q: ProvenanceQuery):
    """output: every word of the initial state (key and counter); output_state: the same word
    (the key passed on, the counter advanced), and the 3-word Philox counter's high word the carry."""
    algorithm = str(q.attr("rng_algorithm", "DEFAULT"))
    words = q.operand_shape(0)[0]
    if q.result == 1:
        counter = (1, 0) if algorithm != "THREE_FRY" and words == 2 else tuple(range(1, words))
        sources = [Source(0, (0,), KEY_WORD)] + [Source(0, (w,), COUNTER_WORD) for w in range(1, words)]
        return q.answer(sources, [(BITS_FROM_STATE, {"algorithm": algorithm, "index": q.index, "counter": counter})])
    (word,) = q.index
    if word == 0:
        return q.answer([Source(0, (0,), KEY_WORD)], [(STATE_KEY, {})])
    advance = "the blocks used"
    if q.operands is not None and q.results is not None:
        advance = (int(q.result_value(0)[1]) - int(q.operand_value(0)[1])) % (1 << 64)
    if word == 2:
        return q.answer([Source(0, (2,), COUNTER_WORD), Source(0, (1,), CARRY_WORD)],
                        [(STATE_CARRY, {"advance": advance})])
    return q.answer([Source(0, (word,), COUNTER_WORD)], [(STATE_COUNTER, {"index": q.index, "advance": advance})])
