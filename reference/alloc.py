"""ALLOC: tensor allocators (tallocr), the graph allocator (gallocr), the legacy allocr, and
allocating a whole context — with rc.8's placement strategy, exactly.

The contract for ports is the set of invariants ALLOC-17 to ALLOC-21, not the offsets;
`check_allocation` checks them on any placement described as an `AllocationRecord` (the
conformance suite builds one from a target's tensors, `describe_allocation` from the model's).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from .backend import Backend, backend_get_default_buffer_type
from .buffer import (
    Buffer,
    BufferType,
    buffer_free,
    buffer_get_alignment,
    buffer_get_alloc_size,
    buffer_get_base,
    buffer_get_size,
    buffer_init_tensor,
    buffer_reset,
    buft_alloc_buffer,
    buft_get_alignment,
    buft_get_alloc_size,
)
from .checked import checked, nonnull
from .clauses import implements, require, required, undefined
from .copy import same_layout
from .cpu import CpuBufferContext, cpu_buffer_from_ptr
from .graph import CGraph, HashSet, context_tensors, get_no_alloc
from .tdata import view_init
from .tensor import Context, Tensor
from .types import Op
from .world import SIZE_MAX, World

MAX_FREE_BLOCKS = 256
MEASURE_ROOM = SIZE_MAX // 2
LEGACY_MEASURE_BASE = 0x1000


@checked
def aligned_offset(base: int, offset: int, alignment: int) -> int:
    """`offset` moved up so that `base + offset` is a multiple of `alignment` (a power of two)."""
    if alignment <= 0 or alignment & (alignment - 1):
        undefined("ALLOC-1", f"alignment {alignment} is not a power of two (rc.8 has a C assert only)")
    return offset + (alignment - (base + offset) % alignment) % alignment


# --- tensor allocators ------------------------------------------------------------------------


@dataclass
class FreeBlock:
    addr: int
    size: int


@dataclass(eq=False)
class Tallocr:
    """`struct ggml_tallocr`."""

    world: World
    buffer: Buffer
    buffer_owned: bool
    base: int
    alignment: int
    free_blocks: list[FreeBlock] = field(default_factory=list)
    max_size: int = 0
    measure: bool = False
    freed: bool = field(default=False, repr=False)


def _live(t: Tallocr) -> Tallocr:
    if t.freed:
        undefined("ALLOC-9", "a tensor allocator is used after tallocr_free")
    return t


@implements("ALLOC-9")
@checked
def tallocr_reset(talloc: Tallocr) -> None:
    """ALLOC-9: one free range from the first aligned address; reset the buffer unless measuring."""
    _live(talloc)
    off = aligned_offset(talloc.base, 0, talloc.alignment)
    if talloc.measure:
        talloc.free_blocks = [FreeBlock(talloc.base + off, MEASURE_ROOM)]
    else:
        talloc.free_blocks = [FreeBlock(talloc.base + off, buffer_get_size(talloc.buffer) - off)]
        buffer_reset(talloc.buffer)


@implements("ALLOC-1")
@checked
def tallocr_new(world: World, data: int | None, size: int, alignment: int) -> Tallocr:
    """ALLOC-1: an allocator over caller memory, through a CPU buffer from the pointer it owns."""
    buffer = cpu_buffer_from_ptr(world, data, size)
    talloc = Tallocr(world, buffer, True, buffer_get_base(buffer), alignment)
    tallocr_reset(talloc)
    return talloc


@implements("ALLOC-3")
@checked
def tallocr_new_measure(world: World, alignment: int) -> Tallocr:
    """ALLOC-3: a measuring allocator pretending to start at 0x1000."""
    talloc = tallocr_new(world, LEGACY_MEASURE_BASE, MEASURE_ROOM, alignment)
    talloc.measure = True
    return talloc


@implements("ALLOC-2")
@checked
def tallocr_new_from_buffer(buffer: Buffer) -> Tallocr:
    """ALLOC-2: an allocator over `buffer` (not owned), with the buffer's alignment."""
    talloc = Tallocr(buffer.world, buffer, False, buffer_get_base(buffer), buffer_get_alignment(buffer))
    tallocr_reset(talloc)
    return talloc


@implements("ALLOC-2")
@checked
def tallocr_new_from_buft(buft: BufferType, size: int) -> Tallocr:
    """ALLOC-2: an allocator owning a new buffer of `size` bytes of type `buft`."""
    talloc = tallocr_new_from_buffer(buft_alloc_buffer(buft, size))
    talloc.buffer_owned = True
    return talloc


@checked
def tallocr_new_from_backend(backend: Backend, size: int) -> Tallocr:
    """ALLOC-2: `tallocr_new_from_buft` with the backend's default type."""
    return tallocr_new_from_buft(backend_get_default_buffer_type(backend), size)


@implements("ALLOC-3")
@checked
def tallocr_new_measure_from_buft(buft: BufferType) -> Tallocr:
    """ALLOC-3: a measuring allocator with `buft`'s alignment and alloc sizes (a 1-byte buffer)."""
    talloc = tallocr_new_from_buffer(buft_alloc_buffer(buft, 1))
    talloc.buffer_owned = True
    talloc.measure = True
    tallocr_reset(talloc)
    return talloc


@checked
def tallocr_new_measure_from_backend(backend: Backend) -> Tallocr:
    """ALLOC-3: `tallocr_new_measure_from_buft` with the backend's default type."""
    return tallocr_new_measure_from_buft(backend_get_default_buffer_type(backend))


@checked
def tallocr_get_buffer(talloc: Tallocr) -> Buffer:
    return _live(talloc).buffer


@checked
def tallocr_is_measure(talloc: Tallocr) -> bool:
    return _live(talloc).measure


@checked
def tallocr_max_size(talloc: Tallocr) -> int:
    """ALLOC-9: the highest end of any range handed out, from the buffer's base."""
    return _live(talloc).max_size


@implements("ALLOC-9")
@checked
def tallocr_free(talloc: Tallocr | None) -> None:
    """ALLOC-9: NULL does nothing; an owned buffer is freed with the allocator."""
    if talloc is None:
        return
    _live(talloc)
    if talloc.buffer_owned:
        buffer_free(talloc.buffer)
    talloc.freed = True


def _alloc_size(talloc: Tallocr, tensor: Tensor) -> int:
    return aligned_offset(0, buffer_get_alloc_size(talloc.buffer, tensor), talloc.alignment)


@implements("ALLOC-6", "ALLOC-7", "ALLOC-27")
@checked
def tallocr_alloc(talloc: Tallocr, tensor: Tensor) -> None:
    """ALLOC-4 to ALLOC-7: place `tensor` in a free range (rc.8's best fit). The last range runs
    to the buffer's end; rc.8 drops it once a tensor uses it up (erratum ALLOC-7), profile fixed
    keeps it, empty, so that a range freed later never stands in for the buffer's end."""
    _live(talloc)
    require(tensor.view_src is None, "ALLOC-4")
    require(tensor.data is None, "ALLOC-5")
    size = _alloc_size(talloc, tensor)
    blocks = talloc.free_blocks
    best, best_size, max_avail = -1, SIZE_MAX, 0
    for i, block in enumerate(blocks[:-1]):  # the smallest fit among all but the last, the later of equals (ALLOC-27)
        max_avail = max(max_avail, block.size)
        if size <= block.size <= best_size:
            best, best_size = i, block.size
    if best == -1:  # the last range, which runs to the end of the buffer
        if not blocks:  # the buffer is used up to its last byte
            if not talloc.world.fixed:
                undefined("ALLOC-7", "rc.8 reads the entry before its free-range list when no range is left")
            require(False, "ALLOC-7")
        max_avail = max(max_avail, blocks[-1].size)
        if blocks[-1].size < size:
            print(
                f"ggml_tallocr_alloc: not enough space in the buffer (needed {size}, largest block available {max_avail})",
                file=sys.stderr,
            )
            require(False, "ALLOC-7")
        best = len(blocks) - 1
        if _fits_only_if_aligned(talloc, blocks[-1], size):
            undefined(
                "ALLOC-7",
                f"{size} bytes fit in the last {blocks[-1].size} of a CPU buffer only if malloc returned a "
                f"{talloc.alignment}-byte aligned address (it promises {HOST_MALLOC_ALIGNMENT}): rc.8 places the "
                "tensor or aborts, by where the buffer landed",
            )
    block = blocks[best]
    addr = block.addr
    block.addr += size
    block.size -= size
    if block.size == 0 and (best < len(blocks) - 1 or not talloc.world.fixed):
        del blocks[best]  # rc.8 drops the range at the buffer's end too (erratum ALLOC-7); fixed keeps it, empty
    tensor.data = addr
    tensor.buffer = talloc.buffer
    if not talloc.measure:
        buffer_init_tensor(talloc.buffer, tensor)
    talloc.max_size = max(talloc.max_size, addr - talloc.base + size)


#: what the host allocator promises of the address of a CPU buffer's memory (CPU-4): a 64-bit
#: malloc's 16 bytes, so up to 48 of the 64 spare bytes may go to aligning the first tensor
HOST_MALLOC_ALIGNMENT = 16


def _fits_only_if_aligned(talloc: Tallocr, last: FreeBlock, size: int) -> bool:
    """ALLOC-7, CPU-4: `size` bytes fit in the range that runs to the end of a CPU buffer's
    memory only when its base lies closer to an aligned address than malloc promises. The model
    puts every buffer at an aligned address; rc.8's CPU buffer type takes malloc's address as it
    comes, so there the fit depends on where the buffer landed."""
    ctx = talloc.buffer.context
    if talloc.measure or not isinstance(ctx, CpuBufferContext) or not ctx.owned:
        return False
    if last.addr + last.size != talloc.base + buffer_get_size(talloc.buffer):
        return False  # a range freed inside the buffer (erratum ALLOC-7): the base's alignment does not move its end
    unknown = max(talloc.alignment - HOST_MALLOC_ALIGNMENT, 0)
    return last.size - unknown < size


def _is_own(talloc: Tallocr, t: Tensor) -> bool:
    return t.buffer is talloc.buffer and (t.view_src is None or t.view_src.buffer is talloc.buffer)


@implements("ALLOC-8", "ALLOC-26")
@checked
def tallocr_free_tensor(talloc: Tallocr, tensor: Tensor) -> None:
    """Give a tensor's range back, merging with free neighbours; tensors of other buffers are
    ignored. ALLOC-8: at most 256 separate free ranges. ALLOC-26: the range is free again for
    every later placement."""
    if not _is_own(talloc, tensor):
        return
    ptr, size = nonnull(tensor.data, "ALLOC-1", "a placed tensor's data"), _alloc_size(talloc, tensor)
    blocks = talloc.free_blocks
    for i, block in enumerate(blocks):
        if block.addr + block.size == ptr:  # ends where the freed range starts
            block.size += size
            if i < len(blocks) - 1 and block.addr + block.size == blocks[i + 1].addr:
                block.size += blocks[i + 1].size
                del blocks[i + 1]
            return
        if ptr + size == block.addr:  # starts where the freed range ends
            block.addr, block.size = ptr, block.size + size
            if i > 0 and blocks[i - 1].addr + blocks[i - 1].size == block.addr:
                blocks[i - 1].size += block.size
                del blocks[i]
            return
    require(len(blocks) < MAX_FREE_BLOCKS, "ALLOC-8")
    pos = 0
    while pos < len(blocks) and blocks[pos].addr < ptr:
        pos += 1
    blocks.insert(pos, FreeBlock(ptr, size))


# --- the graph allocator ----------------------------------------------------------------------

#: ops whose result may be written over their source (ALLOC-12)
INPLACE_OPS: frozenset[Op] = frozenset(
    {
        Op.SCALE, Op.DIAG_MASK_ZERO, Op.DIAG_MASK_INF, Op.ADD, Op.ADD1, Op.SUB, Op.MUL, Op.DIV,
        Op.SQR, Op.SQRT, Op.LOG, Op.UNARY, Op.ROPE, Op.RMS_NORM, Op.SOFT_MAX,
    }
)  # fmt: skip


@dataclass
class HashNode:
    n_children: int = 0
    n_views: int = 0


@dataclass(eq=False)
class Gallocr:
    """`struct ggml_gallocr`."""

    talloc: Tallocr | None = None
    hash_set: HashSet | None = None
    hash_values: dict[int, HashNode] = field(default_factory=dict)
    hash_allocs: Sequence[Tallocr | None] | None = None
    parse_seq: list[int] = field(default_factory=list)
    #: the size of the caller's table left behind by alloc_graph_n (rc.8 keeps the size, not the keys)
    borrowed_size: int = 0
    freed: bool = field(default=False, repr=False)


@implements("ALLOC-10")
@checked
def gallocr_new() -> Gallocr:
    """ALLOC-10: a graph allocator without a parse sequence."""
    return Gallocr()


@implements("ALLOC-10", "ALLOC-25")
@checked
def gallocr_free(galloc: Gallocr | None) -> None:
    """ALLOC-10: NULL does nothing. ALLOC-25: everything the allocator allocated for itself goes
    with it (its own key table, never a borrowed one; its counts; its parse sequence)."""
    if galloc is None:
        return
    if galloc.freed:
        undefined("ALLOC-10", "gallocr_free twice")
    galloc.hash_set = None  # its own table: a borrowed one was given back after alloc_graph_n (ALLOC-14)
    galloc.hash_values.clear()
    galloc.parse_seq.clear()
    galloc.freed = True


@implements("ALLOC-10")
@checked
def gallocr_set_parse_seq(galloc: Gallocr, order: Sequence[int]) -> None:
    """ALLOC-10: keep a copy of the placement order (-1 marks a barrier)."""
    galloc.parse_seq = [int(i) for i in order]


def _hash_get(galloc: Gallocr, t: Tensor) -> HashNode:
    hash_set = nonnull(galloc.hash_set, "ALLOC-1", "the graph allocator's hash set")
    return galloc.hash_values.setdefault(hash_set.find_or_insert(t), HashNode())


def _node_tallocr(galloc: Gallocr, node: Tensor) -> Tallocr:
    if galloc.talloc is not None:
        return galloc.talloc
    slot = nonnull(galloc.hash_set, "ALLOC-1", "the graph allocator's hash set").find_or_insert(node)
    allocs = nonnull(galloc.hash_allocs, "ALLOC-1", "the graph allocator's table of allocators")
    talloc = allocs[slot] if slot < len(allocs) else None
    if talloc is None:
        undefined("ALLOC-14", f"no tensor allocator for {node!r} in hash_node_talloc")
    return talloc


@implements("ALLOC-16")
def _init_view(galloc: Gallocr, view: Tensor) -> None:
    """ALLOC-15, ALLOC-16: a view placed at its source's data, in the allocator's buffer."""
    talloc = _node_tallocr(galloc, view)
    data = required(required(view.view_src, "ALLOC-15").data, "ALLOC-15")
    view.buffer = talloc.buffer
    view.data = data + view.view_offs
    if not talloc.measure:
        buffer_init_tensor(talloc.buffer, view)


def _sources(node: Tensor) -> list[Tensor]:
    """src[0], src[1], ... up to the first NULL."""
    out: list[Tensor] = []
    for s in node.src:
        if s is None:
            break
        out.append(s)
    return out


@implements("ALLOC-12")
def _place(galloc: Gallocr, node: Tensor) -> None:
    """ALLOC-11 step 1 for one tensor; ALLOC-12: in place over a source with no other reader."""
    talloc = _node_tallocr(galloc, node)
    if node.data is not None:
        return
    if node.view_src is not None:
        _init_view(galloc, node)
        return
    if node.op in INPLACE_OPS:
        for parent in _sources(node):
            if not _is_own(talloc, parent):
                continue
            hn = _hash_get(galloc, parent)
            if parent.data is None or hn.n_children != 1 or hn.n_views != 0 or not same_layout(node, parent):
                continue
            if parent.view_src is not None:
                root = parent.view_src
                root_hn = _hash_get(galloc, root)
                if root_hn.n_views == 1 and root_hn.n_children == 0 and root.data == parent.data:
                    node.view_src = root
                    root_hn.n_views += 1
                    _init_view(galloc, node)
                    return
            else:
                node.view_src = parent
                hn.n_views += 1
                _init_view(galloc, node)
                return
    tallocr_alloc(talloc, node)


def _release(galloc: Gallocr, parent: Tensor) -> Tallocr | None:
    """ALLOC-11 step 2: one consumer fewer; free what nobody reads any more. Returns the
    allocator that got a range back, if any."""
    hn = _hash_get(galloc, parent)
    hn.n_children -= 1
    if hn.n_children != 0 or hn.n_views != 0:
        return None
    if parent.view_src is not None:
        root = parent.view_src
        root_hn = _hash_get(galloc, root)
        root_hn.n_views -= 1
        if root_hn.n_views != 0 or root_hn.n_children != 0:
            return None
        parent = root
    talloc = _node_tallocr(galloc, parent)
    if not _is_own(talloc, parent):
        return None  # tallocr_free_tensor ignores it
    tallocr_free_tensor(talloc, parent)
    return talloc


@implements("ALLOC-20")
def _inputs_to_place(g: CGraph, order: Iterable[int]) -> list[Tensor]:
    """ALLOC-20: "every input of the walk's nodes (in node order, sources in order) that has
    no `data` and is not a view" — a source that is not a node of the graph; each once."""
    nodes = {id(n) for n in g.node_list()}
    seen: set[int] = set()
    out: list[Tensor] = []
    for i in order:
        for s in _sources(g.node(i)):
            if id(s) not in nodes and id(s) not in seen and s.data is None and s.view_src is None:
                seen.add(id(s))
                out.append(s)
    return out


@implements("ALLOC-11")
def _alloc_graph_impl(galloc: Gallocr, g: CGraph) -> None:
    """ALLOC-11: count consumers and views, then place and release in walk order."""
    nodes = g.node_list()
    for node in nodes:
        if node.view_src is not None:
            _hash_get(galloc, node.view_src).n_views += 1
            if node.buffer is None and node.data is not None:
                _init_view(galloc, node)
        for parent in _sources(node):
            _hash_get(galloc, parent).n_children += 1
            if parent.view_src is not None and parent.buffer is None and parent.data is not None:
                _init_view(galloc, parent)
    seq = galloc.parse_seq
    entries = seq if seq else list(range(len(nodes)))
    inputs = _inputs_to_place(g, [i for i in entries if i != -1])
    if nodes and nodes[0].world.fixed:  # erratum ALLOC-20: every input before any node
        for s in inputs:
            tallocr_alloc(_node_tallocr(galloc, s), s)
    waiting = {id(s) for s in inputs}  # inputs whose first reader the walk has not reached
    freed: set[int] = set()  # the allocators that got a range back so far
    walked = False  # whether the walk has placed a node yet
    last_barrier = 0
    for ind, entry in enumerate(entries):
        if not seq or entry != -1:
            node = g.node(entry)
            for parent in _sources(node):
                if id(parent) in waiting:
                    waiting.discard(id(parent))
                    # the two profiles part here: rc.8 places this input only now, after a node
                    # (in another order, on another range, maybe one released earlier)
                    if walked or id(_node_tallocr(galloc, parent)) in freed:
                        node.world.errata_taken.add("ALLOC-20")
                _place(galloc, parent)
            _place(galloc, node)
            walked = True
        if not seq or entry == -1:
            done = entries[last_barrier:ind] if seq else [entry]
            for i in done:
                for parent in _sources(g.node(i)):
                    got_back = _release(galloc, parent)
                    if got_back is not None:
                        freed.add(id(got_back))
            if seq:
                last_barrier = ind + 1


@implements("ALLOC-13")
@checked
def gallocr_alloc_graph(galloc: Gallocr, talloc: Tallocr, g: CGraph) -> int:
    """ALLOC-11, ALLOC-13: place `g` with `talloc`; returns the allocator's max_size."""
    size = g.visited.size
    if size == 0:
        undefined("ALLOC-13", "gallocr_alloc_graph on a graph without a visited set (a graph view)")
    if galloc.borrowed_size and size <= galloc.borrowed_size:
        undefined("ALLOC-13", "gallocr_alloc_graph after gallocr_alloc_graph_n clears a table rc.8 no longer has")
    galloc.borrowed_size = 0
    prev = galloc.hash_set.size if galloc.hash_set is not None else 0
    if prev > size and not talloc.world.fixed:
        undefined("ALLOC-13", f"rc.8 clears {size} of its {prev} table slots: entries of an earlier, larger graph stay visible")
    galloc.hash_set = HashSet(max(prev, size), "ALLOC-13")
    galloc.hash_values = {}
    galloc.talloc = talloc
    try:
        _alloc_graph_impl(galloc, g)
    finally:
        galloc.talloc = None
    return tallocr_max_size(talloc)


@implements("ALLOC-14")
@checked
def gallocr_alloc_graph_n(
    galloc: Gallocr, g: CGraph, hash_set: HashSet, hash_node_talloc: Sequence[Tallocr | None]
) -> None:
    """ALLOC-14: place `g` with the allocator of each tensor's slot in the caller's tables."""
    require(hash_set.size >= g.n_nodes + g.n_leafs, "ALLOC-14")
    galloc.talloc = None
    galloc.hash_values = {}
    galloc.hash_set, galloc.hash_allocs = hash_set, hash_node_talloc
    try:
        _alloc_graph_impl(galloc, g)
    finally:
        galloc.hash_set, galloc.hash_allocs = None, None
        galloc.borrowed_size = hash_set.size


# --- the legacy API ---------------------------------------------------------------------------


@dataclass(eq=False)
class Allocr:
    """`struct ggml_allocr`: one tensor allocator and one graph allocator."""

    talloc: Tallocr
    galloc: Gallocr


@implements("ALLOC-22")
@checked
def allocr_new(world: World, data: int | None, size: int, alignment: int) -> Allocr:
    """ALLOC-22: `tallocr_new` with a new graph allocator."""
    return Allocr(tallocr_new(world, data, size, alignment), gallocr_new())


@checked
def allocr_new_measure(world: World, alignment: int) -> Allocr:
    return Allocr(tallocr_new_measure(world, alignment), gallocr_new())


@checked
def allocr_new_from_buffer(buffer: Buffer) -> Allocr:
    return Allocr(tallocr_new_from_buffer(buffer), gallocr_new())


@checked
def allocr_new_from_backend(backend: Backend, size: int) -> Allocr:
    return Allocr(tallocr_new_from_backend(backend, size), gallocr_new())


@checked
def allocr_new_measure_from_backend(backend: Backend) -> Allocr:
    return Allocr(tallocr_new_measure_from_backend(backend), gallocr_new())


@checked
def allocr_get_buffer(alloc: Allocr) -> Buffer:
    return tallocr_get_buffer(alloc.talloc)


@checked
def allocr_set_parse_seq(alloc: Allocr, order: Sequence[int]) -> None:
    gallocr_set_parse_seq(alloc.galloc, order)


@implements("ALLOC-22")
@checked
def allocr_free(alloc: Allocr | None) -> None:
    """ALLOC-22: NULL does nothing; the graph allocator, then the tensor allocator."""
    if alloc is None:
        return
    gallocr_free(alloc.galloc)
    tallocr_free(alloc.talloc)


@checked
def allocr_is_measure(alloc: Allocr) -> bool:
    return tallocr_is_measure(alloc.talloc)


@checked
def allocr_reset(alloc: Allocr) -> None:
    tallocr_reset(alloc.talloc)


@checked
def allocr_alloc(alloc: Allocr, tensor: Tensor) -> None:
    tallocr_alloc(alloc.talloc, tensor)


@checked
def allocr_max_size(alloc: Allocr) -> int:
    return tallocr_max_size(alloc.talloc)


@implements("ALLOC-22")
@checked
def allocr_alloc_graph(alloc: Allocr, g: CGraph) -> int:
    """ALLOC-22: `gallocr_alloc_graph(galloc, talloc, g)`."""
    return gallocr_alloc_graph(alloc.galloc, alloc.talloc, g)


# --- allocating a context ---------------------------------------------------------------------


def _pad(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


@implements("ALLOC-23")
@checked
def alloc_ctx_tensors_from_buft(ctx: Context, buft: BufferType) -> Buffer | None:
    """ALLOC-23, ALLOC-24: one buffer for all unplaced tensors of a no_alloc context."""
    require(get_no_alloc(ctx), "ALLOC-24")
    alignment = buft_get_alignment(buft)
    tensors = context_tensors(ctx)
    total = sum(_pad(buft_get_alloc_size(buft, t), alignment) for t in tensors if t.data is None and t.view_src is None)
    if total == 0:
        return None
    buffer = buft_alloc_buffer(buft, total)
    talloc = tallocr_new_from_buffer(buffer)
    for t in tensors:
        if t.data is None:
            if t.view_src is None:
                tallocr_alloc(talloc, t)
            else:
                view_init(buffer, t)
        elif t.view_src is not None:
            view_init(buffer, t)  # a view of a tensor placed before the view was made
    tallocr_free(talloc)
    return buffer


@checked
def alloc_ctx_tensors(ctx: Context, backend: Backend) -> Buffer | None:
    """ALLOC-23: `alloc_ctx_tensors_from_buft` with the backend's default type."""
    return alloc_ctx_tensors_from_buft(ctx, backend_get_default_buffer_type(backend))


# --- the invariants ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorRecord:
    """One tensor as a placement check sees it (keys identify tensors: pointers, say)."""

    key: Hashable
    data: int | None
    alloc_size: int
    view_src: Hashable | None
    view_offs: int
    srcs: tuple[Hashable, ...]
    #: it had memory before the run (placed by the caller, or a weight)
    placed_before: bool


@dataclass(frozen=True)
class AllocationRecord:
    """A graph after one graph-allocator run over one buffer: what ALLOC-16 to ALLOC-20 need."""

    nodes: tuple[Hashable, ...]
    tensors: dict[Hashable, TensorRecord]
    base: int
    size: int
    alignment: int
    parse_seq: tuple[int, ...] = ()


@checked
def describe_allocation(
    g: CGraph, buffer: Buffer, placed_before: Iterable[Tensor], parse_seq: Sequence[int] = ()
) -> AllocationRecord:
    """An `AllocationRecord` of the model's tensors after `gallocr_alloc_graph` placed `g` in `buffer`."""
    before = {id(t) for t in placed_before}
    seen: dict[Hashable, TensorRecord] = {}
    todo = list(g.node_list())
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        srcs = _sources(t)
        seen[id(t)] = TensorRecord(
            id(t), t.data, buffer_get_alloc_size(buffer, t), None if t.view_src is None else id(t.view_src),
            t.view_offs, tuple(id(s) for s in srcs), id(t) in before,
        )  # fmt: skip
        todo.extend(srcs)
        if t.view_src is not None:
            todo.append(t.view_src)
    return AllocationRecord(
        tuple(id(n) for n in g.node_list()), seen, buffer_get_base(buffer), buffer_get_size(buffer),
        buffer_get_alignment(buffer), tuple(parse_seq),
    )  # fmt: skip


@implements("ALLOC-17", "ALLOC-18", "ALLOC-19")
@checked
def check_allocation(rec: AllocationRecord, inputs_from_start: bool = True) -> list[tuple[str, str]]:
    """ALLOC-16 to ALLOC-20 on a placement: a list of (clause, what is wrong), empty when none.

    `inputs_from_start` adds ALLOC-20 (inputs live from position 0); without it only what rc.8
    also guarantees is checked.
    """
    out: list[tuple[str, str]] = []
    tensors = rec.tensors
    end = len(rec.nodes)

    def root(k: Hashable) -> Hashable:
        while (v := tensors[k].view_src) is not None:
            k = v
        return k

    # positions: node index, or the segment between barriers with a parse sequence
    position: dict[Hashable, int] = {}
    if rec.parse_seq:
        segment = 0
        for entry in rec.parse_seq:
            if entry == -1:
                segment += 1
            else:
                position.setdefault(rec.nodes[entry], segment)
        end = segment + 1
    else:
        position = {k: i for i, k in enumerate(rec.nodes)}
    node_keys = set(rec.nodes)
    read = {s for k in rec.nodes for s in tensors[k].srcs}
    # ALLOC-16: views share their source's bytes
    for t in tensors.values():
        if t.view_src is not None and t.data is not None:
            src = tensors[t.view_src]
            if src.data is None or t.data != src.data + t.view_offs:
                out.append(("ALLOC-16", f"view {t.key} is not at its source's data + view_offs"))
    # the blocks of the buffer and their live ranges: base (first reader / placement, last reader),
    # extended to the end for outputs (ALLOC-19) and from 0 for inputs (ALLOC-20)
    first: dict[Hashable, int] = {}
    last: dict[Hashable, int] = {}
    output: set[Hashable] = set()
    for k in rec.nodes:
        if k not in position:
            continue
        p = position[k]
        uses = [root(s) for s in tensors[k].srcs] + [root(k)]
        for r in uses:
            first[r] = min(first.get(r, p), p)
            last[r] = max(last.get(r, p), p)
        if k not in read:
            output.add(root(k))
    blocks = [
        t for t in tensors.values()
        if t.view_src is None and t.data is not None and rec.base <= t.data < rec.base + rec.size and t.key in first
    ]  # fmt: skip
    for t in blocks:
        at = nonnull(t.data, "ALLOC-1", f"the data of {t.key}")
        if at % rec.alignment != 0 or at < rec.base or at + t.alloc_size > rec.base + rec.size:
            out.append(("ALLOC-17", f"{t.key} at {t.data:#x} (+{t.alloc_size}) is misaligned or outside the buffer"))

    def live(t: TensorRecord, outputs: bool, inputs: bool) -> tuple[int, int]:
        lo = 0 if t.placed_before or (inputs and t.key not in node_keys) else first[t.key]
        hi = end if outputs and t.key in output else last[t.key]
        return lo, hi

    for i, a in enumerate(blocks):
        for b in blocks[i + 1 :]:
            at_a = nonnull(a.data, "ALLOC-1", f"the data of {a.key}")
            at_b = nonnull(b.data, "ALLOC-1", f"the data of {b.key}")
            if at_a >= at_b + b.alloc_size or at_b >= at_a + a.alloc_size:
                continue  # disjoint extents
            for clause, outputs, inputs in (("ALLOC-18", False, False), ("ALLOC-19", True, False), ("ALLOC-20", True, True)):
                if clause == "ALLOC-20" and not inputs_from_start:
                    continue
                (a0, a1), (b0, b1) = live(a, outputs, inputs), live(b, outputs, inputs)
                if a0 <= b1 and b0 <= a1:
                    out.append((clause, f"{a.key} and {b.key} share bytes while both are live"))
                    break
    return out


@implements("ALLOC-21")
@checked
def measure_graph(buft: BufferType, build: Callable[[], CGraph], parse_seq: Sequence[int] = ()) -> int:
    """ALLOC-21, first half: the size a measuring allocator of `buft` reports for a graph.

    `build` makes the graph (fresh tensors each call); ALLOC-21 says a real allocator over a
    buffer of this size then places a second build (with the same parse sequence) without
    running out of space.
    """
    talloc = tallocr_new_measure_from_buft(buft)
    galloc = gallocr_new()
    if parse_seq:
        gallocr_set_parse_seq(galloc, parse_seq)
    try:
        return gallocr_alloc_graph(galloc, talloc, build())
    finally:
        gallocr_free(galloc)
        tallocr_free(talloc)
