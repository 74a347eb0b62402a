"""Shared steps of the allocator, graph-copy and graph-compute checks (alloc.py, gcopy.py,
graphcompute.py): walking a target's graph by tensor name, describing a placement for ALLOC's
invariants, filling inputs.

Tensors are named by their GraphSpec (leafs and nodes), so everything recorded from here is
keyed by name: a reference run and a target run can be compared, and the invariant checker of
reference/alloc.py reads the target's own placement (`allocation_record`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

from ggspec.reference.alloc import AllocationRecord, TensorRecord, check_allocation

from ..inputs.graphspec import Built, GraphSpec, build, init_views, leaf_bytes, packed
from ..target import Handle, Target


def sources(t: Target, x: Handle) -> list[Handle]:
    """`x->src[0]`, `x->src[1]`, ... up to the first NULL."""
    out: list[Handle] = []
    for i in range(10):
        s = t.tensor_src(x, i)
        if s is None:
            break
        out.append(s)
    return out


def graph_tensors(t: Target, g: Handle) -> dict[str, Handle]:
    """Every tensor reachable from the graph's nodes through sources and view_src, by name
    (nodes first, in order)."""
    out: dict[str, Handle] = {}
    todo = list(t.graph_nodes(g))
    while todo:
        x = todo.pop(0)
        name = t.tensor_name(x)
        if name in out:
            continue
        out[name] = x
        todo.extend(sources(t, x))
        vs = t.tensor_view_src(x)
        if vs is not None:
            todo.append(vs)
    return out


def allocation_record(t: Target, g: Handle, buf: Handle, placed_before: Iterable[str] = (),
                      parse_seq: Sequence[int] = ()) -> AllocationRecord:
    """The target's placement of `g` in `buf` as reference/alloc.py's AllocationRecord, keyed
    by tensor name: what ALLOC-16 to ALLOC-20 are checked on."""
    before = set(placed_before)
    tensors: dict[Hashable, TensorRecord] = {}
    for name, x in graph_tensors(t, g).items():
        vs = t.tensor_view_src(x)
        tensors[name] = TensorRecord(
            name, t.tensor_data(x), t.buffer_get_alloc_size(buf, x), None if vs is None else t.tensor_name(vs),
            t.tensor_info(x).view_offs, tuple(t.tensor_name(s) for s in sources(t, x)), name in before,
        )
    return AllocationRecord(tuple(t.tensor_name(n) for n in t.graph_nodes(g)), tensors, t.buffer_get_base(buf),
                            t.buffer_get_size(buf), t.buffer_get_alignment(buf), tuple(parse_seq))


def problems(rec: AllocationRecord, clauses: Iterable[str], inputs_from_start: bool = False) -> list[str]:
    """What `check_allocation` finds wrong, restricted to `clauses`, as sorted readable lines."""
    wanted = set(clauses)
    return sorted(f"{c}: {what}" for c, what in check_allocation(rec, inputs_from_start) if c in wanted)


def build_graph(t: Target, spec: GraphSpec, weights_backend: Handle, fill: bool = True) -> Built:
    """Build `spec`; its weights (leafs with place 0) go into a buffer of `weights_backend`."""
    return build(t, spec, [weights_backend], fill)


def inputs(spec: GraphSpec) -> list[str]:
    """The names of the leafs the scenario (or an allocator) places: those with place -1."""
    return [leaf.name for leaf in spec.leafs if leaf.place < 0]


def set_inputs(t: Target, spec: GraphSpec, built: Built) -> None:
    """Write every input's bytes (after the inputs were placed)."""
    for leaf in spec.leafs:
        if leaf.place < 0:
            data = leaf_bytes(leaf)
            t.tensor_set(built.tensors[leaf.name], data, 0, len(data))


def room_for(t: Target, spec: GraphSpec, built: Built, buft: Handle) -> int:
    """A buffer size that holds every tensor of the graph at once, aligned, with slack."""
    align = t.buft_get_alignment(buft)
    total = align
    for x in built.tensors.values():
        total += (t.buft_get_alloc_size(buft, x) + align - 1) // align * align
    return total + 64


def parse_sequence(n_nodes: int, kind: str) -> list[int]:
    """A parse sequence over all nodes (ALLOC-10): none, a barrier after each node, one
    barrier at the end, or barriers after every second node."""
    if kind == "none" or n_nodes == 0:
        return []
    out: list[int] = []
    for i in range(n_nodes):
        out.append(i)
        if kind == "each" or (kind == "pairs" and i % 2 == 1):
            out.append(-1)
    if out[-1] != -1:
        out.append(-1)
    return out


def place_all(t: Target, g: Handle, backend: Handle) -> Handle | None:
    """Place every tensor of `g` without memory by hand, without an allocator (so neither memory
    reuse nor in-place views: computing twice from the same inputs gives the same results):
    non-views one after the other in one new buffer of `backend`, at aligned offsets; views with
    view_init into their root's buffer. Returns the new buffer (None when nothing needed one)."""
    tensors = graph_tensors(t, g)
    fresh = [x for x in tensors.values() if t.tensor_data(x) is None and t.tensor_view_src(x) is None]
    buf = None
    if fresh:
        buf, offsets = packed(t, backend, fresh, clear=0)
        for x, off in zip(fresh, offsets, strict=True):
            t.tensor_alloc(buf, x, off)
    init_views(t, tensors.values())
    return buf
