"""The virtual device backend: a stand-in for a GPU or Metal backend on a CPU-only machine.

Its buffers are not host memory: their addresses are reserved device regions that the host
cannot read, and their bytes move only through set/get. Asynchronous operations run in
submission order on a queue. Eager devices run each operation as it is submitted; a *lazy*
device reads the host memory given to set_async, and writes the host memory given to get_async,
only at the next synchronize (spec/backend.md, "What a device backend must do").

`graph_compute` is queued like the other operations and computes the nodes with the reference's
operations (reference/ops.py) on the device's own storage; the supports_op mask only answers
supports_op, it gates nothing at compute time (BACK-13). Its graph plans keep their own copy of
the node list and are queued the same way.

Every device keeps an ordered log of the entries called on its buffer type, buffers and backend
(`Device.log`, read with `vdev_log`), in the same words as native/src/vdev.c's log (see
ggspec-vdev.h): `ENTRY OBJECT ARGS...`, OBJECT `buft`, `backend` or `buffer#K`, tensors by name
in single quotes, offsets and sizes in decimal, a graph as `N 'first' 'last'`, a plan as
`plan#K`. Each entry carries a serial number shared by all devices, so logs merge in call order.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .backend import Backend, BackendInterface
from .buffer import Buffer, BufferInterface, BufferType, BufferTypeInterface, buffer_init
from .checked import checked, instance, nonnull
from .clauses import NotBinding, SpecError, UndefinedBehaviour, implements, undefined
from .graph import CGraph
from .ops import NO_COMPUTE, NotModelled, compute
from .tensor import Tensor, nbytes
from .types import Op
from .world import Region, World

ALL_OPS: frozenset[Op] = frozenset(Op)

#: the optional entries a device may lack one by one (`VDevParams.absent`), in the order of the
#: bits of native/'s `struct ggspec_vdev_params.absent` (bit i: OPTIONAL_ENTRIES[i] is NULL). The
#: backend's set_tensor_async and get_tensor_async (also both off with `async_entries`), its
#: synchronize (only an eager device may lack it: a lazy one's queue would never run), and the
#: buffers' reset and init_tensor. The other optional entries have switches of their own:
#: `cpy_tensor_async`, `buffer_cpy_tensor`, `alloc_pad` (get_alloc_size).
OPTIONAL_ENTRIES: tuple[str, ...] = ("set_tensor_async", "get_tensor_async", "synchronize", "reset", "init_tensor")

#: the order of log entries among all devices (native/'s `log_serial`)
_SERIAL = itertools.count()


#: the longest device name, in UTF-8 bytes (a tensor's name is as long at most): the entry log is
#: formatted for names this long, and native/src/vdev.c refuses a longer one (NULL, one line)
MAX_NAME = 63


def check_name(name: str) -> None:
    """A device's name, refused (ValueError, the same in native/vdev.py) when longer than
    MAX_NAME bytes in UTF-8."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    size = len(name.encode())
    if size > MAX_NAME:
        raise ValueError(f"a virtual device's name is at most {MAX_NAME} bytes in UTF-8, got {size}: {name[:20]!r}...")


def _is_params(params: object) -> None:
    if not isinstance(params, VDevParams):
        raise TypeError(f"params must be VDevParams, got {type(params).__name__}")


def check_absent(params: VDevParams) -> None:
    """`absent` names optional entries only, and a lazy device keeps synchronize: ValueError
    otherwise (the same in native/vdev.py; native/src/vdev.c refuses it with NULL and one line)."""
    _is_params(params)
    if not isinstance(params.absent, frozenset):
        raise TypeError(f"absent must be a frozenset of entry names, got {type(params.absent).__name__}")
    unknown = sorted(str(e) for e in params.absent if e not in OPTIONAL_ENTRIES)
    if unknown:
        raise ValueError(f"absent: no optional entry {', '.join(unknown)}; they are {', '.join(OPTIONAL_ENTRIES)}")
    if params.lazy and "synchronize" in params.absent:
        raise ValueError("a lazy device must have synchronize (its queue runs there): absent may not name it")


def consistent(params: VDevParams) -> VDevParams:
    """`params` with synchronize kept where the device is lazy (for strategies that fix `lazy`)."""
    _is_params(params)
    if params.lazy and "synchronize" in params.absent:
        return replace(params, absent=params.absent - {"synchronize"})
    return params


@dataclass(frozen=True)
class VDevParams:
    """The device's knobs (the same as native/'s `struct ggspec_vdev_params`)."""

    name: str = "VDEV"
    alignment: int = 32
    lazy: bool = False
    async_entries: bool = True
    buffer_cpy_tensor: bool = True
    cpy_tensor_async: bool = True
    alloc_pad: int = 0
    ops: frozenset[Op] = ALL_OPS
    #: graph_compute computes the graph as always, then returns false (a backend reporting failure)
    compute_fails: bool = False
    #: a buffer's base lies this many bytes past a page boundary (4096): with an alignment that
    #: does not divide it, every base is misaligned by the same amount
    base_offset: int = 0
    #: None: graph_compute computes every node with the CPU code's semantics (CORE-48 to
    #: CORE-76), as native/'s virtual device does with the host's CPU code. Else the device has
    #: kernels of its own (the shape the reference gives WebGPU, conformance/adapters/
    #: webgpu_device.py) that compute exactly the nodes this predicate accepts: supports_op
    #: answers it (with `ops`), graph_compute refuses a graph holding another node (false, nothing
    #: computed), and the CPU code's compute-time asserts do not bind it (spec/core.md, "Devices
    #: with kernels of their own")
    kernels: Callable[[Tensor], bool] | None = None
    #: optional entries the device lacks, each on its own (names from OPTIONAL_ENTRIES)
    absent: frozenset[str] = frozenset()

    def has(self, entry: str) -> bool:
        """Whether the device has this optional entry (OPTIONAL_ENTRIES)."""
        if entry in ("set_tensor_async", "get_tensor_async") and not self.async_entries:
            return False
        return entry not in self.absent

    def absent_bits(self) -> int:
        """`absent` as native/'s bit mask."""
        return sum(1 << i for i, e in enumerate(OPTIONAL_ENTRIES) if e in self.absent)

    def __repr__(self) -> str:
        """Valid Python (with `from ggspec.reference.vdev import *`), so reproducers can be pasted."""
        ops = "ALL_OPS" if self.ops == ALL_OPS else "frozenset({" + ", ".join(f"Op.{o.name}" for o in sorted(self.ops)) + "})"
        return (
            f"VDevParams(name={self.name!r}, alignment={self.alignment}, lazy={self.lazy}, "
            f"async_entries={self.async_entries}, buffer_cpy_tensor={self.buffer_cpy_tensor}, "
            f"cpy_tensor_async={self.cpy_tensor_async}, alloc_pad={self.alloc_pad}, ops={ops}"
            + (", compute_fails=True" if self.compute_fails else "")
            + (f", base_offset={self.base_offset}" if self.base_offset else "")
            + (f", absent=frozenset({sorted(self.absent)!r})" if self.absent else "")
            + (f", kernels={self.kernels.__module__}.{self.kernels.__qualname__})" if self.kernels else ")")
        )


@dataclass(eq=False)
class Device:
    """One device: its parameters, its buffer type and its queue of pending operations."""

    world: World
    params: VDevParams
    queue: list[Callable[[], None]] = field(default_factory=list)
    buft: BufferType | None = None
    backend: Backend | None = None
    #: bases of the device regions of this device's live buffers (what its kernels can reach)
    regions: set[int] = field(default_factory=set)
    #: (serial, entry) for every entry called on the device, in order
    log: list[tuple[int, str]] = field(default_factory=list)
    n_buffers: int = 0
    n_plans: int = 0

    def note(self, entry: str) -> None:
        """Log one entry call."""
        self.log.append((next(_SERIAL), entry))

    def drain(self) -> None:
        """Run pending operations in submission order (BACK-8)."""
        while self.queue:
            self.queue.pop(0)()

    def submit(self, op: Callable[[], None]) -> None:
        if self.params.lazy:
            self.queue.append(op)
        else:
            self.drain()
            op()


@dataclass(eq=False)
class DeviceBuffer:
    device: Device
    region: Region  # a device region: the host cannot read it
    index: int = 0  # buffer#index of its device
    skip: int = 0  # the buffer's bytes start this far into the region (VDevParams.base_offset)
    size: int = 0
    init_tensor_calls: int = 0
    reset_calls: int = 0

    def note(self, entry: str, *args: object) -> None:
        self.device.note(" ".join([entry, f"buffer#{self.index}", *map(str, args)]))


def _name(tensor: Tensor | None) -> str:
    return "'(null)'" if tensor is None else f"'{tensor.name}'"


def _graph(nodes: list[Tensor]) -> str:
    return f"{len(nodes)} {_name(nodes[0]) if nodes else repr('')} {_name(nodes[-1]) if nodes else repr('')}"


def _backend_label(backend: Backend | None) -> str:
    """A backend given as an argument: a device by its name, a model backend by its label (no
    entry is called on either to write the log), another backend by what its get_name entry says."""
    if backend is None:
        return "(null)"
    if isinstance(backend.context, Device):
        return backend.context.params.name
    return backend.label if backend.label else backend.iface.get_name(backend)


def _dbuf(buffer: Buffer) -> DeviceBuffer:
    if not isinstance(buffer.context, DeviceBuffer):  # another type's buffer given to our entry
        undefined("COPY-6", f"a virtual device buffer entry was called on {buffer!r}")
    return buffer.context


def _span(buffer: Buffer, tensor: Tensor, offset: int, size: int) -> int:
    """Offset in the buffer's storage of `tensor->data + offset`; outside the buffer is a fault."""
    dbuf = _dbuf(buffer)
    if tensor.data is None:
        undefined("TDATA-4", "device access through a NULL data pointer")
    start = tensor.data + offset - (dbuf.region.base + dbuf.skip)
    if start < 0 or start + size > dbuf.size:
        undefined("TDATA-4", f"device access [{start}, {start + size}) outside a buffer of {dbuf.size} bytes")
    return dbuf.skip + start


def _device_write(buffer: Buffer, tensor: Tensor, data: int, offset: int, size: int) -> None:
    start = _span(buffer, tensor, offset, size)
    _dbuf(buffer).region.data[start : start + size] = buffer.world.memory.read(data, size)


def _device_read(buffer: Buffer, tensor: Tensor, data: int, offset: int, size: int) -> None:
    start = _span(buffer, tensor, offset, size)
    buffer.world.memory.write(data, bytes(_dbuf(buffer).region.data[start : start + size]))


def _device_copy(src_buf: Buffer, src: Tensor, dst_buf: Buffer, dst: Tensor) -> None:
    n = nbytes(src)
    s, d = _span(src_buf, src, 0, n), _span(dst_buf, dst, 0, n)
    _dbuf(dst_buf).region.data[d : d + n] = _dbuf(src_buf).region.data[s : s + n]


def _buffer_of(device: Device, tensor: Tensor) -> Buffer | None:
    """The buffer of this device that holds `tensor`, if any."""
    buf = tensor.view_src.buffer if tensor.view_src is not None else tensor.buffer
    if buf is not None and isinstance(buf.context, DeviceBuffer) and buf.context.device is device:
        return buf
    return None


# --- buffer entries -----------------------------------------------------------------------


def _buffer_name(buffer: Buffer) -> str:
    _dbuf(buffer).note("get_name")
    return _dbuf(buffer).device.params.name


def _buffer_free(buffer: Buffer) -> None:
    dbuf = _dbuf(buffer)
    dbuf.note("free_buffer")
    dbuf.device.drain()
    dbuf.device.regions.discard(dbuf.region.base)
    buffer.world.memory.unmap(dbuf.region)


def _buffer_get_base(buffer: Buffer) -> int:
    _dbuf(buffer).note("get_base")
    return _dbuf(buffer).region.base + _dbuf(buffer).skip


def _buffer_init_tensor(buffer: Buffer, tensor: Tensor) -> None:
    _dbuf(buffer).note("init_tensor", _name(tensor))
    _dbuf(buffer).init_tensor_calls += 1


def _buffer_set_tensor(buffer: Buffer, tensor: Tensor, data: int, offset: int, size: int) -> None:
    _dbuf(buffer).note("set_tensor", _name(tensor), offset, size)
    _dbuf(buffer).device.drain()
    _device_write(buffer, tensor, data, offset, size)


def _buffer_get_tensor(buffer: Buffer, tensor: Tensor, data: int, offset: int, size: int) -> None:
    _dbuf(buffer).note("get_tensor", _name(tensor), offset, size)
    _dbuf(buffer).device.drain()
    _device_read(buffer, tensor, data, offset, size)


def _buffer_cpy_tensor(buffer: Buffer, src: Tensor, dst: Tensor) -> bool:
    """dst is in `buffer`; src is copied when it is on the same device. rc.8 calls the source
    buffer's entry with the destination's buffer (COPY-6 erratum): another type's buffer is
    refused like an unreachable source (False, tensor_copy goes on to COPY-7), never read as ours
    (spec/backend.md, What a device backend must do)."""
    if not isinstance(buffer.context, DeviceBuffer):
        return False
    _dbuf(buffer).note("cpy_tensor", _name(src), _name(dst))
    device = _dbuf(buffer).device
    src_buf = _buffer_of(device, src)
    if src_buf is None:
        return False
    device.drain()
    _device_copy(src_buf, src, buffer, dst)
    return True


def _buffer_clear(buffer: Buffer, value: int) -> None:
    dbuf = _dbuf(buffer)
    dbuf.note("clear", value)
    dbuf.device.drain()
    dbuf.region.data[dbuf.skip :] = bytes([value]) * dbuf.size


def _buffer_reset(buffer: Buffer) -> None:
    _dbuf(buffer).note("reset")
    _dbuf(buffer).reset_calls += 1


# --- buffer type entries ------------------------------------------------------------------


def _device(buft: BufferType) -> Device:
    return instance(buft.context, Device, "BACK-8", "a virtual device buffer type's context")


def _buft_name(buft: BufferType) -> str:
    _device(buft).note("get_name buft")
    return _device(buft).params.name


def _buft_alloc_buffer(buft: BufferType, size: int) -> Buffer:
    device = _device(buft)
    device.note(f"alloc_buffer buft {size}")
    if size > device.world.host_limit:  # the model has no NULL buffer: refuse what the device cannot hold
        raise ValueError(f"{device.params.name} cannot allocate {size} bytes (native/'s device returns NULL)")
    skip = device.params.base_offset
    region = device.world.memory.map(skip + size, host=False, label=f"{device.params.name} buffer")
    device.regions.add(region.base)
    iface = BufferInterface(
        get_name=_buffer_name,
        free_buffer=_buffer_free,
        get_base=_buffer_get_base,
        init_tensor=_buffer_init_tensor if device.params.has("init_tensor") else None,
        set_tensor=_buffer_set_tensor,
        get_tensor=_buffer_get_tensor,
        cpy_tensor=_buffer_cpy_tensor if device.params.buffer_cpy_tensor else None,
        clear=_buffer_clear,
        reset=_buffer_reset if device.params.has("reset") else None,
    )
    device.n_buffers += 1
    return buffer_init(device.world, buft, iface, DeviceBuffer(device, region, device.n_buffers - 1, skip, size),
                       size)


def _buft_get_alignment(buft: BufferType) -> int:
    _device(buft).note("get_alignment buft")
    return _device(buft).params.alignment


def _buft_get_alloc_size(buft: BufferType, tensor: Tensor) -> int:
    _device(buft).note(f"get_alloc_size buft {_name(tensor)}")
    pad = _device(buft).params.alloc_pad
    return (nbytes(tensor) + pad - 1) // pad * pad


def _buft_supports_backend(buft: BufferType, backend: Backend) -> bool:
    _device(buft).note(f"supports_backend buft {_backend_label(backend)}")
    return backend is _device(buft).backend


# --- backend entries ----------------------------------------------------------------------


def _bdev(backend: Backend) -> Device:
    return instance(backend.context, Device, "BACK-8", "a virtual device backend's context")


def _backend_name(backend: Backend) -> str:
    _bdev(backend).note("get_name backend")
    return _bdev(backend).params.name


def _backend_free(backend: Backend) -> None:
    _bdev(backend).note("free backend")
    _bdev(backend).drain()


def _backend_default_buffer_type(backend: Backend) -> BufferType:
    _bdev(backend).note("get_default_buffer_type backend")
    return _default_buffer_type(backend)


def _default_buffer_type(backend: Backend) -> BufferType:
    return nonnull(_bdev(backend).buft, "BACK-8", "the device's buffer type")


def _set_async(backend: Backend, tensor: Tensor, data: int, offset: int, size: int) -> None:
    _bdev(backend).note(f"set_tensor_async backend {_name(tensor)} {offset} {size}")
    buf = nonnull(tensor.view_src.buffer if tensor.view_src is not None else tensor.buffer, "TDATA-13", "the tensor's buffer")
    _bdev(backend).submit(lambda: _device_write(buf, tensor, data, offset, size))


def _get_async(backend: Backend, tensor: Tensor, data: int, offset: int, size: int) -> None:
    _bdev(backend).note(f"get_tensor_async backend {_name(tensor)} {offset} {size}")
    buf = nonnull(tensor.view_src.buffer if tensor.view_src is not None else tensor.buffer, "TDATA-13", "the tensor's buffer")
    _bdev(backend).submit(lambda: _device_read(buf, tensor, data, offset, size))


def _cpy_async(backend: Backend, src: Tensor, dst: Tensor) -> bool:
    device = _bdev(backend)
    device.note(f"cpy_tensor_async backend {_name(src)} {_name(dst)}")
    src_buf, dst_buf = _buffer_of(device, src), _buffer_of(device, dst)
    if src_buf is None or dst_buf is None:
        return False
    device.submit(lambda: _device_copy(src_buf, src, dst_buf, dst))
    return True


@implements("BACK-8")
def _synchronize(backend: Backend) -> None:
    """BACK-8, BACK-9: run everything pending, in order."""
    _bdev(backend).note("synchronize backend")
    _bdev(backend).drain()


def _supports_op(backend: Backend, op: Tensor) -> bool:
    _bdev(backend).note(f"supports_op backend {_name(op)} {op.op.name}")
    return _accepts(_bdev(backend), op)


def _accepts(device: Device, op: Tensor) -> bool:
    """The supports_op mask: the device's configured ops, and what its own kernels compute
    (VDevParams.kernels) (no entry call, no log line)."""
    kernels = device.params.kernels
    return op.op in device.params.ops and (kernels is None or kernels(op))


@implements("BACK-15")
def _refused(device: Device, nodes: list[Tensor]) -> bool:
    """BACK-15: a device with kernels of its own refuses a graph holding a node they do not
    compute (nothing is computed); other devices compute every node (BACK-13). A refused node that the
    CPU code would abort on raises NotBinding: that assert does not bind the device (it refused
    the node), and what follows is not judged."""
    if device.params.kernels is None:
        return False
    refused = [node for node in nodes if node.op not in NO_COMPUTE and not _accepts(device, node)]
    for node in refused:
        try:
            compute(node, _DryMemory(device))  # raises NotBinding where the CPU code asserts
        except NotBinding:
            raise
        except (SpecError, NotModelled):  # undefined or not modelled there: a plain refusal
            pass
    return bool(refused)


@checked
def vdev_init(world: World, params: VDevParams | None = None) -> Backend:
    """A new virtual device with its own buffer type, and a backend for it."""
    params = params or VDevParams()
    if params.alignment < 1 or params.alloc_pad < 0 or params.base_offset < 0:
        raise ValueError(f"alignment must be >= 1 and alloc_pad >= 0, got {params}")
    check_name(params.name)
    check_absent(params)
    device = Device(world, params)
    device.buft = BufferType(
        BufferTypeInterface(
            get_name=_buft_name,
            alloc_buffer=_buft_alloc_buffer,
            get_alignment=_buft_get_alignment,
            get_alloc_size=_buft_get_alloc_size if params.alloc_pad else None,
            supports_backend=_buft_supports_backend,
            is_host=None,
        ),
        context=device,
        label=params.name,
    )
    device.backend = Backend(
        world,
        BackendInterface(
            get_name=_backend_name,
            free=_backend_free,
            get_default_buffer_type=_backend_default_buffer_type,
            set_tensor_async=_set_async if params.has("set_tensor_async") else None,
            get_tensor_async=_get_async if params.has("get_tensor_async") else None,
            cpy_tensor_async=_cpy_async if params.cpy_tensor_async else None,
            synchronize=_synchronize if params.has("synchronize") else None,
            supports_op=_supports_op,
            graph_plan_create=_graph_plan_create,
            graph_plan_free=_graph_plan_free,
            graph_plan_compute=_graph_plan_compute,
            graph_compute=_graph_compute,
        ),
        device,
        label=params.name,
        known_answer=lambda op: _accepts(device, op),
    )
    return device.backend


@checked
def vdev_buffer_type(backend: Backend) -> BufferType:
    return _default_buffer_type(backend)


@checked
def vdev_log(buft: BufferType) -> list[tuple[int, str]]:
    """Test hook: the device's entry log, (serial, entry) in call order (see the module's doc)."""
    return list(_device(buft).log)


@checked
def vdev_log_clear(buft: BufferType) -> None:
    _device(buft).log.clear()


@checked
def vdev_pending(backend: Backend) -> int:
    return len(_bdev(backend).queue)


@checked
def vdev_read(buffer: Buffer, offset: int, size: int) -> bytes:
    """Test hook: the raw bytes of a device buffer's storage (no draining)."""
    d = _dbuf(buffer)
    return bytes(d.region.data[d.skip + offset : d.skip + offset + size])


@checked
def vdev_counters(buffer: Buffer) -> tuple[int, int]:
    """Test hook: (init_tensor calls, reset calls) of a device buffer."""
    d = _dbuf(buffer)
    return d.init_tensor_calls, d.reset_calls


# --- computing graphs -----------------------------------------------------------------------


class DeviceMemory:
    """What the device's kernels reach: the storage of its own live buffers, nothing else (BACK-14)."""

    def __init__(self, device: Device) -> None:
        self.device = device
        #: whether the CPU code's compute-time asserts bind this device (reference/ops.py compute)
        self.cpu_code = device.params.kernels is None

    def _region(self, addr: int, size: int) -> Region:
        space = self.device.world.memory
        try:
            region = space.region_of(addr, size)
        except UndefinedBehaviour:
            undefined("BACK-14", f"{self.device.params.name} computes on unmapped memory at {addr:#x}")
        if region.host or region.base not in self.device.regions:
            undefined("BACK-14", f"{self.device.params.name} computes on memory it cannot reach ({region.label})")
        return region

    def read(self, addr: int, size: int) -> bytes:
        region = self._region(addr, size)
        return bytes(region.data[addr - region.base : addr - region.base + size])

    def write(self, addr: int, payload: bytes) -> None:
        region = self._region(addr, len(payload))
        region.data[addr - region.base : addr - region.base + len(payload)] = payload


class _DryMemory(DeviceMemory):
    """The device's memory read as it is, written nowhere, as a device with kernels of its own:
    computing a refused node on it only finds out whether the CPU code would assert there."""

    def __init__(self, device: Device) -> None:
        super().__init__(device)
        self.cpu_code = False

    def write(self, addr: int, payload: bytes) -> None:
        return None


def _graph_compute(backend: Backend, cgraph: CGraph) -> bool:
    """BACK-8, BACK-12, BACK-13: queue the computation of the graph's nodes (as they are now) on
    the device's storage; supports_op is not consulted. Returns true at once (false with the
    knob `compute_fails`, having queued the computation all the same)."""
    _bdev(backend).note(f"graph_compute backend {_graph(cgraph.node_list())}")
    if _refused(_bdev(backend), cgraph.node_list()):
        return False
    return _submit_nodes(backend, cgraph.node_list()) and not _bdev(backend).params.compute_fails


def _submit_nodes(backend: Backend, nodes: list[Tensor]) -> bool:
    device = _bdev(backend)
    memory = DeviceMemory(device)

    def run() -> None:
        for node in nodes:
            compute(node, memory)

    device.submit(run)
    return True


@dataclass(eq=False)
class DevicePlan:
    """A plan of the virtual device: its own copy of the graph's node list (BACK-10)."""

    nodes: list[Tensor]
    index: int = 0  # plan#index of its device
    freed: bool = field(default=False, repr=False)


def _graph_plan_create(backend: Backend, cgraph: CGraph) -> object:
    device = _bdev(backend)
    device.note(f"graph_plan_create backend {_graph(cgraph.node_list())}")
    device.n_plans += 1
    return DevicePlan(cgraph.node_list(), device.n_plans - 1)


def _device_plan(plan: object) -> DevicePlan:
    if not isinstance(plan, DevicePlan) or plan.freed:
        undefined("BACK-10", f"{plan!r} is not a live plan of a virtual device")
    return plan


def _graph_plan_free(backend: Backend, plan: object) -> None:
    _bdev(backend).note(f"graph_plan_free backend plan#{_device_plan(plan).index}")
    _device_plan(plan).freed = True


def _graph_plan_compute(backend: Backend, plan: object) -> None:
    """BACK-11: queued like graph_compute (computed at the next synchronize when lazy)."""
    _bdev(backend).note(f"graph_plan_compute backend plan#{_device_plan(plan).index}")
    if not _refused(_bdev(backend), _device_plan(plan).nodes):
        _submit_nodes(backend, _device_plan(plan).nodes)
