"""`ggspec check --device webgpu`: the WebGPU backend (native/src/webgpu.c) as the device.

`install(target)` (made by `make_target` when `$GGSPEC_DEVICE` is `webgpu`, which the CLI's
`--device webgpu` sets) changes one entry of a target, `vdev_init`: the first *plain* virtual
device an example asks for (`VDevParams()` but for its name: eager, every entry on, no refused
ops, no failing compute, no base offset) becomes

- on a C target, a backend on the process's WebGPU device (`ggspec_webgpu_init`), started on
  first use in the worker that runs the example, never in the parent before a fork: the check's
  device worker (engine.isolate.LastingWorker), which keeps the device for the check's next
  such example, or, for an example expected to die, a worker of its own;
- on the reference, a virtual device of WebGPU's shape (`webgpu_shape()`): named WebGPU, the
  alignment the device reports here (whatever the adapter's limits are, `device_alignment`), no
  `get_alloc_size` (a tensor needs its nbytes), and kernels of its own: supports_op is
  webgpu.c's (`webgpu_supports_op`, type by type), a graph holding anything else is refused
  (false, nothing computed), and the CPU code's compute-time asserts do not bind it
  (reference.clauses.NotBinding).

Every other device stays the mock: a check asking for a knob (lazy queue, refused ops, a failing
compute, another alignment) gets the virtual device, and so does a second plain device of the
same example (WebGPU has one device per process, one buffer type). The mock's counters
(`vdev_pending`, `vdev_counters`) asked of the WebGPU device are `MockOnly` on both sides: a check
that reads them through `engine.registry.mock_reading` records them as not observable and goes
on (its data and placement are still compared; the counters are checked on the mock in every run
without `--device webgpu`). The entry log of an example that used the WebGPU device is
`MissingSymbol` on both sides; a graph the WebGPU device refuses to compute (the mock computes
every op) is `DeviceRefused` on both sides: that example's verdict is `unsupported`, unless its
check takes the refusal as an answer. `buffer_bytes` of
a WebGPU buffer reads it through a tensor. Where there is no WebGPU device (no wgpu, no adapter,
a build without webgpu.h) the C target raises `MissingSymbol` naming what is missing, in one
line: `unsupported`, never a failure.
"""

from __future__ import annotations

import struct
from dataclasses import replace
from typing import Any

from ggspec.reference.tensor import Tensor
from ggspec.reference.types import GGMLType, Op, blck_size, type_size
from ggspec.reference.vdev import VDevParams

from ..engine import reach
from ..engine.results import CheckResult
from ..errors import DeviceRefused, MissingSymbol, MockOnly, NeedsDeviceWorker
from ..target import IN_SHARED_WORKER, Target

#: the device's minStorageBufferOffsetAlignment on lavapipe: the reference's shape where no
#: device can be probed (`device_alignment`); any other device is run at its own
WEBGPU_ALIGNMENT = 32
#: a power of two the device is requested with as its alignment (native/src/webgpu.c): how the
#: backend runs on an adapter that reports it (WebGPU's default limit is 256)
ALIGNMENT_ENV = "GGSPEC_WEBGPU_MIN_ALIGNMENT"
#: the operations webgpu.c's supports_op accepts for some types (docs/webgpu.md, Operations)
WEBGPU_OPS: frozenset[Op] = frozenset({
    Op.NONE, Op.VIEW, Op.RESHAPE, Op.PERMUTE, Op.TRANSPOSE, Op.DUP, Op.CPY, Op.CONT, Op.ADD, Op.MUL,
    Op.SCALE, Op.MUL_MAT, Op.GET_ROWS, Op.NORM, Op.SOFT_MAX, Op.UNARY,
})
WEBGPU_NAME = "WebGPU"
_NOOPS = frozenset({Op.NONE, Op.VIEW, Op.RESHAPE, Op.PERMUTE, Op.TRANSPOSE})
_F32, _F16, _I32, _Q4_0, _Q8_0 = GGMLType.F32, GGMLType.F16, GGMLType.I32, GGMLType.Q4_0, GGMLType.Q8_0
_GELU, _SILU = 7, 9  # enum ggml_unary_op


def _fits(t: Tensor | None) -> bool:
    """webgpu.c's `fits`: every extent fits the kernels' u32 arithmetic, F32/I32 strides are whole
    words, every stride is even."""
    if t is None:
        return True
    total = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]
    if total < 0 or total > 0x7FFFFFFF:
        return False
    for d in range(4):
        if t.ne[d] <= 0 or t.nb[d] > 0xFFFFFFFF or t.nb[d] % 2 != 0:
            return False
        if t.type in (_F32, _I32) and t.nb[d] % 4 != 0:
            return False
    return True


def _adjacent_blocks(t: Tensor) -> bool:
    """webgpu.c's `adjacent_blocks`: rows of whole blocks, each block right after the one before."""
    return t.ne[0] % 32 == 0 and t.nb[0] == type_size(t.type)


def _contiguous(t: Tensor) -> bool:
    """webgpu.c's `contiguous`: elements (blocks) in order, without gaps (the stride of an extent
    of 1 does not matter)."""
    expected = type_size(t.type)
    for d in range(4):
        if t.ne[d] != 1 and t.nb[d] != expected:
            return False
        expected *= t.ne[d] // (blck_size(t.type) if d == 0 else 1)
    return True


def webgpu_supports_op(op: Tensor) -> bool:
    """What webgpu.c's kernels compute: its `wg_supports_op`, line for line (docs/webgpu.md,
    Operations). The reference's WebGPU shape answers supports_op with it and refuses a graph
    holding anything else, as webgpu.c's graph_compute does."""
    if op.op in _NOOPS:
        return True
    a, b = op.src[0], op.src[1]
    if a is None or not (_fits(op) and _fits(a) and _fits(b)):
        return False
    floats, quantized = (_F32, _F16), (_Q4_0, _Q8_0)
    if op.op in (Op.DUP, Op.CONT):
        return ((a.type in floats and op.type in floats) or (a.type == _I32 and op.type == _I32)
                or (a.type in quantized and op.type == a.type and a.ne[0] % 32 == 0 and op.ne[0] % 32 == 0))
    if op.op == Op.CPY:
        return b is not None and ((a.type in floats and b.type in floats) or (a.type == _I32 and b.type == _I32)
                                  or (a.type in quantized and b.type == a.type and a.ne[0] % 32 == 0
                                      and b.ne[0] % 32 == 0)
                                  or (a.type in floats and b.type in quantized and a.ne[0] % 32 == 0
                                      and a.nb[0] == type_size(a.type) and _contiguous(b) and _contiguous(op)))
    if op.op == Op.ADD:
        return b is not None and ((a.type == _F32 and b.type == _F32 and op.type == _F32)
                                  or (a.type == _F16 and b.type in floats and op.type == _F16))
    if op.op == Op.MUL:
        return b is not None and a.type == _F32 and b.type == _F32 and op.type == _F32
    if op.op == Op.SCALE:
        return a.type == _F32 and op.type == _F32 and b is None
    if op.op == Op.MUL_MAT:
        return (b is not None and op.type == _F32 and b.ne[2] % a.ne[2] == 0 and b.ne[3] % a.ne[3] == 0
                and ((a.type in floats and b.type == _F32)
                     or (a.type in quantized and _adjacent_blocks(a)
                         and (b.type == _F32 or (b.type == _Q8_0 and _adjacent_blocks(b))))))
    if op.op == Op.GET_ROWS:
        table = ((a.type in (_F32, _I32, _F16) and a.nb[0] == type_size(a.type))
                 or (a.type in quantized and _adjacent_blocks(a)))
        return (table and b is not None and b.type == _I32 and b.ne[3] == 1
                and op.type == (_I32 if a.type == _I32 else _F32))
    if op.op == Op.NORM:
        return a.type == _F32 and op.type == _F32
    if op.op == Op.SOFT_MAX:
        return a.type == _F32 and op.type == _F32 and (b is None or b.type == _F32)
    if op.op == Op.UNARY:
        u = struct.unpack_from("<i", op.op_params.ljust(4, b"\0"))[0]
        return u in (_GELU, _SILU) and a.type == _F32 and op.type == _F32
    return False


#: the virtual device the reference gets where the target gets WebGPU
WEBGPU_SHAPE = VDevParams(name=WEBGPU_NAME, alignment=WEBGPU_ALIGNMENT, ops=WEBGPU_OPS,
                          kernels=webgpu_supports_op)


#: the child process that asks the WebGPU device for its alignment
_ALIGNMENT_PROBE = ("from ggspec.native.webgpu import WebGPUUnavailable, webgpu_init\n"
                    "from ggspec.native.backend import backend_get_alignment\n"
                    "try:\n    print(backend_get_alignment(webgpu_init()))\n"
                    "except WebGPUUnavailable:\n    print('none')\n")
_ALIGNMENTS: dict[str, int | None] = {}


def _probe_key() -> str | None:
    """What the device's alignment depends on: the wgpu-native library, the native module the
    probe loads ($GGSPEC_NATIVE_MODULE: a variant build), $GGSPEC_WEBGPU_MIN_ALIGNMENT."""
    import importlib.util
    import os

    from ggspec.native.webgpu import wgpu_library

    lib = wgpu_library()
    if lib is None or not os.path.isfile(lib):
        return None
    spec = importlib.util.find_spec("ggspec.native._native")
    native = spec.origin if spec is not None and spec.origin else ""
    stamp = os.path.getmtime(native) if native and os.path.isfile(native) else 0
    return "|".join((lib, str(os.path.getmtime(lib)), native, str(stamp), os.environ.get("GGSPEC_NATIVE_MODULE", ""),
                     os.environ.get(ALIGNMENT_ENV, "")))


def device_alignment() -> int | None:
    """The alignment the WebGPU device reports on this machine (its buffer type's get_alignment:
    the adapter's minStorageBufferOffsetAlignment, or $GGSPEC_WEBGPU_MIN_ALIGNMENT), None where
    there is no device. Probed in a child process (a device never starts in a process that forks
    examples), once per setting: kept in the process and in the cache folder
    (`webgpu-alignment.json`), so a run's workers do not start the device to ask again."""
    import os

    from .alignment_probe import probed_alignment
    from .external import cache_dir

    key = _probe_key()
    if key is None:
        return None
    env = {k: v for k, v in os.environ.items() if k != "GGSPEC_DEVICE"}
    return probed_alignment(key, cache_dir() / "webgpu-alignment.json", _ALIGNMENTS, _ALIGNMENT_PROBE, timeout=300, env=env)


def webgpu_shape() -> VDevParams:
    """The reference's WebGPU device: WEBGPU_SHAPE at the alignment the device reports here
    (`device_alignment`; lavapipe's where there is none)."""
    return replace(WEBGPU_SHAPE, alignment=device_alignment() or WEBGPU_ALIGNMENT)


def is_plain(params: VDevParams) -> bool:
    """A virtual device with every knob at its default (any name)."""
    return params == VDevParams(name=params.name)


class _WebGPUDevice:
    """The replaced entries of one target (one example). vulkan_device._ShippedDevice is this for
    a device the target ships: it changes `label`, `device_name`, the device `init` starts and
    `compute` (which counts what ran on the device)."""

    #: the device, as messages name it
    label = "WebGPU"

    def __init__(self, target: Any) -> None:
        self.target = target
        self.vdev_init = target.vdev_init
        self.vdev_pending = target.vdev_pending
        self.vdev_counters = target.vdev_counters
        self.vdev_log = target.vdev_log
        self.buffer_bytes = target.buffer_bytes
        self.graph_compute = target.backend_graph_compute
        self.backend_free = target.backend_free
        self.close_target = getattr(target, "close", None)
        self.used = False
        self.is_c = hasattr(target, "lib")
        #: the WebGPU backend of this example while it is not freed
        self.backend: Any = None

    def init(self, params: VDevParams) -> Any:
        if self.used or not is_plain(params):
            return self.vdev_init(params)
        self.used = True
        if not self.is_c:
            return self.vdev_init(webgpu_shape())
        return self._c_backend()

    def _c_backend(self) -> Any:
        t = self.target
        if IN_SHARED_WORKER.get():
            # a device started here could not be used by an example forked from here later (a
            # Vulkan instance never crosses a fork), so the example runs in the check's device
            # worker (or, expected to die, in a worker of its own)
            raise NeedsDeviceWorker("the WebGPU device starts only in a worker forked for examples")
        if not hasattr(t.lib, "ggspec_webgpu_init"):
            raise MissingSymbol(t.name, "ggspec_webgpu_init (a shim without the WebGPU backend)")
        from ggspec.native.webgpu import wgpu_library

        path = wgpu_library()
        reason = t.ffi.new("char[512]")
        backend = t.lib.ggspec_webgpu_init((path or "").encode(), reason, len(reason))
        if backend == t.ffi.NULL:
            why = t.ffi.string(reason).decode(errors="replace") or "WebGPU unavailable"
            if path is None and bool(t.lib.ggspec_webgpu_compiled()):
                why = "WebGPU unavailable: no wgpu-native library (install the wgpu package or set GGSPEC_WGPU_LIB)"
            raise MissingSymbol(t.name, f"a WebGPU device ({why})")
        self.backend = backend
        return backend

    def free(self, backend: Any) -> None:
        if backend == self.backend:
            self.backend = None
        self.backend_free(backend)

    def close(self) -> None:
        """The example is over: first the WebGPU backend it left unfreed is synchronized, so that no
        get_async of it is still to deliver into host memory the target frees now (the device
        outlives the example in the check's device worker, where the next example waits on the
        same queue); then the target's own close."""
        if self.backend is not None:
            backend, self.backend = self.backend, None
            self.target.backend_synchronize(backend)
        if self.close_target is not None:
            self.close_target()

    @property
    def device_name(self) -> str:
        """The name of the device's backends and buffers ("": none can be made)."""
        return WEBGPU_NAME

    def _is_device_backend(self, backend: Any) -> bool:
        return bool(self.used and self.device_name and self.target.backend_name(backend) == self.device_name)

    def _is_device_buffer(self, buf: Any) -> bool:
        return bool(self.used and self.device_name and self.target.buffer_name(buf) == self.device_name)

    def pending(self, backend: Any) -> int:
        if self._is_device_backend(backend):
            raise MockOnly(self.target.name, f"vdev_pending on the {self.label} device (the mock's counter)")
        return int(self.vdev_pending(backend))

    def counters(self, buf: Any) -> tuple[int, int]:
        if self._is_device_buffer(buf):
            raise MockOnly(self.target.name, f"vdev_counters on the {self.label} device (the mock's counters)")
        result: tuple[int, int] = self.vdev_counters(buf)
        return result

    def bytes_of(self, buf: Any) -> bytes:
        """Every byte of a buffer; of a device buffer (not host memory, which the mock's read hook
        reads) through an I8 tensor over the whole buffer and `tensor_get`."""
        t = self.target
        if not (self.is_c and self._is_device_buffer(buf)):
            return bytes(self.buffer_bytes(buf))
        size = int(t.buffer_get_size(buf))
        if size == 0:
            return b""
        whole = t.new_tensor(int(GGMLType.I8), (size,), "device-buffer-bytes")
        t.tensor_alloc(buf, whole, 0)
        return bytes(t.tensor_get(whole, 0, size))

    def compute(self, backend: Any, graph: Any) -> bool:
        """graph_compute; on the WebGPU device (and on the reference's WebGPU shape) a refused
        graph (an operation or layout webgpu.c does not implement, where the mock computes
        everything) is `DeviceRefused`."""
        ok = bool(self.graph_compute(backend, graph))
        if not ok and self._is_device_backend(backend):
            raise DeviceRefused(self.target.name, "graph_compute of this graph on the WebGPU device "
                                "(an operation or layout it does not implement, docs/webgpu.md)")
        return ok

    def log(self) -> list[str]:
        if self.used:
            raise MissingSymbol(self.target.name, f"an entry log of the {self.label} device (only the mock keeps one)")
        result: list[str] = self.vdev_log()
        return result


def install(target: Target) -> Target:
    """Give `target` the WebGPU device in place of its first plain virtual device (module doc)."""
    dev = _WebGPUDevice(target)
    t: Any = target
    t.vdev_init, t.vdev_pending, t.vdev_counters, t.vdev_log = dev.init, dev.pending, dev.counters, dev.log
    t.buffer_bytes, t.backend_graph_compute = dev.bytes_of, dev.compute
    t.backend_free, t.close = dev.free, dev.close
    t.device = "webgpu"
    return target


def watch_reach(target: Target) -> Target:
    """Record (engine/reach.py) every plain virtual device `target` is asked for, on any device:
    the examples whose verdict could differ under `--device webgpu`."""
    init = target.vdev_init

    def vdev_init(params: VDevParams) -> Any:
        if is_plain(params):
            reach.mark()
        return init(params)

    t: Any = target
    t.vdev_init = vdev_init
    return target


def device_gave_up(device: str, results: list[CheckResult]) -> str | None:
    """Why a run that selected a real device (`--device webgpu`, or a device the target ships)
    must not pass: every check whose examples asked for that device ended `unsupported` (the
    device is missing, or refused every example). None when the device is the mock, when no
    check asked for it, or when one of them was judged (passed or failed) on it. One line."""
    if device in ("", "vdev"):
        return None
    asked = [r for r in results if r.reached_device]
    if not asked or any(r.status != "unsupported" for r in asked):
        return None
    why = next((ln.strip() for r in asked for ln in str(r.detail).splitlines() if ln.strip()), "no reason given")
    return (f"NO DEVICE: all {len(asked)} check(s) that asked for the {device} device ended unsupported, "
            f"so nothing was judged on it ({why})")
