"""Lifetimes longer than one graph (issue 30, class 1): a scheduler and a graph allocator are
made once and used for many graphs, so what they keep between graphs must be emptied or grown.

- The scheduler's hash set has a fixed number of slots (SCHED-3) and holds the tensors of the
  graph it last split; a reset empties it (SCHED-26). A scheduler used for several graphs, one
  after another, sees more distinct tensors over its life than the set has slots, while each
  graph alone fits: a port whose reset leaves the earlier graph's keys in place fills the set
  and aborts (CORE-11) on a later graph that rc.8 computes.
- A graph allocator sizes its tables from the visited set of the graph it places and grows them
  when a graph with a larger set comes (ALLOC-13). One used for graphs of growing size, each with
  more tensors than the previous graph's set has slots, aborts (CORE-11) in a port that keeps the
  first graph's table.

Each check has an explicit example, so both are reached under every seed; their strategies are
small (2 and 4 cases), since every example builds thousands of tensors.
"""

from __future__ import annotations

from ggspec.reference.graph import hash_size
from ggspec.reference.sched import MAX_SPLIT_INPUTS, MAX_SPLITS
from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..target import Handle, Target

F32 = int(GGMLType.F32)
#: sched_new's graph_size: a hash set of hash_size(4 + 4096) = 8209 slots
GRAPH_SIZE = 4
#: 0x3f in every byte: each F32 leaf is 0.7467...
LEAF_BYTE = 0x3F


def _leafs(t: Target, buf: Handle, first: int, n: int) -> list[Handle]:
    """`n` one-element F32 leafs placed in the weights buffer `buf`, one alignment apart from
    slot `first` on."""
    align = t.buft_get_alignment(t.buffer_get_type(buf))
    pad = (-t.buffer_get_base(buf)) % align
    leafs = []
    for i in range(n):
        leaf = t.new_tensor(F32, (1,), f"l{i}")
        t.tensor_alloc(buf, leaf, pad + (first + i) * align)
        leafs.append(leaf)
    return leafs


def _adds(t: Target, leafs: list[Handle]) -> tuple[Handle, list[Handle]]:
    """A graph of independent `add(l, l')` nodes, one per pair of `leafs`; the graph and its nodes."""
    g = t.new_graph(2 * len(leafs))
    nodes = []
    for i in range(len(leafs) // 2):
        node = t.op("add", [leafs[2 * i], leafs[2 * i + 1]], [])
        t.set_name(node, f"n{i}")
        t.build_forward_expand(g, node)
        nodes.append(node)
    return g, nodes


@check("SCHED-26", "SCHED-3", "CORE-11", between=st.just(("compute", "reset")))
def sched_hash_set_over_many_graphs(t: Target, rec: Recorder, between: tuple[str, ...]) -> None:
    """One scheduler over the CPU (graph_size 4: 8209 slots) measures a graph of `add(l, l')`
    nodes, then computes three graphs of that shape in turn, each of new leafs and nodes: about
    1.1 times the set's slots in all and well within them each. Between two graphs, `compute`
    leaves the reset to graph_compute (it resets a scheduler that has split a graph), `reset`
    calls sched_reset first. Each graph's first and last node are read back. (One example: a
    strategy of one value, since each example builds some 9,000 tensors.)"""
    slots = hash_size(GRAPH_SIZE + MAX_SPLITS * MAX_SPLIT_INPUTS)
    rounds = len(between) + 1
    # 3 tensors a node (2 leafs and the node) in each computed graph, and the measured graph's nodes
    binary = -(-slots * 11 // 10) // (3 * rounds + 1)
    rec("nodes a graph, tensors in all", (binary, binary * (3 * rounds + 1)))
    cpu = t.cpu_init()
    t.cpu_set_n_threads(cpu, 1)  # rc.8 starts and joins its worker threads at every node: ~25 ms a node
    align = t.buft_get_alignment(t.backend_get_default_buffer_type(cpu))
    buf = t.backend_alloc_buffer(cpu, (2 * binary * rounds + 1) * align)
    t.buffer_set_usage(buf, 1)  # weights: pass 1 gives their readers the CPU (SCHED-7)
    t.buffer_clear(buf, LEAF_BYTE)
    leafs = [_leafs(t, buf, 2 * binary * r, 2 * binary) for r in range(rounds)]
    s = t.sched_new([cpu], None, GRAPH_SIZE)
    t.sched_init_measure(s, _adds(t, leafs[0])[0])  # a graph of its own: measuring places its nodes
    for r in range(rounds):
        g, nodes = _adds(t, leafs[r])
        if r > 0 and between[r - 1] == "reset":
            t.sched_reset(s)
        t.sched_graph_compute(s, g)
        rec(f"graph {r}: n_splits", t.sched_get_n_splits(s))
        rec(f"graph {r}: first and last node", [t.tensor_get(n, 0, 4) for n in (nodes[0], nodes[-1])])
    t.sched_free(s)


def _chain(t: Target, size: int) -> tuple[Handle, dict[str, Handle]]:
    """A graph of capacity `size` holding `size` leafs and the `size - 1` adds that sum them in a
    chain: about twice `size` tensors, as many as its visited set (hash_size(2 * size)) allows."""
    g = t.new_graph(size)
    tensors = {}
    acc = t.new_tensor(F32, (4,), "l0")
    tensors["l0"] = acc
    for i in range(1, size):
        leaf = t.new_tensor(F32, (4,), f"l{i}")
        acc = t.op("add", [acc, leaf], [])
        t.set_name(acc, f"n{i}")
        tensors[f"l{i}"], tensors[f"n{i}"] = leaf, acc
    t.build_forward_expand(g, acc)
    return g, tensors


@example(sizes=(4, 32, 128), legacy=False)
@check("ALLOC-13", "ALLOC-11", "ALLOC-22", sizes=st.sampled_from([(4, 32, 128), (8, 64)]), legacy=st.booleans())
def graph_allocator_reused_for_larger_graphs(t: Target, rec: Recorder, sizes: tuple[int, ...], legacy: bool) -> None:
    """One graph allocator (with `legacy`, the legacy allocr, which wraps one) places chains of
    growing size over a CPU buffer with room for the largest, its allocator reset between graphs:
    each graph has more tensors than the previous graph's visited set has slots, so the tables
    must grow. Each tensor's offset from the buffer's first aligned byte (or None) and view
    source are recorded, and what alloc_graph returns (less the base's padding, which depends
    on where the target's buffer lies)."""
    cpu = t.cpu_init()
    buft = t.backend_get_default_buffer_type(cpu)
    align = t.buft_get_alignment(buft)
    buf = t.backend_alloc_buffer(cpu, 2 * max(sizes) * align + align)
    start = t.buffer_get_base(buf) + (-t.buffer_get_base(buf)) % align  # where the allocator starts
    if legacy:
        alloc = t.allocr_new_from_buffer(buf)
    else:
        galloc, talloc = t.gallocr_new(), t.tallocr_new_from_buffer(buf)
    for k, size in enumerate(sizes):
        g, tensors = _chain(t, size)
        rec(f"graph {k}: nodes, leafs, visited slots", (len(t.graph_nodes(g)), len(t.graph_leafs(g)),
                                                         t.graph_info(g).hash_size))
        if legacy:
            t.allocr_reset(alloc)
            returned = t.allocr_alloc_graph(alloc, g)
        else:
            t.tallocr_reset(talloc)
            returned = t.gallocr_alloc_graph(galloc, talloc, g)
        rec(f"graph {k}: returned, past the base's padding", returned - (start - t.buffer_get_base(buf)))
        placed = {}
        for name, x in tensors.items():
            data = t.tensor_data(x)
            vs = t.tensor_view_src(x)
            placed[name] = (None if data is None else data - start, None if vs is None else t.tensor_name(vs))
        rec(f"graph {k}: placement", placed)
    if legacy:
        t.allocr_free(alloc)
    else:
        t.gallocr_free(galloc)
        t.tallocr_free(talloc)
