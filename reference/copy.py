"""COPY: copying a tensor's bytes to another tensor, between any two buffers and backends."""

from __future__ import annotations

from .backend import Backend
from .buffer import Buffer, buffer_is_host, buft_supports_backend
from .checked import checked, nonnull
from .clauses import UndefinedBehaviour, implements, require, undefined
from .tdata import tensor_get, tensor_set, tensor_set_async
from .tensor import Tensor, TensorShape, nbytes
from .types import MAX_DIMS


@implements("COPY-1")
@checked
def same_layout(a: TensorShape, b: TensorShape) -> bool:
    """COPY-1: equal type, and equal ne and nb in all four dimensions."""
    if a.type != b.type:
        return False
    return all(a.ne[i] == b.ne[i] and a.nb[i] == b.nb[i] for i in range(MAX_DIMS))


@implements("COPY-12")
def _own_buffer(t: Tensor, clause_id: str) -> Buffer:
    """COPY-12: the tensor's own buffer field, which the copy functions read without resolving
    views or checking it (NULL for a context tensor or a view not given to view_init)."""
    if t.buffer is None:
        undefined(clause_id, f"copy reads {t!r}->buffer, which is NULL")
    return t.buffer


@implements("COPY-6")
@checked
def buffer_copy_tensor(src: Tensor, dst: Tensor) -> bool:
    """COPY-6: `ggml_backend_buffer_copy_tensor` — the destination buffer's cpy_tensor entry.

    Erratum (COPY-6): rc.8 tests the destination's entry but calls the source buffer's.
    """
    dst_buf = dst.view_src.buffer if dst.view_src is not None else dst.buffer
    if dst_buf is None:
        undefined("COPY-6", "buffer_copy_tensor reads the NULL buffer of dst")
    if dst_buf.iface.cpy_tensor is None:
        return False
    if dst.world.fixed:
        return dst_buf.iface.cpy_tensor(dst_buf, src, dst)
    entry = _own_buffer(src, "COPY-6").iface.cpy_tensor
    if entry is None:
        undefined("COPY-6", "buffer_copy_tensor calls the source buffer's NULL cpy_tensor entry")
    if entry == dst_buf.iface.cpy_tensor:
        return entry(dst_buf, src, dst)
    try:  # another type's code runs on dst's buffer: whatever goes wrong in it is this erratum
        return entry(dst_buf, src, dst)
    except UndefinedBehaviour as exc:
        undefined("COPY-6", f"buffer_copy_tensor ran the source buffer's cpy_tensor on the destination's buffer: {exc}")


@implements("COPY-3", "COPY-4", "COPY-5", "COPY-7")
@checked
def tensor_copy(src: Tensor, dst: Tensor) -> None:
    """COPY-2 to COPY-7: host source → set; host destination → get; cpy_tensor; staged copy."""
    require(same_layout(src, dst), "COPY-2")
    if src is dst:
        return
    n = nbytes(src)
    if buffer_is_host(_own_buffer(src, "COPY-4")):
        tensor_set(dst, nonnull(src.data, "COPY-4", "a host source's data"), 0, n)
    elif buffer_is_host(_own_buffer(dst, "COPY-5")):
        tensor_get(src, nonnull(dst.data, "COPY-5", "a host destination's data"), 0, n)
    elif not buffer_copy_tensor(src, dst):
        staging = src.world.host_alloc(n, "slow copy staging")
        tensor_get(src, staging.base, 0, n)
        tensor_set(dst, staging.base, 0, n)
        src.world.memory.unmap(staging)


@implements("COPY-9", "COPY-10", "COPY-11")
@checked
def tensor_copy_async(backend: Backend, src: Tensor, dst: Tensor) -> None:
    """COPY-8 to COPY-11: cpy_tensor_async when both types support the backend, else set_async
    from a host source, else tensor_copy."""
    require(same_layout(src, dst), "COPY-8")
    if src is dst:
        return
    src_buf, dst_buf = _own_buffer(src, "COPY-9"), _own_buffer(dst, "COPY-9")
    if buft_supports_backend(src_buf.buft, backend) and buft_supports_backend(dst_buf.buft, backend):
        entry = backend.iface.cpy_tensor_async
        if entry is not None and entry(backend, src, dst):
            return
    if buffer_is_host(src_buf):
        tensor_set_async(backend, dst, nonnull(src.data, "COPY-10", "a host source's data"), 0, nbytes(src))
    else:
        tensor_copy(src, dst)
