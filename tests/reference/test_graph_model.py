"""Graphs in the reference model (CORE-6 to CORE-14): creation, the order build_forward_expand
appends in, capacities, graph views and clearing."""

from __future__ import annotations

import pytest
from ggspec.reference import ops
from ggspec.reference.clauses import SpecViolation, UndefinedBehaviour
from ggspec.reference.graph import (
    EvalOrder,
    build_forward_expand,
    graph_clear,
    graph_view,
    hash_size,
    new_graph,
    new_graph_custom,
    set_param,
)
from ggspec.reference.tensor import Context, Tensor
from ggspec.reference.types import GGMLType as T
from graph_helpers import host_ctx, tensor, world


def test_new_graph_sizes() -> None:
    ctx = Context(world())
    g = new_graph(ctx)
    assert (g.size, g.n_nodes, g.n_leafs, g.grads, g.visited.size) == (2048, 0, 0, None, 4099)
    assert [hash_size(n) for n in (0, 2, 4, 6, 12, 2048)] == [2, 2, 5, 11, 17, 2053]
    assert new_graph_custom(ctx, 3, True).grads == [None] * 3


def diamond(ctx: Context) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    x = tensor(ctx, T.F32, None, [4], "x")
    left = ops.scale(ctx, x, 2.0)
    right = ops.mul(ctx, x, x)
    top = ops.add(ctx, left, right)
    return x, left, right, top


def test_diamond_order_and_names() -> None:
    ctx = Context(world())
    x, left, right, top = diamond(ctx)
    g = new_graph(ctx)
    build_forward_expand(g, top)
    assert g.node_list() == [left, right, top]
    assert g.leaf_list() == [x]
    assert [t.name for t in g.node_list()] == ["node_0", "node_1", "node_2"]
    assert x.name == "x"  # named tensors keep their names
    build_forward_expand(g, top)
    assert g.n_nodes == 3  # nothing is appended twice


def test_source_order_decides_the_order() -> None:
    ctx = Context(world())
    x = tensor(ctx, T.F32, None, [4], "x")
    left, right = ops.scale(ctx, x, 2.0), ops.silu(ctx, x)
    g = new_graph(ctx)
    build_forward_expand(g, ops.add(ctx, right, left))
    assert g.node_list()[:2] == [right, left]
    g2 = new_graph(ctx)
    g2.order = EvalOrder.RIGHT_TO_LEFT
    top = ops.add(ctx, left, right)
    build_forward_expand(g2, top)
    assert g2.node_list() == [right, left, top]


def test_second_expansion_appends_only_new_tensors() -> None:
    ctx = Context(world())
    x = tensor(ctx, T.F32, None, [4], "x")
    a = ops.scale(ctx, x, 2.0)
    b = ops.add(ctx, a, tensor(ctx, T.F32, None, [4], "y"))
    g = new_graph(ctx)
    build_forward_expand(g, a)
    build_forward_expand(g, b)
    assert g.node_list() == [a, b] and [t.name for t in g.leaf_list()] == ["x", "y"]


def test_parameters_are_nodes_and_fill_the_grads_array() -> None:
    ctx = Context(world())
    p = tensor(ctx, T.F32, None, [4], "p")
    set_param(ctx, p)
    y = ops.scale(ctx, p, 3.0)
    g = new_graph_custom(ctx, 8, True)
    build_forward_expand(g, y)
    assert g.node_list() == [p, y] and g.n_leafs == 0
    assert g.grads is not None and g.grads[:2] == [p.grad, y.grad]


def test_capacities() -> None:
    ctx = Context(world())
    a, b, c = (tensor(ctx, T.F32, None, [2], n) for n in "abc")
    g = new_graph_custom(ctx, 2, False)
    with pytest.raises(SpecViolation, match=r"\[CORE-9\]"):
        build_forward_expand(g, ops.scale(ctx, ops.scale(ctx, ops.scale(ctx, a, 1.0), 1.0), 1.0))
    g = new_graph_custom(ctx, 2, False)
    with pytest.raises(SpecViolation, match=r"\[CORE-10\]"):
        build_forward_expand(g, ops.add(ctx, ops.add(ctx, a, b), c))
    g = new_graph_custom(ctx, 1, False)  # a visited set of 2 slots
    with pytest.raises(SpecViolation, match=r"\[CORE-11\]"):
        build_forward_expand(g, ops.add(ctx, a, b))
    g = new_graph_custom(ctx, 0, False)
    with pytest.raises(SpecViolation, match=r"\[CORE-10\]"):
        build_forward_expand(g, a)


def test_graph_view_shares_the_parent_array() -> None:
    ctx = Context(world())
    x, left, right, top = diamond(ctx)
    g = new_graph(ctx)
    build_forward_expand(g, top)
    v = graph_view(g, 1, 3)
    assert (v.size, v.n_nodes, v.n_leafs, v.visited.size) == (0, 2, 0, 0)
    assert v.node_list() == [right, top]
    other = ops.silu(ctx, x)
    g.nodes[1] = other  # a change of the parent's entries shows through
    assert v.node(0) is other
    with pytest.raises(UndefinedBehaviour, match="CORE-12"):
        build_forward_expand(v, other)
    with pytest.raises(UndefinedBehaviour, match="CORE-12"):
        graph_view(g, 2, 2049).node_list()


def test_graph_clear_keeps_the_arrays() -> None:
    ctx = Context(world())
    x, left, right, top = diamond(ctx)
    g = new_graph(ctx)
    build_forward_expand(g, top)
    graph_clear(g)
    assert (g.n_nodes, g.n_leafs, g.visited.keys) == (0, 0, [])
    assert g.nodes[:3] == [left, right, top]  # until overwritten
    build_forward_expand(g, right)
    assert g.nodes[:3] == [right, right, top]


def test_a_graph_dies_with_its_context() -> None:
    ctx = host_ctx(world())
    g = new_graph(ctx)
    build_forward_expand(g, ops.scale(ctx, tensor(ctx, T.F32, [1.0], [1]), 2.0))
    ctx.free()
    with pytest.raises(UndefinedBehaviour, match="CORE-6"):
        g.node_list()
