"""BACK: backends — the interface table and the API functions that call it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .buffer import Buffer, BufferType, buft_alloc_buffer, buft_get_alignment
from .checked import checked
from .clauses import implements, undefined
from .graph import CGraph
from .tensor import Tensor
from .world import World

#: `ggml_backend_graph_plan_t`: whatever the backend's graph_plan_create entry returns
GraphPlan = object


@dataclass
class BackendInterface:
    """`struct ggml_backend_i`.

    set_tensor_async / get_tensor_async take host addresses in the world's address space. The
    graph entries come last, with defaults, so that interfaces written before them still build;
    `graph_compute` is required by rc.8 (BACK-12), the plan entries are optional (BACK-10).
    """

    get_name: Callable[[Backend], str]
    free: Callable[[Backend], None]
    get_default_buffer_type: Callable[[Backend], BufferType]
    set_tensor_async: Callable[[Backend, Tensor, int, int, int], None] | None
    get_tensor_async: Callable[[Backend, Tensor, int, int, int], None] | None
    cpy_tensor_async: Callable[[Backend, Tensor, Tensor], bool] | None
    synchronize: Callable[[Backend], None] | None
    supports_op: Callable[[Backend, Tensor], bool]
    graph_plan_create: Callable[[Backend, CGraph], GraphPlan] | None = None
    graph_plan_free: Callable[[Backend, GraphPlan], None] | None = None
    graph_plan_compute: Callable[[Backend, GraphPlan], None] | None = None
    graph_compute: Callable[[Backend, CGraph], bool] | None = None


@dataclass(eq=False)
class Backend:
    """`struct ggml_backend`: an interface and a context.

    Two fields are the model's own, not rc.8's, so that the model never calls an entry for its
    bookkeeping (the calls a backend sees are the calls rc.8 makes): `label`, the name printed
    in the model's messages (its get_name entry is not called to print it), and `known_answer`,
    what its supports_op entry answers for a node, known without calling the entry (the model's
    CPU backend and virtual device give the rule their entry applies; None: not known).
    """

    world: World
    iface: BackendInterface
    context: object = None
    freed: bool = field(default=False, repr=False)
    label: str = field(default="", repr=False)
    known_answer: Callable[[Tensor], bool] | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"<backend {self.label!r}>" if self.label else f"<backend at {id(self):#x}>"


def _live(backend: Backend) -> Backend:
    if backend.freed:
        undefined("BACK-2", f"use of {backend!r} after ggml_backend_free")
    return backend


@implements("BACK-1")
@checked
def backend_name(backend: Backend | None) -> str:
    """BACK-1: "NULL" for NULL, else the get_name entry."""
    if backend is None:
        return "NULL"
    return _live(backend).iface.get_name(backend)


@implements("BACK-2")
@checked
def backend_free(backend: Backend | None) -> None:
    """BACK-2: NULL is a no-op, else the free entry."""
    if backend is None:
        return
    _live(backend).iface.free(backend)
    backend.freed = True


@implements("BACK-3")
@checked
def backend_get_default_buffer_type(backend: Backend) -> BufferType:
    """BACK-3: the get_default_buffer_type entry."""
    return _live(backend).iface.get_default_buffer_type(backend)


@implements("BACK-4")
@checked
def backend_alloc_buffer(backend: Backend, size: int) -> Buffer:
    """BACK-4: allocate from the default buffer type."""
    return buft_alloc_buffer(backend_get_default_buffer_type(backend), size)


@implements("BACK-5")
@checked
def backend_get_alignment(backend: Backend) -> int:
    """BACK-5: the default buffer type's alignment."""
    return buft_get_alignment(backend_get_default_buffer_type(backend))


@implements("BACK-6", "BACK-9")
@checked
def backend_synchronize(backend: Backend) -> None:
    """BACK-6: the synchronize entry when there is one; BACK-9: afterwards nothing is pending."""
    entry = _live(backend).iface.synchronize
    if entry is not None:
        entry(backend)


@implements("BACK-7")
@checked
def backend_supports_op(backend: Backend, op: Tensor) -> bool:
    """BACK-7: the supports_op entry."""
    return _live(backend).iface.supports_op(backend, op)


def _entry(backend: Backend, name: str) -> Callable[..., object]:
    entry: Callable[..., object] | None = getattr(_live(backend).iface, name)
    if entry is None:
        undefined("BACK-10" if name.startswith("graph_plan") else "BACK-12", f"{backend!r} has no {name} entry (a NULL call)")
    return entry


@implements("BACK-10")
@checked
def backend_graph_plan_create(backend: Backend, cgraph: CGraph) -> GraphPlan:
    """BACK-10: the graph_plan_create entry."""
    return _entry(backend, "graph_plan_create")(backend, cgraph)


@implements("BACK-10")
@checked
def backend_graph_plan_free(backend: Backend, plan: GraphPlan) -> None:
    """BACK-10: the graph_plan_free entry."""
    _entry(backend, "graph_plan_free")(backend, plan)


@implements("BACK-10", "BACK-11")
@checked
def backend_graph_plan_compute(backend: Backend, plan: GraphPlan) -> None:
    """BACK-10, BACK-11: the graph_plan_compute entry; no synchronize afterwards."""
    _entry(backend, "graph_plan_compute")(backend, plan)


@implements("BACK-12", "BACK-13")
@checked
def backend_graph_compute(backend: Backend, cgraph: CGraph) -> bool:
    """BACK-12, BACK-13: the graph_compute entry's result; no synchronize, no supports_op."""
    return bool(_entry(backend, "graph_compute")(backend, cgraph))
