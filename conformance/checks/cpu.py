"""CPU: the CPU backend, its buffer type and its buffers."""

from __future__ import annotations

from ggspec.reference.types import GGMLType, Op, blck_size
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example
from ..inputs.strategies import (
    GraphSpec,
    Placement,
    TensorSpec,
    all_types,
    byte_values,
    op_sets,
    small_graphs,
    tensor_specs,
    vdev_params,
    vdev_params_with,
)
from ..target import Target, VDevParams
from ._setup import fill, placed, small_cpu_graph
from .graphcompute import _ready, _results

SIZE_MAX = 2**64 - 1
CPU = Placement("cpu")


@check("CPU-1", size=st.integers(0, 1024))
def everything_is_named_cpu(t: Target, rec: Recorder, size: int) -> None:
    """The type, an allocated buffer, a buffer from a pointer and the backend: all "CPU"."""
    buft = t.cpu_buffer_type()
    rec("type", t.buft_name(buft))
    rec("buffer", t.buffer_name(t.buft_alloc_buffer(buft, size)))
    rec("buffer from a pointer", t.buffer_name(t.cpu_buffer_from_ptr(t.host_alloc(size), size)))
    rec("backend", t.backend_name(t.cpu_init()))


@check("CPU-2", size=st.integers(0, 1024))
def alignment_is_64(t: Target, rec: Recorder, size: int) -> None:
    buft = t.cpu_buffer_type()
    rec("type", t.buft_get_alignment(buft))
    rec("backend", t.backend_get_alignment(t.cpu_init()))
    rec("buffer", t.buffer_get_alignment(t.buft_alloc_buffer(buft, size)))
    rec("buffer from a pointer", t.buffer_get_alignment(t.cpu_buffer_from_ptr(t.host_alloc(size), size)))


@check("CPU-3", size=st.integers(0, 1024))
def host_memory(t: Target, rec: Recorder, size: int) -> None:
    buft = t.cpu_buffer_type()
    rec("type", t.buft_is_host(buft))
    rec("buffer", t.buffer_is_host(t.buft_alloc_buffer(buft, size)))
    rec("buffer from a pointer", t.buffer_is_host(t.cpu_buffer_from_ptr(t.host_alloc(size), size)))


@check("CPU-4", size=st.integers(0, 1 << 20), via_backend=st.booleans())
def alloc_pads_by_64(t: Target, rec: Recorder, size: int, via_backend: bool) -> None:
    """get_size is size + 64. (Near SIZE_MAX the sum wraps in rc.8: BUFT-7, checks/buft.py.)"""
    buf = t.backend_alloc_buffer(t.cpu_init(), size) if via_backend else t.buft_alloc_buffer(t.cpu_buffer_type(), size)
    rec("size", t.buffer_get_size(buf))
    rec("type is the CPU type", t.buffer_get_type(buf) == t.cpu_buffer_type())


@check("CPU-5", size=st.integers(2**48, SIZE_MAX - 64), via_backend=st.booleans())
def allocation_failure_aborts(t: Target, rec: Recorder, size: int, via_backend: bool) -> None:
    """size + 64 does not wrap but is more than any host can give (beyond the 47-bit user
    address space of x86-64 and aarch64; the reference's host limit is 2**40)."""
    if via_backend:
        t.backend_alloc_buffer(t.cpu_init(), size)
    else:
        t.buft_alloc_buffer(t.cpu_buffer_type(), size)


@check("CPU-6", size=st.integers(0, 1024), spare=st.integers(1, 64), values=st.lists(byte_values, min_size=1, max_size=3),
       seed=st.integers(0, 2**32))
def clear_is_a_memset(t: Target, rec: Recorder, size: int, spare: int, values: list[int], seed: int) -> None:
    """clear sets all get_size() bytes of an allocated buffer (the 64 padding bytes included),
    and exactly the `size` bytes of the caller's memory under a buffer from a pointer."""
    buf = t.buft_alloc_buffer(t.cpu_buffer_type(), size)
    mem = t.host_alloc(size + spare)
    t.host_write(mem, 0, fill(size + spare, seed))
    wrapped = t.cpu_buffer_from_ptr(mem, size)
    for value in values:
        t.buffer_clear(buf, value)
        t.buffer_clear(wrapped, value)
        rec(f"buffer after clear({value})", t.buffer_bytes(buf))
        rec(f"memory after clear({value})", t.host_read(mem, 0, size + spare))


@check("CPU-7", size=st.integers(1, 1024), seed=st.integers(0, 2**32), at=st.integers(0, 1 << 16))
def buffer_from_ptr_does_not_own(t: Target, rec: Recorder, size: int, seed: int, at: int) -> None:
    """A buffer over the caller's memory: CPU type, the size given, tensors placed at base + k
    live at the caller's memory + k, and freeing the buffer leaves the memory (and its bytes)
    to the caller."""
    mem = t.host_alloc(size)
    t.host_write(mem, 0, fill(size, seed))
    buf = t.cpu_buffer_from_ptr(mem, size)
    rec("type is the CPU type", t.buffer_get_type(buf) == t.cpu_buffer_type())
    rec("size", t.buffer_get_size(buf))
    k = at % size
    n = size - k
    tensor = t.new_tensor(int(GGMLType.I8), (n,), "t")
    t.tensor_alloc(buf, tensor, k)
    rec("tensor", t.tensor_info(tensor))
    t.tensor_set(tensor, fill(n, seed + 1), 0, n)
    rec("memory", t.host_read(mem, 0, size))
    t.buffer_free(buf)
    rec("memory after free", t.host_read(mem, 0, size))
    t.host_write(mem, 0, bytes(size))  # still the caller's to write


@check("CPU-8", size=st.integers(1, 512), seed=st.integers(0, 2**32), rng=st.tuples(st.integers(0, 1 << 16),
       st.integers(0, 1 << 16)), at=st.integers(0, 1 << 16))
def set_and_get_are_plain_copies(t: Target, rec: Recorder, size: int, seed: int, rng: tuple[int, int], at: int) -> None:
    """set writes the caller's bytes at data + offset of the host memory; get reads what the
    host memory holds there (written behind the API's back)."""
    mem = t.host_alloc(size)
    buf = t.cpu_buffer_from_ptr(mem, size)
    k = at % size
    n = size - k
    tensor = t.new_tensor(int(GGMLType.I8), (n,), "t")
    t.tensor_alloc(buf, tensor, k)
    offset = rng[0] % (n + 1)
    length = rng[1] % (n - offset + 1)
    t.tensor_set(tensor, fill(length, seed), offset, length)
    rec("memory after set", t.host_read(mem, 0, size))
    t.host_write(mem, 0, fill(size, seed + 1))
    rec("get", t.tensor_get(tensor, offset, length))


# rc.8's ggml-backend.c:471 (the CPU buffer's cpy_tensor answers false after a host copy) survived
# a mutation run: pinned, a copy from a CPU source that must answer true
@example(case="cpu", spec=TensorSpec(int(GGMLType.F32), (4,)), seed=7, device=VDevParams(buffer_cpy_tensor=False))
@check("CPU-9", case=st.sampled_from(["cpu", "from_ptr", "device"]), spec=tensor_specs(), seed=st.integers(0, 2**32),
       device=vdev_params_with(buffer_cpy_tensor=False))
def cpy_tensor_takes_host_sources(t: Target, rec: Recorder, case: str, spec: TensorSpec, seed: int,
                                  device: VDevParams) -> None:
    """buffer_copy_tensor into a CPU tensor: from a host source it copies nbytes and answers
    true; from a device tensor it answers false and copies nothing. (The device has no
    cpy_tensor entry: rc.8 calls the source's NULL entry there, the COPY-6 erratum.)"""
    _, dst_buf, dst = placed(t, CPU, spec, name="dst")
    t.buffer_clear(dst_buf, 0xC3)
    n = spec.nbytes()
    if case == "device":
        _, src_buf, src = placed(t, Placement("vdev", device), spec, name="src")
        t.buffer_clear(src_buf, 0)
    elif case == "from_ptr":
        mem = t.host_alloc(n)
        src_buf = t.cpu_buffer_from_ptr(mem, n)
        src = t.new_tensor(spec.type, spec.ne, "src")
        t.tensor_alloc(src_buf, src, 0)
    else:
        _, src_buf, src = placed(t, CPU, spec, name="src")
        t.buffer_clear(src_buf, 0)
    t.tensor_set(src, fill(n, seed), 0, n)
    rec("copied", t.buffer_copy_tensor(src, dst))
    rec("destination buffer", t.buffer_bytes(dst_buf))


@check("CPU-10", devices=st.lists(vdev_params, max_size=2), cpus=st.integers(1, 2), via_registry=st.booleans())
def supports_cpu_backends_only(t: Target, rec: Recorder, devices: list[VDevParams], cpus: int,
                               via_registry: bool) -> None:
    buft = t.cpu_buffer_type()
    backends = [t.cpu_init() for _ in range(cpus)] + [t.vdev_init(p) for p in devices]
    if via_registry:
        t.reg_reset()
        backends.append(t.reg_init_backend_from_str("CPU"))
    rec("supports", [t.buft_supports_backend(buft, b) for b in backends])


_mul_mat_types = st.sampled_from([int(x) for x in (GGMLType.F32, GGMLType.F16, GGMLType.Q4_0, GGMLType.Q8_0,
                                                   GGMLType.Q8_K, GGMLType.IQ2_XXS, GGMLType.IQ2_XS,
                                                   GGMLType.I8, GGMLType.I16, GGMLType.I32)])


@check("CPU-11", cpy_to=all_types, src0=_mul_mat_types, src1=_mul_mat_types, others=op_sets)
def supports_op(t: Target, rec: Recorder, cpy_to: int, src0: int, src1: int, others: frozenset[Op]) -> None:
    """CPY into IQ2_XXS / IQ2_XS is refused; MUL_MAT needs src1 F32 or src0's vec_dot type;
    every other op (whatever its type) is accepted."""
    backend = t.cpu_init()

    def tensor(type_: int, name: str) -> object:
        return t.new_tensor(type_, (blck_size(GGMLType(type_)),), name)

    a = tensor(int(GGMLType.F32), "a")
    cpy = tensor(cpy_to, "cpy")
    t.set_op(cpy, int(Op.CPY), [a, cpy])
    rec(f"CPY to {GGMLType(cpy_to).name}", t.backend_supports_op(backend, cpy))
    x, y = tensor(src0, "src0"), tensor(src1, "src1")
    mm = t.new_tensor(int(GGMLType.F32), (1,), "mul_mat")
    t.set_op(mm, int(Op.MUL_MAT), [x, y])
    rec(f"MUL_MAT {GGMLType(src0).name} x {GGMLType(src1).name}", t.backend_supports_op(backend, mm))
    for op in sorted(others - {Op.CPY, Op.MUL_MAT}):
        node = tensor(cpy_to, "node")
        t.set_op(node, int(op), [a, a])
        rec(f"{op.name}", t.backend_supports_op(backend, node))


@check("CPU-12", devices=st.lists(vdev_params, max_size=2), via_registry=st.booleans())
def is_cpu(t: Target, rec: Recorder, devices: list[VDevParams], via_registry: bool) -> None:
    """True for backends from cpu_init (and from the registry's "CPU" entry), false for
    devices and for NULL."""
    rec("NULL", t.backend_is_cpu(None))
    rec("cpu_init", t.backend_is_cpu(t.cpu_init()))
    rec("devices", [t.backend_is_cpu(t.vdev_init(p)) for p in devices])
    if via_registry:
        t.reg_reset()
        rec("registry CPU", t.backend_is_cpu(t.reg_init_backend(t.reg_find_by_name("CPU"), "")))


@check("CPU-12", "CPU-13", n_threads=st.integers(1, 64))
def set_n_threads_on_a_cpu_backend(t: Target, rec: Recorder, n_threads: int) -> None:
    """set_n_threads on a CPU backend passes CPU-13's assert (is_cpu is true for it): the
    behaviour side of that assert clause."""
    backend = t.cpu_init()
    t.cpu_set_n_threads(backend, n_threads)
    rec("still a CPU backend", t.backend_is_cpu(backend))


@check("CPU-13", device=st.one_of(st.none(), vdev_params), n_threads=st.integers(-4, 64))
def set_n_threads_needs_a_cpu_backend(t: Target, rec: Recorder, device: VDevParams | None, n_threads: int) -> None:
    """On NULL or on a device backend, set_n_threads aborts."""
    t.cpu_set_n_threads(None if device is None else t.vdev_init(device), n_threads)


@check("CPU-14", spec=tensor_specs(), seed=st.integers(0, 2**32))
def no_async_entries(t: Target, rec: Recorder, spec: TensorSpec, seed: int) -> None:
    """On the CPU backend set_async and get_async are done when they return (no queue), a
    copy_async from a CPU tensor is a set, and synchronize changes nothing."""
    backend, buf, tensor = placed(t, CPU, spec)
    _, buf2, other = placed(t, CPU, spec, name="other")
    t.buffer_clear(buf, 0)
    t.buffer_clear(buf2, 0x77)
    n = t.nbytes(tensor)
    src, dst = t.host_alloc(n), t.host_alloc(n)
    t.host_write(src, 0, fill(n, seed))
    t.tensor_set_async(backend, tensor, src, 0, 0, n)
    rec("buffer after set_async", t.buffer_bytes(buf))
    t.tensor_get_async(backend, tensor, dst, 0, 0, n)
    rec("host block after get_async", t.host_read(dst, 0, n))
    t.tensor_copy_async(backend, tensor, other)
    rec("other buffer after copy_async", t.buffer_bytes(buf2))
    t.backend_synchronize(backend)
    rec("buffer after synchronize", t.buffer_bytes(buf))


# --- CPU-15, CPU-17, CPU-18 through the public API --------------------------------------------------
#
# The thread count of a plan and the sizes of the work buffers are observable only through test
# hooks (native/, the reference) or rc.8's private structs (the rc8 target): on any other build
# the checks of graphcompute.py that read them report `unsupported` (MissingSymbol). What the
# public API shows of these clauses is checked here, on every target: every thread count is
# accepted, and neither the count nor the work buffers change what is computed.


@check("CPU-15", "CPU-16", spec=small_graphs(max_nodes=4), counts=st.lists(st.integers(-3, 9), min_size=1, max_size=4))
def every_thread_count_is_accepted(t: Target, rec: Recorder, spec: GraphSpec, counts: list[int]) -> None:
    """set_n_threads(n) for any n (n <= 0 included, CPU-15): graph_compute returns true, and a
    plan created afterwards computes; the results are those of a new backend's (4 threads)."""
    cpu = t.cpu_init()
    first = _ready(t, spec, cpu)
    rec("graph_compute on a new backend", t.backend_graph_compute(cpu, first.graph))
    for n in counts:
        t.cpu_set_n_threads(cpu, n)
        again = _ready(t, spec, cpu)
        rec(f"graph_compute after set_n_threads({n})", t.backend_graph_compute(cpu, again.graph))
        rec(f"same results after set_n_threads({n})", _results(t, again) == _results(t, first))
        planned = _ready(t, spec, cpu)
        plan = t.backend_graph_plan_create(cpu, planned.graph)
        t.backend_graph_plan_compute(cpu, plan)
        t.backend_graph_plan_free(cpu, plan)
        rec(f"plan results after set_n_threads({n})", _results(t, planned) == _results(t, first))


@check("CPU-17", "CPU-18", first=small_graphs(max_rows=6), second=small_graphs(max_rows=6),
       planned=st.sampled_from([1, 2, 4]), later=st.sampled_from([1, 2, 4]))
def plans_and_the_backend_buffer_do_not_disturb_each_other(t: Target, rec: Recorder, first: GraphSpec,
                                                           second: GraphSpec, planned: int, later: int) -> None:
    """A plan of `first`, made with one thread count and computed after set_n_threads changed it
    and after the backend computed another graph (which may grow the backend's work buffer,
    CPU-17), gives graph_compute's results; computing `first` again after `second` reuses the
    backend's buffer and gives the same bytes as before."""
    cpu = t.cpu_init()
    direct, planned_graph, other = _ready(t, first, cpu), _ready(t, first, cpu), _ready(t, second, cpu)
    t.cpu_set_n_threads(cpu, planned)
    plan = t.backend_graph_plan_create(cpu, planned_graph.graph)
    t.cpu_set_n_threads(cpu, later)
    rec("graph_compute returns", t.backend_graph_compute(cpu, direct.graph))
    before = _results(t, direct)
    rec("another graph computes", t.backend_graph_compute(cpu, other.graph))
    t.backend_graph_plan_compute(cpu, plan)
    rec("plan results equal graph_compute's", _results(t, planned_graph) == before)
    t.backend_graph_plan_free(cpu, plan)
    rec("the first graph again", t.backend_graph_compute(cpu, direct.graph))
    rec("the same results again", _results(t, direct) == before)


# rc.8's ggml-backend.c:663 (`free(cpu_plan)` deleted) survived the mutation runs: no check saw the
# plan struct leak; many create/free rounds of a plan must leave the heap where it was
@check("CPU-18", rounds=st.just(1))
def freeing_a_plan_releases_it(t: Target, rec: Recorder, rounds: int) -> None:
    """A round: graph_plan_create of a small graph (x + w, then scaled) on a CPU backend of one
    thread, graph_plan_free. Done once through the adapter (with a compute of the plan); then,
    on a C target, many rounds through its C functions: the heap must not grow with them,
    graph_plan_free frees the work buffer and the plan (deterministic)."""
    from collections.abc import Callable
    from typing import Any

    from ._leaks import leaks

    cpu, g, b = small_cpu_graph(t)
    for _ in range(rounds):
        plan = t.backend_graph_plan_create(cpu, g)
        t.backend_graph_plan_compute(cpu, plan)
        t.backend_graph_plan_free(cpu, plan)
        rec("b", t.tensor_get(b, 0, 64))

    def make_round(c: Callable[[str], Any]) -> Callable[[], None]:
        ct: Any = t  # a C target: its cffi module
        create, free = c("backend_graph_plan_create"), c("backend_graph_plan_free")

        def one_round() -> None:
            plan = create(cpu, g)
            if plan == ct.ffi.NULL:
                raise AssertionError("graph_plan_create returned NULL in a round")
            free(cpu, plan)

        return one_round

    rec("the heap grows with the rounds", leaks(t, make_round))


# rc.8's ggml-backend.c:725 (cpu_init leaves work_data unset) survived a mutation run: the unset
# pointer shows only when a graph needs work memory or the backend is freed, on a context placed on
# reused heap memory. glibc hands out such memory (a chunk from its fastbins keeps its old bytes at
# work_data's offset) in any process that has run a while; the freed backends here add more. With
# 4 backends or more every run of the mutant aborts (realloc or free of the stale pointer).
@example(backends=24)
@check("CPU-17", backends=st.sampled_from([8, 16]))  # a scenario more than a search: few cases
def new_backends_start_without_work_memory(t: Target, rec: Recorder, backends: int) -> None:
    """A new backend's work buffer is empty, also when its context is placed on memory a freed
    backend's context used: `backends` CPU backends compute a MUL_MAT that needs work memory
    (F16 weights, F32 `b`: CPU-17's lower bound) and are freed; as many new ones are made, and
    each has an empty buffer, computes the same bytes and is freed."""
    f16, f32 = int(GGMLType.F16), int(GGMLType.F32)
    buf = t.buft_alloc_buffer(t.cpu_buffer_type(), 512)
    w, x = t.new_tensor(f16, (8, 2), "w"), t.new_tensor(f32, (8, 1), "x")
    y = t.op("mul_mat", [w, x], [])
    for k, tensor in enumerate((w, x, y)):
        t.tensor_alloc(buf, tensor, 128 * k)
    t.tensor_set(w, bytes([0, 0x3C] * 16), 0, 32)  # F16 ones
    t.tensor_set(x, fill(32, 3), 0, 32)
    g = t.new_graph(8)
    t.build_forward_expand(g, y)
    old = [t.cpu_init() for _ in range(backends)]
    for b in old:
        t.backend_graph_compute(b, g)
    rec("the old backends have work memory", all(t.cpu_work_data(b) != 0 for b in old))
    for b in old:
        t.backend_free(b)
    new = [t.cpu_init() for _ in range(backends)]
    rec("new backends with an empty buffer", sum(t.cpu_work_size(b) == 0 and t.cpu_work_data(b) == 0 for b in new))
    results = set()
    for b in new:
        t.backend_graph_compute(b, g)
        results.add(t.tensor_get(y, 0, 8))
        t.backend_free(b)
    rec("results", sorted(results))
