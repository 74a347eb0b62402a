"""COPY: tensor_copy and tensor_copy_async across every pair of placements.

Sources and destinations are plain tensors placed at known offsets, except in the checks of
COPY-4 (a host source that is a view) and of the layout asserts: a defect in how a view's
offset is taken must be blamed on COPY-4 alone. Every behaviour check records both buffers'
bytes after the copy (after synchronize for the async forms).
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType, type_size
from hypothesis import strategies as st

from ..engine.registry import Recorder, add_example, check, example, mock_reading
from ..inputs.strategies import (
    DEVICE_NAMES,
    CopyRoute,
    Placement,
    TensorSpec,
    ViewSpec,
    copy_routes,
    offset_view_specs,
    placements,
    roots_with_room,
    tensor_specs,
    vdev_params,
    vdev_params_with,
)
from ..target import Target, VDevParams
from ._device_cases import device_tensor, two_plain_device_buffers
from ._setup import alloc_size, backend_for, contiguous_nb, copy_scene, fill, placed

seeds = st.integers(0, 2**32)


# --- COPY-1: what "same layout" means ---------------------------------------------------------


@check("COPY-1", route=copy_routes(routes=("cpu>cpu", "cpu>vdev")), spec=tensor_specs(), seed=seeds,
       names=st.tuples(st.sampled_from(["a", "src", "weights.0"]), st.sampled_from(["b", "dst", "kv cache"])),
       op=st.sampled_from([0, 2, 6, 23, 28, 29]), shift=st.integers(0, 3))
def same_layout_ignores_names_ops_and_places(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec,
                                             seed: int, names: tuple[str, str], op: int, shift: int) -> None:
    """Tensors of equal type, ne and nb copy although their names, ops and places differ."""
    src_backend = backend_for(t, Placement(route.src, route.src_dev))
    dst_backend = backend_for(t, Placement(route.dst, route.dst_dev))
    dst_place = Placement(route.dst, route.dst_dev)
    at = shift * t.backend_get_alignment(dst_backend)
    src_buf = t.backend_alloc_buffer(src_backend, spec.nbytes())
    dst_buf = t.backend_alloc_buffer(dst_backend, at + alloc_size(spec, dst_place))
    t.buffer_clear(src_buf, 0)
    t.buffer_clear(dst_buf, 0xC3)
    src, dst = t.new_tensor(spec.type, spec.ne, names[0]), t.new_tensor(spec.type, spec.ne, names[1])
    t.set_op(dst, op, [])
    t.tensor_alloc(src_buf, src, 0)
    t.tensor_alloc(dst_buf, dst, at)
    n = t.nbytes(src)
    t.tensor_set(src, fill(n, seed), 0, n)
    t.tensor_copy(src, dst)
    rec("destination buffer", t.buffer_bytes(dst_buf))


# --- COPY-2, COPY-8: layouts must match -------------------------------------------------------


@st.composite
def _mismatched(draw: st.DrawFn) -> tuple[str, TensorSpec, TensorSpec | tuple[int, ...]]:
    """Two layouts that differ in exactly one way: type (same sizes), ne (same nbytes), nb."""
    how = draw(st.sampled_from(["type", "ne", "nb"]), label="mismatch")
    if how == "type":
        a, b = draw(st.sampled_from([(GGMLType.F32, GGMLType.I32), (GGMLType.F16, GGMLType.I16),
                                     (GGMLType.I32, GGMLType.F32), (GGMLType.I8, GGMLType.I16)]), label="types")
        ne = draw(tensor_specs(type_=st.just(int(a)), max_dims=3), label="shape").ne
        return how, TensorSpec(int(a), ne), TensorSpec(int(b), ne)
    if how == "ne":
        x = draw(st.integers(1, 6), label="x")
        y = draw(st.integers(1, 6).filter(lambda v: v != x), label="y")
        typ = draw(st.sampled_from([int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.I8)]), label="type")
        return how, TensorSpec(typ, (x, y)), TensorSpec(typ, (y, x))
    typ = draw(st.sampled_from([int(GGMLType.F32), int(GGMLType.I8)]), label="type")
    ne0, ne1 = draw(st.integers(1, 5), label="ne0"), draw(st.integers(2, 4), label="ne1")
    gap = draw(st.integers(1, 4), label="row gap")
    return how, TensorSpec(typ, (ne0, ne1)), (ne0 + gap,)


def _mismatched_pair(t: Target, placement: Placement, case: tuple[str, TensorSpec, TensorSpec | tuple[int, ...]]
                     ) -> tuple[object, object, object]:
    """A placed source and a placed destination whose layouts differ as `case` says."""
    how, a, b = case
    backend, _, src = placed(t, placement, a, name="src")
    if isinstance(b, TensorSpec):
        _, _, dst = placed(t, placement, b, name="dst")
        return backend, src, dst
    # nb: a strided 2-d view of a wider root, with the source's ne
    ne0, ne1 = a.ne
    wide = TensorSpec(a.type, (b[0] * ne1,))
    _, root_buf, root = placed(t, placement, wide, name="wide root")
    dst = t.view(root, (ne0, ne1), (b[0] * type_size(GGMLType(a.type)),), 0)
    t.view_init(root_buf, dst)
    return backend, src, dst


@check("COPY-2", placement=placements, case=_mismatched())
def copy_needs_the_same_layout(t: Target, rec: Recorder, placement: Placement,
                               case: tuple[str, TensorSpec, TensorSpec | tuple[int, ...]]) -> None:
    _, src, dst = _mismatched_pair(t, placement, case)
    t.tensor_copy(src, dst)


@check("COPY-8", placement=placements, case=_mismatched(), swap=st.booleans())
def copy_async_needs_the_same_layout(t: Target, rec: Recorder, placement: Placement,
                                     case: tuple[str, TensorSpec, TensorSpec | tuple[int, ...]], swap: bool) -> None:
    backend, src, dst = _mismatched_pair(t, placement, case)
    if swap:
        src, dst = dst, src
    t.tensor_copy_async(backend, src, dst)


#: field -> (source extents, destination extents, destination strides nb[1:]): F32 pairs that
#: differ in exactly one ne[i] or nb[i] (the source F32[2, 2, 2, 2] has nb (4, 8, 16, 32)); the
#: destination is a 4-d view with those strides (every view's nb[0] is the type size, so the
#: nb0 case is a transposed root instead)
ONE_FIELD = {
    "ne0": ((2, 2, 2, 2), (3, 2, 2, 2), (8, 16, 32)),
    "ne1": ((2, 2, 2, 2), (2, 3, 2, 2), (8, 16, 32)),
    "ne2": ((2, 2, 2, 2), (2, 2, 3, 2), (8, 16, 32)),
    "ne3": ((2, 2, 2, 2), (2, 2, 2, 3), (8, 16, 32)),
    "nb0": ((1, 3, 1, 1), (1, 3, 1, 1), ()),
    "nb1": ((2, 2, 2, 2), (2, 2, 2, 2), (12, 16, 32)),
    "nb2": ((2, 2, 2, 2), (2, 2, 2, 2), (8, 20, 32)),
    "nb3": ((2, 2, 2, 2), (2, 2, 2, 2), (8, 16, 36)),
}


def _one_field_pair(t: Target, placement: Placement, field: str) -> tuple[object, object, object]:
    """A contiguous F32 source and a destination whose layout differs from it in `field` only."""
    src_ne, dst_ne, dst_nb = ONE_FIELD[field]
    f32 = int(GGMLType.F32)
    backend, _, src = placed(t, placement, TensorSpec(f32, src_ne), name="src")
    if field == "nb0":  # the transpose of a contiguous [3, 1]: ne (1, 3), nb (12, 4, 12, 12)
        _, root_buf, root = placed(t, placement, TensorSpec(f32, (3, 1)), name="root")
        dst = t.op("transpose", [root], ())
    else:
        _, root_buf, root = placed(t, placement, TensorSpec(f32, (64,)), name="root")  # room for any of them
        dst = t.view(root, dst_ne, dst_nb, 0)
    t.view_init(root_buf, dst)
    return backend, src, dst


@check("COPY-2", "COPY-8", placement=placements, field=st.sampled_from(sorted(ONE_FIELD)),
       copy=st.sampled_from(["sync", "async", "async swapped"]))
def copy_needs_every_field_equal(t: Target, rec: Recorder, placement: Placement, field: str, copy: str) -> None:
    """tensor_copy and tensor_copy_async compare all four ne[i] and all four nb[i]: a pair that
    differs in exactly one of them aborts (every field has a deterministic example)."""
    backend, src, dst = _one_field_pair(t, placement, field)
    rec("layouts differ in", field)
    if copy == "sync":
        t.tensor_copy(src, dst)
    else:
        t.tensor_copy_async(backend, *((dst, src) if copy == "async swapped" else (src, dst)))


for _field in sorted(ONE_FIELD):  # every field, sync and async, on the CPU and on a device
    for _copy in ("sync", "async"):
        for _where in (Placement("cpu"), Placement("vdev", VDevParams(name="VDEV"))):
            add_example("copy.copy_needs_every_field_equal", {"placement": _where, "field": _field, "copy": _copy})


# --- COPY-3: a tensor onto itself -------------------------------------------------------------


@check("COPY-3", placement=st.one_of(st.just(Placement("cpu")),
                                     vdev_params_with(lazy=True, async_entries=True).map(lambda p: Placement("vdev", p)),
                                     vdev_params.map(lambda p: Placement("vdev", p))),
       spec=tensor_specs(), seed=seeds, alias=st.booleans())
def copy_onto_itself_does_nothing(t: Target, rec: Recorder, placement: Placement, spec: TensorSpec, seed: int,
                                  alias: bool) -> None:
    """copy(t, t) and copy_async(b, t, t) touch nothing: on a lazy device an upload still queued
    stays queued (any buffer operation would run it first). A distinct tensor over the same
    bytes (`alias`, on a device) is copied: tensor_copy then runs the queue. (Not on the CPU,
    where the copy would be a memcpy onto itself, which sanitizers report.)"""
    backend, buf, tensor = placed(t, placement, spec)
    t.buffer_clear(buf, 0x11)
    n = t.nbytes(tensor)
    other = t.new_tensor(spec.type, spec.ne, "alias")
    t.tensor_alloc(buf, other, 0)
    mem = t.host_alloc(n)
    t.host_write(mem, 0, fill(n, seed))
    t.tensor_set_async(backend, tensor, mem, 0, 0, n)
    pending = placement.kind == "vdev"
    if pending:
        rec("pending after set_async", mock_reading(lambda: t.vdev_pending(backend)))
    t.tensor_copy(tensor, tensor)
    t.tensor_copy_async(backend, tensor, tensor)
    if pending:
        rec("pending after self copies", mock_reading(lambda: t.vdev_pending(backend)))
    if alias and pending:
        t.tensor_copy(tensor, other)
        if pending:
            rec("pending after copying to an alias", mock_reading(lambda: t.vdev_pending(backend)))
    t.backend_synchronize(backend)
    rec("buffer", t.buffer_bytes(buf))


# --- COPY-4: a host source --------------------------------------------------------------------


@check("COPY-4", route=copy_routes(routes=("cpu>cpu", "cpu>vdev")), spec=tensor_specs(), seed=seeds)
def host_source_is_set(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec, seed: int) -> None:
    """From a CPU tensor: the destination receives nbytes(src) bytes from the source's data."""
    scene = copy_scene(t, route, spec, seed)
    t.tensor_copy(scene.src, scene.dst)
    scene.record(t, rec)


@st.composite
def _host_view(draw: st.DrawFn) -> tuple[TensorSpec, ViewSpec]:
    root = draw(roots_with_room(), label="root")
    return root, draw(offset_view_specs(root), label="view")


@check("COPY-4", dst=placements, rv=_host_view(), seed=seeds)
def host_view_source_starts_at_its_offset(t: Target, rec: Recorder, dst: Placement,
                                          rv: tuple[TensorSpec, ViewSpec], seed: int) -> None:
    """The source is a view (given to view_init) at a non-zero offset into a CPU root: the
    copied bytes start at the view's data, offset included, and span nbytes(view) — for a
    strided view the gaps too. The destination has the same layout (a plain tensor, or a view
    at offset 0 of a like root when the view is strided)."""
    root_spec, vspec = rv
    _, src_buf, root = placed(t, Placement("cpu"), root_spec, name="src root")
    t.buffer_clear(src_buf, 0x5A)  # the padding of a CPU buffer starts undefined
    n_root = t.nbytes(root)
    t.tensor_set(root, fill(n_root, seed), 0, n_root)
    src = t.view(root, vspec.ne, vspec.nb, vspec.offset)
    t.view_init(src_buf, src)
    if vspec.nb == contiguous_nb(root_spec.type, vspec.ne):
        dst_backend, dst_buf, dst = placed(t, dst, TensorSpec(root_spec.type, vspec.ne), name="dst")
        t.buffer_clear(dst_buf, 0xC3)
    else:
        dst_backend, dst_buf, dst_root = placed(t, dst, root_spec, name="dst root")
        t.buffer_clear(dst_buf, 0xC3)
        dst = t.view(dst_root, vspec.ne, vspec.nb, 0)
        t.view_init(dst_buf, dst)
    t.tensor_copy(src, dst)
    rec("source buffer", t.buffer_bytes(src_buf))
    rec("destination buffer", t.buffer_bytes(dst_buf))


# --- COPY-5: a host destination ---------------------------------------------------------------


@check("COPY-5", route=copy_routes(routes=("vdev>cpu",)), spec=tensor_specs(), seed=seeds)
def host_destination_is_got(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec, seed: int) -> None:
    """From a device tensor into a CPU tensor: a tensor_get into the destination's data."""
    scene = copy_scene(t, route, spec, seed)
    t.tensor_copy(scene.src, scene.dst)
    scene.record(t, rec)


# --- COPY-6, COPY-7: device to device ---------------------------------------------------------


# rc.8's ggml-backend.c:471 (the CPU buffer's cpy_tensor answers false after copying) survived a
# mutation run that left COPY out: pinned, a CPU-to-CPU buffer copy that must answer true
@example(route=CopyRoute("cpu", "cpu", False, False, None, None), spec=TensorSpec(int(GGMLType.F32), (4,)), seed=7)
@check("COPY-6", route=copy_routes(routes=("cpu>cpu", "cpu>vdev", "vdev>vdev same", "vdev>vdev other")),
       spec=tensor_specs(), seed=seeds)
def buffer_copy_tensor_asks_the_destination(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec,
                                            seed: int) -> None:
    """buffer_copy_tensor: false without a cpy_tensor entry on the destination's buffer, else the
    entry's answer (a device copies only from its own buffers; the CPU buffer from host
    buffers). rc.8 calls the source buffer's entry instead (erratum)."""
    scene = copy_scene(t, route, spec, seed)
    rec("copied", t.buffer_copy_tensor(scene.src, scene.dst))
    scene.record(t, rec)


@check("COPY-6", "COPY-7", route=copy_routes(routes=("vdev>vdev same", "vdev>vdev other")), spec=tensor_specs(),
       seed=seeds)
def device_to_device_copy(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec, seed: int) -> None:
    """Between two device tensors tensor_copy tries the buffer copy, then stages through host
    memory; either way the destination ends up with the source's bytes."""
    scene = copy_scene(t, route, spec, seed)
    t.tensor_copy(scene.src, scene.dst)
    scene.record(t, rec)


@st.composite
def _uncopyable(draw: st.DrawFn) -> CopyRoute:
    """Device routes where no buffer cpy_tensor entry does the copy, in either profile: the
    destination has none, or the two are different devices and the source has one."""
    if draw(st.booleans(), label="one device"):
        return draw(copy_routes(routes=("vdev>vdev same",), src_dev=vdev_params_with(buffer_cpy_tensor=False)))
    src_has = draw(st.booleans(), label="source has cpy_tensor")
    dst_dev = vdev_params if src_has else vdev_params_with(buffer_cpy_tensor=False)
    return draw(copy_routes(routes=("vdev>vdev other",), src_dev=vdev_params_with(buffer_cpy_tensor=src_has),
                            dst_dev=dst_dev))


# rc.8's ggml-backend.c:137 survived a mutation run: no draw copied between two buffers of a device
# without cpy_tensor (with the test negated rc.8 calls the NULL entry); pinned here
_NO_CPY = VDevParams(buffer_cpy_tensor=False)


@example(route=CopyRoute("vdev", "vdev", True, False, _NO_CPY, _NO_CPY), spec=TensorSpec(int(GGMLType.F32), (4,)), seed=7)
@check("COPY-7", route=_uncopyable(), spec=tensor_specs(), seed=seeds)
def slow_copy_stages_through_host(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec, seed: int) -> None:
    scene = copy_scene(t, route, spec, seed)
    t.tensor_copy(scene.src, scene.dst)
    scene.record(t, rec)


# native copy.c's `free(staging)` deleted survived the mutation runs: no check saw the host block
# COPY-7 stages through leak; many rounds of the pinned copy must leave the heap where it was
@check("COPY-7", rounds=st.just(1))
def slow_copy_releases_its_host_block(t: Target, rec: Recorder, rounds: int) -> None:
    """A round: tensor_copy between two buffers of one virtual device without cpy_tensor (the
    slow copy of COPY-7, through a host block of nbytes(src)). Done once through the adapter;
    then, on a C target, many rounds through its C functions: the heap must not grow with them,
    the host block is freed before tensor_copy returns (deterministic)."""
    from collections.abc import Callable
    from typing import Any

    from ._leaks import leaks

    route = CopyRoute("vdev", "vdev", True, False, _NO_CPY, _NO_CPY)
    scene = copy_scene(t, route, TensorSpec(int(GGMLType.F32), (64,)), 7)
    for _ in range(rounds):
        t.tensor_copy(scene.src, scene.dst)
    scene.record(t, rec)

    def make_round(c: Callable[[str], Any]) -> Callable[[], None]:
        copy = c("backend_tensor_copy")

        def one_round() -> None:
            copy(scene.src, scene.dst)

        return one_round

    rec("the heap grows with the rounds", leaks(t, make_round))


# --- COPY-9 to COPY-11: tensor_copy_async -----------------------------------------------------


@check("COPY-9", route=copy_routes(routes=("vdev>vdev same",), src_dev=vdev_params_with(cpy_tensor_async=True)),
       spec=tensor_specs(), seed=seeds)
def copy_async_queues_a_device_copy(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec, seed: int) -> None:
    """Both buffers on the backend's own device and a cpy_tensor_async entry: the copy is queued
    on the backend (still pending on a lazy device) and done by synchronize."""
    scene = copy_scene(t, route, spec, seed)
    t.tensor_copy_async(scene.src_backend, scene.src, scene.dst)
    rec("pending", mock_reading(lambda: t.vdev_pending(scene.src_backend)))
    t.backend_synchronize(scene.src_backend)
    rec("pending after synchronize", mock_reading(lambda: t.vdev_pending(scene.src_backend)))
    scene.record(t, rec)


@example(shift=1, seed=0)
@example(shift=3, seed=1)
@check("COPY-6", "COPY-9", shift=st.integers(1, 3), seed=seeds)
def copies_on_the_plain_device(t: Target, rec: Recorder, shift: int, seed: int) -> None:
    """Between two buffers of the plain device (WebGPU under `--device webgpu`, whose
    cpy_tensor_async and buffer cpy_tensor a random route reaches rarely), at offsets that are not
    whole words: tensor_copy_async (the backend's cpy_tensor_async) and tensor_copy (the
    destination buffer's cpy_tensor); both buffers are compared after synchronize (deterministic)."""
    i8 = int(GGMLType.I8)
    backend, align, bufs = two_plain_device_buffers(t, DEVICE_NAMES[0])
    src = device_tensor(t, bufs[0], i8, (61,), 3 * align + shift, "src", fill(61, seed))
    dst = device_tensor(t, bufs[1], i8, (61,), 3 * align + 4 - shift, "dst")
    again = device_tensor(t, bufs[1], i8, (61,), 3 * align + 67, "again")
    t.tensor_copy_async(backend, src, dst)
    t.tensor_copy(src, again)
    t.backend_synchronize(backend)
    for i, buf in enumerate(bufs):
        rec(f"buffer {i}", t.buffer_bytes(buf))


@check("COPY-10", route=copy_routes(routes=("cpu>cpu", "cpu>vdev")), spec=tensor_specs(), seed=seeds,
       on_cpu=st.booleans(), overwrite=st.booleans())
def copy_async_from_host_uploads(t: Target, rec: Recorder, route: CopyRoute, spec: TensorSpec, seed: int,
                                 on_cpu: bool, overwrite: bool) -> None:
    """A host source is uploaded with set_async on the given backend (the destination's device,
    or a CPU backend where set_async is a plain set). With `overwrite` the source changes before
    synchronize: a lazy device reads it only then."""
    scene = copy_scene(t, route, spec, seed)
    backend = t.cpu_init() if on_cpu or route.dst == "cpu" else scene.dst_backend
    t.tensor_copy_async(backend, scene.src, scene.dst)
    if route.dst == "vdev" and not on_cpu:
        rec("pending", mock_reading(lambda: t.vdev_pending(backend)))
    if overwrite:
        n = t.nbytes(scene.src)
        t.tensor_set(scene.src, fill(n, seed + 1), 0, n)
    t.backend_synchronize(backend)
    scene.record(t, rec)


@st.composite
def _async_fallbacks(draw: st.DrawFn) -> tuple[CopyRoute, str]:
    """A device source whose copy_async cannot be done by the backend: which backend runs it
    ("src", "dst" device or "cpu")."""
    case = draw(st.sampled_from(["to cpu", "other devices", "no async entry", "cpu backend"]), label="case")
    if case == "to cpu":
        return draw(copy_routes(routes=("vdev>cpu",))), draw(st.sampled_from(["src", "cpu"]), label="backend")
    if case == "other devices":
        return draw(copy_routes(routes=("vdev>vdev other",))), draw(st.sampled_from(["src", "dst"]), label="backend")
    if case == "no async entry":
        return draw(copy_routes(routes=("vdev>vdev same",), src_dev=vdev_params_with(cpy_tensor_async=False))), "src"
    return draw(copy_routes(routes=("vdev>vdev same",))), "cpu"


@check("COPY-11", case=_async_fallbacks(), spec=tensor_specs(), seed=seeds)
def copy_async_falls_back_to_copy(t: Target, rec: Recorder, case: tuple[CopyRoute, str], spec: TensorSpec,
                                  seed: int) -> None:
    """Not both buffers on the backend's device (or no cpy_tensor_async entry) and a device
    source: a synchronous tensor_copy. Nothing is left queued on the backend."""
    route, which = case
    scene = copy_scene(t, route, spec, seed)
    if which == "src":
        backend = scene.src_backend
    elif which == "dst":
        backend = scene.dst_backend
    else:
        backend = t.cpu_init()
    t.tensor_copy_async(backend, scene.src, scene.dst)
    if which != "cpu":
        rec("pending", mock_reading(lambda: t.vdev_pending(backend)))
    scene.record(t, rec)



# --- COPY-12: the tensors' own buffer fields ----------------------------------------------------


@check("COPY-12", "TDATA-2", role=st.sampled_from(["source", "destination"]))
def copy_with_a_context_tensor(t: Target, rec: Recorder, role: str) -> None:
    """tensor_copy between a CPU tensor and a context tensor (data, no buffer): as the source
    it is read through NULL (undefined behaviour); as the destination, tensor_set aborts with
    "tensor buffer not set" (TDATA-2)."""
    backend = t.cpu_init()
    buf = t.backend_alloc_buffer(backend, 256)
    placed_t = t.new_tensor(int(GGMLType.F32), (8,), "placed")
    t.tensor_alloc(buf, placed_t, 0)
    t.tensor_set(placed_t, bytes(range(32)), 0, 32)
    host = t.new_host_tensor(int(GGMLType.F32), (8,), "context tensor")
    if role == "source":
        t.tensor_copy(host, placed_t)
    else:
        t.tensor_copy(placed_t, host)
    rec("placed", t.tensor_get(placed_t, 0, 32))
