"""Checked wrapper: buffer types and buffers (BUFT, BUF)."""

from __future__ import annotations

from ggspec.reference.buffer import USAGE_MAX
from ggspec.reference.clauses import require

from ._lib import CData, ffi, lib, not_null


def buft_name(buft: CData) -> str:
    return str(ffi.string(lib.ggspec_backend_buft_name(not_null(buft, "buft", "BUFT-1"))).decode())


def buft_alloc_buffer(buft: CData, size: int) -> CData:
    if size < 0:
        raise ValueError(f"size is a size_t, got {size}")
    return lib.ggspec_backend_buft_alloc_buffer(not_null(buft, "buft", "BUFT-2"), size)


def buft_get_alignment(buft: CData) -> int:
    return int(lib.ggspec_backend_buft_get_alignment(not_null(buft, "buft", "BUFT-3")))


def buft_get_alloc_size(buft: CData, tensor: CData) -> int:
    return int(lib.ggspec_backend_buft_get_alloc_size(not_null(buft, "buft", "BUFT-4"), not_null(tensor, "tensor", "BUFT-4")))


def buft_supports_backend(buft: CData, backend: CData) -> bool:
    b = not_null(backend, "backend", "BUFT-5")
    return bool(lib.ggspec_backend_buft_supports_backend(not_null(buft, "buft", "BUFT-5"), b))


def buft_is_host(buft: CData) -> bool:
    return bool(lib.ggspec_backend_buft_is_host(not_null(buft, "buft", "BUFT-6")))


def buffer_name(buf: CData) -> str:
    return str(ffi.string(lib.ggspec_backend_buffer_name(not_null(buf, "buffer", "BUF-3"))).decode())


def buffer_free(buf: CData | None) -> None:
    """BUF-4: None is a no-op."""
    lib.ggspec_backend_buffer_free(ffi.NULL if buf is None else buf)


def buffer_get_base(buf: CData) -> int:
    """BUF-5: the base address; SpecViolation instead of an abort when it is NULL."""
    entry = not_null(buf, "buffer", "BUF-5").iface.get_base
    require(entry != ffi.NULL and entry(buf) != ffi.NULL, "BUF-5")
    return int(ffi.cast("uintptr_t", lib.ggspec_backend_buffer_get_base(buf)))


def buffer_get_size(buf: CData) -> int:
    return int(lib.ggspec_backend_buffer_get_size(not_null(buf, "buffer", "BUF-6")))


def buffer_get_alignment(buf: CData) -> int:
    return int(lib.ggspec_backend_buffer_get_alignment(not_null(buf, "buffer", "BUF-8")))


def buffer_get_alloc_size(buf: CData, tensor: CData) -> int:
    return int(lib.ggspec_backend_buffer_get_alloc_size(not_null(buf, "buffer", "BUF-8"), not_null(tensor, "tensor", "BUF-8")))


def buffer_clear(buf: CData, value: int) -> None:
    if not 0 <= value <= 255:
        raise ValueError(f"value is a uint8_t, got {value}")
    lib.ggspec_backend_buffer_clear(not_null(buf, "buffer", "BUF-9"), value)


def buffer_is_host(buf: CData) -> bool:
    return bool(lib.ggspec_backend_buffer_is_host(not_null(buf, "buffer", "BUF-10")))


def buffer_set_usage(buf: CData, usage: int) -> None:
    """BUF-11: any value of the enum's C type is stored (rc.8 does not check it)."""
    if isinstance(usage, bool) or not isinstance(usage, int):
        raise TypeError(f"usage is an enum ggml_backend_buffer_usage (an int), got {type(usage).__name__}")
    if not 0 <= usage <= USAGE_MAX:
        raise ValueError(f"usage is an enum ggml_backend_buffer_usage (unsigned int), got {usage}")
    lib.ggspec_backend_buffer_set_usage(not_null(buf, "buffer", "BUF-11"), usage)


def buffer_get_type(buf: CData) -> CData:
    return lib.ggspec_backend_buffer_get_type(not_null(buf, "buffer", "BUF-12"))


def buffer_reset(buf: CData) -> None:
    lib.ggspec_backend_buffer_reset(not_null(buf, "buffer", "BUF-13"))
