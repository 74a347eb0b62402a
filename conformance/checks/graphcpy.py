"""graph_cpy and graph_dup (CORE-81 to CORE-86): copying a graph into another, with more nodes
than leafs and the reverse, from a graph view, into a graph that was used before, with and
without gradients, and each capacity a copy can exceed (issue 30, class 5).

What a copy holds is read back through the graph's counts, lists and gradients, and its visited
set through what a later `build_forward_expand` of the copy appends (CORE-8): a tensor the copy
has visited is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..target import Handle, Target

F32 = int(GGMLType.F32)


@dataclass(frozen=True)
class Shape:
    """A graph of `pairs` adds over fresh leaf pairs, then a chain of `chain` scales after the last
    node (or after a leaf of its own when there are no pairs)."""

    pairs: int
    chain: int


#: more leafs than nodes, more nodes than leafs, both
SHAPES = [Shape(3, 0), Shape(0, 5), Shape(2, 3)]


def _build(t: Target, g: Handle, shape: Shape, tag: str, param: bool = False) -> Handle:
    """Expand `shape` into `g` (tensors named after `tag`); with `param`, its first leaf is a
    parameter (so nodes that read it have gradients, CORE-15). Returns the last tensor."""
    last: Handle | None = None
    first = True
    for i in range(shape.pairs):
        a = t.new_tensor(F32, (4,), f"{tag}l{2 * i}")
        b = t.new_tensor(F32, (4,), f"{tag}l{2 * i + 1}")
        if param and first:
            t.set_param(a)
        first = False
        last = t.op("add", [a, b], [])
        t.set_name(last, f"{tag}a{i}")
        t.build_forward_expand(g, last)
    if last is None:
        last = t.new_tensor(F32, (4,), f"{tag}l0")
        if param:
            t.set_param(last)
    for i in range(shape.chain):
        last = t.op("scale", [last], [0.5])
        t.set_name(last, f"{tag}s{i}")
        t.build_forward_expand(g, last)
    if shape.chain == 0 and shape.pairs == 0:
        t.build_forward_expand(g, last)
    return last


def _record(t: Target, rec: Recorder, label: str, g: Handle) -> None:
    info = t.graph_info(g)
    rec(f"{label}: size, nodes, leafs, grads, visited slots, order",
        (info.size, info.n_nodes, info.n_leafs, info.has_grads, info.hash_size, info.order))
    rec(f"{label}: nodes", [t.tensor_name(x) for x in t.graph_nodes(g)])
    rec(f"{label}: leafs", [t.tensor_name(x) for x in t.graph_leafs(g)])
    grads = t.graph_grads(g)
    rec(f"{label}: grads", None if grads is None else [None if x is None else t.tensor_name(x) for x in grads])


@example(shape=SHAPES[0], grads=False, order=0, source="graph", into="used")
@example(shape=SHAPES[1], grads=True, order=1, source="view", into="fresh")
@example(shape=SHAPES[2], grads=True, order=0, source="graph", into="dup")
@check("CORE-81", "CORE-86", "CORE-8", shape=st.sampled_from(SHAPES), grads=st.booleans(), order=st.sampled_from([0, 1]),
       source=st.sampled_from(["graph", "view"]), into=st.sampled_from(["fresh", "used", "dup"]))
def graph_cpy_and_dup(t: Target, rec: Recorder, shape: Shape, grads: bool, order: int, source: str, into: str) -> None:
    """A graph of `shape` (its first leaf a parameter with `grads`), evaluated in `order`, or a
    view of its nodes from the second on, is copied: into a fresh graph twice its size, into
    one of that size that held another graph before (whose tensors stay visited), or (the
    graph, not a view) by graph_dup. The copy's counts, lists and gradients; then what expanding the copy appends
    for a tensor of the source, for one of the graph it held before, and for a new node reading
    the source's last tensor."""
    size = 16
    g = t.new_graph_custom(size, grads)
    t.graph_set_order(g, order)
    last = _build(t, g, shape, "", param=grads)
    n = len(t.graph_nodes(g))
    # a view is copied into a real graph only: its duplicate has size 0 (CORE-83's check)
    src = t.graph_view(g, 1, n) if source == "view" and into != "dup" else g
    before: Handle | None = None
    if into == "dup":
        dst = t.graph_dup(src)
    else:
        dst = t.new_graph_custom(2 * size, grads)
        if into == "used":
            before = _build(t, dst, Shape(1, 1), "old")
        t.graph_cpy(src, dst)
    _record(t, rec, "copy", dst)
    t.build_forward_expand(dst, last)
    rec("after expanding the source's last tensor", len(t.graph_nodes(dst)))
    if before is not None:
        t.build_forward_expand(dst, before)
        rec("after expanding the earlier graph's last tensor", len(t.graph_nodes(dst)))
    new = t.op("scale", [last], [2.0])
    t.set_name(new, "new")
    t.build_forward_expand(dst, new)
    _record(t, rec, "expanded", dst)
    _record(t, rec, "source after", g)


@example(excess=1)
@check("CORE-82", excess=st.sampled_from([1, 3]))
def graph_cpy_without_room_for_the_leafs(t: Target, rec: Recorder, excess: int) -> None:
    """A graph of 6 leafs and 3 nodes copied into a graph of 6 - `excess` (at least its 3 nodes)."""
    g = t.new_graph_custom(8, False)
    _build(t, g, Shape(3, 0), "")
    t.graph_cpy(g, t.new_graph_custom(6 - excess, False))


@example(excess=1, how="cpy")
@example(excess=1, how="dup of a view")
@check("CORE-83", excess=st.sampled_from([1, 3]), how=st.sampled_from(["cpy", "into a view", "dup of a view"]))
def graph_cpy_without_room_for_the_nodes(t: Target, rec: Recorder, excess: int, how: str) -> None:
    """A chain of 1 leaf and 5 nodes copied into a graph of 5 - `excess` (at least its leaf); or
    a view of its nodes copied into a view (size 0), or duplicated (graph_dup of a view has
    size 0)."""
    g = t.new_graph_custom(8, False)
    _build(t, g, Shape(0, 5), "")
    if how == "cpy":
        t.graph_cpy(g, t.new_graph_custom(5 - excess, False))
    elif how == "into a view":
        t.graph_cpy(t.graph_view(g, 0, 2 + excess), t.graph_view(g, 0, 0))
    else:
        t.graph_dup(t.graph_view(g, 0, 2 + excess))


@example(size=8)
@check("CORE-84", size=st.sampled_from([4, 8, 16, 32]))
def graph_cpy_into_a_smaller_visited_set(t: Target, rec: Recorder, size: int) -> None:
    """A graph of size 64 holding 3 tensors copied into one of `size` (room for them, a visited
    set of fewer slots)."""
    g = t.new_graph_custom(64, False)
    _build(t, g, Shape(1, 0), "")
    rec("tensors", len(t.graph_nodes(g)) + len(t.graph_leafs(g)))
    t.graph_cpy(g, t.new_graph_custom(size, False))


@example(size=8, param=True)
@check("CORE-85", size=st.sampled_from([8, 16]), param=st.booleans())
def graph_cpy_of_gradients_into_a_graph_without(t: Target, rec: Recorder, size: int, param: bool) -> None:
    """A graph of size 8 with a gradient array (with `param`, real gradients in it) copied into
    a graph of `size` without one."""
    g = t.new_graph_custom(8, True)
    _build(t, g, Shape(2, 1), "", param=param)
    t.graph_cpy(g, t.new_graph_custom(size, False))
