"""GCOPY: graph_copy onto another backend, graph_copy_free, compare_graph_backend.

The original graph is placed by the graph allocator (so some element-wise nodes are views of
their sources, ALLOC-12: the copy must keep that), its inputs set, and — when drawn — computed.
Where a copy lands is the destination buffer type's business: the checks record the copies'
layouts, names, ops and sources, whether their bytes equal the original's, which callback calls
compare_graph_backend makes, and what it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..inputs.graphspec import Built, Leaf, Node
from ..inputs.strategies import GraphSpec, Placement, placements, small_graphs
from ..target import Handle, Target
from ._placement import build_graph, graph_tensors, inputs, room_for, set_inputs, sources
from ._setup import backend_for, small_cpu_graph

#: the checks keep their names `gcopy.*` (printed reproducers, --select) in this module
CHECK_AREA = "gcopy"


def _allocated(t: Target, placement: Placement, spec: GraphSpec, compute: bool) -> tuple[Handle, Built]:
    """`spec` built on the placement's backend and placed there by the graph allocator (inputs
    first, by tallocr_alloc, as whisper.cpp does: so no input shares bytes with another tensor
    whatever the profile, ALLOC-20), its inputs set; computed when `compute`."""
    backend = backend_for(t, placement)
    built = _placed(t, spec, backend)
    if compute:
        t.backend_graph_compute(backend, built.graph)
        t.backend_synchronize(backend)
    return backend, built


def _placed(t: Target, spec: GraphSpec, backend: Handle) -> Built:
    built = build_graph(t, spec, backend)
    buft = t.backend_get_default_buffer_type(backend)
    talloc = t.tallocr_new_from_buft(buft, room_for(t, spec, built, buft))
    for name in inputs(spec):
        t.tallocr_alloc(talloc, built.tensors[name])
    t.gallocr_alloc_graph(t.gallocr_new(), talloc, built.graph)
    set_inputs(t, spec, built)
    return built


def _name(t: Target, x: Handle | None) -> str | None:
    return None if x is None else t.tensor_name(x)


def _bytes(t: Target, x: Handle) -> bytes:
    return t.tensor_get(x, 0, t.nbytes(x))


#: add, reshape, cont on two inputs (graph_size 3: a graph filled to its capacity, the boundary of
#: the copy's node loop)
FULL_GRAPH = GraphSpec(
    (Leaf("x", int(GGMLType.F32), (4, 2), -1, seed=3), Leaf("w", int(GGMLType.F32), (4, 2), -1, seed=5)),
    (Node("s", "add", ("x", "w")), Node("r", "reshape", ("s",), (8,)), Node("c", "cont", ("r",))), ("c",), graph_size=3)


@example(src=Placement("cpu"), dst=Placement("cpu"), spec=FULL_GRAPH, compute=True)
@check("GCOPY-1", "GCOPY-5", src=placements, dst=placements, spec=small_graphs(), compute=st.booleans())
def copy_rebuilds_the_graph(t: Target, rec: Recorder, src: Placement, dst: Placement, spec: GraphSpec,
                            compute: bool) -> None:
    """The copy's nodes in the original's order, each with the original's type, ne, nb, op,
    op_params, name, sources and view_src (by name), non-views with memory in one buffer of the
    destination's default type; no leafs; freeing the copy leaves the original alone."""
    _, built = _allocated(t, src, spec, compute)
    g = built.graph
    backend = backend_for(t, dst)
    copy = t.backend_graph_copy(backend, g)
    rec("result", (copy.buffer is not None, copy.has_ctx_allocated, copy.has_ctx_unallocated, copy.graph is not None))
    assert copy.buffer is not None and copy.graph is not None
    rec("buffer type", t.buffer_get_type(copy.buffer) == t.backend_get_default_buffer_type(backend))
    rec("graph", (len(t.graph_nodes(copy.graph)), len(t.graph_leafs(copy.graph)),
                  t.graph_info(copy.graph).size == t.graph_info(g).size, t.graph_info(copy.graph).has_grads))
    originals = graph_tensors(t, g)
    copies = graph_tensors(t, copy.graph)
    rec("tensors", sorted(copies) == sorted(originals))
    rec("node order", [t.tensor_name(n) for n in t.graph_nodes(copy.graph)] == [t.tensor_name(n) for n in t.graph_nodes(g)])
    for name, c in sorted(copies.items()):
        info = replace(t.tensor_info(c), data_offset=None)
        rec(name, (info, [_name(t, s) for s in sources(t, c)], _name(t, t.tensor_view_src(c)),
                   t.tensor_op_params(c) == t.tensor_op_params(originals[name]),
                   t.tensor_view_src(c) is not None or t.tensor_buffer(c) == copy.buffer))
    before = {n: _bytes(t, x) for n, x in originals.items()}
    t.backend_graph_copy_free(copy)
    rec("original unchanged", {n: _bytes(t, x) for n, x in originals.items()} == before)


@check("GCOPY-3", src=placements, dst=placements, spec=small_graphs(), compute=st.booleans())
def copy_carries_the_data(t: Target, rec: Recorder, src: Placement, dst: Placement, spec: GraphSpec,
                          compute: bool) -> None:
    """Every non-view copy holds the original's bytes (computed or not); every view copy was
    view_init'ed on its view_src copy's buffer, at that copy's data + view_offs."""
    _, built = _allocated(t, src, spec, compute)
    copy = t.backend_graph_copy(backend_for(t, dst), built.graph)
    assert copy.graph is not None
    originals = graph_tensors(t, built.graph)
    leafs = {leaf.name for leaf in spec.leafs}
    for name, c in sorted(graph_tensors(t, copy.graph).items()):
        vs = t.tensor_view_src(c)
        if vs is None:  # a leaf's bytes are known unless an in-place node computed over it
            got = _bytes(t, c)
            rec(name, got if name in leafs and not compute else got == _bytes(t, originals[name]))
        else:
            vs_data = t.tensor_data(vs)
            rec(name, (t.tensor_buffer(c) == t.tensor_buffer(vs), vs_data is not None
                       and t.tensor_data(c) == vs_data + t.tensor_info(c).view_offs))
    t.backend_graph_copy_free(copy)


@check("GCOPY-2", src=placements, spec=small_graphs(), via_compare=st.booleans(), placed=st.booleans())
def copy_of_an_unallocated_graph(t: Target, rec: Recorder, src: Placement, spec: GraphSpec, via_compare: bool,
                                 placed: bool) -> None:
    """A graph whose nodes have no memory (its inputs placed or not) is not copied."""
    backend = backend_for(t, src)
    built = build_graph(t, spec, backend)
    if placed:
        for leaf in spec.leafs:
            if leaf.place < 0:
                x = built.tensors[leaf.name]
                buf = t.backend_alloc_buffer(backend, t.buft_get_alloc_size(t.backend_get_default_buffer_type(backend), x))
                t.tensor_alloc(buf, x, 0)
    if via_compare:
        t.backend_compare_graph_backend(backend, t.cpu_init(), built.graph, lambda i, a, b: True)
    else:
        t.backend_graph_copy(t.cpu_init(), built.graph)


@check("GCOPY-4", "GCOPY-5", "GCOPY-7", dst=placements, size=st.sampled_from([16, 64, 2048]))
def copy_of_an_empty_graph(t: Target, rec: Recorder, dst: Placement, size: int) -> None:
    """A graph without nodes: nothing to allocate, the empty result (freeing it does nothing);
    compare_graph_backend returns false without calling back."""
    backend = backend_for(t, dst)
    g = t.new_graph(size)
    copy = t.backend_graph_copy(backend, g)
    rec("result", (copy.buffer is not None, copy.has_ctx_allocated, copy.has_ctx_unallocated, copy.graph is not None))
    t.backend_graph_copy_free(copy)
    calls: list[int] = []

    def callback(i: int, t1: Handle, t2: Handle) -> bool:
        calls.append(i)
        return True

    rec("compare returns", t.backend_compare_graph_backend(t.cpu_init(), backend, g, callback))
    rec("callback calls", calls)


def _reference_results(t: Target, spec: GraphSpec, names: list[str]) -> dict[str, bytes]:
    """The named nodes' bytes after computing a second build of `spec` on a CPU backend."""
    cpu = t.cpu_init()
    again = _placed(t, spec, cpu)
    t.backend_graph_compute(cpu, again.graph)
    return {n: _bytes(t, again.tensors[n]) for n in names}


@example(dst=Placement("cpu"), stops=frozenset(), spec=replace(FULL_GRAPH, graph_size=2048))
@check("GCOPY-6", "GCOPY-7", dst=placements, spec=small_graphs(), stops=st.frozensets(st.integers(0, 12), max_size=2))
def compare_walks_node_by_node(t: Target, rec: Recorder, dst: Placement, spec: GraphSpec,
                               stops: frozenset[int]) -> None:
    """compare_graph_backend(CPU, dst, g, cb): cb(i, t1, t2) for each node index in order except
    view ops, with the node and its copy (equal bytes: both computed node by node from equal
    data), stopping at the first false; returns true; the original's nodes were computed."""
    cpu, built = _allocated(t, Placement("cpu"), spec, compute=False)
    backend = backend_for(t, dst)
    calls: list[tuple[int, str, str, bool]] = []

    def callback(i: int, t1: Handle, t2: Handle) -> bool:
        calls.append((i, t.tensor_name(t1), t.tensor_name(t2), _bytes(t, t1) == _bytes(t, t2)))
        return i not in stops

    rec("returns", t.backend_compare_graph_backend(cpu, backend, built.graph, callback))
    rec("callback calls", calls)
    if not stops.intersection(i for i, *_ in calls):
        outputs = list(spec.outputs)
        got = {n: _bytes(t, built.tensors[n]) for n in outputs}
        rec("original computed", got == _reference_results(t, spec, outputs))



@check("GCOPY-1", slot=st.just(1))
def copy_stops_at_a_null_source(t: Target, rec: Recorder, slot: int) -> None:
    """A node whose src[0] is NULL and src[`slot`] is set: graph_copy copies no source of it
    (the copy's slots are all NULL), though the graph itself has the source as a leaf
    (deterministic)."""
    from ggspec.reference.types import GGMLType, Op

    backend = t.cpu_init()
    buf = t.backend_alloc_buffer(backend, 1024)
    b = t.new_tensor(int(GGMLType.F32), (4,), "b")
    n = t.new_tensor(int(GGMLType.F32), (4,), "n")
    t.tensor_alloc(buf, b, 0)
    t.tensor_alloc(buf, n, 64)
    srcs: list[Handle | None] = [None] * slot + [b]
    t.set_op(n, int(Op.ADD), srcs)
    g = t.new_graph(16)
    t.build_forward_expand(g, n)
    rec("original", ([t.tensor_name(x) for x in t.graph_nodes(g)], [t.tensor_name(x) for x in t.graph_leafs(g)]))
    copy = t.backend_graph_copy(backend, g)
    assert copy.graph is not None
    (c,) = t.graph_nodes(copy.graph)
    rec("copy's sources", [_name(t, t.tensor_src(c, i)) for i in range(slot + 1)])
    t.backend_graph_copy_free(copy)


@check("GCOPY-1", "GCOPY-3", dst=placements)
def copy_keeps_every_source_slot(t: Target, rec: Recorder, dst: Placement) -> None:
    """A node that uses all 10 of its source slots (as MUL_MAT_ID-like ops do): an ADD whose
    src[2..9] are set too (the CPU computes src0 + src1 and reads no more). graph_copy copies
    every slot, each to the copy of its own leaf, with its bytes (deterministic)."""
    from ggspec.reference.types import MAX_SRC, GGMLType, Op

    cpu = t.cpu_init()
    leafs = [t.new_tensor(int(GGMLType.F32), (4, 2), f"x{j}") for j in range(MAX_SRC)]
    n = t.new_tensor(int(GGMLType.F32), (4, 2), "n")
    buf = t.backend_alloc_buffer(cpu, 64 * (MAX_SRC + 1))
    for j, x in enumerate([*leafs, n]):
        t.tensor_alloc(buf, x, 64 * j)
        t.tensor_set(x, bytes([j + 1] * 32), 0, 32)
    t.set_op(n, int(Op.ADD), leafs)
    g = t.new_graph(16)
    t.build_forward_expand(g, n)
    copy = t.backend_graph_copy(backend_for(t, dst), g)
    assert copy.graph is not None
    (c,) = t.graph_nodes(copy.graph)
    srcs = [t.tensor_src(c, j) for j in range(MAX_SRC)]
    rec("copy's sources", [_name(t, x) for x in srcs])
    rec("copy's sources live in the copy's buffer", [x is not None and t.tensor_buffer(x) == copy.buffer for x in srcs])
    rec("their bytes", [None if x is None else _bytes(t, x) for x in srcs])
    t.backend_graph_copy_free(copy)


@check("GCOPY-8", rounds=st.just(1))
def copies_and_comparisons_release_their_memory(t: Target, rec: Recorder, rounds: int) -> None:
    """A round: graph_copy of a small computed graph (x + w, then scaled) onto the CPU, checked
    not empty, graph_copy_free; then compare_graph_backend(CPU, CPU) of the same graph with a
    callback that goes on. Done once through the adapter; then, on a C target, many rounds
    through its C functions: the heap must not grow with the rounds, and no copy may fail
    (rc.8's contexts run out when copies leak them) (deterministic)."""
    from ._leaks import leaks

    cpu, g, b = small_cpu_graph(t)
    t.backend_graph_compute(cpu, g)
    for _ in range(rounds):
        copy = t.backend_graph_copy(cpu, g)
        rec("copied", copy.buffer is not None)
        t.backend_graph_copy_free(copy)
        rec("compared", t.backend_compare_graph_backend(cpu, cpu, g, lambda i, t1, t2: True))

    def make_round(c: Callable[[str], Any]) -> Callable[[], None]:
        ct: Any = t  # a C target: its cffi module and prefix
        go_on = ct.ffi.callback(f"bool(int, struct {ct.p}tensor *, struct {ct.p}tensor *, void *)", lambda *_: True)
        graph_copy, graph_copy_free = c("backend_graph_copy"), c("backend_graph_copy_free")
        compare = c("backend_compare_graph_backend")

        def one_round() -> None:
            copy = graph_copy(cpu, g)
            if copy.buffer == ct.ffi.NULL:
                raise AssertionError("graph_copy returned the empty result in a round (GCOPY-4)")
            graph_copy_free(copy)
            if not compare(cpu, cpu, g, go_on, ct.ffi.NULL):
                raise AssertionError("compare_graph_backend returned false in a round (GCOPY-7)")

        return one_round

    rec("the heap grows with the rounds", leaks(t, make_round))
