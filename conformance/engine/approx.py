"""Comparing computed values within the tolerances of spec/core.md ("Tolerances").

An `Approx` is an observation value: a tensor's elements in logical order, with the absolute and
relative tolerance the spec allows for the operation and types that produced them. Two `Approx`
compare equal when every element pair is within the looser of the two sides' tolerances
(`|x - y| <= max(atol) + max(rtol) * max(|x|, |y|)`, element by element), so the harness's plain
`observations == observations` applies the tolerances. An `Approx` made `exact` (the table's
"bytes, exactly" rows: ADD, MUL, SCALE, GET_ROWS) compares the values' bits, the sign of zero
included. After a failed comparison both sides' `repr` show the largest difference, where it
is, and what was allowed there.

Each side computes its own bound from the sources *it* read (the reference from its sources, a
target from its own); taking the looser of the two keeps the comparison symmetric.

The helpers below compute the bounds of the tolerance table: `mul_mat_atol` (F32 / F16 and
Q4_0 / Q8_0 weights; `f16_operands_atol`, what a device with kernels of its own may add to the
F32 row), `norm_atol`, `soft_max_tolerance`, `unary_tolerance`. `decode` turns a
tensor's bytes (as `tensor_get` returns them from its data, over `nbytes`) into its logical
elements. Data-movement results (DUP, CPY, CONT, views) are compared as raw bytes by the
checks, not through this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from ggspec.reference.quants import Q4_0_BLOCK_BYTES, Q8_0_BLOCK_BYTES, QK, fp16_to_fp32, q4_0_values, q8_0_values
from ggspec.reference.types import GGMLType, type_size

from ..target import TensorInfo

Array = npt.NDArray[Any]

#: F32 unit roundoff and F16's (spec/core.md, Tolerances: `u`, `u16`)
U = 2.0**-24
U16 = 2.0**-11
#: the smallest normal F32
TINY = 2.0**-126

__all__ = ["Approx", "decode", "dequantized_blocks", "f16_operands_atol", "mul_mat_atol", "norm_atol",
           "soft_max_tolerance", "unary_tolerance"]


class Approx:
    """Computed values and the tolerance they are compared with.

    `values`: the elements in logical order, numpy shape (ne3, ne2, ne1, ne0); `atol`: an
    absolute bound, a scalar or an array broadcastable to `values`; `rtol`: a bound relative to
    the larger magnitude of the two values compared; `what`: the rule, for messages. With
    `exact` the values' bit patterns must be equal (as float32, so F16 values, which are exact in
    F32, compare bit for bit too; the sign of zero counts); without it a bound of 0 still lets
    +0.0 and -0.0 (and two NaNs) compare equal, as `|Δ| ≤ 0` does.
    """

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, values: npt.ArrayLike, atol: npt.ArrayLike = 0.0, rtol: float = 0.0, what: str = "",
                 exact: bool = False) -> None:
        self.values: Array = np.asarray(values)
        if self.values.dtype.kind == "f":
            self.values = self.values.astype(np.float32)
        self.atol: Array = np.broadcast_to(np.asarray(atol, dtype=np.float64), self.values.shape)
        self.rtol = float(rtol)
        self.exact = exact
        self.what = what or ("bit-exact" if exact else "within tolerance")
        #: filled by a failed comparison: a line saying where and by how much the sides differ
        self.mismatch = ""

    # comparison --------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Approx):
            return NotImplemented
        if self.values.shape != other.values.shape or self.values.dtype.kind != other.values.dtype.kind:
            note = f"shapes differ: {self.values.shape} {self.values.dtype} vs {other.values.shape} {other.values.dtype}"
            self.mismatch = other.mismatch = note
            return False
        if self.values.size == 0:
            return True
        if self.exact and other.exact:
            return self._exact_equal(other)
        return self._close(other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def _exact_equal(self, other: Approx) -> bool:
        a, b = _bits(self.values), _bits(other.values)
        bad = a != b
        if not bool(bad.any()):
            return True
        self._report(other, bad, np.zeros(self.values.shape))
        return False

    def _close(self, other: Approx) -> bool:
        x = self.values.astype(np.float64)
        y = other.values.astype(np.float64)
        rtol = max(self.rtol, other.rtol)
        with np.errstate(invalid="ignore", over="ignore"):
            allowed = np.maximum(self.atol, other.atol)
            if rtol:
                allowed = allowed + rtol * np.maximum(np.abs(x), np.abs(y))
            diff = np.abs(x - y)
            same = (np.isnan(x) & np.isnan(y)) | (x == y)
            special = ~np.isfinite(x) | ~np.isfinite(y)  # infinities and NaNs must match exactly
            bad = ~same & (special | ~(diff <= np.nan_to_num(allowed, nan=np.inf)))
        if not bool(bad.any()):
            return True
        self._report(other, bad, allowed)
        return False

    def _report(self, other: Approx, bad: Array, allowed: Array) -> None:
        x = self.values.astype(np.float64)
        y = other.values.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            excess = np.where(bad, np.nan_to_num(np.abs(x - y), nan=np.inf, posinf=np.inf) - allowed, -np.inf)
        flat = int(np.argmax(excess))
        where = tuple(int(i) for i in reversed(np.unravel_index(flat, x.shape)))  # (i0, i1, i2, i3)
        xv, yv = float(x.flat[flat]), float(y.flat[flat])
        note = (f"{int(bad.sum())} of {x.size} element(s) out of tolerance; worst at (i0, i1, ...) = {where}: "
                f"{xv!r} vs {yv!r}, |Δ| = {abs(xv - yv):.3g}, "
                f"allowed {float(allowed.flat[flat]):.3g}")
        self.mismatch = other.mismatch = note

    # display -----------------------------------------------------------------------------

    def __repr__(self) -> str:
        shape = list(reversed(self.values.shape))  # [ne0, ne1, ne2, ne3]
        flat = self.values.reshape(-1)
        head = ", ".join(f"{v:.6g}" if self.values.dtype.kind == "f" else str(v) for v in flat[:6])
        more = ", ..." if flat.size > 6 else ""
        text = f"Approx({self.values.dtype.name}{shape} [{head}{more}], {self.what}"
        if not self.exact:
            text += f", atol<={float(self.atol.max()) if self.atol.size else 0.0:.3g}, rtol={self.rtol:.3g}"
        if self.mismatch:
            text += f"; DIFFERS: {self.mismatch}"
        return text + ")"


def _bits(v: Array) -> Array:
    if v.dtype.kind == "f":
        return v.astype(np.float32).view(np.uint32)
    return v


# --- decoding a tensor's bytes ----------------------------------------------------------------


def dequantized_blocks(type_: GGMLType, blocks: Array) -> tuple[Array, Array]:
    """(integers, d): each block's 32 integers (Q4_0: nibble - 8) and its F32 scale."""
    size = Q4_0_BLOCK_BYTES if type_ == GGMLType.Q4_0 else Q8_0_BLOCK_BYTES
    flat = np.ascontiguousarray(blocks, dtype=np.uint8).reshape(-1, size)
    q = q4_0_values(flat) if type_ == GGMLType.Q4_0 else q8_0_values(flat)
    d = fp16_to_fp32(np.ascontiguousarray(flat[:, :2]).view("<u2").reshape(-1))
    return q, d


def decode(info: TensorInfo, raw: bytes) -> Array:
    """A tensor's elements in logical order, numpy shape (ne3, ne2, ne1, ne0), from the bytes
    `tensor_get(t, 0, nbytes(t))` returned: F32 as float32, F16 converted to float32 (exactly),
    Q4_0 / Q8_0 dequantized (CORE-75), integer types as they are."""
    t = GGMLType(info.type)
    ne, nb = info.ne, info.nb
    shape = (ne[3], ne[2], ne[1], ne[0])
    if t in (GGMLType.Q4_0, GGMLType.Q8_0):
        ts = type_size(t)
        blocks = np.ndarray((ne[3], ne[2], ne[1], ne[0] // QK, ts), dtype=np.uint8, buffer=raw,
                            strides=(nb[3], nb[2], nb[1], nb[0], 1))
        q, d = dequantized_blocks(t, blocks.reshape(-1, ts))
        return (q.astype(np.float32) * d[:, None]).astype(np.float32).reshape(shape)
    dtype = {GGMLType.F32: "<f4", GGMLType.F16: "<u2", GGMLType.I32: "<i4", GGMLType.I16: "<i2",
             GGMLType.I8: "i1"}[t]
    v = np.ndarray(shape, dtype=np.dtype(dtype), buffer=raw, strides=(nb[3], nb[2], nb[1], nb[0])).copy()
    return fp16_to_fp32(v) if t == GGMLType.F16 else v


# --- the bounds of the tolerance table ------------------------------------------------------


def _batched(a: Array, ne3: int, ne2: int) -> Array:
    """MUL_MAT's broadcast of `a` over b's dimensions 2 and 3 (batch i2 uses a's i2 / r2)."""
    return np.repeat(np.repeat(a, ne3 // a.shape[0], axis=0), ne2 // a.shape[1], axis=1)


def mul_mat_atol(a_type: GGMLType, a: Array, b_prime: Array, a_blocks: tuple[Array, Array] | None = None,
                 b_blocks: tuple[Array, Array] | None = None) -> Array:
    """The MUL_MAT rows of the tolerance table, per result element (numpy shape of the result).

    F32 / F16 weights: `K·2u·Σ_k |a_k·b'_k| + 2⁻¹²⁶` from the values `a` (ne3a, ne2a, ne1a, K)
    and `b'` (ne3, ne2, ne1, K). Q4_0 / Q8_0 weights: `(nb+2)·2u·Σ_blocks |s·d_a·d_b|` from the
    blocks' integers and scales: `a_blocks` = (integers (rows_a·nb, 32), d (rows_a·nb)) in a's
    logical row order, `b_blocks` likewise for b' (Q8_0)."""
    ne3, ne2 = b_prime.shape[0], b_prime.shape[1]
    k = a.shape[-1] if a_blocks is None else b_prime.shape[-1]
    if a_type not in (GGMLType.Q4_0, GGMLType.Q8_0):
        aa = _batched(np.abs(a.astype(np.float64)), ne3, ne2)
        bb = np.abs(b_prime.astype(np.float64))
        total: Array = np.einsum("xyik,xyjk->xyij", bb, aa)
        return np.asarray(k * 2 * U * total + TINY, dtype=np.float64)
    assert a_blocks is not None and b_blocks is not None
    nblk = k // QK
    qa, da = a_blocks
    qb, db = b_blocks
    ash = a.shape  # (ne3a, ne2a, ne1a, K): only the shape is used
    qa4 = qa.reshape(ash[0], ash[1], ash[2], nblk, QK).astype(np.int64)
    da4 = np.abs(da.reshape(ash[0], ash[1], ash[2], nblk).astype(np.float64))
    qb4 = qb.reshape(ne3, ne2, b_prime.shape[2], nblk, QK).astype(np.int64)
    db4 = np.abs(db.reshape(ne3, ne2, b_prime.shape[2], nblk).astype(np.float64))
    qa4, da4 = _batched(qa4, ne3, ne2), _batched(da4, ne3, ne2)
    s = np.abs(np.einsum("xyinq,xyjnq->xyijn", qb4, qa4)).astype(np.float64)
    total_q: Array = np.einsum("xyijn,xyjn,xyin->xyij", s, da4, db4)
    return np.asarray((nblk + 2) * 2 * U * total_q, dtype=np.float64)


def f16_operands_atol(a: Array, b_prime: Array) -> Array:
    """The MUL_MAT row's allowance for a device with kernels of its own that rounds F32 operands
    to F16 before multiplying (spec/core.md, Devices with kernels of their own), per result
    element: `Σ_k (2u16 + u16²)·|a_k·b_k| + 2⁻²⁴·(|a_k| + |b_k|) + 2⁻⁵⁰`. Each operand within
    F16's range is off by at most `u16·|x| + 2⁻²⁵` once rounded (2⁻²⁵: half of F16's subnormal
    spacing), and a product of two such is off by the sum's terms. Shapes as `mul_mat_atol`."""
    ne3, ne2 = b_prime.shape[0], b_prime.shape[1]
    aa = _batched(np.abs(a.astype(np.float64)), ne3, ne2)
    bb = np.abs(b_prime.astype(np.float64))
    products: Array = np.einsum("xyik,xyjk->xyij", bb, aa)
    a_sums = aa.sum(axis=-1)[:, :, None, :]  # (ne3, ne2, 1, ne1a): over k, for each row of a
    b_sums = bb.sum(axis=-1)[:, :, :, None]  # (ne3, ne2, ne1, 1)
    k = a.shape[-1]
    return np.asarray((2 * U16 + U16 * U16) * products + 2.0**-24 * (a_sums + b_sums) + k * 2.0**-50, dtype=np.float64)


def norm_atol(x: Array, dst: Array, eps: float) -> Array:
    """NORM: per row, `2⁻²⁰·(max_j |dst_j| + scale·|mean|)` (broadcast over the row)."""
    xd = x.astype(np.float64)
    n = max(x.shape[-1], 1)
    mean = xd.sum(axis=-1, keepdims=True) / n
    var = ((xd - mean) ** 2).sum(axis=-1, keepdims=True) / n
    scale = 1.0 / np.sqrt(var + eps)
    with np.errstate(invalid="ignore"):
        top = np.nan_to_num(np.abs(dst.astype(np.float64)), nan=0.0, posinf=0.0).max(axis=-1, keepdims=True)
    return np.broadcast_to(2.0**-20 * (top + scale * np.abs(mean)), x.shape)


def soft_max_tolerance() -> tuple[float, float]:
    """SOFT_MAX: `|Δ| ≤ 2⁻¹⁰·|dst| + 2⁻²⁴` as (atol, rtol)."""
    return 2.0**-24, 2.0**-10


def unary_tolerance(x: Array) -> tuple[Array, float]:
    """GELU, SILU: `|Δ| ≤ 2⁻⁹·(|dst| + |x|) + 2⁻²⁴` as (atol per element, rtol)."""
    return 2.0**-9 * np.abs(x.astype(np.float64)) + 2.0**-24, 2.0**-9
