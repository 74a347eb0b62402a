"""Shared scenario steps: making a backend and a buffer for a placement, placing tensors."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from ggspec.reference.clauses import Profile
from ggspec.reference.types import GGMLType, Op, blck_size, type_size

from ..engine.registry import Recorder
from ..inputs.strategies import BufferSource, CopyRoute, Placement, TensorSpec, ViewSpec
from ..target import Handle, Target, VDevParams


def run_profile(t: Target) -> Profile:
    """The profile the run holds `t` to (make_target's `run_profile`; a reference made elsewhere:
    its own, any other target: its default)."""
    world = getattr(t, "world", None)
    profile = getattr(t, "run_profile", None) or (world.profile if world is not None else t.default_profile)
    assert isinstance(profile, Profile)
    return profile


def backend_for(t: Target, placement: Placement) -> Handle:
    """The backend a placement names: a CPU backend or a fresh virtual device."""
    if placement.kind == "cpu":
        return t.cpu_init()
    assert placement.vdev is not None
    return t.vdev_init(placement.vdev)


def small_cpu_graph(t: Target) -> tuple[Handle, Handle, Handle]:
    """A CPU backend of one thread (no worker threads started per compute, so the leak checks'
    rounds stay cheap) and a small graph on it, placed by hand in one buffer: a = x + w (bytes 1
    and 2), then b = scale(a, 0.5). Returns (cpu, graph, b)."""
    cpu = t.cpu_init()
    t.cpu_set_n_threads(cpu, 1)
    x = t.new_tensor(int(GGMLType.F32), (8, 2), "x")
    w = t.new_tensor(int(GGMLType.F32), (8, 2), "w")
    a = t.new_tensor(int(GGMLType.F32), (8, 2), "a")
    buf = t.backend_alloc_buffer(cpu, 64 * 4)
    for j, y in enumerate((x, w, a)):
        t.tensor_alloc(buf, y, 64 * j)
        t.tensor_set(y, bytes([j + 1] * 64), 0, 64)
    t.set_op(a, int(Op.ADD), [x, w])
    b = t.op("scale", [a], [0.5])
    t.set_name(b, "b")
    t.tensor_alloc(buf, b, 192)
    g = t.new_graph(16)
    t.build_forward_expand(g, b)
    return cpu, g, b


def round_up(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def alloc_size(spec: TensorSpec, placement: Placement) -> int:
    """What the placement's buffer type will ask for a tensor of `spec` (BUFT-4)."""
    n = spec.nbytes()
    if placement.kind == "vdev" and placement.vdev is not None and placement.vdev.alloc_pad:
        n = round_up(n, placement.vdev.alloc_pad)
    return n


def new_tensor(t: Target, spec: TensorSpec, name: str = "t") -> Handle:
    return t.new_tensor(spec.type, spec.ne, name)


def view_of(t: Target, root: Handle, view: ViewSpec) -> Handle:
    return t.view(root, view.ne, view.nb, view.offset)


def placed(t: Target, placement: Placement, spec: TensorSpec, slack: int = 0, name: str = "t") -> tuple[Handle, Handle, Handle]:
    """A backend, a buffer of its default type, and a tensor of `spec` allocated at offset 0
    (followed by `slack` spare bytes)."""
    backend = backend_for(t, placement)
    buf = t.backend_alloc_buffer(backend, alloc_size(spec, placement) + slack)
    tensor = new_tensor(t, spec, name)
    t.tensor_alloc(buf, tensor, 0)
    return backend, buf, tensor


class AsyncScene(NamedTuple):
    """A placed tensor (`n` bytes) in a buffer cleared to one byte, and two host blocks of `n`
    bytes for its async transfers: `src`, what a set_async sends, and `dst`, 0xee bytes where no
    get_async has written."""

    backend: Handle
    buf: Handle
    tensor: Handle
    n: int
    src: Handle
    dst: Handle


def async_scene(t: Target, placement: Placement, spec: TensorSpec, clear: int, data: Callable[[int], bytes]) -> AsyncScene:
    """Place a tensor of `spec` (`placed`), clear its buffer to `clear`, and write `data(n)` to `src`."""
    backend, buf, tensor = placed(t, placement, spec)
    t.buffer_clear(buf, clear)
    n = t.nbytes(tensor)
    src, dst = t.host_alloc(n), t.host_alloc(n)
    t.host_write(src, 0, data(n))
    t.host_write(dst, 0, b"\xee" * n)
    return AsyncScene(backend, buf, tensor, n, src, dst)


def elements(spec: TensorSpec) -> int:
    n = 1
    for x in spec.ne:
        n *= x
    return n


def row_bytes(type_: int, ne0: int) -> int:
    return type_size(GGMLType(type_)) * ne0 // blck_size(GGMLType(type_))


def fill(n: int, seed: int) -> bytes:
    """`n` bytes with no short period (a view's offset shows in them), the same for any target."""
    return random.Random(seed).randbytes(n)


def contiguous_nb(type_: int, ne: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of dimensions 1.. a new tensor of extents `ne` gets (CORE-2)."""
    nb = [row_bytes(type_, ne[0])]
    for x in ne[1:-1]:
        nb.append(nb[-1] * x)
    return tuple(nb[: len(ne) - 1])


@dataclass
class CopyScene:
    """Two same-layout tensors placed as a `CopyRoute` says, the source filled, the
    destination's buffer cleared to a different value."""

    src_backend: Handle
    dst_backend: Handle
    src_buf: Handle
    dst_buf: Handle
    src: Handle
    dst: Handle

    def record(self, t: Target, rec: Recorder, when: str = "after") -> None:
        """Both buffers' bytes (once when they are one buffer)."""
        if self.src_buf == self.dst_buf:
            rec(f"buffer {when}", t.buffer_bytes(self.src_buf))
        else:
            rec(f"source buffer {when}", t.buffer_bytes(self.src_buf))
            rec(f"destination buffer {when}", t.buffer_bytes(self.dst_buf))


def _side_backend(t: Target, kind: str, dev: VDevParams | None) -> Handle:
    return backend_for(t, Placement(kind, dev))


def copy_scene(t: Target, route: CopyRoute, spec: TensorSpec, seed: int) -> CopyScene:
    """Place a source and a destination of `spec` along `route`; fill the source from `seed`."""
    src_place, dst_place = Placement(route.src, route.src_dev), Placement(route.dst, route.dst_dev)
    src_backend = _side_backend(t, route.src, route.src_dev)
    dst_backend = src_backend if route.same_device else _side_backend(t, route.dst, route.dst_dev)
    src_size, dst_size = alloc_size(spec, src_place), alloc_size(spec, dst_place)
    src, dst = new_tensor(t, spec, "src"), new_tensor(t, spec, "dst")
    if route.same_buffer:
        second = round_up(src_size, t.backend_get_alignment(src_backend))
        src_buf = dst_buf = t.backend_alloc_buffer(src_backend, second + dst_size)
        t.buffer_clear(src_buf, 0xC3)
        t.tensor_alloc(src_buf, src, 0)
        t.tensor_alloc(dst_buf, dst, second)
    else:
        src_buf = t.backend_alloc_buffer(src_backend, src_size)
        dst_buf = t.backend_alloc_buffer(dst_backend, dst_size)
        t.buffer_clear(src_buf, 0x5A)
        t.buffer_clear(dst_buf, 0xC3)
        t.tensor_alloc(src_buf, src, 0)
        t.tensor_alloc(dst_buf, dst, 0)
    n = t.nbytes(src)
    t.tensor_set(src, fill(n, seed), 0, n)
    return CopyScene(src_backend, dst_backend, src_buf, dst_buf, src, dst)


@dataclass
class MadeBuffer:
    """A buffer and what it came with: the backend of its device (None for CPU buffers made
    from the type or a pointer) and the host memory under a from_ptr buffer."""

    buf: Handle
    backend: Handle | None
    mem: Handle | None


def make_buffer(t: Target, source: BufferSource, size: int) -> MadeBuffer:
    """A buffer of `size` bytes made as `source` says."""
    if source.kind == "cpu":
        return MadeBuffer(t.buft_alloc_buffer(t.cpu_buffer_type(), size), None, None)
    if source.kind == "from_ptr":
        mem = t.host_alloc(size)
        return MadeBuffer(t.cpu_buffer_from_ptr(mem, size), None, mem)
    assert source.vdev is not None
    backend = t.vdev_init(source.vdev)
    return MadeBuffer(t.backend_alloc_buffer(backend, size), backend, None)


def fill_buffer(t: Target, buf: Handle, source: BufferSource, size: int, seed: int) -> None:
    """Give every byte of a fresh buffer of `size` (asked) bytes a known value: clear it to a
    value from `seed` (a CPU buffer's memory starts undefined), then write `fill(seed)` through
    an I8 tensor over as much of the start as the type lets a tensor cover."""
    t.buffer_clear(buf, seed % 251)
    pad = source.vdev.alloc_pad if source.vdev is not None else 0
    n = size // pad * pad if pad else size
    if n == 0:
        return
    tensor = t.new_tensor(int(GGMLType.I8), (n,), "filler")
    t.tensor_alloc(buf, tensor, 0)
    t.tensor_set(tensor, fill(n, seed), 0, n)
