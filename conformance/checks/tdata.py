"""TDATA: tensor_set / tensor_get and their async forms, view_init and tensor_alloc."""

from __future__ import annotations

from dataclasses import replace

from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import CHECKS, Recorder, Scenario, check, check_name, example, mock_reading
from ..inputs.strategies import Placement, TensorSpec, ViewSpec, placements, tensor_specs
from ..target import Handle, Target, VDevParams
from ._setup import alloc_size, async_scene, backend_for, placed, view_of

ranges = st.tuples(st.integers(0, 1 << 16), st.integers(0, 1 << 16))


def _in_bounds(n: int, draw: tuple[int, int]) -> tuple[int, int]:
    """An (offset, size) pair with offset + size <= n, from two free integers."""
    a, b = draw
    offset = a % (n + 1)
    size = b % (n - offset + 1)
    return offset, size


@check("TDATA-4", placement=placements, spec=tensor_specs(), rng=ranges, data=st.binary(min_size=0, max_size=4096))
def set_writes_the_range(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec,
                         rng: tuple[int, int], data: bytes) -> None:
    """tensor_set changes exactly bytes [offset, offset + size) of the tensor, nothing else."""
    _, buf, tensor = placed(t, placement, spec, slack=8)
    t.buffer_clear(buf, 0xA5)
    offset, size = _in_bounds(t.nbytes(tensor), rng)
    payload = (data * (size // max(len(data), 1) + 1))[:size] if data else bytes(size)
    t.tensor_set(tensor, payload, offset, size)
    rec("buffer", t.buffer_bytes(buf))


@check("TDATA-8", placement=placements, spec=tensor_specs(), rng=ranges, fill=st.binary(min_size=1, max_size=64))
def get_reads_the_range(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec,
                        rng: tuple[int, int], fill: bytes) -> None:
    """tensor_get returns bytes [offset, offset + size) and leaves the buffer alone."""
    _, buf, tensor = placed(t, placement, spec)
    t.buffer_clear(buf, 0)
    n = t.nbytes(tensor)
    t.tensor_set(tensor, (fill * (n // len(fill) + 1))[:n], 0, n)
    offset, size = _in_bounds(n, rng)
    rec("got", t.tensor_get(tensor, offset, size))
    rec("buffer", t.buffer_bytes(buf))


@st.composite
def _root_and_view(draw: st.DrawFn) -> tuple[TensorSpec, ViewSpec]:
    from ..inputs.strategies import view_specs

    root = draw(tensor_specs(), label="root")
    return root, draw(view_specs(root), label="view")


@check("TDATA-4", "TDATA-8", placement=placements, rv=_root_and_view(), init=st.booleans(),
       fill=st.binary(min_size=1, max_size=64))
def views_use_the_roots_buffer(t: Target, rec: Recorder, placement: Placement,
                               rv: tuple[TensorSpec, ViewSpec], init: bool, fill: bytes) -> None:
    """A view made after its root was placed writes and reads its root's buffer, at its offset,
    whether or not view_init has given it a buffer of its own (rc.8: erratum TDATA-4/6)."""
    root_spec, vspec = rv
    _, buf, root = placed(t, placement, root_spec)
    t.buffer_clear(buf, 0)
    view = view_of(t, root, vspec)
    if init:
        t.view_init(buf, view)
    rec("view", t.tensor_info(view))
    n = t.nbytes(view)
    t.tensor_set(view, (fill * (n // len(fill) + 1))[:n], 0, n)
    rec("root bytes", t.tensor_get(root, 0, t.nbytes(root)))
    rec("view bytes", t.tensor_get(view, 0, n))


# --- asserts of tensor_set / tensor_get -----------------------------------------------------


@check("TDATA-1", spec=tensor_specs())
def set_unallocated(t: Target, rec: Recorder, spec: TensorSpec) -> None:
    tensor = t.new_tensor(spec.type, spec.ne, "unallocated")
    t.tensor_set(tensor, b"\0", 0, 1)


@check("TDATA-5", spec=tensor_specs())
def get_unallocated(t: Target, rec: Recorder, spec: TensorSpec) -> None:
    tensor = t.new_tensor(spec.type, spec.ne, "unallocated")
    t.tensor_get(tensor, 0, 1)


@check("TDATA-2", spec=tensor_specs())
def set_without_buffer(t: Target, rec: Recorder, spec: TensorSpec) -> None:
    """A tensor in context memory has data but no buffer."""
    tensor = t.new_host_tensor(spec.type, spec.ne, "context tensor")
    t.tensor_set(tensor, b"\0", 0, 1)


@check("TDATA-6", spec=tensor_specs())
def get_without_buffer(t: Target, rec: Recorder, spec: TensorSpec) -> None:
    tensor = t.new_host_tensor(spec.type, spec.ne, "context tensor")
    t.tensor_get(tensor, 0, 1)


@check("TDATA-3", placement=placements, spec=tensor_specs(), excess=st.integers(1, 64), split=st.integers(0, 1 << 16))
def set_out_of_bounds(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, excess: int, split: int) -> None:
    """offset + size = nbytes + excess must abort (the buffer has room, so nothing else stops it)."""
    _, _, tensor = placed(t, placement, spec, slack=128)
    end = t.nbytes(tensor) + excess
    offset = split % (end + 1)
    t.tensor_set(tensor, bytes(end - offset), offset, end - offset)


@check("TDATA-7", placement=placements, spec=tensor_specs(), excess=st.integers(1, 64), split=st.integers(0, 1 << 16))
def get_out_of_bounds(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, excess: int, split: int) -> None:
    _, _, tensor = placed(t, placement, spec, slack=128)
    end = t.nbytes(tensor) + excess
    offset = split % (end + 1)
    t.tensor_get(tensor, offset, end - offset)


@check("TDATA-6", "TDATA-8", placement=placements, rv=_root_and_view())
def get_view_without_own_buffer(t: Target, rec: Recorder, placement: Placement, rv: tuple[TensorSpec, ViewSpec]) -> None:
    """rc.8 asserts the view's own buffer field (abort); `fixed` reads through the root's."""
    root_spec, vspec = rv
    _, buf, root = placed(t, placement, root_spec)
    t.buffer_clear(buf, 7)
    view = view_of(t, root, vspec)
    rec("got", t.tensor_get(view, 0, t.nbytes(view)))


# --- the edges of the bounds (TDATA-3, TDATA-7, TDATA-10, TDATA-12) --------------------------
# A bound `offset + size <= nbytes` has two sides: a range that ends exactly at the tensor's end
# is accepted, one that ends a byte past it aborts. Each side is an explicit example of the
# check (seed-free): `<` written for `<=` fails the clause itself, not only its users. Each check
# also names the behaviour clause of the accepted side (an assert-only check must abort on every
# example, engine/differential.py).

#: (where, beyond): the range ends at nbytes + beyond (0: exactly at the end, accepted; 1: a byte
#: past it, refused), starting at the tensor's start ("start": offset 0) or at its end ("end":
#: offset nbytes, so size = beyond)
EDGES = (("start", 0), ("end", 0), ("start", 1), ("end", 1))
#: the ranges the bound accepts (judged with the write or read they make: the bound's clause and
#: the behaviour clause) and those a byte past it (the bound's clause alone, so that a bound
#: that lets one byte too many through is blamed on that clause and nothing else)
AT_EDGES, PAST_EDGES = EDGES[:2], EDGES[2:]
at_edges, past_edges = st.sampled_from(AT_EDGES), st.sampled_from(PAST_EDGES)
#: the tensor of the explicit examples: 16 floats in a CPU buffer
EDGE_ARGS: dict[str, object] = {"placement": Placement("cpu"), "spec": TensorSpec(int(GGMLType.F32), (16,))}


def _edge_range(n: int, edge: tuple[str, int]) -> tuple[int, int]:
    """(offset, size) of the range `edge` for a tensor of n bytes."""
    where, beyond = edge
    return (0, n + beyond) if where == "start" else (n, beyond)


def at_every_edge(fn: Scenario) -> Scenario:
    """Give the check registered just below (write it above `@check`) each edge its strategy
    draws from (AT_EDGES or PAST_EDGES) as an explicit example, on EDGE_ARGS's tensor."""
    drawn = PAST_EDGES if CHECKS[check_name(fn)].strategies["edge"] is past_edges else AT_EDGES
    for edge in reversed(drawn):
        fn = example(**EDGE_ARGS, edge=edge)(fn)
    return fn


def _pattern(size: int) -> bytes:
    return bytes((i * 7 + 1) & 0xFF for i in range(size))


@at_every_edge
@check("TDATA-3", "TDATA-4", placement=placements, spec=tensor_specs(), edge=at_edges)
def set_to_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, edge: tuple[str, int]) -> None:
    """tensor_set of a range ending exactly at the tensor's end writes it (the buffer has
    room past the tensor, so only the bound could stop it); a byte further: set_past_the_edge."""
    _, buf, tensor = placed(t, placement, spec, slack=128)
    t.buffer_clear(buf, 0xA5)
    offset, size = _edge_range(t.nbytes(tensor), edge)
    t.tensor_set(tensor, _pattern(size), offset, size)
    rec("buffer", t.buffer_bytes(buf))


@at_every_edge
@check("TDATA-3", placement=placements, spec=tensor_specs(), edge=past_edges)
def set_past_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, edge: tuple[str, int]) -> None:
    """tensor_set of a range a byte past the tensor's end aborts (TDATA-3 alone)."""
    set_to_the_edge(t, rec, placement, spec, edge)


@at_every_edge
@check("TDATA-7", "TDATA-8", placement=placements, spec=tensor_specs(), edge=at_edges)
def get_to_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, edge: tuple[str, int]) -> None:
    """tensor_get of a range ending exactly at the tensor's end reads it; a byte further: get_past_the_edge."""
    _, buf, tensor = placed(t, placement, spec, slack=128)
    t.buffer_clear(buf, 0xA5)
    n = t.nbytes(tensor)
    t.tensor_set(tensor, _pattern(n), 0, n)
    offset, size = _edge_range(n, edge)
    rec("got", t.tensor_get(tensor, offset, size))


@at_every_edge
@check("TDATA-7", placement=placements, spec=tensor_specs(), edge=past_edges)
def get_past_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, edge: tuple[str, int]) -> None:
    """tensor_get of a range a byte past the tensor's end aborts (TDATA-7 alone)."""
    get_to_the_edge(t, rec, placement, spec, edge)


@at_every_edge
@check("TDATA-10", "TDATA-13", placement=placements, spec=tensor_specs(), edge=at_edges)
def set_async_to_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec,
                          edge: tuple[str, int]) -> None:
    """set_async of a range ending exactly at the tensor's end writes it; a byte further: set_async_past_the_edge."""
    backend, buf, tensor = placed(t, placement, spec, slack=128)
    t.buffer_clear(buf, 0xA5)
    offset, size = _edge_range(t.nbytes(tensor), edge)
    mem = t.host_alloc(max(size, 1))
    t.host_write(mem, 0, _pattern(size))
    t.tensor_set_async(backend, tensor, mem, 0, offset, size)
    t.backend_synchronize(backend)
    rec("buffer", t.buffer_bytes(buf))


@at_every_edge
@check("TDATA-10", placement=placements, spec=tensor_specs(), edge=past_edges)
def set_async_past_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, edge: tuple[str, int]) -> None:
    """set_async of a range a byte past the tensor's end aborts (TDATA-10 alone)."""
    set_async_to_the_edge(t, rec, placement, spec, edge)


@at_every_edge
@check("TDATA-12", "TDATA-13", placement=placements, spec=tensor_specs(), edge=at_edges)
def get_async_to_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec,
                          edge: tuple[str, int]) -> None:
    """get_async of a range ending exactly at the tensor's end reads it; a byte further: get_async_past_the_edge."""
    backend, buf, tensor = placed(t, placement, spec, slack=128)
    t.buffer_clear(buf, 0xA5)
    n = t.nbytes(tensor)
    t.tensor_set(tensor, _pattern(n), 0, n)
    offset, size = _edge_range(n, edge)
    mem = t.host_alloc(max(size, 1))
    t.tensor_get_async(backend, tensor, mem, 0, offset, size)
    t.backend_synchronize(backend)
    rec("got", t.host_read(mem, 0, size))


@at_every_edge
@check("TDATA-12", placement=placements, spec=tensor_specs(), edge=past_edges)
def get_async_past_the_edge(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, edge: tuple[str, int]) -> None:
    """get_async of a range a byte past the tensor's end aborts (TDATA-12 alone)."""
    get_async_to_the_edge(t, rec, placement, spec, edge)


# --- async ----------------------------------------------------------------------------------


@check("TDATA-13", "BACK-8", "BACK-9", placement=placements, spec=tensor_specs(), fill=st.binary(min_size=1, max_size=32),
       reuse=st.booleans())
def async_round_trip(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, fill: bytes, reuse: bool) -> None:
    """set_async then get_async then synchronize: the data arrives, in submission order; with
    `reuse` the host source is overwritten before synchronize (a lazy device shows it)."""
    backend, buf, tensor, n, src, dst = async_scene(t, placement, spec, 0, lambda n: (fill * (n // len(fill) + 1))[:n])
    t.tensor_set_async(backend, tensor, src, 0, 0, n)
    if reuse:
        t.host_write(src, 0, b"\x11" * n)
    t.tensor_get_async(backend, tensor, dst, 0, 0, n)
    rec("pending", mock_reading(lambda: t.vdev_pending(backend)) if placement.kind == "vdev" else 0)
    t.backend_synchronize(backend)
    rec("read back", t.host_read(dst, 0, n))
    rec("buffer", t.buffer_bytes(buf))


@check("TDATA-9", placement=placements, spec=tensor_specs())
def set_async_unallocated(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec) -> None:
    backend = backend_for(t, placement)
    tensor = t.new_tensor(spec.type, spec.ne, "unallocated")
    mem = t.host_alloc(1)
    t.tensor_set_async(backend, tensor, mem, 0, 0, 1)


@check("TDATA-11", placement=placements, spec=tensor_specs())
def get_async_unallocated(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec) -> None:
    backend = backend_for(t, placement)
    tensor = t.new_tensor(spec.type, spec.ne, "unallocated")
    mem = t.host_alloc(1)
    t.tensor_get_async(backend, tensor, mem, 0, 0, 1)


@check("TDATA-10", placement=placements, spec=tensor_specs(), excess=st.integers(1, 64))
def set_async_out_of_bounds(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, excess: int) -> None:
    backend, _, tensor = placed(t, placement, spec, slack=128)
    n = t.nbytes(tensor) + excess
    mem = t.host_alloc(n)
    t.tensor_set_async(backend, tensor, mem, 0, 0, n)


@check("TDATA-12", placement=placements, spec=tensor_specs(), excess=st.integers(1, 64))
def get_async_out_of_bounds(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, excess: int) -> None:
    backend, _, tensor = placed(t, placement, spec, slack=128)
    n = t.nbytes(tensor) + excess
    mem = t.host_alloc(n)
    t.tensor_get_async(backend, tensor, mem, 0, 0, n)


# --- view_init and tensor_alloc -------------------------------------------------------------


@example(other="vdev")
@example(other="cpu")
@check("TDATA-18", "BUF-7", "TDATA-2", other=st.sampled_from(["cpu", "vdev"]))
def view_init_into_another_buffer(t: Target, rec: Recorder, other: str) -> None:
    """view_init given a buffer other than its root's (TDATA-18: `buffer` is not checked against
    the root's): root r (8 floats at offset 64 of a CPU buffer, filled), v = view of r's last 4
    floats; view_init(B, v) with B a second CPU buffer or a virtual device's buffer. v's buffer
    is B and B's init_tensor entry is called with v (BUF-7), its data is r's + 16 bytes, and
    reading v goes through its root's buffer (TDATA-2): r's bytes (deterministic)."""
    f32 = int(GGMLType.F32)
    cpu = t.cpu_init()
    home = t.backend_alloc_buffer(cpu, 256)
    r = t.new_tensor(f32, (8,), "r")
    t.tensor_alloc(home, r, 64)
    payload = bytes(range(32))
    t.tensor_set(r, payload, 0, 32)
    v = t.view(r, (4,), (), 16)
    t.set_name(v, "v")
    dev = t.vdev_init(VDevParams(name="Other")) if other == "vdev" else cpu
    elsewhere = t.backend_alloc_buffer(dev, 64)
    t.view_init(elsewhere, v)
    rec("v's buffer is B", t.tensor_buffer(v) == elsewhere)
    rec("v's buffer is the root's", t.tensor_buffer(v) == home)
    rec("v's data is r's + 16", t.tensor_data(v) == (t.tensor_data(r) or 0) + 16)
    rec("v", t.tensor_info(v))
    if other == "vdev":
        rec("B's init_tensor calls", mock_reading(lambda: t.vdev_counters(elsewhere)[0]))
    rec("v reads", t.tensor_get(v, 0, 16))
    rec("r's bytes 16..32", payload[16:])


@check("TDATA-18", "BUF-7", placement=placements, rv=_root_and_view())
def view_init_places_the_view(t: Target, rec: Recorder, placement: Placement, rv: tuple[TensorSpec, ViewSpec]) -> None:
    root_spec, vspec = rv
    _, buf, root = placed(t, placement, root_spec)
    view = view_of(t, root, vspec)
    t.view_init(buf, view)
    rec("view", t.tensor_info(view))
    rec("buffer is the root's", t.tensor_buffer(view) == buf)
    if placement.kind == "vdev":
        rec("init_tensor calls", mock_reading(lambda: t.vdev_counters(buf)[0]))


@check("TDATA-14", placement=placements, rv=_root_and_view())
def view_init_twice(t: Target, rec: Recorder, placement: Placement, rv: tuple[TensorSpec, ViewSpec]) -> None:
    root_spec, vspec = rv
    _, buf, root = placed(t, placement, root_spec)
    view = view_of(t, root, vspec)
    t.view_init(buf, view)
    t.view_init(buf, view)


@check("TDATA-15", placement=placements, spec=tensor_specs())
def view_init_not_a_view(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec) -> None:
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, spec.nbytes())
    t.view_init(buf, t.new_tensor(spec.type, spec.ne, "plain"))


@check("TDATA-16", placement=placements, rv=_root_and_view())
def view_init_unplaced_root(t: Target, rec: Recorder, placement: Placement, rv: tuple[TensorSpec, ViewSpec]) -> None:
    root_spec, vspec = rv
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, root_spec.nbytes())
    root = t.new_tensor(root_spec.type, root_spec.ne, "root")
    t.view_init(buf, view_of(t, root, vspec))


@check("TDATA-17", placement=placements, rv=_root_and_view())
def view_init_root_without_data(t: Target, rec: Recorder, placement: Placement, rv: tuple[TensorSpec, ViewSpec]) -> None:
    """A root whose buffer field was set by hand (as ggml-alloc does) but whose data is NULL."""
    root_spec, vspec = rv
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(root_spec, placement))
    root = t.new_tensor(root_spec.type, root_spec.ne, "root")
    t.poke_buffer(root, buf)
    t.view_init(buf, view_of(t, root, vspec))


@check("TDATA-20", placement=placements, spec=tensor_specs())
def tensor_alloc_with_data(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec) -> None:
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(spec, placement))
    t.tensor_alloc(buf, t.new_host_tensor(spec.type, spec.ne, "context tensor"), 0)


@check("TDATA-24", "BUF-7", placement=placements, spec=tensor_specs(), where=st.integers(0, 1 << 16), slack=st.integers(0, 256))
def tensor_alloc_places(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, where: int, slack: int) -> None:
    backend = backend_for(t, placement)
    size = alloc_size(spec, placement) + slack
    buf = t.backend_alloc_buffer(backend, size)
    tensor = t.new_tensor(spec.type, spec.ne, "t")
    room = t.buffer_get_size(buf) - t.buffer_get_alloc_size(buf, tensor)
    offset = where % (room + 1)
    t.tensor_alloc(buf, tensor, offset)
    # the offset asked follows the buffer's size (the CPU type's padding, CPU-2), so what TDATA-24
    # is judged on is where the tensor lands against that offset, not the offset itself
    info = t.tensor_info(tensor)
    rec("tensor", replace(info, data_offset=None if info.data_offset is None else info.data_offset - offset))
    rec("buffer is set", t.tensor_buffer(tensor) == buf)
    if placement.kind == "vdev":
        rec("init_tensor calls", mock_reading(lambda: t.vdev_counters(buf)[0]))


@check("TDATA-19", placement=placements, spec=tensor_specs())
def tensor_alloc_twice(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec) -> None:
    _, buf, tensor = placed(t, placement, spec, slack=alloc_size(spec, placement))
    t.tensor_alloc(buf, tensor, 0)


@check("TDATA-21", placement=placements, spec=tensor_specs())
def tensor_alloc_a_view(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec) -> None:
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, 2 * alloc_size(spec, placement))
    root = t.new_tensor(spec.type, spec.ne, "root")
    t.tensor_alloc(buf, t.view(root, (spec.ne[0],), (), 0), 0)


@check("TDATA-22", placement=placements, spec=tensor_specs(), before=st.integers(1, 4096))
def tensor_alloc_before_base(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, before: int) -> None:
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(spec, placement))
    t.tensor_alloc(buf, t.new_tensor(spec.type, spec.ne, "t"), -before)


@check("TDATA-23", placement=placements, spec=tensor_specs(), over=st.integers(1, 64))
def tensor_alloc_past_end(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, over: int) -> None:
    """The end is measured with the buffer type's alloc size, not nbytes."""
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(spec, placement))
    tensor = t.new_tensor(spec.type, spec.ne, "t")
    room = t.buffer_get_size(buf) - t.buffer_get_alloc_size(buf, tensor)
    t.tensor_alloc(buf, tensor, room + over)


@example(**EDGE_ARGS, before=1)
@example(**EDGE_ARGS, before=0)
@check("TDATA-22", "TDATA-24", placement=placements, spec=tensor_specs(), before=st.sampled_from([0, 1]))
def tensor_alloc_at_the_base(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, before: int) -> None:
    """The two sides of `addr >= base`: tensor_alloc at offset 0 places the tensor, at -1 aborts."""
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(spec, placement))
    tensor = t.new_tensor(spec.type, spec.ne, "t")
    t.tensor_alloc(buf, tensor, -before)
    rec("buffer is set", t.tensor_buffer(tensor) == buf)
    rec("at the base", t.tensor_data(tensor) == t.buffer_get_base(buf))


@example(**EDGE_ARGS, over=1)
@example(**EDGE_ARGS, over=0)
@check("TDATA-23", "TDATA-24", placement=placements, spec=tensor_specs(), over=st.sampled_from([0, 1]))
def tensor_alloc_to_the_end(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, over: int) -> None:
    """The two sides of `addr + alloc size <= base + size`: a tensor ending exactly at the
    buffer's end is placed, one ending a byte past it aborts."""
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(spec, placement))
    tensor = t.new_tensor(spec.type, spec.ne, "t")
    room = t.buffer_get_size(buf) - t.buffer_get_alloc_size(buf, tensor)
    t.tensor_alloc(buf, tensor, room + over)
    rec("buffer is set", t.tensor_buffer(tensor) == buf)
    rec("ends at the end", (t.tensor_data(tensor) or 0) + t.buffer_get_alloc_size(buf, tensor)
        == (t.buffer_get_base(buf) or 0) + t.buffer_get_size(buf))


# --- bounds are size_t sums (errata TDATA-3, TDATA-7, TDATA-10, TDATA-12) --------------------

#: offset + 8 wraps to 4 in size_t: rc.8's test passes and the bytes at data - 4 are touched
WRAPPING_OFFSET = 2**64 - 4


def _tensor_after_guard(t: Target) -> tuple[Handle, Handle, Handle]:
    """A CPU backend, a cleared 192-byte CPU buffer and an F32[16] tensor at offset 64 of it, so
    the 64 bytes before the tensor are inside the buffer (a wrapped access shows there)."""
    backend = t.cpu_init()
    buf = t.backend_alloc_buffer(backend, 192)
    t.buffer_clear(buf, 0xA5)
    tensor = t.new_tensor(int(GGMLType.F32), (16,), "after guard")
    t.tensor_alloc(buf, tensor, 64)
    t.tensor_set(tensor, bytes(range(64)), 0, 64)
    return backend, buf, tensor


@check("TDATA-3", offset=st.just(WRAPPING_OFFSET))
def set_offset_wraps(t: Target, rec: Recorder, offset: int) -> None:
    """tensor_set(offset = SIZE_MAX - 3, size = 8): rc.8 writes 4 bytes before the tensor;
    `fixed` aborts (deterministic)."""
    _, buf, tensor = _tensor_after_guard(t)
    t.tensor_set(tensor, b"\x01\x02\x03\x04\x05\x06\x07\x08", offset, 8)
    rec("buffer", t.buffer_bytes(buf))


@check("TDATA-7", offset=st.just(WRAPPING_OFFSET))
def get_offset_wraps(t: Target, rec: Recorder, offset: int) -> None:
    """tensor_get(offset = SIZE_MAX - 3, size = 8): rc.8 reads 4 bytes before the tensor."""
    _, buf, tensor = _tensor_after_guard(t)
    rec("got", t.tensor_get(tensor, offset, 8))
    rec("buffer", t.buffer_bytes(buf))


@check("TDATA-10", offset=st.just(WRAPPING_OFFSET))
def set_async_offset_wraps(t: Target, rec: Recorder, offset: int) -> None:
    """set_async on the CPU backend (falls back to tensor_set): rc.8 writes before the tensor."""
    backend, buf, tensor = _tensor_after_guard(t)
    mem = t.host_alloc(8)
    t.host_write(mem, 0, b"\x01\x02\x03\x04\x05\x06\x07\x08")
    t.tensor_set_async(backend, tensor, mem, 0, offset, 8)
    t.backend_synchronize(backend)
    rec("buffer", t.buffer_bytes(buf))


@check("TDATA-12", offset=st.just(WRAPPING_OFFSET))
def get_async_offset_wraps(t: Target, rec: Recorder, offset: int) -> None:
    """get_async on the CPU backend: rc.8 reads 4 bytes before the tensor."""
    backend, _, tensor = _tensor_after_guard(t)
    mem = t.host_alloc(8)
    t.tensor_get_async(backend, tensor, mem, 0, offset, 8)
    t.backend_synchronize(backend)
    rec("got", t.host_read(mem, 0, 8))


@check("TDATA-1", size=st.just(0))
def set_nothing_unallocated(t: Target, rec: Recorder, size: int) -> None:
    """tensor_set of 0 bytes into an unallocated tensor still aborts (deterministic)."""
    tensor = t.new_tensor(int(GGMLType.F32), (4,), "unallocated")
    t.tensor_set(tensor, b"", 0, size)
