"""Checked wrapper: contexts, tensors and views (CORE)."""

from __future__ import annotations

from collections.abc import Sequence

from ggspec.reference.clauses import require
from ggspec.reference.tensor import nbytes as ref_nbytes
from ggspec.reference.types import MAX_DIMS, GGMLType, row_size

from ._lib import CData, TensorView, ffi, lib, not_null


def init(mem_size: int = 16 << 20, no_alloc: bool = True) -> CData:
    """A new context (`ggspec_init`); free it with `free`."""
    if mem_size <= 0:
        raise ValueError(f"mem_size must be positive, got {mem_size}")
    params = ffi.new("struct ggspec_init_params *", {"mem_size": mem_size, "mem_buffer": ffi.NULL, "no_alloc": no_alloc})
    return lib.ggspec_init(params[0])


def free(ctx: CData) -> None:
    lib.ggspec_free(not_null(ctx, "ctx", "CORE-2"))


def new_tensor(ctx: CData, type_: GGMLType, ne: Sequence[int], name: str = "") -> CData:
    """CORE-2: a contiguous tensor of 1 to 4 dimensions."""
    if not 1 <= len(ne) <= MAX_DIMS or any(n < 1 for n in ne):
        raise ValueError(f"ne must be 1 to 4 positive extents, got {list(ne)}")
    t = getattr(lib, f"ggspec_new_tensor_{len(ne)}d")(not_null(ctx, "ctx", "CORE-2"), int(GGMLType(type_)), *ne)
    lib.ggspec_set_name(t, name.encode())
    return t


def view(ctx: CData, a: CData, ne: Sequence[int], nb: Sequence[int], offset: int) -> CData:
    """CORE-4, CORE-5: `ggspec_view_Nd`, refused (SpecViolation) when it would not fit its root."""
    if not 1 <= len(ne) <= MAX_DIMS or len(nb) != len(ne) - 1 or offset < 0 or any(n < 1 for n in ne):
        raise ValueError(f"a view needs 1 to 4 positive extents, one stride fewer and offset >= 0; got {ne}, {nb}, {offset}")
    a_view = TensorView(not_null(a, "a", "CORE-4"))
    root = a_view.view_src or a_view
    offs = offset + (int(a.view_offs) if a.view_src != ffi.NULL else 0)
    size = row_size(a_view.type, ne[0])
    for n in ne[1:]:
        size *= n
    require(size + offs <= ref_nbytes(root), "CORE-5")
    return getattr(lib, f"ggspec_view_{len(ne)}d")(ctx, a, *ne, *nb, offset)


def nbytes(t: CData) -> int:
    return int(lib.ggspec_nbytes(not_null(t, "tensor", "CORE-3")))
