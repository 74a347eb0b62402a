"""Computing graphs on backends in the reference model: the graph entries (BACK-10 to BACK-14),
the CPU backend's thread count, work buffer and plans (CPU-15 to CPU-19), the virtual device's
graph_compute, and graph_copy / compare_graph_backend (GCOPY)."""

from __future__ import annotations

import numpy as np
import pytest
from ggspec.reference import ops
from ggspec.reference.alloc import alloc_ctx_tensors
from ggspec.reference.backend import (
    Backend,
    backend_graph_compute,
    backend_graph_plan_compute,
    backend_graph_plan_create,
    backend_graph_plan_free,
    backend_synchronize,
)
from ggspec.reference.clauses import Profile, SpecViolation, UndefinedBehaviour
from ggspec.reference.cpu import cpu_init, cpu_n_threads, cpu_plan_work_size, cpu_set_n_threads, cpu_work_data, cpu_work_size
from ggspec.reference.graph import CGraph, build_forward_expand, graph_clear, graph_view, new_graph
from ggspec.reference.graph_copy import compare_graph_backend, graph_copy, graph_copy_free
from ggspec.reference.tdata import tensor_get, tensor_set
from ggspec.reference.tensor import Context, Tensor
from ggspec.reference.types import GGMLType as T
from ggspec.reference.types import Op, row_size
from ggspec.reference.vdev import VDevParams, vdev_init, vdev_pending
from ggspec.reference.world import World


def setf(t: Tensor, values: list[float] | np.ndarray) -> None:
    data = np.asarray(values, np.float32).tobytes()
    tensor_set(t, t.world.host_bytes(data), 0, len(data))


def getf(t: Tensor) -> list[float]:
    n = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3] * 4
    dst = t.world.host_alloc(n)
    tensor_get(t, dst.base, 0, n)
    return [float(v) for v in np.frombuffer(bytes(dst.data), np.float32)]


def built(backend: Backend) -> tuple[Context, CGraph, Tensor, Tensor]:
    """x (4 values) -> y = scale(x, 2) -> z = add(y, x); everything placed in the backend's buffer."""
    ctx = Context(backend.world)
    x = ctx.new_tensor(T.F32, [4], "x")
    z = ops.add(ctx, ops.scale(ctx, x, 2.0), x)
    g = new_graph(ctx)
    build_forward_expand(g, z)
    assert alloc_ctx_tensors(ctx, backend) is not None
    setf(x, [1, 2, 3, 4])
    return ctx, g, x, z


def test_cpu_graph_compute_returns_true_and_ignores_the_thread_count() -> None:
    w = World(Profile.FIXED)
    be = cpu_init(w)
    assert cpu_n_threads(be) == 4
    _, g, x, z = built(be)
    assert backend_graph_compute(be, g) is True
    assert getf(z) == [3, 6, 9, 12]
    for n in (1, 7, 0, -3):
        cpu_set_n_threads(be, n)
        setf(x, [1, 2, 3, 4])
        assert backend_graph_compute(be, g) and getf(z) == [3, 6, 9, 12]
    assert cpu_n_threads(be) == 4  # 0 or less means the default


def mul_mat_graph(be: Backend, k: int) -> CGraph:
    """An F16-weights MUL_MAT: b (F32, k x 2) is converted to F16 in the work buffer."""
    ctx = Context(be.world)
    a = ctx.new_tensor(T.F16, [k, 3])
    b = ctx.new_tensor(T.F32, [k, 2])
    g = new_graph(ctx)
    build_forward_expand(g, ops.mul_mat(ctx, a, b))
    alloc_ctx_tensors(ctx, be)
    return g


def test_the_work_buffer_grows_and_is_reused() -> None:
    w = World(Profile.FIXED)
    be = cpu_init(w)
    assert (cpu_work_size(be), cpu_work_data(be)) == (0, None)
    _, small, _, _ = built(be)
    backend_graph_compute(be, small)  # F32 only: no work memory
    assert cpu_work_size(be) == 0
    g8 = mul_mat_graph(be, 8)
    backend_graph_compute(be, g8)
    size, addr = cpu_work_size(be), cpu_work_data(be)
    assert size >= row_size(T.F16, 8 * 2) and addr is not None  # CPU-17's lower bound
    backend_graph_compute(be, g8)
    backend_graph_compute(be, small)
    assert (cpu_work_size(be), cpu_work_data(be)) == (size, addr)  # reused, not shrunk
    backend_graph_compute(be, mul_mat_graph(be, 64))
    assert cpu_work_size(be) > size
    bigger = cpu_work_size(be)
    cpu_set_n_threads(be, 1)  # needs less now: still reused
    backend_graph_compute(be, g8)
    assert cpu_work_size(be) == bigger


def test_plans_own_their_work_buffer_and_thread_count() -> None:
    w = World(Profile.FIXED)
    be = cpu_init(w)
    g = mul_mat_graph(be, 32)
    plan = backend_graph_plan_create(be, g)
    need = cpu_plan_work_size(plan)
    assert need >= row_size(T.F16, 64) and cpu_work_size(be) == 0
    cpu_set_n_threads(be, 1)
    backend_graph_plan_compute(be, plan)
    assert cpu_plan_work_size(plan) == need and cpu_work_size(be) == 0
    backend_graph_plan_free(be, plan)
    with pytest.raises(UndefinedBehaviour, match="BACK-10"):
        backend_graph_plan_compute(be, plan)


def test_a_plan_keeps_a_shallow_copy_of_the_graph_erratum() -> None:
    """CPU-19: clear and rebuild the graph after planning; rc8 computes the new nodes."""
    for profile in Profile:
        w = World(profile)
        be = cpu_init(w)
        ctx, g, x, z = built(be)
        y = z.src[0]
        assert y is not None
        plan = backend_graph_plan_create(be, g)
        graph_clear(g)
        other = ops.scale(ctx, x, 10.0)
        build_forward_expand(g, other)  # now nodes[0] is `other`
        alloc_ctx_tensors(ctx, be)
        backend_graph_plan_compute(be, plan)
        if profile is Profile.FIXED:
            assert getf(z) == [3, 6, 9, 12]  # the planned nodes
        else:
            assert getf(other) == [10, 20, 30, 40]  # nodes[0] as it is now
        ctx.free()
        if profile is Profile.RC8:
            with pytest.raises(UndefinedBehaviour, match="CPU-19"):
                backend_graph_plan_compute(be, plan)


def test_virtual_device_computes_in_order_on_its_storage() -> None:
    w = World(Profile.FIXED)
    dev = vdev_init(w, VDevParams(lazy=True, ops=frozenset({Op.NONE})))  # supports nothing useful
    _, g, x, z = built(dev)
    assert backend_graph_compute(dev, g) is True
    assert vdev_pending(dev) > 0  # queued, not done (BACK-12: no synchronize)
    backend_synchronize(dev)
    assert getf(z) == [3, 6, 9, 12]  # computed although supports_op says no (BACK-13)
    setf(x, [0, 0, 0, 1])
    plan = backend_graph_plan_create(dev, g)
    backend_graph_plan_compute(dev, plan)  # queued too (BACK-11)
    assert vdev_pending(dev) > 0
    assert getf(z) == [0, 0, 0, 3]  # a synchronous read runs the queue first
    backend_graph_plan_free(dev, plan)


def test_backends_compute_only_memory_they_reach() -> None:
    w = World(Profile.FIXED)
    cpu, dev = cpu_init(w), vdev_init(w)
    _, on_dev, _, _ = built(dev)
    with pytest.raises(UndefinedBehaviour, match="BACK-14"):
        backend_graph_compute(cpu, on_dev)
    _, on_cpu, _, _ = built(cpu)
    with pytest.raises(UndefinedBehaviour, match="BACK-14"):
        backend_graph_compute(dev, on_cpu)


# --- graph_copy and compare_graph_backend --------------------------------------------------------


def weights_graph(be: Backend) -> tuple[CGraph, Tensor]:
    """out = gelu(mul_mat(w, reshape(x))) + a transposed view, on `be`, computed once."""
    ctx = Context(be.world)
    wt = ctx.new_tensor(T.F32, [4, 3], "w")
    x = ctx.new_tensor(T.F32, [2, 2], "x")
    r = ops.reshape_nd(ctx, x, [4, 1])
    out = ops.gelu(ctx, ops.mul_mat(ctx, wt, r))
    g = new_graph(ctx)
    build_forward_expand(g, out)
    alloc_ctx_tensors(ctx, be)
    setf(wt, np.linspace(-1, 1, 12))
    setf(x, [0.5, -1, 2, 0.25])
    backend_graph_compute(be, g)
    return g, out


def test_graph_copy_rebuilds_names_layout_and_data() -> None:
    w = World(Profile.FIXED)
    cpu, dev = cpu_init(w), vdev_init(w)
    g, out = weights_graph(cpu)
    copy = graph_copy(dev, g)
    assert copy.buffer is not None and copy.graph is not None and copy.graph.n_leafs == 0
    assert [(t.name, t.op, t.ne, t.nb) for t in copy.graph.node_list()] == [(t.name, t.op, t.ne, t.nb) for t in g.node_list()]
    reshaped = copy.graph.node(0)
    assert reshaped.op == Op.RESHAPE and reshaped.view_src is not None and reshaped.buffer is reshaped.view_src.buffer
    assert getf(copy.graph.node(g.n_nodes - 1)) == getf(out)  # data copied (computed or not)
    graph_copy_free(copy)
    assert copy.buffer.freed


def test_graph_copy_failures() -> None:
    w = World(Profile.FIXED)
    cpu = cpu_init(w)
    ctx = Context(w)
    unplaced = new_graph(ctx)
    build_forward_expand(unplaced, ops.scale(ctx, ctx.new_tensor(T.F32, [4]), 2.0))
    with pytest.raises(SpecViolation, match=r"\[GCOPY-2\]"):
        graph_copy(cpu, unplaced)
    empty = graph_copy(cpu, new_graph(ctx))  # nothing to allocate: the empty result
    assert (empty.buffer, empty.ctx_allocated, empty.ctx_unallocated, empty.graph) == (None, None, None, None)
    graph_copy_free(empty)
    g, _ = weights_graph(cpu)
    with pytest.raises(UndefinedBehaviour, match="GCOPY-1"):
        graph_copy(cpu, graph_view(g, 0, 1))


def test_compare_graph_backend() -> None:
    w = World(Profile.FIXED)
    cpu, dev = cpu_init(w), vdev_init(w, VDevParams(lazy=True))
    g, _ = weights_graph(cpu)
    seen: list[tuple[int, list[float], list[float]]] = []

    def record(i: int, t1: Tensor, t2: Tensor) -> bool:
        seen.append((i, getf(t1), getf(t2)))
        return True

    assert compare_graph_backend(cpu, dev, g, record) is True
    assert [i for i, _, _ in seen] == [1, 2]  # node 0 is a RESHAPE: no callback
    assert all(a == b for _, a, b in seen)
    calls: list[int] = []

    def stop(i: int, t1: Tensor, t2: Tensor) -> bool:
        calls.append(i)
        return False

    assert compare_graph_backend(cpu, dev, g, stop) is True
    assert calls == [1]  # stopped by the first false, still true
    assert compare_graph_backend(cpu, dev, new_graph(Context(w)), record) is False  # no copy
