"""Checked wrapper: the CPU backend (CPU)."""

from __future__ import annotations

from ggspec.reference.clauses import UsageError, require

from ._lib import Backend, Buffer, BufferType, arg, ffi, host_memory, integer, lib, size_t


def cpu_init() -> Backend:
    b = Backend.wrap(lib.ggspec_backend_cpu_init())
    if b is None:
        raise MemoryError("ggspec_backend_cpu_init returned NULL")
    return b


def cpu_buffer_type() -> BufferType:
    t = BufferType.wrap(lib.ggspec_backend_cpu_buffer_type())
    if t is None:
        raise RuntimeError("no CPU buffer type")
    return t


def is_cpu(backend: Backend | None) -> bool:
    """CPU-12: False for None."""
    if backend is None:
        return False
    return bool(lib.ggspec_backend_is_cpu(arg(backend, Backend, "backend", "CPU-12").ptr))


def cpu_set_n_threads(backend: Backend, n_threads: int) -> None:
    """CPU-13: SpecViolation for a backend that is not a CPU backend."""
    require(is_cpu(arg(backend, Backend, "backend", "CPU-13")), "CPU-13")
    n = integer(n_threads, "n_threads", -(2**31), 2**31 - 1)
    if n < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    lib.ggspec_backend_cpu_set_n_threads(backend.ptr, n)


def cpu_buffer_from_ptr(memory: object, size: int) -> Buffer:
    """CPU-7: a buffer over `memory`, which the caller owns; the buffer keeps it alive.

    `memory` must be writable (clear and tensor_set write to it) and hold at least `size` bytes:
    a bytearray, a writable memoryview or numpy array, or a cffi array. None is accepted only
    with size 0 (a buffer with a NULL base, whose get_base asserts, BUF-5).
    """
    size = size_t(size)
    if memory is None:
        if size != 0:
            raise UsageError("CPU-7", "memory must not be NULL (unless size is 0)")
        mem = ffi.NULL
    else:
        mem = host_memory(memory, size, "memory", writable=True)
    buf = Buffer.wrap(lib.ggspec_backend_cpu_buffer_from_ptr(mem, size))
    if buf is None:
        raise MemoryError("ggspec_backend_cpu_buffer_from_ptr returned NULL")
    buf.memory = (memory, mem)
    return buf
