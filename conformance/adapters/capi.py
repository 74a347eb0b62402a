"""The C API adapter: the Target protocol over any cffi-compiled ggml-backend build.

`CApiTarget(ffi, lib, prefix)` calls `lib.<prefix>backend_tensor_set` and friends, so the same
code drives our native build (prefix `ggspec_`) and external builds (`ggml_`, `wsp_ggml_`).
A function the library lacks raises `MissingSymbol` from the method that needs it.

Handles are cffi pointers (equal when they point at the same object). Host memory handles are
cffi arrays that this adapter keeps alive until `close()`.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ggspec.reference.clauses import Profile
from ggspec.reference.types import MAX_DIMS, Op
from ggspec.reference.vdev import check_absent

from ..engine.isolate import traced_call
from ..errors import ContextsExhausted, MissingSymbol, NeedsPristineProcess
from ..target import OP_KINDS, GraphCopyResult, GraphInfo, SchedPlan, TensorInfo, VDevParams, device_labels, op_call

CONTEXT_BYTES = 32 << 20

#: native/'s scheduler test hooks (`<prefix>backend_sched_debug_<name>`): with all of them a
#: target gives the full plan, else the public one
_SCHED_DEBUG_HOOKS = ("n_splits", "split_backend", "split_i_start", "split_i_end", "split_n_inputs", "split_input",
                      "tensor_backend", "tensor_cause", "tensor_copy")


def _free_contexts(free: Any, null: Any, contexts: list[Any]) -> None:
    """A collected target's contexts, freed (weakref.finalize: never called after close())."""
    for ctx in contexts:
        if free is not None and ctx != null:
            free(ctx)


def _context_slot(i: int) -> Any:
    """An attribute that reads and writes `_contexts[i]`, the list the finalizer frees."""

    def get(self: Any) -> Any:
        return self._contexts[i]

    def put(self: Any, value: Any) -> None:
        self._contexts[i] = value

    return property(get, put)


class CApiTarget:
    default_profile = Profile.FIXED

    def __init__(self, ffi: Any, lib: Any, prefix: str, name: str) -> None:
        self.ffi, self.lib, self.p, self.name = ffi, lib, prefix, name
        self._keep: list[Any] = []
        self._eval_faults: list[str] = []  # what the eval callback's trampoline saw amiss (SCHED-24)
        #: [ctx, host_ctx], the list the finalizer frees: a target that is dropped without close()
        #: gives them back when it is collected (rc.8 has 64 context slots for the whole process)
        self._contexts: list[Any] = [ffi.NULL, ffi.NULL]
        weakref.finalize(self, _free_contexts, getattr(lib, f"{prefix}free", None), ffi.NULL, self._contexts).atexit = False
        self.ctx = self._context(no_alloc=True)
        self.host_ctx = self._context(no_alloc=False)
        self.resettable_registry = hasattr(lib, f"{prefix}backend_reg_reset_for_tests")
        #: the backends each scheduler was made with (by address), for the public plan's indexes
        self._sched_backends: dict[int, list[Any]] = {}
        #: (name, buffer type) of every virtual device this target made, for vdev_log
        self._devices: list[tuple[str, Any]] = []

    #: the tensor context (no_alloc) and the context of host tensors (allocated): slots of `_contexts`
    ctx = _context_slot(0)
    host_ctx = _context_slot(1)

    # plumbing ------------------------------------------------------------------------------

    def fn(self, name: str) -> Any:
        if name.startswith(("backend_reg", "backend_register")):
            self._registry_guard()
        try:
            return traced_call(self.p + name, getattr(self.lib, self.p + name))
        except AttributeError:
            raise MissingSymbol(self.name, self.p + name) from None

    def _context(self, no_alloc: bool) -> Any:
        params = self.ffi.new(f"struct {self.p}init_params *")
        params.mem_size = CONTEXT_BYTES
        params.mem_buffer = self.ffi.NULL
        params.no_alloc = no_alloc
        return self._init(params)

    def _init(self, params: Any) -> Any:
        """`init`, refusing a NULL context (new_tensor would write through it). A target dropped
        without close() often sits in a reference cycle (its wrapped entries point back at it), so
        its contexts wait for the cycle collector: on NULL, collect once and try again."""
        ctx = self.fn("init")(params[0])
        if ctx == self.ffi.NULL:
            gc.collect()
            ctx = self.fn("init")(params[0])
        if ctx == self.ffi.NULL:
            raise ContextsExhausted(
                f"{self.name}: {self.p}init returned NULL: no free context slot (rc.8's ggml.c has 64 for the "
                "whole process; each target holds two until close(), each scheduler that split a graph one)")
        return ctx

    def context_init(self, mem_size: int) -> None:
        params = self.ffi.new(f"struct {self.p}init_params *")
        params.mem_size = mem_size
        params.mem_buffer = self.ffi.NULL
        params.no_alloc = True
        self.fn("free")(self._init(params))

    def context_rebuild(self) -> None:
        """Free the tensor context and make a new one in the same memory, as whisper.cpp builds
        each graph in one static buffer: from the second rebuild on, the tensors made in the same
        order get the same addresses as before (state keyed by address may go stale)."""
        static = self.__dict__.get("_static")
        if static is None:
            static = self.__dict__["_static"] = self.ffi.new("char[]", CONTEXT_BYTES)
        self.fn("free")(self.ctx)
        self.ctx = self.ffi.NULL
        params = self.ffi.new(f"struct {self.p}init_params *")
        params.mem_size = CONTEXT_BYTES
        params.mem_buffer = static
        params.no_alloc = True
        self.ctx = self._init(params)

    def close(self) -> None:
        """Free the contexts (tensor objects); buffers and backends are left to the process."""
        for ctx in (self.ctx, self.host_ctx):
            if ctx != self.ffi.NULL:
                self.fn("free")(ctx)
        self.ctx = self.host_ctx = self.ffi.NULL
        self._keep.clear()
        if hasattr(self.lib, "ggspec_vdev_log_clear"):  # devices live on; their logs need not
            for _, buft in self._devices:
                self.lib.ggspec_vdev_log_clear(buft)
        self._devices.clear()

    def _ptr(self, h: Any | None) -> Any:
        return self.ffi.NULL if h is None else h

    def _opt(self, h: Any) -> Any | None:
        return None if h == self.ffi.NULL else h

    def _bytes(self, payload: bytes, size: int) -> Any:
        block = self.ffi.new("uint8_t[]", max(size, len(payload), 1))
        self.ffi.memmove(block, payload, len(payload))
        return block

    # core ----------------------------------------------------------------------------------

    def _new(self, ctx: Any, type_: int, ne: Sequence[int], name: str) -> Any:
        if not 1 <= len(ne) <= MAX_DIMS:
            raise ValueError(f"ne must have 1 to 4 extents, got {list(ne)}")
        t = self.fn(f"new_tensor_{len(ne)}d")(ctx, type_, *ne)
        self.fn("set_name")(t, name.encode())
        return t

    def new_tensor(self, type_: int, ne: Sequence[int], name: str = "") -> Any:
        return self._new(self.ctx, type_, ne, name)

    def new_host_tensor(self, type_: int, ne: Sequence[int], name: str = "") -> Any:
        return self._new(self.host_ctx, type_, ne, name)

    def poke_buffer(self, t: Any, buf: Any | None) -> None:
        t.buffer = self._ptr(buf)

    def view(self, a: Any, ne: Sequence[int], nb: Sequence[int], offset: int) -> Any:
        if not 1 <= len(ne) <= MAX_DIMS or len(nb) != len(ne) - 1:
            raise ValueError(f"a view needs 1 to 4 extents and one stride fewer, got ne={list(ne)} nb={list(nb)}")
        return self.fn(f"view_{len(ne)}d")(self.ctx, a, *ne, *nb, offset)

    def set_op(self, t: Any, op: int, srcs: Sequence[Any | None]) -> None:
        t.op = Op(op).value
        for i, s in enumerate(srcs):
            t.src[i] = self._ptr(s)

    def nbytes(self, t: Any) -> int:
        return int(self.fn("nbytes")(t))

    def _raw_base(self, buf: Any) -> int:
        """The get_base entry's answer, without the BUF-5 assert of the API function."""
        get_base = buf.iface.get_base
        if get_base == self.ffi.NULL:
            return 0
        return int(self.ffi.cast("uintptr_t", get_base(buf)))

    def tensor_address(self, t: Any) -> int:
        return int(self.ffi.cast("uintptr_t", t))

    def tensor_info(self, t: Any) -> TensorInfo:
        buf = t.view_src.buffer if t.view_src != self.ffi.NULL else t.buffer
        data = int(self.ffi.cast("uintptr_t", t.data))
        offset = None
        if data and buf != self.ffi.NULL:
            base = self._raw_base(buf)
            offset = data - base if base else None
        return TensorInfo(
            int(t.type), tuple(int(x) for x in t.ne), tuple(int(x) for x in t.nb),  # type: ignore[arg-type]
            int(t.op), self.ffi.string(t.name).decode(errors="replace"), int(t.view_offs),
            t.view_src != self.ffi.NULL, t.buffer != self.ffi.NULL, data != 0, offset,
        )

    def tensor_buffer(self, t: Any) -> Any | None:
        return self._opt(t.buffer)

    def tensor_view_src(self, t: Any) -> Any | None:
        return self._opt(t.view_src)

    def tensor_src(self, t: Any, i: int) -> Any | None:
        return self._opt(t.src[i])

    def type_name(self, type_: int) -> str:
        return str(self.ffi.string(self.fn("type_name")(type_)).decode())

    def vec_dot_type(self, type_: int) -> int:
        """ggspec's own accessor when the build has one, else rc.8's internal traits call."""
        own = getattr(self.lib, self.p + "vec_dot_type", None)
        if own is not None:
            return int(own(type_))
        return int(self.fn("internal_get_type_traits")(type_).vec_dot_type)

    # host memory ---------------------------------------------------------------------------

    def host_alloc(self, size: int) -> Any:
        block = self.ffi.new("uint8_t[]", max(size, 1))
        self._keep.append(block)
        return block

    def host_write(self, h: Any, offset: int, payload: bytes) -> None:
        self.ffi.memmove(h + offset, payload, len(payload))

    def host_read(self, h: Any, offset: int, size: int) -> bytes:
        return bytes(self.ffi.buffer(h + offset, size))

    # buffer types --------------------------------------------------------------------------

    def cpu_buffer_type(self) -> Any:
        return self.fn("backend_cpu_buffer_type")()

    def buft_name(self, buft: Any) -> str:
        return str(self.ffi.string(self.fn("backend_buft_name")(buft)).decode())

    def buft_alloc_buffer(self, buft: Any, size: int) -> Any:
        return self.fn("backend_buft_alloc_buffer")(buft, size)

    def buft_get_alignment(self, buft: Any) -> int:
        return int(self.fn("backend_buft_get_alignment")(buft))

    def buft_get_alloc_size(self, buft: Any, t: Any) -> int:
        return int(self.fn("backend_buft_get_alloc_size")(buft, t))

    def buft_supports_backend(self, buft: Any, backend: Any) -> bool:
        return bool(self.fn("backend_buft_supports_backend")(buft, backend))

    def buft_is_host(self, buft: Any) -> bool:
        return bool(self.fn("backend_buft_is_host")(buft))

    # buffers -------------------------------------------------------------------------------

    def buffer_init_without_get_base(self, size: int) -> Any:
        cpu = self.cpu_buffer_type()
        probe = self.buft_alloc_buffer(cpu, 0)
        iface = self.ffi.new(f"struct {self.p}backend_buffer_i *")
        iface[0] = probe.iface
        self.fn("backend_buffer_free")(probe)
        iface.get_base = self.ffi.NULL
        return self.fn("backend_buffer_init")(cpu, iface[0], self.ffi.NULL, size)

    def buffer_counting_frees(self, size: int) -> Any:
        buf = self.buft_alloc_buffer(self.cpu_buffer_type(), size)
        real_free, key = buf.iface.free_buffer, self._addr(buf)
        calls = self.__dict__.setdefault("_free_calls", {})
        calls[key] = 0

        def counted(b: Any) -> None:
            calls[key] += 1
            real_free(b)

        cb = self.ffi.callback(self.ffi.typeof(real_free), counted)
        self._keep.append(cb)
        buf.iface.free_buffer = cb
        return buf

    def buffer_free_calls(self, buf: Any) -> int:
        return int(self.__dict__.get("_free_calls", {})[self._addr(buf)])

    def buffer_name(self, buf: Any) -> str:
        return str(self.ffi.string(self.fn("backend_buffer_name")(buf)).decode())

    def buffer_free(self, buf: Any | None) -> None:
        self.fn("backend_buffer_free")(self._ptr(buf))

    def buffer_get_base(self, buf: Any) -> int:
        return int(self.ffi.cast("uintptr_t", self.fn("backend_buffer_get_base")(buf)))

    def buffer_get_size(self, buf: Any) -> int:
        return int(self.fn("backend_buffer_get_size")(buf))

    def buffer_init_tensor(self, buf: Any, t: Any) -> None:
        self.fn("backend_buffer_init_tensor")(buf, t)

    def buffer_get_alignment(self, buf: Any) -> int:
        return int(self.fn("backend_buffer_get_alignment")(buf))

    def buffer_get_alloc_size(self, buf: Any, t: Any) -> int:
        return int(self.fn("backend_buffer_get_alloc_size")(buf, t))

    def buffer_clear(self, buf: Any, value: int) -> None:
        if not 0 <= value <= 255:
            raise ValueError(f"value is a uint8_t, got {value}")
        self.fn("backend_buffer_clear")(buf, value)

    def buffer_is_host(self, buf: Any) -> bool:
        return bool(self.fn("backend_buffer_is_host")(buf))

    def buffer_set_usage(self, buf: Any, usage: int) -> None:
        self.fn("backend_buffer_set_usage")(buf, usage)

    def buffer_usage(self, buf: Any) -> int:
        return int(buf.usage)

    def buffer_get_type(self, buf: Any) -> Any:
        return self.fn("backend_buffer_get_type")(buf)

    def buffer_reset(self, buf: Any) -> None:
        self.fn("backend_buffer_reset")(buf)

    def buffer_copy_tensor(self, src: Any, dst: Any) -> bool:
        return bool(self.fn("backend_buffer_copy_tensor")(src, dst))

    def buffer_bytes(self, buf: Any) -> bytes:
        """Every byte of the buffer: read at its base for host buffers, through the virtual
        device's test hook otherwise."""
        size = self.buffer_get_size(buf)
        if self.buffer_is_host(buf):
            return bytes(self.ffi.buffer(self.ffi.cast("uint8_t *", self._raw_base(buf)), size))
        out = self.ffi.new("uint8_t[]", max(size, 1))
        self.fn_vdev("read")(buf, 0, out, size)
        return bytes(self.ffi.buffer(out, size))

    def cpu_buffer_from_ptr(self, mem: Any | None, size: int) -> Any:
        return self.fn("backend_cpu_buffer_from_ptr")(self._ptr(mem), size)

    # tensor data ---------------------------------------------------------------------------

    def tensor_set(self, t: Any, payload: bytes, offset: int, size: int) -> None:
        block = self._bytes(payload[:size], size)
        self.fn("backend_tensor_set")(t, block, offset, size)

    def tensor_get(self, t: Any, offset: int, size: int) -> bytes:
        out = self.ffi.new("uint8_t[]", max(size, 1))
        self.fn("backend_tensor_get")(t, out, offset, size)
        return bytes(self.ffi.buffer(out, size))

    def tensor_set_async(self, backend: Any, t: Any, mem: Any, mem_offset: int, offset: int, size: int) -> None:
        self.fn("backend_tensor_set_async")(backend, t, mem + mem_offset, offset, size)

    def tensor_get_async(self, backend: Any, t: Any, mem: Any, mem_offset: int, offset: int, size: int) -> None:
        self.fn("backend_tensor_get_async")(backend, t, mem + mem_offset, offset, size)

    def view_init(self, buf: Any, t: Any) -> None:
        self.fn("backend_view_init")(buf, t)

    def tensor_alloc(self, buf: Any, t: Any, offset: int) -> None:
        addr = max(self._raw_base(buf) + offset, 0)
        self.fn("backend_tensor_alloc")(buf, t, self.ffi.cast("void *", addr))

    # copies --------------------------------------------------------------------------------

    def tensor_copy(self, src: Any, dst: Any) -> None:
        self.fn("backend_tensor_copy")(src, dst)

    def tensor_copy_async(self, backend: Any, src: Any, dst: Any) -> None:
        self.fn("backend_tensor_copy_async")(backend, src, dst)

    # backends ------------------------------------------------------------------------------

    def fn_vdev(self, name: str) -> Any:
        try:
            return traced_call("ggspec_vdev_" + name, getattr(self.lib, "ggspec_vdev_" + name))
        except AttributeError:
            raise MissingSymbol(self.name, "ggspec_vdev_" + name) from None

    def cpu_init(self) -> Any:
        return self.fn("backend_cpu_init")()

    def vdev_init(self, params: VDevParams) -> Any:
        p = self.ffi.new("struct ggspec_vdev_params *")
        name = self.ffi.new("char[]", params.name.encode())
        p.name = name
        p.alignment = params.alignment
        p.lazy = params.lazy
        p.async_entries = params.async_entries
        p.buffer_cpy_tensor = params.buffer_cpy_tensor
        p.cpy_tensor_async = params.cpy_tensor_async
        p.alloc_pad = params.alloc_pad
        mask = 0
        for op in params.ops:
            mask |= 1 << int(op)
        p.ops_mask[0] = mask & (2**64 - 1)
        p.ops_mask[1] = mask >> 64
        if params.compute_fails:  # a field older shims lack: set only when wanted
            p.compute_fails = True
        if params.base_offset:
            p.base_offset = params.base_offset
        if params.absent:  # optional entries left NULL, one by one (reference/vdev.py OPTIONAL_ENTRIES)
            check_absent(params)
            p.absent = params.absent_bits()
        backend = self.fn_vdev("init")(p)
        if backend != self.ffi.NULL and hasattr(self.lib, "ggspec_vdev_log_len"):  # a shim with the entry log
            self._devices.append((params.name, self.lib.ggspec_vdev_buffer_type(backend)))
        return backend

    def vdev_log(self) -> list[str]:
        """Target.vdev_log: the entry logs of this target's devices, merged in call order. The
        hooks are called untraced (a C reproducer does not repeat them)."""
        if not hasattr(self.lib, "ggspec_vdev_log_len"):
            raise MissingSymbol(self.name, "ggspec_vdev_log_len")
        serial = self.ffi.new("size_t *")
        merged: list[tuple[int, str]] = []
        for label, buft in device_labels(self._devices):
            for i in range(int(self.lib.ggspec_vdev_log_len(buft))):
                text = self.ffi.string(self.lib.ggspec_vdev_log_entry(buft, i, serial)).decode("utf-8", "replace")
                merged.append((int(serial[0]), f"{label} {text}"))
        return [text for _, text in sorted(merged)]

    def vdev_pending(self, backend: Any) -> int:
        return int(self.fn_vdev("pending")(backend))

    def vdev_counters(self, buf: Any) -> tuple[int, int]:
        return int(self.fn_vdev("init_tensor_calls")(buf)), int(self.fn_vdev("reset_calls")(buf))

    def backend_name(self, backend: Any | None) -> str:
        return str(self.ffi.string(self.fn("backend_name")(self._ptr(backend))).decode())

    def backend_free(self, backend: Any | None) -> None:
        self.fn("backend_free")(self._ptr(backend))

    def backend_get_default_buffer_type(self, backend: Any) -> Any:
        return self.fn("backend_get_default_buffer_type")(backend)

    def backend_alloc_buffer(self, backend: Any, size: int) -> Any:
        return self.fn("backend_alloc_buffer")(backend, size)

    def backend_get_alignment(self, backend: Any) -> int:
        return int(self.fn("backend_get_alignment")(backend))

    def backend_synchronize(self, backend: Any) -> None:
        self.fn("backend_synchronize")(backend)

    def backend_supports_op(self, backend: Any, op: Any) -> bool:
        return bool(self.fn("backend_supports_op")(backend, op))

    def backend_is_cpu(self, backend: Any | None) -> bool:
        return bool(self.fn("backend_is_cpu")(self._ptr(backend)))

    def cpu_set_n_threads(self, backend: Any | None, n_threads: int) -> None:
        self.fn("backend_cpu_set_n_threads")(self._ptr(backend), n_threads)

    # registry ------------------------------------------------------------------------------

    def _registry_guard(self) -> None:
        """A target without a reset hook (rc.8) may use its registry only in a worker that the
        harness forked for one scenario from a process whose registry is untouched: everywhere
        else this raises NeedsPristineProcess before the C registry is reached, so such a
        process stays untouched and every worker forked from it starts as a fresh process does."""
        if self.resettable_registry:
            return
        if not PROCESS.pristine:
            raise NeedsPristineProcess(f"target {self.name} cannot reset its registry")
        PROCESS.used = True

    def reg_reset(self) -> None:
        if not self.resettable_registry:  # a fresh worker's registry needs no reset (see above)
            if not PROCESS.pristine:
                raise NeedsPristineProcess(f"target {self.name} cannot reset its registry")
            if PROCESS.used:
                raise MissingSymbol(self.name, self.p + "backend_reg_reset_for_tests (to reset a used registry)")
            PROCESS.init_calls.clear()
            return
        self.fn("backend_reg_reset_for_tests")()
        PROCESS.init_calls.clear()

    def reg_register(self, name: str, buft: Any, user_data: int) -> None:
        init_fn = getattr(self.lib, "ggspec_py_init_fn", None)
        if init_fn is None:
            raise MissingSymbol(self.name, "ggspec_py_init_fn")
        PROCESS.init_target = self
        self.fn("backend_register")(name.encode(), init_fn, buft, self.ffi.cast("void *", user_data))

    def reg_init_calls(self) -> list[tuple[str, int]]:
        return list(PROCESS.init_calls)

    def reg_get_count(self) -> int:
        return int(self.fn("backend_reg_get_count")())

    def reg_find_by_name(self, name: str) -> int:
        return int(self.fn("backend_reg_find_by_name")(name.encode()))

    def reg_init_backend_from_str(self, backend_str: str) -> Any | None:
        return self._opt(self.fn("backend_reg_init_backend_from_str")(backend_str.encode()))

    def reg_get_name(self, i: int) -> str:
        return str(self.ffi.string(self.fn("backend_reg_get_name")(i)).decode(errors="replace"))

    def reg_init_backend(self, i: int, params: str) -> Any | None:
        return self._opt(self.fn("backend_reg_init_backend")(i, params.encode()))

    def reg_get_default_buffer_type(self, i: int) -> Any:
        return self.fn("backend_reg_get_default_buffer_type")(i)

    def reg_alloc_buffer(self, i: int, size: int) -> Any:
        return self.fn("backend_reg_alloc_buffer")(i, size)


    # graphs --------------------------------------------------------------------------------

    def set_name(self, t: Any, name: str) -> None:
        self.fn("set_name")(t, name.encode())

    def tensor_name(self, t: Any) -> str:
        return str(self.ffi.string(t.name).decode(errors="replace"))

    def op(self, kind: str, srcs: Sequence[Any | None], params: Sequence[float]) -> Any:
        c = op_call(kind, srcs, params)
        if kind == "view":
            n = (len(c.ints) + 1) // 2
            return self.view(c.a, list(c.ints[:n]), list(c.ints[n:-1]), c.ints[-1])
        if kind == "reshape":
            if not 1 <= len(c.ints) <= MAX_DIMS:
                raise ValueError(f"reshape takes 1 to 4 extents, got {list(c.ints)}")
            return self.fn(f"reshape_{len(c.ints)}d")(self.ctx, c.a, *c.ints)
        if kind == "permute":
            return self.fn("permute")(self.ctx, c.a, *c.ints[:4])
        if kind == "soft_max_ext":
            return self.fn("soft_max_ext")(self.ctx, c.a, self._ptr(c.b), c.value)
        if kind == "reshape_as":
            return self.fn("reshape")(self.ctx, c.a, c.b)
        if OP_KINDS[kind][1] == "float":  # scale, norm, norm_inplace
            return self.fn(kind)(self.ctx, c.a, c.value)
        return self.fn(kind)(self.ctx, *((c.a, c.b) if OP_KINDS[kind][0] == 2 else (c.a,)))

    def new_graph(self, size: int) -> Any:
        return self.fn("new_graph_custom")(self.ctx, size, False)

    def build_forward_expand(self, g: Any, t: Any) -> None:
        self.fn("build_forward_expand")(g, t)

    def graph_nodes(self, g: Any) -> list[Any]:
        return [g.nodes[i] for i in range(g.n_nodes)]

    def graph_leafs(self, g: Any) -> list[Any]:
        return [g.leafs[i] for i in range(g.n_leafs)]

    def graph_get_tensor(self, g: Any, name: str) -> Any | None:
        return self._opt(self.fn("graph_get_tensor")(g, name.encode()))

    def backend_graph_compute(self, backend: Any, g: Any) -> bool:
        return bool(self.fn("backend_graph_compute")(backend, g))

    def context_tensors(self, host: bool = False) -> list[Any]:
        ctx = self.host_ctx if host else self.ctx
        out, t = [], self.fn("get_first_tensor")(ctx)
        while t != self.ffi.NULL:
            out.append(t)
            t = self.fn("get_next_tensor")(ctx, t)
        return out

    def context_no_alloc(self, host: bool = False) -> bool:
        return bool(self.fn("get_no_alloc")(self.host_ctx if host else self.ctx))

    def new_graph_custom(self, size: int, grads: bool) -> Any:
        return self.fn("new_graph_custom")(self.ctx, size, grads)

    def new_graph_default(self) -> Any:
        return self.fn("new_graph")(self.ctx)

    def graph_info(self, g: Any) -> GraphInfo:
        return GraphInfo(int(g.size), int(g.n_nodes), int(g.n_leafs), g.grads != self.ffi.NULL,
                         int(g.visited_hash_table.size), int(g.order))

    def graph_perf_runs(self, g: Any) -> int:
        try:
            return int(g.perf_runs)
        except AttributeError:  # a build whose graph struct has no perf counters
            raise MissingSymbol(self.name, f"struct {self.p}cgraph.perf_runs") from None

    def graph_set_order(self, g: Any, order: int) -> None:
        g.order = order

    def graph_grads(self, g: Any) -> list[Any | None] | None:
        if g.grads == self.ffi.NULL:
            return None
        return [self._opt(g.grads[i]) for i in range(g.n_nodes)]

    def graph_view(self, g: Any, i0: int, i1: int) -> Any:
        value = self.fn("graph_view")(g, i0, i1)
        view = self.ffi.new(f"struct {self.p}cgraph *", value)
        self._keep.append(view)
        return view

    def graph_clear(self, g: Any) -> None:
        self.fn("graph_clear")(g)

    def graph_cpy(self, src: Any, dst: Any) -> None:
        self.fn("graph_cpy")(src, dst)

    def graph_dup(self, g: Any) -> Any:
        return self.fn("graph_dup")(self.ctx, g)

    def set_param(self, t: Any) -> None:
        self.fn("set_param")(self.ctx, t)

    def tensor_grad(self, t: Any) -> Any | None:
        return self._opt(t.grad)

    def tensor_op_params(self, t: Any) -> bytes:
        return bytes(self.ffi.buffer(t.op_params, 64))

    # the scheduler -------------------------------------------------------------------------

    def sched_new(self, backends: Sequence[Any], bufts: Sequence[Any] | None, graph_size: int) -> Any:
        arr = self.ffi.new(f"{self.p}backend_t[]", list(backends) or 1)
        bt = self.ffi.NULL if bufts is None else self.ffi.new(f"{self.p}backend_buffer_type_t[]", list(bufts))
        self._keep.extend([arr, bt])
        s = self.fn("backend_sched_new")(arr, bt, len(backends), graph_size)
        self._sched_backends[self._addr(s)] = list(backends)  # for the public plan's indexes
        return s

    def sched_free(self, s: Any | None) -> None:
        self.fn("backend_sched_free")(self._ptr(s))

    def sched_init_measure(self, s: Any, g: Any) -> None:
        self.fn("backend_sched_init_measure")(s, g)

    def sched_graph_compute(self, s: Any, g: Any) -> None:
        self._eval_faults.clear()
        self.fn("backend_sched_graph_compute")(s, g)
        if self._eval_faults:
            raise RuntimeError(self._eval_faults[0])

    def sched_reset(self, s: Any) -> None:
        self.fn("backend_sched_reset")(s)

    def sched_get_n_splits(self, s: Any) -> int:
        return int(self.fn("backend_sched_get_n_splits")(s))

    def sched_set_node_backend(self, s: Any, node: Any, backend: Any) -> None:
        self.fn("backend_sched_set_node_backend")(s, node, backend)

    def sched_get_node_backend(self, s: Any, node: Any) -> Any | None:
        return self._opt(self.fn("backend_sched_get_node_backend")(s, node))

    def sched_get_buffer(self, s: Any, backend: Any) -> Any:
        return self.fn("backend_sched_get_buffer")(s, backend)

    def sched_get_tallocr(self, s: Any, backend: Any) -> Any:
        return self.fn("backend_sched_get_tallocr")(s, backend)

    def sched_set_eval_callback(self, s: Any, decide: Callable[[str, bool], bool] | None) -> None:
        if decide is None:
            self.fn("backend_sched_set_eval_callback")(s, self.ffi.NULL, self.ffi.NULL)
            return

        handle = self.ffi.new_handle(decide)  # the user_data (SCHED-24: the callback is given it back)

        def trampoline(t: Any, ask: bool, user_data: Any) -> bool:
            if user_data != handle:
                self._eval_faults.append(f"the eval callback was given user_data {user_data}, not {handle} (SCHED-24)")
                return False
            return bool(decide(self.tensor_name(t), bool(ask)))

        cb = self.ffi.callback(f"bool(struct {self.p}tensor *, bool, void *)", trampoline)
        self._keep += [cb, handle]
        self.fn("backend_sched_set_eval_callback")(s, cb, handle)

    def _addr(self, h: Any) -> int:
        return int(self.ffi.cast("uintptr_t", h))

    def _debug(self, name: str) -> Any | None:
        """A scheduler debug hook (`<prefix>backend_sched_debug_<name>`), None when the build has none."""
        return getattr(self.lib, f"{self.p}backend_sched_debug_{name}", None)

    def sched_plan(self, s: Any, g: Any) -> SchedPlan:
        """The full plan through the build's debug hooks (native/ has them), else the public plan:
        get_n_splits, get_node_backend for every node and leaf, and the copies as the `#`-named
        sources the scheduler redirected the graph's nodes to (see SchedPlan)."""
        nodes, leafs = self.graph_nodes(g), self.graph_leafs(g)
        n_splits = int(self.fn("backend_sched_get_n_splits")(s))
        found = {name: self._debug(name) for name in _SCHED_DEBUG_HOOKS}
        debug: dict[str, Any] = {name: hook for name, hook in found.items() if hook is not None}
        if len(debug) < len(found):
            return self._public_plan(s, nodes, leafs, n_splits)
        splits = []
        copies: dict[int, str] = {}
        n_backends = len(self._sched_backends.get(self._addr(s), ())) or 16
        for k in range(int(debug["n_splits"](s))):
            inputs = [debug["split_input"](s, k, j) for j in range(int(debug["split_n_inputs"](s, k)))]
            splits.append((int(debug["split_backend"](s, k)), int(debug["split_i_start"](s, k)),
                           int(debug["split_i_end"](s, k)), tuple(self.tensor_name(x) for x in inputs)))
            for x in inputs:
                for b in range(n_backends):
                    c = debug["tensor_copy"](s, x, b)
                    if c != self.ffi.NULL:
                        copies[self._addr(c)] = self.tensor_name(c)

        def table(tensors: list[Any]) -> tuple[tuple[str, int], ...]:
            return tuple((self.tensor_name(x), int(debug["tensor_backend"](s, x))) for x in tensors)

        causes = tuple((self.tensor_name(x), self.ffi.string(debug["tensor_cause"](s, x)).decode())
                       for x in [*nodes, *leafs])
        return SchedPlan(tuple(splits), table(nodes), tuple(sorted(copies.values())), n_splits, causes, table(leafs))

    def _public_plan(self, s: Any, nodes: list[Any], leafs: list[Any], n_splits: int) -> SchedPlan:
        """What any build shows: get_node_backend (as an index into the scheduler's backends)
        and the copies the graph's nodes read."""
        backends = [self._addr(b) for b in self._sched_backends.get(self._addr(s), [])]
        get = self.fn("backend_sched_get_node_backend")

        def table(tensors: list[Any]) -> tuple[tuple[str, int], ...]:
            out = []
            for x in tensors:
                b = get(s, x)
                out.append((self.tensor_name(x), backends.index(self._addr(b)) if self._addr(b) in backends else -1))
            return tuple(out)

        copies: dict[int, str] = {}
        # a copy is a source the scheduler put in place of a tensor of the graph: neither a node
        # nor a leaf (its `#` may be cut off its name: a device named with 63 bytes, CORE-80)
        in_graph = {self._addr(x) for x in [*nodes, *leafs]}
        for n in nodes:
            for src in n.src:
                if src == self.ffi.NULL:
                    break
                name = self.tensor_name(src)
                if "#" in name or self._addr(src) not in in_graph:
                    copies[self._addr(src)] = name
        return SchedPlan(None, table(nodes), tuple(sorted(copies.values())), n_splits, None, table(leafs))

    # allocators ----------------------------------------------------------------------------

    def tensor_data(self, t: Any) -> int | None:
        return int(self.ffi.cast("uintptr_t", t.data)) or None

    def tallocr_new(self, mem: Any | None, size: int, alignment: int) -> Any:
        return self.fn("tallocr_new")(self._ptr(mem), size, alignment)

    def tallocr_new_measure(self, alignment: int) -> Any:
        return self.fn("tallocr_new_measure")(alignment)

    def tallocr_new_from_buft(self, buft: Any, size: int) -> Any:
        return self.fn("tallocr_new_from_buft")(buft, size)

    def tallocr_new_from_backend(self, backend: Any, size: int) -> Any:
        return self.fn("tallocr_new_from_backend")(backend, size)

    def tallocr_new_from_buffer(self, buf: Any) -> Any:
        return self.fn("tallocr_new_from_buffer")(buf)

    def tallocr_new_measure_from_buft(self, buft: Any) -> Any:
        return self.fn("tallocr_new_measure_from_buft")(buft)

    def tallocr_new_measure_from_backend(self, backend: Any) -> Any:
        return self.fn("tallocr_new_measure_from_backend")(backend)

    def tallocr_get_buffer(self, talloc: Any) -> Any:
        return self.fn("tallocr_get_buffer")(talloc)

    def tallocr_free(self, talloc: Any | None) -> None:
        self.fn("tallocr_free")(self._ptr(talloc))

    def tallocr_is_measure(self, talloc: Any) -> bool:
        return bool(self.fn("tallocr_is_measure")(talloc))

    def tallocr_reset(self, talloc: Any) -> None:
        self.fn("tallocr_reset")(talloc)

    def tallocr_alloc(self, talloc: Any, t: Any) -> None:
        self.fn("tallocr_alloc")(talloc, t)

    def tallocr_max_size(self, talloc: Any) -> int:
        return int(self.fn("tallocr_max_size")(talloc))

    def gallocr_new(self) -> Any:
        return self.fn("gallocr_new")()

    def gallocr_free(self, galloc: Any | None) -> None:
        self.fn("gallocr_free")(self._ptr(galloc))

    def _int_list(self, order: Sequence[int]) -> Any:
        arr = self.ffi.new("int[]", list(order) or [0])
        self._keep.append(arr)
        return arr

    def gallocr_set_parse_seq(self, galloc: Any, order: Sequence[int]) -> None:
        self.fn("gallocr_set_parse_seq")(galloc, self._int_list(order), len(order))

    def gallocr_alloc_graph(self, galloc: Any, talloc: Any, g: Any) -> int:
        return int(self.fn("gallocr_alloc_graph")(galloc, talloc, g))

    def gallocr_alloc_graph_n(self, galloc: Any, g: Any, hash_size: int, tallocs: Sequence[tuple[Any, Any]]) -> None:
        hs = self.fn("hash_set_new")(hash_size)
        table = self.ffi.new(f"{self.p}tallocr_t[]", max(int(hs.size), 1))
        for t, talloc in tallocs:
            table[int(self.fn("hash_find_or_insert")(hs, t))] = talloc
        self._keep.append(table)
        self.fn("gallocr_alloc_graph_n")(galloc, g, hs, table)
        free = getattr(self.lib, self.p + "hash_set_free", None)
        if free is not None:  # the graph allocator gave the caller's table back (ALLOC-14)
            free(hs)

    def allocr_new(self, mem: Any | None, size: int, alignment: int) -> Any:
        return self.fn("allocr_new")(self._ptr(mem), size, alignment)

    def allocr_new_measure(self, alignment: int) -> Any:
        return self.fn("allocr_new_measure")(alignment)

    def allocr_new_from_buffer(self, buf: Any) -> Any:
        return self.fn("allocr_new_from_buffer")(buf)

    def allocr_new_from_backend(self, backend: Any, size: int) -> Any:
        return self.fn("allocr_new_from_backend")(backend, size)

    def allocr_new_measure_from_backend(self, backend: Any) -> Any:
        return self.fn("allocr_new_measure_from_backend")(backend)

    def allocr_get_buffer(self, alloc: Any) -> Any:
        return self.fn("allocr_get_buffer")(alloc)

    def allocr_set_parse_seq(self, alloc: Any, order: Sequence[int]) -> None:
        self.fn("allocr_set_parse_seq")(alloc, self._int_list(order), len(order))

    def allocr_free(self, alloc: Any | None) -> None:
        self.fn("allocr_free")(self._ptr(alloc))

    def allocr_is_measure(self, alloc: Any) -> bool:
        return bool(self.fn("allocr_is_measure")(alloc))

    def allocr_reset(self, alloc: Any) -> None:
        self.fn("allocr_reset")(alloc)

    def allocr_alloc(self, alloc: Any, t: Any) -> None:
        self.fn("allocr_alloc")(alloc, t)

    def allocr_max_size(self, alloc: Any) -> int:
        return int(self.fn("allocr_max_size")(alloc))

    def allocr_alloc_graph(self, alloc: Any, g: Any) -> int:
        return int(self.fn("allocr_alloc_graph")(alloc, g))

    def backend_alloc_ctx_tensors(self, backend: Any, host: bool = False) -> Any | None:
        return self._opt(self.fn("backend_alloc_ctx_tensors")(self.host_ctx if host else self.ctx, backend))

    def backend_alloc_ctx_tensors_from_buft(self, buft: Any, host: bool = False) -> Any | None:
        return self._opt(self.fn("backend_alloc_ctx_tensors_from_buft")(self.host_ctx if host else self.ctx, buft))

    # graph plans and the CPU backend's work memory -----------------------------------------

    def backend_graph_plan_create(self, backend: Any, g: Any) -> Any:
        return self.fn("backend_graph_plan_create")(backend, g)

    def backend_graph_plan_free(self, backend: Any, plan: Any) -> None:
        self.fn("backend_graph_plan_free")(backend, plan)

    def backend_graph_plan_compute(self, backend: Any, plan: Any) -> None:
        self.fn("backend_graph_plan_compute")(backend, plan)

    #: set for a target whose CPU backend's private structs are known (rc8.RC8_CPU_LAYOUT):
    #: the CPU-17 / CPU-18 observables are then read from them when the build has no hook
    private_cpu_layout: bool = False

    def _private(self, hook: str) -> None:
        if not self.private_cpu_layout:
            raise MissingSymbol(self.name, f"ggspec_{hook} (a test hook; rc.8's private CPU structs are known "
                                           "only for the rc8 target)")

    def _cpu_context_field(self, backend: Any, field: str) -> int:
        """rc.8's `struct ggml_backend_cpu_context { int n_threads; void * work_data; size_t
        work_size; }` (ggml-backend.c), read at its C offsets."""
        self._private("backend_cpu_" + field)
        base = self.ffi.cast("char *", backend.context)
        data_off = max(self.ffi.sizeof("int"), self.ffi.alignof("void *"))
        if field == "work_data":
            return int(self.ffi.cast("uintptr_t", self.ffi.cast("void **", base + data_off)[0]))
        return int(self.ffi.cast("size_t *", base + data_off + self.ffi.sizeof("void *"))[0])

    def cpu_work_size(self, backend: Any) -> int:
        hook = getattr(self.lib, self.p + "backend_cpu_work_size", None)
        return int(hook(backend)) if hook is not None else self._cpu_context_field(backend, "work_size")

    def cpu_work_data(self, backend: Any) -> int:
        hook = getattr(self.lib, self.p + "backend_cpu_work_data", None)
        if hook is not None:
            return int(self.ffi.cast("uintptr_t", hook(backend)))
        return self._cpu_context_field(backend, "work_data")

    def _cpu_plan_cplan(self, plan: Any) -> Any:
        """rc.8's `struct ggml_backend_plan_cpu { struct ggml_cplan cplan; struct ggml_cgraph cgraph; }`."""
        self._private("backend_cpu_plan_*")
        return self.ffi.cast(f"struct {self.p}cplan *", plan)

    def cpu_plan_work_size(self, plan: Any) -> int:
        hook = getattr(self.lib, self.p + "backend_cpu_plan_work_size", None)
        return int(hook(plan)) if hook is not None else int(self._cpu_plan_cplan(plan).work_size)

    def cpu_plan_n_threads(self, plan: Any) -> int:
        hook = getattr(self.lib, self.p + "backend_cpu_plan_n_threads", None)
        return int(hook(plan)) if hook is not None else int(self._cpu_plan_cplan(plan).n_threads)

    # graph copy and compare ----------------------------------------------------------------

    def backend_graph_copy(self, backend: Any, g: Any) -> GraphCopyResult:
        copy = self.fn("backend_graph_copy")(backend, g)
        return GraphCopyResult(self._opt(copy.buffer), copy.ctx_allocated != self.ffi.NULL,
                               copy.ctx_unallocated != self.ffi.NULL, self._opt(copy.graph), copy)

    def backend_graph_copy_free(self, copy: GraphCopyResult) -> None:
        self.fn("backend_graph_copy_free")(copy.raw)

    def backend_compare_graph_backend(self, backend1: Any, backend2: Any, g: Any,
                                      callback: Callable[[int, Any, Any], bool]) -> bool:
        raised: list[BaseException] = []

        def trampoline(i: int, t1: Any, t2: Any, user_data: Any) -> bool:
            if raised:
                return False
            return bool(callback(int(i), t1, t2))

        def onerror(exc_type: Any, exc: BaseException, tb: Any) -> bool:
            raised.append(exc)
            return False

        cb = self.ffi.callback(f"bool(int, struct {self.p}tensor *, struct {self.p}tensor *, void *)", trampoline,
                               onerror=onerror)
        self._keep.append(cb)
        result = bool(self.fn("backend_compare_graph_backend")(backend1, backend2, g, cb, self.ffi.NULL))
        if raised:
            raise raised[0]
        return result


@dataclass
class ProcessRegistry:
    """What this process knows of the C registry, which is process-global in C (one per process,
    so one of these: `PROCESS`); reset by `enter_pristine_worker` in each worker the harness forks."""

    #: this is a worker forked by the harness for one scenario (see CApiTarget._registry_guard)
    pristine: bool = False
    #: this worker has used the C registry of a target without a reset hook
    used: bool = False
    #: what the Python-implemented registry init function saw: (params, user_data)
    init_calls: list[tuple[str, int]] = field(default_factory=list)
    #: the target whose registrations the init function serves
    init_target: CApiTarget | None = None


PROCESS = ProcessRegistry()


def enter_pristine_worker() -> None:
    """Called by the harness in a worker it forked for one scenario: this worker's registry is
    as fresh as a new process's, because no ancestor got past `_registry_guard`."""
    PROCESS.pristine = True
    PROCESS.used = False


def python_init_fn(params: Any, user_data: Any) -> Any:
    """The body of the `extern "Python"` init function: record the call, return a CPU backend."""
    target = PROCESS.init_target
    assert target is not None
    PROCESS.init_calls.append((target.ffi.string(params).decode(), int(target.ffi.cast("uintptr_t", user_data))))
    return target.fn("backend_cpu_init")()
