"""CORE-50 and CORE-73 to CORE-76: F16 conversion and the Q4_0 / Q8_0 block formats.

Everything here is bit-exact with rc.8's *portable* code: the F16 conversion ggml uses when the
build has no F16C instructions, and the *reference* quantize functions of ggml-quants.c (which
are also rc.8's CPU path for Q4_0 on every build, and for Q8_0 on x86-64 builds with default
compiler flags; spec/core.md, CORE-74, says where other builds differ).

Arrays are numpy arrays; F16 values travel as their 16-bit patterns (`uint16`), quantized data as
blocks of bytes (`uint8`, one row of `type_size` bytes per block).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .checked import checked
from .clauses import implements

QK = 32  # elements per Q4_0 / Q8_0 block
Q4_0_BLOCK_BYTES = 2 + QK // 2
Q8_0_BLOCK_BYTES = 2 + QK

F32 = npt.NDArray[np.float32]
U16 = npt.NDArray[np.uint16]
U8 = npt.NDArray[np.uint8]
I32 = npt.NDArray[np.int32]


# --- F16 ----------------------------------------------------------------------------------


def _array(x: npt.ArrayLike, dtype: Any) -> npt.NDArray[Any]:
    """`x` as an array of `dtype`; TypeError / ValueError (never OverflowError) for values that are
    not numbers of that type."""
    try:
        return np.asarray(x, dtype=dtype)
    except (OverflowError, TypeError, ValueError) as exc:
        raise ValueError(f"not an array of {np.dtype(dtype).name}: {type(x).__name__} ({exc})") from None


def _bits(x: npt.NDArray[Any]) -> F32:
    return x.astype(np.uint32).view(np.float32)


@implements("CORE-50")
@checked
def fp32_to_fp16(x: npt.ArrayLike) -> U16:
    """CORE-50: F32 -> F16 bit patterns, round to nearest even; every NaN becomes 0x7E00 | sign.

    The same float operations as ggml's portable `ggml_compute_fp32_to_fp16`: the rounding is
    done by the F32 adder, after scaling the magnitude into the F16 range.
    """
    f = _array(x, np.float32)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        base = (np.abs(f) * np.float32(2.0**112)) * np.float32(2.0**-110)
        w = f.view(np.uint32).astype(np.uint64)
        shl1_w = (w + w) & 0xFFFFFFFF
        sign = w & 0x80000000
        bias = np.maximum(shl1_w & 0xFF000000, 0x71000000)
        base = _bits(((bias >> 1) + 0x07800000).astype(np.uint32)) + base
    bits = base.view(np.uint32).astype(np.uint64)
    nonsign = ((bits >> 13) & 0x7C00) + (bits & 0x0FFF)
    out = (sign >> 16) | np.where(shl1_w > 0xFF000000, 0x7E00, nonsign)
    return (out & 0xFFFF).astype(np.uint16)


@implements("CORE-50")
@checked
def fp16_to_fp32(h: npt.ArrayLike) -> F32:
    """CORE-50: F16 bit patterns -> F32, exactly (ggml's portable `ggml_compute_fp16_to_fp32`)."""
    w = _array(h, np.uint16).astype(np.uint32) << 16
    sign = w & 0x80000000
    two_w = (w + w) & 0xFFFFFFFF
    with np.errstate(over="ignore", invalid="ignore"):
        normalized = _bits((two_w >> 4) + (0xE0 << 23)) * np.float32(2.0**-112)
        denormalized = _bits((two_w >> 17) | (126 << 23)) - np.float32(0.5)
    magnitude = np.where(two_w < (1 << 27), denormalized.view(np.uint32), normalized.view(np.uint32))
    return (sign | magnitude).astype(np.uint32).view(np.float32)


@checked
def round_f16(x: npt.ArrayLike) -> F32:
    """F32 values rounded to F16 and back (the value an F16 tensor would hold)."""
    return fp16_to_fp32(fp32_to_fp16(x))


# --- blocks -------------------------------------------------------------------------------


def _blocks(x: npt.ArrayLike) -> F32:
    v = _array(x, np.float32)
    if v.size % QK != 0:
        raise ValueError(f"a quantized row is whole blocks of {QK} elements, got {v.size} elements")
    return v.reshape(-1, QK)


def _pack(d: F32, qs: U8) -> U8:
    """Blocks of (d as little-endian F16, qs bytes)."""
    d16 = fp32_to_fp16(d).astype("<u2")
    out = np.empty((qs.shape[0], 2 + qs.shape[1]), dtype=np.uint8)
    out[:, :2] = d16.view(np.uint8).reshape(-1, 2)
    out[:, 2:] = qs
    return out


def _scale(blocks: U8) -> F32:
    """The F32 value of each block's d."""
    return fp16_to_fp32(np.ascontiguousarray(blocks[:, :2]).view("<u2").reshape(-1))


def _recip(d: F32) -> F32:
    """1/d in F32, 0 where d is 0."""
    out = np.zeros_like(d)
    np.divide(np.float32(1.0), d, out=out, where=d != 0)
    return out


@implements("CORE-73")
@checked
def quantize_q4_0(x: npt.ArrayLike) -> U8:
    """CORE-73: F32 values (a multiple of 32) -> Q4_0 blocks, as `quantize_row_q4_0_reference`."""
    v = _blocks(x)
    rows = np.arange(v.shape[0])
    first = np.argmax(np.abs(v), axis=1)  # the first element of largest magnitude
    amax = np.abs(v)[rows, first]
    mx = np.where(amax > 0, v[rows, first], np.float32(0.0)).astype(np.float32)
    d = (mx / np.float32(-8.0)).astype(np.float32)
    inv = _recip(d)[:, None]
    with np.errstate(invalid="ignore"):
        q = np.trunc(v * inv + np.float32(8.5))
    nib = np.minimum(15, q.astype(np.int64)).astype(np.uint8)
    qs = (nib[:, : QK // 2] | (nib[:, QK // 2 :] << 4)).astype(np.uint8)
    return _pack(d, qs)


def _roundf(v: F32) -> npt.NDArray[np.int64]:
    """C's roundf: to nearest, halves away from zero (exact: the F32 value + 0.5 fits a double)."""
    w = v.astype(np.float64)
    return (np.sign(w) * np.floor(np.abs(w) + 0.5)).astype(np.int64)


@implements("CORE-74")
@checked
def quantize_q8_0(x: npt.ArrayLike) -> U8:
    """CORE-74: F32 values (a multiple of 32) -> Q8_0 blocks, as `quantize_row_q8_0_reference`."""
    v = _blocks(x)
    amax = np.max(np.abs(v), axis=1).astype(np.float32)
    d = (amax / np.float32(127.0)).astype(np.float32)
    qs = _roundf((v * _recip(d)[:, None]).astype(np.float32))
    return _pack(d, qs.astype(np.int8).view(np.uint8))


def _block_array(blocks: npt.ArrayLike, width: int, who: str) -> U8:
    """`blocks` as an array (n, width) of bytes; ValueError for anything else."""
    b = _array(blocks, np.uint8)
    if b.ndim != 2 or b.shape[1] != width:
        raise ValueError(f"{who}: blocks must be an array (n, {width}) of bytes, got shape {b.shape}")
    return b


@checked
def q4_0_values(blocks: U8) -> I32:
    """The 32 integers (nibble - 8) of each Q4_0 block, in element order."""
    qs = _block_array(blocks, Q4_0_BLOCK_BYTES, "q4_0_values")[:, 2:].astype(np.int32)
    return np.concatenate([(qs & 0x0F) - 8, (qs >> 4) - 8], axis=1)


@checked
def q8_0_values(blocks: U8) -> I32:
    """The 32 signed integers of each Q8_0 block."""
    return np.ascontiguousarray(_block_array(blocks, Q8_0_BLOCK_BYTES, "q8_0_values")[:, 2:]).view(np.int8).astype(np.int32)


@implements("CORE-75")
@checked
def dequantize_q4_0(blocks: npt.ArrayLike) -> F32:
    """CORE-75: Q4_0 blocks (n, 18) -> F32 values (n * 32), one F32 multiplication each."""
    b = _array(blocks, np.uint8).reshape(-1, Q4_0_BLOCK_BYTES)
    return (q4_0_values(b).astype(np.float32) * _scale(b)[:, None]).reshape(-1)


@implements("CORE-75")
@checked
def dequantize_q8_0(blocks: npt.ArrayLike) -> F32:
    """CORE-75: Q8_0 blocks (n, 34) -> F32 values (n * 32)."""
    b = _array(blocks, np.uint8).reshape(-1, Q8_0_BLOCK_BYTES)
    return (q8_0_values(b).astype(np.float32) * _scale(b)[:, None]).reshape(-1)


@implements("CORE-76")
@checked
def vec_dot_q_q8_0(q4: bool, a: npt.ArrayLike, b: npt.ArrayLike) -> F32:
    """CORE-76: dot products of rows of Q4_0 (`q4`) or Q8_0 blocks `a` (rows, nb, bytes) with
    one row of Q8_0 blocks `b` (nb, 34), in rc.8's portable order; one F32 result per row."""
    a_blocks = _array(a, np.uint8)
    if a_blocks.ndim != 3:
        raise ValueError(f"vec_dot_q_q8_0: a must be blocks (rows, nb, bytes), got an array of shape {a_blocks.shape}")
    rows, nb = a_blocks.shape[0], a_blocks.shape[1]
    flat = a_blocks.reshape(rows * nb, -1)
    qa = (q4_0_values(flat) if q4 else q8_0_values(flat)).reshape(rows, nb, QK)
    da = _scale(flat).reshape(rows, nb)
    b_blocks = _array(b, np.uint8).reshape(nb, Q8_0_BLOCK_BYTES)
    qb, db = q8_0_values(b_blocks), _scale(b_blocks)
    sumi = np.einsum("rbk,bk->rb", qa.astype(np.int64), qb.astype(np.int64)).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        terms = (sumi * da) * db if q4 else sumi * (da * db)
        total = np.zeros(rows, dtype=np.float32)
        for i in range(nb):  # block by block, in F32
            total = (total + terms[:, i]).astype(np.float32)
    return total
