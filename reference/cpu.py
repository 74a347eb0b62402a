"""CPU: the CPU backend, its buffer type and its buffers (host memory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .backend import Backend, BackendInterface, GraphPlan
from .buffer import Buffer, BufferInterface, BufferType, BufferTypeInterface, buffer_init, buffer_is_host
from .checked import checked, instance, nonnull
from .clauses import implements, require, required, undefined
from .graph import CGraph, count_run
from .ops import HostMemory, compute, is_quantized, nelements, nrows
from .tensor import Tensor, nbytes
from .types import DEFAULT_N_THREADS, GGMLType, Op, row_size, traits
from .world import SIZE_MAX, Region, World, ptr_add

TENSOR_ALIGNMENT = 64


@dataclass
class CpuBufferContext:
    """The host memory of a CPU buffer; `owned` is False for buffer_from_ptr."""

    region: Region | None
    base: int
    owned: bool


@dataclass
class CpuBackendContext:
    n_threads: int = DEFAULT_N_THREADS
    #: CPU-17: the work buffer graph_compute keeps (size 0 and no region while empty)
    work_size: int = 0
    work_region: Region | None = field(default=None, repr=False)


# --- buffers ------------------------------------------------------------------------------


def _ctx(buffer: Buffer) -> CpuBufferContext:
    return instance(buffer.context, CpuBufferContext, "CPU-8", "a CPU buffer's context")


@implements("CPU-1")
def _buffer_name(buffer: Buffer) -> str:
    return "CPU"


def _buffer_get_base(buffer: Buffer) -> int:
    return _ctx(buffer).base


def _buffer_free(buffer: Buffer) -> None:
    ctx = _ctx(buffer)
    if ctx.owned and ctx.region is not None:
        buffer.world.memory.unmap(ctx.region)


@implements("CPU-8")
def _buffer_set_tensor(buffer: Buffer, tensor: Tensor, data: int, offset: int, size: int) -> None:
    """CPU-8: memcpy(tensor->data + offset, data, size)."""
    mem = buffer.world.memory
    mem.write(ptr_add(nonnull(tensor.data, "CPU-8", "tensor->data"), offset), mem.read(data, size))


@implements("CPU-8")
def _buffer_get_tensor(buffer: Buffer, tensor: Tensor, data: int, offset: int, size: int) -> None:
    """CPU-8: memcpy(data, tensor->data + offset, size)."""
    mem = buffer.world.memory
    mem.write(data, mem.read(ptr_add(nonnull(tensor.data, "CPU-8", "tensor->data"), offset), size))


@implements("CPU-9")
def _buffer_cpy_tensor(buffer: Buffer, src: Tensor, dst: Tensor) -> bool:
    """CPU-9: copy from a host source, refuse anything else."""
    if src.buffer is not None and buffer_is_host(src.buffer):
        mem = buffer.world.memory
        mem.write(nonnull(dst.data, "CPU-9", "dst->data"), mem.read(nonnull(src.data, "CPU-9", "src->data"), nbytes(src)))
        return True
    return False


@implements("CPU-6")
def _buffer_clear(buffer: Buffer, value: int) -> None:
    """CPU-6: memset of all `size` bytes (outside mapped memory: undefined, found before the bytes are built)."""
    base = _ctx(buffer).base
    if buffer.size:
        buffer.world.memory.region_of(base, buffer.size)
    buffer.world.memory.write(base, bytes([value]) * buffer.size)


def _buffer_interface(owned: bool) -> BufferInterface:
    return BufferInterface(
        get_name=_buffer_name,
        free_buffer=_buffer_free if owned else None,
        get_base=_buffer_get_base,
        init_tensor=None,
        set_tensor=_buffer_set_tensor,
        get_tensor=_buffer_get_tensor,
        cpy_tensor=_buffer_cpy_tensor,
        clear=_buffer_clear,
        reset=None,
    )


# --- the buffer type ----------------------------------------------------------------------


def _buft_name(buft: BufferType) -> str:
    return "CPU"


@implements("CPU-4")
def _buft_alloc_buffer(buft: BufferType, size: int) -> Buffer:
    """CPU-4, CPU-5: allocate size + 64 bytes (size_t arithmetic), assert on failure.

    BUFT-7: in rc.8 a size within 64 bytes of SIZE_MAX wraps to a tiny buffer; profile fixed
    refuses it with the assert of a failed allocation.
    """
    world = instance(buft.context, World, "CPU-4", "the CPU buffer type's context")
    if world.fixed:
        require(size <= SIZE_MAX - TENSOR_ALIGNMENT, "BUFT-7")
    size = (size + TENSOR_ALIGNMENT) & SIZE_MAX
    require(size <= world.host_limit, "CPU-5")
    region = world.memory.map(size, host=True, label="CPU buffer")
    return buffer_init(world, buft, _buffer_interface(owned=True), CpuBufferContext(region, region.base, True), size)


@implements("CPU-2")
def _buft_get_alignment(buft: BufferType) -> int:
    return TENSOR_ALIGNMENT


@implements("CPU-10")
def _buft_supports_backend(buft: BufferType, backend: Backend) -> bool:
    return is_cpu(backend)


@implements("CPU-3")
def _buft_is_host(buft: BufferType) -> bool:
    return True


@checked
def cpu_buffer_type(world: World) -> BufferType:
    """`ggml_backend_cpu_buffer_type()`: one static type per process (per world)."""
    buft = world.statics.get("cpu_buffer_type")
    if buft is None:
        buft = BufferType(
            BufferTypeInterface(
                get_name=_buft_name,
                alloc_buffer=_buft_alloc_buffer,
                get_alignment=_buft_get_alignment,
                get_alloc_size=None,
                supports_backend=_buft_supports_backend,
                is_host=_buft_is_host,
            ),
            context=world,
            label="CPU",
        )
        world.statics["cpu_buffer_type"] = buft
    return instance(buft, BufferType, "CPU-7", "the CPU buffer type")


@implements("CPU-7")
@checked
def cpu_buffer_from_ptr(world: World, ptr: int | None, size: int) -> Buffer:
    """CPU-7: a CPU-type buffer over memory the caller owns (base `ptr`, NULL allowed)."""
    return buffer_init(
        world, cpu_buffer_type(world), _buffer_interface(owned=False), CpuBufferContext(None, ptr or 0, False), size
    )


# --- the backend --------------------------------------------------------------------------


def _backend_name(backend: Backend) -> str:
    return "CPU"


def _backend_free(backend: Backend) -> None:
    """The work buffer goes with the backend (CPU-17)."""
    ctx = backend.context
    if isinstance(ctx, CpuBackendContext) and ctx.work_region is not None:
        backend.world.memory.unmap(ctx.work_region)
        ctx.work_region, ctx.work_size = None, 0


def _backend_default_buffer_type(backend: Backend) -> BufferType:
    return cpu_buffer_type(backend.world)


def _backend_supports_op(backend: Backend, op: Tensor) -> bool:
    """The supports_op entry: CPU-11's rule."""
    return cpu_accepts(op)


@implements("CPU-11")
@checked
def cpu_accepts(op: Tensor) -> bool:
    """CPU-11: no CPY into IQ2 types; MUL_MAT needs src1 F32 or src0's vec_dot type."""
    if op.op == Op.CPY:
        return op.type not in (GGMLType.IQ2_XXS, GGMLType.IQ2_XS)
    if op.op == Op.MUL_MAT:
        src0, src1 = op.src[0], op.src[1]
        if src0 is None or src1 is None:
            raise ValueError("a MUL_MAT tensor needs src[0] and src[1]")
        return src1.type == GGMLType.F32 or src1.type == traits(src0.type).vec_dot_type
    return True


@implements("CPU-14")
def _backend_interface() -> BackendInterface:
    """CPU-14: no async entries, no synchronize."""
    return BackendInterface(
        get_name=_backend_name,
        free=_backend_free,
        get_default_buffer_type=_backend_default_buffer_type,
        set_tensor_async=None,
        get_tensor_async=None,
        cpy_tensor_async=None,
        synchronize=None,
        supports_op=_backend_supports_op,
        graph_plan_create=_graph_plan_create,
        graph_plan_free=_graph_plan_free,
        graph_plan_compute=_graph_plan_compute,
        graph_compute=_graph_compute,
    )


@checked
def cpu_init(world: World) -> Backend:
    """`ggml_backend_cpu_init()`."""
    return Backend(world, _backend_interface(), CpuBackendContext(), label="CPU", known_answer=cpu_accepts)


@implements("CPU-12")
@checked
def is_cpu(backend: Backend | None) -> bool:
    """CPU-12: true for CPU backends only, false for NULL."""
    return backend is not None and backend.iface.get_name is _backend_name


@checked
def cpu_set_n_threads(backend: Backend | None, n_threads: int) -> None:
    """CPU-13: only a CPU backend has a thread count."""
    cpu = required(backend, "CPU-13")
    require(is_cpu(cpu), "CPU-13")
    _bctx(cpu).n_threads = n_threads


# --- computing graphs -----------------------------------------------------------------------

CACHE_LINE_SIZE = 64


def _threads(n_threads: int) -> int:
    """CPU-15: a thread count of 0 or less means the default, 4."""
    return n_threads if n_threads > 0 else DEFAULT_N_THREADS


@checked
def node_work_size(node: Tensor, n_threads: int) -> int:
    """The work memory rc.8 asks for one node of the modelled ops (CPU-17)."""
    src0, src1 = node.src[0], node.src[1]
    if node.op in (Op.CPY, Op.DUP) and is_quantized(node.type):
        return 4 * node.ne[0] * n_threads  # one F32 staging row per thread
    if node.op == Op.ADD and src0 is not None and is_quantized(src0.type):
        return 4 * src0.ne[0] * n_threads
    if node.op == Op.MUL_MAT and src0 is not None and src1 is not None:
        vdt = traits(src0.type).vec_dot_type
        return row_size(vdt, nelements(src1)) if src1.type != vdt else 0  # b converted to vec_dot type
    if node.op == Op.SOFT_MAX and src0 is not None:
        return 4 * node.ne[0] * min(4, n_threads, nrows(src0))
    return 0


@implements("CPU-17")
@checked
def graph_work_size(nodes: Sequence[Tensor], n_threads: int) -> int:
    """CPU-17: the reference's need for a graph: the largest node's, plus a cache line per extra thread."""
    need = max((node_work_size(n, n_threads) for n in nodes), default=0)
    return need + CACHE_LINE_SIZE * (n_threads - 1) if need > 0 else 0


def _bctx(backend: Backend) -> CpuBackendContext:
    return instance(backend.context, CpuBackendContext, "CPU-13", "a CPU backend's context")


def _run(world: World, nodes: Sequence[Tensor]) -> None:
    """CPU-16: every node in order, on host memory; the thread count changes nothing."""
    memory = HostMemory(world)
    for node in nodes:
        compute(node, memory)


@implements("CPU-16", "CPU-20")
def _graph_compute(backend: Backend, cgraph: CGraph) -> bool:
    """CPU-16, CPU-17: grow the work buffer if the graph needs more, then compute; true. CPU-20:
    a realloc that fails (rc.8 does not check it) leaves no buffer, and computing aborts."""
    ctx = _bctx(backend)
    nodes = cgraph.node_list()
    need = graph_work_size(nodes, _threads(ctx.n_threads))
    if ctx.work_size < need:
        if need > backend.world.host_limit:  # the realloc fails; ggml_graph_compute asserts its result
            require(False, "CPU-20")
        if ctx.work_region is not None:
            backend.world.memory.unmap(ctx.work_region)
        ctx.work_region = backend.world.memory.map(need, host=True, label="CPU work buffer")
        ctx.work_size = need
    _run(backend.world, nodes)
    count_run(cgraph)  # the caller's graph itself (a plan computes its own copy, CORE-78)
    return True


@dataclass(eq=False)
class CpuPlan:
    """`struct ggml_backend_plan_cpu`: the plan's thread count and work buffer, and the graph as
    rc.8 keeps it (the array and the count, CPU-19) next to the node list profile fixed keeps."""

    graph: CGraph
    n_nodes: int
    nodes: list[Tensor]
    n_threads: int
    work_size: int
    work_region: Region | None
    freed: bool = field(default=False, repr=False)


@implements("CPU-18")
def _graph_plan_create(backend: Backend, cgraph: CGraph) -> GraphPlan:
    """CPU-18: fix the thread count and allocate the plan's own work buffer."""
    n_threads = _threads(_bctx(backend).n_threads)
    nodes = cgraph.node_list()
    need = graph_work_size(nodes, n_threads)
    # a malloc that fails (rc.8 does not check it) leaves the plan without a buffer (CPU-20)
    fits = 0 < need <= backend.world.host_limit
    region = backend.world.memory.map(need, host=True, label="CPU plan work buffer") if fits else None
    return CpuPlan(cgraph, cgraph.n_nodes, nodes, n_threads, need, region)


def _plan(plan: GraphPlan) -> CpuPlan:
    if not isinstance(plan, CpuPlan):
        undefined("BACK-10", f"{plan!r} is not a CPU plan")
    if plan.freed:
        undefined("BACK-10", "a CPU plan is used after graph_plan_free")
    return plan


def _graph_plan_free(backend: Backend, plan: GraphPlan) -> None:
    """CPU-18: the plan's work buffer goes with it."""
    p = _plan(plan)
    if p.work_region is not None:
        backend.world.memory.unmap(p.work_region)
    p.freed = True


@implements("CPU-19", "CPU-20")
def _graph_plan_compute(backend: Backend, plan: GraphPlan) -> None:
    """CPU-18, CPU-19: compute with the plan's threads and buffer. rc8: the graph array's current
    first n_nodes entries; fixed: the node list copied at creation. CPU-20: a plan whose work
    buffer could not be allocated aborts."""
    p = _plan(plan)
    require(p.work_size == 0 or p.work_region is not None, "CPU-20")
    if backend.world.fixed:
        nodes = p.nodes
    else:
        if p.graph.ctx is not None and p.graph.ctx.freed:
            undefined("CPU-19", "the plan reads the node array of a graph whose context was freed")
        nodes = [p.graph.node(i) for i in range(p.n_nodes)]
        if graph_work_size(nodes, p.n_threads) > p.work_size:
            undefined("CPU-19", "the nodes the plan now computes need more work memory than it has")
    _run(backend.world, nodes)


def _hook_target(backend: Backend) -> None:
    if not is_cpu(backend):
        raise ValueError(f"{backend!r} is not a CPU backend (the test hooks are the CPU backend's)")


@checked
def cpu_work_size(backend: Backend) -> int:
    """CPU-17 observable: the size of the backend's work buffer (0 while empty)."""
    _hook_target(backend)
    return _bctx(backend).work_size


@checked
def cpu_work_data(backend: Backend) -> int | None:
    """CPU-17 observable: the address of the backend's work buffer (None while empty)."""
    _hook_target(backend)
    region = _bctx(backend).work_region
    return region.base if region is not None else None


@checked
def cpu_plan_work_size(plan: GraphPlan) -> int:
    """CPU-18 observable: the size of a plan's own work buffer."""
    return _plan(plan).work_size


@checked
def cpu_plan_n_threads(plan: GraphPlan) -> int:
    """CPU-15, CPU-18 observable: the thread count a plan computes with."""
    return _plan(plan).n_threads


@implements("CPU-15")
@checked
def cpu_n_threads(backend: Backend) -> int:
    """CPU-15: the thread count later computations will use (the default 4 for 0 or less)."""
    _hook_target(backend)
    return _threads(_bctx(backend).n_threads)
