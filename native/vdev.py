"""Checked wrapper: the virtual device backend. Its functions refuse a CPU backend or buffer
(UsageError) instead of letting the C code abort."""

from __future__ import annotations

from ggspec.reference.clauses import UsageError
from ggspec.reference.vdev import VDevParams, check_absent, check_name

from ._lib import SIZE_MAX, Backend, Buffer, BufferType, CData, arg, ffi, integer, lib, size_t


def vdev_init(params: VDevParams | None = None) -> Backend:
    """A new virtual device and its backend (see reference/vdev.py for the knobs)."""
    if params is None:
        params = VDevParams()
    if not isinstance(params, VDevParams):
        raise TypeError(f"params must be VDevParams, got {type(params).__name__}")
    integer(params.alignment, "alignment", 1, SIZE_MAX)
    integer(params.alloc_pad, "alloc_pad", 0, SIZE_MAX)
    integer(params.base_offset, "base_offset", 0, 1 << 20)
    if not isinstance(params.name, str):
        raise TypeError(f"name must be a str, got {type(params.name).__name__}")
    check_name(params.name)
    check_absent(params)
    name = ffi.new("char[]", params.name.encode())
    mask = sum(1 << int(op) for op in params.ops)
    p = ffi.new("struct ggspec_vdev_params *", {
        "name": name, "alignment": params.alignment, "lazy": bool(params.lazy),
        "async_entries": bool(params.async_entries), "buffer_cpy_tensor": bool(params.buffer_cpy_tensor),
        "cpy_tensor_async": bool(params.cpy_tensor_async), "alloc_pad": params.alloc_pad,
        "ops_mask": [mask & (2**64 - 1), mask >> 64], "compute_fails": bool(params.compute_fails),
        "base_offset": params.base_offset, "absent": params.absent_bits(),
    })
    b = Backend.wrap(lib.ggspec_vdev_init(p))
    if b is None:
        raise MemoryError("ggspec_vdev_init returned NULL")
    return b


def _device_buffer(buf: object) -> CData:
    b = arg(buf, Buffer, "buffer", "BACK-8").ptr
    if bool(lib.ggspec_backend_buffer_is_host(b)):
        raise UsageError("BACK-8", "not a virtual device buffer")
    return b


def _device_backend(backend: object) -> CData:
    b = arg(backend, Backend, "backend", "BACK-9").ptr
    if not bool(lib.ggspec_backend_is_vdev(b)):
        raise UsageError("BACK-9", "not a virtual device backend")
    return b


def vdev_read(buf: Buffer, offset: int, size: int) -> bytes:
    """Test hook: raw bytes of a device buffer (the queue is not drained)."""
    b = _device_buffer(buf)
    offset, size = size_t(offset, "offset"), size_t(size)
    total = int(lib.ggspec_backend_buffer_get_size(b))
    if offset + size > total:
        raise ValueError(f"[{offset}, {offset + size}) is outside a buffer of {total} bytes")
    out = ffi.new("uint8_t[]", max(size, 1))
    lib.ggspec_vdev_read(b, offset, out, size)
    return bytes(ffi.buffer(out, size))


def vdev_pending(backend: Backend) -> int:
    return int(lib.ggspec_vdev_pending(_device_backend(backend)))


def _device_buft(buft: object) -> CData:
    b = arg(buft, BufferType, "buft", "BACK-8").ptr
    if not bool(lib.ggspec_buft_is_vdev(b)):  # asks no entry: the log stays as it is
        raise UsageError("BACK-8", "not a virtual device buffer type")
    return b


def vdev_buffer_type(backend: Backend) -> BufferType:
    """The device's buffer type (the log's handle: it outlives the backend)."""
    buft = BufferType.wrap(lib.ggspec_vdev_buffer_type(_device_backend(backend)))
    assert buft is not None
    return buft


def vdev_log(buft: BufferType) -> list[tuple[int, str]]:
    """Test hook: the device's entry log, (serial, entry) in call order (ggspec-vdev.h)."""
    b = _device_buft(buft)
    serial = ffi.new("size_t *")
    out = []
    for i in range(int(lib.ggspec_vdev_log_len(b))):
        text = ffi.string(lib.ggspec_vdev_log_entry(b, i, serial)).decode("utf-8", "replace")
        out.append((int(serial[0]), text))
    return out


def vdev_log_clear(buft: BufferType) -> None:
    lib.ggspec_vdev_log_clear(_device_buft(buft))
