"""CORE-15 to CORE-76: operation constructors, and what computing each node writes.

Constructors take a `Context` and return the result tensor, as `ggml_add(ctx, a, b)` does;
`compute(node, memory)` computes one node with numpy on the bytes of the world's address space,
through a `Memory` — host memory for the CPU backend (`HostMemory`), a device's own storage for
the virtual device. Which ops and types are modelled is the table `ALL_OP_TABLE` at the end.

Where rc.8's CPU code rounds in a particular order (double-precision sums in index order, F16
tables for GELU / SILU / exp), the model does the same, so that against an x86-64 build with
default flags it is bit-exact; spec/core.md's tolerance table says what the suite requires.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from .checked import checked, nonnull
from .clauses import NotBinding, SpecViolation, UndefinedBehaviour, implements, require, undefined
from .quants import (
    QK,
    dequantize_q4_0,
    dequantize_q8_0,
    fp16_to_fp32,
    fp32_to_fp16,
    quantize_q4_0,
    quantize_q8_0,
    round_f16,
    vec_dot_q_q8_0,
)
from .tensor import Context, Tensor, contiguous_strides, cut_name, dup_tensor, nbytes
from .types import MAX_DIMS, GGMLType, Op, row_size, traits, type_size
from .world import World

F32 = npt.NDArray[np.float32]
#: element arrays of any dtype (F16 elements are uint16 bit patterns, quantized data uint8 blocks)
Array = npt.NDArray[Any]


class NotModelled(NotImplementedError):
    """An op, or an op on these types, that ggspec's reference does not model (see ALL_OP_TABLE)."""


class UnaryOp:
    """`enum ggml_unary_op` values used by the model (CORE-47)."""

    GELU = 7
    SILU = 9


# --- memory the computation reads and writes ------------------------------------------------


class Memory(Protocol):
    """Byte access for a computation: the reach of one backend (BACK-14)."""

    def read(self, addr: int, size: int) -> bytes: ...
    def write(self, addr: int, payload: bytes) -> None: ...


class HostMemory:
    """What the CPU code can touch: host regions of the world's address space (BACK-14)."""

    def __init__(self, world: World) -> None:
        self.space = world.memory

    def _check(self, addr: int, size: int) -> None:
        try:
            region = self.space.region_of(addr, size)
        except UndefinedBehaviour:
            undefined("BACK-14", f"the CPU computes on unmapped memory [{addr:#x}, {addr + size:#x})")
        if not region.host:
            undefined("BACK-14", f"the CPU computes on device memory at {addr:#x} ({region.label})")

    def read(self, addr: int, size: int) -> bytes:
        self._check(addr, size)
        return self.space.read(addr, size)

    def write(self, addr: int, payload: bytes) -> None:
        self._check(addr, len(payload))
        self.space.write(addr, payload)


# --- shape predicates (ggml.c's helpers) ----------------------------------------------------



def _pack(fmt: str, *values: object) -> bytes:
    """The op's parameters as rc.8 stores them in op_params (int32 / float32 slots); ValueError
    for a value that does not fit its C type (rc.8 cannot be called with it)."""
    try:
        return struct.pack(fmt, *values)
    except (struct.error, OverflowError) as exc:
        raise ValueError(f"an op parameter {values!r} does not fit its C type ({fmt[1:]}): {exc}") from None


@checked
def nelements(t: Tensor) -> int:
    return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]


@checked
def nrows(t: Tensor) -> int:
    return t.ne[1] * t.ne[2] * t.ne[3]


@checked
def is_quantized(t: GGMLType) -> bool:
    return traits(t).is_quantized


@checked
def is_contiguous(t: Tensor) -> bool:
    return t.nb == contiguous_strides(t.type, t.ne)


@checked
def is_transposed(t: Tensor) -> bool:
    return t.nb[0] > t.nb[1]


@checked
def is_padded_1d(t: Tensor) -> bool:
    return t.nb[0] == type_size(t.type) and t.nb[2] == t.nb[1] * t.ne[1] and t.nb[3] == t.nb[2] * t.ne[2]


@checked
def is_contiguous_except_dim_1(t: Tensor) -> bool:
    return is_padded_1d(t)  # the same three conditions in rc.8


@checked
def same_shape(a: Tensor, b: Tensor) -> bool:
    return all(a.ne[i] == b.ne[i] for i in range(MAX_DIMS))


@checked
def can_repeat(small: Tensor, big: Tensor) -> bool:
    """Each of `big`'s extents is a multiple of `small`'s."""
    return all(small.ne[i] != 0 and big.ne[i] % small.ne[i] == 0 for i in range(MAX_DIMS))


@checked
def can_repeat_rows(small: Tensor, big: Tensor) -> bool:
    return small.ne[0] == big.ne[0] and can_repeat(small, big)


@checked
def can_mul_mat(a: Tensor, b: Tensor) -> bool:
    return a.ne[0] == b.ne[0] and b.ne[2] % a.ne[2] == 0 and b.ne[3] % a.ne[3] == 0


@checked
def op_params64(t: Tensor) -> bytes:
    """The tensor's 64 op_params bytes (zero past what the constructor wrote)."""
    return t.op_params.ljust(64, b"\0")


#: op_params is `int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)]`: 16 slots
OP_PARAM_SLOTS = 16


def _slot(fn: str, i: int) -> int:
    if not 0 <= i < OP_PARAM_SLOTS:
        raise ValueError(f"{fn}: i is a slot of op_params, 0 to {OP_PARAM_SLOTS - 1}, got {i}")
    return 4 * i


@checked
def op_param_f32(t: Tensor, i: int = 0) -> float:
    return float(struct.unpack_from("<f", op_params64(t), _slot("op_param_f32", i))[0])


@checked
def op_param_i32(t: Tensor, i: int = 0) -> int:
    return int(struct.unpack_from("<i", op_params64(t), _slot("op_param_i32", i))[0])


def _set_name(t: Tensor, text: str) -> None:
    """snprintf into char name[64]: at most 63 bytes are kept (CORE-80)."""
    t.name = cut_name(text)


# --- making result tensors -----------------------------------------------------------------


def _full(ne: Sequence[int]) -> list[int]:
    return [int(n) for n in ne] + [1] * (MAX_DIMS - len(ne))


@checked
def new_tensor(ctx: Context, type_: GGMLType, ne: Sequence[int]) -> Tensor:
    """A fresh contiguous tensor (CORE-2, CORE-6)."""
    return ctx.new_tensor(type_, _full(ne))


def _view_of(ctx: Context, a: Tensor, type_: GGMLType, ne: Sequence[int], offset: int) -> Tensor:
    """rc.8's tensor constructor with a view source: re-rooted at `a`'s root (CORE-4, CORE-5)."""
    root, offs = (a.view_src, offset + a.view_offs) if a.view_src is not None else (a, offset)
    full = _full(ne)
    data_size = row_size(type_, full[0]) * full[1] * full[2] * full[3]
    require(data_size + offs <= nbytes(root), "CORE-5")
    t = Tensor(ctx, type_, full, contiguous_strides(type_, full), view_src=root, view_offs=offs)
    t.data = root.data + offs if root.data is not None else None
    ctx.tensors.append(t)
    return t


@checked
def view_tensor(ctx: Context, a: Tensor) -> Tensor:
    """`ggml_view_tensor`: a view of all of `a`, same strides, op NONE, named "<a> (view)"."""
    t = _view_of(ctx, a, a.type, a.ne, 0)
    t.nb = list(a.nb)
    _set_name(t, f"{a.name} (view)")
    return t


@implements("CORE-15")
def _grad(ctx: Context, result: Tensor, *operands: Tensor | None) -> Tensor:
    """CORE-15: the result gets a gradient tensor when an operand has one."""
    if any(o is not None and o.grad is not None for o in operands):
        result.grad = dup_tensor(ctx, result)
    return result


def _op(t: Tensor, op: Op, *srcs: Tensor | None, params: bytes = b"") -> Tensor:
    t.op = op
    for i, s in enumerate(srcs):
        t.src[i] = s
    if params:
        t.op_params = params
    return t


# --- constructors ----------------------------------------------------------------------------


@implements("CORE-16")
@checked
def dup(ctx: Context, a: Tensor) -> Tensor:
    """CORE-16: `ggml_dup(ctx, a)`."""
    return _grad(ctx, _op(dup_tensor(ctx, a), Op.DUP, a), a)


def _binary(ctx: Context, op: Op, a: Tensor, b: Tensor) -> Tensor:
    require(can_repeat(b, a), "CORE-18")
    if a.grad is not None or b.grad is not None:
        require(same_shape(a, b), "CORE-19")
    return _grad(ctx, _op(dup_tensor(ctx, a), op, a, b), a, b)


@implements("CORE-17")
@checked
def add(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
    """CORE-17 to CORE-19: `ggml_add(ctx, a, b)`; `b` is repeated over `a`."""
    return _binary(ctx, Op.ADD, a, b)


@implements("CORE-17")
@checked
def mul(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
    """CORE-17 to CORE-19: `ggml_mul(ctx, a, b)`."""
    return _binary(ctx, Op.MUL, a, b)


@implements("CORE-20")
@checked
def scale(ctx: Context, a: Tensor, s: float) -> Tensor:
    """CORE-20, CORE-21: `ggml_scale(ctx, a, s)`; the factor is op_params[0] as a float."""
    require(is_padded_1d(a), "CORE-21")
    return _grad(ctx, _op(dup_tensor(ctx, a), Op.SCALE, a, params=_pack("<f", s)), a)


@implements("CORE-22")
@checked
def mul_mat(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
    """CORE-22 to CORE-24: `ggml_mul_mat(ctx, a, b)`: F32 [a.ne1, b.ne1, b.ne2, b.ne3]."""
    require(can_mul_mat(a, b), "CORE-23")
    require(not is_transposed(a), "CORE-24")
    result = new_tensor(ctx, GGMLType.F32, [a.ne[1], b.ne[1], b.ne[2], b.ne[3]])
    return _grad(ctx, _op(result, Op.MUL_MAT, a, b), a, b)


@implements("CORE-25")
@checked
def cpy(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
    """CORE-25, CORE-26: `ggml_cpy(ctx, a, b)`: a view of `b` that computing fills with `a`."""
    require(nelements(a) == nelements(b), "CORE-26")
    result = view_tensor(ctx, b)
    _set_name(result, f"{b.name} (copy of {a.name})" if b.name else f"{a.name} (copy)")
    return _grad(ctx, _op(result, Op.CPY, a, b), a, b)


@implements("CORE-27")
@checked
def cont(ctx: Context, a: Tensor) -> Tensor:
    """CORE-27: `ggml_cont(ctx, a)`: a contiguous copy."""
    result = dup_tensor(ctx, a)
    _set_name(result, f"{a.name} (cont)")
    return _grad(ctx, _op(result, Op.CONT, a), a)


@implements("CORE-28")
@checked
def view(ctx: Context, a: Tensor, ne: Sequence[int], nb: Sequence[int], offset: int) -> Tensor:
    """CORE-28: `ggml_view_{1,2,3,4}d(ctx, a, ne..., nb[1:]..., offset)` (CORE-4's view)."""
    return _grad(ctx, ctx.view(a, ne, nb, offset), a)


def _reshape(ctx: Context, a: Tensor, ne: Sequence[int], count_ok: bool) -> Tensor:
    require(is_contiguous(a), "CORE-30")
    require(count_ok, "CORE-31")
    result = _view_of(ctx, a, a.type, ne, 0)
    _set_name(result, f"{a.name} (reshaped)")
    return _grad(ctx, _op(result, Op.RESHAPE, a), a)


@implements("CORE-29")
@checked
def reshape(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
    """CORE-29 to CORE-31: `ggml_reshape(ctx, a, b)`: `a`'s bytes in `b`'s shape."""
    return _reshape(ctx, a, b.ne, nelements(a) == nelements(b))


@implements("CORE-29")
@checked
def reshape_nd(ctx: Context, a: Tensor, ne: Sequence[int]) -> Tensor:
    """CORE-29 to CORE-31: `ggml_reshape_{1,2,3,4}d(ctx, a, ne...)` by the number of extents."""
    if not 1 <= len(ne) <= MAX_DIMS:
        raise ValueError(f"reshape takes 1 to 4 extents, got {list(ne)}")
    return _reshape(ctx, a, ne, nelements(a) == int(np.prod([int(n) for n in ne])))


@implements("CORE-32")
@checked
def permute(ctx: Context, a: Tensor, ax0: int, ax1: int, ax2: int, ax3: int) -> Tensor:
    """CORE-32 to CORE-34: `ggml_permute`: dimension i of `a` becomes dimension ax_i."""
    axes = (ax0, ax1, ax2, ax3)
    for ax in axes:
        require(0 <= ax < MAX_DIMS, "CORE-33")
    for i in range(MAX_DIMS):
        for j in range(i + 1, MAX_DIMS):
            require(axes[i] != axes[j], "CORE-34")
    result = view_tensor(ctx, a)
    _set_name(result, f"{a.name} (permuted)")
    ne, nb = [0] * MAX_DIMS, [0] * MAX_DIMS
    for i, ax in enumerate(axes):
        ne[ax], nb[ax] = a.ne[i], a.nb[i]
    result.ne, result.nb = ne, nb
    _op(result, Op.PERMUTE, a, params=_pack("<4i", *axes))
    return _grad(ctx, result, a)


@implements("CORE-35")
@checked
def transpose(ctx: Context, a: Tensor) -> Tensor:
    """CORE-35: `ggml_transpose`: dimensions 0 and 1 swapped, no bytes moved."""
    result = view_tensor(ctx, a)
    _set_name(result, f"{a.name} (transposed)")
    result.ne[0], result.ne[1] = a.ne[1], a.ne[0]
    result.nb[0], result.nb[1] = a.nb[1], a.nb[0]
    return _grad(ctx, _op(result, Op.TRANSPOSE, a), a)


@implements("CORE-36")
@checked
def get_rows(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
    """CORE-36 to CORE-39: `ggml_get_rows(ctx, a, b)`: rows of `a` numbered by `b`, as F32."""
    require(a.ne[2] == b.ne[1], "CORE-37")
    require(b.ne[3] == 1, "CORE-38")
    require(b.type == GGMLType.I32, "CORE-39")
    type_ = GGMLType.I32 if a.type == GGMLType.I32 else GGMLType.F32
    result = new_tensor(ctx, type_, [a.ne[0], b.ne[0], b.ne[1], b.ne[2]])
    return _grad(ctx, _op(result, Op.GET_ROWS, a, b), a, b)


@implements("CORE-40")
@checked
def norm(ctx: Context, a: Tensor, eps: float) -> Tensor:
    """CORE-40: `ggml_norm(ctx, a, eps)`; rc.8 has no backward pass for it (CORE-49)."""
    require(a.grad is None, "CORE-49")
    return _op(dup_tensor(ctx, a), Op.NORM, a, params=_pack("<f", eps))


@implements("CORE-40")
@checked
def norm_inplace(ctx: Context, a: Tensor, eps: float) -> Tensor:
    """CORE-40: `ggml_norm_inplace(ctx, a, eps)`: a view of all of `a` made the NORM node. "The
    in-place form does not look at the gradient": no abort when `a` has one, and no gradient."""
    return _op(view_tensor(ctx, a), Op.NORM, a, params=_pack("<f", eps))


@implements("CORE-41")
@checked
def soft_max_ext(ctx: Context, a: Tensor, mask: Tensor | None, scale: float) -> Tensor:
    """CORE-41 to CORE-46: `ggml_soft_max_ext(ctx, a, mask, scale)`."""
    require(is_contiguous(a), "CORE-42")
    if mask is not None:
        require(is_contiguous(mask), "CORE-43")
        require(mask.ne[2] == 1, "CORE-44")
        require(mask.ne[3] == 1, "CORE-45")
        require(can_repeat_rows(mask, a), "CORE-46")
    result = _op(dup_tensor(ctx, a), Op.SOFT_MAX, a, mask, params=_pack("<f", scale))
    return _grad(ctx, result, a)


@implements("CORE-41")
@checked
def soft_max(ctx: Context, a: Tensor) -> Tensor:
    """CORE-41: `ggml_soft_max(ctx, a)`: no mask, scale 1."""
    return soft_max_ext(ctx, a, None, 1.0)


@implements("CORE-47")
@checked
def unary(ctx: Context, a: Tensor, op: int) -> Tensor:
    """CORE-47: `ggml_unary(ctx, a, op)`: op UNARY with the unary op in op_params[0]."""
    return _grad(ctx, _op(dup_tensor(ctx, a), Op.UNARY, a, params=_pack("<i", op)), a)


@checked
def gelu(ctx: Context, a: Tensor) -> Tensor:
    """CORE-47: `ggml_gelu(ctx, a)`."""
    return unary(ctx, a, UnaryOp.GELU)


@checked
def silu(ctx: Context, a: Tensor) -> Tensor:
    """CORE-47: `ggml_silu(ctx, a)`."""
    return unary(ctx, a, UnaryOp.SILU)


# --- reading and writing tensors in memory ---------------------------------------------------

_ELEMENT_DTYPE: dict[GGMLType, str] = {
    GGMLType.F32: "<f4",
    GGMLType.F16: "<u2",  # F16 elements travel as bit patterns
    GGMLType.I32: "<i4",
    GGMLType.I16: "<i2",
    GGMLType.I8: "i1",
}


def _span(mem: Memory, t: Tensor) -> bytes:
    if t.data is None:
        undefined("CORE-48", f"computing reads or writes {t!r}, which has no memory")
    return mem.read(t.data, nbytes(t))


def _layout(t: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], np.dtype[np.generic]]:
    """numpy shape, strides and dtype of a tensor in logical order: (ne3, ne2, ne1, ne0[, bytes])."""
    if is_quantized(t.type):
        bs, ts = traits(t.type).blck_size, type_size(t.type)
        if t.ne[0] % bs != 0 or t.nb[0] != ts:
            undefined("CORE-48", f"{t!r}: a quantized tensor is rows of whole, adjacent blocks")
        shape: tuple[int, ...] = (t.ne[3], t.ne[2], t.ne[1], t.ne[0] // bs, ts)
        return shape, (t.nb[3], t.nb[2], t.nb[1], t.nb[0], 1), np.dtype(np.uint8)
    if t.type not in _ELEMENT_DTYPE:
        raise NotModelled(f"tensors of type {t.type.name}")
    shape = (t.ne[3], t.ne[2], t.ne[1], t.ne[0])
    return shape, (t.nb[3], t.nb[2], t.nb[1], t.nb[0]), np.dtype(_ELEMENT_DTYPE[t.type])


@checked
def load(mem: Memory, t: Tensor) -> Array:
    """The tensor's elements (or blocks, for quantized types) in logical order."""
    shape, strides, dtype = _layout(t)
    raw = _span(mem, t)
    return np.ndarray(shape, dtype=dtype, buffer=raw, strides=strides).copy()


@checked
def store(mem: Memory, t: Tensor, values: npt.ArrayLike) -> None:
    """Write elements (or blocks) given in logical order into the tensor's memory."""
    shape, strides, dtype = _layout(t)
    raw = bytearray(_span(mem, t))  # CORE-48: refuses a tensor without memory
    np.ndarray(shape, dtype=dtype, buffer=raw, strides=strides)[...] = np.asarray(values).reshape(shape)
    mem.write(nonnull(t.data, "CORE-48", "the data of a tensor written"), bytes(raw))


@implements("CORE-49")
def _cpu_gap(cond: bool, node: Tensor, what: str) -> None:
    """CORE-49: where rc.8's CPU code has no path (it aborts with `GGML_ASSERT(false)`). Profile
    rc8 requires that abort; profile fixed leaves the node to the port (a port may implement
    it), so the suite stops judging there."""
    if cond:
        return
    if node.world.fixed:
        raise UndefinedBehaviour("CORE-49", f"not specified by profile fixed: rc.8's CPU code does not implement {what} "
                                 "(it aborts; a port may compute it)")
    require(False, "CORE-49")


@checked
def load_f32(mem: Memory, t: Tensor) -> F32:
    """An F32 or F16 tensor's values as F32."""
    v = load(mem, t)
    if t.type == GGMLType.F16:
        return fp16_to_fp32(v)
    if t.type == GGMLType.F32:
        return v.astype(np.float32)
    _cpu_gap(False, t, f"reading {t.type.name} as F32")
    raise AssertionError  # unreachable


def _src(node: Tensor, i: int) -> Tensor:
    s = node.src[i]
    if s is None:
        undefined("CORE-48", f"{node!r} ({node.op.name}) has no src[{i}]")
    return s


def _sequential_sum(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Sum along the last axis in index order (rc.8's scalar loops), not pairwise.

    rc.8's loops start from `sum = 0.0`: adding +0.0 first turns a sum of negative zeros into
    +0.0 (a cumulative sum alone would keep -0.0 and flip the sign of NORM's zero results)."""
    if x.shape[-1] == 0:
        return np.zeros(x.shape[:-1], dtype=np.float64)
    return np.cumsum(x, axis=-1)[..., -1] + 0.0


# --- computing nodes -------------------------------------------------------------------------


def _quantize_rows(t: GGMLType, rows: F32) -> npt.NDArray[np.uint8]:
    """Each row quantized on its own (CORE-51), blocks concatenated."""
    if rows.shape[-1] % QK != 0:
        undefined("CORE-51", f"quantizing rows of {rows.shape[-1]} elements (not a multiple of {QK})")
    fn = quantize_q4_0 if t == GGMLType.Q4_0 else quantize_q8_0
    return np.concatenate([fn(r) for r in rows.reshape(-1, rows.shape[-1])]) if rows.size else np.zeros((0,), np.uint8)


def _rows_land_elsewhere(src: Tensor, dst: Tensor) -> bool:
    """CORE-52's fast path applies and the shapes differ beyond dimension 0."""
    ts = type_size(src.type)
    fast = src.ne[0] == dst.ne[0] and src.nb[0] == ts and dst.nb[0] == ts
    return fast and src.ne[1:] != dst.ne[1:]


@implements("CORE-52")
def _copy_rows_rc8(mem: Memory, src: Tensor, dst: Tensor) -> None:
    """CORE-52 (rc8): source row (i1, i2, i3) goes to the destination's row (i1, i2, i3)."""
    dst_data = nonnull(dst.data, "CORE-48", "the data of the destination")
    rows = load(mem, src)
    row_bytes = src.ne[0] * type_size(src.type)
    end = dst_data + nbytes(dst)
    for i3 in range(src.ne[3]):
        for i2 in range(src.ne[2]):
            for i1 in range(src.ne[1]):
                addr = dst_data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3]
                if addr + row_bytes > end:
                    undefined("CORE-52", f"rc.8 copies row ({i1}, {i2}, {i3}) past the end of {dst!r}")
                mem.write(addr, rows[i3, i2, i1].tobytes())


def _cpu_errata_apply(node: Tensor, mem: Memory) -> bool:
    """Whether the errata of rc.8's CPU copy loops (CORE-52, CORE-53) shape this node: under
    profile rc8, and only where the CPU code computes it. A device with kernels of its own
    (DeviceMemory.cpu_code false) does not run those loops, so it is held to the fixed clause
    under both profiles (spec/core.md, Devices with kernels of their own)."""
    return not node.world.fixed and getattr(mem, "cpu_code", True)


@implements("CORE-51", "CORE-53")
@checked
def compute_dup(node: Tensor, mem: Memory) -> None:
    """CORE-51 to CORE-53: DUP, CPY and CONT copy in logical order, converting the type."""
    src, dst = _src(node, 0), node
    fixed = not _cpu_errata_apply(node, mem)
    if src.type == dst.type:
        if is_quantized(src.type):
            if not fixed:
                undefined("CORE-53", "rc.8 copies 32x the blocks of a quantized tensor")
            store(mem, dst, load(mem, src).reshape(-1, type_size(src.type)))
        elif not fixed and not (is_contiguous(src) and is_contiguous(dst)) and _rows_land_elsewhere(src, dst):
            _copy_rows_rc8(mem, src, dst)
        else:
            store(mem, dst, load(mem, src).reshape(-1))
        return
    pair = (src.type, dst.type)
    if pair == (GGMLType.F32, GGMLType.F16):
        store(mem, dst, fp32_to_fp16(load(mem, src)).reshape(-1))
    elif pair == (GGMLType.F16, GGMLType.F32):
        store(mem, dst, fp16_to_fp32(load(mem, src)).reshape(-1))
    elif src.type in (GGMLType.F32, GGMLType.F16) and dst.type in (GGMLType.Q4_0, GGMLType.Q8_0):
        _cpu_gap(is_contiguous(dst) and src.nb[0] == type_size(src.type), node,
                 "a conversion into a quantized type with a strided destination or source row")
        store(mem, dst, _quantize_rows(dst.type, load_f32(mem, src)))
    else:
        _cpu_gap(False, node, f"a copy from {src.type.name} to {dst.type.name}")


def _broadcast(b: Array, like: Tensor) -> Array:
    reps = tuple(like.ne[3 - i] // b.shape[i] for i in range(MAX_DIMS))
    return np.tile(b, reps)


@implements("CORE-54")
@checked
def compute_add(node: Tensor, mem: Memory) -> None:
    """CORE-54 to CORE-56: ADD, with b repeated over a (F32), or same shapes (F16)."""
    a, b = _src(node, 0), _src(node, 1)
    if a.type == GGMLType.F32:
        require(a.nb[0] == 4, "CORE-56")
        if b.type != GGMLType.F32:
            undefined("CORE-54", f"rc.8 reads the {b.type.name} operand of an F32 ADD as F32")
        with np.errstate(over="ignore", invalid="ignore"):
            store(mem, node, load(mem, a) + _broadcast(load(mem, b), a))
    elif a.type == GGMLType.F16:
        _cpu_gap(b.type in (GGMLType.F16, GGMLType.F32), node, f"ADD of F16 and {b.type.name}")
        require(same_shape(a, b) and same_shape(a, node), "CORE-55")
        if a.nb[0] != 2:
            undefined("CORE-54", "an F16 ADD whose first operand's elements are not adjacent (rc.8 aborts)")
        _cpu_gap(b.nb[0] == type_size(b.type), node, "an F16 ADD whose second operand's elements are not adjacent")
        with np.errstate(over="ignore", invalid="ignore"):
            total = (load_f32(mem, a) + load_f32(mem, b)).astype(np.float32)
        store(mem, node, fp32_to_fp16(total) if node.type == GGMLType.F16 else total)
    elif is_quantized(a.type):
        raise NotModelled("ADD of a quantized tensor")
    else:
        _cpu_gap(False, node, f"ADD of {a.type.name}")


@implements("CORE-57")
@checked
def compute_mul(node: Tensor, mem: Memory) -> None:
    """CORE-57, CORE-58: MUL of F32 tensors, b repeated over a."""
    a, b = _src(node, 0), _src(node, 1)
    require(b.type == GGMLType.F32, "CORE-58")
    _cpu_gap(a.type == GGMLType.F32, node, f"MUL of {a.type.name}")
    require(a.nb[0] == 4, "CORE-56")
    with np.errstate(over="ignore", invalid="ignore"):
        store(mem, node, load(mem, a) * _broadcast(load(mem, b), a))


@implements("CORE-59")
@checked
def compute_scale(node: Tensor, mem: Memory) -> None:
    """CORE-59, CORE-60: SCALE by op_params[0], F32 only."""
    a = _src(node, 0)
    _cpu_gap(a.type == GGMLType.F32, node, f"SCALE of {a.type.name}")
    require(is_contiguous(a), "CORE-60")
    with np.errstate(over="ignore", invalid="ignore"):
        store(mem, node, load(mem, a) * np.float32(op_param_f32(node)))


def _dot_f32(rows_a: F32, col_b: F32) -> F32:
    """rc.8's scalar F32 dot products: each product in F32, summed in double in index order."""
    with np.errstate(over="ignore", invalid="ignore"):
        products = (rows_a * col_b[None, :]).astype(np.float64)
    return _sequential_sum(products).astype(np.float32)


def _q8_0_rows(mem: Memory, b: Tensor) -> npt.NDArray[np.uint8]:
    """MUL_MAT's b as Q8_0 blocks: as stored, or each F32 row quantized (CORE-61, CORE-74)."""
    if b.type == GGMLType.Q8_0:
        return load(mem, b).astype(np.uint8)
    values = load_f32(mem, b)
    shape = values.shape
    if shape[-1] % QK != 0:
        undefined("CORE-61", f"quantizing rows of {shape[-1]} elements (not a multiple of {QK})")
    blocks = quantize_q8_0(values.reshape(-1))  # rows are whole blocks, so this is row by row
    return blocks.reshape(shape[0], shape[1], shape[2], shape[3] // QK, -1)


@implements("CORE-61")
@checked
def compute_mul_mat(node: Tensor, mem: Memory) -> None:
    """CORE-61 to CORE-64: dst[i0,i1,i2,i3] = dot(a row i0 of batch (i2/r2, i3/r3), b' row (i1,i2,i3))."""
    a, b = _src(node, 0), _src(node, 1)
    if a.type not in (GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0):
        if not is_quantized(a.type):
            undefined("CORE-61", f"rc.8 has no dot product for {a.type.name} weights")
        raise NotModelled(f"MUL_MAT with {a.type.name} weights")
    require(a.nb[0] == type_size(a.type), "CORE-62")
    require(b.nb[0] == type_size(b.type), "CORE-63")
    vdt = traits(a.type).vec_dot_type
    if b.type != vdt:
        require(b.type == GGMLType.F32, "CORE-64")
    r2, r3 = b.ne[2] // a.ne[2], b.ne[3] // a.ne[3]
    out = np.zeros((node.ne[3], node.ne[2], node.ne[1], node.ne[0]), dtype=np.float32)
    if vdt == GGMLType.Q8_0:
        wa, wb = load(mem, a), _q8_0_rows(mem, b)  # blocks: (ne3, ne2, ne1, n_blocks, bytes)
        for i3 in range(b.ne[3]):
            for i2 in range(b.ne[2]):
                rows = wa[i3 // r3, i2 // r2]
                for i1 in range(b.ne[1]):
                    out[i3, i2, i1] = vec_dot_q_q8_0(a.type == GGMLType.Q4_0, rows, wb[i3, i2, i1])
    else:
        fa = load_f32(mem, a)
        fb32 = load_f32(mem, b)
        if vdt == GGMLType.F16 and b.type == GGMLType.F32:
            fb32 = round_f16(fb32)  # b converted to F16 first (CORE-50)
        for i3 in range(b.ne[3]):
            for i2 in range(b.ne[2]):
                rows = fa[i3 // r3, i2 // r2]
                for i1 in range(b.ne[1]):
                    out[i3, i2, i1] = _dot_f32(rows, fb32[i3, i2, i1])
    store(mem, node, out)


@implements("CORE-65")
@checked
def compute_get_rows(node: Tensor, mem: Memory) -> None:
    """CORE-65: rows of a numbered by b, converted to F32 (copied for F32 / I32 tables)."""
    a, b = _src(node, 0), _src(node, 1)
    if a.type not in (GGMLType.F32, GGMLType.I32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0):
        if is_quantized(a.type):
            raise NotModelled(f"GET_ROWS of a {a.type.name} table")
        _cpu_gap(False, node, f"GET_ROWS of a {a.type.name} table")
    if a.nb[0] != type_size(a.type):
        undefined("CORE-65", f"a table whose elements are not adjacent: {a!r} (rc.8 checks it with a C assert only)")
    if list(node.ne) != [a.ne[0], b.ne[0], b.ne[1], b.ne[2]] or a.ne[2] != b.ne[1] or b.ne[3] != 1:
        undefined("CORE-65", f"node {node!r} is not shaped as ggml_get_rows makes it from its sources {a!r} and {b!r} "
                  "(rc.8's loops would index past them; it checks the shapes with C asserts only)")
    index = load(mem, b)
    table = load(mem, a)
    out = np.zeros((node.ne[3], node.ne[2], node.ne[1], node.ne[0]), dtype=np.int32 if a.type == GGMLType.I32 else np.float32)
    for i2 in range(b.ne[2]):
        for i1 in range(b.ne[1]):
            for i0 in range(b.ne[0]):
                r = int(index[0, i2, i1, i0])
                if not 0 <= r < a.ne[1] or i2 >= a.ne[3]:
                    undefined("CORE-65", f"row ({r}, {i1}, {i2}) outside the table {a!r}")
                row = table[i2, i1, r]
                if a.type == GGMLType.F16:
                    out[i2, i1, i0] = fp16_to_fp32(row)
                elif a.type == GGMLType.Q4_0:
                    out[i2, i1, i0] = dequantize_q4_0(row)
                elif a.type == GGMLType.Q8_0:
                    out[i2, i1, i0] = dequantize_q8_0(row)
                else:
                    out[i2, i1, i0] = row
    store(mem, node, out)


@implements("CORE-66")
@checked
def compute_norm(node: Tensor, mem: Memory) -> None:
    """CORE-66 to CORE-68: each row minus its mean, times 1/sqrt(variance + eps)."""
    a = _src(node, 0)
    _cpu_gap(a.type == GGMLType.F32, node, f"NORM of {a.type.name}")
    require(a.nb[0] == 4, "CORE-68")
    eps = np.float32(op_param_f32(node))
    require(bool(eps > 0), "CORE-67")
    x = load(mem, a).astype(np.float32)
    n = a.ne[0]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mean = (_sequential_sum(x.astype(np.float64)) / n).astype(np.float32)
        v = (x - mean[..., None]).astype(np.float32)
        variance = (_sequential_sum((v * v).astype(np.float64)) / n).astype(np.float32)
        inv = (np.float32(1.0) / np.sqrt((variance + eps).astype(np.float32))).astype(np.float32)
        store(mem, node, (v * inv[..., None]).astype(np.float32))


def _exp_f32(x: F32) -> F32:
    with np.errstate(over="ignore"):
        return np.exp(x.astype(np.float64)).astype(np.float32)


@implements("CORE-69")
@checked
def compute_soft_max(node: Tensor, mem: Memory) -> None:
    """CORE-69: softmax of each row of a * scale (+ mask), exp through rc.8's F16 table."""
    a = _src(node, 0)
    _cpu_gap(a.type == GGMLType.F32, node, f"SOFT_MAX of {a.type.name}")
    mask = node.src[1]
    nc = a.ne[0]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        w = (load(mem, a).reshape(-1, nc) * np.float32(op_param_f32(node))).astype(np.float32)
        if mask is not None:
            if mask.type != GGMLType.F32:
                undefined("CORE-69", f"rc.8 reads the {mask.type.name} mask as F32")
            m = load(mem, mask).reshape(-1, nc)
            w = (w + m[np.arange(w.shape[0]) % m.shape[0]]).astype(np.float32)
        top = np.max(w, axis=1, keepdims=True) if nc else w
        e = round_f16(_exp_f32(round_f16((w - top).astype(np.float32))))
        e = np.where(w == -np.inf, np.float32(0.0), e).astype(np.float32)
        total = _sequential_sum(e.astype(np.float64))
        if np.any(total <= 0):
            undefined("CORE-69", "a row whose exponentials sum to zero (rc.8 checks it with a C assert only)")
        store(mem, node, (e * (1.0 / total).astype(np.float32)[:, None]).astype(np.float32))


_SQRT_2_OVER_PI = np.float32(0.79788456080286535587989211986876)
_GELU_COEF_A = np.float32(0.044715)


@implements("CORE-70", "CORE-71")
@checked
def compute_unary(node: Tensor, mem: Memory) -> None:
    """CORE-70 to CORE-72: GELU and SILU of F32 values, through rc.8's F16 tables."""
    a = _src(node, 0)
    which = op_param_i32(node)
    if which not in (UnaryOp.GELU, UnaryOp.SILU):
        raise NotModelled(f"UNARY op {which}")
    _cpu_gap(a.type == GGMLType.F32, node, f"{'GELU' if which == UnaryOp.GELU else 'SILU'} of {a.type.name}")
    require(is_contiguous_except_dim_1(a), "CORE-72")
    x = round_f16(load(mem, a))  # the table is indexed by the F16 bits of x
    one = np.float32(1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        if which == UnaryOp.GELU:
            inner = ((_SQRT_2_OVER_PI * x) * (one + (_GELU_COEF_A * x) * x)).astype(np.float32)
            th = np.tanh(inner.astype(np.float64)).astype(np.float32)
            g = ((np.float32(0.5) * x) * (one + th)).astype(np.float32)
        else:
            g = (x / (one + _exp_f32(-x))).astype(np.float32)
    store(mem, node, round_f16(g))


#: ops whose computation writes nothing (CORE-48)
NO_COMPUTE: frozenset[Op] = frozenset({Op.NONE, Op.VIEW, Op.RESHAPE, Op.PERMUTE, Op.TRANSPOSE})

#: ops that compare_graph_backend and the scheduler treat as views (rc.8's ggml_is_view_op)
VIEW_OPS: frozenset[Op] = frozenset({Op.VIEW, Op.RESHAPE, Op.PERMUTE, Op.TRANSPOSE})

_COMPUTE = {
    Op.DUP: compute_dup,
    Op.CPY: compute_dup,
    Op.CONT: compute_dup,
    Op.ADD: compute_add,
    Op.MUL: compute_mul,
    Op.SCALE: compute_scale,
    Op.MUL_MAT: compute_mul_mat,
    Op.GET_ROWS: compute_get_rows,
    Op.NORM: compute_norm,
    Op.SOFT_MAX: compute_soft_max,
    Op.UNARY: compute_unary,
}


@implements("CORE-48")
@checked
def compute(node: Tensor, mem: Memory) -> None:
    """CORE-48: compute one node, reading its sources and writing its elements through `mem`."""
    if node.op in NO_COMPUTE:
        return
    fn = _COMPUTE.get(node.op)
    if fn is None:
        raise NotModelled(f"computing {node.op.name}")
    try:
        fn(node, mem)
    except SpecViolation as exc:  # an assert of the CPU code (CORE-49, CORE-55 to CORE-72)
        if getattr(mem, "cpu_code", True):
            raise
        raise NotBinding(exc.clause_id, f"the CPU code asserts here ({exc}); a device with kernels of its own "
                         "may refuse the node or compute it (spec/core.md, Devices with kernels of their own)") from None


# --- the all-op table -------------------------------------------------------------------------


@dataclass(frozen=True)
class OpSupport:
    """What the reference models of one op: its constructor(s) and the types it computes."""

    constructors: str
    computes: str


_MODELLED: dict[Op, OpSupport] = {
    Op.NONE: OpSupport("new_tensor", "nothing (CORE-48)"),
    Op.DUP: OpSupport("dup", "same type; F32<->F16; F32/F16 -> Q4_0/Q8_0"),
    Op.ADD: OpSupport("add", "F32+F32 (broadcast); F16+F16, F16+F32 (same shape)"),
    Op.MUL: OpSupport("mul", "F32*F32 (broadcast)"),
    Op.SCALE: OpSupport("scale", "F32"),
    Op.MUL_MAT: OpSupport("mul_mat", "F32, F16, Q4_0, Q8_0 weights; F32 or vec_dot-type input"),
    Op.CPY: OpSupport("cpy", "as DUP"),
    Op.CONT: OpSupport("cont", "as DUP"),
    Op.VIEW: OpSupport("view (Context.view)", "nothing"),
    Op.RESHAPE: OpSupport("reshape, reshape_nd", "nothing"),
    Op.PERMUTE: OpSupport("permute", "nothing"),
    Op.TRANSPOSE: OpSupport("transpose", "nothing"),
    Op.GET_ROWS: OpSupport("get_rows", "F32, I32, F16, Q4_0, Q8_0 tables"),
    Op.NORM: OpSupport("norm", "F32"),
    Op.SOFT_MAX: OpSupport("soft_max, soft_max_ext", "F32 (F32 mask)"),
    Op.UNARY: OpSupport("unary, gelu, silu", "GELU, SILU of F32"),
}

#: every op of rc.8's enum -> what the reference models of it (None: not modelled). The _inplace
#: constructor variants are not modelled; the virtual device and the CPU backend raise
#: NotModelled for a node whose op or types are not covered here.
ALL_OP_TABLE: dict[Op, OpSupport | None] = {op: _MODELLED.get(op) for op in Op if op != Op.COUNT}
