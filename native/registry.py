"""Checked wrapper: the backend registry (REG). Indexes are checked before the C code would
assert (REG-6..9); registering a 17th backend raises REG-2."""

from __future__ import annotations

from ggspec.reference.clauses import UsageError, require
from ggspec.reference.registry import MAX_BACKENDS_REG

from ._lib import SIZE_MAX, Backend, Buffer, BufferType, CData, arg, ffi, integer, lib, text
from .buffer import check_alloc


def reg_get_count() -> int:
    return int(lib.ggspec_backend_reg_get_count())


def reg_find_by_name(name: str) -> int:
    """REG-4: SIZE_MAX when absent."""
    return int(lib.ggspec_backend_reg_find_by_name(text(name, "name")))


def reg_init_backend_from_str(backend_str: str) -> Backend | None:
    """REG-5: None for an unknown name."""
    return Backend.wrap(lib.ggspec_backend_reg_init_backend_from_str(text(backend_str, "backend_str")))


def _index(i: int, clause_id: str) -> int:
    i = integer(i, "i", 0, SIZE_MAX)
    require(i < reg_get_count(), clause_id)
    return i


def reg_get_name(i: int) -> str:
    return str(ffi.string(lib.ggspec_backend_reg_get_name(_index(i, "REG-6"))).decode(errors="replace"))


def reg_init_backend(i: int, params: str = "") -> Backend | None:
    return Backend.wrap(lib.ggspec_backend_reg_init_backend(_index(i, "REG-7"), text(params, "params")))


def reg_get_default_buffer_type(i: int) -> BufferType:
    t = BufferType.wrap(lib.ggspec_backend_reg_get_default_buffer_type(_index(i, "REG-8")))
    if t is None:
        raise RuntimeError("a registry entry without a buffer type")
    return t


def reg_alloc_buffer(i: int, size: int) -> Buffer | None:
    i = _index(i, "REG-9")
    size = integer(size, "size", 0, SIZE_MAX)
    check_alloc(lib.ggspec_backend_reg_get_default_buffer_type(i), size)
    return Buffer.wrap(lib.ggspec_backend_reg_alloc_buffer(i, size))


def reg_register(name: str, init_fn: CData, default_buffer_type: BufferType, user_data: CData = None) -> None:
    """REG-2, REG-3: `init_fn` is a C function pointer of type `ggspec_backend_init_fn` (e.g.
    lib.ggspec_py_init_fn); the buffer type a live handle; `user_data` None or a cffi pointer."""
    raw_name = text(name, "name")
    if not isinstance(init_fn, ffi.CData) or ffi.typeof(init_fn).kind != "function" or init_fn == ffi.NULL:
        raise UsageError("REG-3", f"init_fn must be a C function pointer (ggspec_backend_init_fn), got {init_fn!r:.60}")
    if ffi.typeof(init_fn) != ffi.typeof("ggspec_backend_init_fn"):
        raise UsageError("REG-3", f"init_fn must be a ggspec_backend_init_fn, got {ffi.typeof(init_fn).cname}")
    buft = arg(default_buffer_type, BufferType, "default_buffer_type", "REG-3")
    if user_data is not None and not isinstance(user_data, ffi.CData):
        raise UsageError("REG-3", f"user_data must be None or a cffi pointer, got {type(user_data).__name__}")
    require(reg_get_count() < MAX_BACKENDS_REG, "REG-2")
    lib.ggspec_backend_register(raw_name, init_fn, buft.ptr, ffi.NULL if user_data is None else user_data)
