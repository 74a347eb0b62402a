"""Checked wrapper: the backend registry (REG). Indexes are checked before the C code would
assert (REG-6..9); registering a 17th backend raises REG-2."""

from __future__ import annotations

from ggspec.reference.clauses import require
from ggspec.reference.registry import MAX_BACKENDS_REG

from ._lib import CData, ffi, lib


def reg_get_count() -> int:
    return int(lib.ggspec_backend_reg_get_count())


def reg_find_by_name(name: str) -> int:
    """REG-4: SIZE_MAX when absent."""
    return int(lib.ggspec_backend_reg_find_by_name(name.encode()))


def reg_init_backend_from_str(backend_str: str) -> CData | None:
    """REG-5: None for an unknown name."""
    b = lib.ggspec_backend_reg_init_backend_from_str(backend_str.encode())
    return None if b == ffi.NULL else b


def reg_get_name(i: int) -> str:
    require(0 <= i < reg_get_count(), "REG-6")
    return str(ffi.string(lib.ggspec_backend_reg_get_name(i)).decode(errors="replace"))


def reg_init_backend(i: int, params: str = "") -> CData | None:
    require(0 <= i < reg_get_count(), "REG-7")
    b = lib.ggspec_backend_reg_init_backend(i, params.encode())
    return None if b == ffi.NULL else b


def reg_get_default_buffer_type(i: int) -> CData:
    require(0 <= i < reg_get_count(), "REG-8")
    return lib.ggspec_backend_reg_get_default_buffer_type(i)


def reg_alloc_buffer(i: int, size: int) -> CData:
    require(0 <= i < reg_get_count(), "REG-9")
    return lib.ggspec_backend_reg_alloc_buffer(i, size)


def reg_register(name: str, init_fn: CData, default_buffer_type: CData, user_data: CData = None) -> None:
    """REG-2, REG-3: `init_fn` is a C function pointer (e.g. lib.ggspec_py_init_fn)."""
    require(reg_get_count() < MAX_BACKENDS_REG, "REG-2")
    lib.ggspec_backend_register(name.encode(), init_fn, default_buffer_type, ffi.NULL if user_data is None else user_data)
