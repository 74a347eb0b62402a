"""BUFT: buffer types — name, alloc_buffer, alignment, alloc size, supports_backend, is_host."""

from __future__ import annotations

from dataclasses import replace

from ggspec.reference.world import SIZE_MAX
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..inputs.strategies import Placement, TensorSpec, ascii_names, placements, tensor_specs, vdev_params
from ..target import Target, VDevParams
from ._setup import backend_for

#: virtual devices with any printable name
named_vdevs = st.builds(lambda p, name: replace(p, name=name), vdev_params, ascii_names(min_size=1, max_size=40))


@check("BUFT-1", placement=st.one_of(st.just(Placement("cpu")), named_vdevs.map(lambda p: Placement("vdev", p))))
def buft_name(t: Target, rec: Recorder, placement: Placement) -> None:
    """The type's get_name entry: "CPU" for the CPU type, the configured name for a device."""
    rec("name", t.buft_name(t.backend_get_default_buffer_type(backend_for(t, placement))))


@check("BUFT-2", placement=placements, size=st.integers(0, 4096), via_cpu_type=st.booleans())
def buft_alloc_buffer(t: Target, rec: Recorder, placement: Placement, size: int, via_cpu_type: bool) -> None:
    """A buffer from `buft_alloc_buffer` has that type and usage ANY. (Its size is the type's
    business: CPU-4, BUF-6.)"""
    buft = t.cpu_buffer_type() if via_cpu_type else t.backend_get_default_buffer_type(backend_for(t, placement))
    buf = t.buft_alloc_buffer(buft, size)
    rec("type is buft", t.buffer_get_type(buf) == buft)
    rec("usage", t.buffer_usage(buf))


@check("BUFT-3", placement=placements)
def buft_alignment(t: Target, rec: Recorder, placement: Placement) -> None:
    rec("alignment", t.buft_get_alignment(t.backend_get_default_buffer_type(backend_for(t, placement))))


@check("BUFT-4", placement=placements, specs=st.lists(tensor_specs(), min_size=1, max_size=4))
def buft_alloc_size(t: Target, rec: Recorder, placement: Placement, specs: list[TensorSpec]) -> None:
    """get_alloc_size when the type has the entry (a padding device), nbytes otherwise."""
    buft = t.backend_get_default_buffer_type(backend_for(t, placement))
    for i, spec in enumerate(specs):
        tensor = t.new_tensor(spec.type, spec.ne, f"t{i}")
        rec(f"alloc size {i}", t.buft_get_alloc_size(buft, tensor))
        rec(f"nbytes {i}", t.nbytes(tensor))


@check("BUFT-5", devices=st.lists(vdev_params, min_size=0, max_size=3), cpus=st.integers(1, 2))
def buft_supports_backend(t: Target, rec: Recorder, devices: list[VDevParams], cpus: int) -> None:
    """Every buffer type against every backend: the CPU type supports CPU backends, a device's
    type only that device's backend."""
    backends = [t.cpu_init() for _ in range(cpus)] + [t.vdev_init(p) for p in devices]
    bufts = [t.cpu_buffer_type()] + [t.backend_get_default_buffer_type(b) for b in backends[cpus:]]
    for i, buft in enumerate(bufts):
        rec(f"type {i} supports", [t.buft_supports_backend(buft, b) for b in backends])


@check("BUFT-6", placement=placements)
def buft_is_host(t: Target, rec: Recorder, placement: Placement) -> None:
    """True for the CPU type; false for a device type, which has no is_host entry."""
    rec("is_host", t.buft_is_host(t.backend_get_default_buffer_type(backend_for(t, placement))))


@example(size=SIZE_MAX, via_backend=False)
@example(size=SIZE_MAX - 63, via_backend=True)
@check("BUFT-7", size=st.integers(SIZE_MAX - 63, SIZE_MAX), via_backend=st.booleans())
def alloc_size_that_wraps(t: Target, rec: Recorder, size: int, via_backend: bool) -> None:
    """A CPU allocation within 64 bytes of SIZE_MAX: rc.8's size + 64 wraps to a buffer of
    (size + 64) mod 2**64 bytes; profile fixed refuses it ("failed to allocate buffer")."""
    buf = t.backend_alloc_buffer(t.cpu_init(), size) if via_backend else t.buft_alloc_buffer(t.cpu_buffer_type(), size)
    rec("size", t.buffer_get_size(buf))
