"""Checked wrapper: backends (BACK)."""

from __future__ import annotations

from ._lib import CData, ffi, lib, not_null


def backend_name(backend: CData | None) -> str:
    """BACK-1: "NULL" for None."""
    return str(ffi.string(lib.ggspec_backend_name(ffi.NULL if backend is None else backend)).decode())


def backend_free(backend: CData | None) -> None:
    """BACK-2: None is a no-op."""
    lib.ggspec_backend_free(ffi.NULL if backend is None else backend)


def backend_get_default_buffer_type(backend: CData) -> CData:
    return lib.ggspec_backend_get_default_buffer_type(not_null(backend, "backend", "BACK-3"))


def backend_alloc_buffer(backend: CData, size: int) -> CData:
    if size < 0:
        raise ValueError(f"size is a size_t, got {size}")
    return lib.ggspec_backend_alloc_buffer(not_null(backend, "backend", "BACK-4"), size)


def backend_get_alignment(backend: CData) -> int:
    return int(lib.ggspec_backend_get_alignment(not_null(backend, "backend", "BACK-5")))


def backend_synchronize(backend: CData) -> None:
    lib.ggspec_backend_synchronize(not_null(backend, "backend", "BACK-6"))


def backend_supports_op(backend: CData, op: CData) -> bool:
    return bool(lib.ggspec_backend_supports_op(not_null(backend, "backend", "BACK-7"), not_null(op, "op", "BACK-7")))
