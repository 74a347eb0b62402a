"""BACK-10 to BACK-14 and CPU-15 to CPU-19: computing graphs and graph plans.

Graphs are drawn (strategies.small_graphs), built on a backend, every tensor without memory
placed by hand (one buffer, no reuse: computing twice from the same inputs gives the same
results; no allocator, so an ALLOC defect is not blamed here) and the inputs set. Results are
compared within a target — between thread counts, between a plan and graph_compute, between
backends — never with the reference's values (the CORE checks judge the kernels): the recorded
observation is whether they are identical. How much work memory a graph needs is the
implementation's own (CPU-17): the checks record only what the clauses promise about it (empty
at first, a lower bound, never shrinking, reused).
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType, Op, row_size
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, mock_reading
from ..inputs.graphspec import Built
from ..inputs.strategies import GraphSpec, Placement, placements, small_graphs, vdev_params_with
from ..target import Handle, Target, VDevParams
from ._graphs import GraphRecorder
from ._placement import build_graph, place_all, set_inputs, sources
from ._setup import backend_for

thread_counts = st.sampled_from([1, 2, 3, 4, 8])


def _ready(t: Target, spec: GraphSpec, backend: Handle) -> Built:
    """`spec` built on `backend` (weights in a buffer of theirs), every other tensor placed by
    hand on it (no reuse, no in-place views), inputs set."""
    built = build_graph(t, spec, backend)
    place_all(t, built.graph, backend)
    set_inputs(t, spec, built)
    return built


def _results(t: Target, built: Built) -> dict[str, bytes]:
    """Every node's bytes (tensor_get: any backend, after its queue ran)."""
    return {t.tensor_name(n): t.tensor_get(n, 0, t.nbytes(n)) for n in t.graph_nodes(built.graph)}


def _effective(n: int) -> int:
    return n if n > 0 else 4


def _work_lower_bound(t: Target, g: Handle) -> int:
    """CPU-17's lower bound: a MUL_MAT whose b is not of a's vec_dot type converts b."""
    bound = 0
    for node in t.graph_nodes(g):
        info = t.tensor_info(node)
        if info.op != int(Op.MUL_MAT):
            continue
        a, b = sources(t, node)[:2]
        vdt = t.vec_dot_type(t.tensor_info(a).type)
        bi = t.tensor_info(b)
        if bi.type != vdt:
            n = 1
            for x in bi.ne:
                n *= x
            bound = max(bound, row_size(GGMLType(vdt), n))
    return bound


# --- BACK-10 to BACK-14 ------------------------------------------------------------------------


@check("BACK-10", "BACK-12", placement=placements, spec=small_graphs(), repeat=st.integers(1, 3))
def plans_compute_what_graph_compute_computes(t: Target, rec: Recorder, placement: Placement, spec: GraphSpec,
                                              repeat: int) -> None:
    """graph_compute returns true; a plan of an identical graph, computed once or more, gives
    the same bytes in every node; graph_plan_free frees it."""
    backend = backend_for(t, placement)
    direct, planned = _ready(t, spec, backend), _ready(t, spec, backend)
    rec("graph_compute returns", t.backend_graph_compute(backend, direct.graph))
    plan = t.backend_graph_plan_create(backend, planned.graph)
    for _ in range(repeat):
        t.backend_graph_plan_compute(backend, plan)
    t.backend_graph_plan_free(backend, plan)
    t.backend_synchronize(backend)
    rec("same results", _results(t, direct) == _results(t, planned))


@check("BACK-11", "BACK-12", device=vdev_params_with(lazy=True, async_entries=True), spec=small_graphs(),
       plan_first=st.booleans())
def computing_does_not_synchronize(t: Target, rec: Recorder, device: VDevParams, spec: GraphSpec,
                                   plan_first: bool) -> None:
    """On a lazy device: set_async of an input, graph_compute (or graph_plan_compute), get_async
    of the outputs — all stay queued (no implicit synchronize) until synchronize runs them in
    order: the host memory then holds the computed outputs."""
    backend = t.vdev_init(device)
    built = _ready(t, spec, backend)
    first = next(leaf for leaf in spec.leafs if leaf.place < 0)
    x = built.tensors[first.name]
    n = t.nbytes(x)
    mem = t.host_alloc(n)
    t.host_write(mem, 0, t.tensor_get(x, 0, n))
    t.tensor_set_async(backend, x, mem, 0, 0, n)
    plan = t.backend_graph_plan_create(backend, built.graph)
    if plan_first:
        t.backend_graph_plan_compute(backend, plan)
        rec("pending after plan_compute", mock_reading(lambda: t.vdev_pending(backend)))
    else:
        rec("graph_compute returns", t.backend_graph_compute(backend, built.graph))
        rec("pending after graph_compute", mock_reading(lambda: t.vdev_pending(backend)))
    outs = {o: t.host_alloc(t.nbytes(built.tensors[o])) for o in spec.outputs}
    for o, m in outs.items():
        t.tensor_get_async(backend, built.tensors[o], m, 0, 0, t.nbytes(built.tensors[o]))
    rec("pending before synchronize", mock_reading(lambda: t.vdev_pending(backend)))
    t.backend_synchronize(backend)
    rec("pending after synchronize", mock_reading(lambda: t.vdev_pending(backend)))
    results = _results(t, built)
    rec("outputs read after synchronize", all(t.host_read(m, 0, len(results[o])) == results[o] for o, m in outs.items()))
    t.backend_graph_plan_free(backend, plan)


@check("BACK-13", "BACK-12", spec=small_graphs(), device=vdev_params_with(ops=frozenset()))
def compute_ignores_supports_op(t: Target, rec: Recorder, spec: GraphSpec, device: VDevParams) -> None:
    """A device whose supports_op refuses every op still computes every node handed to it: the
    same bytes as the CPU backend computes."""
    cpu = t.cpu_init()
    backend = t.vdev_init(device)
    on_cpu, on_dev = _ready(t, spec, cpu), _ready(t, spec, backend)
    rec("supports_op", [t.backend_supports_op(backend, n) for n in t.graph_nodes(on_dev.graph)])
    rec("graph_compute returns", (t.backend_graph_compute(cpu, on_cpu.graph), t.backend_graph_compute(backend, on_dev.graph)))
    t.backend_synchronize(backend)
    rec("same results", _results(t, on_cpu) == _results(t, on_dev))


@check("BACK-14", "GCOPY-1", dst=placements, spec=small_graphs(), reach=st.booleans())
def backends_compute_in_their_memory(t: Target, rec: Recorder, dst: Placement, spec: GraphSpec, reach: bool) -> None:
    """A graph copied onto a backend's memory (graph_copy) computes there as on the CPU; a
    backend handed a graph in memory it cannot reach is undefined (a device graph to the CPU, a
    host graph to a device) — rc.8 may crash there."""
    cpu = t.cpu_init()
    original = _ready(t, spec, cpu)
    backend = backend_for(t, dst)
    copy = t.backend_graph_copy(backend, original.graph)
    assert copy.graph is not None
    if not reach:
        if dst.kind == "vdev":
            t.backend_graph_compute(backend, original.graph)
        else:  # the CPU backend on a device copy
            t.backend_graph_compute(t.cpu_init(), t.backend_graph_copy(t.vdev_init(VDevParams()), original.graph).graph)
        t.backend_synchronize(backend)
        return
    rec("graph_compute returns", (t.backend_graph_compute(cpu, original.graph), t.backend_graph_compute(backend, copy.graph)))
    t.backend_synchronize(backend)
    # the copy's nodes against the reference's within spec/core.md's Tolerances, not byte for byte
    # against the CPU's: a device with kernels of its own (WebGPU) may sum in another order
    GraphRecorder(t).record(rec, t.graph_nodes(original.graph), "cpu: ")
    GraphRecorder(t).record(rec, t.graph_nodes(copy.graph), "copy: ")
    t.backend_graph_copy_free(copy)


# --- CPU-15 to CPU-19 ----------------------------------------------------------------------------


@check("CPU-15", spec=small_graphs(max_nodes=4), counts=st.lists(st.integers(-3, 9), max_size=4))
def thread_count(t: Target, rec: Recorder, spec: GraphSpec, counts: list[int]) -> None:
    """A new CPU backend plans with 4 threads; set_n_threads(n) is used by later plans (n <= 0:
    4) and graph_compute accepts every count."""
    cpu = t.cpu_init()
    built = _ready(t, spec, cpu)
    plan = t.backend_graph_plan_create(cpu, built.graph)
    rec("a new backend's plans", t.cpu_plan_n_threads(plan))
    t.backend_graph_plan_free(cpu, plan)
    for n in counts:
        t.cpu_set_n_threads(cpu, n)
        plan = t.backend_graph_plan_create(cpu, built.graph)
        rec(f"plans after set_n_threads({n})", t.cpu_plan_n_threads(plan))
        t.backend_graph_plan_free(cpu, plan)
        rec(f"graph_compute with {n}", t.backend_graph_compute(cpu, built.graph))


@check("CPU-16", spec=small_graphs(max_rows=9), order=st.permutations([1, 2, 4]))
def results_do_not_depend_on_threads(t: Target, rec: Recorder, spec: GraphSpec, order: list[int]) -> None:
    """The same graph computed with 1, 2 and 4 threads: graph_compute returns true, and every
    node's bytes are identical."""
    cpu = t.cpu_init()
    built = _ready(t, spec, cpu)
    seen = []
    for n in order:
        t.cpu_set_n_threads(cpu, n)
        rec(f"returns ({n} threads)", t.backend_graph_compute(cpu, built.graph))
        seen.append(_results(t, built))
    rec("identical for 1, 2 and 4 threads", all(s == seen[0] for s in seen))


@check("CPU-17", first=small_graphs(max_rows=6), second=small_graphs(max_rows=6), threads=thread_counts)
def work_buffer_grows_and_is_reused(t: Target, rec: Recorder, first: GraphSpec, second: GraphSpec, threads: int) -> None:
    """The work buffer starts empty, covers each graph's lower bound after computing it, never
    shrinks, and is left as it is (size and address) by a graph whose need it already covered."""
    cpu = t.cpu_init()
    t.cpu_set_n_threads(cpu, threads)
    rec("empty at first", (t.cpu_work_size(cpu), t.cpu_work_data(cpu) == 0))
    a, b = _ready(t, first, cpu), _ready(t, second, cpu)
    sizes: list[int] = []

    def run(built: Built, label: str) -> tuple[int, int]:
        t.backend_graph_compute(cpu, built.graph)
        size, data = t.cpu_work_size(cpu), t.cpu_work_data(cpu)
        rec(f"{label}: covers the lower bound", size >= _work_lower_bound(t, built.graph))
        rec(f"{label}: never shrinks", not sizes or size >= sizes[-1])
        sizes.append(size)
        return size, data

    after_a = run(a, "first graph")
    rec("the same graph again: unchanged", run(a, "first graph again") == after_a)
    after_b = run(b, "second graph")
    rec("the first graph after the second: unchanged", run(a, "first graph after the second") == after_b)


@check("CPU-18", spec=small_graphs(max_rows=6), planned=thread_counts, later=thread_counts, warm=st.booleans())
def plans_own_their_work_buffer(t: Target, rec: Recorder, spec: GraphSpec, planned: int, later: int, warm: bool) -> None:
    """A plan keeps the thread count of its creation and a work buffer of its own (at least the
    lower bound); creating, computing and freeing it leaves the backend's buffer alone; its
    results equal graph_compute's."""
    cpu = t.cpu_init()
    direct, planned_graph = _ready(t, spec, cpu), _ready(t, spec, cpu)
    if warm:
        t.backend_graph_compute(cpu, direct.graph)
    t.cpu_set_n_threads(cpu, planned)
    before = (t.cpu_work_size(cpu), t.cpu_work_data(cpu))
    plan = t.backend_graph_plan_create(cpu, planned_graph.graph)
    rec("plan threads", t.cpu_plan_n_threads(plan))
    rec("plan work covers the lower bound", t.cpu_plan_work_size(plan) >= _work_lower_bound(t, planned_graph.graph))
    t.cpu_set_n_threads(cpu, later)
    t.backend_graph_plan_compute(cpu, plan)
    t.backend_graph_plan_compute(cpu, plan)
    rec("plan threads after set_n_threads", t.cpu_plan_n_threads(plan))
    rec("backend buffer untouched", (t.cpu_work_size(cpu), t.cpu_work_data(cpu)) == before)
    t.backend_graph_plan_free(cpu, plan)
    rec("backend buffer untouched by free", (t.cpu_work_size(cpu), t.cpu_work_data(cpu)) == before)
    if not warm:
        t.backend_graph_compute(cpu, direct.graph)
    rec("same results", _results(t, direct) == _results(t, planned_graph))


@check("CPU-19", ne=st.tuples(st.sampled_from([4, 8, 32]), st.integers(1, 3)),
       ops=st.tuples(st.sampled_from(["add", "mul"]), st.sampled_from(["add", "mul"])),
       how=st.sampled_from(["clear and rebuild", "expand"]), seed=st.integers(0, 2**16))
def plans_and_changed_graphs(t: Target, rec: Recorder, ne: tuple[int, int], ops: tuple[str, str], how: str,
                             seed: int) -> None:
    """Plan a one-node graph, then change the graph (clear it and expand another node into it,
    or expand another node after it) and compute the plan: which node is computed? rc.8
    computes the array's current first entry (erratum CPU-19); fixed the planned node."""
    from ..inputs.graphspec import Leaf, leaf_bytes

    cpu = t.cpu_init()
    leafs = [Leaf(f"in{i}", int(GGMLType.F32), ne, seed=seed + i) for i in range(2)]
    x, y = (t.new_tensor(leaf.type, leaf.ne, leaf.name) for leaf in leafs)
    planned = t.op(ops[0], [x, y], [])
    t.set_name(planned, "planned")
    other = t.op(ops[1], [y, x], [])
    t.set_name(other, "other")
    g = t.new_graph(64)
    t.build_forward_expand(g, planned)
    t.backend_alloc_ctx_tensors(cpu)
    for leaf, tensor in zip(leafs, (x, y), strict=True):
        data = leaf_bytes(leaf)
        t.tensor_set(tensor, data, 0, len(data))
    zeros = bytes(t.nbytes(planned))
    t.tensor_set(planned, zeros, 0, len(zeros))
    t.tensor_set(other, zeros, 0, len(zeros))
    plan = t.backend_graph_plan_create(cpu, g)
    if how == "clear and rebuild":
        t.graph_clear(g)
    t.build_forward_expand(g, other)
    t.backend_graph_plan_compute(cpu, plan)
    rec("computed", {name: t.tensor_get(x_, 0, len(zeros)) != zeros for name, x_ in (("planned", planned), ("other", other))})
    t.backend_graph_plan_free(cpu, plan)
