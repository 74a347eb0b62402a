"""Checked wrapper: buffer types and buffers (BUFT, BUF).

Freeing a buffer kills its handle and the tensors placed in it (and their views); a second free
raises UseAfterFree; `buffer_free(None)` is a no-op (BUF-4).
"""

from __future__ import annotations

from ggspec.reference.buffer import BufferUsage
from ggspec.reference.clauses import require

from ._lib import SIZE_MAX, Buffer, BufferType, CData, Tensor, arg, ffi, host_alloc_limit, lib, ptr, size_t

#: CPU-4: the CPU buffer type allocates this many bytes more than asked
CPU_PAD = 64


def buft_name(buft: BufferType) -> str:
    return str(ffi.string(lib.ggspec_backend_buft_name(ptr(buft, BufferType, "buft", "BUFT-1"))).decode())


def _raw(value: object, ctype: str, what: str) -> CData:
    """`value` as a raw pointer of C type `ctype`, as a C function returned it: TypeError for
    anything else (a handle, host memory), which C would misread as that type."""
    if not isinstance(value, ffi.CData) or ffi.typeof(value) is not ffi.typeof(ctype):
        raise TypeError(f"{what} must be a raw {ctype} as C returns it, got {type(value).__name__} {value!r:.60}")
    return value


def is_cpu_buft(b: CData) -> bool:
    """Whether the raw buffer type `b` is the CPU buffer type."""
    return bool(_raw(b, "ggspec_backend_buffer_type_t", "b") == lib.ggspec_backend_cpu_buffer_type())


def check_alloc(b: CData, size: int) -> None:
    """BUFT-7 (profile fixed): a CPU allocation whose padded size would wrap is refused (rc.8
    would allocate a few bytes instead). CPU-5: so is one that cannot succeed, whose size + 64
    bytes is above `host_alloc_limit()` (2**40, or this machine's memory where less), with the
    SpecViolation of the assert rc.8 aborts with, before any C call."""
    if is_cpu_buft(b):
        size = size_t(size)
        require(size <= SIZE_MAX - CPU_PAD, "BUFT-7")
        require(size + CPU_PAD <= host_alloc_limit(), "CPU-5")


def new_buffer(raw: CData) -> Buffer | None:
    """The handle of a buffer just returned by C (None when the allocation failed)."""
    return Buffer.wrap(_raw(raw, "ggspec_backend_buffer_t", "raw"))


def buft_alloc_buffer(buft: BufferType, size: int) -> Buffer | None:
    """BUFT-2: a new buffer, or None where the type reports a failure (a device out of memory).
    A CPU buffer that cannot be allocated raises SpecViolation CPU-5 instead (`check_alloc`)."""
    b = ptr(buft, BufferType, "buft", "BUFT-2")
    size = size_t(size)
    check_alloc(b, size)
    return new_buffer(lib.ggspec_backend_buft_alloc_buffer(b, size))


def buft_get_alignment(buft: BufferType) -> int:
    return int(lib.ggspec_backend_buft_get_alignment(ptr(buft, BufferType, "buft", "BUFT-3")))


def buft_get_alloc_size(buft: BufferType, tensor: Tensor) -> int:
    b = ptr(buft, BufferType, "buft", "BUFT-4")
    return int(lib.ggspec_backend_buft_get_alloc_size(b, ptr(tensor, Tensor, "tensor", "BUFT-4")))


def buft_supports_backend(buft: BufferType, backend: object) -> bool:
    from ._lib import Backend

    b = ptr(buft, BufferType, "buft", "BUFT-5")
    return bool(lib.ggspec_backend_buft_supports_backend(b, ptr(backend, Backend, "backend", "BUFT-5")))


def buft_is_host(buft: BufferType) -> bool:
    return bool(lib.ggspec_backend_buft_is_host(ptr(buft, BufferType, "buft", "BUFT-6")))


def buffer_name(buf: Buffer) -> str:
    return str(ffi.string(lib.ggspec_backend_buffer_name(ptr(buf, Buffer, "buffer", "BUF-3"))).decode())


def buffer_free(buf: Buffer | None) -> None:
    """BUF-4: None is a no-op; the buffer's handle and its tensors' handles die."""
    if buf is None:
        return
    handle = arg(buf, Buffer, "buffer", "BUF-4")
    lib.ggspec_backend_buffer_free(handle.ptr)
    handle.kill("buffer_free")


def buffer_get_base(buf: Buffer) -> int:
    """BUF-5: the base address; SpecViolation instead of an abort when it is NULL."""
    b = ptr(buf, Buffer, "buffer", "BUF-5")
    entry = b.iface.get_base
    require(entry != ffi.NULL and entry(b) != ffi.NULL, "BUF-5")
    return int(ffi.cast("uintptr_t", lib.ggspec_backend_buffer_get_base(b)))


def buffer_get_size(buf: Buffer) -> int:
    return int(lib.ggspec_backend_buffer_get_size(ptr(buf, Buffer, "buffer", "BUF-6")))


def buffer_get_alignment(buf: Buffer) -> int:
    return int(lib.ggspec_backend_buffer_get_alignment(ptr(buf, Buffer, "buffer", "BUF-8")))


def buffer_get_alloc_size(buf: Buffer, tensor: Tensor) -> int:
    b = ptr(buf, Buffer, "buffer", "BUF-8")
    return int(lib.ggspec_backend_buffer_get_alloc_size(b, ptr(tensor, Tensor, "tensor", "BUF-8")))


def buffer_clear(buf: Buffer, value: int) -> None:
    from ._lib import integer

    b = ptr(buf, Buffer, "buffer", "BUF-9")
    lib.ggspec_backend_buffer_clear(b, integer(value, "value (a uint8_t)", 0, 255))


def buffer_is_host(buf: Buffer) -> bool:
    return bool(lib.ggspec_backend_buffer_is_host(ptr(buf, Buffer, "buffer", "BUF-10")))


def buffer_set_usage(buf: Buffer, usage: BufferUsage | int) -> None:
    b = ptr(buf, Buffer, "buffer", "BUF-11")
    if isinstance(usage, bool) or not isinstance(usage, int):
        raise TypeError(f"usage must be a BufferUsage, got {type(usage).__name__}")
    lib.ggspec_backend_buffer_set_usage(b, int(BufferUsage(usage)))


def buffer_get_type(buf: Buffer) -> BufferType:
    found = BufferType.wrap(lib.ggspec_backend_buffer_get_type(ptr(buf, Buffer, "buffer", "BUF-12")))
    assert found is not None  # every buffer has a type (BUF-12)
    return found


def buffer_reset(buf: Buffer) -> None:
    lib.ggspec_backend_buffer_reset(ptr(buf, Buffer, "buffer", "BUF-13"))
