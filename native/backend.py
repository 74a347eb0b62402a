"""Checked wrapper: backends (BACK).

Freeing a backend kills its handle only: buffers and buffer types outlive the backend (a virtual
device's buffer type lives as long as the process). `backend_free(None)` is a no-op (BACK-2), a
second free raises UseAfterFree.
"""

from __future__ import annotations

from ._lib import Backend, Buffer, BufferType, Tensor, arg, ffi, lib, ptr, size_t
from .buffer import check_alloc, new_buffer


def backend_name(backend: Backend | None) -> str:
    """BACK-1: "NULL" for None."""
    b = ffi.NULL if backend is None else ptr(backend, Backend, "backend", "BACK-1")
    return str(ffi.string(lib.ggspec_backend_name(b)).decode())


def backend_free(backend: Backend | None) -> None:
    """BACK-2: None is a no-op; the handle dies (and lets go of the host memory of its queue)."""
    if backend is None:
        return
    handle = arg(backend, Backend, "backend", "BACK-2")
    lib.ggspec_backend_free(handle.ptr)
    handle.kill("backend_free")
    handle.pending.clear()


def backend_get_default_buffer_type(backend: Backend) -> BufferType:
    found = BufferType.wrap(lib.ggspec_backend_get_default_buffer_type(ptr(backend, Backend, "backend", "BACK-3")))
    if found is None:
        raise RuntimeError("the backend has no default buffer type")
    return found


def backend_alloc_buffer(backend: Backend, size: int) -> Buffer | None:
    """BACK-4: a buffer of the default type (None where the type reports a failure)."""
    b = ptr(backend, Backend, "backend", "BACK-4")
    size = size_t(size)
    check_alloc(lib.ggspec_backend_get_default_buffer_type(b), size)
    return new_buffer(lib.ggspec_backend_alloc_buffer(b, size))


def backend_get_alignment(backend: Backend) -> int:
    return int(lib.ggspec_backend_get_alignment(ptr(backend, Backend, "backend", "BACK-5")))


def backend_synchronize(backend: Backend) -> None:
    """BACK-6: afterwards the host memory of queued calls is no longer needed."""
    handle = arg(backend, Backend, "backend", "BACK-6")
    lib.ggspec_backend_synchronize(handle.ptr)
    handle.pending.clear()


def backend_supports_op(backend: Backend, op: Tensor) -> bool:
    b = ptr(backend, Backend, "backend", "BACK-7")
    return bool(lib.ggspec_backend_supports_op(b, ptr(op, Tensor, "op", "BACK-7")))
