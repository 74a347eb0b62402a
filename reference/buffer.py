"""BUFT and BUF: buffer types and buffers.

Both are an interface (a table of entries, some optional, exactly as in ggml-backend-impl.h) plus
a context. The public functions below are the API; they are what spec/buft.md and spec/buffer.md
describe, and they call the entries the way rc.8 does.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .checked import checked, nonnull
from .clauses import implements, require, required, undefined
from .tensor import Tensor, nbytes
from .world import World

if TYPE_CHECKING:
    from .backend import Backend


class BufferUsage(enum.IntEnum):
    """`enum ggml_backend_buffer_usage`: the two named values. The field itself holds any value
    of the enum's C type (BUF-11): rc.8 stores what it is given."""

    ANY = 0
    WEIGHTS = 1


#: the range of the enum's C type (unsigned int: both named values are non-negative)
USAGE_MAX = 2**32 - 1


@dataclass
class BufferTypeInterface:
    """`struct ggml_backend_buffer_type_i`; None marks an optional entry left NULL."""

    get_name: Callable[[BufferType], str]
    alloc_buffer: Callable[[BufferType, int], Buffer]
    get_alignment: Callable[[BufferType], int]
    get_alloc_size: Callable[[BufferType, Tensor], int] | None
    supports_backend: Callable[[BufferType, Backend], bool]
    is_host: Callable[[BufferType], bool] | None


@dataclass(eq=False)
class BufferType:
    """`struct ggml_backend_buffer_type`."""

    iface: BufferTypeInterface
    context: object = None
    #: the name printed in the model's messages (the get_name entry is not called to print it)
    label: str = field(default="", repr=False)

    def __repr__(self) -> str:
        return f"<buffer type {self.label!r}>" if self.label else f"<buffer type at {id(self):#x}>"


@dataclass
class BufferInterface:
    """`struct ggml_backend_buffer_i`; None marks an entry left NULL.

    set_tensor / get_tensor take host addresses (`data`) in the world's address space.
    """

    get_name: Callable[[Buffer], str]
    free_buffer: Callable[[Buffer], None] | None
    get_base: Callable[[Buffer], int | None] | None
    init_tensor: Callable[[Buffer, Tensor], None] | None
    set_tensor: Callable[[Buffer, Tensor, int, int, int], None]
    get_tensor: Callable[[Buffer, Tensor, int, int, int], None]
    cpy_tensor: Callable[[Buffer, Tensor, Tensor], bool] | None
    clear: Callable[[Buffer, int], None]
    reset: Callable[[Buffer], None] | None


@dataclass(eq=False)
class Buffer:
    """`struct ggml_backend_buffer`: interface, type, context, size, usage."""

    world: World
    iface: BufferInterface
    buft: BufferType
    context: object
    size: int
    usage: int = BufferUsage.ANY
    freed: bool = field(default=False, repr=False)

    def __repr__(self) -> str:
        """The buffer type's label (no entry is called to print a buffer)."""
        return f"<buffer {self.buft.label!r} size={self.size}>" if self.buft.label else f"<buffer size={self.size}>"


# --- buffer types ---------------------------------------------------------------------------


@implements("BUFT-1")
@checked
def buft_name(buft: BufferType) -> str:
    """BUFT-1: the type's get_name entry."""
    return buft.iface.get_name(buft)


@implements("BUFT-2")
@checked
def buft_alloc_buffer(buft: BufferType, size: int) -> Buffer:
    """BUFT-2: the type's alloc_buffer entry."""
    if size < 0:
        raise ValueError(f"size is a size_t, got {size}")
    return buft.iface.alloc_buffer(buft, size)


@implements("BUFT-3")
@checked
def buft_get_alignment(buft: BufferType) -> int:
    """BUFT-3: the type's get_alignment entry."""
    return buft.iface.get_alignment(buft)


@implements("BUFT-4")
@checked
def buft_get_alloc_size(buft: BufferType, tensor: Tensor) -> int:
    """BUFT-4: the get_alloc_size entry, or ggml_nbytes when the entry is NULL."""
    if buft.iface.get_alloc_size is not None:
        return buft.iface.get_alloc_size(buft, tensor)
    return nbytes(tensor)


@implements("BUFT-5")
@checked
def buft_supports_backend(buft: BufferType, backend: Backend) -> bool:
    """BUFT-5: the type's supports_backend entry."""
    return buft.iface.supports_backend(buft, backend)


@implements("BUFT-6")
@checked
def buft_is_host(buft: BufferType) -> bool:
    """BUFT-6: the is_host entry, or false when the entry is NULL."""
    if buft.iface.is_host is not None:
        return buft.iface.is_host(buft)
    return False


# --- buffers --------------------------------------------------------------------------------


@implements("BUF-2")
@checked
def buffer_init(world: World, buft: BufferType, iface: BufferInterface, context: object, size: int) -> Buffer:
    """BUF-1, BUF-2: a new buffer of type `buft`; usage starts as ANY."""
    require(iface.get_base is not None, "BUF-1")
    return Buffer(world, iface, buft, context, size, BufferUsage.ANY)


def _live(buffer: Buffer) -> Buffer:
    if buffer.freed:
        undefined("BUF-4", f"use of {buffer!r} after ggml_backend_buffer_free")
    return buffer


@implements("BUF-3")
@checked
def buffer_name(buffer: Buffer) -> str:
    """BUF-3: the buffer's get_name entry."""
    return _live(buffer).iface.get_name(buffer)


@implements("BUF-4")
@checked
def buffer_free(buffer: Buffer | None) -> None:
    """BUF-4: NULL is a no-op; the free_buffer entry runs when there is one."""
    if buffer is None:
        return
    _live(buffer)
    if buffer.iface.free_buffer is not None:
        buffer.iface.free_buffer(buffer)
    buffer.freed = True


@checked
def buffer_get_base(buffer: Buffer) -> int:
    """BUF-5: the get_base entry's address, asserted non-NULL."""
    get_base = nonnull(_live(buffer).iface.get_base, "BUF-1", "the get_base entry")
    base = required(get_base(buffer), "BUF-5")
    require(base != 0, "BUF-5")
    return base


@implements("BUF-6")
@checked
def buffer_get_size(buffer: Buffer) -> int:
    """BUF-6: the size recorded at init."""
    return _live(buffer).size


@implements("BUF-7")
@checked
def buffer_init_tensor(buffer: Buffer, tensor: Tensor) -> None:
    """BUF-7: the init_tensor entry when there is one."""
    entry = _live(buffer).iface.init_tensor
    if entry is not None:
        entry(buffer, tensor)


@implements("BUF-8")
@checked
def buffer_get_alignment(buffer: Buffer) -> int:
    """BUF-8: the alignment of the buffer's type."""
    return buft_get_alignment(buffer_get_type(buffer))


@implements("BUF-8")
@checked
def buffer_get_alloc_size(buffer: Buffer, tensor: Tensor) -> int:
    """BUF-8: the alloc size of the buffer's type."""
    return buft_get_alloc_size(buffer_get_type(buffer), tensor)


@implements("BUF-9")
@checked
def buffer_clear(buffer: Buffer, value: int) -> None:
    """BUF-9: the clear entry, with `value` as a uint8_t."""
    if not 0 <= value <= 255:
        raise ValueError(f"value is a uint8_t, got {value}")
    _live(buffer).iface.clear(buffer, value)


@implements("BUF-10")
@checked
def buffer_is_host(buffer: Buffer) -> bool:
    """BUF-10: whether the buffer's type is a host type."""
    return buft_is_host(buffer_get_type(buffer))


@implements("BUF-11")
@checked
def buffer_set_usage(buffer: Buffer, usage: int) -> None:
    """BUF-11: store the usage, named or not (rc.8 does not check it); nothing else changes."""
    if isinstance(usage, bool) or not isinstance(usage, int):
        raise TypeError(f"usage is an enum ggml_backend_buffer_usage (an int), got {type(usage).__name__}")
    if not 0 <= usage <= USAGE_MAX:
        raise ValueError(f"usage is an enum ggml_backend_buffer_usage (unsigned int), got {usage}")
    _live(buffer).usage = int(usage)


@implements("BUF-12")
@checked
def buffer_get_type(buffer: Buffer) -> BufferType:
    """BUF-12: the type recorded at init."""
    return _live(buffer).buft


@implements("BUF-13")
@checked
def buffer_reset(buffer: Buffer) -> None:
    """BUF-13: the reset entry when there is one."""
    entry = _live(buffer).iface.reset
    if entry is not None:
        entry(buffer)
