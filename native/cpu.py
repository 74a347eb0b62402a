"""Checked wrapper: the CPU backend (CPU)."""

from __future__ import annotations

from ggspec.reference.clauses import require

from ._lib import CData, ffi, lib, not_null


def cpu_init() -> CData:
    return lib.ggspec_backend_cpu_init()


def cpu_buffer_type() -> CData:
    return lib.ggspec_backend_cpu_buffer_type()


def is_cpu(backend: CData | None) -> bool:
    """CPU-12: False for None."""
    return bool(lib.ggspec_backend_is_cpu(ffi.NULL if backend is None else backend))


def cpu_set_n_threads(backend: CData, n_threads: int) -> None:
    """CPU-13: SpecViolation for a backend that is not a CPU backend."""
    require(is_cpu(not_null(backend, "backend", "CPU-13")), "CPU-13")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    lib.ggspec_backend_cpu_set_n_threads(backend, n_threads)


def cpu_buffer_from_ptr(memory: CData, size: int) -> CData:
    """CPU-7: a buffer over `memory` (a cffi buffer the caller keeps alive and owns)."""
    return lib.ggspec_backend_cpu_buffer_from_ptr(not_null(memory, "memory", "CPU-7"), size)
