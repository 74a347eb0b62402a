"""CORE-16 to CORE-47 (operation constructors) and CORE-49 to CORE-76 (computing nodes,
F16 and the quantized formats).

Constructor checks make one result from operands without memory or with context memory, and
record what the constructor set: the result's layout (`TensorInfo`: type, extents, strides, op,
name, view offset, whether it has a view source and data), which operand each source slot and
the view source point at, and the 64 op_params bytes. Death checks break exactly one assert.

Compute checks place leafs in a buffer of a CPU backend or a virtual device (`Scene`), build a
one- or two-node graph, compute it and record every node (checks/_graphs.py: bytes for data
movement, `Approx` within spec/core.md's tolerance otherwise). Leaf values are drawn from a
seed (numpy), within |x| ≤ 2⁸ as the Tolerances section assumes, or given bit for bit.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from ggspec.reference.quants import fp32_to_fp16, quantize_q4_0, quantize_q8_0
from ggspec.reference.types import GGMLType, blck_size, type_size
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..errors import DeviceRefused
from ..inputs.strategies import (
    DEVICE_NAMES,
    Placement,
    TensorSpec,
    ViewSpec,
    ascii_names,
    placements,
    tensor_specs,
    view_specs,
)
from ..target import Handle, Target, VDevParams
from ._graphs import Scene
from ._setup import backend_for

F32, F16, Q4_0, Q8_0, I8, I16, I32 = (int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.Q4_0), int(GGMLType.Q8_0),
                                      int(GGMLType.I8), int(GGMLType.I16), int(GGMLType.I32))
PLAIN = (F32, F16, I32)
QUANT = (Q4_0, Q8_0)

Shape = tuple[int, ...]
seeds = st.integers(0, 2**32 - 1)
small = st.integers(1, 4)


def _full(ne: Sequence[int]) -> tuple[int, int, int, int]:
    f = list(ne) + [1] * (4 - len(ne))
    return (f[0], f[1], f[2], f[3])


def _n(ne: Sequence[int]) -> int:
    out = 1
    for x in ne:
        out *= x
    return out


# --- values -----------------------------------------------------------------------------------------


def values(seed: int, n: int, spread: int = 0) -> np.ndarray:
    """`n` F32 values from `seed`: uniform in ±2^spread, a few of them zero or integers."""
    rng = np.random.default_rng(seed)
    v = (rng.uniform(-1.0, 1.0, n) * 2.0**spread).astype(np.float32)
    if n > 2:
        v[rng.integers(0, n)] = 0.0
        v[rng.integers(0, n)] = np.float32(np.round(v[rng.integers(0, n)]))
    return v


def payload(type_: int, ne: Sequence[int], seed: int, spread: int = 0, int_range: int = 0) -> bytes:
    """Bytes of a tensor of `type_` and extents `ne`, from `seed`: F32 / F16 values as
    `values`, Q4_0 / Q8_0 blocks quantized from them, integers in [0, int_range) (or any)."""
    n = _n(ne)
    t = GGMLType(type_)
    if t in (GGMLType.I32, GGMLType.I16, GGMLType.I8):
        rng = np.random.default_rng(seed)
        dtype = {GGMLType.I32: np.int32, GGMLType.I16: np.int16, GGMLType.I8: np.int8}[t]
        lo, hi = (0, int_range) if int_range else (-100, 100)
        return rng.integers(lo, hi, n).astype(dtype).tobytes()
    v = values(seed, n, spread)
    if t == GGMLType.F32:
        return v.tobytes()
    if t == GGMLType.F16:
        return fp32_to_fp16(v).astype("<u2").tobytes()
    if t == GGMLType.Q4_0:
        return bytes(quantize_q4_0(v))
    if t == GGMLType.Q8_0:
        return bytes(quantize_q8_0(v))
    raise ValueError(f"no payload for {t.name}")


def random_blocks(type_: int, n_blocks: int, seed: int) -> bytes:
    """Q4_0 / Q8_0 blocks with any integers and a finite F16 scale of moderate size."""
    rng = np.random.default_rng(seed)
    d = fp32_to_fp16((rng.uniform(-1.0, 1.0, n_blocks) * 2.0 ** rng.integers(-12, 2, n_blocks)).astype(np.float32))
    out = bytearray()
    for i in range(n_blocks):
        out += struct.pack("<H", int(d[i]))
        out += rng.integers(0, 256, 16 if type_ == Q4_0 else 32).astype(np.uint8).tobytes()
    return bytes(out)


# --- recording what a constructor made --------------------------------------------------------------


def _record(t: Target, rec: Recorder, result: Handle, known: dict[str, Handle]) -> None:
    """The result's layout, what its sources and view source point at (by name in `known`),
    its op_params."""
    def which(h: Handle | None) -> str | None:
        if h is None:
            return None
        for label, x in known.items():
            if x == h:
                return label
        return "(another tensor)"

    rec("result", t.tensor_info(result))
    rec("sources", [which(t.tensor_src(result, i)) for i in range(10)])
    rec("view source", which(t.tensor_view_src(result)))
    rec("op_params", t.tensor_op_params(result))


def _make(t: Target, type_: int, ne: Sequence[int], name: str, memory: bool) -> Handle:
    return t.new_host_tensor(type_, ne, name) if memory else t.new_tensor(type_, ne, name)


#: how an operand is made from a root: as it is, transposed, permuted, or a view of some rows
HOWS = ("root", "transpose", "permute", "rows")


def _shaped(t: Target, root: Handle, how: str, axes: tuple[int, int, int, int] = (0, 2, 1, 3)) -> Handle:
    if how == "transpose":
        return t.op("transpose", [root], ())
    if how == "permute":
        return t.op("permute", [root], tuple(float(a) for a in axes))
    if how == "rows":  # every other row, as a strided 2-d view
        info = t.tensor_info(root)
        rows = max(1, info.ne[1] // 2)
        return t.view(root, (info.ne[0], rows), (info.nb[1] * (2 if info.ne[1] > 1 else 1),), 0)
    return root


def _shape_after(root_ne: Sequence[int], how: str, axes: tuple[int, int, int, int] = (0, 2, 1, 3)) -> tuple[int, int, int, int]:
    """The extents `_shaped` gives an operand made from a root of `root_ne`."""
    f = _full(root_ne)
    if how == "transpose":
        return (f[1], f[0], f[2], f[3])
    if how == "permute":
        ne = [0, 0, 0, 0]
        for i, ax in enumerate(axes):
            ne[ax] = f[i]
        return (ne[0], ne[1], ne[2], ne[3])
    if how == "rows":
        return (f[0], max(1, f[1] // 2), 1, 1)
    return f


def _record_op_of_shaped(t: Target, rec: Recorder, op: str, params: Sequence[float], root: TensorSpec, how: str,
                         memory: bool, name: str | None = None) -> None:
    """`op` (with `params`) of operand a, shaped `how` from a root of spec `root` and named `name`
    where one is given: the result recorded (`_record`) beside the root and a."""
    r = _make(t, root.type, root.ne, "root", memory)
    a = _shaped(t, r, how)
    if name is not None:
        t.set_name(a, name)
    _record(t, rec, t.op(op, [a], params), {"root": r, "a": a})


permutations = st.permutations([0, 1, 2, 3]).map(lambda p: (p[0], p[1], p[2], p[3]))


# --- CORE-16 to CORE-19: DUP, ADD, MUL ----------------------------------------------------------------


@check("CORE-16", root=tensor_specs(), how=st.sampled_from(HOWS), memory=st.booleans())
def dup_makes_a_fresh_copy(t: Target, rec: Recorder, root: TensorSpec, how: str, memory: bool) -> None:
    _record_op_of_shaped(t, rec, "dup", (), root, how if root.type in PLAIN else "root", memory)


@st.composite
def _repeating(draw: st.DrawFn) -> tuple[TensorSpec, Shape]:
    a = draw(tensor_specs(), label="a")
    full = _full(a.ne)
    b = tuple(draw(st.sampled_from([d for d in range(1, x + 1) if x % d == 0]), label=f"b ne{i}")
              for i, x in enumerate(full))
    return a, b


@check("CORE-17", ab=_repeating(), op=st.sampled_from(["add", "mul"]), b_type=st.sampled_from([F32, F16, I32]),
       memory=st.booleans())
def add_and_mul_take_the_first_shape(t: Target, rec: Recorder, ab: tuple[TensorSpec, Shape], op: str, b_type: int,
                                     memory: bool) -> None:
    a_spec, b_ne = ab
    a = _make(t, a_spec.type, a_spec.ne, "a", memory)
    b = _make(t, b_type, b_ne, "b", memory)
    _record(t, rec, t.op(op, [a, b], ()), {"a": a, "b": b})


@st.composite
def _not_repeating(draw: st.DrawFn) -> tuple[Shape, Shape]:
    a = _full(draw(tensor_specs(type_=st.just(F32)), label="a").ne)
    dim = draw(st.integers(0, 3), label="dimension that does not divide")
    b = list(draw(st.tuples(small, small, small, small), label="b"))
    b[dim] = a[dim] + draw(small, label="excess")
    return a, tuple(b)


@check("CORE-18", ab=_not_repeating(), op=st.sampled_from(["add", "mul"]))
def add_needs_repeatable_operands(t: Target, rec: Recorder, ab: tuple[Shape, Shape], op: str) -> None:
    t.op(op, [t.new_tensor(F32, ab[0], "a"), t.new_tensor(F32, ab[1], "b")], ())


@check("CORE-19", ab=_repeating().filter(lambda ab: _full(ab[0].ne) != ab[1]), op=st.sampled_from(["add", "mul"]),
       param=st.sampled_from(["a", "b", "both"]))
def no_broadcasting_with_gradients(t: Target, rec: Recorder, ab: tuple[TensorSpec, Shape], op: str, param: str) -> None:
    a = t.new_tensor(F32, ab[0].ne, "a")
    b = t.new_tensor(F32, ab[1], "b")
    for name, x in (("a", a), ("b", b)):
        if param in (name, "both"):
            t.set_param(x)
    t.op(op, [a, b], ())


# --- CORE-20 to CORE-24: SCALE, MUL_MAT -----------------------------------------------------------------


@check("CORE-20", root=tensor_specs(type_=st.sampled_from([F32, F16])), rows=st.booleans(),
       s=st.floats(width=32, allow_nan=False), memory=st.booleans())
def scale_keeps_its_factor(t: Target, rec: Recorder, root: TensorSpec, rows: bool, s: float, memory: bool) -> None:
    r = _make(t, root.type, root.ne, "root", memory)
    a = _shaped(t, r, "rows" if rows else "root")
    _record(t, rec, t.op("scale", [a], (s,)), {"root": r, "a": a})


@check("CORE-21", ne=st.tuples(st.integers(2, 5), st.integers(2, 5)), how=st.sampled_from(["transpose", "permute"]))
def scale_refuses_strided_elements(t: Target, rec: Recorder, ne: tuple[int, int], how: str) -> None:
    """Transposed: `nb[0]` is a row; permuted (0, 2, 1, 3) of a 3-d root: dimension 2 is not dense."""
    root = t.new_tensor(F32, (ne[0], ne[1], 2) if how == "permute" else ne, "root")
    t.op("scale", [_shaped(t, root, how)], (2.0,))


@st.composite
def _mul_mat_shapes(draw: st.DrawFn, weights: tuple[int, ...] = (F32, F16, Q4_0, Q8_0)) -> tuple[int, Shape, Shape]:
    wt = draw(st.sampled_from(weights), label="weights type")
    k = blck_size(GGMLType(wt)) * draw(small, label="K (blocks)") if wt in QUANT else draw(st.integers(1, 8), label="K")
    m, n = draw(small, label="weight rows"), draw(small, label="input rows")
    a2, a3 = draw(st.integers(1, 2), label="a ne2"), draw(st.integers(1, 2), label="a ne3")
    r2, r3 = draw(st.integers(1, 2), label="r2"), draw(st.integers(1, 2), label="r3")
    return wt, (k, m, a2, a3), (k, n, a2 * r2, a3 * r3)


@check("CORE-22", shapes=_mul_mat_shapes(), b_type=st.sampled_from([F32, F16, Q8_0]), memory=st.booleans())
def mul_mat_makes_f32(t: Target, rec: Recorder, shapes: tuple[int, Shape, Shape], b_type: int, memory: bool) -> None:
    wt, a_ne, b_ne = shapes
    if b_type in QUANT and b_ne[0] % 32:
        b_type = F32
    a, b = _make(t, wt, a_ne, "a", memory), _make(t, b_type, b_ne, "b", memory)
    _record(t, rec, t.op("mul_mat", [a, b], ()), {"a": a, "b": b})


@check("CORE-23", shapes=_mul_mat_shapes(weights=(F32,)), how=st.sampled_from(["ne0", "ne2", "ne3"]))
def mul_mat_needs_matching_shapes(t: Target, rec: Recorder, shapes: tuple[int, Shape, Shape], how: str) -> None:
    _, a_ne, b_ne = shapes
    b = list(b_ne)
    a = list(a_ne)
    if how == "ne0":
        b[0] += 1
    elif how == "ne2":
        a[2], b[2] = 2, 3
    else:
        a[3], b[3] = 2, 1
    t.op("mul_mat", [t.new_tensor(F32, a, "a"), t.new_tensor(F32, b, "b")], ())


@check("CORE-24", k=st.integers(1, 6), m=st.integers(2, 6), n=small)
def mul_mat_refuses_transposed_weights(t: Target, rec: Recorder, k: int, m: int, n: int) -> None:
    """a = transpose of an [m, k] root: extents [k, m] but `nb[0]` (m·4) > `nb[1]` (4)."""
    a = t.op("transpose", [t.new_tensor(F32, (m, k), "root")], ())
    t.op("mul_mat", [a, t.new_tensor(F32, (k, n), "b")], ())


# --- CORE-25 to CORE-31: CPY, CONT, VIEW, RESHAPE --------------------------------------------------------


@check("CORE-25", a=tensor_specs(type_=st.sampled_from(PLAIN)), b_type=st.sampled_from([F32, F16, I32]),
       flat=st.booleans(), names=st.tuples(ascii_names(max_size=40), ascii_names(max_size=40)), memory=st.booleans())
def cpy_is_a_view_of_the_destination(t: Target, rec: Recorder, a: TensorSpec, b_type: int, flat: bool,
                                     names: tuple[str, str], memory: bool) -> None:
    """The result is a view of b with b's layout, named after both (or a alone when b is unnamed)."""
    x = _make(t, a.type, a.ne, names[0], memory)
    y = _make(t, b_type, (_n(a.ne),) if flat else a.ne, names[1], memory)
    _record(t, rec, t.op("cpy", [x, y], ()), {"a": x, "b": y})


@check("CORE-26", a=tensor_specs(type_=st.just(F32)), extra=st.integers(1, 5))
def cpy_needs_equal_counts(t: Target, rec: Recorder, a: TensorSpec, extra: int) -> None:
    t.op("cpy", [t.new_tensor(F32, a.ne, "a"), t.new_tensor(F32, (_n(a.ne) + extra,), "b")], ())


@check("CORE-27", root=tensor_specs(type_=st.sampled_from(PLAIN)), how=st.sampled_from(HOWS), name=ascii_names(max_size=60),
       memory=st.booleans())
def cont_makes_a_contiguous_copy(t: Target, rec: Recorder, root: TensorSpec, how: str, name: str, memory: bool) -> None:
    _record_op_of_shaped(t, rec, "cont", (), root, how, memory, name)


@st.composite
def _root_view_view(draw: st.DrawFn) -> tuple[TensorSpec, ViewSpec, ViewSpec | None]:
    root = draw(tensor_specs(), label="root")
    first = draw(view_specs(root), label="view")
    second = None
    if draw(st.booleans(), label="a view of the view") and not first.nb:
        inner = TensorSpec(root.type, first.ne)
        second = draw(view_specs(inner), label="view of the view")
    return root, first, second


@check("CORE-28", rvv=_root_view_view(), dims4=st.booleans(), memory=st.booleans())
def views_record_their_offset(t: Target, rec: Recorder, rvv: tuple[TensorSpec, ViewSpec, ViewSpec | None], dims4: bool,
                              memory: bool) -> None:
    """view_1d..3d (or the same view written as view_4d with the implied strides); a view of a
    1-d view: op_params hold the offset relative to the operand, view_offs the sum."""
    root_spec, v1, v2 = rvv
    root = _make(t, root_spec.type, root_spec.ne, "root", memory)

    def make(a: Handle, v: ViewSpec) -> Handle:
        if not dims4:
            return t.view(a, v.ne, v.nb, v.offset)
        info = t.tensor_info(a)
        ne = _full(v.ne)
        nb = [type_size(GGMLType(info.type)), 0, 0, 0]
        nb[1] = nb[0] * ne[0] // blck_size(GGMLType(info.type))
        for i, s in enumerate(v.nb, start=1):
            nb[i] = s
        for i in range(max(len(v.ne), 2), 4):
            nb[i] = nb[i - 1] * ne[i - 1]
        return t.view(a, ne, nb[1:], v.offset)

    first = make(root, v1)
    _record(t, rec, first, {"root": root})
    if v2 is not None:
        _record(t, rec, make(first, v2), {"root": root, "first view": first})


@st.composite
def _reshapes(draw: st.DrawFn) -> tuple[TensorSpec, Shape]:
    a = draw(tensor_specs(), label="a")
    bs = blck_size(GGMLType(a.type))
    rest = _n(a.ne)
    dims = draw(st.integers(1, 4), label="dims")
    ne: list[int] = []
    for i in range(dims - 1):
        k = draw(st.sampled_from([d for d in range(1, rest + 1) if rest % d == 0 and (i or d % bs == 0)]), label=f"ne{i}")
        ne.append(k)
        rest //= k
    return a, (*ne, rest)


@check("CORE-29", ar=_reshapes(), like=st.booleans(), name=ascii_names(max_size=60), memory=st.booleans())
def reshape_reinterprets(t: Target, rec: Recorder, ar: tuple[TensorSpec, Shape], like: bool, name: str,
                         memory: bool) -> None:
    """reshape_Nd(a, ne...) or reshape(a, b) with b of that shape: a view with contiguous strides."""
    a_spec, ne = ar
    a = _make(t, a_spec.type, a_spec.ne, name, memory)
    if like:
        b = t.new_tensor(a_spec.type, ne, "shape")
        _record(t, rec, t.op("reshape_as", [a, b], ()), {"a": a, "b": b})
    else:
        _record(t, rec, t.op("reshape", [a], tuple(float(x) for x in ne)), {"a": a})


@check("CORE-30", ne=st.tuples(st.integers(2, 5), st.integers(2, 5)), like=st.booleans())
def reshape_needs_contiguous(t: Target, rec: Recorder, ne: tuple[int, int], like: bool) -> None:
    a = t.op("transpose", [t.new_tensor(F32, ne, "root")], ())
    if like:
        t.op("reshape_as", [a, t.new_tensor(F32, (ne[0] * ne[1],), "b")], ())
    else:
        t.op("reshape", [a], (float(ne[0] * ne[1]),))


@check("CORE-31", a=tensor_specs(type_=st.just(F32)), extra=st.integers(1, 5))
def reshape_keeps_the_count(t: Target, rec: Recorder, a: TensorSpec, extra: int) -> None:
    t.op("reshape_as", [t.new_tensor(F32, a.ne, "a"), t.new_tensor(F32, (_n(a.ne) + extra,), "b")], ())


# --- CORE-32 to CORE-35: PERMUTE, TRANSPOSE ------------------------------------------------------------


@check("CORE-32", root=tensor_specs(), axes=permutations, how=st.sampled_from(["root", "rows"]),
       name=ascii_names(max_size=60), memory=st.booleans())
def permute_moves_dimensions(t: Target, rec: Recorder, root: TensorSpec, axes: tuple[int, int, int, int], how: str,
                             name: str, memory: bool) -> None:
    _record_op_of_shaped(t, rec, "permute", tuple(float(x) for x in axes), root, how if root.type in PLAIN else "root",
                         memory, name)


@check("CORE-33", axis0=st.one_of(st.integers(-5, -1), st.integers(4, 9)), rest=permutations)
def permute_axes_in_range(t: Target, rec: Recorder, axis0: int, rest: tuple[int, int, int, int]) -> None:
    t.op("permute", [t.new_tensor(F32, (2, 3, 4), "a")], (float(axis0), float(rest[1]), float(rest[2]), float(rest[3])))


@check("CORE-34", axes=permutations)
def permute_axes_distinct(t: Target, rec: Recorder, axes: tuple[int, int, int, int]) -> None:
    """axis1 set to axis0 (all in range)."""
    t.op("permute", [t.new_tensor(F32, (2, 3, 4), "a")], (float(axes[0]), float(axes[0]), float(axes[2]), float(axes[3])))


@check("CORE-35", root=tensor_specs(type_=st.sampled_from(PLAIN)), how=st.sampled_from(HOWS),
       name=ascii_names(max_size=60), memory=st.booleans())
def transpose_swaps_two_dimensions(t: Target, rec: Recorder, root: TensorSpec, how: str, name: str, memory: bool) -> None:
    _record_op_of_shaped(t, rec, "transpose", (), root, how, memory, name)


# --- CORE-36 to CORE-39: GET_ROWS ------------------------------------------------------------------------


@st.composite
def _get_rows_shapes(draw: st.DrawFn) -> tuple[int, Shape, Shape]:
    tt = draw(st.sampled_from([F32, F16, Q4_0, Q8_0, I32]), label="table type")
    e = 32 * draw(st.integers(1, 2), label="row blocks") if tt in QUANT else draw(st.integers(1, 6), label="row length")
    rows, m = draw(st.integers(1, 5), label="rows"), draw(st.integers(1, 3), label="tables")
    q = draw(st.integers(1, 2), label="ne3")
    n, k = draw(st.integers(1, 4), label="indices"), draw(st.integers(1, 2), label="index ne2")
    return tt, (e, rows, m, q), (n, m, k)


@check("CORE-36", shapes=_get_rows_shapes(), memory=st.booleans())
def get_rows_makes_f32(t: Target, rec: Recorder, shapes: tuple[int, Shape, Shape], memory: bool) -> None:
    tt, a_ne, b_ne = shapes
    a, b = _make(t, tt, a_ne, "table", memory), _make(t, I32, b_ne, "indices", memory)
    _record(t, rec, t.op("get_rows", [a, b], ()), {"a": a, "b": b})


@check("CORE-37", shapes=_get_rows_shapes())
def get_rows_batches_match(t: Target, rec: Recorder, shapes: tuple[int, Shape, Shape]) -> None:
    tt, a_ne, b_ne = shapes
    t.op("get_rows", [t.new_tensor(tt, a_ne, "table"), t.new_tensor(I32, (b_ne[0], a_ne[2] + 1), "indices")], ())


@check("CORE-38", shapes=_get_rows_shapes(), ne3=st.integers(2, 3))
def get_rows_indices_3d(t: Target, rec: Recorder, shapes: tuple[int, Shape, Shape], ne3: int) -> None:
    tt, a_ne, b_ne = shapes
    t.op("get_rows", [t.new_tensor(tt, a_ne, "table"), t.new_tensor(I32, (*b_ne, ne3), "indices")], ())


@check("CORE-39", shapes=_get_rows_shapes(), index_type=st.sampled_from([F32, F16, I16, I8]))
def get_rows_indices_i32(t: Target, rec: Recorder, shapes: tuple[int, Shape, Shape], index_type: int) -> None:
    tt, a_ne, b_ne = shapes
    t.op("get_rows", [t.new_tensor(tt, a_ne, "table"), t.new_tensor(index_type, b_ne, "indices")], ())


# --- CORE-40 to CORE-47: NORM, SOFT_MAX, GELU, SILU --------------------------------------------------------


@check("CORE-40", a=tensor_specs(type_=st.sampled_from([F32, F16])), eps=st.floats(width=32, allow_nan=False),
       memory=st.booleans())
def norm_keeps_its_epsilon(t: Target, rec: Recorder, a: TensorSpec, eps: float, memory: bool) -> None:
    x = _make(t, a.type, a.ne, "a", memory)
    _record(t, rec, t.op("norm", [x], (eps,)), {"a": x})


@example(a=TensorSpec(F32, (4, 2)), grad=True)
@check("CORE-40", a=tensor_specs(type_=st.sampled_from([F32, F16])), grad=st.booleans())
def norm_inplace_ignores_the_gradient(t: Target, rec: Recorder, a: TensorSpec, grad: bool) -> None:
    """norm_inplace is NORM on a view of all of `a`; with a gradient on `a` it does not abort
    (norm does: CORE-49, ops.unimplemented_cases_abort) and the node has no gradient
    (deterministic: F32[4, 2] with a gradient)."""
    x = t.new_tensor(a.type, a.ne, "a")
    if grad:
        t.set_param(x)
    result = t.op("norm_inplace", [x], (1e-5,))
    _record(t, rec, result, {"a": x})
    rec("has a gradient", t.tensor_grad(result) is not None)


@st.composite
def _soft_max_shapes(draw: st.DrawFn) -> tuple[Shape, Shape | None]:
    a = _full(draw(tensor_specs(type_=st.just(F32)), label="a").ne)
    if not draw(st.booleans(), label="with a mask"):
        return a, None
    rows = draw(st.sampled_from([d for d in range(1, a[1] + 1) if a[1] % d == 0]), label="mask rows")
    return a, (a[0], rows)


@check("CORE-41", shapes=_soft_max_shapes(), ext=st.booleans(), scale=st.floats(width=32, allow_nan=False),
       memory=st.booleans())
def soft_max_keeps_mask_and_scale(t: Target, rec: Recorder, shapes: tuple[Shape, Shape | None], ext: bool, scale: float,
                                  memory: bool) -> None:
    """soft_max(a) (scale 1, no mask) or soft_max_ext(a, mask or NULL, scale)."""
    a_ne, m_ne = shapes
    a = _make(t, F32, a_ne, "a", memory)
    known = {"a": a}
    if not ext:
        r = t.op("soft_max", [a], ())
    else:
        mask = _make(t, F32, m_ne, "mask", memory) if m_ne is not None else None
        if mask is not None:
            known["mask"] = mask
        r = t.op("soft_max_ext", [a, mask], (scale,))
    _record(t, rec, r, known)


@check("CORE-42", ne=st.tuples(st.integers(2, 5), st.integers(2, 5)), how=st.sampled_from(["transpose", "rows"]))
def soft_max_needs_contiguous_input(t: Target, rec: Recorder, ne: tuple[int, int], how: str) -> None:
    a = _shaped(t, t.new_tensor(F32, ne, "root"), how)
    t.op("soft_max_ext", [a, None], (1.0,))


@check("CORE-43", ne=st.tuples(st.integers(2, 5), st.integers(2, 5)))
def soft_max_needs_contiguous_mask(t: Target, rec: Recorder, ne: tuple[int, int]) -> None:
    mask = t.op("transpose", [t.new_tensor(F32, (ne[1], ne[0]), "mask root")], ())
    t.op("soft_max_ext", [t.new_tensor(F32, ne, "a"), mask], (1.0,))


@check("CORE-44", ne=st.tuples(st.integers(1, 5), st.integers(1, 5)), ne2=st.integers(2, 3), ne3=st.integers(1, 2))
def soft_max_mask_dim2(t: Target, rec: Recorder, ne: tuple[int, int], ne2: int, ne3: int) -> None:
    a = t.new_tensor(F32, (ne[0], ne[1], ne2, ne3), "a")
    t.op("soft_max_ext", [a, t.new_tensor(F32, (ne[0], ne[1], ne2, ne3), "mask")], (1.0,))


@check("CORE-45", ne=st.tuples(st.integers(1, 5), st.integers(1, 5)), ne3=st.integers(2, 3))
def soft_max_mask_dim3(t: Target, rec: Recorder, ne: tuple[int, int], ne3: int) -> None:
    a = t.new_tensor(F32, (ne[0], ne[1], 1, ne3), "a")
    t.op("soft_max_ext", [a, t.new_tensor(F32, (ne[0], ne[1], 1, ne3), "mask")], (1.0,))


@check("CORE-46", ne=st.tuples(st.integers(1, 5), st.integers(2, 5)), how=st.sampled_from(["ne0", "rows"]))
def soft_max_mask_rows_repeat(t: Target, rec: Recorder, ne: tuple[int, int], how: str) -> None:
    m = (ne[0] + 1, ne[1]) if how == "ne0" else (ne[0], ne[1] + 1)
    t.op("soft_max_ext", [t.new_tensor(F32, ne, "a"), t.new_tensor(F32, m, "mask")], (1.0,))


@check("CORE-47", a=tensor_specs(type_=st.sampled_from([F32, F16])), op=st.sampled_from(["gelu", "silu"]),
       memory=st.booleans())
def activations_are_unary_ops(t: Target, rec: Recorder, a: TensorSpec, op: str, memory: bool) -> None:
    x = _make(t, a.type, a.ne, "a", memory)
    _record(t, rec, t.op(op, [x], ()), {"a": x})


# --- computing: the scene --------------------------------------------------------------------------------

#: leaf description for `_scene`: (type, extents, bytes)
LeafData = tuple[int, tuple[int, ...], bytes]


def _scene(t: Target, where: Placement, *leafs: LeafData) -> tuple[Scene, list[Handle]]:
    scene = Scene(t, backend_for(t, where), list(leafs), [f"x{i}" for i in range(len(leafs))])
    return scene, scene.leafs


def _compute(t: Target, rec: Recorder, scene: Scene, outputs: list[Handle]) -> None:
    nodes = scene.run(outputs)
    scene.record(rec, nodes)


# --- CORE-49: what the CPU code does not implement ---------------------------------------------------------


def _gap_case(t: Target, where: Placement, case: str, seed: int) -> tuple[Scene, list[Handle]]:
    """The graph of one CORE-49 case: (scene, outputs)."""
    ne = (4, 3)
    if case == "get_rows of an I16 table":
        scene, (a, b) = _scene(t, where, (I16, ne, payload(I16, ne, seed)), (I32, (2,), payload(I32, (2,), seed, int_range=3)))
        return scene, [t.op("get_rows", [a, b], ())]
    if case == "cpy of Q4_0 to F32":
        scene, (a, b) = _scene(t, where, (Q4_0, (32, 2), payload(Q4_0, (32, 2), seed)), (F32, (32, 2), b""))
        return scene, [t.op("cpy", [a, b], ())]
    if case == "cpy of F32 to I32":
        scene, (a, b) = _scene(t, where, (F32, ne, payload(F32, ne, seed)), (I32, ne, b""))
        return scene, [t.op("cpy", [a, b], ())]
    if case == "cpy to Q8_0 through a strided destination":
        scene, (a, b) = _scene(t, where, (F32, (32, 2), payload(F32, (32, 2), seed)), (Q8_0, (32, 4), b""))
        dst = t.view(b, (32, 2), (2 * type_size(GGMLType.Q8_0),), 0)
        return scene, [t.op("cpy", [a, dst], ())]
    if case == "cpy to Q8_0 from a transposed source":
        scene, (a, b) = _scene(t, where, (F32, (2, 32), payload(F32, (2, 32), seed)), (Q8_0, (32, 2), b""))
        return scene, [t.op("cpy", [t.op("transpose", [a], ()), b], ())]
    if case == "add of F16 and I32":
        scene, (a, b) = _scene(t, where, (F16, ne, payload(F16, ne, seed)), (I32, ne, payload(I32, ne, seed)))
        return scene, [t.op("add", [a, b], ())]
    if case == "add of F16 and a transposed F16":
        scene, (a, b) = _scene(t, where, (F16, (3, 3), payload(F16, (3, 3), seed)), (F16, (3, 3), payload(F16, (3, 3), seed + 1)))
        return scene, [t.op("add", [a, t.op("transpose", [b], ())], ())]
    if case == "norm with a gradient":
        scene, (a,) = _scene(t, where, (F32, ne, payload(F32, ne, seed)))
        t.set_param(a)
        return scene, [t.op("norm", [a], (1e-5,))]
    kind = case.split(" ")[0]
    scene, (a, b) = _scene(t, where, (F16, ne, payload(F16, ne, seed)), (F32, ne, payload(F32, ne, seed)))
    if kind == "mul":
        return scene, [t.op("mul", [a, b], ())]
    params = {"scale": (2.0,), "norm": (1e-5,), "soft_max_ext": (1.0,), "gelu": (), "silu": ()}[kind]
    srcs: list[Handle | None] = [a, None] if kind == "soft_max_ext" else [a]
    return scene, [t.op(kind, srcs, params)]


GAP_CASES = ("mul of F16", "scale of F16", "norm of F16", "soft_max_ext of F16", "gelu of F16", "silu of F16",
             "add of F16 and I32", "add of F16 and a transposed F16", "cpy of F32 to I32", "cpy of Q4_0 to F32",
             "cpy to Q8_0 through a strided destination", "cpy to Q8_0 from a transposed source",
             "get_rows of an I16 table", "norm with a gradient")


@check("CORE-49", "CORE-48", case=st.sampled_from(GAP_CASES), where=placements, seed=seeds)
def unimplemented_cases_abort(t: Target, rec: Recorder, case: str, where: Placement, seed: int) -> None:
    """Each gap of rc.8's CPU code: profile rc8 requires the bare `GGML_ASSERT(false)`; profile
    fixed requires it only for NORM with a gradient (at build time) and does not judge what a
    target computes for the others. (CORE-48 is named with CORE-49 because under profile fixed
    this is not an assert check: the reference stops without a violation.) A device with kernels
    of its own (WebGPU) may refuse such a graph instead (spec/core.md, Devices with kernels of
    their own): its refusal is recorded, and must be the reference's WebGPU shape's."""
    scene, outputs = _gap_case(t, where, case, seed)
    try:
        scene.run(outputs)
    except DeviceRefused:
        rec("refused by the device", True)


# --- CORE-50 to CORE-53: conversions and copies --------------------------------------------------------------

special_f32 = st.sampled_from([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
                               0x477FE000, 0x477FF000, 0x477FEFFF, 0x38800000, 0x33800000, 0x33000000, 0x33000001,
                               0x387FC000, 0x3F801000, 0x3F803000, 0x3F802FFF, 0x00000001, 0x80800000])


@check("CORE-50", bits=st.lists(st.one_of(st.integers(0, 2**32 - 1), special_f32), min_size=1, max_size=40),
       halves=st.lists(st.integers(0, 2**16 - 1), min_size=1, max_size=40), where=placements)
def f16_conversion(t: Target, rec: Recorder, bits: list[int], halves: list[int], where: Placement) -> None:
    """F32 bit patterns copied into F16 (ties, overflow, subnormals, NaNs), F16 patterns into F32."""
    scene, (f32, f16_dst, f16, f32_dst) = _scene(
        t, where, (F32, (len(bits),), struct.pack(f"<{len(bits)}I", *bits)), (F16, (len(bits),), b""),
        (F16, (len(halves),), struct.pack(f"<{len(halves)}H", *halves)), (F32, (len(halves),), b""))
    _compute(t, rec, scene, [t.op("cpy", [f32, f16_dst], ()), t.op("cpy", [f16, f32_dst], ())])


@st.composite
def _copy_cases(draw: st.DrawFn) -> tuple[int, Shape, str, tuple[int, int, int, int], str, int, str]:
    """(source type, source root extents, how the source is shaped, axes, op, destination type,
    destination form)."""
    src = draw(st.sampled_from([F32, F16, I32]), label="source type")
    dst = draw(st.sampled_from([src, src, F32, F16, Q4_0, Q8_0] if src != I32 else [I32]), label="destination type")
    quant = dst in QUANT
    ne0 = 32 * draw(st.integers(1, 2), label="blocks") if quant else draw(st.integers(1, 5), label="ne0")
    root = (ne0, draw(small, label="ne1"), draw(st.integers(1, 3), label="ne2"))
    how = draw(st.sampled_from(["root", "permute", "rows"] if quant else list(HOWS)), label="source")
    axes = draw(st.sampled_from([(0, 2, 1, 3), (0, 1, 3, 2), (0, 3, 1, 2)]) if quant else permutations, label="axes")
    op = draw(st.sampled_from(["dup", "cont"] if dst == src else ["cpy"]) if draw(st.booleans(), label="dup or cont")
              else st.just("cpy"), label="op")
    form = draw(st.sampled_from(["same shape", "flat", "view"] if not quant else ["same shape", "flat"]), label="destination")
    return src, root, how, axes, op, dst, form


@check("CORE-51", case=_copy_cases(), where=placements, seed=seeds)
def copies_go_in_logical_order(t: Target, rec: Recorder, case: tuple[int, Shape, str, tuple[int, int, int, int], str, int, str],
                               where: Placement, seed: int) -> None:
    """DUP / CONT of a permuted, transposed or strided source, or CPY of it into a destination
    of its shape, flat, or a strided view of a bigger tensor; converting F32 <-> F16, F32 / F16
    -> Q4_0 / Q8_0. A same-type copy into another shape is made from a contiguous source (the
    other case is CORE-52's)."""
    src_type, root_ne, how, axes, op, dst_type, form = case
    ne = _shape_after(root_ne, how, axes)
    pad0 = blck_size(GGMLType(dst_type)) * 2  # the destination leaf: bigger in dimensions 0 and 1
    big = (ne[0] + pad0, ne[1] + 1, ne[2], ne[3])
    scene, (root, dst_root) = _scene(t, where, (src_type, root_ne, payload(src_type, root_ne, seed)), (dst_type, big, b""))
    src = _shaped(t, root, how, axes)
    assert t.tensor_info(src).ne == ne
    if op != "cpy":
        _compute(t, rec, scene, [t.op(op, [src], ())])
        return
    if src_type == dst_type and how != "root" and form != "view":
        form = "same shape"
    row = type_size(GGMLType(dst_type)) * big[0] // blck_size(GGMLType(dst_type))
    if form == "view":  # a strided [ne] view of the bigger destination leaf (its elements distinct)
        dst = t.view(dst_root, ne, (row, row * big[1], row * big[1] * big[2]), 0)
    elif form == "flat":
        dst = t.view(dst_root, (_n(ne),), (), 0)
    else:
        dst = t.op("reshape", [t.view(dst_root, (_n(ne),), (), 0)], tuple(float(x) for x in ne))
    _compute(t, rec, scene, [t.op("cpy", [src, dst], ())])


@st.composite
def _row_copies(draw: st.DrawFn) -> tuple[int, Shape, Shape]:
    type_ = draw(st.sampled_from([F32, F16, I32]), label="type")
    ne0 = draw(st.integers(1, 4), label="ne0")
    p, q = draw(st.integers(1, 3), label="p"), draw(st.integers(2, 3), label="q")
    rows = p * q
    d1 = draw(st.sampled_from([d for d in range(1, rows + 1) if rows % d == 0 and d != q]), label="destination rows")
    return type_, (ne0, p, q), (ne0, d1, rows // d1)


@check("CORE-52", case=_row_copies(), where=placements, seed=seeds)
def same_type_copy_rows(t: Target, rec: Recorder, case: tuple[int, Shape, Shape], where: Placement, seed: int) -> None:
    """A [ne0, p, q] source permuted to [ne0, q, p] (rows of adjacent elements, not contiguous)
    copied into a contiguous destination of the same type and ne0 but another split of the
    rows: rc.8 writes source row (i1, i2) to the destination's row (i1, i2) (erratum). The CPU
    computes with one thread, so that rows landing on one another land in a defined order."""
    type_, src_ne, dst_ne = case
    scene, (root, dst) = _scene(t, where, (type_, src_ne, payload(type_, src_ne, seed)), (type_, dst_ne, b""))
    if where.kind == "cpu":
        t.cpu_set_n_threads(scene.backend, 1)
    src = t.op("permute", [root], (0.0, 2.0, 1.0, 3.0))
    _compute(t, rec, scene, [t.op("cpy", [src, dst], ())])


@example(type_=int(GGMLType.Q4_0), blocks=2, rows=3, op="dup", flat=False,
         where=Placement("vdev", VDevParams(name=DEVICE_NAMES[0])), seed=1)
@example(type_=int(GGMLType.Q8_0), blocks=3, rows=2, op="cpy", flat=True,
         where=Placement("vdev", VDevParams(name=DEVICE_NAMES[0])), seed=2)
@check("CORE-53", type_=st.sampled_from(QUANT), blocks=st.integers(1, 3), rows=small, op=st.sampled_from(["dup", "cont", "cpy"]),
       flat=st.booleans(), where=placements, seed=seeds)
def quantized_copies_copy_blocks(t: Target, rec: Recorder, type_: int, blocks: int, rows: int, op: str, flat: bool,
                                 where: Placement, seed: int) -> None:
    """A quantized same-type DUP, CONT or CPY (rc.8 copies 32 times the bytes: erratum). A
    guard tensor after the destination, big enough to take rc.8's overflow inside the buffer,
    is recorded too. The destination of DUP and CONT is their node: it is placed here, in a
    buffer of its own with a guard after it, so that rc.8's overflow always lands in the guard
    (in a buffer of the node's size it would corrupt the heap, and crash or not by chance). The
    deterministic examples copy on a plain device: the device the run selects (`--device
    webgpu`: its block-copy kernel) under every seed."""
    ne = (32 * blocks, rows)
    size = type_size(GGMLType(type_)) * blocks * rows
    scene, (a, b, guard) = _scene(t, where, (type_, ne, payload(type_, ne, seed)), (type_, (_n(ne),) if flat else ne, b""),
                                  (I8, (32 * size + 256,), b"\x77"))
    if op == "cpy":
        _compute(t, rec, scene, [t.op("cpy", [a, b], ())])
    else:
        node = t.op(op, [a], ())
        guard = _place_with_guard(t, scene.backend, node, 32 * size + 256)
        scene.graph = t.new_graph(64)
        t.build_forward_expand(scene.graph, node)
        t.backend_graph_compute(scene.backend, scene.graph)
        t.backend_synchronize(scene.backend)
        scene.record(rec, t.graph_nodes(scene.graph))
    rec("the guard after the destination", t.tensor_get(guard, 0, t.nbytes(guard)))


def _place_with_guard(t: Target, backend: Handle, node: Handle, guard_size: int) -> Handle:
    """Allocate `node` at the start of a new buffer of `backend`, followed by an I8 guard tensor
    of `guard_size` bytes holding 0x77; returns the guard."""
    buft = t.backend_get_default_buffer_type(backend)
    align = t.buft_get_alignment(buft)
    room = -(-t.buft_get_alloc_size(buft, node) // align) * align
    guard = t.new_tensor(I8, (guard_size,), "guard")
    buf = t.backend_alloc_buffer(backend, room + t.buft_get_alloc_size(buft, guard) + align)
    t.buffer_clear(buf, 0x77)
    pad = (-t.buffer_get_base(buf)) % align
    t.tensor_alloc(buf, node, pad)
    t.tensor_alloc(buf, guard, pad + room)
    return guard


# --- CORE-54 to CORE-60: ADD, MUL, SCALE -------------------------------------------------------------------------


@st.composite
def _binary_cases(draw: st.DrawFn, f16: bool = True) -> tuple[int, int, Shape, Shape, str, str]:
    """(a type, b type, a extents, b extents, how a is shaped, how b is shaped)."""
    a_type = draw(st.sampled_from([F32, F16] if f16 else [F32]), label="a type")
    ne = (draw(st.integers(1, 5), label="ne0"), draw(small, label="ne1"), draw(st.integers(1, 3), label="ne2"))
    if a_type == F16:
        b_type = draw(st.sampled_from([F16, F32]), label="b type")
        return a_type, b_type, ne, ne, draw(st.sampled_from(["root", "rows"]), label="a"), "root"
    b_ne = tuple(draw(st.sampled_from([d for d in range(1, x + 1) if x % d == 0]), label=f"b ne{i}") for i, x in enumerate(ne))
    return a_type, F32, ne, b_ne, draw(st.sampled_from(["root", "rows"]), label="a"), draw(st.sampled_from(HOWS), label="b")


def _binary_graph(t: Target, where: Placement, case: tuple[int, int, Shape, Shape, str, str], op: str, seed: int,
                  spread: int) -> tuple[Scene, Handle]:
    a_type, b_type, a_ne, b_ne, a_how, b_how = case
    a_root = (a_ne[0], a_ne[1] * (2 if a_how == "rows" else 1), *a_ne[2:])
    b_root = b_ne if b_how in ("root", "permute") else (b_ne[1], b_ne[0], *b_ne[2:]) if b_how == "transpose" \
        else (b_ne[0], b_ne[1] * 2, *b_ne[2:])
    if b_how == "permute":
        b_root = (b_ne[0], b_ne[2], b_ne[1])
    scene, (a0, b0) = _scene(t, where, (a_type, a_root, payload(a_type, a_root, seed, spread)),
                             (b_type, b_root, payload(b_type, b_root, seed + 1, spread)))
    a = _shaped(t, a0, a_how)
    if a_how == "rows":
        a = t.view(a0, a_ne, (2 * t.tensor_info(a0).nb[1], t.tensor_info(a0).nb[2]), 0)
    b = _shaped(t, b0, b_how)
    if b_how == "rows":
        b = t.view(b0, b_ne, (2 * t.tensor_info(b0).nb[1], t.tensor_info(b0).nb[2]), 0)
    return scene, t.op(op, [a, b], ())


#: the plain virtual device (every knob at its default): the device `--device webgpu/vulkan` puts
#: there. The op checks' explicit examples below use it, so every run computes those cases on it
ON_THE_PLAIN_DEVICE = Placement("vdev", VDevParams())

#: an explicit example of add_computes and mul_computes: b repeated along dimension 0 (as test-backend-ops'
#: ADD and MUL cases with nr[0] = 2), on the plain device
_REPEATED_ALONG_DIM_0 = {"case": (F32, F32, (16, 4, 2), (8, 4, 2), "root", "root"), "where": ON_THE_PLAIN_DEVICE,
                         "seed": 0, "spread": 0}


@example(**_REPEATED_ALONG_DIM_0)
@check("CORE-54", case=_binary_cases(), where=placements, seed=seeds, spread=st.integers(0, 8))
def add_computes(t: Target, rec: Recorder, case: tuple[int, int, Shape, Shape, str, str], where: Placement, seed: int,
                 spread: int) -> None:
    """F32 a (rows possibly padded) + F32 b repeated (possibly transposed, permuted or strided);
    F16 a + F16 or F32 b of the same shape."""
    scene, out = _binary_graph(t, where, case, "add", seed, spread)
    _compute(t, rec, scene, [out])


@check("CORE-55", ne=st.tuples(st.integers(2, 5), st.integers(2, 4)), b_type=st.sampled_from([F16, F32]),
       where=placements, seed=seeds)
def f16_add_does_not_broadcast(t: Target, rec: Recorder, ne: tuple[int, int], b_type: int, where: Placement, seed: int) -> None:
    scene, (a, b) = _scene(t, where, (F16, ne, payload(F16, ne, seed)), (b_type, (ne[0], 1), payload(b_type, (ne[0], 1), seed)))
    scene.run([t.op("add", [a, b], ())])


@check("CORE-56", ne=st.tuples(st.integers(1, 5), st.integers(2, 4)), op=st.sampled_from(["add", "mul"]),
       where=placements, seed=seeds)
def f32_binary_needs_adjacent_elements(t: Target, rec: Recorder, ne: tuple[int, int], op: str, where: Placement,
                                       seed: int) -> None:
    """a = transpose of an [ne1, ne0] root (ne1 ≥ 2, so `nb[0]` = 4·ne1 ≠ 4)."""
    scene, (root, b) = _scene(t, where, (F32, (ne[1], ne[0]), payload(F32, (ne[1], ne[0]), seed)),
                              (F32, ne, payload(F32, ne, seed + 1)))
    scene.run([t.op(op, [t.op("transpose", [root], ()), b], ())])


@example(**_REPEATED_ALONG_DIM_0)
@check("CORE-57", case=_binary_cases(f16=False), where=placements, seed=seeds, spread=st.integers(0, 8))
def mul_computes(t: Target, rec: Recorder, case: tuple[int, int, Shape, Shape, str, str], where: Placement, seed: int,
                 spread: int) -> None:
    scene, out = _binary_graph(t, where, case, "mul", seed, spread)
    _compute(t, rec, scene, [out])


@check("CORE-58", ne=st.tuples(st.integers(1, 5), st.integers(1, 4)), a_type=st.sampled_from([F32, F16]),
       b_type=st.sampled_from([F16, I32]), where=placements, seed=seeds)
def mul_needs_f32_b(t: Target, rec: Recorder, ne: tuple[int, int], a_type: int, b_type: int, where: Placement, seed: int) -> None:
    scene, (a, b) = _scene(t, where, (a_type, ne, payload(a_type, ne, seed)), (b_type, ne, payload(b_type, ne, seed)))
    scene.run([t.op("mul", [a, b], ())])


@example(a=TensorSpec(F32, (10, 10, 10, 10)), s=2.0, where=ON_THE_PLAIN_DEVICE, seed=0, spread=0)
@check("CORE-59", a=tensor_specs(type_=st.just(F32)), s=st.floats(-1e4, 1e4, width=32), where=placements, seed=seeds,
       spread=st.integers(0, 8))
def scale_computes(t: Target, rec: Recorder, a: TensorSpec, s: float, where: Placement, seed: int, spread: int) -> None:
    """The explicit example is upstream test-backend-ops' own SCALE case (ne [10, 10, 10, 10],
    scale 2) on the plain device (Vulkan or WebGPU under `--device`), so every run computes SCALE
    on the device: drawn placements reach it in a few examples only."""
    scene, (x,) = _scene(t, where, (F32, a.ne, payload(F32, a.ne, seed, spread)))
    _compute(t, rec, scene, [t.op("scale", [x], (s,))])


@check("CORE-60", ne=st.tuples(st.integers(1, 5), st.integers(2, 4)), where=placements, seed=seeds)
def scale_needs_contiguous(t: Target, rec: Recorder, ne: tuple[int, int], where: Placement, seed: int) -> None:
    """Every other row of a root: padded rows (CORE-21 accepts them), not contiguous."""
    scene, (root,) = _scene(t, where, (F32, ne, payload(F32, ne, seed)))
    scene.run([t.op("scale", [_shaped(t, root, "rows")], (2.0,))])


# --- CORE-61 to CORE-64: MUL_MAT -------------------------------------------------------------------------


@st.composite
def _mul_mat_cases(draw: st.DrawFn) -> tuple[int, int, Shape, Shape, bool, bool]:
    """(weights type, b type, a extents, b extents, a permuted, b permuted)."""
    wt, a_ne, b_ne = draw(_mul_mat_shapes(), label="shapes")
    vdt = {F32: F32, F16: F16, Q4_0: Q8_0, Q8_0: Q8_0}[wt]
    bt = draw(st.sampled_from([F32, vdt]), label="b type")
    a_perm = draw(st.booleans(), label="a permuted (dimensions 2 and 3 swapped)")
    b_perm = draw(st.booleans(), label="b permuted (dimensions 1 and 2 swapped)")
    return wt, bt, a_ne, b_ne, a_perm, b_perm


@check("CORE-61", case=_mul_mat_cases(), where=placements, seed=seeds, spread=st.integers(0, 4))
def mul_mat_computes(t: Target, rec: Recorder, case: tuple[int, int, Shape, Shape, bool, bool], where: Placement, seed: int,
                     spread: int) -> None:
    """Weights F32, F16, Q4_0, Q8_0 (as stored, or permuted in dimensions 2 and 3) times b (F32
    or the vec_dot type, possibly permuted in dimensions 1 and 2), broadcast over b's batches."""
    wt, bt, a_ne, b_ne, a_perm, b_perm = case
    a_root = (a_ne[0], a_ne[1], a_ne[3], a_ne[2]) if a_perm else a_ne
    b_root = (b_ne[0], b_ne[2], b_ne[1], b_ne[3]) if b_perm else b_ne
    scene, (a0, b0) = _scene(t, where, (wt, a_root, payload(wt, a_root, seed, spread)),
                             (bt, b_root, payload(bt, b_root, seed + 1, spread)))
    a = t.op("permute", [a0], (0.0, 1.0, 3.0, 2.0)) if a_perm else a0
    b = t.op("permute", [b0], (0.0, 2.0, 1.0, 3.0)) if b_perm else b0
    _compute(t, rec, scene, [t.op("mul_mat", [a, b], ())])


@check("CORE-62", p=st.integers(2, 4), q=st.integers(1, 4), r=st.integers(1, 3), n=small, where=placements, seed=seeds)
def mul_mat_needs_adjacent_weights(t: Target, rec: Recorder, p: int, q: int, r: int, n: int, where: Placement, seed: int) -> None:
    """a = a [p, q, r] root permuted (2, 0, 1, 3): extents [q, r, p], `nb[0]` = p·4 ≤ `nb[1]`:
    not transposed (CORE-24 passes), but its elements are not adjacent."""
    scene, (root, b) = _scene(t, where, (F32, (p, q, r), payload(F32, (p, q, r), seed)),
                              (F32, (q, n, p), payload(F32, (q, n, p), seed)))
    a = t.op("permute", [root], (2.0, 0.0, 1.0, 3.0))
    scene.run([t.op("mul_mat", [a, b], ())])


@check("CORE-63", k=st.integers(1, 4), m=small, n=st.integers(2, 4), where=placements, seed=seeds)
def mul_mat_needs_adjacent_inputs(t: Target, rec: Recorder, k: int, m: int, n: int, where: Placement, seed: int) -> None:
    """b = transpose of an [n, k] root: extents [k, n], `nb[0]` = n·4."""
    scene, (a, root) = _scene(t, where, (F32, (k, m), payload(F32, (k, m), seed)), (F32, (n, k), payload(F32, (n, k), seed)))
    scene.run([t.op("mul_mat", [a, t.op("transpose", [root], ())], ())])


@check("CORE-64", pair=st.sampled_from([(F32, F16), (Q4_0, F16), (Q8_0, F16), (F16, Q8_0), (F32, Q8_0)]), m=small, n=small,
       where=placements, seed=seeds)
def mul_mat_converts_only_f32(t: Target, rec: Recorder, pair: tuple[int, int], m: int, n: int, where: Placement,
                              seed: int) -> None:
    wt, bt = pair
    scene, (a, b) = _scene(t, where, (wt, (32, m), payload(wt, (32, m), seed)), (bt, (32, n), payload(bt, (32, n), seed)))
    scene.run([t.op("mul_mat", [a, b], ())])


# --- CORE-65 to CORE-72: GET_ROWS, NORM, SOFT_MAX, GELU, SILU ------------------------------------------------


@check("CORE-65", shapes=_get_rows_shapes(), padded=st.booleans(), where=placements, seed=seeds)
def get_rows_computes(t: Target, rec: Recorder, shapes: tuple[int, Shape, Shape], padded: bool, where: Placement,
                      seed: int) -> None:
    """Rows of F32, I32, F16, Q4_0, Q8_0 tables (possibly every other row of a bigger one) by
    in-range I32 indices; table (i1, i2) for index row (i1, i2) (dimension 3 of the table is
    only reached by indices' dimension 2)."""
    tt, a_ne, b_ne = shapes
    b_ne = (b_ne[0], b_ne[1], min(b_ne[2], a_ne[3]))
    root = (a_ne[0], a_ne[1] * (2 if padded else 1), a_ne[2], a_ne[3])
    scene, (table, idx) = _scene(t, where, (tt, root, payload(tt, root, seed)),
                                 (I32, b_ne, payload(I32, b_ne, seed, int_range=a_ne[1])))
    if padded:
        info = t.tensor_info(table)
        table = t.view(table, a_ne, (2 * info.nb[1], info.nb[2], info.nb[3]), 0)
    _compute(t, rec, scene, [t.op("get_rows", [table, idx], ())])


@example(a=TensorSpec(F32, (64, 10, 10, 10)), eps=0.1, constant=False, where=ON_THE_PLAIN_DEVICE, seed=0, spread=0)
@check("CORE-66", a=tensor_specs(type_=st.just(F32)), eps=st.sampled_from([1e-5, 1e-6, 1e-3, 0.5, 3.0]),
       constant=st.booleans(), where=placements, seed=seeds, spread=st.integers(0, 8))
def norm_computes(t: Target, rec: Recorder, a: TensorSpec, eps: float, constant: bool, where: Placement, seed: int,
                  spread: int) -> None:
    """Rows of random values, or rows of one repeated value (variance 0). The explicit example is
    upstream test-backend-ops' NORM case with its largest eps (ne [64, 10, 10, 10], eps 0.1) on
    the plain device, so every run judges NORM's eps on the device."""
    data = payload(F32, a.ne, seed, spread)
    if constant:
        data = data[:4] * _n(a.ne)
    scene, (x,) = _scene(t, where, (F32, a.ne, data))
    _compute(t, rec, scene, [t.op("norm", [x], (eps,))])


@check("CORE-67", eps=st.one_of(st.just(0.0), st.just(-0.0), st.floats(-10.0, -(2.0**-100), width=32)), where=placements,
       seed=seeds)
def norm_needs_positive_eps(t: Target, rec: Recorder, eps: float, where: Placement, seed: int) -> None:
    scene, (x,) = _scene(t, where, (F32, (4, 2), payload(F32, (4, 2), seed)))
    scene.run([t.op("norm", [x], (eps,))])


@check("CORE-68", ne=st.tuples(st.integers(1, 5), st.integers(2, 4)), where=placements, seed=seeds)
def norm_needs_adjacent_elements(t: Target, rec: Recorder, ne: tuple[int, int], where: Placement, seed: int) -> None:
    scene, (root,) = _scene(t, where, (F32, (ne[1], ne[0]), payload(F32, (ne[1], ne[0]), seed)))
    scene.run([t.op("norm", [t.op("transpose", [root], ())], (1e-5,))])


@check("CORE-69", shapes=_soft_max_shapes(), scale=st.sampled_from([1.0, 0.5, 0.125, 2.0, -1.0]), masked=st.integers(0, 4),
       where=placements, seed=seeds, spread=st.integers(0, 6))
def soft_max_computes(t: Target, rec: Recorder, shapes: tuple[Shape, Shape | None], scale: float, masked: int,
                      where: Placement, seed: int, spread: int) -> None:
    """Rows of `a·scale (+ mask row)`, the mask holding up to `masked` −∞ per row (never a whole row)."""
    a_ne, m_ne = shapes
    leafs: list[LeafData] = [(F32, a_ne, payload(F32, a_ne, seed, spread))]
    if m_ne is not None:
        m = values(seed + 1, _n(m_ne), spread).reshape(m_ne[1], m_ne[0])
        rng = np.random.default_rng(seed + 2)
        for row in m:
            if m_ne[0] > 1:
                row[rng.choice(m_ne[0], size=min(masked, m_ne[0] - 1), replace=False)] = -np.inf
        leafs.append((F32, m_ne, m.astype(np.float32).tobytes()))
    scene, xs = _scene(t, where, *leafs)
    mask = xs[1] if m_ne is not None else None
    _compute(t, rec, scene, [t.op("soft_max_ext", [xs[0], mask], (scale,))])


@check("CORE-70", "CORE-71", a=tensor_specs(type_=st.just(F32)), op=st.sampled_from(["gelu", "silu"]),
       how=st.sampled_from(["root", "rows"]),
       where=placements, seed=seeds, spread=st.integers(0, 8))
def activations_compute(t: Target, rec: Recorder, a: TensorSpec, op: str, how: str, where: Placement, seed: int,
                        spread: int) -> None:
    """GELU / SILU of values up to ±2^spread, of a tensor or of every other row of one."""
    scene, (x,) = _scene(t, where, (F32, a.ne, payload(F32, a.ne, seed, spread)))
    _compute(t, rec, scene, [t.op(op, [_shaped(t, x, how)], ())])


@check("CORE-72", ne=st.tuples(st.integers(2, 5), st.integers(2, 4)), op=st.sampled_from(["gelu", "silu"]),
       how=st.sampled_from(["transpose", "permute"]), where=placements, seed=seeds)
def activations_need_padded_rows(t: Target, rec: Recorder, ne: tuple[int, int], op: str, how: str, where: Placement,
                                 seed: int) -> None:
    """Transposed (`nb[0]` ≠ 4), or permuted (0, 2, 1, 3) from a 3-d root (dimension 2 not dense)."""
    root_ne = (ne[0], ne[1], 2) if how == "permute" else ne
    scene, (root,) = _scene(t, where, (F32, root_ne, payload(F32, root_ne, seed)))
    scene.run([t.op(op, [_shaped(t, root, how)], ())])


# --- CORE-73 to CORE-76: the quantized formats ---------------------------------------------------------------

block_values = st.lists(st.one_of(st.floats(-256.0, 256.0, width=32), st.integers(-16, 16).map(float),
                                  st.sampled_from([0.0, -0.0, 0.5, -0.5, 7.5, -8.0, 127.0, -127.0])),
                        min_size=32, max_size=32)


@check("CORE-73", "CORE-74", blocks=st.lists(block_values, min_size=1, max_size=4), type_=st.sampled_from(QUANT),
       src_type=st.sampled_from([F32, F16]), rows=st.sampled_from([1, 2]), where=placements)
def quantization(t: Target, rec: Recorder, blocks: list[list[float]], type_: int, src_type: int, rows: int,
                 where: Placement) -> None:
    """Blocks of drawn values (ties, equal magnitudes of both signs, zero blocks) copied from
    F32 or F16 into Q4_0 / Q8_0: the blocks' bytes."""
    if len(blocks) % rows:
        rows = 1
    flat = np.array([x for b in blocks for x in b], dtype=np.float32)
    data = flat.tobytes() if src_type == F32 else fp32_to_fp16(flat).astype("<u2").tobytes()
    ne = (flat.size // rows, rows)
    scene, (src, dst) = _scene(t, where, (src_type, ne, data), (type_, ne, b""))
    _compute(t, rec, scene, [t.op("cpy", [src, dst], ())])


@check("CORE-75", type_=st.sampled_from(QUANT), blocks=st.integers(1, 3), rows=st.integers(1, 4), n=st.integers(1, 4),
       where=placements, seed=seeds)
def dequantization(t: Target, rec: Recorder, type_: int, blocks: int, rows: int, n: int, where: Placement, seed: int) -> None:
    """GET_ROWS of a table of random blocks (any integers, finite scales): the F32 values."""
    ne = (32 * blocks, rows)
    scene, (table, idx) = _scene(t, where, (type_, ne, random_blocks(type_, blocks * rows, seed)),
                                 (I32, (n,), payload(I32, (n,), seed, int_range=rows)))
    _compute(t, rec, scene, [t.op("get_rows", [table, idx], ())])


@check("CORE-76", type_=st.sampled_from(QUANT), blocks=st.integers(1, 4), m=small, n=small, b_blocks=st.booleans(),
       where=placements, seed=seeds, spread=st.integers(0, 6))
def quantized_dot_products(t: Target, rec: Recorder, type_: int, blocks: int, m: int, n: int, b_blocks: bool,
                           where: Placement, seed: int, spread: int) -> None:
    """Q4_0 / Q8_0 weights of random blocks times b: F32 values (quantized to Q8_0 first) or
    random Q8_0 blocks."""
    k = 32 * blocks
    b_data: LeafData = (Q8_0, (k, n), random_blocks(Q8_0, blocks * n, seed + 1)) if b_blocks \
        else (F32, (k, n), payload(F32, (k, n), seed + 1, spread))
    scene, (a, b) = _scene(t, where, (type_, (k, m), random_blocks(type_, blocks * m, seed)), b_data)
    _compute(t, rec, scene, [t.op("mul_mat", [a, b], ())])


