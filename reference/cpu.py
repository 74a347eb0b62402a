"""CPU: the CPU backend, its buffer type and its buffers (host memory)."""

from __future__ import annotations

from dataclasses import dataclass

from .backend import Backend, BackendInterface
from .buffer import Buffer, BufferInterface, BufferType, BufferTypeInterface, buffer_init, buffer_is_host
from .clauses import implements, require
from .tensor import Tensor, nbytes
from .types import DEFAULT_N_THREADS, GGMLType, Op, traits
from .world import SIZE_MAX, Region, World

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


# --- buffers ------------------------------------------------------------------------------


def _ctx(buffer: Buffer) -> CpuBufferContext:
    assert isinstance(buffer.context, CpuBufferContext)
    return buffer.context


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
    assert tensor.data is not None
    mem = buffer.world.memory
    mem.write(tensor.data + offset, mem.read(data, size))


@implements("CPU-8")
def _buffer_get_tensor(buffer: Buffer, tensor: Tensor, data: int, offset: int, size: int) -> None:
    """CPU-8: memcpy(data, tensor->data + offset, size)."""
    assert tensor.data is not None
    mem = buffer.world.memory
    mem.write(data, mem.read(tensor.data + offset, size))


@implements("CPU-9")
def _buffer_cpy_tensor(buffer: Buffer, src: Tensor, dst: Tensor) -> bool:
    """CPU-9: copy from a host source, refuse anything else."""
    if src.buffer is not None and buffer_is_host(src.buffer):
        assert src.data is not None and dst.data is not None
        mem = buffer.world.memory
        mem.write(dst.data, mem.read(src.data, nbytes(src)))
        return True
    return False


@implements("CPU-6")
def _buffer_clear(buffer: Buffer, value: int) -> None:
    """CPU-6: memset of all `size` bytes."""
    buffer.world.memory.write(_ctx(buffer).base, bytes([value]) * buffer.size)


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
    """CPU-4, CPU-5: allocate size + 64 bytes (size_t arithmetic), assert on failure."""
    world = buft.context
    assert isinstance(world, World)
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
        )
        world.statics["cpu_buffer_type"] = buft
    assert isinstance(buft, BufferType)
    return buft


@implements("CPU-7")
def cpu_buffer_from_ptr(world: World, ptr: int | None, size: int) -> Buffer:
    """CPU-7: a CPU-type buffer over memory the caller owns (base `ptr`, NULL allowed)."""
    return buffer_init(
        world, cpu_buffer_type(world), _buffer_interface(owned=False), CpuBufferContext(None, ptr or 0, False), size
    )


# --- the backend --------------------------------------------------------------------------


def _backend_name(backend: Backend) -> str:
    return "CPU"


def _backend_free(backend: Backend) -> None:
    pass


def _backend_default_buffer_type(backend: Backend) -> BufferType:
    return cpu_buffer_type(backend.world)


@implements("CPU-11")
def _backend_supports_op(backend: Backend, op: Tensor) -> bool:
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
    )


def cpu_init(world: World) -> Backend:
    """`ggml_backend_cpu_init()`."""
    return Backend(world, _backend_interface(), CpuBackendContext())


@implements("CPU-12")
def is_cpu(backend: Backend | None) -> bool:
    """CPU-12: true for CPU backends only, false for NULL."""
    return backend is not None and backend.iface.get_name is _backend_name


def cpu_set_n_threads(backend: Backend, n_threads: int) -> None:
    """CPU-13: only a CPU backend has a thread count."""
    require(is_cpu(backend), "CPU-13")
    assert isinstance(backend.context, CpuBackendContext)
    backend.context.n_threads = n_threads
