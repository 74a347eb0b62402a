"""Checked wrapper: tensor data (TDATA). Misuse raises the reference's SpecViolation, found by
the reference's own check functions, before the C code could abort; an access that would leave
the tensor's buffer (a view whose strides reach past its root) raises UndefinedBehaviour, as the
reference does, before the C code could overflow the heap."""

from __future__ import annotations

from ggspec.reference import tdata as ref
from ggspec.reference.clauses import undefined

from ._lib import Backend, Buffer, Tensor, TensorView, arg, check_reach, ffi, host_memory, lib, ptr, size_t, tensor_view


def _payload(data: object) -> memoryview:
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"data must be bytes-like, got {type(data).__name__}") from None
    try:
        return view.cast("B")
    except TypeError as exc:
        raise TypeError(f"data must be contiguous bytes: {exc}") from None


def tensor_set(tensor: Tensor, data: bytes, offset: int = 0) -> None:
    """TDATA-1..4: write `data` at byte `offset` of the tensor."""
    t = tensor_view(tensor, "tensor", "TDATA-1")
    payload = _payload(data)
    offset = size_t(offset, "offset")
    ref.check_tensor_set(t, offset, len(payload))
    check_reach(t, offset, len(payload), "TDATA-4")
    src = ffi.from_buffer(payload) if len(payload) else ffi.NULL
    lib.ggspec_backend_tensor_set(tensor.ptr, src, offset, len(payload))


def tensor_get(tensor: Tensor, offset: int, size: int) -> bytes:
    """TDATA-5..8: read `size` bytes at byte `offset` of the tensor (profile fixed)."""
    t = tensor_view(tensor, "tensor", "TDATA-5")
    offset, size = size_t(offset, "offset"), size_t(size)
    ref.check_tensor_get(t, offset, size, fixed=True)
    check_reach(t, offset, size, "TDATA-4")
    out = ffi.new("uint8_t[]", max(size, 1))
    lib.ggspec_backend_tensor_get(tensor.ptr, out, offset, size)
    return bytes(ffi.buffer(out, size))


def _check_async_target(backend: Backend, t: TensorView, clause_id: str) -> bool:
    """Whether the backend's own async entry runs (else the call falls back to the synchronous
    one); a device's entry needs the tensor in a device buffer."""
    b = backend.ptr
    entry = b.iface.set_tensor_async if clause_id == "TDATA-9" else b.iface.get_tensor_async
    if entry == ffi.NULL:
        return False
    buf = t.resolved_buffer
    if buf is None or bool(lib.ggspec_backend_buffer_is_host(buf)):
        undefined(clause_id, "a device backend's async entry was given a tensor that is not in a device buffer")
    return True


def tensor_set_async(backend: Backend, tensor: Tensor, host: object, offset: int, size: int) -> None:
    """TDATA-9, -10, -13: `host` (at least `size` bytes) is kept alive until the backend synchronizes."""
    b = arg(backend, Backend, "backend", "TDATA-13")
    t = tensor_view(tensor, "tensor", "TDATA-9")
    offset, size = size_t(offset, "offset"), size_t(size)
    mem = host_memory(host, size, "host", writable=False)
    ref.check_tensor_set_async(t, offset, size)
    if not _check_async_target(b, t, "TDATA-9"):
        ref.check_tensor_set(t, offset, size)
    check_reach(t, offset, size, "TDATA-4")
    b.pending.append((host, mem))
    lib.ggspec_backend_tensor_set_async(b.ptr, tensor.ptr, mem, offset, size)


def tensor_get_async(backend: Backend, tensor: Tensor, host: object, offset: int, size: int) -> None:
    """TDATA-11..13: `host` (writable, at least `size` bytes) is written by the next synchronize at the latest."""
    b = arg(backend, Backend, "backend", "TDATA-13")
    t = tensor_view(tensor, "tensor", "TDATA-11")
    offset, size = size_t(offset, "offset"), size_t(size)
    mem = host_memory(host, size, "host", writable=True)
    ref.check_tensor_get_async(t, offset, size)
    if not _check_async_target(b, t, "TDATA-11"):
        ref.check_tensor_get(t, offset, size, fixed=True)
    check_reach(t, offset, size, "TDATA-4")
    b.pending.append((host, mem))
    lib.ggspec_backend_tensor_get_async(b.ptr, tensor.ptr, mem, offset, size)


def view_init(buffer: Buffer, tensor: Tensor) -> None:
    """TDATA-14..18: the view then dies with `buffer` too."""
    buf = arg(buffer, Buffer, "buffer", "TDATA-18")
    t = arg(tensor, Tensor, "tensor", "TDATA-14")
    ref.check_view_init(TensorView(t.ptr))
    lib.ggspec_backend_view_init(buf.ptr, t.ptr)
    buf.depend(t)


def tensor_alloc(buffer: Buffer, tensor: Tensor, offset: int) -> None:
    """TDATA-19..24: place the tensor at byte `offset` of the buffer (address base + offset);
    the tensor then dies with the buffer."""
    from .buffer import buffer_get_base

    buf = arg(buffer, Buffer, "buffer", "TDATA-24")
    t = arg(tensor, Tensor, "tensor", "TDATA-19")
    offset = size_t(offset, "offset")
    entry = buf.ptr.iface.get_base
    raw_base = int(ffi.cast("uintptr_t", entry(buf.ptr))) if entry != ffi.NULL else 0
    addr = raw_base + offset
    ref.check_tensor_alloc(
        TensorView(t.ptr),
        addr,
        lambda: buffer_get_base(buf),
        int(lib.ggspec_backend_buffer_get_size(buf.ptr)),
        lambda: int(lib.ggspec_backend_buffer_get_alloc_size(buf.ptr, t.ptr)),
    )
    lib.ggspec_backend_tensor_alloc(buf.ptr, t.ptr, ffi.cast("void *", addr))
    buf.depend(t)


__all__ = ["ptr", "tensor_alloc", "tensor_get", "tensor_get_async", "tensor_set", "tensor_set_async", "view_init"]
