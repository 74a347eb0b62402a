"""Checked wrapper: the virtual device backend."""

from __future__ import annotations

from ggspec.reference.vdev import VDevParams

from ._lib import CData, ffi, lib, not_null


def vdev_init(params: VDevParams | None = None) -> CData:
    """A new virtual device and its backend (see reference/vdev.py for the knobs)."""
    params = params or VDevParams()
    if params.alignment < 1 or params.alloc_pad < 0:
        raise ValueError(f"alignment must be >= 1 and alloc_pad >= 0, got {params}")
    name = ffi.new("char[]", params.name.encode())
    mask = sum(1 << int(op) for op in params.ops)
    p = ffi.new("struct ggspec_vdev_params *", {
        "name": name, "alignment": params.alignment, "lazy": params.lazy,
        "async_entries": params.async_entries, "buffer_cpy_tensor": params.buffer_cpy_tensor,
        "cpy_tensor_async": params.cpy_tensor_async, "alloc_pad": params.alloc_pad,
        "ops_mask": [mask & (2**64 - 1), mask >> 64],
    })
    return lib.ggspec_vdev_init(p)


def vdev_read(buf: CData, offset: int, size: int) -> bytes:
    """Test hook: raw bytes of a device buffer (the queue is not drained)."""
    total = int(lib.ggspec_backend_buffer_get_size(not_null(buf, "buffer", "BACK-8")))
    if offset < 0 or size < 0 or offset + size > total:
        raise ValueError(f"[{offset}, {offset + size}) is outside a buffer of {total} bytes")
    out = ffi.new("uint8_t[]", max(size, 1))
    lib.ggspec_vdev_read(buf, offset, out, size)
    return bytes(ffi.buffer(out, size))


def vdev_pending(backend: CData) -> int:
    return int(lib.ggspec_vdev_pending(not_null(backend, "backend", "BACK-9")))
