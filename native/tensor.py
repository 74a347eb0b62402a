"""Checked wrapper: contexts, tensors and views (CORE).

A context's tensors die with it (`free`); a view dies with its root tensor and with its own
context. A new tensor must fit in its context's pool, which the wrapper checks before the C code
would abort.
"""

from __future__ import annotations

from collections.abc import Sequence

from ggspec.reference.clauses import require
from ggspec.reference.tensor import nbytes as ref_nbytes
from ggspec.reference.types import MAX_DIMS, GGMLType, row_size

from ._lib import INT64_MAX, SIZE_MAX, Context, Tensor, TensorView, arg, ffi, host_alloc_limit, integer, lib, ptr, size_t, text

MEM_ALIGN = 16


def _pad(n: int) -> int:
    return (n + MEM_ALIGN - 1) // MEM_ALIGN * MEM_ALIGN


def init(mem_size: int = 16 << 20, no_alloc: bool = True) -> Context:
    """A new context (`ggspec_init`) with a pool of `mem_size` bytes; free it with `free`.

    A pool that cannot be allocated, padded to 16 bytes larger than `host_alloc_limit()` (2**40,
    or this machine's memory where less), is refused with ValueError before the call, rather than
    left to the C code, which aborts when the allocation fails ("ctx->mem_buffer != NULL") and
    whose padding of a size near SIZE_MAX would wrap.
    """
    mem_size = size_t(mem_size, "mem_size")
    if not isinstance(no_alloc, bool):
        raise TypeError(f"no_alloc must be a bool, got {type(no_alloc).__name__}")
    padded = _pad(mem_size or MEM_ALIGN)
    limit = host_alloc_limit()
    if padded > limit:
        raise ValueError(f"mem_size {mem_size} is more than the host can allocate ({limit} bytes)")
    params = ffi.new("struct ggspec_init_params *", {"mem_size": mem_size, "mem_buffer": ffi.NULL, "no_alloc": no_alloc})
    ctx = Context.wrap(lib.ggspec_init(params[0]))
    if ctx is None:
        raise MemoryError("ggspec_init returned NULL")
    ctx.mem_size = padded
    return ctx


def free(ctx: Context) -> None:
    """`ggspec_free`: the context and all its tensors (and views of them) die."""
    handle = arg(ctx, Context, "ctx", "CORE-6")
    lib.ggspec_free(handle.ptr)
    handle.kill("free of its context")


def _extents(ne: Sequence[int], what: str) -> list[int]:
    if isinstance(ne, (str, bytes)) or not isinstance(ne, Sequence):
        raise TypeError(f"{what} must be a sequence of ints, got {type(ne).__name__}")
    if not 1 <= len(ne) <= MAX_DIMS:
        raise ValueError(f"{what} must have 1 to {MAX_DIMS} extents, got {list(ne)}")
    return [integer(n, what, 1, INT64_MAX) for n in ne]


def _take(ctx: Context, own_data: int) -> None:
    """Room for one more tensor (and `own_data` bytes of its data) in the context's pool."""
    need = int(lib.ggspec_tensor_overhead()) + _pad(own_data)
    used = int(lib.ggspec_used_mem(ctx.ptr))
    if used + need > ctx.mem_size:
        raise ValueError(f"the context's pool of {ctx.mem_size} bytes has no room for {need} more (used {used})")


def new_tensor(ctx: Context, type_: GGMLType, ne: Sequence[int], name: str = "") -> Tensor:
    """CORE-2: a contiguous tensor of 1 to 4 dimensions."""
    c = arg(ctx, Context, "ctx", "CORE-2")
    t_type = GGMLType(type_) if not isinstance(type_, bool) and isinstance(type_, int) else None
    if t_type is None:
        raise TypeError(f"type must be a GGMLType, got {type(type_).__name__}")
    extents = _extents(ne, "ne")
    data_size = row_size(t_type, extents[0])
    for n in extents[1:]:
        data_size *= n
    if data_size > INT64_MAX:
        raise ValueError(f"a tensor of {extents} {t_type.name} has more than 2**63 bytes")
    raw_name = text(name, "name")
    _take(c, 0 if bool(lib.ggspec_get_no_alloc(c.ptr)) else data_size)
    raw = getattr(lib, f"ggspec_new_tensor_{len(extents)}d")(c.ptr, int(t_type), *extents)
    lib.ggspec_set_name(raw, raw_name)
    t = Tensor.wrap(raw)
    if t is None:
        raise MemoryError("ggspec_new_tensor returned NULL")
    c.depend(t)
    return t


def view(ctx: Context, a: Tensor, ne: Sequence[int], nb: Sequence[int], offset: int) -> Tensor:
    """CORE-4, CORE-5: `ggspec_view_Nd`, refused (SpecViolation) when it would not fit its root.

    The sums are taken without size_t wrap-around, so an offset near SIZE_MAX is refused too.
    """
    c = arg(ctx, Context, "ctx", "CORE-4")
    parent = arg(a, Tensor, "a", "CORE-4")
    extents = _extents(ne, "ne")
    if isinstance(nb, (str, bytes)) or not isinstance(nb, Sequence):
        raise TypeError(f"nb must be a sequence of ints, got {type(nb).__name__}")
    if len(nb) != len(extents) - 1:
        raise ValueError(f"a view of {len(extents)} dimensions needs {len(extents) - 1} strides, got {list(nb)}")
    strides = [size_t(s, "nb") for s in nb]
    offset = size_t(offset, "offset")
    a_view = TensorView(parent.ptr)
    root = a_view.view_src or a_view
    offs = offset + (int(parent.ptr.view_offs) if a_view.view_src is not None else 0)
    size = row_size(a_view.type, extents[0])
    for n in extents[1:]:
        size *= n
    require(size + offs <= ref_nbytes(root), "CORE-5")
    _take(c, 0)
    t = Tensor.wrap(getattr(lib, f"ggspec_view_{len(extents)}d")(c.ptr, parent.ptr, *extents, *strides, offset))
    if t is None:
        raise MemoryError("ggspec_view returned NULL")
    c.depend(t)
    parent.depend(t)
    return t


def nbytes(t: Tensor) -> int:
    return int(lib.ggspec_nbytes(ptr(t, Tensor, "tensor", "CORE-3")))


__all__ = ["SIZE_MAX", "free", "init", "nbytes", "new_tensor", "view"]
