"""TDATA: reading and writing tensor data, synchronously and asynchronously, and placing tensors
in buffers (view_init, tensor_alloc).

`data` arguments are host addresses in the world's address space (see world.py).
The `check_*` functions hold the asserts of each call; they take anything shaped like a tensor
(`TensorState`), so native/'s Python wrapper checks a native tensor with the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .backend import Backend
from .buffer import (
    Buffer,
    buffer_get_alloc_size,
    buffer_get_base,
    buffer_get_size,
    buffer_init_tensor,
)
from .checked import checked, nonnull
from .clauses import implements, require, required, undefined
from .tensor import Tensor, TensorShape, nbytes, resolved_buffer
from .world import SIZE_MAX, size_add


class TensorState(TensorShape, Protocol):
    """The fields the asserts of this chapter read."""

    @property
    def data(self) -> int | None: ...
    @property
    def buffer(self) -> object | None: ...
    @property
    def view_src(self) -> TensorState | None: ...


def _resolved(t: TensorState) -> object | None:
    return t.view_src.buffer if t.view_src is not None else t.buffer


def _check_size(offset: int, size: int) -> None:
    if not (0 <= offset <= SIZE_MAX and 0 <= size <= SIZE_MAX):
        raise ValueError(f"offset and size are size_t, got offset={offset} size={size}")


@checked
def in_bounds(offset: int, size: int, n: int, fixed: bool) -> bool:
    """The bounds test of TDATA-3/7/10/12: `offset + size <= nbytes`.

    Erratum: rc.8 adds in size_t, so a sum past SIZE_MAX wraps and passes (offset SIZE_MAX - 3,
    size 8 reads or writes the 4 bytes before the tensor); `fixed` refuses any range that does
    not lie inside the tensor.
    """
    return offset + size <= n if fixed else size_add(offset, size) <= n


@checked
def check_tensor_set(t: TensorState, offset: int, size: int, fixed: bool = True) -> None:
    """TDATA-1, TDATA-2, TDATA-3 (size_t sum in rc.8; erratum), in rc.8's order."""
    _check_size(offset, size)
    require(t.data is not None, "TDATA-1")
    require(_resolved(t) is not None, "TDATA-2")
    require(in_bounds(offset, size, nbytes(t), fixed), "TDATA-3")


@checked
def check_tensor_get(t: TensorState, offset: int, size: int, fixed: bool) -> None:
    """TDATA-5, TDATA-6 (rc.8 checks the tensor's own buffer field; erratum), TDATA-7 (size_t
    sum in rc.8; erratum)."""
    _check_size(offset, size)
    require(t.data is not None, "TDATA-5")
    require((_resolved(t) if fixed else t.buffer) is not None, "TDATA-6")
    require(in_bounds(offset, size, nbytes(t), fixed), "TDATA-7")


@checked
def check_tensor_set_async(t: TensorState, offset: int, size: int, fixed: bool = True) -> None:
    """TDATA-9, TDATA-10 (size_t sum in rc.8; erratum)."""
    _check_size(offset, size)
    require(t.data is not None, "TDATA-9")
    require(in_bounds(offset, size, nbytes(t), fixed), "TDATA-10")


@checked
def check_tensor_get_async(t: TensorState, offset: int, size: int, fixed: bool = True) -> None:
    """TDATA-11, TDATA-12 (size_t sum in rc.8; erratum)."""
    _check_size(offset, size)
    require(t.data is not None, "TDATA-11")
    require(in_bounds(offset, size, nbytes(t), fixed), "TDATA-12")


@implements("TDATA-4")
@checked
def tensor_set(tensor: Tensor, data: int, offset: int, size: int) -> None:
    """TDATA-4: write `size` bytes from host address `data` at `offset` into the tensor.

    Erratum (TDATA-4): rc.8 calls the entry of `tensor->buffer` even though it checked the
    resolved buffer; with `tensor->buffer` NULL that is a NULL call.
    """
    check_tensor_set(tensor, offset, size, tensor.world.fixed)
    buf = nonnull(resolved_buffer(tensor), "TDATA-2", "the resolved buffer")
    caller = buf if tensor.world.fixed else tensor.buffer
    if caller is None:
        undefined("TDATA-4", "tensor_set calls tensor->buffer->iface.set_tensor with tensor->buffer == NULL")
    caller.iface.set_tensor(buf, tensor, data, offset, size)


@implements("TDATA-8")
@checked
def tensor_get(tensor: Tensor, data: int, offset: int, size: int) -> None:
    """TDATA-8: read `size` bytes at `offset` of the tensor into host address `data`."""
    check_tensor_get(tensor, offset, size, tensor.world.fixed)
    buf = nonnull(resolved_buffer(tensor), "TDATA-6", "the resolved buffer")
    caller = buf if tensor.world.fixed else nonnull(tensor.buffer, "TDATA-6", "tensor->buffer")
    caller.iface.get_tensor(buf, tensor, data, offset, size)


@implements("TDATA-13")
@checked
def tensor_set_async(backend: Backend, tensor: Tensor, data: int, offset: int, size: int) -> None:
    """TDATA-13: the backend's set_tensor_async entry, else tensor_set."""
    check_tensor_set_async(tensor, offset, size, tensor.world.fixed)
    if backend.iface.set_tensor_async is None:
        tensor_set(tensor, data, offset, size)
    else:
        backend.iface.set_tensor_async(backend, tensor, data, offset, size)


@implements("TDATA-13")
@checked
def tensor_get_async(backend: Backend, tensor: Tensor, data: int, offset: int, size: int) -> None:
    """TDATA-13: the backend's get_tensor_async entry, else tensor_get."""
    check_tensor_get_async(tensor, offset, size, tensor.world.fixed)
    if backend.iface.get_tensor_async is None:
        tensor_get(tensor, data, offset, size)
    else:
        backend.iface.get_tensor_async(backend, tensor, data, offset, size)


@checked
def check_view_init(t: TensorState) -> int:
    """TDATA-14 to TDATA-17, in rc.8's order; the view_src's data, where the view is placed from."""
    require(t.buffer is None, "TDATA-14")
    src = required(t.view_src, "TDATA-15")
    require(src.buffer is not None, "TDATA-16")
    return required(src.data, "TDATA-17")


@implements("TDATA-18")
@checked
def view_init(buffer: Buffer, tensor: Tensor) -> None:
    """TDATA-18: place a view in `buffer` at its root's data plus its offset."""
    data = check_view_init(tensor)
    tensor.buffer = buffer
    tensor.data = data + tensor.view_offs
    buffer_init_tensor(buffer, tensor)


@checked
def check_tensor_alloc(t: TensorState, addr: int, base: Callable[[], int], size: int,
                       alloc_size: Callable[[], int]) -> None:
    """TDATA-19 to TDATA-23, in rc.8's order.

    `base` is called only after the first three asserts pass, as rc.8 reads the buffer's base
    (which asserts BUF-5) only then, and `alloc_size` (the buffer type's get_alloc_size entry)
    only after the fourth: the end is measured with the buffer's alloc size.
    """
    require(t.buffer is None, "TDATA-19")
    require(t.data is None, "TDATA-20")
    require(t.view_src is None, "TDATA-21")
    require(addr >= base(), "TDATA-22")
    require(addr + alloc_size() <= base() + size, "TDATA-23")


@implements("TDATA-24")
@checked
def tensor_alloc(buffer: Buffer, tensor: Tensor, addr: int) -> None:
    """TDATA-24: place a tensor at address `addr` of `buffer`."""
    check_tensor_alloc(
        tensor, addr, lambda: buffer_get_base(buffer), buffer_get_size(buffer), lambda: buffer_get_alloc_size(buffer, tensor)
    )
    tensor.buffer = buffer
    tensor.data = addr
    buffer_init_tensor(buffer, tensor)
