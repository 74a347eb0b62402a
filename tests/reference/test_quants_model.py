"""F16 conversion and the Q4_0 / Q8_0 block formats (CORE-50, CORE-73 to CORE-76): byte patterns
derived by hand from the block formats, round trips, and the rounding rules that tell rc.8's
reference functions from the obvious alternatives."""

from __future__ import annotations

import numpy as np
from ggspec.reference import ops, quants
from ggspec.reference.ops import HostMemory, compute
from ggspec.reference.types import GGMLType as T
from graph_helpers import get, host_ctx, tensor, world
from hypothesis import given
from hypothesis import strategies as st


def block(d16: int, qs: list[int]) -> list[int]:
    """A block's bytes: d little-endian, then the quant bytes."""
    return [d16 & 0xFF, d16 >> 8] + qs


# --- F16 ----------------------------------------------------------------------------------------


@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=64))
def test_fp16_rounds_to_nearest_even_like_ieee(xs: list[float]) -> None:
    x = np.array(xs, np.float32)
    with np.errstate(over="ignore"):
        expect = x.astype(np.float16).view(np.uint16)
    assert quants.fp32_to_fp16(x).tolist() == expect.tolist()


def test_fp16_specials() -> None:
    # NaNs become the quiet NaN 0x7E00 with their sign; infinities and signed zeros stay
    bits = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F800000, 0x80000000], np.uint32)
    assert quants.fp32_to_fp16(bits.view(np.float32)).tolist() == [0x7E00, 0xFE00, 0x7E00, 0x7C00, 0x8000]
    # the smallest subnormal half, 2^-24, and half of it (a tie, to even: 0)
    assert quants.fp32_to_fp16(np.array([2.0**-24, 2.0**-25, 3 * 2.0**-25], np.float32)).tolist() == [1, 0, 2]
    every = np.arange(1 << 16, dtype=np.uint16)
    back = quants.fp16_to_fp32(every)
    finite = (every & 0x7C00) != 0x7C00
    assert back[finite].tolist() == every[finite].view(np.float16).astype(np.float32).tolist()


# --- Q4_0 ------------------------------------------------------------------------------------------


def test_q4_0_block_by_hand() -> None:
    x = [0.0] * 32
    x[0], x[1], x[2], x[3], x[16], x[17] = -8.0, 8.0, 0.5, 0.49, 7.4, -0.5
    # the first value of largest magnitude is -8: d = -8 / -8 = 1, nibble = min(15, trunc(x + 8.5))
    nib = [8] * 32
    nib[0], nib[1], nib[2], nib[3], nib[16], nib[17] = 0, 15, 9, 8, 15, 8
    qs = [nib[j] | nib[j + 16] << 4 for j in range(16)]
    assert quants.quantize_q4_0(x).reshape(-1).tolist() == block(0x3C00, qs)


def test_q4_0_keeps_the_sign_of_the_largest_value() -> None:
    x = [8.0, -8.0] + [0.0] * 30
    # max = +8: d = -1 (0xBC00); 8 * -1 + 8.5 -> 0; -8 * -1 + 8.5 = 16.5 -> 16 -> 15
    nib = [0, 15] + [8] * 30
    assert quants.quantize_q4_0(x).reshape(-1).tolist() == block(0xBC00, [nib[j] | nib[j + 16] << 4 for j in range(16)])
    # an all-zero block: max stays +0, d = +0 / -8 = -0 (0x8000), every nibble 8
    assert quants.quantize_q4_0([0.0] * 32).reshape(-1).tolist() == block(0x8000, [0x88] * 16)


def test_q4_0_dequantize_by_hand() -> None:
    b = np.array(block(0x4000, [0x1F] + [0x88] * 15), np.uint8)  # d = 2
    v = quants.dequantize_q4_0(b)
    assert (v[0], v[16], v[1]) == ((15 - 8) * 2.0, (1 - 8) * 2.0, 0.0)


# --- Q8_0 ------------------------------------------------------------------------------------------


def test_q8_0_block_by_hand_rounds_halves_away_from_zero() -> None:
    x = [127.0, -127.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49] + [0.0] * 24
    # amax = 127: d = 1 (0x3C00), id = 1; roundf: 0.5 -> 1, -0.5 -> -1, 2.5 -> 3 (not 2)
    qs = [127, -127, 1, -1, 2, 3, -3, 0] + [0] * 24
    assert quants.quantize_q8_0(x).reshape(-1).tolist() == block(0x3C00, [q & 0xFF for q in qs])


def test_q8_0_dequantize_by_hand() -> None:
    b = np.array(block(0x3800, [0x81, 0x7F, 0x02] + [0] * 29), np.uint8)  # d = 0.5
    assert quants.dequantize_q8_0(b)[:3].tolist() == [-127 * 0.5, 127 * 0.5, 1.0]


@given(st.lists(st.floats(-1000, 1000, width=32), min_size=32, max_size=32), st.booleans())
def test_round_trip_error_is_within_half_a_step(xs: list[float], q4: bool) -> None:
    x = np.array(xs, np.float32)
    blocks = quants.quantize_q4_0(x) if q4 else quants.quantize_q8_0(x)
    back = quants.dequantize_q4_0(blocks) if q4 else quants.dequantize_q8_0(blocks)
    d = abs(float(quants.fp16_to_fp32(blocks[0, :2].view("<u2"))[0]))
    amax = float(np.max(np.abs(x)))
    # one step is |d|; the F16 rounding of d adds at most 2^-11 relative per step count, and
    # where d is below F16's normal range at most half its subnormal step (2^-25) per step count
    # (8 for Q4_0, 127 for Q8_0: a block of 32 values near 1e-7 has d rounded to 0)
    bound = (d if q4 else d / 2) + amax * 2.0**-10 + (8 if q4 else 127) * 2.0**-25
    assert float(np.max(np.abs(back - x))) <= bound


# --- through the operations ----------------------------------------------------------------------


def test_cpy_into_q8_0_and_mul_mat_quantizes_b() -> None:
    ctx = host_ctx(world())
    x = np.linspace(-4, 4, 64, dtype=np.float32)
    w = tensor(ctx, T.Q8_0, None, [64, 2])
    compute(ops.cpy(ctx, tensor(ctx, T.F32, np.stack([x, -x]), [64, 2]), w), HostMemory(ctx.world))
    stored = get(w).reshape(2, 2, 34)
    assert stored[0].tolist() == quants.quantize_q8_0(x).tolist()
    b = tensor(ctx, T.F32, x * 0.5, [64, 1])
    r = ops.mul_mat(ctx, w, b)
    compute(r, HostMemory(ctx.world))
    # by hand: integer sums per block, scaled by both d's in F32, blocks added in F32
    qb = quants.quantize_q8_0(x * 0.5)
    for row in range(2):
        total = np.float32(0)
        for i in range(2):
            qa, qbi = stored[row, i, 2:].view(np.int8).astype(int), qb[i, 2:].view(np.int8).astype(int)
            da = quants.fp16_to_fp32(stored[row, i, :2].view("<u2"))[0]
            db = quants.fp16_to_fp32(qb[i, :2].view("<u2"))[0]
            total = np.float32(total + np.float32(int(qa @ qbi)) * (da * db))
        assert get(r)[0, row] == total


def test_mul_mat_q4_0_matches_dequantized_product_closely() -> None:
    rng = np.random.default_rng(7)
    ctx = host_ctx(world())
    wv = rng.standard_normal((3, 64)).astype(np.float32)
    xv = rng.standard_normal((2, 64)).astype(np.float32)
    w = tensor(ctx, T.Q4_0, np.concatenate([quants.quantize_q4_0(r) for r in wv]).reshape(1, 1, 3, 2, 18), [64, 3])
    r = ops.mul_mat(ctx, w, tensor(ctx, T.F32, xv, [64, 2]))
    compute(r, HostMemory(ctx.world))
    wd = np.stack([quants.dequantize_q4_0(quants.quantize_q4_0(row)) for row in wv])
    xd = np.stack([quants.dequantize_q8_0(quants.quantize_q8_0(row)) for row in xv])
    assert np.allclose(get(r), xd @ wd.T, rtol=1e-5, atol=1e-5)
