"""CORE-6 to CORE-14: contexts as graphs see them, the visited hash set, and graphs.

A graph (`struct ggml_cgraph`) has fixed-size node and leaf arrays: `nodes` is a list of `size`
slots of which the first `n_nodes` count, exactly like the C array, so that what a graph view
(CORE-12) or a CPU plan (CPU-19) shares with its graph is the same list object.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .checked import checked, nonnull
from .clauses import implements, require, undefined
from .tensor import Context, Tensor, cut_name, dup_tensor
from .types import Op

DEFAULT_GRAPH_SIZE = 2048

#: rc.8's table sizes: the first prime after each power of two (CORE-7)
_PRIMES = (
    2, 3, 5, 11, 17, 37, 67, 131, 257, 521, 1031, 2053, 4099, 8209, 16411, 32771, 65537, 131101,
    262147, 524309, 1048583, 2097169, 4194319, 8388617, 16777259, 33554467, 67108879, 134217757,
    268435459, 536870923, 1073741827, 2147483659,
)  # fmt: skip


@checked
def hash_size(min_size: int) -> int:
    """CORE-7: the smallest listed prime >= min_size (past the list, min_size made odd)."""
    for p in _PRIMES:
        if p >= min_size:
            return p
    return min_size | 1


class HashSet:
    """`struct ggml_hash_set`: a set of tensors with a fixed number of slots (CORE-11).

    Slots are numbered in insertion order (rc.8 numbers them by pointer value; only the
    numbering's consistency is observable: allocators index their tables by it). Like rc.8's,
    the set keys a tensor by its address (`Tensor.addr`), so a tensor made later at a freed
    tensor's address (a context rebuilt in the same memory) finds the freed one's slot (SCHED-32).
    `owner` is the clause a 0-slot set is used against: rc.8 divides by its size.
    """

    def __init__(self, size: int, owner: str) -> None:
        self.size = size
        self.owner = owner
        self._slot: dict[int, int] = {}
        self.keys: list[Tensor] = []

    def find(self, t: Tensor) -> int | None:
        """The slot of `t`, None if absent."""
        if self.size == 0:
            undefined(self.owner, "a hash set of 0 slots is used (rc.8 divides by zero)")
        return self._slot.get(t.addr)

    def contains(self, t: Tensor) -> bool:
        return self.find(t) is not None

    @implements("CORE-11")
    def insert(self, t: Tensor) -> bool:
        """CORE-11: add `t`; False when it was already there. A full set aborts."""
        if self.find(t) is not None:
            return False
        require(len(self.keys) < self.size, "CORE-11")
        self._slot[t.addr] = len(self.keys)
        self.keys.append(t)
        return True

    def find_or_insert(self, t: Tensor) -> int:
        """The slot of `t`, inserting it first if needed (CORE-11 when full)."""
        slot = self.find(t)
        if slot is None:
            self.insert(t)
            slot = self._slot[t.addr]
        return slot

    def clear(self) -> None:
        self._slot.clear()
        self.keys.clear()


class EvalOrder(enum.IntEnum):
    """`enum ggml_cgraph_eval_order`."""

    LEFT_TO_RIGHT = 0
    RIGHT_TO_LEFT = 1


@dataclass(eq=False)
class CGraph:
    """`struct ggml_cgraph`. For a graph view, `offset` is where its nodes start in `nodes`."""

    ctx: Context | None
    size: int
    nodes: list[Tensor | None]
    leafs: list[Tensor | None]
    grads: list[Tensor | None] | None
    visited: HashSet
    order: EvalOrder = EvalOrder.LEFT_TO_RIGHT
    n_nodes: int = 0
    n_leafs: int = 0
    offset: int = 0
    is_view: bool = field(default=False, repr=False)
    #: `perf_runs`: computations of this graph struct by the CPU code (CORE-78)
    perf_runs: int = 0

    def node(self, i: int) -> Tensor:
        """`nodes[i]`; reading outside the node array, or a freed graph, is undefined."""
        if self.ctx is not None and self.ctx.freed:
            undefined("CORE-6", "a graph is used after its context was freed")
        j = self.offset + i
        if i < 0 or j >= len(self.nodes):
            undefined("CORE-12", f"node {i} is outside the graph's node array")
        t = self.nodes[j]
        if t is None:
            undefined("CORE-12", f"node {i} was never set")
        return t

    def node_list(self) -> list[Tensor]:
        """`nodes[0 .. n_nodes)`, in order."""
        return [self.node(i) for i in range(self.n_nodes)]

    def leaf_list(self) -> list[Tensor]:
        out: list[Tensor] = []
        for i, t in enumerate(self.leafs[: self.n_leafs]):
            out.append(nonnull(t, "CORE-8", f"leaf {i}"))
        return out

    def __repr__(self) -> str:
        kind = "graph view" if self.is_view else "graph"
        return f"<{kind} size={self.size} n_nodes={self.n_nodes} n_leafs={self.n_leafs}>"


@implements("CORE-6")
@checked
def get_no_alloc(ctx: Context) -> bool:
    """CORE-6: whether the context was made with no_alloc."""
    return ctx.no_alloc


@implements("CORE-6")
@checked
def context_tensors(ctx: Context) -> list[Tensor]:
    """CORE-6: the context's tensors in creation order (`get_first_tensor` / `get_next_tensor`)."""
    if ctx.freed:
        undefined("CORE-6", "a context is used after ggml_free")
    return list(ctx.tensors)


#: the model's cap on a custom graph's size (rc.8's limit is the context's memory)
MAX_GRAPH_SIZE = 1 << 24


@implements("CORE-7")
@checked
def new_graph_custom(ctx: Context, size: int, grads: bool) -> CGraph:
    """CORE-7: an empty graph with room for `size` nodes and leafs."""
    if size < 0:
        raise ValueError(f"size is a size_t, got {size}")
    if size > MAX_GRAPH_SIZE:
        raise ValueError(f"a graph of {size} nodes: the model holds at most {MAX_GRAPH_SIZE} (its node lists are real lists)")
    return CGraph(
        ctx=ctx,
        size=size,
        nodes=[None] * size,
        leafs=[None] * size,
        grads=[None] * size if grads else None,
        visited=HashSet(hash_size(2 * size), "CORE-12"),
    )


@checked
def new_graph(ctx: Context) -> CGraph:
    """CORE-7: `new_graph_custom(ctx, 2048, false)`."""
    return new_graph_custom(ctx, DEFAULT_GRAPH_SIZE, False)


def _name_if_unnamed(t: Tensor, name: str) -> None:
    if not t.name:
        t.name = cut_name(name)


def _append(g: CGraph, t: Tensor) -> None:
    """Step 3 of CORE-8: a leaf (op NONE, no gradient) or a node."""
    if t.op == Op.NONE and t.grad is None:
        require(g.n_leafs < g.size, "CORE-10")
        _name_if_unnamed(t, f"leaf_{g.n_leafs}")
        g.leafs[g.n_leafs] = t
        g.n_leafs += 1
    else:
        require(g.n_nodes < g.size, "CORE-9")
        _name_if_unnamed(t, f"node_{g.n_nodes}")
        g.nodes[g.offset + g.n_nodes] = t
        if g.grads is not None:
            g.grads[g.n_nodes] = t.grad
        g.n_nodes += 1


@implements("CORE-8")
@checked
def build_forward_expand(g: CGraph, tensor: Tensor) -> None:
    """CORE-8: append `tensor` and everything it depends on that the graph has not visited,
    sources before the tensors that read them (depth first, src[0] first)."""
    if g.ctx is not None and g.ctx.freed:
        undefined("CORE-6", "a graph is used after its context was freed")
    if not g.visited.insert(tensor):
        return
    # an explicit stack instead of recursion: (tensor, index of the next source to visit)
    stack: list[tuple[Tensor, int]] = [(tensor, 0)]
    order = range(len(tensor.src)) if g.order == EvalOrder.LEFT_TO_RIGHT else range(len(tensor.src) - 1, -1, -1)
    while stack:
        t, k = stack.pop()
        pushed = False
        while k < len(order):
            s = t.src[order[k]]
            k += 1
            if s is not None and g.visited.insert(s):
                stack.append((t, k))
                stack.append((s, 0))
                pushed = True
                break
        if not pushed:
            _append(g, t)


@checked
def graph_get_tensor(g: CGraph, name: str) -> Tensor | None:
    """CORE-8: the first leaf named `name`, else the first node named `name`, else None."""
    for t in (*g.leaf_list(), *g.node_list()):
        if t.name == name:
            return t
    return None


@implements("CORE-12")
@checked
def graph_view(g: CGraph, i0: int, i1: int) -> CGraph:
    """CORE-12: nodes [i0, i1) of `g`, sharing `g`'s node array; no leafs, no visited set."""
    return CGraph(
        ctx=g.ctx,
        size=0,
        nodes=g.nodes,
        leafs=[],
        grads=g.grads[i0:] if g.grads is not None else None,
        visited=HashSet(0, "CORE-12"),
        order=g.order,
        n_nodes=i1 - i0,
        n_leafs=0,
        offset=g.offset + i0,
        is_view=True,
    )


@implements("CORE-81")
@checked
def graph_cpy(src: CGraph, dst: CGraph) -> None:
    """CORE-81: "overwrites dst's counts with src's ... copies src's first n_leafs leafs and
    first n_nodes nodes ... every tensor of src's visited set is added to dst's. dst's visited
    set is not emptied first"; the capacities first (CORE-82 to CORE-84), the gradient array
    after the lists (CORE-85)."""
    for g in (src, dst):
        if g.ctx is not None and g.ctx.freed:
            undefined("CORE-6", "a graph is used after its context was freed")
    require(dst.size >= src.n_leafs, "CORE-82")
    require(dst.size >= src.n_nodes, "CORE-83")
    require(dst.visited.size >= src.visited.size, "CORE-84")
    nodes = src.node_list()
    leafs = src.leaf_list()
    grads = None if src.grads is None else [src.grads[i] for i in range(src.n_nodes)]
    dst.n_leafs, dst.n_nodes, dst.order = src.n_leafs, src.n_nodes, src.order
    dst.leafs[: len(leafs)] = leafs
    dst.nodes[dst.offset : dst.offset + len(nodes)] = nodes
    if grads is not None:
        require(dst.grads is not None, "CORE-85")
        assert dst.grads is not None
        dst.grads[: len(grads)] = grads
    for t in list(src.visited.keys):
        dst.visited.insert(t)


@implements("CORE-86")
@checked
def graph_dup(ctx: Context, g: CGraph) -> CGraph:
    """CORE-86: a new graph of `g`'s size, with a gradient array when `g` has one, and `g`
    copied into it (CORE-81)."""
    copy = new_graph_custom(ctx, g.size, g.grads is not None)
    graph_cpy(g, copy)
    return copy


@implements("CORE-78")
@checked
def count_run(g: CGraph) -> None:
    """CORE-78: the CPU code computed `g` once more (new graphs and graph views start at 0)."""
    g.perf_runs += 1


@implements("CORE-13")
@checked
def graph_clear(g: CGraph) -> None:
    """CORE-13: no nodes, no leafs, nothing visited; the arrays keep their old entries."""
    g.n_nodes = 0
    g.n_leafs = 0
    g.visited.clear()


@implements("CORE-14")
@checked
def set_param(ctx: Context, t: Tensor) -> None:
    """CORE-14: make `t` a parameter: it gets a gradient tensor "<name> (grad)"."""
    t.is_param = True
    require(t.grad is None, "CORE-14")
    grad = dup_tensor(ctx, t)
    grad.name = cut_name(f"{t.name} (grad)")
    t.grad = grad
