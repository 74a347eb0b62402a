"""The allocators in the reference model (spec/alloc.md): tensor allocators by hand, and the
graph allocator's invariants (ALLOC-16 to ALLOC-21) on random graphs, including the end-to-end
consequence: computing a graph placed with memory reuse gives the same outputs as computing it
with every tensor in memory of its own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pytest
from ggspec.reference import alloc as A
from ggspec.reference import ops
from ggspec.reference.backend import Backend, backend_get_default_buffer_type, backend_graph_compute
from ggspec.reference.buffer import BufferType, buffer_get_base, buft_alloc_buffer
from ggspec.reference.clauses import Profile, SpecViolation, UndefinedBehaviour
from ggspec.reference.cpu import cpu_buffer_type, cpu_init
from ggspec.reference.graph import CGraph, build_forward_expand, graph_view, new_graph
from ggspec.reference.tdata import tensor_get, tensor_set
from ggspec.reference.tensor import Context, Tensor
from ggspec.reference.types import GGMLType as T
from ggspec.reference.vdev import VDevParams, vdev_counters, vdev_init
from ggspec.reference.world import World
from hypothesis import given, note
from hypothesis import strategies as st

# --- tensor allocators by hand ---------------------------------------------------------------------


def test_tallocr_places_aligned_best_fit_and_reuses() -> None:
    w = World(Profile.FIXED)
    buf = buft_alloc_buffer(cpu_buffer_type(w), 1024)
    talloc = A.tallocr_new_from_buffer(buf)
    base = A.aligned_offset(buffer_get_base(buf), 0, 64) + buffer_get_base(buf)
    ctx = Context(w)
    a, b, c, d = (ctx.new_tensor(T.F32, [n]) for n in (10, 20, 5, 16))
    for t in (a, b, c):
        A.tallocr_alloc(talloc, t)
    # sizes round up to 64: 40 -> 64, 80 -> 128, 20 -> 64
    assert [t.data for t in (a, b, c)] == [base, base + 64, base + 192]
    assert A.tallocr_max_size(talloc) == 256 + (base - buffer_get_base(buf))
    A.tallocr_free_tensor(talloc, b)  # a 128-byte hole between a and c
    A.tallocr_alloc(talloc, d)  # 64 bytes: the hole is the best fit
    assert d.data == base + 64
    with pytest.raises(SpecViolation, match=r"\[ALLOC-5\]"):
        A.tallocr_alloc(talloc, d)
    with pytest.raises(SpecViolation, match=r"\[ALLOC-4\]"):
        A.tallocr_alloc(talloc, ctx.view(a, [2], [], 0))
    with pytest.raises(SpecViolation, match=r"\[ALLOC-7\]"):
        A.tallocr_alloc(talloc, ctx.new_tensor(T.F32, [1000]))


def test_measuring_allocators() -> None:
    w = World(Profile.FIXED)
    m = A.tallocr_new_measure(w, 32)
    ctx = Context(w)
    t = ctx.new_tensor(T.F32, [3])
    A.tallocr_alloc(m, t)
    assert (t.data, A.tallocr_max_size(m), A.tallocr_is_measure(m)) == (0x1000, 32, True)
    dev = vdev_init(w, VDevParams(alignment=128))
    mb = A.tallocr_new_measure_from_backend(dev)
    assert vdev_counters(mb.buffer) == (0, 1)  # reset once while not yet measuring (ALLOC-3)
    u = ctx.new_tensor(T.F32, [3])
    A.tallocr_alloc(mb, u)
    assert A.tallocr_max_size(mb) == 128 and vdev_counters(mb.buffer) == (0, 1)  # no init_tensor
    A.tallocr_free(mb)
    assert mb.buffer.freed  # the measure buffer was owned
    A.tallocr_free(None)


def test_legacy_allocr_and_free_blocks_limit() -> None:
    w = World(Profile.FIXED)
    region = w.host_alloc(1 << 16)
    allocr = A.allocr_new(w, region.base, 1 << 16, 16)
    ctx = Context(w)
    ts = [ctx.new_tensor(T.F32, [4]) for _ in range(600)]
    for t in ts:
        A.allocr_alloc(allocr, t)
    with pytest.raises(SpecViolation, match=r"\[ALLOC-8\]"):
        for t in ts[::2]:  # every other one: holes that never merge
            A.tallocr_free_tensor(allocr.talloc, t)
    A.allocr_free(allocr)
    A.allocr_free(None)


def test_alloc_ctx_tensors() -> None:
    w = World(Profile.FIXED)
    be = cpu_init(w)
    ctx = Context(w)
    a = ctx.new_tensor(T.F32, [10])
    v = ctx.view(a, [4], [], 8)
    b = ctx.new_tensor(T.F16, [3])
    buf = A.alloc_ctx_tensors(be, ctx) if False else A.alloc_ctx_tensors(ctx, be)
    assert buf is not None and buf.size == 64 + 64 + 64  # 40 -> 64, 6 -> 64, plus the CPU type's 64
    assert a.data is not None and v.data == a.data + 8 and v.buffer is buf and b.data == a.data + 64
    assert A.alloc_ctx_tensors(ctx, be) is None  # nothing left to allocate
    with pytest.raises(SpecViolation, match=r"\[ALLOC-24\]"):
        A.alloc_ctx_tensors(Context(w, no_alloc=False), be)


# --- random graphs --------------------------------------------------------------------------------

SHAPES = [(4, 2), (2, 4), (4, 1), (2, 2), (4, 4), (1, 4)]
UNARY = ("scale", "silu", "gelu", "soft_max", "norm", "dup", "transpose", "row", "reshape")
KINDS = ("leaf", "add", "mul", "mm", "cpy", *UNARY)


class Builder(Protocol):
    """What a recipe needs from an implementation (the reference here; the native build too)."""

    def leaf(self, ne: Sequence[int], name: str) -> Any: ...
    def op(self, name: str, *args: Any) -> Any: ...
    def row(self, x: Any, i: int) -> Any: ...
    def reshape(self, x: Any, ne: Sequence[int]) -> Any: ...
    def expand(self, g: Any, t: Any) -> None: ...
    def graph(self) -> Any: ...


class ReferenceBuilder:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def leaf(self, ne: Sequence[int], name: str) -> Tensor:
        return self.ctx.new_tensor(T.F32, list(ne), name)

    def op(self, name: str, *args: Any) -> Tensor:
        fn: Callable[..., Tensor] = getattr(ops, name)
        return fn(self.ctx, *args)

    def row(self, x: Tensor, i: int) -> Tensor:
        return ops.view(self.ctx, x, [x.ne[0], 1], [x.nb[1]], i * x.nb[1])

    def reshape(self, x: Tensor, ne: Sequence[int]) -> Tensor:
        return ops.reshape_nd(self.ctx, x, ne)

    def expand(self, g: CGraph, t: Tensor) -> None:
        build_forward_expand(g, t)

    def graph(self) -> CGraph:
        return new_graph(self.ctx)


def repeats(small: Any, big: Any) -> bool:
    return all(big.ne[i] % small.ne[i] == 0 for i in range(4))


@dataclass(frozen=True)
class Recipe:
    steps: tuple[tuple[str, int, int], ...]
    outputs: tuple[int, ...]

    def build(self, b: Builder) -> Any:
        """The graph, built with `b` (the same structure for every builder and context)."""
        pool: list[Any] = [b.leaf([4, 2], "in0"), b.leaf([2, 4], "in1")]
        for kind, i, j in self.steps:
            x = pool[i % len(pool)]
            ne0, ne1 = int(x.ne[0]), int(x.ne[1])
            if kind == "leaf":
                pool.append(b.leaf(SHAPES[i % len(SHAPES)], f"in{len(pool)}"))
            elif kind in ("add", "mul"):
                ys = [y for y in pool if repeats(y, x)]
                pool.append(b.op(kind, x, ys[j % len(ys)]))
            elif kind == "mm":
                ys = [y for y in pool if y.ne[0] == x.ne[0]]
                pool.append(b.op("mul_mat", x, ys[j % len(ys)]))
            elif kind == "cpy":
                pool.append(b.op("cpy", x, b.leaf([ne1, ne0], f"dst{len(pool)}")))
            elif kind == "scale":
                pool.append(b.op("scale", x, 0.5))
            elif kind in ("silu", "gelu", "soft_max", "dup"):
                pool.append(b.op(kind, x))
            elif kind == "norm":
                pool.append(b.op("norm", x, 1e-5))
            elif kind == "transpose":
                pool.append(b.op("cont", b.op("transpose", x)))
            elif kind == "row":
                pool.append(b.row(x, j % ne1))
            else:
                pool.append(b.reshape(x, [ne1, ne0]))
        g = b.graph()
        for k in self.outputs:  # counted from the end: later tensors depend on more
            b.expand(g, pool[-1 - k % len(pool)])
        b.expand(g, pool[-1])
        return g


@st.composite
def recipes(draw: st.DrawFn) -> Recipe:
    n = draw(st.integers(1, 24), label="steps")
    kinds = st.sampled_from(KINDS[1:] * 4 + KINDS[:1])  # operations more often than new inputs
    steps = tuple(
        (draw(kinds, label="kind"), draw(st.integers(0, 40), label="i"), draw(st.integers(0, 40), label="j"))
        for _ in range(n)
    )
    outputs = tuple(draw(st.lists(st.integers(0, 6), max_size=4), label="outputs"))
    return Recipe(steps, outputs)


def inputs_of(g: CGraph) -> list[Tensor]:
    """The sources of nodes that are not nodes, in first-use order (the graph's inputs)."""
    nodes = {id(n) for n in g.node_list()}
    seen: dict[int, Tensor] = {}
    for n in g.node_list():
        for s in n.src:
            if s is not None and id(s) not in nodes and s.view_src is None:
                seen.setdefault(id(s), s)
    return list(seen.values())


def outputs_of(g: CGraph) -> list[Tensor]:
    read = {id(s) for n in g.node_list() for s in n.src if s is not None}
    return [n for n in g.node_list() if id(n) not in read]


def values_for(t: Tensor, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, t.ne[0] * t.ne[1]).astype(np.float32).tobytes()


def place(w: World, recipe: Recipe, buft: BufferType, barriers: list[int]) -> tuple[CGraph, A.AllocationRecord, int]:
    """Measure, then place a fresh build in a buffer of exactly the measured size (ALLOC-21)."""
    g: CGraph = recipe.build(ReferenceBuilder(Context(w)))
    seq = [i for i in range(g.n_nodes)]
    for b in sorted(barriers, reverse=True):
        seq.insert(b % (len(seq) + 1), -1)
    size = A.measure_graph(buft, lambda: recipe.build(ReferenceBuilder(Context(w))), seq if barriers else ())
    buffer = buft_alloc_buffer(buft, size)
    talloc, galloc = A.tallocr_new_from_buffer(buffer), A.gallocr_new()
    if barriers:
        A.gallocr_set_parse_seq(galloc, seq)
    A.gallocr_alloc_graph(galloc, talloc, g)  # no ALLOC-7: the measured size suffices
    return g, A.describe_allocation(g, buffer, [], seq if barriers else ()), size


def reference_outputs(w: World, recipe: Recipe, seed: int) -> list[bytes]:
    """The outputs computed with every tensor in memory of its own (no reuse at all)."""
    ctx = Context(w, no_alloc=False)
    g: CGraph = recipe.build(ReferenceBuilder(ctx))
    for k, t in enumerate(inputs_of(g)):
        assert t.data is not None
        w.memory.write(t.data, values_for(t, seed + k))
    backend_graph_compute(cpu_init(w), g)
    out = []
    for t in outputs_of(g):
        assert t.data is not None
        out.append(w.memory.read(t.data, t.ne[0] * t.ne[1] * 4))
    return out


def compute_placed(w: World, backend: Backend, g: CGraph, seed: int) -> list[bytes]:
    for k, t in enumerate(inputs_of(g)):
        tensor_set(t, w.host_bytes(values_for(t, seed + k)), 0, t.ne[0] * t.ne[1] * 4)
    backend_graph_compute(backend, g)
    out = []
    for t in outputs_of(g):
        dst = w.host_alloc(t.ne[0] * t.ne[1] * 4)
        tensor_get(t, dst.base, 0, dst.size)
        out.append(bytes(dst.data))
    return out


BACKENDS: dict[str, Callable[[World], Backend]] = {
    "cpu": cpu_init,
    "vdev": lambda w: vdev_init(w, VDevParams(alignment=256, alloc_pad=96, lazy=True)),
}


@pytest.mark.parametrize("which", sorted(BACKENDS))
@given(recipe=recipes(), barriers=st.lists(st.integers(0, 20), max_size=3), seed=st.integers(0, 1000))
def test_placement_invariants_and_outputs(which: str, recipe: Recipe, barriers: list[int], seed: int) -> None:
    w = World(Profile.FIXED)
    backend = BACKENDS[which](w)
    g, rec, size = place(w, recipe, backend_get_default_buffer_type(backend), barriers)
    note(f"{recipe}\nmeasured {size} bytes, {g.n_nodes} nodes")
    assert A.check_allocation(rec) == []
    assert compute_placed(w, backend, g, seed) == reference_outputs(w, recipe, seed)


@given(recipe=recipes())
def test_rc8_keeps_the_invariants_it_promises(recipe: Recipe) -> None:
    w = World(Profile.RC8)
    _, rec, _ = place(w, recipe, cpu_buffer_type(w), [])
    assert A.check_allocation(rec, inputs_from_start=False) == []


def test_in_place_reuse_makes_a_node_a_view() -> None:
    w = World(Profile.FIXED)
    ctx = Context(w)
    x = ctx.new_tensor(T.F32, [4])
    y = ops.dup(ctx, x)
    z = ops.scale(ctx, y, 2.0)  # y has one reader and z its layout: z is computed in y's memory
    g = new_graph(ctx)
    build_forward_expand(g, z)
    A.gallocr_alloc_graph(A.gallocr_new(), A.tallocr_new_from_buft(cpu_buffer_type(w), 1024), g)
    assert z.view_src is y and z.data == y.data and z.op.name == "SCALE"


def test_inputs_left_to_the_graph_allocator_erratum() -> None:
    """ALLOC-20: a is read by dup first; b, placed lazily, lands where a was; rc.8 then computes
    dup(a) from b's bytes once the caller has set both inputs."""
    for profile in Profile:
        w = World(profile)
        be = cpu_init(w)
        ctx = Context(w)
        a, b = ctx.new_tensor(T.F32, [16], "a"), ctx.new_tensor(T.F32, [16], "b")
        out = ops.add(ctx, ops.dup(ctx, a), b)
        g = new_graph(ctx)
        build_forward_expand(g, out)
        buf = buft_alloc_buffer(cpu_buffer_type(w), 1024)
        A.gallocr_alloc_graph(A.gallocr_new(), A.tallocr_new_from_buffer(buf), g)
        problems = A.check_allocation(A.describe_allocation(g, buf, []))
        for t, v in ((a, 1.0), (b, 2.0)):
            tensor_set(t, w.host_bytes(np.full(16, v, np.float32).tobytes()), 0, 64)
        backend_graph_compute(be, g)
        got = np.frombuffer(w.memory.read(out.data or 0, 64), np.float32)
        if profile is Profile.RC8:
            assert a.data == b.data and [c for c, _ in problems] == ["ALLOC-20"]
            assert got.tolist() == [4.0] * 16  # dup read b's 2s, not a's 1s
        else:
            assert a.data != b.data and problems == []
            assert got.tolist() == [3.0] * 16


def test_graph_views_cannot_be_allocated() -> None:
    w = World(Profile.FIXED)
    ctx = Context(w)
    g = new_graph(ctx)
    build_forward_expand(g, ops.scale(ctx, ctx.new_tensor(T.F32, [4]), 2.0))
    with pytest.raises(UndefinedBehaviour, match="ALLOC-13"):
        A.gallocr_alloc_graph(A.gallocr_new(), A.tallocr_new_from_buft(cpu_buffer_type(w), 256), graph_view(g, 0, 1))
