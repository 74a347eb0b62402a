"""`ggspec check --device vulkan`: a device the target ships, upstream's own Vulkan backend, as
the device beside the target's CPU backend, under the target's own scheduler and allocator.

A device is either one ggspec builds (`vdev`, the mock; `webgpu`, webgpu_device.py) or one the
target ships (SHIPPED: `vulkan` now; the same table can later name Metal or CUDA). A shipped
device replaces, as `--device webgpu` does, the first *plain* virtual device an example asks for
(`VDevParams()` but for its name); every other device stays the mock. On

- a C target that ships it (the llama-cpp-python sdists with `vulkan = True` in
  ggml_python.SDISTS, built with ggml-vulkan.cpp where Vulkan is present): the backend made by
  the library's own `ggml_backend_vk_init(0)` (after `ggml_backend_vk_get_device_count()`, which
  starts Vulkan's instance in 0.2.56 and later), started on first use in the worker that runs
  the example, never in the parent before a fork (NeedsDeviceWorker, as for WebGPU);
- the reference: a virtual device of that build's shape (`shape_of(device, target)`): its name
  (`Vulkan` in 0.2.38, `Vulkan0` from 0.2.56), the alignment the device reports on this machine
  (`device_alignment`: the Vulkan buffer type's get_alignment, minStorageBufferOffsetAlignment;
  16 on lavapipe, the fallback where it cannot be probed), no `get_alloc_size` beyond nbytes, no async entries
  (all three versions leave set/get/cpy_tensor_async and synchronize NULL), and kernels of its
  own: supports_op is the version's `ggml_backend_vk_supports_op`, transcribed clause by clause
  (`supports_op_0_2_38` ...), and a graph holding anything else is refused (spec/core.md,
  "Devices with kernels of their own": supports_op tells the truth).

The version the reference is shaped after is the run's target: `prepare_target` and
`make_target` record it in `$GGSPEC_DEVICE_OF` (forked workers inherit it).

Where the device is missing — a target that does not ship it, a build made without Vulkan's
headers, a machine whose Vulkan loader finds no device — the example raises `MissingSymbol`
naming what is missing, in one line: `unsupported`, never a crash, never a failure. The mock's
counters and entry log asked of the shipped device are `MockOnly` / `MissingSymbol` on both sides,
a graph the device refuses is `DeviceRefused`, as for WebGPU (webgpu_device.py).
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ggspec.reference.tensor import Tensor
from ggspec.reference.types import GGMLType, Op, type_size
from ggspec.reference.vdev import ALL_OPS, VDevParams

from ..errors import DeviceRefused, MissingSymbol, NeedsDeviceWorker
from ..target import IN_SHARED_WORKER, Target, selected_device
from .webgpu_device import WEBGPU_NAME, _WebGPUDevice, is_plain

#: the run's target, whose shipped device the reference is shaped after (inherited by workers)
DEVICE_OF_ENV = "GGSPEC_DEVICE_OF"
#: a file to which each example that made the device (`made`) and each graph the device computed
#: (`computed`) appends one line: how many examples really ran on it (bench/vulkan_tally.py)
TALLY_ENV = "GGSPEC_DEVICE_TALLY"
#: lavapipe's minStorageBufferOffsetAlignment, what the Vulkan buffer type's get_alignment returns
#: there: the reference's alignment where the device cannot be probed (`device_alignment`)
VULKAN_ALIGNMENT = 16
#: the cache file of probed alignments (library path and mtime -> get_alignment, or null)
ALIGNMENT_FILE = "vulkan-alignment.json"

_F32, _F16, _I32, _Q4_0, _Q8_0 = GGMLType.F32, GGMLType.F16, GGMLType.I32, GGMLType.Q4_0, GGMLType.Q8_0
_GELU, _SILU, _RELU = 7, 9, 5  # enum ggml_unary_op (rc.8's numbering, the suite's)
_NOOPS = frozenset({Op.NONE, Op.RESHAPE, Op.VIEW, Op.PERMUTE, Op.TRANSPOSE})
#: the operations every version's supports_op accepts for any operands (of the suite's ops)
_ALWAYS = _NOOPS | {Op.NORM, Op.ADD, Op.MUL, Op.SCALE, Op.CONT, Op.SOFT_MAX}
_CPY_PAIRS = ((_F32, _F32), (_F32, _F16), (_F16, _F16))


def _unary(op: Tensor) -> int:
    return int(struct.unpack_from("<i", op.op_params.ljust(4, b"\0"))[0])


def _is_contiguous(t: Tensor) -> bool:
    """0.2.78's `ggml_is_contiguous`: every stride exactly the packed one (no exception for an
    extent of 1)."""
    nb0 = type_size(t.type)
    blck = 32 if t.type in (_Q4_0, _Q8_0) else 1
    return (t.nb[0] == nb0 and t.nb[1] == nb0 * t.ne[0] // blck and t.nb[2] == t.nb[1] * t.ne[1]
            and t.nb[3] == t.nb[2] * t.ne[2])


def supports_op_0_2_38(op: Tensor) -> bool:
    """llama-cpp-python 0.2.38's `ggml_backend_vk_supports_op` (ggml-vulkan.cpp), for the suite's
    operations: GELU/SILU/RELU; MUL_MAT when a and b agree in ne[3] (any types); CPY of
    F32->F32, F32->F16, F16->F16; NORM, ADD, MUL, SCALE, CONT, SOFT_MAX and the no-ops for any
    operands; DUP and GET_ROWS (commented out) never."""
    a, b = op.src[0], op.src[1]
    if op.op in _ALWAYS:
        return True
    if op.op == Op.UNARY:
        return _unary(op) in (_GELU, _SILU, _RELU)
    if op.op == Op.MUL_MAT:
        return a is not None and b is not None and a.ne[3] == b.ne[3]
    if op.op == Op.CPY:
        return a is not None and b is not None and (a.type, b.type) in _CPY_PAIRS
    return False


def supports_op_0_2_56(op: Tensor) -> bool:
    """0.2.56's: 0.2.38's, and DUP for any types: its `case GGML_OP_DUP:` falls through (the
    REPEAT body below it is commented out) into ROPE's test of op_params[2] & 4, which a DUP's
    zero op_params pass."""
    return op.op == Op.DUP or supports_op_0_2_38(op)


def supports_op_0_2_78(op: Tensor) -> bool:
    """0.2.78's: GELU/SILU/RELU of a contiguous source; MUL_MAT of F32, F16, Q4_0, Q8_0 (and
    other quantized types) weights when ne[3] agrees; GET_ROWS of F32, F16, Q4_0, Q8_0 tables;
    CPY and DUP of F32->F32, F32->F16, F16->F16 (DUP: the source's type twice); NORM, ADD, MUL,
    SCALE, CONT, SOFT_MAX and the no-ops for any operands."""
    a, b = op.src[0], op.src[1]
    if op.op in _ALWAYS:
        return True
    if a is None:
        return False
    if op.op == Op.UNARY:
        return _unary(op) in (_GELU, _SILU, _RELU) and _is_contiguous(a)
    if op.op == Op.MUL_MAT:
        return b is not None and a.type in (_F32, _F16, _Q4_0, _Q8_0) and a.ne[3] == b.ne[3]
    if op.op == Op.GET_ROWS:
        return a.type in (_F32, _F16, _Q4_0, _Q8_0)
    if op.op in (Op.CPY, Op.DUP):
        return (a.type, b.type if b is not None else a.type) in _CPY_PAIRS
    return False


#: the operations any version's supports_op names (its `ops`; `kernels` decides per node)
VULKAN_OPS = frozenset(_ALWAYS | {Op.UNARY, Op.MUL_MAT, Op.CPY, Op.DUP, Op.GET_ROWS}) & ALL_OPS


@dataclass(frozen=True)
class Shipped:
    """A device a target ships: its `--device` name, the targets that ship it and, per target,
    the shape the reference is given."""

    name: str
    #: target name -> the reference's shape of that build's device
    shapes: dict[str, VDevParams]
    #: the C symbol that makes a backend of the device (given device 0)
    init_symbol: str
    #: a C symbol to call first (it starts the device's instance), if the build has it
    count_symbol: str
    #: a check of the machine (None: a device is there; else what is missing, in words)
    probe: Callable[[], str | None]
    #: the alignment the device of target `name` reports here (None: it cannot be asked)
    alignment: Callable[[str], int | None] = lambda name: None


def tally(event: str) -> None:
    """Append `event` to $GGSPEC_DEVICE_TALLY, if set (one write: forked workers may share it)."""
    path = os.environ.get(TALLY_ENV)
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{event}\n".encode())
        finally:
            os.close(fd)


def _shape(name: str, kernels: Callable[[Tensor], bool]) -> VDevParams:
    return VDevParams(name=name, alignment=VULKAN_ALIGNMENT, async_entries=False, cpy_tensor_async=False,
                      ops=VULKAN_OPS, kernels=kernels)


_PROBED: dict[str, str | None] = {}


def vulkan_probe() -> str | None:
    """Whether Vulkan's loader finds a physical device here (once per process): None if it does,
    else why not, in words. Uses libvulkan directly, not the target (whose init aborts without one)."""
    if "vulkan" in _PROBED:
        return _PROBED["vulkan"]
    why: str | None = None
    try:
        vk = ctypes.CDLL("libvulkan.so.1")
    except OSError:
        why = "no Vulkan loader (libvulkan.so.1: install libvulkan1 and a driver such as mesa-vulkan-drivers)"
    else:
        class CreateInfo(ctypes.Structure):
            _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32),
                        ("pApplicationInfo", ctypes.c_void_p), ("enabledLayerCount", ctypes.c_uint32),
                        ("ppEnabledLayerNames", ctypes.c_void_p), ("enabledExtensionCount", ctypes.c_uint32),
                        ("ppEnabledExtensionNames", ctypes.c_void_p)]

        info = CreateInfo(1, None, 0, None, 0, None, 0, None)  # VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
        instance = ctypes.c_void_p()
        rc = vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance))
        if rc != 0:
            why = f"no Vulkan instance (vkCreateInstance returned {rc}: no driver?)"
        else:
            count = ctypes.c_uint32(0)
            vk.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), None)
            vk.vkDestroyInstance(instance, None)
            if count.value == 0:
                why = "no Vulkan device (the loader found no driver: install mesa-vulkan-drivers for lavapipe)"
    _PROBED["vulkan"] = why
    return why


#: the child process that asks a built library's Vulkan device for its alignment (argv[1]: the library)
_ALIGNMENT_PROBE = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
count = getattr(lib, "ggml_backend_vk_get_device_count", None)
if count is not None:
    count.restype = ctypes.c_int
    if count() < 1:
        print("none")
        sys.exit(0)
init = lib.ggml_backend_vk_init
init.restype, init.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
backend = init(0)
if not backend:
    print("none")
    sys.exit(0)
buft = lib.ggml_backend_get_default_buffer_type
buft.restype, buft.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
align = lib.ggml_backend_buft_get_alignment
align.restype, align.argtypes = ctypes.c_size_t, [ctypes.c_void_p]
print(align(buft(backend)))
"""
_ALIGNMENTS: dict[str, int | None] = {}


def _built_library(target_name: str) -> Path | None:
    """The library of sdist target `target_name` if it is built here (never builds it)."""
    from .ggml_python import SDISTS, target_dir

    sd = SDISTS.get(target_name)
    if sd is None:
        return None
    lib = target_dir(target_name) / "lib" / sd.libname
    return lib if lib.is_file() else None


def alignment_cache() -> Path:
    """The file that keeps the probed alignments (in the cache folder)."""
    from .external import cache_dir

    return cache_dir() / ALIGNMENT_FILE


def device_alignment(target_name: str) -> int | None:
    """The alignment the Vulkan device of target `target_name`'s build reports on this machine:
    its default buffer type's get_alignment (the driver's minStorageBufferOffsetAlignment; 16 on
    lavapipe), as webgpu_device.device_alignment probes ours. None where it cannot be asked: the
    target is not built here, was built without Vulkan, or the machine has no Vulkan device.
    Asked in a child process (a device never starts in a process that forks examples), once per
    build of the library: kept in the process and in the cache folder (ALIGNMENT_FILE), so a
    run's workers do not start the device to ask again."""
    from .alignment_probe import probed_alignment

    lib = _built_library(target_name)
    if lib is None or vulkan_probe() is not None:
        return None
    return probed_alignment(f"{lib}|{lib.stat().st_mtime_ns}", alignment_cache(), _ALIGNMENTS, _ALIGNMENT_PROBE,
                            [str(lib)], timeout=120)


VULKAN = Shipped(
    "vulkan",
    {"llama-cpp-python-0.2.38": _shape("Vulkan", supports_op_0_2_38),
     "llama-cpp-python-0.2.56": _shape("Vulkan0", supports_op_0_2_56),
     "llama-cpp-python-0.2.78": _shape("Vulkan0", supports_op_0_2_78)},
    "ggml_backend_vk_init", "ggml_backend_vk_get_device_count", vulkan_probe, device_alignment)

#: the devices targets ship, by `--device` name
SHIPPED: dict[str, Shipped] = {VULKAN.name: VULKAN}


def computes_with_kernels_of_its_own(t: Any, x: Any) -> bool:
    """Whether tensor `x` of target `t` lives in a buffer of a device with kernels of its own:
    the WebGPU device (`--device webgpu`) or a device the target ships (`--device vulkan`), by
    the buffer's name, which is the device's shape's (spec/core.md, Devices with kernels of their
    own). The mock and the CPU compute with the CPU code: without `--device webgpu` or a shipped
    device, False without asking the target anything (an old build may lack buffer_name)."""
    device = selected_device()
    if device != "webgpu" and not is_shipped(device):
        return False
    view_src = t.tensor_view_src(x)
    buf = t.tensor_buffer(x if view_src is None else view_src)
    if buf is None:
        return False
    names = {WEBGPU_NAME} | {shape.name for d in SHIPPED.values() for shape in d.shapes.values()}
    return str(t.buffer_name(buf)) in names


def is_shipped(device: str) -> bool:
    return device in SHIPPED


def note_target(name: str) -> None:
    """Record the run's target (not the reference) for the reference's shape ($GGSPEC_DEVICE_OF)."""
    if name != "reference":
        os.environ[DEVICE_OF_ENV] = name


def shape_of(device: str, target_name: str) -> VDevParams | None:
    """The reference's shape of `device` as target `target_name` ships it (None: it does not), at
    the alignment the device reports here (`Shipped.alignment`; the shape's own where it cannot
    be asked)."""
    shipped = SHIPPED[device]
    shape = shipped.shapes.get(target_name)
    if shape is None:
        return None
    probed = shipped.alignment(target_name)
    return replace(shape, alignment=probed) if probed is not None else shape


class _ShippedDevice(_WebGPUDevice):
    """The replaced entries of one target (one example), for a device the target ships."""

    def __init__(self, target: Any, shipped: Shipped) -> None:
        super().__init__(target)
        self.shipped = shipped
        self.label = shipped.name
        self.of = target.name if self.is_c else os.environ.get(DEVICE_OF_ENV, "")
        shape = shape_of(shipped.name, self.of)
        self.shape = replace(shape) if shape is not None else None

    def init(self, params: VDevParams) -> Any:
        if self.used or not is_plain(params):
            return self.vdev_init(params)
        self.used = True
        if self.shape is None:
            who = self.of or "the run's target (unknown here: $GGSPEC_DEVICE_OF is not set)"
            raise MissingSymbol(self.of or self.target.name, f"a {self.shipped.name} device ({who} does not ship one; "
                                f"devices it ships: {', '.join(shipped_by(self.of)) or 'none'})")
        if not self.is_c:
            return self.vdev_init(self.shape)
        return self._c_backend()

    def _c_backend(self) -> Any:
        t = self.target
        if IN_SHARED_WORKER.get():
            raise NeedsDeviceWorker(f"the {self.shipped.name} device starts only in a worker forked for examples")
        why = self.shipped.probe()
        if why is not None:
            raise MissingSymbol(t.name, f"a {self.shipped.name} device ({why})")
        lib = ctypes.CDLL(str(t.build.lib_path))  # the library the adapter module already loaded
        init = getattr(lib, self.shipped.init_symbol, None)
        if init is None:
            raise MissingSymbol(t.name, f"{self.shipped.init_symbol} (this build of {t.name} was made without "
                                f"its {self.shipped.name} backend: {vulkan_missing()})")
        count = getattr(lib, self.shipped.count_symbol, None)
        if count is not None:
            count.restype = ctypes.c_int
            if int(count()) < 1:
                raise MissingSymbol(t.name, f"a {self.shipped.name} device ({self.shipped.count_symbol}() is 0)")
        init.restype, init.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
        ptr = init(0)
        if not ptr:
            raise MissingSymbol(t.name, f"a {self.shipped.name} device ({self.shipped.init_symbol}(0) returned NULL)")
        backend = t.ffi.cast(f"{t.p}backend_t", ptr)
        self.backend = backend
        tally("made")
        return backend

    @property
    def device_name(self) -> str:
        return self.shape.name if self.shape is not None else ""

    def compute(self, backend: Any, graph: Any) -> bool:
        ok = bool(self.graph_compute(backend, graph))
        on_device = self._is_device_backend(backend)
        if on_device and self.is_c:
            tally("computed" if ok else "refused")
        if not ok and on_device:
            raise DeviceRefused(self.target.name, f"graph_compute of this graph on the {self.shipped.name} device "
                                "(an operation or layout its supports_op refuses)")
        return ok


def shipped_by(target_name: str) -> list[str]:
    """The devices target `target_name` ships (by `--device` name)."""
    return [d.name for d in SHIPPED.values() if target_name in d.shapes]


def vulkan_missing() -> str:
    from .ggml_python import vulkan_buildable

    return vulkan_buildable() or "rebuild it: its cached build predates the Vulkan headers"


def unavailable(device: str, target_name: str) -> str | None:
    """One line saying why `--device DEVICE` cannot reach a device for `target_name` (every
    example that asks for it is then `unsupported`); None when it can (as far as can be told
    without starting it)."""
    if device not in SHIPPED:
        return None
    if target_name not in SHIPPED[device].shapes:
        return (f"--device {device}: target {target_name} does not ship a {device} device (targets that do: "
                f"{', '.join(SHIPPED[device].shapes)}); every example that asks for it is unsupported")
    return None


def install(target: Target, device: str) -> Target:
    """Give `target` the shipped `device` in place of its first plain virtual device (module doc)."""
    dev = _ShippedDevice(target, SHIPPED[device])
    t: Any = target
    t.vdev_init, t.vdev_pending, t.vdev_counters, t.vdev_log = dev.init, dev.pending, dev.counters, dev.log
    t.buffer_bytes, t.backend_graph_compute = dev.bytes_of, dev.compute
    t.backend_free, t.close = dev.free, dev.close
    t.device = device
    return target
