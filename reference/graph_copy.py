"""GCOPY: copying an allocated graph to another backend, and comparing two backends node by node."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from .alloc import alloc_ctx_tensors
from .backend import Backend, backend_graph_compute
from .buffer import Buffer, buffer_free
from .checked import checked, nonnull
from .clauses import implements, require
from .copy import tensor_copy
from .graph import CGraph, HashSet, graph_view, new_graph_custom
from .ops import VIEW_OPS
from .tdata import view_init
from .tensor import Context, Tensor, dup_tensor


@dataclass(eq=False)
class GraphCopy:
    """`struct ggml_backend_graph_copy`; all four are None for a failed copy (GCOPY-4)."""

    buffer: Buffer | None
    ctx_allocated: Context | None
    ctx_unallocated: Context | None
    graph: CGraph | None


EMPTY = GraphCopy(None, None, None, None)

#: `ggml_backend_eval_callback`: (node index, node of the first graph, node of the second) -> go on?
EvalCallback = Callable[[int, Tensor, Tensor], bool]


class _Copier:
    def __init__(self, hash_size: int, ctx_allocated: Context, ctx_unallocated: Context) -> None:
        self.seen = HashSet(hash_size, "GCOPY-1")
        self.copies: dict[int, Tensor] = {}
        self.initialised: set[int] = set()
        self.ctx_allocated = ctx_allocated
        self.ctx_unallocated = ctx_unallocated

    def dup(self, src: Tensor) -> Tensor:
        """GCOPY-1, GCOPY-2: the copy of `src` (made once), then of its view_src and sources."""
        require(src.data is not None, "GCOPY-2")
        if not self.seen.insert(src):
            return self.copies[id(src)]
        ctx = self.ctx_allocated if src.view_src is None else self.ctx_unallocated
        dst = dup_tensor(ctx, src)
        dst.nb = list(src.nb)
        if src.view_src is not None:
            dst.view_src = self.dup(src.view_src)
            dst.view_offs = src.view_offs
        dst.op = src.op
        dst.op_params = src.op_params
        dst.name = src.name
        for i, s in enumerate(src.src):
            if s is None:
                break
            dst.src[i] = self.dup(s)
        self.copies[id(src)] = dst
        return dst

    def init(self, src: Tensor) -> None:
        """GCOPY-3: bytes for non-views, view_init for views (after their view_src), then sources."""
        if id(src) in self.initialised:
            return
        self.initialised.add(id(src))
        dst = self.copies[id(src)]
        if dst.view_src is not None:
            self.init(nonnull(src.view_src, "GCOPY-3", "the view_src of a view's original"))
            view_init(nonnull(dst.view_src.buffer, "GCOPY-3", "the buffer of a copied view_src"), dst)
        else:
            tensor_copy(src, dst)
        for s in src.src:
            if s is None:
                break
            self.init(s)


@implements("GCOPY-1", "GCOPY-3", "GCOPY-4")
@checked
def graph_copy(backend: Backend, g: CGraph) -> GraphCopy:
    """GCOPY-1 to GCOPY-4: `ggml_backend_graph_copy(backend, g)`."""
    world = backend.world
    ctx_allocated, ctx_unallocated = Context(world, no_alloc=True), Context(world, no_alloc=True)
    copier = _Copier(g.visited.size, ctx_allocated, ctx_unallocated)
    nodes = g.node_list()
    for node in nodes:
        copier.dup(node)
    buffer = alloc_ctx_tensors(ctx_allocated, backend)
    if buffer is None:
        print("failed to allocate buffer for graph copy", file=sys.stderr)
        ctx_allocated.free()
        ctx_unallocated.free()
        return EMPTY
    for node in nodes:
        copier.init(node)
    copy = new_graph_custom(ctx_allocated, g.size, False)
    for i, node in enumerate(nodes):
        copy.nodes[i] = copier.copies[id(node)]
    copy.n_nodes = len(nodes)
    return GraphCopy(buffer, ctx_allocated, ctx_unallocated, copy)


@implements("GCOPY-5", "GCOPY-8")
@checked
def graph_copy_free(copy: GraphCopy) -> None:
    """GCOPY-5: the buffer, then both contexts; nothing for the empty result. GCOPY-8: that is
    everything the copy holds (graph_copy's own tables are gone when it returns)."""
    buffer_free(copy.buffer)
    for ctx in (copy.ctx_allocated, copy.ctx_unallocated):
        if ctx is not None:
            ctx.free()


@implements("GCOPY-6", "GCOPY-7")
@checked
def compare_graph_backend(backend1: Backend, backend2: Backend, g: CGraph, callback: EvalCallback) -> bool:
    """GCOPY-6, GCOPY-7: compute `g` on backend1 and its copy on backend2 node by node, calling
    back after each node that is not a view op until the callback says stop. False only when
    the copy failed. (C's `user_data` is whatever the Python callback closes over.)"""
    copy = graph_copy(backend2, g)
    if copy.buffer is None:
        return False
    g2 = nonnull(copy.graph, "GCOPY-1", "the graph of a copy that has a buffer")
    for i in range(g.n_nodes):
        t1, t2 = g.node(i), g2.node(i)
        backend_graph_compute(backend1, graph_view(g, i, i + 1))
        backend_graph_compute(backend2, graph_view(g2, i, i + 1))
        if t1.op in VIEW_OPS:
            continue
        if not callback(i, t1, t2):
            break
    graph_copy_free(copy)
    return True
