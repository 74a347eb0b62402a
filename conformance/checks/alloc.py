"""ALLOC: tensor allocators, the graph allocator, the legacy allocr and alloc_ctx_tensors.

Where tensors land is not the contract (spec/alloc.md): these checks never record an offset or
a `max_size`. They record what the clauses make observable — which tensors get memory, which
become views of what, which buffer entries are called — and the invariants ALLOC-17 to ALLOC-21
checked on each target's *own* placement with reference/alloc.py's `check_allocation` (by tensor
name, so the reference's list of problems, empty where the profile promises the invariant, is
compared with the target's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ggspec.reference.clauses import Profile
from ggspec.reference.graph import hash_size
from ggspec.reference.types import GGMLType, Op
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example, mock_reading
from ..inputs.graphspec import GraphSpec as SchedSpec
from ..inputs.graphspec import Leaf, Node, build
from ..inputs.strategies import (
    DEVICE_NAMES,
    GraphSpec,
    Placement,
    SchedGraph,
    SchedSetup,
    TensorSpec,
    ViewSpec,
    placements,
    small_graphs,
    tensor_specs,
    view_specs,
)
from ..target import Handle, Target, VDevParams
from ._placement import allocation_record, build_graph, graph_tensors, inputs, parse_sequence, problems, room_for
from ._setup import alloc_size, backend_for, fill, round_up, view_of

INVARIANTS = ("ALLOC-17", "ALLOC-18", "ALLOC-19")
seq_kinds = st.sampled_from(["none", "each", "end", "pairs"])
alignments = st.sampled_from([1, 2, 8, 16, 32, 64, 128])


def _is_vdev(placement: Placement) -> bool:
    return placement.kind == "vdev"


@st.composite
def _tensor_lists(draw: st.DrawFn, max_size: int = 6) -> list[TensorSpec]:
    return draw(st.lists(tensor_specs(max_dims=3, max_ne=5), min_size=1, max_size=max_size), label="tensors")


@st.composite
def _root_and_view(draw: st.DrawFn) -> tuple[TensorSpec, ViewSpec]:
    root = draw(tensor_specs(), label="root")
    return root, draw(view_specs(root), label="view")


def _ranges_ok(t: Target, buf: Handle, tensors: list[Handle], alignment: int) -> dict[str, bool]:
    """ALLOC-6 / ALLOC-17 for tensors placed at once: aligned, inside the buffer, disjoint."""
    base, size = t.buffer_get_base(buf), t.buffer_get_size(buf)
    spans = []
    for x in tensors:
        data = t.tensor_data(x)
        assert data is not None
        spans.append((data, data + round_up(t.buffer_get_alloc_size(buf, x), alignment)))
    spans.sort()
    return {
        "aligned": all(a % alignment == 0 for a, _ in spans),
        "inside the buffer": all(base <= a and b <= base + size for a, b in spans),
        "disjoint": all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)),
    }


def _highest_end(t: Target, buf: Handle, tensors: list[Handle], alignment: int) -> int:
    base = t.buffer_get_base(buf)
    ends = [(t.tensor_data(x) or 0) - base + round_up(t.buffer_get_alloc_size(buf, x), alignment) for x in tensors]
    return max(ends, default=0)


# --- tensor allocators ------------------------------------------------------------------------


@check("ALLOC-1", specs=_tensor_lists(), alignment=alignments, slack=st.integers(0, 256), seed=st.integers(0, 2**32))
def tallocr_over_caller_memory(t: Target, rec: Recorder, specs: list[TensorSpec], alignment: int, slack: int,
                               seed: int) -> None:
    """A tensor allocator over the caller's memory: a CPU buffer from the pointer, tensors
    placed aligned inside it, their bytes in the caller's memory; freeing the allocator leaves
    the memory to the caller."""
    size = sum(round_up(s.nbytes(), alignment) for s in specs) + alignment + slack
    mem = t.host_alloc(size)
    talloc = t.tallocr_new(mem, size, alignment)
    buf = t.tallocr_get_buffer(talloc)
    rec("buffer", (t.buffer_name(buf), t.buffer_get_size(buf), t.buffer_is_host(buf)))
    rec("measuring", t.tallocr_is_measure(talloc))
    tensors = [t.new_tensor(s.type, s.ne, f"t{i}") for i, s in enumerate(specs)]
    for x in tensors:
        t.tallocr_alloc(talloc, x)
        rec("placed in the allocator's buffer", t.tensor_buffer(x) == buf)
    rec("ranges", _ranges_ok(t, buf, tensors, alignment))
    last = tensors[-1]
    n = t.nbytes(last)
    payload = fill(n, seed)
    t.tensor_set(last, payload, 0, n)
    offset = (t.tensor_data(last) or 0) - t.buffer_get_base(buf)
    rec("bytes land in the caller's memory", t.host_read(mem, offset, n) == payload)
    t.tallocr_free(talloc)
    rec("memory kept after free", t.host_read(mem, offset, n) == payload)


@check("ALLOC-2", "ALLOC-6", placement=placements, specs=_tensor_lists(), how=st.sampled_from(["buffer", "buft", "backend"]),
       slack=st.integers(0, 256))
def tallocr_places_aligned_ranges(t: Target, rec: Recorder, placement: Placement, specs: list[TensorSpec], how: str,
                                  slack: int) -> None:
    """tallocr_alloc hands out aligned, disjoint ranges of its buffer, sets buffer and data,
    calls init_tensor, and keeps max_size at the highest end; a new allocator resets its buffer
    once; one over a caller's buffer leaves it usable after tallocr_free."""
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    align = t.buft_get_alignment(buft)
    size = sum(round_up(alloc_size(s, placement), align) for s in specs) + align + slack
    if how == "buffer":
        buf = t.backend_alloc_buffer(backend, size)
        talloc = t.tallocr_new_from_buffer(buf)
    else:
        talloc = t.tallocr_new_from_buft(buft, size) if how == "buft" else t.tallocr_new_from_backend(backend, size)
        buf = t.tallocr_get_buffer(talloc)
        rec("owned buffer", (t.buffer_get_size(buf), t.buffer_get_type(buf) == buft))
    rec("buffer is the allocator's", t.tallocr_get_buffer(talloc) == buf)
    if _is_vdev(placement):
        rec("calls after new (init_tensor, reset)", mock_reading(lambda: t.vdev_counters(buf)))
    tensors = [t.new_tensor(s.type, s.ne, f"t{i}") for i, s in enumerate(specs)]
    for x in tensors:
        t.tallocr_alloc(talloc, x)
        rec("buffer set", t.tensor_buffer(x) == buf)
    rec("ranges", _ranges_ok(t, buf, tensors, align))
    rec("max_size is the highest end", t.tallocr_max_size(talloc) == _highest_end(t, buf, tensors, align))
    if _is_vdev(placement):
        rec("calls after placing", mock_reading(lambda: t.vdev_counters(buf)))
    t.tallocr_free(talloc)
    if how == "buffer":  # not owned: still the caller's
        rec("size after tallocr_free", t.buffer_get_size(buf))
        x = tensors[0]
        n = t.nbytes(x)
        t.tensor_set(x, bytes(range(256)) * (n // 256 + 1), 0, n)
        rec("still usable", t.tensor_get(x, 0, n) == (bytes(range(256)) * (n // 256 + 1))[:n])


@check("ALLOC-3", placement=placements, specs=_tensor_lists(), how=st.sampled_from(["alignment", "buft", "backend"]),
       alignment=alignments)
def measuring_allocators(t: Target, rec: Recorder, placement: Placement, specs: list[TensorSpec], how: str,
                         alignment: int) -> None:
    """A measuring allocator places tensors in a range no memory backs: at 0x1000 and up with
    the given alignment, or with the buffer type's alignment and alloc sizes (its 1-byte buffer
    reset once, no init_tensor); max_size is the highest end."""
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    if how == "alignment":
        talloc = t.tallocr_new_measure(alignment)
    else:
        talloc = t.tallocr_new_measure_from_buft(buft) if how == "buft" else t.tallocr_new_measure_from_backend(backend)
        alignment = t.buft_get_alignment(buft)
    buf = t.tallocr_get_buffer(talloc)
    rec("measuring", t.tallocr_is_measure(talloc))
    if how == "alignment":
        rec("pretends to start at 0x1000", t.buffer_get_base(buf) == 0x1000)
    tensors = [t.new_tensor(s.type, s.ne, f"t{i}") for i, s in enumerate(specs)]
    for x in tensors:
        t.tallocr_alloc(talloc, x)
        rec("buffer set", t.tensor_buffer(x) == buf)
    base = t.buffer_get_base(buf)
    spans = sorted(((t.tensor_data(x) or 0), (t.tensor_data(x) or 0) + round_up(t.buffer_get_alloc_size(buf, x), alignment))
                   for x in tensors)
    rec("aligned, disjoint, above the base", all(a % alignment == 0 and a >= base for a, _ in spans)
        and all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)))
    rec("max_size is the highest end", t.tallocr_max_size(talloc) == _highest_end(t, buf, tensors, alignment))
    if how != "alignment" and _is_vdev(placement):
        rec("calls (init_tensor, reset)", mock_reading(lambda: t.vdev_counters(buf)))
    t.tallocr_free(talloc)


@check("ALLOC-4", placement=placements, rv=_root_and_view())
def alloc_a_view(t: Target, rec: Recorder, placement: Placement, rv: tuple[TensorSpec, ViewSpec]) -> None:
    root_spec, vspec = rv
    backend = backend_for(t, placement)
    talloc = t.tallocr_new_from_backend(backend, 2 * alloc_size(root_spec, placement) + 1024)
    root = t.new_tensor(root_spec.type, root_spec.ne, "root")
    t.tallocr_alloc(talloc, view_of(t, root, vspec))


@check("ALLOC-5", placement=placements, spec=tensor_specs(), other=st.booleans())
def alloc_twice(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, other: bool) -> None:
    """A tensor placed once (by this allocator, or a tensor of context memory) is not placed again."""
    backend = backend_for(t, placement)
    talloc = t.tallocr_new_from_backend(backend, 2 * alloc_size(spec, placement) + 1024)
    if other:
        t.tallocr_alloc(talloc, t.new_host_tensor(spec.type, spec.ne, "context tensor"))
        return
    x = t.new_tensor(spec.type, spec.ne, "t")
    t.tallocr_alloc(talloc, x)
    t.tallocr_alloc(talloc, x)


@check("ALLOC-7", placement=placements, size=st.integers(0, 4096), excess=st.integers(1, 512), graph=st.booleans())
def out_of_space(t: Target, rec: Recorder, placement: Placement, size: int, excess: int, graph: bool) -> None:
    """A tensor larger than the whole buffer, placed directly or by the graph allocator."""
    backend = backend_for(t, placement)
    talloc = t.tallocr_new_from_backend(backend, size)
    n = t.buffer_get_size(t.tallocr_get_buffer(talloc)) + excess
    x = t.new_tensor(int(GGMLType.F32), ((n + 3) // 4,), "too big")
    if not graph:
        t.tallocr_alloc(talloc, x)
        return
    y = t.op("scale", [x], [2.0])
    t.set_name(y, "y")
    g = t.new_graph(64)
    t.build_forward_expand(g, y)
    t.gallocr_alloc_graph(t.gallocr_new(), talloc, g)


@example(size=64, parts=1, next_size=0)
@check("ALLOC-7", "ALLOC-6", "ALLOC-17", size=st.integers(1, 512), parts=st.integers(1, 3), next_size=st.integers(0, 64))
def alloc_after_the_last_byte(t: Target, rec: Recorder, size: int, parts: int, next_size: int) -> None:
    """Tensors that fill the buffer to its last byte, then one more: rc.8 reads outside its
    free-range list (erratum ALLOC-7: undefined under rc8); fixed aborts with the message, or
    places a tensor of 0 bytes at the buffer's end, inside the buffer as ALLOC-17 counts a
    0-byte block (rc.8: at the address its read made, outside; deterministic: 64 bytes in one
    piece, then 0)."""
    mem = t.host_alloc(size)
    talloc = t.tallocr_new(mem, size, 1)
    cuts = [size * (i + 1) // parts - size * i // parts for i in range(parts)]
    pieces = [t.new_tensor(int(GGMLType.I8), (n,), f"part{i}") for i, n in enumerate(c for c in cuts if c > 0)]
    for piece in pieces:
        t.tallocr_alloc(talloc, piece)
    rec("max_size", t.tallocr_max_size(talloc))
    last = t.new_tensor(int(GGMLType.I8), (next_size,), "one more")
    t.tallocr_alloc(talloc, last)
    start, at = t.tensor_data(pieces[0]), t.tensor_data(last)
    rec("one more within the buffer", start is not None and at is not None and 0 <= at - start <= size)


@check("ALLOC-8", holes=st.integers(256, 260))
def too_many_free_ranges(t: Target, rec: Recorder, holes: int) -> None:
    """2 * holes tensors placed side by side; a graph whose nodes each read one of the even ones
    (and are too big for the freed ranges) frees them one by one: the 256th separate free
    range aborts."""
    cpu = t.cpu_init()
    w = t.new_tensor(int(GGMLType.F32), (16, 32), "w")
    wbuf = t.backend_alloc_buffer(cpu, t.nbytes(w))
    t.tensor_alloc(wbuf, w, 0)
    talloc, _, g = _every_other_one_read(t, cpu, w, holes)
    t.gallocr_alloc_graph(t.gallocr_new(), talloc, g)


def _every_other_one_read(t: Target, cpu: Any, w: Any, n: int, after_first: Any = None) -> tuple[Any, list[Any], Any]:
    """2n F32 tensors x0 .. of 64 bytes placed side by side by a tallocr on `cpu`, and a graph
    whose nodes y_i = mul_mat(w, x_2i) (each larger than the x it reads) free the even x one by
    one; after_first(g), when given, adds its nodes after y0. Returns (tallocr, xs, graph)."""
    talloc = t.tallocr_new_from_backend(cpu, 2 * n * 64 + n * 128 + 1024)
    xs = [t.new_tensor(int(GGMLType.F32), (16,), f"x{i}") for i in range(2 * n)]
    for x in xs:
        t.tallocr_alloc(talloc, x)
    g = t.new_graph(2048)
    for i in range(n):
        y = t.op("mul_mat", [w, xs[2 * i]], [])
        t.set_name(y, f"y{i}")
        t.build_forward_expand(g, y)
        if i == 0 and after_first is not None:
            after_first(g)
    return talloc, xs, g


@check("ALLOC-8", "ALLOC-6", holes=st.just(255))
def used_up_ranges_leave_the_list(t: Target, rec: Recorder, holes: int) -> None:
    """Like too_many_free_ranges, but first one freed range is used up exactly: x0's range is
    freed after y0 = mul_mat(w, x0), and z = cont(q) (q a weight elsewhere, as large as x0) takes
    all of it. A range used up leaves the free list (ALLOC-6), so `holes` = 255 more separate
    free ranges (and the range that runs to the buffer's end) are 256: no abort. A list that
    kept the used-up range, empty, would count 257 and abort (deterministic)."""
    cpu = t.cpu_init()
    w = t.new_tensor(int(GGMLType.F32), (16, 32), "w")
    q = t.new_tensor(int(GGMLType.F32), (16,), "q")
    wbuf = t.backend_alloc_buffer(cpu, t.nbytes(w) + 128)
    t.tensor_alloc(wbuf, w, 0)
    t.tensor_alloc(wbuf, q, t.nbytes(w) + 64 - t.nbytes(w) % 64)
    z: list[Any] = []

    def z_after_y0(g: Any) -> None:
        z.append(t.op("cont", [q], []))
        t.set_name(z[0], "z")
        t.build_forward_expand(g, z[0])

    talloc, xs, g = _every_other_one_read(t, cpu, w, holes + 1, z_after_y0)
    t.gallocr_alloc_graph(t.gallocr_new(), talloc, g)
    rec("z took x0's range", t.tensor_data(z[0]) == t.tensor_data(xs[0]))


@check("ALLOC-6", "ALLOC-26", "ALLOC-7", size=st.just(288))
def a_freed_range_joins_both_neighbours(t: Target, rec: Recorder, size: int) -> None:
    """A 288-byte buffer (alignment 1): t0 .. t3 (64 bytes each) placed side by side, 32 bytes
    left at the end. A graph frees t0, then t2, then t1 (their readers y0, y2, y1 are placed
    elsewhere before), which joins the ranges on both sides into one of 192 bytes (ALLOC-6); then
    it places u of 192 bytes, which fits there (ALLOC-26) and in no other free range: u is
    placed at t0's old address, no abort (ALLOC-7) (deterministic)."""
    ts, u = _free_in_order_then_place(t, rec, size, 4, (0, 2, 1), 48)
    rec("u at t0's old address", t.tensor_data(u) == t.tensor_data(ts[0]))


def _free_in_order_then_place(t: Target, rec: Recorder, size: int, n: int, freed: tuple[int, ...],
                              u_elems: int, record_nodes: bool = True) -> tuple[list[Any], Any]:
    """A `size`-byte host buffer (alignment 1) with t0 .. t(n-1) (16 F32 each) placed side by side
    by a tallocr; a graph whose nodes y_k = cont(t_k), for k in `freed` in that order, free them
    (the readers and q, u's source of `u_elems` F32, are placed in another buffer before), and
    then u = cont(q) is placed by the graph allocator. Records the graph's node order (unless not
    `record_nodes`); returns (the t_k, u)."""
    f32 = int(GGMLType.F32)
    cpu = t.cpu_init()
    talloc = t.tallocr_new(t.host_alloc(size), size, 1)
    ts = [t.new_tensor(f32, (16,), f"t{i}") for i in range(n)]
    for x in ts:
        t.tallocr_alloc(talloc, x)
    q = t.new_tensor(f32, (u_elems,), "q")
    readers = [t.op("cont", [ts[i]], []) for i in freed]
    u = t.op("cont", [q], [])
    elsewhere = t.backend_alloc_buffer(cpu, 64 * len(freed) + 4 * u_elems)
    for i, (x, name) in enumerate(zip((*readers, q), (*(f"y{k}" for k in freed), "q"), strict=True)):
        t.set_name(x, name)
        t.tensor_alloc(elsewhere, x, 64 * i)  # placed before: the walk leaves them alone
    t.set_name(u, "u")
    g = t.new_graph(64)
    for x in (*readers, u):
        t.build_forward_expand(g, x)
    if record_nodes:
        rec("nodes", [t.tensor_name(x) for x in t.graph_nodes(g)])
    t.gallocr_alloc_graph(t.gallocr_new(), talloc, g)
    return ts, u


@check("ALLOC-6", "ALLOC-26", "ALLOC-7", size=st.just(352))
def a_range_freed_before_the_last_joins_it(t: Target, rec: Recorder, size: int) -> None:
    """A 352-byte buffer (alignment 1): t0 .. t4 (64 bytes each) placed side by side, 32 bytes
    left at the end. A graph frees t0 and t1 (one free range of 128 bytes), then t3, then t4
    (their readers are placed elsewhere before): t3's range, the second to last of the free
    list, extended by t4's, reaches the range at the buffer's end and joins it into one of 160
    bytes (ALLOC-6); then it places u of 160 bytes, which fits there (ALLOC-26) and in no other
    free range: u is placed at t3's old address, no abort (ALLOC-7) (ggml-alloc.c:183, the
    join with the next range skipped for the second to last one, survived a mutation run)
    (deterministic)."""
    ts, u = _free_in_order_then_place(t, rec, size, 5, (0, 1, 3, 4), 40)
    rec("u at t3's old address", t.tensor_data(u) == t.tensor_data(ts[3]))


def _claims_rc8_placement(t: Target) -> bool:
    """ALLOC-27: whether the run's profile (make_target's `run_profile`; a reference made
    elsewhere: its own, any other target: its default) is rc8."""
    world = getattr(t, "world", None)
    profile = getattr(t, "run_profile", None) or (world.profile if world is not None else t.default_profile)
    return profile is Profile.RC8


@check("ALLOC-27", "ALLOC-6", size=st.just(320))
def rc8_takes_the_later_of_equal_ranges(t: Target, rec: Recorder, size: int) -> None:
    """A 320-byte buffer (alignment 1): t0 .. t3 (64 bytes each) placed side by side; a graph
    frees t0 and t2 (their readers are placed elsewhere before) and then places u (64 bytes),
    which fits both freed ranges and the 64 bytes left at the end. Whether u was placed is
    recorded always; where (t0's or t2's old address) only under profile rc8, where rc.8's
    placement is the rule (ALLOC-27: rc.8 takes the later of two equally small ranges)
    (deterministic)."""
    ts, u = _free_in_order_then_place(t, rec, size, 4, (0, 2), 16, record_nodes=False)
    rec("u placed", t.tensor_data(u) is not None)
    if _claims_rc8_placement(t):
        rec("u at the old address of", [t.tensor_name(x) for x in ts if t.tensor_data(x) == t.tensor_data(u)])


@check("ALLOC-9", placement=placements, specs=_tensor_lists(), later=_tensor_lists(max_size=3), measure=st.booleans())
def reset_keeps_max_size(t: Target, rec: Recorder, placement: Placement, specs: list[TensorSpec],
                         later: list[TensorSpec], measure: bool) -> None:
    """tallocr_reset frees the whole buffer (tensors keep their stale data), resets the buffer
    unless measuring, and does not lower max_size; tallocr_free(NULL) does nothing."""
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    align = t.buft_get_alignment(buft)
    size = sum(round_up(alloc_size(s, placement), align) for s in specs + later) + align
    talloc = t.tallocr_new_measure_from_buft(buft) if measure else t.tallocr_new_from_buft(buft, size)
    buf = t.tallocr_get_buffer(talloc)
    rec("measuring", t.tallocr_is_measure(talloc))
    first = [t.new_tensor(s.type, s.ne, f"t{i}") for i, s in enumerate(specs)]
    for x in first:
        t.tallocr_alloc(talloc, x)
    before = t.tallocr_max_size(talloc)
    data = [t.tensor_data(x) for x in first]
    t.tallocr_reset(talloc)
    rec("max_size kept", t.tallocr_max_size(talloc) == before)
    rec("data kept", [t.tensor_data(x) for x in first] == data)
    if _is_vdev(placement):
        rec("calls (init_tensor, reset)", mock_reading(lambda: t.vdev_counters(buf)))
    again = [t.new_tensor(s.type, s.ne, f"u{i}") for i, s in enumerate(later)]
    for x in again:
        t.tallocr_alloc(talloc, x)
    if measure:
        rec("max_size after", t.tallocr_max_size(talloc) == max(before, _highest_end(t, buf, again, align)))
    else:
        rec("ranges after reset", _ranges_ok(t, buf, again, align))
    t.tallocr_free(None)
    t.tallocr_free(talloc)


# --- the graph allocator ----------------------------------------------------------------------


def _graph_allocation(t: Target, placement: Placement, spec: GraphSpec, preplace: frozenset[int],
                      order_kind: str = "none", replace_seq: bool = False,
                      ) -> tuple[Handle, Handle, list[str], list[int], dict[str, Handle], bool]:
    """Build `spec` on the placement's backend (weights in a buffer of their own), place the
    chosen inputs first with tallocr_alloc, then the graph with gallocr_alloc_graph over a
    buffer that holds everything at once. Returns the graph, the buffer, the names placed
    before the run, the parse sequence, the tensors by name and whether gallocr_alloc_graph
    returned tallocr_max_size (ALLOC-11). With `replace_seq`, a first parse sequence is set and
    then replaced by the real one (ALLOC-10)."""
    backend = backend_for(t, placement)
    built = build_graph(t, spec, backend)
    buft = t.backend_get_default_buffer_type(backend)
    talloc = t.tallocr_new_from_buft(buft, room_for(t, spec, built, buft))
    buf = t.tallocr_get_buffer(talloc)
    before = [n for i, n in enumerate(inputs(spec)) if i in preplace]
    for name in before:
        t.tallocr_alloc(talloc, built.tensors[name])
    galloc = t.gallocr_new()
    order = parse_sequence(len(t.graph_nodes(built.graph)), order_kind)
    if replace_seq:
        t.gallocr_set_parse_seq(galloc, [0])
    if order or replace_seq:
        t.gallocr_set_parse_seq(galloc, order)
    returned = t.gallocr_alloc_graph(galloc, talloc, built.graph) == t.tallocr_max_size(talloc)
    t.gallocr_free(galloc)  # the placement stays: it lives in the buffer, not in the allocator
    return built.graph, buf, before, order, built.tensors, returned


preplaced = st.frozensets(st.integers(0, 5), max_size=3)


@check(*INVARIANTS, placement=placements, spec=small_graphs(), preplace=preplaced)
def placement_keeps_the_invariants(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec,
                                   preplace: frozenset[int]) -> None:
    """On the target's own placement: blocks aligned and inside the buffer (ALLOC-17), blocks
    live at the same time disjoint (ALLOC-18), outputs never handed out again (ALLOC-19)."""
    g, buf, before, order, _, _ = _graph_allocation(t, placement, spec, preplace)
    rec("problems", problems(allocation_record(t, g, buf, before, order), INVARIANTS))


@check("ALLOC-10", "ALLOC-11", placement=placements, spec=small_graphs(), seq=st.sampled_from(["each", "end", "pairs"]),
       replace_seq=st.booleans(), preplace=preplaced)
def parse_sequences(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec, seq: str, replace_seq: bool,
                    preplace: frozenset[int]) -> None:
    """A parse sequence (replacing an earlier one) is the placement order, frees happen at its
    barriers; every tensor gets memory and the invariants hold by segment."""
    g, buf, before, order, _, returned = _graph_allocation(t, placement, spec, preplace, seq, replace_seq)
    rec("returns max_size", returned)
    rec("all placed", sorted(n for n, x in graph_tensors(t, g).items() if t.tensor_data(x) is None))
    rec("problems", problems(allocation_record(t, g, buf, before, order), INVARIANTS))
    t.gallocr_free(None)


@check("ALLOC-11", "ALLOC-12", "ALLOC-16", placement=placements, spec=small_graphs(), preplace=preplaced)
def in_place_nodes_become_views(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec,
                                preplace: frozenset[int]) -> None:
    """Which tensors get memory, which become views (view ops, and element-wise nodes computed
    in place over a source with no other reader), of what, in which buffer; views at their
    source's data + view_offs; how often the buffer's init_tensor runs."""
    g, buf, before, order, tensors, returned = _graph_allocation(t, placement, spec, preplace)
    rec("returns max_size", returned)
    weights = [b for b in (t.tensor_buffer(tensors[leaf.name]) for leaf in spec.leafs if leaf.place >= 0) if b is not None]
    for name, x in sorted(graph_tensors(t, g).items()):
        vs = t.tensor_view_src(x)
        b = t.tensor_buffer(x)
        where = "allocator" if b == buf else "weights" if any(b == w for w in weights) else None if b is None else "other"
        rec(name, (t.tensor_data(x) is not None, None if vs is None else t.tensor_name(vs), where))
    rec("problems", problems(allocation_record(t, g, buf, before, order), ("ALLOC-16",)))
    if _is_vdev(placement):
        rec("init_tensor calls", mock_reading(lambda: t.vdev_counters(buf)[0]))


@check("ALLOC-20", placement=placements, spec=small_graphs(), preplace=preplaced)
def inputs_are_not_overwritten(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec,
                               preplace: frozenset[int]) -> None:
    """An input the run places must not share bytes with a block live before its last reader
    (the caller writes it before computing). rc.8 places inputs lazily: erratum ALLOC-20, the
    same list of problems as the reference under rc8, none under fixed."""
    g, buf, before, order, _, _ = _graph_allocation(t, placement, spec, preplace)
    rec("problems", problems(allocation_record(t, g, buf, before, order), ("ALLOC-20",), inputs_from_start=True))


@check("ALLOC-21", "ALLOC-3", "ALLOC-7", placement=placements, spec=small_graphs(), seq=seq_kinds,
       same_galloc=st.booleans())
def measured_size_suffices(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec, seq: str,
                           same_galloc: bool) -> None:
    """Measure a graph with a measuring allocator of the buffer type, then place a rebuild of it
    in a buffer of exactly the measured size: no abort, every tensor placed, the invariants hold.
    rc.8 can run out of space there (erratum ALLOC-7: under rc8 the reference aborts too)."""
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    first = build_graph(t, spec, backend)
    measure = t.tallocr_new_measure_from_buft(buft)
    galloc = t.gallocr_new()
    order = parse_sequence(len(t.graph_nodes(first.graph)), seq)
    if order:
        t.gallocr_set_parse_seq(galloc, order)
    size = t.gallocr_alloc_graph(galloc, measure, first.graph)
    rec("measuring", t.tallocr_is_measure(measure))
    rec("returns max_size", size == t.tallocr_max_size(measure))
    if _is_vdev(placement):
        rec("measure buffer calls (init_tensor, reset)", mock_reading(lambda: t.vdev_counters(t.tallocr_get_buffer(measure))))
    second = build_graph(t, spec, backend)
    real = t.tallocr_new_from_buft(buft, size)
    if not same_galloc:
        galloc = t.gallocr_new()
        if order:
            t.gallocr_set_parse_seq(galloc, order)
    t.gallocr_alloc_graph(galloc, real, second.graph)
    buf = t.tallocr_get_buffer(real)
    rec("all placed", sorted(n for n, x in graph_tensors(t, second.graph).items() if t.tensor_data(x) is None))
    rec("problems", problems(allocation_record(t, second.graph, buf, (), order), INVARIANTS))
    t.tallocr_free(measure)


@check("ALLOC-13", placement=placements, spec=small_graphs(max_nodes=6),
       sizes=st.lists(st.sampled_from([64, 256, 2048]), min_size=1, max_size=3), shared=st.booleans())
def one_graph_allocator_many_graphs(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec,
                                    sizes: list[int], shared: bool) -> None:
    """One graph allocator places rebuilds of a graph at several graph sizes (its table grows,
    every count starts at 0); with `shared`, then a small graph whose in-place nodes read the
    first graph's inputs, one each. rc.8 sees stale entries after a larger graph (erratum
    ALLOC-13): an input whose slot lies beyond the part rc.8 clears is found with the counts
    of the earlier graph. That shows only where those counts differ from fresh ones (an input
    still viewed by a live output of the earlier graph refuses the in-place reuse), and where
    a slot lies depends on the input's address, so every input is read. deterministic.py's
    example gives every input such a view, which makes it reach the erratum whatever the
    addresses; a drawn graph may not."""
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    galloc = t.gallocr_new()
    talloc: Handle | None = None
    first_inputs: list[Handle] = []
    for k, size in enumerate(sizes):
        built = build_graph(t, replace(spec, graph_size=size), backend)
        if talloc is None:  # one allocator with room for every graph
            talloc = t.tallocr_new_from_buft(buft, (len(sizes) + 1) * room_for(t, spec, built, buft))
            first_inputs = [built.tensors[name] for name in inputs(spec)]
        t.gallocr_alloc_graph(galloc, talloc, built.graph)
        for name, x in sorted(graph_tensors(t, built.graph).items()):
            vs = t.tensor_view_src(x)
            rec(f"graph {k}: {name}", (t.tensor_data(x) is not None, None if vs is None else t.tensor_name(vs)))
        rec(f"graph {k} problems", problems(allocation_record(t, built.graph, t.tallocr_get_buffer(talloc)), INVARIANTS))
    if shared and first_inputs and talloc is not None:
        g = t.new_graph(64)
        zs = []
        for i, x in enumerate(first_inputs):
            z = t.op("scale", [x], [0.5])
            t.set_name(z, "z" if i == 0 else f"z{i}")
            t.build_forward_expand(g, z)
            zs.append(z)
        t.gallocr_alloc_graph(galloc, talloc, g)
        for z in zs:
            vs = t.tensor_view_src(z)
            rec(t.tensor_name(z), (t.tensor_data(z) is not None, None if vs is None else t.tensor_name(vs)))


@check("ALLOC-14", "ALLOC-11", placement=placements, spec=small_graphs(), split=st.booleans())
def alloc_graph_n_uses_the_tables(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec, split: bool) -> None:
    """gallocr_alloc_graph_n takes each tensor's allocator from the caller's table: with
    `split`, the inputs from one allocator and everything else from another."""
    backend = backend_for(t, placement)
    built = build_graph(t, spec, backend)
    buft = t.backend_get_default_buffer_type(backend)
    room = room_for(t, spec, built, buft)
    talloc_nodes = t.tallocr_new_from_buft(buft, room)
    talloc_inputs = t.tallocr_new_from_buft(buft, room) if split else talloc_nodes
    names = set(inputs(spec))
    tensors = graph_tensors(t, built.graph)
    pairs = [(x, talloc_inputs if n in names else talloc_nodes) for n, x in tensors.items()]
    n_graph = len(t.graph_nodes(built.graph)) + len(t.graph_leafs(built.graph))
    t.gallocr_alloc_graph_n(t.gallocr_new(), built.graph, max(n_graph, len(pairs)) * 2, pairs)
    bufs = {id(ta): t.tallocr_get_buffer(ta) for ta in (talloc_nodes, talloc_inputs)}
    for name, x in sorted(tensors.items()):
        vs = t.tensor_view_src(x)
        expect = talloc_inputs if name in names else talloc_nodes
        rec(name, (t.tensor_data(x) is not None, None if vs is None else t.tensor_name(vs),
                   t.tensor_buffer(x) == bufs[id(expect)] if not any(leaf.name == name and leaf.place >= 0
                                                                     for leaf in spec.leafs) else "weights"))
    for label, ta in (("nodes", talloc_nodes), ("inputs", talloc_inputs)) if split else (("all", talloc_nodes),):
        rec(f"problems ({label})", problems(allocation_record(t, built.graph, t.tallocr_get_buffer(ta)), INVARIANTS))


@check("ALLOC-14", placement=placements, spec=small_graphs(max_nodes=4))
def alloc_graph_n_table_too_small(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec) -> None:
    """A hash set with fewer slots than n_nodes + n_leafs (the largest table size below it)."""
    backend = backend_for(t, placement)
    built = build_graph(t, spec, backend)
    n = len(t.graph_nodes(built.graph)) + len(t.graph_leafs(built.graph))
    if n < 3:  # no prime below 2: one input more
        extra = t.new_tensor(int(GGMLType.F32), (4,), "extra")
        y = t.op("add", [extra, extra], [])
        t.set_name(y, "extra sum")
        t.build_forward_expand(built.graph, y)
        n = len(t.graph_nodes(built.graph)) + len(t.graph_leafs(built.graph))
    asked = next(k for k in range(n - 1, 0, -1) if hash_size(k) < n)  # hash_set_new rounds up to a prime
    t.gallocr_alloc_graph_n(t.gallocr_new(), built.graph, asked, [])


@check("ALLOC-15", placement=placements, spec=tensor_specs(max_dims=2), parse=st.booleans())
def view_of_nothing(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, parse: bool) -> None:
    """A view node whose view_src nobody places (not in the graph: its source slot cleared)."""
    backend = backend_for(t, placement)
    root = t.new_tensor(spec.type, spec.ne, "root")
    v = t.view(root, (spec.ne[0],), (), 0)
    t.set_name(v, "v")
    t.set_op(v, int(Op.VIEW), [None])
    g = t.new_graph(64)
    t.build_forward_expand(g, v)
    galloc = t.gallocr_new()
    if parse:
        t.gallocr_set_parse_seq(galloc, [0, -1])
    t.gallocr_alloc_graph(galloc, t.tallocr_new_from_backend(backend, 4096), g)


# --- the legacy API and alloc_ctx_tensors ----------------------------------------------------


@check("ALLOC-22", "ALLOC-7", placement=placements, spec=small_graphs(),
       how=st.sampled_from(["memory", "buffer", "backend"]), seq=seq_kinds)
def legacy_allocr(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec, how: str, seq: str) -> None:
    """allocr_* measure a graph and place a rebuild of it as the tallocr / gallocr pair does:
    measured size suffices (but see erratum ALLOC-7), every tensor placed, the invariants hold;
    allocr_free(NULL)."""
    if how == "memory":
        placement = Placement("cpu")
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    first = build_graph(t, spec, backend)
    measure = (t.allocr_new_measure(t.buft_get_alignment(buft)) if how == "memory"
               else t.allocr_new_measure_from_backend(backend))
    rec("measuring", t.allocr_is_measure(measure))
    order = parse_sequence(len(t.graph_nodes(first.graph)), seq)
    if order:
        t.allocr_set_parse_seq(measure, order)
    size = t.allocr_alloc_graph(measure, first.graph)
    rec("returns max_size", size == t.allocr_max_size(measure))
    second = build_graph(t, spec, backend)
    align = t.buft_get_alignment(buft)
    if how == "memory":
        mem = t.host_alloc(size + align)
        alloc = t.allocr_new(mem, size + align, align)
    elif how == "buffer":
        alloc = t.allocr_new_from_buffer(t.backend_alloc_buffer(backend, size))
    else:
        alloc = t.allocr_new_from_backend(backend, size)
    if order:
        t.allocr_set_parse_seq(alloc, order)
    rec("not measuring", t.allocr_is_measure(alloc))
    t.allocr_alloc_graph(alloc, second.graph)
    buf = t.allocr_get_buffer(alloc)
    rec("all placed", sorted(n for n, x in graph_tensors(t, second.graph).items() if t.tensor_data(x) is None))
    rec("problems", problems(allocation_record(t, second.graph, buf, (), order), INVARIANTS))
    t.allocr_reset(alloc)
    extra = t.new_tensor(int(GGMLType.F32), (4,), "extra")
    t.allocr_alloc(alloc, extra)
    rec("placed after reset", t.tensor_buffer(extra) == buf)
    t.allocr_free(None)
    t.allocr_free(measure)
    t.allocr_free(alloc)


@st.composite
def _context_contents(draw: st.DrawFn) -> tuple[list[TensorSpec], list[tuple[int, ViewSpec]], bool]:
    roots = draw(st.lists(tensor_specs(max_dims=3, max_ne=5), min_size=0, max_size=4), label="roots")
    views: list[tuple[int, ViewSpec]] = []
    for i, r in enumerate(roots):
        for _ in range(draw(st.integers(0, 2), label=f"views of root {i}")):
            views.append((i, draw(view_specs(r), label="view")))
    return roots, views, draw(st.booleans(), label="a root placed elsewhere first")


@check("ALLOC-23", placement=placements, contents=_context_contents(), via_backend=st.booleans())
def alloc_ctx_tensors_places_everything(t: Target, rec: Recorder, placement: Placement,
                                        contents: tuple[list[TensorSpec], list[tuple[int, ViewSpec]], bool],
                                        via_backend: bool) -> None:
    """One buffer of the summed aligned alloc sizes for every tensor without data (NULL when
    there is none), each placed aligned and apart; views (also of a root placed elsewhere
    before they were made) view_init'ed on the new buffer at their root's data + offset."""
    roots_spec, views_spec, elsewhere = contents
    backend = backend_for(t, placement)
    buft = t.backend_get_default_buffer_type(backend)
    roots = [t.new_tensor(s.type, s.ne, f"r{i}") for i, s in enumerate(roots_spec)]
    if elsewhere and roots:
        other = t.backend_alloc_buffer(backend, alloc_size(roots_spec[0], placement))
        t.tensor_alloc(other, roots[0], 0)
    views = [(i, view_of(t, roots[i], v)) for i, v in views_spec]
    buf = t.backend_alloc_ctx_tensors(backend) if via_backend else t.backend_alloc_ctx_tensors_from_buft(buft)
    rec("buffer", None if buf is None else (t.buffer_get_size(buf), t.buffer_get_type(buf) == buft))
    if buf is None:
        return
    placed = roots[1:] if elsewhere else roots
    rec("ranges", _ranges_ok(t, buf, placed, t.buft_get_alignment(buft)))
    for i, v in views:
        root_data = t.tensor_data(roots[i])
        rec("view", (t.tensor_buffer(v) == buf, root_data is not None
                     and t.tensor_data(v) == root_data + t.tensor_info(v).view_offs))
    if _is_vdev(placement):
        rec("init_tensor calls", mock_reading(lambda: t.vdev_counters(buf)[0]))


@check("ALLOC-24", spec=tensor_specs(), via_backend=st.booleans())
def alloc_ctx_tensors_of_an_allocating_context(t: Target, rec: Recorder, spec: TensorSpec, via_backend: bool) -> None:
    t.new_host_tensor(spec.type, spec.ne, "context tensor")
    if via_backend:
        t.backend_alloc_ctx_tensors(t.cpu_init(), host=True)
    else:
        t.backend_alloc_ctx_tensors_from_buft(t.cpu_buffer_type(), host=True)



@check("TDATA-14", "ALLOC-23", placement=placements, root=tensor_specs(max_dims=2), later=tensor_specs(max_dims=2))
def alloc_ctx_tensors_twice(t: Target, rec: Recorder, placement: Placement, root: TensorSpec, later: TensorSpec) -> None:
    """A second alloc_ctx_tensors on a context with a view placed by the first: nothing new to
    place returns NULL; a new tensor makes it view_init the old view again, which aborts."""
    backend = backend_for(t, placement)
    r = t.new_tensor(root.type, root.ne, "root")
    t.view(r, (root.ne[0],), (), 0)
    rec("first", t.backend_alloc_ctx_tensors(backend) is not None)
    rec("nothing new", t.backend_alloc_ctx_tensors(backend) is None)
    t.new_tensor(later.type, later.ne, "later")
    t.backend_alloc_ctx_tensors(backend)


# --- a CPU buffer's spare bytes (CPU-4) are not promised space ----------------------------------


@check("ALLOC-7", "CPU-4", pinned_at_measure=st.sampled_from([True, False]))
def cpu_spare_bytes_after_a_compute(t: Target, rec: Recorder, pinned_at_measure: bool) -> None:
    """[device, CPU], x a CPU weight, a = 2x, b = 3a. Measured with `a` pinned to the device,
    nothing lands on the CPU (its buffer: the 64 spare bytes of CPU-4 only); the next graph,
    unpinned, puts a and b on the CPU without a new measure. Whether a's 64 bytes fit in those
    spare bytes depends on where malloc put the buffer (ALLOC-7: undefined; the real builds
    abort, needing 64 with 16 left). Measured unpinned, the same graph fits (ALLOC-21)."""
    from .sched import F32, compute, make_backends, measure, plan, record_outputs

    backends = make_backends(t, SchedSetup((VDevParams(name=DEVICE_NAMES[0]),)))
    spec = SchedSpec((Leaf("x", F32, (4, 2), 1, weights=True, seed=8),),
                     (Node("a", "scale", ("x",), (2.0,)), Node("b", "scale", ("a",), (3.0,))), ("b",))
    g = SchedGraph(spec)
    pinned = replace(g, assign=(("a", 0),))
    run = measure(t, backends, pinned if pinned_at_measure else g)
    if pinned_at_measure:  # without a CPU tensor the measured size does not depend on malloc's address
        rec("CPU buffer size", t.buffer_get_size(t.sched_get_buffer(run.sched, backends[1])))
        compute(t, run, pinned)
        rec("nodes pinned", plan(t, run).nodes)
    nxt = build(t, spec, backends, weights_apart=True)
    t.sched_graph_compute(run.sched, nxt.graph)
    run.built = nxt
    rec("nodes", plan(t, run).nodes)
    record_outputs(t, rec, spec, nxt, backends)
    t.sched_free(run.sched)


# --- releasing memory (ALLOC-25) ----------------------------------------------------------------


def _placed_chain(t: Target) -> tuple[Handle, list[Handle]]:
    """x -> a = scale(x) -> b = add(a, x) -> c = cont(b), placed once by a measuring allocator
    that is never freed: the graph and its tensors, which later graph allocators find placed."""
    x = t.new_tensor(int(GGMLType.F32), (16,), "x")
    a = t.op("scale", [x], [2.0])
    b = t.op("add", [a, x], [])
    c = t.op("cont", [b], [])
    for y, name in ((a, "a"), (b, "b"), (c, "c")):
        t.set_name(y, name)
    g = t.new_graph(64)
    t.build_forward_expand(g, c)
    t.gallocr_alloc_graph(t.gallocr_new(), t.tallocr_new_measure(64), g)
    return g, list(graph_tensors(t, g).values())


@check("ALLOC-25", rounds=st.just(1))
def freeing_allocators_releases_their_memory(t: Target, rec: Recorder, rounds: int) -> None:
    """A round: a measuring tensor allocator and a graph allocator are made, given a parse
    sequence, run over an already placed graph by gallocr_alloc_graph (its own key table) and then
    by gallocr_alloc_graph_n (the caller's table, which replaces it), and freed; then a measuring
    legacy allocr is made, run over the graph and freed; then a tensor allocator that owns a
    4096-byte CPU buffer is made and freed. Done once through
    the adapter; then, on a C target, many rounds through its C functions: the heap must not grow
    with the rounds (deterministic)."""
    from ._leaks import leaks

    g, tensors = _placed_chain(t)
    buft = t.cpu_buffer_type()
    order = parse_sequence(len(t.graph_nodes(g)), "each")
    hash_size = t.graph_info(g).hash_size
    for _ in range(rounds):
        talloc = t.tallocr_new_measure(64)
        galloc = t.gallocr_new()
        t.gallocr_set_parse_seq(galloc, order)
        t.gallocr_alloc_graph(galloc, talloc, g)
        t.gallocr_alloc_graph_n(galloc, g, hash_size, [(x, talloc) for x in tensors])
        t.gallocr_free(galloc)
        t.tallocr_free(talloc)
        legacy = t.allocr_new_measure(64)
        t.allocr_alloc_graph(legacy, g)
        t.allocr_free(legacy)
        t.tallocr_free(t.tallocr_new_from_buft(buft, 4096))

    def make_round(c: Callable[[str], Any]) -> Callable[[], None]:
        ct: Any = t  # a C target: its cffi module and prefix
        seq = ct.ffi.new("int[]", order)
        hs = c("hash_set_new")(hash_size)  # the caller's table, made once (kept for the process)
        table = ct.ffi.new(f"{ct.p}tallocr_t[]", int(hs.size))
        slots = [int(c("hash_find_or_insert")(hs, x)) for x in tensors]
        new_measure, new_from_buft, talloc_free = c("tallocr_new_measure"), c("tallocr_new_from_buft"), c("tallocr_free")
        allocr_new, allocr_graph, allocr_free = c("allocr_new_measure"), c("allocr_alloc_graph"), c("allocr_free")
        new, set_seq, alloc_graph, alloc_graph_n, free = (c("gallocr_new"), c("gallocr_set_parse_seq"),
                                                          c("gallocr_alloc_graph"), c("gallocr_alloc_graph_n"),
                                                          c("gallocr_free"))

        def one_round() -> None:
            talloc = new_measure(64)
            for s in slots:
                table[s] = talloc
            galloc = new()
            set_seq(galloc, seq, len(order))
            alloc_graph(galloc, talloc, g)
            alloc_graph_n(galloc, g, hs, table)
            free(galloc)
            talloc_free(talloc)
            legacy = allocr_new(64)
            allocr_graph(legacy, g)
            allocr_free(legacy)
            talloc_free(new_from_buft(buft, 4096))  # it owns its buffer (ALLOC-2)

        return one_round

    rec("the heap grows with the rounds", leaks(t, make_round))


@example(length=4, view=True, alignment=32, barriers=False)
@example(length=3, view=False, alignment=64, barriers=True)
@check("ALLOC-26", "ALLOC-11", "ALLOC-10", length=st.integers(2, 6), view=st.booleans(),
       alignment=st.sampled_from([16, 32, 64]), barriers=st.booleans())
def released_memory_is_used_again(t: Target, rec: Recorder, length: int, view: bool, alignment: int,
                                  barriers: bool) -> None:
    """A chain x -> n0 = cont(x) -> [v = reshape(n0) ->] n1 = cont(..) -> ... of `length` nodes,
    all F32 of 24 elements (96 bytes), measured by a graph allocator (with `barriers`, given a
    parse sequence with a barrier after every node) over tallocr_new_measure(alignment) (its
    base, 0x1000, is aligned): max_size is two blocks whatever the length (deterministic
    examples with and without the view and the barriers). Recorded in whole blocks, so that
    the tenth later versions add to max_size (ALLOC-9) is not taken for a third block."""
    x = t.new_tensor(int(GGMLType.F32), (24,), "x")
    prev = x
    g = t.new_graph(64)
    for i in range(length):
        src = prev
        if view and i == 1:
            src = t.op("reshape", [prev], [4, 6])
            t.set_name(src, "v")
        prev = t.op("cont", [src], [])
        t.set_name(prev, f"n{i}")
    t.build_forward_expand(g, prev)
    galloc = t.gallocr_new()
    if barriers:
        t.gallocr_set_parse_seq(galloc, parse_sequence(len(t.graph_nodes(g)), "each"))
    size = t.gallocr_alloc_graph(galloc, t.tallocr_new_measure(alignment), g)
    rec("whole blocks in max_size", size // round_up(96, alignment))  # a later margin of a tenth (ALLOC-9) stays below 3


@check("ALLOC-27", "ALLOC-6", size=st.just(464))
def rc8_takes_the_smallest_fitting_range(t: Target, rec: Recorder, size: int) -> None:
    """A 464-byte buffer (alignment 1): t0 (96 bytes), t2 (32), t4 (64) and t6 (80), each
    followed by a kept 16-byte tensor, then 128 bytes free at the end. A graph frees t0, t2, t4
    and t6 (their readers are placed elsewhere before; the kept tensors keep the ranges apart),
    then places u (64 bytes). The free ranges are 96, 32, 64, 80 and the last (128): first fit
    takes t0's, best fit t4's, the later fit t6's, the last range its own. Whether u was placed
    is recorded always; where, only under profile rc8 (ALLOC-27: the smallest range other than
    the last that fits, t4's) (deterministic; the equal-size case is
    rc8_takes_the_later_of_equal_ranges)."""
    f32 = int(GGMLType.F32)
    cpu = t.cpu_init()
    talloc = t.tallocr_new(t.host_alloc(size), size, 1)
    layout = ((0, 96), (1, 16), (2, 32), (3, 16), (4, 64), (5, 16), (6, 80), (7, 16))
    ts = {}
    for i, nbytes in layout:
        x = t.new_tensor(f32, (nbytes // 4,), f"t{i}" if i % 2 == 0 else f"k{i}")
        t.tallocr_alloc(talloc, x)
        ts[i] = x
    freed = (0, 2, 4, 6)
    q = t.new_tensor(f32, (16,), "q")
    readers = [t.op("cont", [ts[i]], []) for i in freed]
    u = t.op("cont", [q], [])
    elsewhere = t.backend_alloc_buffer(cpu, sum(n for i, n in layout if i in freed) + 64)
    offset = 0
    for x, name in zip((*readers, q), (*(f"y{i}" for i in freed), "q"), strict=True):
        t.set_name(x, name)
        t.tensor_alloc(elsewhere, x, offset)  # placed before: the walk leaves them alone
        offset += t.nbytes(x)
    t.set_name(u, "u")
    g = t.new_graph(64)
    for x in (*readers, u):
        t.build_forward_expand(g, x)
    t.gallocr_alloc_graph(t.gallocr_new(), talloc, g)
    rec("u placed", t.tensor_data(u) is not None)
    rec("kept tensors untouched", [t.tensor_name(ts[i]) for i in (1, 3, 5, 7) if t.tensor_data(ts[i]) is not None])
    if _claims_rc8_placement(t):
        rec("u at the old address of", [t.tensor_name(ts[i]) for i in freed if t.tensor_data(ts[i]) == t.tensor_data(u)])


@example(own=False)
@example(own=True)
@check("ALLOC-12", "ALLOC-16", own=st.booleans())
def in_place_skips_a_view_of_another_buffer(t: Target, rec: Recorder, own: bool) -> None:
    """x (16 floats) lives in another CPU buffer than the allocator's (`own` false) or was placed
    by the allocator itself (`own` true); the graph is v = view(x) (offset 0), n = scale(v). The
    allocator initialises v as a view in its own buffer (ALLOC-16: data x's, buffer the
    allocator's, whatever x's buffer). n could take v's memory in place (one consumer, no views,
    same layout), but only when the allocator owns v — v's buffer and its root's are the
    allocator's (ALLOC-12): with x elsewhere n gets memory of its own in the allocator's buffer,
    with x the allocator's n becomes a view of x (deterministic)."""
    f32 = int(GGMLType.F32)
    cpu = t.cpu_init()
    talloc = t.tallocr_new_from_backend(cpu, 1024)
    mine = t.tallocr_get_buffer(talloc)
    x = t.new_tensor(f32, (16,), "x")
    if own:
        t.tallocr_alloc(talloc, x)
    else:
        t.tensor_alloc(t.backend_alloc_buffer(cpu, 64), x, 0)
    v = t.view(x, (16,), (), 0)
    t.set_name(v, "v")
    n = t.op("scale", [v], [0.5])
    t.set_name(n, "n")
    g = t.new_graph(16)
    t.build_forward_expand(g, n)
    t.gallocr_alloc_graph(t.gallocr_new(), talloc, g)
    rec("v shares x's data", t.tensor_data(v) == t.tensor_data(x))
    rec("v's buffer is the allocator's", t.tensor_buffer(v) == mine)
    vs = t.tensor_view_src(n)
    rec("n's view_src", None if vs is None else t.tensor_name(vs))
    rec("n shares x's data", t.tensor_data(n) == t.tensor_data(x))
    rec("n's buffer is the allocator's", t.tensor_buffer(n) == mine)


@example(alignment=64, base_offset=16)
@check("ALLOC-2", "ALLOC-6", "ALLOC-7", alignment=st.sampled_from([32, 64, 256]),
       base_offset=st.sampled_from([4, 16, 48]))
def tallocr_over_a_misaligned_base(t: Target, rec: Recorder, alignment: int, base_offset: int) -> None:
    """A virtual device whose buffers' bases lie `base_offset` bytes past a page boundary (so
    `alignment` does not divide them): a tensor allocator from a 4·alignment-byte buffer has
    its first aligned address `alignment - base_offset` bytes in, and that much less room
    (ALLOC-6: ranges count from the first aligned address). Three tensors of `alignment` bytes
    fill the room (offsets, max_size); a fourth does not fit, and rc.8 aborts "not enough
    space" (ALLOC-7) — an allocator that forgets the offset places it past the buffer's end
    (deterministic for each pair)."""
    f32 = int(GGMLType.F32)
    dev = t.vdev_init(VDevParams(name="Odd", alignment=alignment, base_offset=base_offset))
    buf = t.backend_alloc_buffer(dev, 4 * alignment)
    rec("base misaligned by", t.buffer_get_base(buf) % alignment)
    talloc = t.tallocr_new_from_buffer(buf)
    for i in range(3):
        x = t.new_tensor(f32, (alignment // 4,), f"x{i}")
        t.tallocr_alloc(talloc, x)
        rec(f"x{i} at", t.tensor_info(x).data_offset)
    rec("max_size", t.tallocr_max_size(talloc))
    last = t.new_tensor(f32, (alignment // 4,), "x3")
    t.tallocr_alloc(talloc, last)  # ALLOC-7: no room left
    rec("x3 at", t.tensor_info(last).data_offset)


@example(small=4, large=600)
@check("ALLOC-13", "ALLOC-11", small=st.integers(1, 8), large=st.integers(200, 700))
def one_graph_allocator_then_a_larger_graph(t: Target, rec: Recorder, small: int, large: int) -> None:
    """One graph allocator places a chain of `small` CONT nodes in a graph of 16 slots, then a
    chain of `large` nodes in a graph of 2048: its tables must grow to the larger visited set
    (ALLOC-13; an allocator that kept the first tables writes past them). Both chains are
    placed whole, each node released once its reader is placed (ALLOC-11), so max_size stays
    under four nodes' worth (deterministic)."""
    f32 = int(GGMLType.F32)
    cpu = t.cpu_init()
    talloc = t.tallocr_new_from_backend(cpu, 64 * 1024)
    galloc = t.gallocr_new()
    for k, (n, size) in enumerate(((small, 16), (large, 2048))):
        x = t.new_tensor(f32, (16,), f"x{k}")
        t.tensor_alloc(t.backend_alloc_buffer(cpu, 64), x, 0)
        chain = []
        prev = x
        for i in range(n):
            prev = t.op("cont", [prev], [])
            t.set_name(prev, f"g{k}n{i}")
            chain.append(prev)
        g = t.new_graph(size)
        t.build_forward_expand(g, prev)
        t.gallocr_alloc_graph(galloc, talloc, g)
        rec(f"graph {k}: unplaced", [t.tensor_name(y) for y in chain if t.tensor_data(y) is None])
        rec(f"graph {k}: views", [t.tensor_name(y) for y in chain if t.tensor_view_src(y) is not None])
    rec("max_size under four nodes' worth", t.tallocr_max_size(talloc) < 4 * 64)
