"""SCHED: the backend scheduler — one graph over several backends.

`sched_new` keeps backends in priority order (index 0 most wanted, the last the fallback).
`split_graph` decides a backend for every node (passes 1 to 3) and cuts the nodes into splits
with copies of their cross-backend inputs (pass 4); `graph_compute` allocates the splits and
runs them. Internally rc.8 identifies a backend by its allocator (`tallocr`); so does the model,
and `cause` records which pass decided each tensor (what `ggspec explain` shows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import overload

from .alloc import (
    Gallocr,
    Tallocr,
    gallocr_alloc_graph_n,
    gallocr_free,
    gallocr_new,
    tallocr_free,
    tallocr_get_buffer,
    tallocr_is_measure,
    tallocr_max_size,
    tallocr_new_from_buft,
    tallocr_new_measure_from_buft,
    tallocr_reset,
)
from .backend import Backend, backend_get_default_buffer_type, backend_graph_compute, backend_name, backend_supports_op
from .buffer import Buffer, BufferType, BufferUsage, buft_supports_backend
from .checked import checked, nonnull
from .clauses import implements, require, undefined
from .copy import tensor_copy_async
from .graph import CGraph, HashSet, graph_view, hash_size, new_graph_custom
from .tensor import TENSOR_OVERHEAD, Context, Tensor, cut_name
from .types import Op
from .world import World

MAX_BACKENDS = 16
MAX_SPLITS = 256
MAX_SPLIT_INPUTS = 16

#: SCHED-40: the scheduler's context is a fixed array of room for MAX_SPLITS * MAX_SPLIT_INPUTS
#: tensor structs and one graph struct (64-bit rc.8: 368 and 80 bytes); every object in it
#: takes a 32-byte header and its size rounded up to 16 bytes
GRAPH_STRUCT = 80
OBJECT_HEADER = 32
MEM_ALIGN = 16
SPLIT_CONTEXT_BYTES = MAX_SPLITS * MAX_SPLIT_INPUTS * TENSOR_OVERHEAD + GRAPH_STRUCT

VIEW_OPS = frozenset({Op.VIEW, Op.RESHAPE, Op.PERMUTE, Op.TRANSPOSE})

#: `bool callback(tensor, ask, user_data)`; the model passes no user data
EvalCallback = Callable[[Tensor, bool], bool]


@dataclass
class Split:
    """`struct ggml_backend_sched_split`: a node range on one backend and its inputs."""

    tallocr: Tallocr | None
    i_start: int = 0
    i_end: int = 0
    inputs: list[Tensor] = field(default_factory=list)
    graph: CGraph | None = None


@dataclass(eq=False)
class Sched:
    """`struct ggml_backend_sched`."""

    world: World
    backends: list[Backend]
    bufts: list[BufferType]
    tallocs: list[Tallocr]
    galloc: Gallocr
    hash_set: HashSet
    node_talloc: dict[int, Tallocr | None] = field(default_factory=dict)
    node_copies: dict[int, dict[int, Tensor]] = field(default_factory=dict)
    cause: dict[int, str] = field(default_factory=dict)
    splits: list[Split] = field(default_factory=list)
    graph: CGraph | None = None
    ctx: Context | None = None
    is_reset: bool = False
    callback_eval: EvalCallback | None = None
    freed: bool = False
    #: the contexts of earlier splits, freed (SCHED-34): their copies must not be read again
    retired: list[Context] = field(default_factory=list)
    #: bytes of the split context's fixed array in use (SCHED-40)
    ctx_used: int = 0


# --- small helpers, each one rule ---------------------------------------------------------------


@checked
def is_view_op(op: Op) -> bool:
    """View ops (VIEW, RESHAPE, PERMUTE, TRANSPOSE) are skipped by passes 2 and 4."""
    return op in VIEW_OPS


def _index_or_int_max(items: Sequence[object], item: object) -> int:
    """The position of `item` (the same object) in `items`; INT_MAX when it is not there."""
    return next((i for i, x in enumerate(items) if x is item), 2**31 - 1)


@checked
def backend_prio(sched: Sched, backend: Backend | None) -> int:
    """SCHED-4: a backend's priority is its index; a foreign backend gets INT_MAX."""
    return _index_or_int_max(sched.backends, backend)


@checked
def allocr_prio(sched: Sched, talloc: Tallocr | None) -> int:
    """An allocator's priority is its index, as its backend's (SCHED-4); a foreign one gets INT_MAX."""
    return _index_or_int_max(sched.tallocs, talloc)


@checked
def allocr_backend(sched: Sched, talloc: Tallocr | None) -> Backend | None:
    """The backend of the scheduler's allocator `talloc` (SCHED-4: the one at its priority)."""
    if talloc is None:
        return None
    prio = allocr_prio(sched, talloc)
    if prio >= len(sched.backends):  # rc.8 indexes backends[INT_MAX]: a read past the array
        undefined("SCHED-4", f"allocr_backend: talloc is none of the scheduler's {len(sched.tallocs)} allocators (rc.8 reads "
                  "backends[INT_MAX])")
    return sched.backends[prio]


def _slot(sched: Sched, t: Tensor) -> int:
    return sched.hash_set.find_or_insert(t)


@checked
def get_assignment(sched: Sched, t: Tensor) -> Tallocr | None:
    return sched.node_talloc.get(_slot(sched, t))


def _assign(sched: Sched, t: Tensor, talloc: Tallocr | None, cause: str) -> None:
    slot = _slot(sched, t)
    sched.node_talloc[slot] = talloc
    if talloc is not None:
        sched.cause[slot] = cause


@checked
def cause_of(sched: Sched, t: Tensor) -> str:
    """Which pass decided `t` ("1.dst", "1.vsrc", "1.wgt0", "2.1" ... "4.cpy", "user")."""
    return sched.cause.get(_slot(sched, t), "")


@implements("SCHED-5")
@checked
def allocr_from_buffer(sched: Sched, buffer: Buffer | None) -> Tallocr | None:
    """SCHED-5, SCHED-6: the allocator owning `buffer`, else the highest-priority backend its
    type supports; none at all aborts."""
    if buffer is None:
        return None
    for t in sched.tallocs:
        if tallocr_get_buffer(t) is buffer:
            return t
    for i, b in enumerate(sched.backends):
        if buft_supports_backend(buffer.buft, b):
            return sched.tallocs[i]
    require(False, "SCHED-6")
    return None


@checked
def allocr_from_cur(sched: Sched, node: Tensor) -> tuple[Tallocr | None, str]:
    """SCHED-7: own buffer, else view_src's buffer, else the first source in a WEIGHTS buffer."""
    cur = allocr_from_buffer(sched, node.buffer)
    if cur is not None:
        return cur, "1.dst"
    if node.view_src is not None:
        cur = allocr_from_buffer(sched, node.view_src.buffer)
        if cur is not None:
            return cur, "1.vsrc"
    for i, src in enumerate(node.src):
        if src is None:
            break
        if src.buffer is not None and src.buffer.usage == BufferUsage.WEIGHTS:
            return accepting(sched, node, allocr_from_buffer(sched, src.buffer)), f"1.wgt{i}"
    return None, ""


def _computes(node: Tensor) -> bool:
    """A node a backend computes: not a leaf (NONE) and not a view op."""
    return node.op is not Op.NONE and not is_view_op(node.op)


@implements("SCHED-33")
@checked
def accepting(sched: Sched, node: Tensor, talloc: Tallocr | None) -> Tallocr | None:
    """SCHED-33: the backend pass 1's weights rule or pass 2 gives `node`.

    rc.8 never asks supports_op: `talloc` stands even when its backend refuses the node, and
    under profile rc8 the model calls no supports_op entry either. To record that the
    erratum's branch was reached (so that a difference it explains is blamed on it) it reads
    the backend's known answer instead (`Backend.known_answer`, no entry call); a backend
    without one is not attributed. Erratum (profile fixed): the entry is asked, as the
    correction does, and a refused node goes to the highest-priority backend that accepts it
    instead; when none does, `talloc` stands. The call itself, whatever it answers, is one
    rc.8 never makes (`World.errata_calls`).
    """
    if talloc is None or not _computes(node):
        return talloc
    backend = nonnull(allocr_backend(sched, talloc), "SCHED-1", "the backend of a scheduler's allocator")
    if not sched.world.fixed:
        if backend.known_answer is not None and not backend.known_answer(node):
            sched.world.errata_taken.add("SCHED-33")
        return talloc
    sched.world.errata_calls.add("SCHED-33")
    if backend_supports_op(backend, node):
        return talloc
    sched.world.errata_taken.add("SCHED-33")
    for i, b in enumerate(sched.backends):
        if backend_supports_op(b, node):
            return sched.tallocs[i]
    return talloc


# --- construction, reset, free ------------------------------------------------------------------


@implements("SCHED-3", "SCHED-4")
@checked
def sched_new(world: World, backends: list[Backend], bufts: list[BufferType] | None, graph_size: int) -> Sched:
    """SCHED-1 to SCHED-4."""
    n = len(backends)
    require(n > 0, "SCHED-1")
    require(n <= MAX_BACKENDS, "SCHED-2")
    if bufts is not None and len(bufts) < n:
        undefined("SCHED-3", f"bufts has {len(bufts)} entries for {n} backends")
    chosen = [bufts[i] if bufts is not None else backend_get_default_buffer_type(b) for i, b in enumerate(backends)]
    sched = Sched(
        world=world,
        backends=list(backends),
        bufts=chosen,
        tallocs=[tallocr_new_measure_from_buft(bt) for bt in chosen],
        galloc=gallocr_new(),
        hash_set=HashSet(hash_size(graph_size + MAX_SPLITS * MAX_SPLIT_INPUTS), "SCHED-3"),
    )
    sched_reset(sched)
    return sched


@implements("SCHED-26")
@checked
def sched_reset(sched: Sched) -> None:
    """SCHED-26: reset the allocators, forget assignments and copies."""
    for t in sched.tallocs:
        tallocr_reset(t)
    sched.hash_set.clear()
    sched.node_talloc.clear()
    sched.node_copies.clear()
    sched.cause.clear()
    sched.is_reset = True


@implements("SCHED-39")
@checked
def sched_free(sched: Sched | None) -> None:
    """SCHED-39: the allocators, the copies' context and the scheduler's tables go with it (the
    model has no heap to leak: its objects are dropped and Python reclaims them)."""
    if sched is None:
        return
    for t in sched.tallocs:
        tallocr_free(t)
    gallocr_free(sched.galloc)
    _retire_context(sched)
    sched.freed = True


# --- splitting ----------------------------------------------------------------------------------


@implements("SCHED-7")
def _pass1(sched: Sched, graph: CGraph) -> None:
    for leaf in graph.leaf_list():
        if get_assignment(sched, leaf) is not None:
            continue  # a user assignment
        _assign(sched, leaf, *allocr_from_cur(sched, leaf))
    for node in graph.node_list():
        if get_assignment(sched, node) is not None:
            continue  # a user assignment: its sources wait for pass 3
        _assign(sched, node, *allocr_from_cur(sched, node))
        for src in node.src:
            if src is None:
                break
            if get_assignment(sched, src) is None:
                _assign(sched, src, *allocr_from_cur(sched, src))


@implements("SCHED-38")
def _expand(sched: Sched, graph: CGraph, upward: bool, skip_lowest: bool, cause: str) -> None:
    """One of passes 2.1 to 2.4: carry the last seen assignment over unassigned non-view nodes.
    SCHED-38: the backend 2.1 and 2.2 skip is the last one by position, whatever it is."""
    nodes = graph.node_list()
    order = reversed(nodes) if upward else iter(nodes)
    lowest = len(sched.backends) - 1
    cur: Tallocr | None = None
    for node in order:
        if is_view_op(node.op):
            continue
        mine = get_assignment(sched, node)
        if mine is not None:
            cur = None if skip_lowest and allocr_prio(sched, mine) == lowest else mine
        else:
            _assign(sched, node, accepting(sched, node, cur), cause)


@implements("SCHED-8", "SCHED-9", "SCHED-10", "SCHED-11")
def _pass2(sched: Sched, graph: CGraph) -> None:
    """SCHED-8 to SCHED-11: devices up, devices down, anything up, anything down."""
    _expand(sched, graph, upward=True, skip_lowest=True, cause="2.1")
    _expand(sched, graph, upward=False, skip_lowest=True, cause="2.2")
    _expand(sched, graph, upward=True, skip_lowest=False, cause="2.3")
    _expand(sched, graph, upward=False, skip_lowest=False, cause="2.4")


@implements("SCHED-12")
def _pass3(sched: Sched, graph: CGraph) -> None:
    for node in graph.node_list():
        cur = get_assignment(sched, node)
        if node.view_src is not None and cur is None:
            cur = get_assignment(sched, node.view_src)
            _assign(sched, node, cur, "3.vsrc")
        for src in node.src:
            if src is None:
                break
            if get_assignment(sched, src) is None:
                if src.view_src is not None:
                    _assign(sched, src, get_assignment(sched, src.view_src), "3.vsrc")
                else:
                    _assign(sched, src, cur, "3.cur")


def _dup_tensor_layout(ctx: Context, t: Tensor, name: str) -> Tensor:
    """A new tensor with `t`'s type, extents and strides (`ggml_dup_tensor_layout`)."""
    dup = ctx.new_tensor(t.type, t.ne)
    dup.nb = list(t.nb)
    dup.name = cut_name(name)
    return dup


@implements("SCHED-13", "SCHED-17", "SCHED-19")
def _pass4(sched: Sched, graph: CGraph) -> None:
    """SCHED-13 to SCHED-19: cut splits where the backend changes; collect and copy inputs."""
    ctx = nonnull(sched.ctx, "SCHED-1", "the context of the splits")
    nodes = graph.node_list()
    first = next((n for n in nodes if not is_view_op(n.op)), None)
    cur = get_assignment(sched, first) if first is not None else None
    splits = [Split(cur, 0)]
    cur_id = allocr_prio(sched, cur)
    for i, node in enumerate(nodes):
        if is_view_op(node.op):
            continue
        mine = get_assignment(sched, node)
        require(mine is not None, "SCHED-14")
        if mine is not cur:
            splits[-1].i_end = i
            require(len(splits) < MAX_SPLITS, "SCHED-15")
            splits.append(Split(mine, i))
            cur, cur_id = mine, allocr_prio(sched, mine)
        split = splits[-1]
        for j, src in enumerate(node.src):
            if src is None:
                break
            src_talloc = get_assignment(sched, src)
            require(src_talloc is not None, "SCHED-16")
            if src_talloc is mine:
                continue
            if not any(x is src for x in split.inputs):  # first use in this split
                require(len(split.inputs) < MAX_SPLIT_INPUTS, "SCHED-18")
                split.inputs.append(src)
            copies = sched.node_copies.setdefault(_slot(sched, src), {})
            if cur_id not in copies:
                backend = allocr_backend(sched, cur)
                _context_take(sched, TENSOR_OVERHEAD, f"the copy of {src.name!r}")
                copy = _dup_tensor_layout(ctx, src, f"{backend_name(backend)}#{src.name}")
                copies[cur_id] = copy
                _assign(sched, copy, cur, "4.cpy")
            node.src[j] = copies[cur_id]  # the caller's graph now reads the copy
    splits[-1].i_end = len(nodes)
    sched.splits = splits


@implements("SCHED-20")
def _allocation_graph(sched: Sched, graph: CGraph) -> CGraph:
    """SCHED-20, SCHED-21: per split, its input copies (linked to their inputs) then its nodes."""
    ctx = nonnull(sched.ctx, "SCHED-1", "the context of the splits")
    size = graph.n_nodes + len(sched.splits) * MAX_SPLIT_INPUTS
    _context_take(sched, graph_nbytes(size), f"the allocation graph of {size} entries")
    out = new_graph_custom(ctx, size, False)
    for split in sched.splits:
        split.graph = graph_view(graph, split.i_start, split.i_end)
        for inp in split.inputs:
            copy = sched.node_copies[_slot(sched, inp)][allocr_prio(sched, split.tallocr)]
            require(copy.src[0] is None or copy.src[0] is inp, "SCHED-21")
            copy.src[0] = inp
            out.nodes[out.n_nodes] = copy
            out.n_nodes += 1
        for i in range(split.i_start, split.i_end):
            out.nodes[out.n_nodes] = graph.node(i)
            out.n_nodes += 1
    return out


def graph_nbytes(size: int) -> int:
    """The bytes of a graph of `size` nodes without gradients in a context: the graph struct,
    the node and leaf arrays and the visited set of `hash_size(2 * size)` slots (CORE-7)."""
    return GRAPH_STRUCT + 2 * 8 * size + 8 * hash_size(2 * size)


@implements("SCHED-40")
def _context_take(sched: Sched, nbytes: int, what: str) -> None:
    """SCHED-40: "the objects made in the split context must fit its fixed array of
    256·16·368 + 80 = 1,507,408 bytes: a tensor struct takes 400 bytes, the allocation graph
    32 + (80 + 16·size + 8·hash_size(2·size)) rounded up to 16" -- past it, rc.8's context
    returns NULL and the scheduler dereferences it (undefined behaviour under both profiles)."""
    need = -(-nbytes // MEM_ALIGN) * MEM_ALIGN
    if sched.ctx_used + need + OBJECT_HEADER > SPLIT_CONTEXT_BYTES:
        undefined("SCHED-40", f"{what} needs {need} bytes in the scheduler's context after {sched.ctx_used} in use, "
                              f"which holds {SPLIT_CONTEXT_BYTES}: ggml_new_object returns NULL, which is dereferenced")
    sched.ctx_used += OBJECT_HEADER + need


def _retire_context(sched: Sched) -> None:
    """SCHED-34: the copies of the last split live in the scheduler's context, which rc.8 frees
    (and whose fixed memory it reuses) at the next split and at sched_free."""
    if sched.ctx is not None:
        sched.ctx.free()
        sched.retired.append(sched.ctx)
        sched.ctx = None


def _reads_no_stale_copy(sched: Sched, graph: CGraph) -> None:
    """SCHED-34: a graph whose nodes read copies made for an earlier split (a graph split
    before, its sources redirected by SCHED-19) reads tensors in freed context memory."""
    for node in graph.node_list():
        for src in node.src:
            if src is None:
                break
            if any(src.ctx is c for c in sched.retired):
                undefined("SCHED-34", f"node {node.name!r} reads {src.name!r}, a copy the scheduler made for an "
                                      "earlier split, in context memory freed since (the graph was split before)")


@checked
def split_graph(sched: Sched, graph: CGraph) -> None:
    """Passes 1 to 4 and the allocation graph (`sched_split_graph`)."""
    sched.splits = []
    sched.is_reset = False
    _retire_context(sched)
    _reads_no_stale_copy(sched, graph)
    sched.ctx = Context(sched.world, no_alloc=True)
    sched.ctx_used = 0
    _pass1(sched, graph)
    _pass2(sched, graph)
    _pass3(sched, graph)
    _pass4(sched, graph)
    sched.graph = _allocation_graph(sched, graph)


def _alloc_splits(sched: Sched) -> None:
    graph = nonnull(sched.graph, "SCHED-1", "the allocation graph")
    gallocr_alloc_graph_n(sched.galloc, graph, sched.hash_set, _SlotTable(sched.node_talloc, sched.hash_set.size))


class _SlotTable(Sequence[Tallocr | None]):
    """`hash_node_talloc`, the scheduler's table of one allocator per hash slot, read through
    the sparse map of assigned slots (rc.8's array of hash-set size, without building it)."""

    def __init__(self, by_slot: dict[int, Tallocr | None], size: int) -> None:
        self._by_slot, self._size = by_slot, size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> Tallocr | None: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Tallocr | None]: ...

    def __getitem__(self, i: int | slice) -> Tallocr | None | Sequence[Tallocr | None]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._size))]
        if not 0 <= i < self._size:
            raise IndexError(i)
        return self._by_slot.get(i)


# --- computing ----------------------------------------------------------------------------------


@implements("SCHED-22", "SCHED-24", "SCHED-25")
def _compute_splits(sched: Sched) -> None:
    """SCHED-22 to SCHED-25: copy each split's inputs, then compute it, in batches when an eval
    callback watches. Erratum SCHED-25: rc.8 stops only the current split on a false return."""
    for split in sched.splits:
        backend = allocr_backend(sched, split.tallocr)
        g = nonnull(split.graph, "SCHED-1", "a split's graph")
        if backend is None:  # SCHED-35: a graph of view nodes only, no node chose the first split's backend
            if not sched.world.fixed:
                undefined("SCHED-35", "a split without a backend is computed (rc.8 keeps a stale or NULL one)")
            continue
        backend_id = backend_prio(sched, backend)
        for inp in split.inputs:
            copy = sched.node_copies[_slot(sched, inp)][backend_id]
            require(inp.buffer is not None, "SCHED-23")
            nonnull(copy.buffer, "SCHED-1", "the buffer of an input's copy")  # the allocator places every copy
            tensor_copy_async(backend, inp, copy)
        if sched.callback_eval is None:
            backend_graph_compute(backend, g)
            continue
        n = g.n_nodes
        j0 = 0
        stopped = False
        while j0 < n:
            t = g.node(j0)
            need = sched.callback_eval(t, True)
            j1 = j0
            while not need and j1 < n - 1:
                j1 += 1
                t = g.node(j1)
                need = sched.callback_eval(t, True)
            backend_graph_compute(backend, graph_view(g, j0, j1 + 1))
            if need and not sched.callback_eval(t, False):
                stopped = True
                break
            j0 = j1 + 1
        if stopped and sched.world.fixed:
            return


@checked
@implements("SCHED-36")
def graph_compute(sched: Sched, graph: CGraph) -> None:
    """SCHED-27: the graph must fit the hash set; reset if needed (SCHED-36: which drops the
    assignments made since the last split), split, allocate, compute. SCHED-37: the allocators
    must have measured first."""
    require(sched.hash_set.size >= graph.n_nodes + MAX_SPLITS * MAX_SPLIT_INPUTS, "SCHED-27")
    if any(tallocr_is_measure(t) for t in sched.tallocs):
        undefined("SCHED-37", "graph_compute before init_measure: the measuring allocators place the graph at "
                              "addresses no memory backs")
    if not sched.is_reset:
        sched_reset(sched)
    split_graph(sched, graph)
    _alloc_splits(sched)
    _compute_splits(sched)


@implements("SCHED-29")
@checked
def init_measure(sched: Sched, measure_graph: CGraph) -> None:
    """SCHED-28, SCHED-29: measure once, then one buffer per backend of the measured size."""
    require(tallocr_is_measure(sched.tallocs[0]), "SCHED-28")
    split_graph(sched, measure_graph)
    _alloc_splits(sched)
    for i, bt in enumerate(sched.bufts):
        size = tallocr_max_size(sched.tallocs[i])
        tallocr_free(sched.tallocs[i])
        sched.tallocs[i] = tallocr_new_from_buft(bt, size)
    sched_reset(sched)


@implements("SCHED-30")
@checked
def get_n_splits(sched: Sched) -> int:
    return len(sched.splits)


def _backend_index(sched: Sched, backend: Backend) -> int:
    i = backend_prio(sched, backend)
    require(0 <= i < len(sched.backends), "SCHED-31")
    return i


@checked
def get_tallocr(sched: Sched, backend: Backend) -> Tallocr:
    return sched.tallocs[_backend_index(sched, backend)]


@checked
def get_buffer(sched: Sched, backend: Backend) -> Buffer:
    return tallocr_get_buffer(sched.tallocs[_backend_index(sched, backend)])


@implements("SCHED-32")
@checked
def set_node_backend(sched: Sched, node: Tensor, backend: Backend) -> None:
    _assign(sched, node, sched.tallocs[_backend_index(sched, backend)], "user")


@implements("SCHED-32")
@checked
def get_node_backend(sched: Sched, node: Tensor) -> Backend | None:
    """SCHED-32: "`ggml_backend_sched_get_node_backend(sched, node)` is the node's backend, or
    NULL when it has none. The scheduler files every assignment under the tensor's address, not
    under the tensor": the hash set keys `node` by `node.addr`, so a tensor rebuilt at an assigned
    one's address sees that backend until `sched_reset` clears the set."""
    return allocr_backend(sched, get_assignment(sched, node))


@checked
def set_eval_callback(sched: Sched, callback: EvalCallback | None) -> None:
    sched.callback_eval = callback
