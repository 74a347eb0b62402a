"""Smoke tests of the native build's graph area: graphs, operations and their CPU kernels,
quantization, the allocators, graph plans and graph_compute, the virtual device's graph
compute, graph_copy and compare_graph_backend.

They use the raw cffi binding of the build under test (ggspec.native._native, or the build
GGSPEC_NATIVE_MODULE names, e.g. a sanitizer build). Expected values are computed here with
numpy, independently of the C code. Aborts are tested in forked children.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from forked import assert_aborts, run_forked  # noqa: F401 - shared death-test helpers
from ggspec.native import load_lib
from made import ALL_OPS, context, vdev  # noqa: F401 - ALL_OPS for the tests below

ffi, lib = load_lib()

F32, F16, Q4_0, Q8_0, I32 = (lib.GGSPEC_TYPE_F32, lib.GGSPEC_TYPE_F16, lib.GGSPEC_TYPE_Q4_0,
                             lib.GGSPEC_TYPE_Q8_0, lib.GGSPEC_TYPE_I32)
NP_TYPE = {F32: np.float32, F16: np.float16, I32: np.int32}


# --- helpers ------------------------------------------------------------------------------


@pytest.fixture
def ctx() -> Iterator[Any]:
    """A context that allocates: tensors get their bytes in the context's pool."""
    yield from context(64 << 20, no_alloc=False)


@pytest.fixture
def noalloc() -> Iterator[Any]:
    """A no_alloc context: tensors get their bytes from buffers."""
    yield from context(16 << 20, no_alloc=True)


@pytest.fixture
def cpu() -> Iterator[Any]:
    b = lib.ggspec_backend_cpu_init()
    yield b
    lib.ggspec_backend_free(b)


#: bytes for tensors of no_alloc contexts, written by flush() once they are allocated
PENDING: list[tuple[Any, bytes]] = []


def put(t: Any, data: bytes) -> None:
    assert len(data) == lib.ggspec_nbytes(t)
    if t.data == ffi.NULL:
        PENDING.append((t, data))
    else:
        ffi.memmove(t.data, data, len(data))


def flush() -> None:
    for t, data in PENDING:
        lib.ggspec_backend_tensor_set(t, data, 0, len(data))
    PENDING.clear()


def new(ctx: Any, type_: int, arr: Any, name: str = "") -> Any:
    """A tensor of ctx holding arr (numpy shape (..., ne1, ne0)); in a no_alloc context the
    bytes are written by flush()."""
    arr = np.ascontiguousarray(arr)
    ne = list(arr.shape[::-1])
    t = getattr(lib, f"ggspec_new_tensor_{len(ne)}d")(ctx, type_, *ne)
    put(t, arr.tobytes())
    if name:
        lib.ggspec_set_name(t, name.encode())
    return t


def empty(ctx: Any, type_: int, *ne: int) -> Any:
    return getattr(lib, f"ggspec_new_tensor_{len(ne)}d")(ctx, type_, *ne)


def read(t: Any, dtype: Any = None) -> np.ndarray:
    """The elements of a host tensor (any strides) as a numpy array of shape (ne3, ne2, ne1, ne0)."""
    dtype = dtype or NP_TYPE[int(t.type)]
    item = np.dtype(dtype).itemsize
    ne = [int(x) for x in t.ne]
    nb = [int(x) for x in t.nb]
    span = lib.ggspec_nbytes(t)
    assert span % item == 0
    base = np.frombuffer(ffi.buffer(t.data, span), dtype=dtype)
    return np.array(np.lib.stride_tricks.as_strided(base, shape=ne[::-1], strides=nb[::-1]))


def raw(t: Any) -> bytes:
    return bytes(ffi.buffer(t.data, lib.ggspec_nbytes(t)))


def compute(ctx: Any, backend: Any, out: Any) -> Any:
    g = lib.ggspec_new_graph(ctx)
    lib.ggspec_build_forward_expand(g, out)
    assert lib.ggspec_backend_graph_compute(backend, g)
    return g


def names(arr: Any, n: int) -> list[str]:
    return [ffi.string(arr[i].name).decode() for i in range(n)]


rng = np.random.default_rng(20240229)


def randn(*shape: int, scale: float = 2.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# --- graphs -------------------------------------------------------------------------------


def test_diamond_order_and_names(ctx: Any) -> None:
    a = new(ctx, F32, randn(2, 4))
    b = new(ctx, F32, randn(2, 4), "b")
    c = lib.ggspec_add(ctx, a, b)
    d = lib.ggspec_mul(ctx, c, a)
    e = lib.ggspec_scale(ctx, c, 2.0)
    f = lib.ggspec_add(ctx, d, e)
    g = lib.ggspec_new_graph(ctx)
    lib.ggspec_build_forward_expand(g, f)

    assert (g.n_nodes, g.n_leafs, g.size) == (4, 2, lib.GGSPEC_DEFAULT_GRAPH_SIZE)
    assert [g.nodes[i] for i in range(4)] == [c, d, e, f]
    assert [g.leafs[i] for i in range(2)] == [a, b]
    # unnamed tensors are named after their place; named ones keep their name
    assert names(g.leafs, 2) == ["leaf_0", "b"]
    assert names(g.nodes, 4) == ["node_0", "node_1", "node_2", "node_3"]
    assert g.grads == ffi.NULL
    assert g.order == lib.GGSPEC_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT
    for t in (a, b, c, d, e, f):
        assert lib.ggspec_hash_contains(g.visited_hash_table, t)

    # expanding again adds nothing; a new output adds only what is new
    lib.ggspec_build_forward_expand(g, f)
    assert (g.n_nodes, g.n_leafs) == (4, 2)
    h = lib.ggspec_mul(ctx, f, new(ctx, F32, randn(2, 4)))
    lib.ggspec_build_forward_expand(g, h)
    assert (g.n_nodes, g.n_leafs) == (5, 3) and g.nodes[4] == h


def test_right_to_left_and_params(ctx: Any) -> None:
    a = new(ctx, F32, randn(4))
    b = new(ctx, F32, randn(4))
    w = new(ctx, F32, randn(4))
    lib.ggspec_set_param(ctx, w)
    assert w.is_param and w.grad != ffi.NULL
    c = lib.ggspec_add(ctx, a, b)
    d = lib.ggspec_mul(ctx, c, w)
    assert c.grad == ffi.NULL and d.grad != ffi.NULL  # a result is a node with a gradient when an operand has one

    g = lib.ggspec_new_graph_custom(ctx, 16, True)
    g.order = lib.GGSPEC_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT
    lib.ggspec_build_forward_expand(g, d)
    # sources visited from the last slot down; the parameter w is a node, not a leaf
    assert [g.nodes[i] for i in range(g.n_nodes)] == [w, c, d]
    assert [g.leafs[i] for i in range(g.n_leafs)] == [b, a]
    assert [g.grads[i] for i in range(3)] == [w.grad, c.grad, d.grad]


def test_graph_overhead_view_copy(ctx: Any) -> None:
    obj = lib.ggspec_tensor_overhead() - ffi.sizeof("struct ggspec_tensor")
    for size, grads in ((1, False), (10, True), (2048, False)):
        n = ffi.sizeof("struct ggspec_cgraph") + 8 * (2 * size + lib.ggspec_hash_size(2 * size) + (size if grads else 0))
        assert lib.ggspec_graph_overhead_custom(size, grads) == obj + (n + 15) // 16 * 16
    assert lib.ggspec_graph_overhead() == lib.ggspec_graph_overhead_custom(2048, False)
    assert [lib.ggspec_hash_size(n) for n in (0, 2, 4, 12, 4096, 4100)] == [2, 2, 5, 17, 4099, 8209]

    xs = [new(ctx, F32, randn(3)) for _ in range(3)]
    y = lib.ggspec_add(ctx, lib.ggspec_add(ctx, xs[0], xs[1]), xs[2])
    g = lib.ggspec_new_graph_custom(ctx, 8, False)
    lib.ggspec_build_forward_expand(g, y)
    # graphs are objects of the context, not tensors
    tensors = []
    t = lib.ggspec_get_first_tensor(ctx)
    while t != ffi.NULL:
        tensors.append(t)
        t = lib.ggspec_get_next_tensor(ctx, t)
    assert len(tensors) == 5

    v = lib.ggspec_graph_view(g, 1, 2)
    assert (v.size, v.n_nodes, v.n_leafs, v.visited_hash_table.size) == (0, 1, 0, 0)
    assert v.nodes[0] == g.nodes[1] and v.leafs == ffi.NULL

    d = lib.ggspec_graph_dup(ctx, g)
    assert (d.n_nodes, d.n_leafs) == (g.n_nodes, g.n_leafs)
    assert lib.ggspec_hash_contains(d.visited_hash_table, xs[2])
    assert lib.ggspec_graph_get_tensor(g, b"leaf_1") == xs[1]
    lib.ggspec_graph_clear(d)
    assert (d.n_nodes, d.n_leafs) == (0, 0) and not lib.ggspec_hash_contains(d.visited_hash_table, xs[2])


def test_hash_set() -> None:
    s = lib.ggspec_hash_set_new(3)
    assert s.size == 3
    keys = [ffi.cast("struct ggspec_tensor *", 0x1000 + 64 * i) for i in range(3)]
    slots = [lib.ggspec_hash_insert(s, k) for k in keys]
    assert sorted(slots) == [0, 1, 2]
    assert lib.ggspec_hash_insert(s, keys[0]) == lib.GGSPEC_HASHTABLE_ALREADY_EXISTS
    assert lib.ggspec_hash_find(s, keys[1]) == slots[1]
    other = ffi.cast("struct ggspec_tensor *", 0x9000)
    assert lib.ggspec_hash_find(s, other) == lib.GGSPEC_HASHTABLE_FULL
    assert not lib.ggspec_hash_contains(s, other)
    assert lib.ggspec_hash_find_or_insert(s, keys[2]) == slots[2]
    lib.ggspec_hash_set_free(s)


def test_graph_size_asserts() -> None:
    def too_many_nodes() -> None:
        params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
        c = lib.ggspec_init(params[0])
        a = lib.ggspec_new_tensor_1d(c, F32, 4)
        x = lib.ggspec_scale(c, lib.ggspec_scale(c, lib.ggspec_scale(c, a, 1.0), 2.0), 3.0)
        g = lib.ggspec_new_graph_custom(c, 2, False)  # 2 nodes, and a hash table of 5 slots
        lib.ggspec_build_forward_expand(g, x)

    def too_many_leafs() -> None:
        params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
        c = lib.ggspec_init(params[0])
        a, b, d = (lib.ggspec_new_tensor_1d(c, F32, 4) for _ in range(3))
        g = lib.ggspec_new_graph_custom(c, 2, False)
        lib.ggspec_build_forward_expand(g, lib.ggspec_add(c, lib.ggspec_add(c, a, b), d))

    def hash_full() -> None:
        params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
        c = lib.ggspec_init(params[0])
        a = lib.ggspec_new_tensor_1d(c, F32, 4)
        g = lib.ggspec_new_graph_custom(c, 1, False)  # 2 hash slots for 3 tensors
        lib.ggspec_build_forward_expand(g, lib.ggspec_scale(c, lib.ggspec_scale(c, a, 1.0), 2.0))

    assert_aborts(too_many_nodes, "cgraph->n_nodes < cgraph->size")
    assert_aborts(too_many_leafs, "cgraph->n_leafs < cgraph->size")
    assert_aborts(hash_full, "i != GGML_HASHTABLE_FULL")


# --- operations: constructors -------------------------------------------------------------


def test_constructor_shapes_and_params(noalloc: Any) -> None:
    c = noalloc
    a = empty(c, F32, 4, 3, 2)
    assert list(lib.ggspec_scale(c, a, 0.5).op_params[0:1]) == list(np.frombuffer(np.float32(0.5).tobytes(), np.int32))

    p = lib.ggspec_permute(c, a, 2, 0, 1, 3)
    assert list(p.ne) == [3, 2, 4, 1] and list(p.nb) == [16, 48, 4, 96]
    assert list(p.op_params[0:4]) == [2, 0, 1, 3] and p.view_src == a and p.src[0] == a
    assert ffi.string(p.name) == b" (permuted)"

    t = lib.ggspec_transpose(c, a)
    assert list(t.ne) == [3, 4, 2, 1] and list(t.nb) == [16, 4, 48, 96] and t.op == lib.GGSPEC_OP_TRANSPOSE

    r = lib.ggspec_reshape_2d(c, a, 8, 3)
    assert list(r.ne) == [8, 3, 1, 1] and list(r.nb) == [4, 32, 96, 96] and r.view_src == a
    r4 = lib.ggspec_reshape(c, a, empty(c, F16, 24))
    assert list(r4.ne) == [24, 1, 1, 1] and r4.type == F32

    w = empty(c, Q4_0, 64, 5)
    x = empty(c, F32, 64, 3, 2)
    m = lib.ggspec_mul_mat(c, w, x)
    assert m.type == F32 and list(m.ne) == [5, 3, 2, 1] and (m.src[0], m.src[1]) == (w, x)

    idx = empty(c, I32, 7)
    gr = lib.ggspec_get_rows(c, w, idx)
    assert gr.type == F32 and list(gr.ne) == [64, 7, 1, 1]

    dst = empty(c, F16, 24)
    lib.ggspec_set_name(dst, b"dst")
    lib.ggspec_set_name(a, b"a")
    cp = lib.ggspec_cpy(c, a, dst)
    assert cp.view_src == dst and cp.type == F16 and ffi.string(cp.name) == b"dst (copy of a)"

    u = lib.ggspec_gelu(c, a)
    assert u.op == lib.GGSPEC_OP_UNARY and u.op_params[0] == lib.GGSPEC_UNARY_OP_GELU
    assert lib.ggspec_get_unary_op(lib.ggspec_silu(c, a)) == lib.GGSPEC_UNARY_OP_SILU
    assert ffi.string(lib.ggspec_unary_op_name(lib.GGSPEC_UNARY_OP_GELU_QUICK)) == b"GELU_QUICK"
    assert ffi.string(lib.ggspec_op_name(lib.GGSPEC_OP_SOFT_MAX)) == b"SOFT_MAX"

    inplace = lib.ggspec_add_inplace(c, a, empty(c, F32, 4))
    assert inplace.view_src == a and inplace.op == lib.GGSPEC_OP_ADD

    mask = empty(c, F32, 4, 3)
    sm = lib.ggspec_soft_max_ext(c, a, mask, 0.25)
    assert sm.src[1] == mask and np.frombuffer(ffi.buffer(sm.op_params, 4), np.float32)[0] == np.float32(0.25)
    n = lib.ggspec_norm(c, a, 1e-5)
    assert np.frombuffer(ffi.buffer(n.op_params, 4), np.float32)[0] == np.float32(1e-5)


def test_constructor_asserts() -> None:
    def setup() -> Any:
        params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
        return lib.ggspec_init(params[0])

    def bad_add() -> None:
        c = setup()
        lib.ggspec_add(c, empty(c, F32, 4, 3), empty(c, F32, 3))

    def bad_mul_mat() -> None:
        c = setup()
        lib.ggspec_mul_mat(c, empty(c, F32, 4, 3), empty(c, F32, 5, 3))

    def bad_permute() -> None:
        c = setup()
        lib.ggspec_permute(c, empty(c, F32, 4, 3), 0, 0, 1, 2)

    def bad_reshape() -> None:
        c = setup()
        lib.ggspec_reshape_1d(c, lib.ggspec_transpose(c, empty(c, F32, 4, 3)), 12)

    def bad_get_rows() -> None:
        c = setup()
        lib.ggspec_get_rows(c, empty(c, F32, 4, 3), empty(c, F32, 2))

    assert_aborts(bad_add, "ggml_can_repeat(b, a)")
    assert_aborts(bad_mul_mat, "ggml_can_mul_mat(a, b)")
    assert_aborts(bad_permute, "axis0 != axis1")
    assert_aborts(bad_reshape, "ggml_is_contiguous(a)")
    assert_aborts(bad_get_rows, "b->type == GGML_TYPE_I32")


# --- operations: kernels ------------------------------------------------------------------


def np_gelu(x: np.ndarray) -> np.ndarray:
    xd = x.astype(np.float64)
    out: np.ndarray = 0.5 * xd * (1.0 + np.tanh(0.7978845608028654 * xd * (1.0 + 0.044715 * xd * xd)))
    return out


def test_add_mul_broadcast(ctx: Any, cpu: Any) -> None:
    x, y = randn(2, 3, 8), randn(1, 3, 4)
    out = lib.ggspec_add(ctx, new(ctx, F32, x), new(ctx, F32, y))
    compute(ctx, cpu, out)
    np.testing.assert_array_equal(read(out)[0], x + np.tile(y, (2, 1, 2)))

    y1 = randn(1, 1, 8)
    out = lib.ggspec_mul(ctx, new(ctx, F32, x), new(ctx, F32, y1))
    compute(ctx, cpu, out)
    np.testing.assert_array_equal(read(out)[0], x * y1)

    h1, h2 = randn(3, 8).astype(np.float16), randn(3, 8).astype(np.float16)
    out = lib.ggspec_add(ctx, new(ctx, F16, h1), new(ctx, F16, h2))
    compute(ctx, cpu, out)
    np.testing.assert_array_equal(read(out)[0, 0], (h1.astype(np.float32) + h2.astype(np.float32)).astype(np.float16))


def test_scale_cpy_cont_dup(ctx: Any, cpu: Any) -> None:
    x = randn(3, 4, 5)
    out = lib.ggspec_scale(ctx, new(ctx, F32, x), 0.25)
    compute(ctx, cpu, out)
    np.testing.assert_array_equal(read(out)[0], x * np.float32(0.25))

    # permuted -> contiguous, F32 -> F16 copy, dup
    src = new(ctx, F32, x)
    cont = lib.ggspec_cont(ctx, lib.ggspec_permute(ctx, src, 1, 2, 0, 3))
    compute(ctx, cpu, cont)
    # axis i of the source becomes axis axis_i: result[r2][r1][r0] = x[r1][r0][r2]
    assert list(cont.ne) == [3, 5, 4, 1]
    np.testing.assert_array_equal(read(cont)[0], np.transpose(x, (1, 2, 0)))

    dst = empty(ctx, F16, 60)
    cp = lib.ggspec_cpy(ctx, src, dst)
    compute(ctx, cpu, cp)
    np.testing.assert_array_equal(read(dst).ravel(), x.ravel().astype(np.float16))
    assert cp.data == dst.data

    back = lib.ggspec_cpy(ctx, dst, empty(ctx, F32, 5, 12))
    compute(ctx, cpu, back)
    np.testing.assert_array_equal(read(back).ravel(), x.ravel().astype(np.float16).astype(np.float32))

    # dup of a transposed view: the view's elements, in its own row-major order, made contiguous
    d = lib.ggspec_dup(ctx, lib.ggspec_transpose(ctx, new(ctx, F32, x[0])))
    compute(ctx, cpu, d)
    assert lib.ggspec_is_contiguous(d)
    np.testing.assert_array_equal(read(d)[0, 0], x[0].T)


def test_reshape_view_share_memory(ctx: Any, cpu: Any) -> None:
    x = randn(4, 6)
    a = new(ctx, F32, x)
    r = lib.ggspec_reshape_3d(ctx, a, 3, 2, 4)
    s = lib.ggspec_scale(ctx, r, 2.0)
    compute(ctx, cpu, s)
    assert r.data == a.data
    np.testing.assert_array_equal(read(s)[0].reshape(4, 6), x * 2)


def test_mul_mat_float(ctx: Any, cpu: Any) -> None:
    w, y = randn(2, 7, 64), randn(4, 3, 64)  # a broadcast over b's dimension 2
    out = lib.ggspec_mul_mat(ctx, new(ctx, F32, w), new(ctx, F32, y))
    compute(ctx, cpu, out)
    expect = np.stack([y[i] @ w[i // 2].T for i in range(4)])
    np.testing.assert_allclose(read(out)[0], expect, rtol=1e-5, atol=1e-4)

    w16 = w[0].astype(np.float16)
    out = lib.ggspec_mul_mat(ctx, new(ctx, F16, w16), new(ctx, F32, y[0]))
    compute(ctx, cpu, out)
    expect16 = y[0].astype(np.float16).astype(np.float64) @ w16.astype(np.float64).T
    np.testing.assert_allclose(read(out)[0, 0], expect16, rtol=1e-5, atol=1e-4)


def quantized(ctx: Any, type_: int, x: np.ndarray) -> Any:
    dst = empty(ctx, type_, *x.shape[::-1])
    hist = ffi.new("int64_t[]", 16)
    blocks = ffi.new("uint8_t[]", lib.ggspec_nbytes(dst))
    lib.ggspec_quantize_chunk(type_, ffi.from_buffer("float[]", np.ascontiguousarray(x)), blocks, 0,
                              int(np.prod(x.shape[:-1])), x.shape[-1], hist, ffi.NULL)
    put(dst, bytes(blocks))
    return dst


def dequantized(type_: int, blocks: Any, n: int) -> np.ndarray:
    out = ffi.new("float[]", n)
    fn = lib.ggspec_dequantize_row_q4_0 if type_ == Q4_0 else lib.ggspec_dequantize_row_q8_0
    fn(blocks, out, n)
    return np.frombuffer(ffi.buffer(out), np.float32).copy()


@pytest.mark.parametrize("type_", [Q4_0, Q8_0])
def test_mul_mat_and_get_rows_quantized(ctx: Any, cpu: Any, type_: int) -> None:
    w, y = randn(6, 64), randn(3, 64)
    qw = quantized(ctx, type_, w)
    wd = dequantized(type_, qw.data, w.size).reshape(w.shape)

    out = lib.ggspec_mul_mat(ctx, qw, new(ctx, F32, y))
    compute(ctx, cpu, out)
    # the activations are quantized to Q8_0 on the way: about 1% error per product
    expect = y @ wd.T
    np.testing.assert_allclose(read(out)[0, 0], expect, rtol=0.03, atol=0.03 * np.abs(expect).max())

    idx = np.array([5, 0, 5, 2], dtype=np.int32)
    rows = lib.ggspec_get_rows(ctx, qw, new(ctx, I32, idx))
    compute(ctx, cpu, rows)
    np.testing.assert_array_equal(read(rows)[0, 0], wd[idx])


def test_get_rows_float(ctx: Any, cpu: Any) -> None:
    w = randn(3, 5, 8)
    idx = np.array([[4, 0], [1, 1], [2, 3]], dtype=np.int32)  # one index row per matrix of w
    out = lib.ggspec_get_rows(ctx, new(ctx, F32, w), new(ctx, I32, idx))
    compute(ctx, cpu, out)
    np.testing.assert_array_equal(read(out)[0], np.stack([w[j][idx[j]] for j in range(3)]))

    w16 = w[0].astype(np.float16)
    out = lib.ggspec_get_rows(ctx, new(ctx, F16, w16), new(ctx, I32, idx[0]))
    compute(ctx, cpu, out)
    np.testing.assert_array_equal(read(out)[0, 0], w16[idx[0]].astype(np.float32))


def test_norm(ctx: Any, cpu: Any) -> None:
    x = randn(5, 48) + 3.0
    out = lib.ggspec_norm(ctx, new(ctx, F32, x), 1e-5)
    compute(ctx, cpu, out)
    xd = x.astype(np.float64)
    expect = (xd - xd.mean(1, keepdims=True)) / np.sqrt(xd.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(read(out)[0, 0], expect, rtol=1e-5, atol=1e-5)


def test_soft_max(ctx: Any, cpu: Any) -> None:
    x = randn(2, 4, 16)
    mask = randn(4, 16)
    mask[1, :3] = -np.inf
    out = lib.ggspec_soft_max_ext(ctx, new(ctx, F32, x), new(ctx, F32, mask), 0.5)
    compute(ctx, cpu, out)
    z = x.astype(np.float64) * 0.5 + mask
    e = np.exp(z - z.max(-1, keepdims=True))
    got = read(out)[0]
    # exp goes through an fp16 table: about 1e-3 relative
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=2e-3, atol=1e-4)
    assert np.all(got[:, 1, :3] == 0.0)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-5)

    plain = lib.ggspec_soft_max(ctx, new(ctx, F32, x[0]))
    compute(ctx, cpu, plain)
    e0 = np.exp(x[0] - x[0].max(-1, keepdims=True))
    np.testing.assert_allclose(read(plain)[0, 0], e0 / e0.sum(-1, keepdims=True), rtol=2e-3, atol=1e-4)


def test_gelu_silu_tables(ctx: Any, cpu: Any) -> None:
    x = randn(4, 64, scale=3.0)
    xh = x.astype(np.float16).astype(np.float64)  # the argument is rounded to fp16 first
    for fn, ref in ((lib.ggspec_gelu, np_gelu(xh)), (lib.ggspec_silu, xh / (1.0 + np.exp(-xh)))):
        out = fn(ctx, new(ctx, F32, x))
        compute(ctx, cpu, out)
        got = read(out)[0, 0]
        # the result is the fp16 nearest the exact value (ties aside)
        np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-4)
        assert np.array_equal(got.astype(np.float16).astype(np.float32), got)

    # every unary op, F32 and F16
    f: dict[int, Callable[[np.ndarray], np.ndarray]] = {
        0: np.abs, 1: np.sign, 2: np.negative, 3: lambda v: (v > 0).astype(np.float32),
        4: np.tanh, 5: lambda v: np.where(v > 0, v, np.expm1(v)), 6: lambda v: np.maximum(v, 0),
    }
    for op, ref_fn in f.items():
        for type_ in (F32, F16):
            xt = x.astype(NP_TYPE[type_])
            out = lib.ggspec_unary(ctx, new(ctx, type_, xt), op)
            compute(ctx, cpu, out)
            expect = ref_fn(xt.astype(np.float32)).astype(NP_TYPE[type_]).astype(np.float32)
            np.testing.assert_allclose(read(out)[0, 0].astype(np.float32), expect, rtol=2e-3, atol=1e-6)


def build_mixed(ctx: Any) -> tuple[Any, list[Any]]:
    w = quantized(ctx, Q8_0, randn(40, 64))
    x = new(ctx, F32, randn(9, 64))
    h = lib.ggspec_mul_mat(ctx, w, x)                         # (40, 9)
    h = lib.ggspec_gelu(ctx, lib.ggspec_add(ctx, h, new(ctx, F32, randn(1, 40))))
    h = lib.ggspec_norm(ctx, h, 1e-5)
    h = lib.ggspec_soft_max(ctx, lib.ggspec_scale(ctx, h, 0.7))
    h16 = lib.ggspec_cpy(ctx, h, empty(ctx, F16, 40, 9))
    t = lib.ggspec_cont(ctx, lib.ggspec_transpose(ctx, h))
    return t, [h, h16, t]


def test_threads_give_identical_bytes(ctx: Any, cpu: Any) -> None:
    out, watch = build_mixed(ctx)
    g = lib.ggspec_new_graph(ctx)
    for t in watch:
        lib.ggspec_build_forward_expand(g, t)
    results = []
    for n in (1, 2, 4, 7):
        lib.ggspec_backend_cpu_set_n_threads(cpu, n)
        for t in watch:
            ffi.memmove(t.data, b"\xab" * lib.ggspec_nbytes(t), lib.ggspec_nbytes(t))
        assert lib.ggspec_backend_graph_compute(cpu, g)
        results.append([raw(t) for t in watch])
    assert all(r == results[0] for r in results[1:])


def test_plan_and_work_size(ctx: Any, cpu: Any) -> None:
    lib.ggspec_backend_cpu_set_n_threads(cpu, 2)
    assert lib.ggspec_backend_cpu_work_size(cpu) == 0

    small = lib.ggspec_mul_mat(ctx, quantized(ctx, Q4_0, randn(4, 32)), new(ctx, F32, randn(2, 32)))
    g_small = compute(ctx, cpu, small)
    ws1 = lib.ggspec_backend_cpu_work_size(cpu)
    # rc.8's formula: the Q8_0 copy of src1, plus a cache line per extra thread
    assert ws1 == 2 * 34 + 64 * 1

    big = lib.ggspec_mul_mat(ctx, quantized(ctx, Q4_0, randn(4, 256)), new(ctx, F32, randn(8, 256)))
    compute(ctx, cpu, big)
    ws2 = lib.ggspec_backend_cpu_work_size(cpu)
    assert ws2 == 8 * 8 * 34 + 64
    assert lib.ggspec_backend_graph_compute(cpu, g_small)
    assert lib.ggspec_backend_cpu_work_size(cpu) == ws2  # reused, never shrinks

    # a plan computes the same bytes, with its own work buffer
    expect = raw(big)
    ffi.memmove(big.data, b"\0" * lib.ggspec_nbytes(big), lib.ggspec_nbytes(big))
    g = lib.ggspec_new_graph(ctx)
    lib.ggspec_build_forward_expand(g, big)
    plan = lib.ggspec_backend_graph_plan_create(cpu, g)
    lib.ggspec_backend_graph_plan_compute(cpu, plan)
    lib.ggspec_backend_graph_plan_free(cpu, plan)
    assert raw(big) == expect

    cplan = lib.ggspec_graph_plan(g, 3)
    assert cplan.n_threads == 3 and cplan.work_size == 8 * 8 * 34 + 2 * 64
    assert lib.ggspec_graph_plan(g, 0).n_threads == lib.GGSPEC_DEFAULT_N_THREADS


# --- quantization -------------------------------------------------------------------------


def test_fp16_conversion_matches_numpy() -> None:
    bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[~np.isnan(x)]
    out = ffi.new("uint16_t[]", len(x))
    lib.ggspec_fp32_to_fp16_row(ffi.from_buffer("float[]", x), out, len(x))
    with np.errstate(over="ignore"):
        expect = x.astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(np.frombuffer(ffi.buffer(out), np.uint16), expect)

    h = np.arange(65536, dtype=np.uint16)
    back = ffi.new("float[]", 65536)
    lib.ggspec_fp16_to_fp32_row(ffi.from_buffer("uint16_t[]", h), back, 65536)
    got = np.frombuffer(ffi.buffer(back), np.float32)
    ref = h.view(np.float16).astype(np.float32)
    finite = ~np.isnan(ref)
    np.testing.assert_array_equal(got[finite], ref[finite])
    assert np.all(np.isnan(got[~finite]))
    assert lib.ggspec_fp32_to_fp16(float("nan")) == 0x7E00


def test_quantize_round_trip_and_hist() -> None:
    x = randn(4 * 64, scale=3.0)
    x[:32] = 0.0  # an all-zero block
    for type_, size, bound in ((Q4_0, 18, 1 / 8 * 0.5 + 1 / 8), (Q8_0, 34, 1 / 127 * 0.5 + 1e-3)):
        dst = ffi.new("uint8_t[]", 8 * size)
        hist = ffi.new("int64_t[]", 16)
        n = lib.ggspec_quantize_chunk(type_, ffi.from_buffer("float[]", x), dst, 0, 4, 64, hist, ffi.NULL)
        assert n == 8 * size and sum(hist) == x.size
        y = dequantized(type_, dst, x.size)
        for b in range(8):
            blk = x[32 * b: 32 * (b + 1)]
            amax = float(np.abs(blk).max())
            assert np.all(np.abs(y[32 * b: 32 * (b + 1)] - blk) <= bound * amax * 1.01 + 1e-7)
        assert np.all(y[:32] == 0.0)

    # a chunk that starts at row 2 fills rows 2..3 only
    dst = ffi.new("uint8_t[]", 8 * 18)
    n = lib.ggspec_quantize_chunk(Q4_0, ffi.from_buffer("float[]", x), dst, 128, 2, 64, ffi.NULL, ffi.NULL)
    assert n == 4 * 18 and bytes(ffi.buffer(dst))[: 4 * 18] == b"\0" * (4 * 18)

    # the weighted (importance matrix) Q4_0 path gives a result at least as good on average
    im = np.ones(64, dtype=np.float32)
    dq = ffi.new("uint8_t[]", 8 * 18)
    lib.ggspec_quantize_chunk(Q4_0, ffi.from_buffer("float[]", x), dq, 0, 4, 64, ffi.NULL, ffi.from_buffer("float[]", im))
    yw = dequantized(Q4_0, dq, x.size)
    assert np.isfinite(yw).all() and np.abs(yw - x).max() < 1.0


def test_quantize_chunk_asserts() -> None:
    def misaligned() -> None:
        x = np.zeros(128, dtype=np.float32)
        dst = ffi.new("uint8_t[]", 256)
        lib.ggspec_quantize_chunk(Q4_0, ffi.from_buffer("float[]", x), dst, 16, 1, 64, ffi.NULL, ffi.NULL)

    assert_aborts(misaligned, "start % QK4_0 == 0")


# --- allocators ---------------------------------------------------------------------------


def tensors_of(ctx: Any) -> list[Any]:
    out = []
    t = lib.ggspec_get_first_tensor(ctx)
    while t != ffi.NULL:
        out.append(t)
        t = lib.ggspec_get_next_tensor(ctx, t)
    return out


def alloc_test_graph(c: Any) -> tuple[Any, dict[str, Any], list[Any]]:
    ins = {n: lib.ggspec_new_tensor_2d(c, F32, 32, 4) for n in ("x", "y")}
    ins["w"] = lib.ggspec_new_tensor_2d(c, F32, 32, 16)
    for n, t in ins.items():
        lib.ggspec_set_name(t, n.encode())
    h = lib.ggspec_add(c, ins["x"], ins["y"])
    h = lib.ggspec_scale(c, h, 0.5)                      # in place over h
    h = lib.ggspec_gelu(c, h)                            # in place again
    v = lib.ggspec_view_2d(c, h, 16, 4, h.nb[1], 0)      # a view in the middle
    m = lib.ggspec_mul_mat(c, ins["w"], h)               # (16, 4)
    s = lib.ggspec_soft_max(c, m)
    out = lib.ggspec_add(c, s, lib.ggspec_cont(c, v))
    return out, ins, [h, v, m, s, out]


def fill_inputs(ins: dict[str, Any]) -> dict[str, np.ndarray]:
    vals = {}
    for n, t in ins.items():
        vals[n] = randn(int(t.ne[1]), int(t.ne[0]))
        lib.ggspec_backend_tensor_set(t, ffi.from_buffer(vals[n]), 0, vals[n].nbytes)
    return vals


def test_allocator_measure_then_allocate(noalloc: Any, ctx: Any, cpu: Any) -> None:
    out, ins, _ = alloc_test_graph(noalloc)
    g = lib.ggspec_new_graph(noalloc)
    lib.ggspec_build_forward_expand(g, out)

    measure = lib.ggspec_allocr_new_measure(64)
    assert lib.ggspec_allocr_is_measure(measure)
    size = lib.ggspec_allocr_alloc_graph(measure, g)
    lib.ggspec_allocr_free(measure)
    assert size > 0

    # measuring set addresses: start over with a fresh copy of the graph
    c2p = ffi.new("struct ggspec_init_params *", {"mem_size": 16 << 20, "no_alloc": True})
    c2 = lib.ggspec_init(c2p[0])
    out, ins, live = alloc_test_graph(c2)
    g = lib.ggspec_new_graph(c2)
    lib.ggspec_build_forward_expand(g, out)

    buf = lib.ggspec_backend_alloc_buffer(cpu, size)
    alloc = lib.ggspec_allocr_new_from_buffer(buf)
    assert lib.ggspec_allocr_get_buffer(alloc) == buf
    used = lib.ggspec_allocr_alloc_graph(alloc, g)
    assert used <= size + 63  # the first block starts at the first aligned address past the base

    base = int(ffi.cast("uintptr_t", lib.ggspec_backend_buffer_get_base(buf)))
    end = base + lib.ggspec_backend_buffer_get_size(buf)
    nodes = [g.nodes[i] for i in range(g.n_nodes)]
    for t in [g.leafs[i] for i in range(g.n_leafs)] + nodes:
        a = int(ffi.cast("uintptr_t", t.data))
        assert t.buffer == buf and base <= a and a + lib.ggspec_nbytes(t) <= end
        if t.view_src == ffi.NULL:
            assert a % 64 == 0
    # the scale and gelu results were placed over their parents
    assert live[0].view_src != ffi.NULL
    assert_no_live_overlap(nodes)

    # computing in the allocated buffer gives the values of a plain computation
    vals = fill_inputs(ins)
    assert lib.ggspec_backend_graph_compute(cpu, g)
    got = read(out)[0, 0]

    ref_out, ref_ins, _ = alloc_test_graph(ctx)
    for n, t in ref_ins.items():
        ffi.memmove(t.data, vals[n].tobytes(), vals[n].nbytes)
    compute(ctx, cpu, ref_out)
    np.testing.assert_array_equal(got, read(ref_out)[0, 0])

    lib.ggspec_allocr_free(alloc)
    lib.ggspec_backend_buffer_free(buf)
    lib.ggspec_free(c2)


VIEW_OPS = (lib.GGSPEC_OP_VIEW, lib.GGSPEC_OP_RESHAPE, lib.GGSPEC_OP_PERMUTE, lib.GGSPEC_OP_TRANSPOSE)


def assert_no_live_overlap(nodes: list[Any]) -> None:
    """No node's output overwrites bytes that a later node still reads, unless those bytes were
    produced at or after that node (which makes the write legitimate)."""
    index = {int(ffi.cast("uintptr_t", t)): i for i, t in enumerate(nodes)}

    def producer(t: Any) -> int:
        while t.op in VIEW_OPS:
            t = t.src[0]
        return index.get(int(ffi.cast("uintptr_t", t)), -1)

    def span(t: Any) -> tuple[int, int]:
        a = int(ffi.cast("uintptr_t", t.data))
        return a, a + lib.ggspec_nbytes(t)

    for k, out in enumerate(nodes):
        if out.op in VIEW_OPS or out.op == lib.GGSPEC_OP_NONE:
            continue  # writes nothing
        o0, o1 = span(out)
        for j in range(k + 1, len(nodes)):
            for s in range(10):
                src = nodes[j].src[s]
                if src == ffi.NULL:
                    continue
                s0, s1 = span(src)
                if s0 < o1 and o0 < s1:
                    assert producer(src) >= k, (f"node {k} ({ffi.string(out.name)}) overwrites "
                                                f"{ffi.string(src.name)}, still read by node {j}")


def test_tallocr_reuse_and_limits(noalloc: Any, cpu: Any) -> None:
    buf = lib.ggspec_backend_alloc_buffer(cpu, 1024)
    ta = lib.ggspec_tallocr_new_from_buffer(buf)
    ts = [lib.ggspec_new_tensor_1d(noalloc, F32, n) for n in (10, 20, 5)]
    for t in ts:
        lib.ggspec_tallocr_alloc(ta, t)
    offs = [int(ffi.cast("uintptr_t", t.data)) for t in ts]
    # addresses (not offsets) are aligned; sizes are rounded up to the alignment
    assert all(o % 64 == 0 for o in offs) and offs[1] == offs[0] + 64 and offs[2] == offs[1] + 128
    base = int(ffi.cast("uintptr_t", lib.ggspec_backend_buffer_get_base(buf)))
    assert lib.ggspec_tallocr_max_size(ta) == offs[2] - base + 64
    lib.ggspec_tallocr_free(ta)  # does not own the buffer
    assert lib.ggspec_backend_buffer_get_size(buf) >= 1024
    lib.ggspec_backend_buffer_free(buf)

    m = lib.ggspec_tallocr_new_measure(32)
    big = lib.ggspec_new_tensor_1d(noalloc, F32, 1000)
    lib.ggspec_tallocr_alloc(m, big)
    assert lib.ggspec_tallocr_is_measure(m) and lib.ggspec_tallocr_max_size(m) == 4000
    lib.ggspec_tallocr_free(m)

    def overflow() -> None:
        params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
        c = lib.ggspec_init(params[0])
        b = lib.ggspec_backend_alloc_buffer(lib.ggspec_backend_cpu_init(), 64)
        t = lib.ggspec_tallocr_new_from_buffer(b)
        lib.ggspec_tallocr_alloc(t, lib.ggspec_new_tensor_1d(c, F32, 1000))

    assert_aborts(overflow, "not enough space in the buffer")


def test_alloc_ctx_tensors(noalloc: Any, cpu: Any) -> None:
    a = lib.ggspec_new_tensor_2d(noalloc, F32, 5, 3)
    b = lib.ggspec_new_tensor_1d(noalloc, F16, 7)
    v = lib.ggspec_view_1d(noalloc, a, 4, 8)
    buf = lib.ggspec_backend_alloc_ctx_tensors(noalloc, cpu)
    assert buf != ffi.NULL
    for t in (a, b, v):
        assert t.buffer == buf and t.data != ffi.NULL
    assert int(ffi.cast("uintptr_t", v.data)) == int(ffi.cast("uintptr_t", a.data)) + 8
    assert lib.ggspec_backend_alloc_ctx_tensors(noalloc, cpu) == ffi.NULL  # nothing left
    lib.ggspec_backend_buffer_free(buf)


# --- virtual device, graph_copy, compare --------------------------------------------------


def device_graph(noalloc: Any, cpu: Any) -> tuple[Any, Any, Any]:
    """The mixed graph in a CPU buffer (graph_copy copies from backend buffers), computed."""
    out, _ = build_mixed(noalloc)
    buf = lib.ggspec_backend_alloc_ctx_tensors(noalloc, cpu)
    flush()
    g = compute(noalloc, cpu, out)
    return out, g, buf


def test_graph_copy_onto_vdev_and_back(noalloc: Any, cpu: Any) -> None:
    out, g, buf = device_graph(noalloc, cpu)
    expect = [raw(g.nodes[i]) for i in range(g.n_nodes)]
    dev = vdev("GDEV")
    copy = lib.ggspec_backend_graph_copy(dev, g)
    assert copy.buffer != ffi.NULL and copy.graph.n_nodes == g.n_nodes and copy.graph.n_leafs == 0
    for i in range(g.n_nodes):
        t, c = g.nodes[i], copy.graph.nodes[i]
        assert (c.type, list(c.ne), list(c.nb), c.op) == (t.type, list(t.ne), list(t.nb), t.op)
        assert ffi.string(c.name) == ffi.string(t.name)
        assert (c.view_src != ffi.NULL) == (t.view_src != ffi.NULL)
        assert not lib.ggspec_backend_buffer_is_host(c.buffer)
        n = lib.ggspec_nbytes(c)
        got = ffi.new("uint8_t[]", n)
        lib.ggspec_backend_tensor_get(c, got, 0, n)
        assert bytes(got) == expect[i]

    # clear the device results, compute there, read back: the same bytes as on the CPU
    for i in range(copy.graph.n_nodes):
        c = copy.graph.nodes[i]
        if c.view_src == ffi.NULL and c.op != lib.GGSPEC_OP_NONE:
            n = lib.ggspec_nbytes(c)
            lib.ggspec_backend_tensor_set(c, b"\x7f" * n, 0, n)
    before = lib.ggspec_vdev_graphs_run(dev)
    assert lib.ggspec_backend_graph_compute(dev, copy.graph)
    assert lib.ggspec_vdev_graphs_run(dev) == before + 1
    for i in range(g.n_nodes):
        c = copy.graph.nodes[i]
        n = lib.ggspec_nbytes(c)
        got = ffi.new("uint8_t[]", n)
        lib.ggspec_backend_tensor_get(c, got, 0, n)
        assert bytes(got) == expect[i], ffi.string(c.name)

    # and back onto the CPU
    back = lib.ggspec_backend_graph_copy(cpu, copy.graph)
    assert back.buffer != ffi.NULL and lib.ggspec_backend_buffer_is_host(back.buffer)
    assert raw(back.graph.nodes[g.n_nodes - 1]) == expect[-1]
    lib.ggspec_backend_graph_copy_free(back)
    lib.ggspec_backend_graph_copy_free(copy)
    lib.ggspec_backend_buffer_free(buf)


def test_lazy_vdev_computes_in_submission_order(noalloc: Any, cpu: Any) -> None:
    x = randn(4, 8)
    a = new(noalloc, F32, x)
    s = lib.ggspec_scale(noalloc, a, 3.0)
    buf = lib.ggspec_backend_alloc_ctx_tensors(noalloc, cpu)
    flush()
    g = compute(noalloc, cpu, s)
    dev = vdev("LAZY", lazy=True)
    copy = lib.ggspec_backend_graph_copy(dev, g)
    ca, cs = copy.graph.nodes[0].src[0], copy.graph.nodes[0]

    new_x = randn(4, 8)
    host = ffi.from_buffer(new_x)
    lib.ggspec_backend_tensor_set_async(dev, ca, host, 0, new_x.nbytes)
    lib.ggspec_backend_graph_compute(dev, copy.graph)
    out = ffi.new("float[]", 32)
    lib.ggspec_backend_tensor_get_async(dev, cs, out, 0, 128)
    assert lib.ggspec_vdev_pending(dev) == 3 and lib.ggspec_vdev_graphs_run(dev) == 0
    lib.ggspec_backend_synchronize(dev)
    assert lib.ggspec_vdev_pending(dev) == 0 and lib.ggspec_vdev_graphs_run(dev) == 1
    np.testing.assert_array_equal(np.frombuffer(ffi.buffer(out), np.float32).reshape(4, 8), new_x * np.float32(3.0))

    # a plan on the device: the same
    plan = lib.ggspec_backend_graph_plan_create(dev, copy.graph)
    lib.ggspec_backend_graph_plan_compute(dev, plan)
    lib.ggspec_backend_graph_plan_free(dev, plan)
    lib.ggspec_backend_synchronize(dev)
    assert lib.ggspec_vdev_graphs_run(dev) == 2
    lib.ggspec_backend_graph_copy_free(copy)
    lib.ggspec_backend_buffer_free(buf)


_CALLS: list[tuple[int, bytes, bytes]] = []
_STOP_AFTER: list[int] = [1 << 30]


@ffi.def_extern()  # type: ignore[untyped-decorator]
def ggspec_py_eval_callback(i: int, t1: Any, t2: Any, user_data: Any) -> bool:
    n = lib.ggspec_nbytes(t1)
    b2 = ffi.new("uint8_t[]", n)
    lib.ggspec_backend_tensor_get(t2, b2, 0, n)
    _CALLS.append((i, raw(t1), bytes(b2)))
    return len(_CALLS) < _STOP_AFTER[0]


def test_compare_graph_backend_cpu_vs_vdev(noalloc: Any, cpu: Any) -> None:
    out, g, buf = device_graph(noalloc, cpu)
    dev = vdev("CMP")
    _CALLS.clear()
    _STOP_AFTER[0] = 1 << 30
    assert lib.ggspec_backend_compare_graph_backend(cpu, dev, g, lib.ggspec_py_eval_callback, ffi.NULL)
    view_ops = {lib.GGSPEC_OP_VIEW, lib.GGSPEC_OP_RESHAPE, lib.GGSPEC_OP_PERMUTE, lib.GGSPEC_OP_TRANSPOSE}
    expect_idx = [i for i in range(g.n_nodes) if g.nodes[i].op not in view_ops]
    assert [c[0] for c in _CALLS] == expect_idx
    for _, b1, b2 in _CALLS:
        assert b1 == b2  # the device runs the same kernels

    _CALLS.clear()
    _STOP_AFTER[0] = 2
    assert lib.ggspec_backend_compare_graph_backend(cpu, dev, g, lib.ggspec_py_eval_callback, ffi.NULL)
    assert len(_CALLS) == 2  # a false return stops the comparison
    lib.ggspec_backend_buffer_free(buf)


def test_vdev_refuses_host_tensors(ctx: Any, cpu: Any) -> None:
    def body() -> None:
        a = new(ctx, F32, randn(4))
        g = lib.ggspec_new_graph(ctx)
        lib.ggspec_build_forward_expand(g, lib.ggspec_scale(ctx, a, 2.0))
        lib.ggspec_backend_graph_compute(vdev("HOSTILE"), g)

    status, err = run_forked(body)
    assert os.WIFSIGNALED(status) and "not in a buffer of this device" in err, err


# --- defect variant -----------------------------------------------------------------------


@pytest.mark.skipif(bool(os.environ.get("GGSPEC_NATIVE_MODULE")), reason="builds its own variant")
def test_permute_strides_defect_variant(tmp_path: Any) -> None:
    import importlib

    from ggspec.native.build import build_variant

    build_variant("ggspec_native_permute_defect", str(tmp_path), defines=["GGSPEC_DEFECT_PERMUTE_STRIDES"])
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("ggspec_native_permute_defect")
    finally:
        sys.path.remove(str(tmp_path))
    dffi, dlib = mod.ffi, mod.lib
    params = dffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
    c = dlib.ggspec_init(params[0])
    a = dlib.ggspec_new_tensor_3d(c, F32, 4, 3, 2)
    p = dlib.ggspec_permute(c, a, 2, 0, 1, 3)
    assert list(p.ne) == [3, 2, 4, 1] and list(p.nb) != [16, 48, 4, 96]
    dlib.ggspec_free(c)
