"""Checked wrapper: tensor data (TDATA). Misuse raises the reference's SpecViolation, found by
the reference's own check functions, before the C code could abort."""

from __future__ import annotations

from ggspec.reference import tdata as ref

from ._lib import CData, TensorView, ffi, lib, not_null


def tensor_set(tensor: CData, data: bytes, offset: int = 0) -> None:
    """TDATA-1..4: write `data` at byte `offset` of the tensor."""
    ref.check_tensor_set(TensorView(not_null(tensor, "tensor", "TDATA-1")), offset, len(data))
    lib.ggspec_backend_tensor_set(tensor, ffi.from_buffer(data) if data else ffi.NULL, offset, len(data))


def tensor_get(tensor: CData, offset: int, size: int) -> bytes:
    """TDATA-5..8: read `size` bytes at byte `offset` of the tensor (profile fixed)."""
    ref.check_tensor_get(TensorView(not_null(tensor, "tensor", "TDATA-5")), offset, size, fixed=True)
    out = ffi.new("uint8_t[]", max(size, 1))
    lib.ggspec_backend_tensor_get(tensor, out, offset, size)
    return bytes(ffi.buffer(out, size))


def tensor_set_async(backend: CData, tensor: CData, host: CData, offset: int, size: int) -> None:
    """TDATA-9, -10, -13: `host` is a cffi buffer that must stay alive until synchronize."""
    ref.check_tensor_set_async(TensorView(not_null(tensor, "tensor", "TDATA-9")), offset, size)
    lib.ggspec_backend_tensor_set_async(not_null(backend, "backend", "TDATA-13"), tensor, host, offset, size)


def tensor_get_async(backend: CData, tensor: CData, host: CData, offset: int, size: int) -> None:
    """TDATA-11..13: `host` is written by the next synchronize at the latest."""
    ref.check_tensor_get_async(TensorView(not_null(tensor, "tensor", "TDATA-11")), offset, size)
    lib.ggspec_backend_tensor_get_async(not_null(backend, "backend", "TDATA-13"), tensor, host, offset, size)


def view_init(buffer: CData, tensor: CData) -> None:
    """TDATA-14..18."""
    ref.check_view_init(TensorView(not_null(tensor, "tensor", "TDATA-14")))
    lib.ggspec_backend_view_init(not_null(buffer, "buffer", "TDATA-18"), tensor)


def tensor_alloc(buffer: CData, tensor: CData, offset: int) -> None:
    """TDATA-19..24: place the tensor at byte `offset` of the buffer (address base + offset)."""
    from .buffer import buffer_get_alloc_size, buffer_get_base, buffer_get_size

    entry = not_null(buffer, "buffer", "TDATA-24").iface.get_base
    raw_base = int(ffi.cast("uintptr_t", entry(buffer))) if entry != ffi.NULL else 0
    addr = raw_base + offset
    ref.check_tensor_alloc(
        TensorView(not_null(tensor, "tensor", "TDATA-19")),
        addr,
        lambda: buffer_get_base(buffer),
        buffer_get_size(buffer),
        buffer_get_alloc_size(buffer, tensor),
    )
    lib.ggspec_backend_tensor_alloc(buffer, tensor, ffi.cast("void *", addr))
