"""The `reference` adapter: the Target protocol over the reference model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from ggspec.reference import alloc as A
from ggspec.reference import backend as B
from ggspec.reference import buffer as BF
from ggspec.reference import copy as C
from ggspec.reference import cpu, graph, ops, tdata, vdev
from ggspec.reference import graph_copy as GC
from ggspec.reference import sched as S
from ggspec.reference import tensor as TN
from ggspec.reference.alloc import Tallocr
from ggspec.reference.backend import Backend
from ggspec.reference.buffer import Buffer, BufferInterface, BufferType
from ggspec.reference.clauses import Profile
from ggspec.reference.graph import CGraph
from ggspec.reference.registry import registry_of, registry_reset
from ggspec.reference.tensor import Context, Tensor, nbytes, resolved_buffer
from ggspec.reference.types import GGMLType, Op, traits
from ggspec.reference.world import Region, World

from ..target import OP_KINDS, GraphCopyResult, GraphInfo, SchedPlan, TensorInfo, VDevParams, device_labels, op_call


class ReferenceTarget:
    name = "reference"
    default_profile = Profile.FIXED
    resettable_registry = True

    def __init__(self, profile: Profile = Profile.FIXED) -> None:
        self.world = World(profile)
        self.ctx = Context(self.world, no_alloc=True)
        self.host_ctx = Context(self.world, no_alloc=False)
        self._init_calls: list[tuple[str, int]] = []
        self._devices: list[tuple[str, BufferType]] = []

    # core
    def new_tensor(self, type_: int, ne: Sequence[int], name: str = "") -> Tensor:
        return self.ctx.new_tensor(GGMLType(type_), ne, name)

    def new_host_tensor(self, type_: int, ne: Sequence[int], name: str = "") -> Tensor:
        return self.host_ctx.new_tensor(GGMLType(type_), ne, name)

    def poke_buffer(self, t: Tensor, buf: Buffer | None) -> None:
        t.buffer = buf

    def view(self, a: Tensor, ne: Sequence[int], nb: Sequence[int], offset: int) -> Tensor:
        return self.ctx.view(a, ne, nb, offset)

    def set_op(self, t: Tensor, op: int, srcs: Sequence[Tensor | None]) -> None:
        t.op = Op(op)
        for i, s in enumerate(srcs):
            t.src[i] = s

    def nbytes(self, t: Tensor) -> int:
        return nbytes(t)

    def tensor_info(self, t: Tensor) -> TensorInfo:
        buf = resolved_buffer(t)
        offset = None
        if t.data is not None and buf is not None and buf.iface.get_base is not None:
            base = buf.iface.get_base(buf)
            offset = t.data - base if base is not None else None
        return TensorInfo(
            int(t.type), tuple(t.ne), tuple(t.nb), int(t.op), t.name, t.view_offs,  # type: ignore[arg-type]
            t.view_src is not None, t.buffer is not None, t.data is not None, offset,
        )

    def tensor_address(self, t: Tensor) -> int:
        return t.addr

    def tensor_buffer(self, t: Tensor) -> Buffer | None:
        return t.buffer

    def tensor_view_src(self, t: Tensor) -> Tensor | None:
        return t.view_src

    def tensor_src(self, t: Tensor, i: int) -> Tensor | None:
        return t.src[i]

    def type_name(self, type_: int) -> str:
        return traits(GGMLType(type_)).name

    def vec_dot_type(self, type_: int) -> int:
        return int(traits(GGMLType(type_)).vec_dot_type)

    # host memory
    def host_alloc(self, size: int) -> Region:
        return self.world.host_alloc(size)

    def host_write(self, h: Region, offset: int, payload: bytes) -> None:
        self.world.memory.write(h.base + offset, payload)

    def host_read(self, h: Region, offset: int, size: int) -> bytes:
        return self.world.memory.read(h.base + offset, size)

    # buffer types
    def cpu_buffer_type(self) -> BufferType:
        return cpu.cpu_buffer_type(self.world)

    def buft_name(self, buft: BufferType) -> str:
        return BF.buft_name(buft)

    def buft_alloc_buffer(self, buft: BufferType, size: int) -> Buffer:
        return BF.buft_alloc_buffer(buft, size)

    def buft_get_alignment(self, buft: BufferType) -> int:
        return BF.buft_get_alignment(buft)

    def buft_get_alloc_size(self, buft: BufferType, t: Tensor) -> int:
        return BF.buft_get_alloc_size(buft, t)

    def buft_supports_backend(self, buft: BufferType, backend: Backend) -> bool:
        return BF.buft_supports_backend(buft, backend)

    def buft_is_host(self, buft: BufferType) -> bool:
        return BF.buft_is_host(buft)

    # buffers
    def buffer_init_without_get_base(self, size: int) -> Buffer:
        base = cpu.cpu_buffer_type(self.world)
        probe = BF.buft_alloc_buffer(base, 0)
        iface = BufferInterface(**{**probe.iface.__dict__, "get_base": None})
        BF.buffer_free(probe)
        return BF.buffer_init(self.world, base, iface, None, size)

    def context_init(self, mem_size: int) -> None:
        TN.free(TN.init(self.world, mem_size, True))

    def context_rebuild(self) -> None:
        """A new tensor context in the old one's memory, which is freed first: the same tensors
        made in the same order get the same addresses (SCHED-32)."""
        self.ctx.free()
        self.ctx = Context(self.world, no_alloc=True, memory=self.ctx.memory)

    def buffer_counting_frees(self, size: int) -> Buffer:
        buf = BF.buft_alloc_buffer(cpu.cpu_buffer_type(self.world), size)
        real_free = buf.iface.free_buffer
        self._free_calls: dict[int, int] = getattr(self, "_free_calls", {})
        calls, key = self._free_calls, id(buf)
        calls[key] = 0

        def counted(b: Buffer) -> None:
            calls[key] += 1
            if real_free is not None:
                real_free(b)

        buf.iface = BufferInterface(**{**buf.iface.__dict__, "free_buffer": counted})
        return buf

    def buffer_free_calls(self, buf: Buffer) -> int:
        return self._free_calls[id(buf)]

    def buffer_name(self, buf: Buffer) -> str:
        return BF.buffer_name(buf)

    def buffer_free(self, buf: Buffer | None) -> None:
        BF.buffer_free(buf)

    def buffer_get_base(self, buf: Buffer) -> int:
        return BF.buffer_get_base(buf)

    def buffer_get_size(self, buf: Buffer) -> int:
        return BF.buffer_get_size(buf)

    def buffer_init_tensor(self, buf: Buffer, t: Tensor) -> None:
        BF.buffer_init_tensor(buf, t)

    def buffer_get_alignment(self, buf: Buffer) -> int:
        return BF.buffer_get_alignment(buf)

    def buffer_get_alloc_size(self, buf: Buffer, t: Tensor) -> int:
        return BF.buffer_get_alloc_size(buf, t)

    def buffer_clear(self, buf: Buffer, value: int) -> None:
        BF.buffer_clear(buf, value)

    def buffer_is_host(self, buf: Buffer) -> bool:
        return BF.buffer_is_host(buf)

    def buffer_set_usage(self, buf: Buffer, usage: int) -> None:
        BF.buffer_set_usage(buf, usage)

    def buffer_usage(self, buf: Buffer) -> int:
        return int(buf.usage)

    def buffer_get_type(self, buf: Buffer) -> BufferType:
        return BF.buffer_get_type(buf)

    def buffer_reset(self, buf: Buffer) -> None:
        BF.buffer_reset(buf)

    def buffer_copy_tensor(self, src: Tensor, dst: Tensor) -> bool:
        return C.buffer_copy_tensor(src, dst)

    def buffer_bytes(self, buf: Buffer) -> bytes:
        if isinstance(buf.context, vdev.DeviceBuffer):
            return vdev.vdev_read(buf, 0, buf.size)
        return self.world.memory.read(BF.buffer_get_base(buf), buf.size)

    def cpu_buffer_from_ptr(self, mem: Region | None, size: int) -> Buffer:
        return cpu.cpu_buffer_from_ptr(self.world, mem.base if mem is not None else None, size)

    # tensor data
    def _host_block(self, payload: bytes, size: int) -> int:
        block = self.world.host_alloc(max(size, len(payload)), "tensor_set source")
        block.data[: len(payload)] = payload
        return block.base

    def tensor_set(self, t: Tensor, payload: bytes, offset: int, size: int) -> None:
        tdata.tensor_set(t, self._host_block(payload[:size], size), offset, size)

    def tensor_get(self, t: Tensor, offset: int, size: int) -> bytes:
        out = self.world.host_alloc(size, "tensor_get destination")
        tdata.tensor_get(t, out.base, offset, size)
        return bytes(out.data)

    def tensor_set_async(self, backend: Backend, t: Tensor, mem: Region, mem_offset: int, offset: int, size: int) -> None:
        tdata.tensor_set_async(backend, t, mem.base + mem_offset, offset, size)

    def tensor_get_async(self, backend: Backend, t: Tensor, mem: Region, mem_offset: int, offset: int, size: int) -> None:
        tdata.tensor_get_async(backend, t, mem.base + mem_offset, offset, size)

    def view_init(self, buf: Buffer, t: Tensor) -> None:
        tdata.view_init(buf, t)

    def tensor_alloc(self, buf: Buffer, t: Tensor, offset: int) -> None:
        assert buf.iface.get_base is not None
        base = buf.iface.get_base(buf) or 0
        tdata.tensor_alloc(buf, t, base + offset)

    # copies
    def tensor_copy(self, src: Tensor, dst: Tensor) -> None:
        C.tensor_copy(src, dst)

    def tensor_copy_async(self, backend: Backend, src: Tensor, dst: Tensor) -> None:
        C.tensor_copy_async(backend, src, dst)

    # backends
    def cpu_init(self) -> Backend:
        return cpu.cpu_init(self.world)

    def vdev_init(self, params: VDevParams) -> Backend:
        backend = vdev.vdev_init(self.world, params)
        self._devices.append((params.name, vdev.vdev_buffer_type(backend)))
        return backend

    def vdev_log(self) -> list[str]:
        """As the C adapters read the logs (capi.py): a name cut inside a character (CORE-80)
        shows U+FFFD where its bytes are not whole UTF-8."""
        merged = [(serial, f"{label} {text}") for label, buft in device_labels(self._devices)
                  for serial, text in vdev.vdev_log(buft)]
        return [text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
                for _, text in sorted(merged)]

    def vdev_pending(self, backend: Backend) -> int:
        return vdev.vdev_pending(backend)

    def vdev_counters(self, buf: Buffer) -> tuple[int, int]:
        return vdev.vdev_counters(buf)

    def backend_name(self, backend: Backend | None) -> str:
        return B.backend_name(backend)

    def backend_free(self, backend: Backend | None) -> None:
        B.backend_free(backend)

    def backend_get_default_buffer_type(self, backend: Backend) -> BufferType:
        return B.backend_get_default_buffer_type(backend)

    def backend_alloc_buffer(self, backend: Backend, size: int) -> Buffer:
        return B.backend_alloc_buffer(backend, size)

    def backend_get_alignment(self, backend: Backend) -> int:
        return B.backend_get_alignment(backend)

    def backend_synchronize(self, backend: Backend) -> None:
        B.backend_synchronize(backend)

    def backend_supports_op(self, backend: Backend, op: Tensor) -> bool:
        return B.backend_supports_op(backend, op)

    def backend_is_cpu(self, backend: Backend | None) -> bool:
        return cpu.is_cpu(backend)

    def cpu_set_n_threads(self, backend: Backend | None, n_threads: int) -> None:
        # rc.8 takes NULL here and aborts on CPU-13; the model's annotation says Backend only
        cpu.cpu_set_n_threads(backend, n_threads)

    # registry
    def reg_reset(self) -> None:
        registry_reset(self.world)
        self._init_calls.clear()

    def reg_register(self, name: str, buft: BufferType, user_data: int) -> None:
        def init_fn(params: str, user: object) -> Backend:
            assert isinstance(user, int)
            self._init_calls.append((params, user))
            return cpu.cpu_init(self.world)

        registry_of(self.world).register(name, init_fn, buft, user_data)

    def reg_init_calls(self) -> list[tuple[str, int]]:
        return list(self._init_calls)

    def reg_get_count(self) -> int:
        return registry_of(self.world).get_count()

    def reg_find_by_name(self, name: str) -> int:
        return registry_of(self.world).find_by_name(name)

    def reg_init_backend_from_str(self, backend_str: str) -> Backend | None:
        return registry_of(self.world).init_backend_from_str(backend_str)

    def reg_get_name(self, i: int) -> str:  # as the C adapters read the field back (capi.py)
        return registry_of(self.world).get_name(i).encode("utf-8", errors="surrogateescape").decode(errors="replace")

    def reg_init_backend(self, i: int, params: str) -> Backend | None:
        return registry_of(self.world).init_backend(i, params)

    def reg_get_default_buffer_type(self, i: int) -> BufferType:
        return registry_of(self.world).get_default_buffer_type(i)

    def reg_alloc_buffer(self, i: int, size: int) -> Buffer:
        return registry_of(self.world).alloc_buffer(i, size)

    # graphs ----------------------------------------------------------------------------------

    def set_name(self, t: Tensor, name: str) -> None:
        TN.set_name(t, name)

    def tensor_name(self, t: Tensor) -> str:  # as the C adapters read the array back (capi.py)
        return TN.name_bytes(t.name).decode("utf-8", errors="replace")

    def op(self, kind: str, srcs: Sequence[Tensor | None], params: Sequence[float]) -> Tensor:
        return build_op(self.ctx, kind, srcs, params)

    def new_graph(self, size: int) -> CGraph:
        return graph.new_graph_custom(self.ctx, size, False)

    def build_forward_expand(self, g: CGraph, t: Tensor) -> None:
        graph.build_forward_expand(g, t)

    def graph_nodes(self, g: CGraph) -> list[Tensor]:
        return g.node_list()

    def graph_leafs(self, g: CGraph) -> list[Tensor]:
        return g.leaf_list()

    def graph_get_tensor(self, g: CGraph, name: str) -> Tensor | None:
        return graph.graph_get_tensor(g, name)

    def backend_graph_compute(self, backend: Backend, g: CGraph) -> bool:
        return B.backend_graph_compute(backend, g)

    def context_tensors(self, host: bool = False) -> list[Tensor]:
        return graph.context_tensors(self.host_ctx if host else self.ctx)

    def context_no_alloc(self, host: bool = False) -> bool:
        return graph.get_no_alloc(self.host_ctx if host else self.ctx)

    def new_graph_custom(self, size: int, grads: bool) -> CGraph:
        return graph.new_graph_custom(self.ctx, size, grads)

    def new_graph_default(self) -> CGraph:
        return graph.new_graph(self.ctx)

    def graph_info(self, g: CGraph) -> GraphInfo:
        return GraphInfo(g.size, g.n_nodes, g.n_leafs, g.grads is not None, g.visited.size, int(g.order))

    def graph_perf_runs(self, g: CGraph) -> int:
        return g.perf_runs

    def graph_set_order(self, g: CGraph, order: int) -> None:
        g.order = graph.EvalOrder(order)

    def graph_grads(self, g: CGraph) -> list[Tensor | None] | None:
        return None if g.grads is None else list(g.grads[: g.n_nodes])

    def graph_view(self, g: CGraph, i0: int, i1: int) -> CGraph:
        return graph.graph_view(g, i0, i1)

    def graph_clear(self, g: CGraph) -> None:
        graph.graph_clear(g)

    def graph_cpy(self, src: CGraph, dst: CGraph) -> None:
        graph.graph_cpy(src, dst)

    def graph_dup(self, g: CGraph) -> CGraph:
        return graph.graph_dup(self.ctx, g)

    def set_param(self, t: Tensor) -> None:
        graph.set_param(self.ctx, t)

    def tensor_grad(self, t: Tensor) -> Tensor | None:
        return t.grad

    def tensor_op_params(self, t: Tensor) -> bytes:
        return ops.op_params64(t)

    # the scheduler ---------------------------------------------------------------------------

    def sched_new(self, backends: Sequence[Backend], bufts: Sequence[BufferType] | None, graph_size: int) -> S.Sched:
        return S.sched_new(self.world, list(backends), list(bufts) if bufts is not None else None, graph_size)

    def sched_free(self, s: S.Sched | None) -> None:
        S.sched_free(s)

    def sched_init_measure(self, s: S.Sched, g: CGraph) -> None:
        S.init_measure(s, g)

    def sched_graph_compute(self, s: S.Sched, g: CGraph) -> None:
        S.graph_compute(s, g)

    def sched_reset(self, s: S.Sched) -> None:
        S.sched_reset(s)

    def sched_get_n_splits(self, s: S.Sched) -> int:
        return S.get_n_splits(s)

    def sched_set_node_backend(self, s: S.Sched, node: Tensor, backend: Backend) -> None:
        S.set_node_backend(s, node, backend)

    def sched_get_node_backend(self, s: S.Sched, node: Tensor) -> Backend | None:
        return S.get_node_backend(s, node)

    def sched_get_buffer(self, s: S.Sched, backend: Backend) -> Buffer:
        return S.get_buffer(s, backend)

    def sched_get_tallocr(self, s: S.Sched, backend: Backend) -> object:
        return S.get_tallocr(s, backend)

    def sched_set_eval_callback(self, s: S.Sched, decide: Callable[[str, bool], bool] | None) -> None:
        S.set_eval_callback(s, None if decide is None else (lambda t, ask: decide(self.tensor_name(t), ask)))

    def sched_plan(self, s: S.Sched, g: CGraph) -> SchedPlan:
        """The full plan: the model is its own debug hook (names read as the C adapters read them)."""

        def index(talloc: Tallocr | None) -> int:
            return -1 if talloc is None else S.allocr_prio(s, talloc)

        splits = tuple((index(sp.tallocr), sp.i_start, sp.i_end, tuple(self.tensor_name(i) for i in sp.inputs))
                       for sp in s.splits)
        nodes = tuple((self.tensor_name(n), index(S.get_assignment(s, n))) for n in g.node_list())
        leafs = tuple((self.tensor_name(x), index(S.get_assignment(s, x))) for x in g.leaf_list())
        copies = tuple(sorted(self.tensor_name(c) for per in s.node_copies.values() for c in per.values()))
        causes = tuple((self.tensor_name(x), S.cause_of(s, x)) for x in [*g.node_list(), *g.leaf_list()])
        return SchedPlan(splits, nodes, copies, S.get_n_splits(s), causes, leafs)

    # allocators ------------------------------------------------------------------------------

    def tensor_data(self, t: Tensor) -> int | None:
        return t.data

    def tallocr_new(self, mem: Region | None, size: int, alignment: int) -> A.Tallocr:
        return A.tallocr_new(self.world, mem.base if mem is not None else None, size, alignment)

    def tallocr_new_measure(self, alignment: int) -> A.Tallocr:
        return A.tallocr_new_measure(self.world, alignment)

    def tallocr_new_from_buft(self, buft: BufferType, size: int) -> A.Tallocr:
        return A.tallocr_new_from_buft(buft, size)

    def tallocr_new_from_backend(self, backend: Backend, size: int) -> A.Tallocr:
        return A.tallocr_new_from_backend(backend, size)

    def tallocr_new_from_buffer(self, buf: Buffer) -> A.Tallocr:
        return A.tallocr_new_from_buffer(buf)

    def tallocr_new_measure_from_buft(self, buft: BufferType) -> A.Tallocr:
        return A.tallocr_new_measure_from_buft(buft)

    def tallocr_new_measure_from_backend(self, backend: Backend) -> A.Tallocr:
        return A.tallocr_new_measure_from_backend(backend)

    def tallocr_get_buffer(self, talloc: A.Tallocr) -> Buffer:
        return A.tallocr_get_buffer(talloc)

    def tallocr_free(self, talloc: A.Tallocr | None) -> None:
        A.tallocr_free(talloc)

    def tallocr_is_measure(self, talloc: A.Tallocr) -> bool:
        return A.tallocr_is_measure(talloc)

    def tallocr_reset(self, talloc: A.Tallocr) -> None:
        A.tallocr_reset(talloc)

    def tallocr_alloc(self, talloc: A.Tallocr, t: Tensor) -> None:
        A.tallocr_alloc(talloc, t)

    def tallocr_max_size(self, talloc: A.Tallocr) -> int:
        return A.tallocr_max_size(talloc)

    def gallocr_new(self) -> A.Gallocr:
        return A.gallocr_new()

    def gallocr_free(self, galloc: A.Gallocr | None) -> None:
        A.gallocr_free(galloc)

    def gallocr_set_parse_seq(self, galloc: A.Gallocr, order: Sequence[int]) -> None:
        A.gallocr_set_parse_seq(galloc, order)

    def gallocr_alloc_graph(self, galloc: A.Gallocr, talloc: A.Tallocr, g: CGraph) -> int:
        return A.gallocr_alloc_graph(galloc, talloc, g)

    def gallocr_alloc_graph_n(self, galloc: A.Gallocr, g: CGraph, hash_size: int,
                              tallocs: Sequence[tuple[Tensor, A.Tallocr]]) -> None:
        hs = graph.HashSet(graph.hash_size(hash_size), "ALLOC-14")
        table: list[A.Tallocr | None] = [None] * hs.size
        for t, talloc in tallocs:
            table[hs.find_or_insert(t)] = talloc
        A.gallocr_alloc_graph_n(galloc, g, hs, table)

    def allocr_new(self, mem: Region | None, size: int, alignment: int) -> A.Allocr:
        return A.allocr_new(self.world, mem.base if mem is not None else None, size, alignment)

    def allocr_new_measure(self, alignment: int) -> A.Allocr:
        return A.allocr_new_measure(self.world, alignment)

    def allocr_new_from_buffer(self, buf: Buffer) -> A.Allocr:
        return A.allocr_new_from_buffer(buf)

    def allocr_new_from_backend(self, backend: Backend, size: int) -> A.Allocr:
        return A.allocr_new_from_backend(backend, size)

    def allocr_new_measure_from_backend(self, backend: Backend) -> A.Allocr:
        return A.allocr_new_measure_from_backend(backend)

    def allocr_get_buffer(self, alloc: A.Allocr) -> Buffer:
        return A.allocr_get_buffer(alloc)

    def allocr_set_parse_seq(self, alloc: A.Allocr, order: Sequence[int]) -> None:
        A.allocr_set_parse_seq(alloc, order)

    def allocr_free(self, alloc: A.Allocr | None) -> None:
        A.allocr_free(alloc)

    def allocr_is_measure(self, alloc: A.Allocr) -> bool:
        return A.allocr_is_measure(alloc)

    def allocr_reset(self, alloc: A.Allocr) -> None:
        A.allocr_reset(alloc)

    def allocr_alloc(self, alloc: A.Allocr, t: Tensor) -> None:
        A.allocr_alloc(alloc, t)

    def allocr_max_size(self, alloc: A.Allocr) -> int:
        return A.allocr_max_size(alloc)

    def allocr_alloc_graph(self, alloc: A.Allocr, g: CGraph) -> int:
        return A.allocr_alloc_graph(alloc, g)

    def backend_alloc_ctx_tensors(self, backend: Backend, host: bool = False) -> Buffer | None:
        return A.alloc_ctx_tensors(self.host_ctx if host else self.ctx, backend)

    def backend_alloc_ctx_tensors_from_buft(self, buft: BufferType, host: bool = False) -> Buffer | None:
        return A.alloc_ctx_tensors_from_buft(self.host_ctx if host else self.ctx, buft)

    # graph plans and the CPU backend's work memory -------------------------------------------

    def backend_graph_plan_create(self, backend: Backend, g: CGraph) -> object:
        return B.backend_graph_plan_create(backend, g)

    def backend_graph_plan_free(self, backend: Backend, plan: object) -> None:
        B.backend_graph_plan_free(backend, plan)

    def backend_graph_plan_compute(self, backend: Backend, plan: object) -> None:
        B.backend_graph_plan_compute(backend, plan)

    def cpu_work_size(self, backend: Backend) -> int:
        return cpu.cpu_work_size(backend)

    def cpu_work_data(self, backend: Backend) -> int:
        return cpu.cpu_work_data(backend) or 0

    def cpu_plan_work_size(self, plan: object) -> int:
        return cpu.cpu_plan_work_size(plan)

    def cpu_plan_n_threads(self, plan: object) -> int:
        return cpu.cpu_plan_n_threads(plan)

    # graph copy and compare ------------------------------------------------------------------

    def backend_graph_copy(self, backend: Backend, g: CGraph) -> GraphCopyResult:
        copy = GC.graph_copy(backend, g)
        return GraphCopyResult(copy.buffer, copy.ctx_allocated is not None, copy.ctx_unallocated is not None,
                               copy.graph, copy)

    def backend_graph_copy_free(self, copy: GraphCopyResult) -> None:
        GC.graph_copy_free(copy.raw)

    def backend_compare_graph_backend(self, backend1: Backend, backend2: Backend, g: CGraph,
                                      callback: Callable[[int, Tensor, Tensor], bool]) -> bool:
        return GC.compare_graph_backend(backend1, backend2, g, callback)


def build_op(ctx: Context, kind: str, srcs: Sequence[Tensor | None], params: Sequence[float]) -> Tensor:
    """`Target.op` on the reference: one constructor of reference/ops.py per kind (OP_KINDS)."""
    c = op_call(kind, srcs, params)
    if kind == "view":
        n = (len(c.ints) + 1) // 2
        return ops.view(ctx, c.a, list(c.ints[:n]), list(c.ints[n:-1]), c.ints[-1])
    if kind == "reshape":
        return ops.reshape_nd(ctx, c.a, list(c.ints))
    if kind == "permute":
        return ops.permute(ctx, c.a, *c.ints[:4])
    if kind == "soft_max_ext":
        return ops.soft_max_ext(ctx, c.a, c.b, c.value)
    if kind == "reshape_as":
        return ops.reshape(ctx, c.a, c.b)
    fn: Any = getattr(ops, kind)
    if OP_KINDS[kind][1] == "float":  # scale, norm, norm_inplace
        return cast(Tensor, fn(ctx, c.a, c.value))
    return cast(Tensor, fn(ctx, c.a, c.b) if OP_KINDS[kind][0] == 2 else fn(ctx, c.a))
