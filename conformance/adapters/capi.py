"""The C API adapter: the Target protocol over any cffi-compiled ggml-backend build.

`CApiTarget(ffi, lib, prefix)` calls `lib.<prefix>backend_tensor_set` and friends, so the same
code drives our native build (prefix `ggspec_`) and external builds (`ggml_`, `wsp_ggml_`).
A function the library lacks raises `MissingSymbol` from the method that needs it.

Handles are cffi pointers (equal when they point at the same object). Host memory handles are
cffi arrays that this adapter keeps alive until `close()`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from reference.clauses import Profile
from reference.types import MAX_DIMS, Op

from ..target import MissingSymbol, NeedsPristineProcess, SchedPlan, TensorInfo, VDevParams

CONTEXT_BYTES = 32 << 20


class CApiTarget:
    default_profile = Profile.FIXED

    def __init__(self, ffi: Any, lib: Any, prefix: str, name: str) -> None:
        self.ffi, self.lib, self.p, self.name = ffi, lib, prefix, name
        self._keep: list[Any] = []
        self.ctx = self._context(no_alloc=True)
        self.host_ctx = self._context(no_alloc=False)
        self.resettable_registry = hasattr(lib, f"{prefix}backend_reg_reset_for_tests")

    # plumbing ------------------------------------------------------------------------------

    def fn(self, name: str) -> Any:
        if name.startswith(("backend_reg", "backend_register")):
            self._registry_guard()
        try:
            return getattr(self.lib, self.p + name)
        except AttributeError:
            raise MissingSymbol(self.name, self.p + name) from None

    def _context(self, no_alloc: bool) -> Any:
        params = self.ffi.new(f"struct {self.p}init_params *")
        params.mem_size = CONTEXT_BYTES
        params.mem_buffer = self.ffi.NULL
        params.no_alloc = no_alloc
        return self.fn("init")(params[0])

    def close(self) -> None:
        """Free the contexts (tensor objects); buffers and backends are left to the process."""
        for ctx in (self.ctx, self.host_ctx):
            if ctx != self.ffi.NULL:
                self.fn("free")(ctx)
        self.ctx = self.host_ctx = self.ffi.NULL
        self._keep.clear()

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
            return getattr(self.lib, "ggspec_vdev_" + name)
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
        return self.fn_vdev("init")(p)

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
        if not _PRISTINE[0]:
            raise NeedsPristineProcess(f"target {self.name} cannot reset its registry")
        _REGISTRY_USED[0] = True

    def reg_reset(self) -> None:
        if not self.resettable_registry:  # a fresh worker's registry needs no reset (see above)
            if not _PRISTINE[0]:
                raise NeedsPristineProcess(f"target {self.name} cannot reset its registry")
            if _REGISTRY_USED[0]:
                raise MissingSymbol(self.name, self.p + "backend_reg_reset_for_tests (to reset a used registry)")
            _INIT_CALLS.clear()
            return
        self.fn("backend_reg_reset_for_tests")()
        _INIT_CALLS.clear()

    def reg_register(self, name: str, buft: Any, user_data: int) -> None:
        init_fn = getattr(self.lib, "ggspec_py_init_fn", None)
        if init_fn is None:
            raise MissingSymbol(self.name, "ggspec_py_init_fn")
        _INIT_TARGET[0] = self
        self.fn("backend_register")(name.encode(), init_fn, buft, self.ffi.cast("void *", user_data))

    def reg_init_calls(self) -> list[tuple[str, int]]:
        return list(_INIT_CALLS)

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
        a = srcs[0] if srcs else None
        b = srcs[1] if len(srcs) > 1 else None
        if a is None:
            raise ValueError(f"op {kind!r} needs a first source")
        ints = [int(p) for p in params]
        if kind == "view":
            n = (len(ints) + 1) // 2
            return self.view(a, ints[:n], ints[n:-1], ints[-1])
        if kind == "reshape":
            if not 1 <= len(ints) <= MAX_DIMS:
                raise ValueError(f"reshape takes 1 to 4 extents, got {ints}")
            return self.fn(f"reshape_{len(ints)}d")(self.ctx, a, *ints)
        if kind == "permute":
            return self.fn("permute")(self.ctx, a, *ints[:4])
        if kind in ("scale", "norm"):
            return self.fn(kind)(self.ctx, a, float(params[0]))
        if kind == "soft_max_ext":
            return self.fn("soft_max_ext")(self.ctx, a, self._ptr(b), float(params[0]))
        if kind in ("dup", "cont", "transpose", "gelu", "silu"):
            return self.fn(kind)(self.ctx, a)
        if kind in ("add", "mul", "mul_mat", "cpy", "get_rows"):
            if b is None:
                raise ValueError(f"op {kind!r} needs two sources")
            return self.fn(kind)(self.ctx, a, b)
        raise ValueError(f"unknown op kind {kind!r}")

    def new_graph(self, size: int) -> Any:
        return self.fn("new_graph_custom")(self.ctx, size, False)

    def build_forward_expand(self, g: Any, t: Any) -> None:
        self.fn("build_forward_expand")(g, t)

    def graph_nodes(self, g: Any) -> list[Any]:
        return [g.nodes[i] for i in range(g.n_nodes)]

    def graph_leafs(self, g: Any) -> list[Any]:
        return [g.leafs[i] for i in range(g.n_leafs)]

    def backend_graph_compute(self, backend: Any, g: Any) -> bool:
        return bool(self.fn("backend_graph_compute")(backend, g))

    # the scheduler -------------------------------------------------------------------------

    def sched_new(self, backends: Sequence[Any], bufts: Sequence[Any] | None, graph_size: int) -> Any:
        arr = self.ffi.new(f"{self.p}backend_t[]", list(backends) or 1)
        bt = self.ffi.NULL if bufts is None else self.ffi.new(f"{self.p}backend_buffer_type_t[]", list(bufts))
        self._keep.extend([arr, bt])
        return self.fn("backend_sched_new")(arr, bt, len(backends), graph_size)

    def sched_free(self, s: Any | None) -> None:
        self.fn("backend_sched_free")(self._ptr(s))

    def sched_init_measure(self, s: Any, g: Any) -> None:
        self.fn("backend_sched_init_measure")(s, g)

    def sched_graph_compute(self, s: Any, g: Any) -> None:
        self.fn("backend_sched_graph_compute")(s, g)

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

        def trampoline(t: Any, ask: bool, user_data: Any) -> bool:
            return bool(decide(self.tensor_name(t), bool(ask)))

        cb = self.ffi.callback(f"bool(struct {self.p}tensor *, bool, void *)", trampoline)
        self._keep.append(cb)
        self.fn("backend_sched_set_eval_callback")(s, cb, self.ffi.NULL)

    def sched_plan(self, s: Any, g: Any) -> SchedPlan:
        """The plan through the build's debug hooks (only our native build has them)."""
        raise MissingSymbol(self.name, f"{self.p}backend_sched_debug_* (scheduler plan hooks)")


#: set in a worker forked by the harness for one scenario (see CApiTarget._registry_guard)
_PRISTINE: list[bool] = [False]
#: whether this worker has used the C registry of a target without a reset hook
_REGISTRY_USED: list[bool] = [False]


def enter_pristine_worker() -> None:
    """Called by the harness in a worker it forked for one scenario: this worker's registry is
    as fresh as a new process's, because no ancestor got past `_registry_guard`."""
    _PRISTINE[0] = True
    _REGISTRY_USED[0] = False


#: what the Python-implemented registry init function saw: (params, user_data)
_INIT_CALLS: list[tuple[str, int]] = []
#: the target whose registrations the init function serves (the registry is process-global)
_INIT_TARGET: list[CApiTarget | None] = [None]


def python_init_fn(params: Any, user_data: Any) -> Any:
    """The body of the `extern "Python"` init function: record the call, return a CPU backend."""
    target = _INIT_TARGET[0]
    assert target is not None
    _INIT_CALLS.append((target.ffi.string(params).decode(), int(target.ffi.cast("uintptr_t", user_data))))
    return target.fn("backend_cpu_init")()
