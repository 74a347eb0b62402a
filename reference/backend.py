"""BACK: backends — the interface table and the API functions that call it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .buffer import Buffer, BufferType, buft_alloc_buffer, buft_get_alignment
from .clauses import implements, undefined
from .tensor import Tensor
from .world import World


@dataclass
class BackendInterface:
    """`struct ggml_backend_i` (the graph entries come with the graphs chapter).

    set_tensor_async / get_tensor_async take host addresses in the world's address space.
    """

    get_name: Callable[[Backend], str]
    free: Callable[[Backend], None]
    get_default_buffer_type: Callable[[Backend], BufferType]
    set_tensor_async: Callable[[Backend, Tensor, int, int, int], None] | None
    get_tensor_async: Callable[[Backend, Tensor, int, int, int], None] | None
    cpy_tensor_async: Callable[[Backend, Tensor, Tensor], bool] | None
    synchronize: Callable[[Backend], None] | None
    supports_op: Callable[[Backend, Tensor], bool]


@dataclass(eq=False)
class Backend:
    """`struct ggml_backend`: an interface and a context."""

    world: World
    iface: BackendInterface
    context: object = None
    freed: bool = field(default=False, repr=False)

    def __repr__(self) -> str:
        return f"<backend {self.iface.get_name(self)!r}>"


def _live(backend: Backend) -> Backend:
    if backend.freed:
        undefined("BACK-2", f"use of {backend!r} after ggml_backend_free")
    return backend


@implements("BACK-1")
def backend_name(backend: Backend | None) -> str:
    """BACK-1: "NULL" for NULL, else the get_name entry."""
    if backend is None:
        return "NULL"
    return _live(backend).iface.get_name(backend)


@implements("BACK-2")
def backend_free(backend: Backend | None) -> None:
    """BACK-2: NULL is a no-op, else the free entry."""
    if backend is None:
        return
    _live(backend).iface.free(backend)
    backend.freed = True


@implements("BACK-3")
def backend_get_default_buffer_type(backend: Backend) -> BufferType:
    """BACK-3: the get_default_buffer_type entry."""
    return _live(backend).iface.get_default_buffer_type(backend)


@implements("BACK-4")
def backend_alloc_buffer(backend: Backend, size: int) -> Buffer:
    """BACK-4: allocate from the default buffer type."""
    return buft_alloc_buffer(backend_get_default_buffer_type(backend), size)


@implements("BACK-5")
def backend_get_alignment(backend: Backend) -> int:
    """BACK-5: the default buffer type's alignment."""
    return buft_get_alignment(backend_get_default_buffer_type(backend))


@implements("BACK-6", "BACK-9")
def backend_synchronize(backend: Backend) -> None:
    """BACK-6: the synchronize entry when there is one; BACK-9: afterwards nothing is pending."""
    entry = _live(backend).iface.synchronize
    if entry is not None:
        entry(backend)


@implements("BACK-7")
def backend_supports_op(backend: Backend, op: Tensor) -> bool:
    """BACK-7: the supports_op entry."""
    return _live(backend).iface.supports_op(backend, op)
