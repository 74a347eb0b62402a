"""Checked wrapper: tensor copies (COPY). The wrapper follows the path the C code will take
(reference/copy.py) and checks the asserts and the memory of that path before calling it."""

from __future__ import annotations

from ggspec.reference import tdata as ref
from ggspec.reference.clauses import require, undefined
from ggspec.reference.copy import same_layout
from ggspec.reference.tensor import nbytes

from ._lib import Backend, CData, Tensor, TensorView, arg, check_reach, ffi, lib, tensor_view


def _own_buffer(t: TensorView, clause_id: str) -> CData:
    """The tensor's own buffer field, which the copy functions read without resolving views."""
    if t.buffer is None:
        undefined(clause_id, "the copy reads the tensor's own buffer field, which is NULL")
    return t.buffer


def _is_host(buf: CData) -> bool:
    return bool(lib.ggspec_backend_buffer_is_host(buf))


def _check_copy(s: TensorView, d: TensorView) -> None:
    """COPY-3..7: the path tensor_copy takes, checked as tensor_set / tensor_get check it."""
    n = nbytes(s)
    check_reach(s, 0, n, "TDATA-4")
    if _is_host(_own_buffer(s, "COPY-4")):
        ref.check_tensor_set(d, 0, n)
    elif _is_host(_own_buffer(d, "COPY-5")):
        ref.check_tensor_get(s, 0, n, fixed=True)
    else:
        ref.check_tensor_get(s, 0, n, fixed=True)
        ref.check_tensor_set(d, 0, n)
    check_reach(d, 0, n, "TDATA-4")


def tensor_copy(src: Tensor, dst: Tensor) -> None:
    """COPY-2..7."""
    s, d = tensor_view(src, "src", "COPY-2"), tensor_view(dst, "dst", "COPY-2")
    require(same_layout(s, d), "COPY-2")
    if src is not dst:
        _check_copy(s, d)
    lib.ggspec_backend_tensor_copy(src.ptr, dst.ptr)


def _device_copies(b: CData, s: TensorView, d: TensorView) -> bool:
    """Whether the backend's cpy_tensor_async entry will do the copy (both in its device's buffers)."""
    if b.iface.cpy_tensor_async == ffi.NULL:
        return False
    own = lib.ggspec_backend_get_default_buffer_type(b)
    sb, db = s.resolved_buffer, d.resolved_buffer
    return sb is not None and db is not None and sb.buft == own and db.buft == own and not _is_host(sb)


def tensor_copy_async(backend: Backend, src: Tensor, dst: Tensor) -> None:
    """COPY-8..11: host memory of the backend's queue stays alive until it synchronizes."""
    b = arg(backend, Backend, "backend", "COPY-9")
    s, d = tensor_view(src, "src", "COPY-8"), tensor_view(dst, "dst", "COPY-8")
    require(same_layout(s, d), "COPY-8")
    if src is not dst:
        sbuf, dbuf = _own_buffer(s, "COPY-9"), _own_buffer(d, "COPY-9")
        supported = bool(lib.ggspec_backend_buft_supports_backend(sbuf.buft, b.ptr)) and bool(
            lib.ggspec_backend_buft_supports_backend(dbuf.buft, b.ptr)
        )
        n = nbytes(s)
        if supported and _device_copies(b.ptr, s, d):
            check_reach(s, 0, n, "TDATA-4")
            check_reach(d, 0, n, "TDATA-4")
        elif _is_host(sbuf):
            check_reach(s, 0, n, "TDATA-4")
            from .tdata import _check_async_target

            ref.check_tensor_set_async(d, 0, n)
            if not _check_async_target(b, d, "TDATA-9"):
                ref.check_tensor_set(d, 0, n)
            check_reach(d, 0, n, "TDATA-4")
        else:
            _check_copy(s, d)
    lib.ggspec_backend_tensor_copy_async(b.ptr, src.ptr, dst.ptr)
