"""The adapter protocol: one Python face for every implementation under test.

Methods are the C API's functions without their prefix (`buft_name` is
`ggml_backend_buft_name`), taking and returning opaque handles. A handle compares equal to
another handle of the same object (`==`). Host memory is handled as `HostMem` handles, so that
asynchronous calls can be given memory that the scenario reuses or reads later.

A target that lacks a C symbol raises `MissingSymbol` from the method that needs it; the checks
using that method report `unsupported` (not a failure) and the rest run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from ggspec.reference.clauses import Profile
from ggspec.reference.vdev import VDevParams

from .errors import MissingSymbol, NeedsPristineProcess

__all__ = ["GraphCopyResult", "GraphInfo", "Handle", "MissingSymbol", "NeedsPristineProcess", "SchedPlan", "Target", "TensorInfo",
           "VDevParams", "device_labels"]

#: True while differential runs an example in a check's own worker, which may fork workers for
#: later examples: a target's resource that cannot cross a fork (the WebGPU device) is then
#: refused with NeedsPristineProcess, and the example reruns in a worker forked for it alone.
#: (A state machine runs in its check's worker and forks nothing: it may start the device there.)
IN_SHARED_WORKER: ContextVar[bool] = ContextVar("IN_SHARED_WORKER", default=False)

Handle = Any

#: the environment variable `ggspec check --device` sets for the run; forked workers inherit it
#: (adapters/webgpu_device.py gives a target the WebGPU device where it says `webgpu`)
DEVICE_ENV = "GGSPEC_DEVICE"
#: `vdev` and `webgpu` are devices ggspec builds; `vulkan` is one a target ships (its own Vulkan
#: backend: adapters/vulkan_device.py, whose SHIPPED table can later name Metal or CUDA)
DEVICES = ("vdev", "webgpu", "vulkan")


def selected_device() -> str:
    """The device of this run: `$GGSPEC_DEVICE`, default `vdev`."""
    return os.environ.get(DEVICE_ENV) or "vdev"



def device_labels(devices: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """(label, device) in creation order: a device's name, `name#k` for the k-th (k >= 1) of a
    name used more than once, so that every entry of a merged log names its device."""
    seen: dict[str, int] = {}
    out = []
    for name, dev in devices:
        k = seen.get(name, 0)
        seen[name] = k + 1
        out.append((name if k == 0 else f"{name}#{k}", dev))
    return out


#: `Target.op`'s kinds, read in one place by every adapter: kind -> (sources it needs, what its
#: params are: "ints" (view: ne..., nb..., offset; reshape: ne...; permute: axes), "float" (the
#: scale, eps or softmax scale), "" (none)). soft_max_ext's mask (second source) may be None.
OP_KINDS: dict[str, tuple[int, str]] = {
    "view": (1, "ints"), "reshape": (1, "ints"), "permute": (1, "ints"),
    "scale": (1, "float"), "norm": (1, "float"), "norm_inplace": (1, "float"), "soft_max_ext": (1, "float"),
    "soft_max": (1, ""), "dup": (1, ""), "cont": (1, ""), "transpose": (1, ""), "gelu": (1, ""), "silu": (1, ""),
    "reshape_as": (2, ""), "add": (2, ""), "mul": (2, ""), "mul_mat": (2, ""), "cpy": (2, ""), "get_rows": (2, ""),
}


@dataclass(frozen=True)
class OpCall:
    """One `Target.op` call, checked against OP_KINDS: its sources and its params as they are meant."""

    kind: str
    a: Any
    b: Any
    ints: tuple[int, ...] = ()
    value: float = 0.0


def op_call(kind: str, srcs: Sequence[Any], params: Sequence[float]) -> OpCall:
    """The call `Target.op(kind, srcs, params)` means; ValueError for a missing source or an
    unknown kind (the same messages on every target)."""
    a = srcs[0] if srcs else None
    b = srcs[1] if len(srcs) > 1 else None
    if a is None:
        raise ValueError(f"op {kind!r} needs a first source")
    if kind not in OP_KINDS:
        raise ValueError(f"unknown op kind {kind!r}")
    n_srcs, form = OP_KINDS[kind]
    if n_srcs == 2 and b is None:
        raise ValueError(f"op {kind!r} needs two sources")
    if form == "ints":
        return OpCall(kind, a, b, ints=tuple(int(p) for p in params))
    if form == "float":
        return OpCall(kind, a, b, value=float(params[0]))
    return OpCall(kind, a, b)


@dataclass(frozen=True)
class GraphInfo:
    """A graph's counts and tables: `size`, `n_nodes`, `n_leafs`, whether it has a gradient
    array, the slots of its visited hash set and its evaluation order (CORE-7, CORE-12)."""

    size: int
    n_nodes: int
    n_leafs: int
    has_grads: bool
    hash_size: int
    order: int


@dataclass(frozen=True)
class GraphCopyResult:
    """`struct ggml_backend_graph_copy` (GCOPY-1): the copy's buffer and graph (None for NULL),
    whether its two contexts are set, and `raw`, the struct itself for `backend_graph_copy_free`."""

    buffer: Any
    has_ctx_allocated: bool
    has_ctx_unallocated: bool
    graph: Any
    raw: Any


@dataclass(frozen=True, eq=False)
class SchedPlan:
    """What a scheduler decided for the last graph, by tensor name: each split's backend index,
    node range and input names; each node's and each leaf's backend index (-1 for none); the
    copies' names (sorted); the number of splits; and which pass decided each node and leaf
    (`causes`: "1.dst", "1.vsrc", "1.wgtN", "2.1" ... "2.4", "3.vsrc", "3.cur", "user").

    `splits` and `causes` need a target's debug hooks (the reference and native/ have them);
    a target without them (rc.8) gives the *public* plan: `splits` and `causes` None, the rest
    read through the API (get_n_splits, get_node_backend, the `#`-named sources the scheduler
    redirected nodes to). Two plans are equal when their public parts are, and, where both
    have them, their splits and causes too: a target lacking hooks is never failed for that.
    """

    splits: tuple[tuple[int, int, int, tuple[str, ...]], ...] | None
    nodes: tuple[tuple[str, int], ...]
    copies: tuple[str, ...]
    n_splits: int
    causes: tuple[tuple[str, str], ...] | None = None
    leafs: tuple[tuple[str, int], ...] = ()

    @property
    def full(self) -> bool:
        return self.splits is not None

    def public(self) -> SchedPlan:
        """The part every target shows through the API."""
        return SchedPlan(None, self.nodes, self.copies, self.n_splits, None, self.leafs)

    def project(self, *, nodes: bool = True, ranges: bool = True, inputs: bool = True, copies: bool = True,
                causes: bool = True) -> SchedPlan:
        """This plan with some parts blanked, so a check observes only what its clauses decide:
        `nodes` (node and leaf assignments), `ranges` (splits' backends and node ranges,
        n_splits), `inputs` (splits' inputs), `copies`, `causes`."""
        splits = None
        if self.splits is not None:
            splits = () if not (ranges or inputs) else tuple(
                (b, i0, i1, ins if inputs else ()) if ranges else (0, 0, 0, ins) for b, i0, i1, ins in self.splits)
        return SchedPlan(splits, self.nodes if nodes else (), self.copies if copies else (),
                         self.n_splits if ranges else 0, self.causes if causes else None,
                         self.leafs if nodes else ())

    def select(self, names: Iterable[str]) -> SchedPlan:
        """Only the assignments (and causes) of the tensors named; splits, copies and n_splits
        blanked: what a check of one pass observes (the tensors that pass decides)."""
        keep = set(names)
        causes = None if self.causes is None else tuple(c for c in self.causes if c[0] in keep)
        return SchedPlan(None if self.splits is None else (), tuple(n for n in self.nodes if n[0] in keep), (), 0,
                         causes, tuple(n for n in self.leafs if n[0] in keep))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SchedPlan):
            return NotImplemented
        if (self.nodes, self.leafs, self.copies, self.n_splits) != (other.nodes, other.leafs, other.copies,
                                                                      other.n_splits):
            return False
        if self.splits is not None and other.splits is not None and self.splits != other.splits:
            return False
        return self.causes is None or other.causes is None or self.causes == other.causes

    def __hash__(self) -> int:
        return hash((self.nodes, self.leafs, self.copies, self.n_splits))


@dataclass(frozen=True)
class TensorInfo:
    """What the suite compares of a tensor. Addresses are given relative to the tensor's
    resolved buffer (`data_offset`), never as raw pointers, so targets can be compared."""

    type: int
    ne: tuple[int, int, int, int]
    nb: tuple[int, int, int, int]
    op: int
    name: str
    view_offs: int
    has_view_src: bool
    has_buffer: bool
    has_data: bool
    data_offset: int | None


class Target(Protocol):
    name: str
    default_profile: Profile
    #: whether the registry can be reset between examples (in-process registry checks)
    resettable_registry: bool

    # core
    def new_tensor(self, type_: int, ne: Sequence[int], name: str = "") -> Handle: ...
    def new_host_tensor(self, type_: int, ne: Sequence[int], name: str = "") -> Handle:
        """A tensor in a context that allocates memory: data set, buffer NULL."""

    def poke_buffer(self, t: Handle, buf: Handle | None) -> None:
        """Write `t->buffer` directly, as ggml-alloc does."""

    def view(self, a: Handle, ne: Sequence[int], nb: Sequence[int], offset: int) -> Handle: ...
    def set_op(self, t: Handle, op: int, srcs: Sequence[Handle | None]) -> None: ...
    def nbytes(self, t: Handle) -> int: ...
    def tensor_info(self, t: Handle) -> TensorInfo: ...
    def tensor_address(self, t: Handle) -> int:
        """The address of the tensor struct (what the scheduler's hash set keys it by, SCHED-32)."""
        raise MissingSymbol(getattr(self, "name", "target"), "tensor struct addresses")

    def tensor_buffer(self, t: Handle) -> Handle | None: ...
    def tensor_view_src(self, t: Handle) -> Handle | None: ...
    def tensor_src(self, t: Handle, i: int) -> Handle | None:
        """`t->src[i]`."""

    def type_name(self, type_: int) -> str:
        """`ggml_type_name(type)`."""

    def vec_dot_type(self, type_: int) -> int:
        """`ggml_internal_get_type_traits(type).vec_dot_type`."""

    # host memory
    def host_alloc(self, size: int) -> Handle: ...
    def host_write(self, h: Handle, offset: int, payload: bytes) -> None: ...
    def host_read(self, h: Handle, offset: int, size: int) -> bytes: ...

    # buffer types
    def cpu_buffer_type(self) -> Handle: ...
    def buft_name(self, buft: Handle) -> str: ...
    def buft_alloc_buffer(self, buft: Handle, size: int) -> Handle: ...
    def buft_get_alignment(self, buft: Handle) -> int: ...
    def buft_get_alloc_size(self, buft: Handle, t: Handle) -> int: ...
    def buft_supports_backend(self, buft: Handle, backend: Handle) -> bool: ...
    def buft_is_host(self, buft: Handle) -> bool: ...

    # buffers
    def buffer_init_without_get_base(self, size: int) -> Handle: ...
    def context_rebuild(self) -> None:
        """Free the tensor context and make a new one in the same memory (same addresses)."""
        raise MissingSymbol(getattr(self, "name", "target"), "a context in reusable memory")

    def context_init(self, mem_size: int) -> None:
        """`ggml_init` with mem_buffer NULL, this mem_size and no_alloc true, then `ggml_free`
        (CORE-79: the pool is allocated or ggml_init aborts)."""
        raise MissingSymbol(getattr(self, "name", "target"), "ggml_init with a chosen mem_size")

    def buffer_counting_frees(self, size: int) -> Handle:
        """A CPU buffer of `size` bytes whose free_buffer entry counts its calls, then frees."""
        raise MissingSymbol(getattr(self, "name", "target"), "a counting free_buffer entry")

    def buffer_free_calls(self, buf: Handle) -> int:
        """How often the free_buffer entry of a `buffer_counting_frees` buffer ran (also after it is freed)."""
        raise MissingSymbol(getattr(self, "name", "target"), "a counting free_buffer entry")

    def buffer_name(self, buf: Handle) -> str: ...
    def buffer_free(self, buf: Handle | None) -> None: ...
    def buffer_get_base(self, buf: Handle) -> int: ...
    def buffer_get_size(self, buf: Handle) -> int: ...
    def buffer_init_tensor(self, buf: Handle, t: Handle) -> None: ...
    def buffer_get_alignment(self, buf: Handle) -> int: ...
    def buffer_get_alloc_size(self, buf: Handle, t: Handle) -> int: ...
    def buffer_clear(self, buf: Handle, value: int) -> None: ...
    def buffer_is_host(self, buf: Handle) -> bool: ...
    def buffer_set_usage(self, buf: Handle, usage: int) -> None: ...
    def buffer_usage(self, buf: Handle) -> int: ...
    def buffer_get_type(self, buf: Handle) -> Handle: ...
    def buffer_reset(self, buf: Handle) -> None: ...
    def buffer_copy_tensor(self, src: Handle, dst: Handle) -> bool: ...
    def buffer_bytes(self, buf: Handle) -> bytes: ...
    def cpu_buffer_from_ptr(self, mem: Handle | None, size: int) -> Handle: ...

    # tensor data
    def tensor_set(self, t: Handle, payload: bytes, offset: int, size: int) -> None: ...
    def tensor_get(self, t: Handle, offset: int, size: int) -> bytes: ...
    def tensor_set_async(self, backend: Handle, t: Handle, mem: Handle, mem_offset: int, offset: int, size: int) -> None: ...
    def tensor_get_async(self, backend: Handle, t: Handle, mem: Handle, mem_offset: int, offset: int, size: int) -> None: ...
    def view_init(self, buf: Handle, t: Handle) -> None: ...
    def tensor_alloc(self, buf: Handle, t: Handle, offset: int) -> None: ...

    # copies
    def tensor_copy(self, src: Handle, dst: Handle) -> None: ...
    def tensor_copy_async(self, backend: Handle, src: Handle, dst: Handle) -> None: ...

    # backends
    def cpu_init(self) -> Handle: ...
    def vdev_init(self, params: VDevParams) -> Handle: ...
    def vdev_pending(self, backend: Handle) -> int: ...
    def vdev_counters(self, buf: Handle) -> tuple[int, int]: ...
    def vdev_log(self) -> list[str]:
        """The entry logs of every virtual device this target made, merged in call order: one
        line per entry called on a device's buffer type, buffers or backend, `DEVICE ENTRY
        OBJECT ARGS...` (ggspec-vdev.h; DEVICE is the device's name, with `#k` for the k-th
        of a name used twice). The harness compares it with the reference's (judge_logs)."""
        raise MissingSymbol(getattr(self, "name", "target"), "the virtual device's entry log")

    def backend_name(self, backend: Handle | None) -> str: ...
    def backend_free(self, backend: Handle | None) -> None: ...
    def backend_get_default_buffer_type(self, backend: Handle) -> Handle: ...
    def backend_alloc_buffer(self, backend: Handle, size: int) -> Handle: ...
    def backend_get_alignment(self, backend: Handle) -> int: ...
    def backend_synchronize(self, backend: Handle) -> None: ...
    def backend_supports_op(self, backend: Handle, op: Handle) -> bool: ...
    def backend_is_cpu(self, backend: Handle | None) -> bool: ...
    def cpu_set_n_threads(self, backend: Handle | None, n_threads: int) -> None: ...

    # registry
    def reg_reset(self) -> None: ...
    def reg_register(self, name: str, buft: Handle, user_data: int) -> None: ...
    def reg_init_calls(self) -> list[tuple[str, int]]: ...
    def reg_get_count(self) -> int: ...
    def reg_find_by_name(self, name: str) -> int: ...
    def reg_init_backend_from_str(self, backend_str: str) -> Handle | None: ...
    def reg_get_name(self, i: int) -> str: ...
    def reg_init_backend(self, i: int, params: str) -> Handle | None: ...
    def reg_get_default_buffer_type(self, i: int) -> Handle: ...
    def reg_alloc_buffer(self, i: int, size: int) -> Handle: ...

    # graphs (conformance/inputs/graphspec.py builds GraphSpecs with these)
    def set_name(self, t: Handle, name: str) -> None: ...
    def tensor_name(self, t: Handle) -> str: ...
    def op(self, kind: str, srcs: Sequence[Handle | None], params: Sequence[float]) -> Handle: ...
    def new_graph(self, size: int) -> Handle: ...
    def build_forward_expand(self, g: Handle, t: Handle) -> None: ...
    def graph_nodes(self, g: Handle) -> list[Handle]: ...
    def graph_leafs(self, g: Handle) -> list[Handle]: ...
    def graph_get_tensor(self, g: Handle, name: str) -> Handle | None:
        """`graph_get_tensor(g, name)`; None for NULL."""
        ...
    def backend_graph_compute(self, backend: Handle, g: Handle) -> bool: ...

    # contexts and graphs in detail (CORE-6 to CORE-15; checks/graph.py and checks/ops.py)
    def context_tensors(self, host: bool = False) -> list[Handle]:
        """The tensors of the no_alloc context (`host`: of the allocating one), walked with
        `get_first_tensor` / `get_next_tensor`."""

    def context_no_alloc(self, host: bool = False) -> bool:
        """`get_no_alloc` of the no_alloc context (`host`: of the allocating one)."""

    def new_graph_custom(self, size: int, grads: bool) -> Handle: ...
    def new_graph_default(self) -> Handle:
        """`new_graph(ctx)`."""

    def graph_info(self, g: Handle) -> GraphInfo: ...
    def graph_perf_runs(self, g: Handle) -> int:
        """`g->perf_runs`: how many times the CPU code computed this graph struct (CORE-78)."""

    def graph_set_order(self, g: Handle, order: int) -> None:
        """Write `g->order` (0 left-to-right, 1 right-to-left)."""

    def graph_grads(self, g: Handle) -> list[Handle | None] | None:
        """`grads[0 .. n_nodes)`, or None when the graph has no gradient array."""

    def graph_view(self, g: Handle, i0: int, i1: int) -> Handle:
        """`graph_view(g, i0, i1)`: the returned graph value, kept alive by the target."""

    def graph_clear(self, g: Handle) -> None: ...
    def graph_cpy(self, src: Handle, dst: Handle) -> None:
        """`graph_cpy(src, dst)` (CORE-81)."""

    def graph_dup(self, g: Handle) -> Handle:
        """`graph_dup(ctx, g)` in the no_alloc context (CORE-86)."""

    def set_param(self, t: Handle) -> None:
        """`set_param(ctx, t)` in the no_alloc context."""

    def tensor_grad(self, t: Handle) -> Handle | None: ...
    def tensor_op_params(self, t: Handle) -> bytes:
        """The 64 bytes of `t->op_params`."""

    # the scheduler
    def sched_new(self, backends: Sequence[Handle], bufts: Sequence[Handle] | None, graph_size: int) -> Handle: ...
    def sched_free(self, s: Handle | None) -> None: ...
    def sched_init_measure(self, s: Handle, g: Handle) -> None: ...
    def sched_graph_compute(self, s: Handle, g: Handle) -> None: ...
    def sched_reset(self, s: Handle) -> None: ...
    def sched_get_n_splits(self, s: Handle) -> int: ...
    def sched_set_node_backend(self, s: Handle, node: Handle, backend: Handle) -> None: ...
    def sched_get_node_backend(self, s: Handle, node: Handle) -> Handle | None: ...
    def sched_get_buffer(self, s: Handle, backend: Handle) -> Handle: ...
    def sched_get_tallocr(self, s: Handle, backend: Handle) -> Handle: ...
    def sched_set_eval_callback(self, s: Handle, decide: Callable[[str, bool], bool] | None) -> None: ...
    def sched_plan(self, s: Handle, g: Handle) -> SchedPlan: ...

    # allocators (spec/alloc.md; checks/alloc.py). Allocator handles are opaque.
    def tensor_data(self, t: Handle) -> int | None:
        """`t->data` as an address (None for NULL): compared only within one target."""

    def tallocr_new(self, mem: Handle | None, size: int, alignment: int) -> Handle:
        """`tallocr_new(data, size, alignment)` over host memory `mem` (a host_alloc handle; None: NULL)."""

    def tallocr_new_measure(self, alignment: int) -> Handle: ...
    def tallocr_new_from_buft(self, buft: Handle, size: int) -> Handle: ...
    def tallocr_new_from_backend(self, backend: Handle, size: int) -> Handle: ...
    def tallocr_new_from_buffer(self, buf: Handle) -> Handle: ...
    def tallocr_new_measure_from_buft(self, buft: Handle) -> Handle: ...
    def tallocr_new_measure_from_backend(self, backend: Handle) -> Handle: ...
    def tallocr_get_buffer(self, talloc: Handle) -> Handle: ...
    def tallocr_free(self, talloc: Handle | None) -> None: ...
    def tallocr_is_measure(self, talloc: Handle) -> bool: ...
    def tallocr_reset(self, talloc: Handle) -> None: ...
    def tallocr_alloc(self, talloc: Handle, t: Handle) -> None: ...
    def tallocr_max_size(self, talloc: Handle) -> int: ...
    def gallocr_new(self) -> Handle: ...
    def gallocr_free(self, galloc: Handle | None) -> None: ...
    def gallocr_set_parse_seq(self, galloc: Handle, order: Sequence[int]) -> None: ...
    def gallocr_alloc_graph(self, galloc: Handle, talloc: Handle, g: Handle) -> int: ...
    def gallocr_alloc_graph_n(self, galloc: Handle, g: Handle, hash_size: int,
                              tallocs: Sequence[tuple[Handle, Handle]]) -> None:
        """`gallocr_alloc_graph_n` with a new hash set of `hash_set_new(hash_size)` slots in which
        each listed tensor is inserted (in order) and its slot of the allocator table set to the
        tensor allocator paired with it; other slots are NULL."""

    def allocr_new(self, mem: Handle | None, size: int, alignment: int) -> Handle: ...
    def allocr_new_measure(self, alignment: int) -> Handle: ...
    def allocr_new_from_buffer(self, buf: Handle) -> Handle: ...
    def allocr_new_from_backend(self, backend: Handle, size: int) -> Handle: ...
    def allocr_new_measure_from_backend(self, backend: Handle) -> Handle: ...
    def allocr_get_buffer(self, alloc: Handle) -> Handle: ...
    def allocr_set_parse_seq(self, alloc: Handle, order: Sequence[int]) -> None: ...
    def allocr_free(self, alloc: Handle | None) -> None: ...
    def allocr_is_measure(self, alloc: Handle) -> bool: ...
    def allocr_reset(self, alloc: Handle) -> None: ...
    def allocr_alloc(self, alloc: Handle, t: Handle) -> None: ...
    def allocr_max_size(self, alloc: Handle) -> int: ...
    def allocr_alloc_graph(self, alloc: Handle, g: Handle) -> int: ...
    def backend_alloc_ctx_tensors(self, backend: Handle, host: bool = False) -> Handle | None:
        """`backend_alloc_ctx_tensors(ctx, backend)` on the target's no_alloc context (the one
        `new_tensor`, `view` and `op` create tensors in; `host`: the allocating context of
        `new_host_tensor`). None for NULL."""

    def backend_alloc_ctx_tensors_from_buft(self, buft: Handle, host: bool = False) -> Handle | None: ...

    # graph plans and the CPU backend's work memory (BACK-10, BACK-11, CPU-15 to CPU-19)
    def backend_graph_plan_create(self, backend: Handle, g: Handle) -> Handle: ...
    def backend_graph_plan_free(self, backend: Handle, plan: Handle) -> None: ...
    def backend_graph_plan_compute(self, backend: Handle, plan: Handle) -> None: ...
    def cpu_work_size(self, backend: Handle) -> int:
        """CPU-17's observable: the size of a CPU backend's graph_compute work buffer."""

    def cpu_work_data(self, backend: Handle) -> int:
        """CPU-17's observable: the buffer's address (0 while empty); compared within one target."""

    def cpu_plan_work_size(self, plan: Handle) -> int:
        """CPU-18's observable: the size of a CPU plan's own work buffer."""

    def cpu_plan_n_threads(self, plan: Handle) -> int:
        """CPU-15, CPU-18: the thread count a CPU plan computes with."""

    # graph copy and compare (spec/graph_copy.md)
    def backend_graph_copy(self, backend: Handle, g: Handle) -> GraphCopyResult: ...
    def backend_graph_copy_free(self, copy: GraphCopyResult) -> None: ...
    def backend_compare_graph_backend(self, backend1: Handle, backend2: Handle, g: Handle,
                                      callback: Callable[[int, Handle, Handle], bool]) -> bool:
        """`compare_graph_backend`, the callback given the node index and the two nodes."""
