"""CORE-6 to CORE-15, CORE-48 and CORE-78: contexts, graphs, and computing whole graphs.

The graph checks build random graphs (`graph_specs`) or small hand-made ones and record what
rc.8 makes visible: the context's tensors in order, a graph's counts and tables, its nodes and
leafs by name in order, and after computing, every node's layout and value (bytes for data
movement, `Approx` within spec/core.md's tolerances otherwise; see checks/_graphs.py). Nodes
are placed by hand (one buffer, aligned offsets, `view_init` for views), never by an allocator.
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType, blck_size
from hypothesis import strategies as st

from ..adapters.webgpu_device import WEBGPU_NAME
from ..engine.registry import Recorder, add_example, check
from ..inputs.fixtures import FIXTURES
from ..inputs.graphspec import GraphSpec, build
from ..inputs.strategies import TensorSpec, graph_specs, tensor_specs, vdev_params
from ..target import Handle, Target, VDevParams
from ._graphs import GraphRecorder, layout, make_tensors, place_nodes, raw, record_graph, run_spec

F32 = int(GGMLType.F32)
I32 = int(GGMLType.I32)


def _names(t: Target, xs: list[Handle]) -> list[str]:
    return [t.tensor_name(x) for x in xs]


# --- CORE-6: contexts ------------------------------------------------------------------------------


@check("CORE-6", made=st.lists(st.tuples(tensor_specs(), st.booleans()), min_size=1, max_size=6),
       views=st.lists(st.integers(0, 5), max_size=3))
def contexts_keep_creation_order(t: Target, rec: Recorder, made: list[tuple[TensorSpec, bool]], views: list[int]) -> None:
    """Tensors made alternately in the no_alloc context and in an allocating one, then views of
    some of them: each context walks its own in creation order; no_alloc tensors have no data,
    the others data but no buffer; a view has its root's data (or none) and no memory of its own."""
    rec("no_alloc", t.context_no_alloc())
    rec("allocating context's no_alloc", t.context_no_alloc(host=True))
    tensors = []
    for i, (spec, host) in enumerate(made):
        make = t.new_host_tensor if host else t.new_tensor
        tensors.append((make(spec.type, spec.ne, f"t{i}"), spec))
    for j, k in enumerate(views):
        root, spec = tensors[k % len(tensors)]
        v = t.view(root, (blck_size(GGMLType(spec.type)),), (), 0)
        t.set_name(v, f"v{j}")
    for host in (False, True):
        walked = t.context_tensors(host=host)
        rec(f"{'allocating' if host else 'no_alloc'} context walk", _names(t, walked))
        rec(f"{'allocating' if host else 'no_alloc'} context tensors", [layout(t.tensor_info(x)) for x in walked])


# a one-byte tensor (I8, one element) in the allocating context still gets data of its own
# (tensor.c:212, `own_data > 0` made `> 1`, survived a mutation run)
add_example("graph.contexts_keep_creation_order", {"made": [(TensorSpec(int(GGMLType.I8), (1,)), True)], "views": []})


@check("CORE-8", asked=st.lists(st.sampled_from(["a", "n0", "n1", "n2", "missing", ""]), min_size=1, max_size=4))
def graph_get_tensor_finds_by_name(t: Target, rec: Recorder, asked: list[str]) -> None:
    """A leaf a and a chain of nodes n0 = cont(a), n1 = cont(n0), n2 = cont(n1): graph_get_tensor
    returns the first leaf, else the first node of that name, else NULL (recorded by name)."""
    a = t.new_tensor(F32, (4,), "a")
    g = t.new_graph(16)
    x = a
    for i in range(3):
        x = t.op("cont", [x], [])
        t.set_name(x, f"n{i}")
    t.build_forward_expand(g, x)
    for name in asked:
        found = t.graph_get_tensor(g, name)
        rec(f"graph_get_tensor {name!r}", None if found is None else t.tensor_name(found))


# a node found by name when another node precedes it (graph.c:233, the node comparison
# negated, survived a mutation run)
add_example("graph.graph_get_tensor_finds_by_name", {"asked": ["n1", "n2", "a", "missing"]})


# --- CORE-7 to CORE-11: new graphs, expansion, capacities -----------------------------------------


@check("CORE-7", size=st.one_of(st.integers(0, 40), st.integers(0, 40000)), grads=st.booleans())
def new_graphs_are_empty(t: Target, rec: Recorder, size: int, grads: bool) -> None:
    """Counts, gradient array, visited-set size (the prime after 2·size) and order."""
    rec("new_graph_custom", t.graph_info(t.new_graph_custom(size, grads)))
    rec("new_graph", t.graph_info(t.new_graph_default()))


# every entry of the prime table a graph of up to 32769 nodes can reach: the size whose 2·size is
# the entry minus one (graph.c:33, the entry 131101 off by one, survived a mutation run). The
# entry 3 is never reached: 2·size is even, and 2 already covers 2·size = 2.
for _p in (5, 11, 17, 37, 67, 131, 257, 521, 1031, 2053, 4099, 8209, 16411, 32771, 65537):
    add_example("graph.new_graphs_are_empty", {"size": (_p - 1) // 2, "grads": False})
add_example("graph.new_graphs_are_empty", {"size": 32769, "grads": False})  # 2·size = 65538: 131101


@check("CORE-8", spec=graph_specs(), order=st.sampled_from([0, 1]), unnamed=st.sets(st.integers(0, 40), max_size=6),
       again=st.lists(st.integers(0, 40), max_size=4))
def expansion_order(t: Target, rec: Recorder, spec: GraphSpec, order: int, unnamed: set[int], again: list[int]) -> None:
    """Expanding the outputs one after the other (left-to-right or right-to-left): after each,
    the counts; then the nodes and leafs by name (unnamed ones get node_<i> / leaf_<i>); then
    expanding already visited tensors again appends nothing."""
    tensors = make_tensors(t, spec)
    everything = list(tensors.values())
    for i in unnamed:
        t.set_name(everything[i % len(everything)], "")
    g = t.new_graph_custom(spec.graph_size, False)
    t.graph_set_order(g, order)
    for out in spec.outputs:
        t.build_forward_expand(g, tensors[out])
        info = t.graph_info(g)
        rec(f"after expanding {out}", (info.n_nodes, info.n_leafs))
    rec("nodes", _names(t, t.graph_nodes(g)))
    rec("leafs", _names(t, t.graph_leafs(g)))
    for k in again:
        t.build_forward_expand(g, everything[k % len(everything)])
    info = t.graph_info(g)
    rec("after expanding visited tensors again", (info.n_nodes, info.n_leafs))


def _chain(t: Target, n: int) -> list[Handle]:
    """A leaf and `n` DUP nodes, each of the previous one."""
    xs = [t.new_tensor(F32, (4,), "a")]
    for i in range(n):
        xs.append(t.op("dup", [xs[-1]], ()))
        t.set_name(xs[-1], f"d{i}")
    return xs


@check("CORE-9", size=st.integers(2, 6))
def node_capacity(t: Target, rec: Recorder, size: int) -> None:
    """A chain of size + 1 nodes into a graph of `size` (its visited set has room for all)."""
    xs = _chain(t, size + 1)
    g = t.new_graph_custom(size, False)
    t.build_forward_expand(g, xs[-1])


@check("CORE-10", size=st.sampled_from([0, 2, 3, 4, 5]))
def leaf_capacity(t: Target, rec: Recorder, size: int) -> None:
    """`size + 1` leafs summed by `size` ADD nodes into a graph of `size` (size 0: one leaf)."""
    leafs = [t.new_tensor(F32, (4,), f"l{i}") for i in range(size + 1)]
    top = leafs[0]
    for i, leaf in enumerate(leafs[1:]):
        top = t.op("add", [top, leaf], ())
        t.set_name(top, f"s{i}")
    g = t.new_graph_custom(size, False)
    t.build_forward_expand(g, top)


@check("CORE-11", shape=st.sampled_from(["add of two leafs", "dup of a dup", "mul_mat"]))
def hash_set_full(t: Target, rec: Recorder, shape: str) -> None:
    """A graph of size 1 (2 slots in its visited set) asked to visit a third tensor."""
    a, b = t.new_tensor(F32, (4, 2), "a"), t.new_tensor(F32, (4, 2), "b")
    if shape == "add of two leafs":
        top = t.op("add", [a, b], ())
    elif shape == "dup of a dup":
        top = t.op("dup", [t.op("dup", [a], ())], ())
    else:
        top = t.op("mul_mat", [a, b], ())
    g = t.new_graph_custom(1, False)
    rec("visited set slots", t.graph_info(g).hash_size)
    t.build_forward_expand(g, top)


# --- CORE-12, CORE-13: views of graphs, clearing ----------------------------------------------------


@check("CORE-12", spec=graph_specs(min_nodes=2), cut=st.tuples(st.integers(0, 64), st.integers(0, 64)))
def graph_view_shares_the_nodes(t: Target, rec: Recorder, spec: GraphSpec, cut: tuple[int, int]) -> None:
    """A view of nodes [i0, i1): its counts and nodes; computing it computes exactly those
    nodes (the others keep the bytes their buffer was cleared to); after the parent is cleared
    and expanded again in another order, the view shows the parent's new entries."""
    cpu = t.cpu_init()
    built = build(t, spec, [cpu])
    g = built.graph
    place_nodes(t, g, cpu)
    n = len(t.graph_nodes(g))
    i0, i1 = sorted(c % (n + 1) for c in cut)
    view = t.graph_view(g, i0, i1)
    rec("view", t.graph_info(view))
    rec("view nodes", _names(t, t.graph_nodes(view)))
    t.backend_graph_compute(cpu, view)
    GraphRecorder(t).record(rec, t.graph_nodes(g), "after computing the view: ")
    t.graph_clear(g)
    for out in reversed(spec.outputs):
        t.build_forward_expand(g, built.tensors[out])
    rec("view nodes after the parent was rebuilt", _names(t, t.graph_nodes(view)))


@check("CORE-12", n=st.integers(1, 5), cut=st.tuples(st.integers(0, 8), st.integers(0, 8)), param=st.booleans())
def graph_view_shares_the_gradients(t: Target, rec: Recorder, n: int, cut: tuple[int, int], param: bool) -> None:
    """A graph with a gradient array: its view's gradients are the parent's from i0 on."""
    x = t.new_tensor(F32, (4,), "x")
    if param:
        t.set_param(x)
    xs = [x]
    for i in range(n):
        xs.append(t.op("scale", [xs[-1]], (0.5,)))
        t.set_name(xs[-1], f"s{i}")
    for y in xs:
        grad = t.tensor_grad(y)
        if grad is not None:
            t.set_name(grad, f"grad of {t.tensor_name(y)}")
    g = t.new_graph_custom(16, True)
    t.build_forward_expand(g, xs[-1])
    total = t.graph_info(g).n_nodes
    i0, i1 = sorted(c % (total + 1) for c in cut)
    view = t.graph_view(g, i0, i1)
    rec("view", t.graph_info(view))
    grads = t.graph_grads(view)
    rec("view gradients", None if grads is None else [None if y is None else t.tensor_name(y) for y in grads])


@check("CORE-13", spec=graph_specs(), again=st.integers(0, 40))
def graph_clear_empties_the_graph(t: Target, rec: Recorder, spec: GraphSpec, again: int) -> None:
    """After graph_clear: no nodes, no leafs, nothing visited (expanding a node appends it and
    its sources again); the node array still holds the old entries past the new ones (seen
    through a graph view of the old length)."""
    tensors = make_tensors(t, spec)
    g = t.new_graph_custom(spec.graph_size, False)
    for out in spec.outputs:
        t.build_forward_expand(g, tensors[out])
    before = t.graph_info(g)
    rec("before", before)
    t.graph_clear(g)
    rec("after graph_clear", t.graph_info(g))
    nodes = [tensors[x.name] for x in spec.nodes]
    t.build_forward_expand(g, nodes[again % len(nodes)])
    rec("expanded again", t.graph_info(g))
    rec("nodes", _names(t, t.graph_nodes(g)))
    rec("leafs", _names(t, t.graph_leafs(g)))
    rec("the node array's first entries", _names(t, t.graph_nodes(t.graph_view(g, 0, before.n_nodes))))


# --- CORE-78: the CPU code counts computations ------------------------------------------------------


# graph.c:175 (a graph view's perf_runs 1 instead of 0) survived a mutation run: nothing read the count
@check("CORE-78", "CORE-12", runs=st.integers(0, 3), cut=st.integers(0, 2), plans=st.integers(1, 2))
def computations_are_counted(t: Target, rec: Recorder, runs: int, cut: int, plans: int) -> None:
    """perf_runs: 0 in a new graph and in a view; +1 per CPU graph_compute of the graph itself; a
    view computed counts on the view only; a plan's computations leave the graph's count alone."""
    cpu = t.cpu_init()
    buf = t.buft_alloc_buffer(t.cpu_buffer_type(), 256)
    x = t.new_tensor(F32, (4,), "x")
    y = t.op("scale", [x], (0.5,))
    z = t.op("scale", [y], (2.0,))
    for k, tensor in enumerate((x, y, z)):
        t.tensor_alloc(buf, tensor, 64 * k)
    t.tensor_set(x, bytes(16), 0, 16)
    g = t.new_graph_custom(8, False)
    t.build_forward_expand(g, z)
    rec("a new graph", t.graph_perf_runs(g))
    view = t.graph_view(g, cut, 2)
    rec("a new view", t.graph_perf_runs(view))
    for _ in range(runs):
        t.backend_graph_compute(cpu, g)
    rec(f"after {runs} graph_compute", t.graph_perf_runs(g))
    t.backend_graph_compute(cpu, view)
    rec("the view after computing it", t.graph_perf_runs(view))
    rec("its parent after computing the view", t.graph_perf_runs(g))
    plan = t.backend_graph_plan_create(cpu, g)
    for _ in range(plans):
        t.backend_graph_plan_compute(cpu, plan)
    t.backend_graph_plan_free(cpu, plan)
    rec(f"after {plans} plan computations", t.graph_perf_runs(g))


# --- CORE-14, CORE-15: parameters and gradients ------------------------------------------------------


@check("CORE-14", spec=tensor_specs(type_=st.sampled_from([F32, int(GGMLType.F16)])), name=st.sampled_from(["w", "", "x" * 62]))
def set_param_twice(t: Target, rec: Recorder, spec: TensorSpec, name: str) -> None:
    """set_param gives a gradient "<name> (grad)" of the tensor's type and shape (the name cut
    to 63 bytes) and makes the tensor a node when a graph visits it; a second set_param aborts."""
    x = t.new_tensor(spec.type, spec.ne, name)
    t.set_param(x)
    grad = t.tensor_grad(x)
    rec("gradient", None if grad is None else layout(t.tensor_info(grad)))
    g = t.new_graph_custom(8, True)
    t.build_forward_expand(g, x)
    rec("graph", t.graph_info(g))
    rec("nodes", _names(t, t.graph_nodes(g)))
    t.set_param(x)


#: (op kind, operand shapes, params) for the gradient check; operands are F32 of these shapes
_GRAD_CASES: dict[str, tuple[tuple[tuple[int, ...], ...], tuple[float, ...]]] = {
    "dup": (((4, 3),), ()),
    "add": (((4, 3), (4, 3)), ()),
    "mul": (((4, 3), (4, 3)), ()),
    "scale": (((4, 3),), (0.5,)),
    "mul_mat": (((4, 3), (4, 2)), ()),
    "cpy": (((4, 3), (12,)), ()),
    "cont": (((4, 3),), ()),
    "view": (((4, 3),), (2.0, 3.0, 16.0, 4.0)),
    "reshape": (((4, 3),), (12.0,)),
    "permute": (((4, 3),), (1.0, 0.0, 2.0, 3.0)),
    "transpose": (((4, 3),), ()),
    "get_rows": (((4, 3), (2,)), ()),
    "soft_max_ext": (((4, 3), (4, 3)), (0.5,)),
    "gelu": (((4, 3),), ()),
    "silu": (((4, 3),), ()),
}


@check("CORE-15", kind=st.sampled_from(sorted(_GRAD_CASES)), params=st.sampled_from(["a", "b", "both", "none"]))
def gradients_follow_the_operands(t: Target, rec: Recorder, kind: str, params: str) -> None:
    """An operand with a gradient gives the result one, made right after it: the context's
    tensors in order, with their layouts."""
    shapes, op_params = _GRAD_CASES[kind]
    operands = []
    for i, ne in enumerate(shapes):
        type_ = I32 if kind == "get_rows" and i == 1 else F32
        operands.append(t.new_tensor(type_, ne, "ab"[i]))
    for i, x in enumerate(operands):
        if params in ("both", "ab"[i]):
            t.set_param(x)
    r = t.op(kind, list(operands), op_params)
    t.set_name(r, "result")
    grad = t.tensor_grad(r)
    rec("result has a gradient", grad is not None)
    walked = t.context_tensors()
    rec("context walk", _names(t, walked))
    rec("context tensors", [layout(t.tensor_info(x)) for x in walked])


# --- CORE-48: computing graphs ----------------------------------------------------------------------


@check("CORE-48", spec=graph_specs(), device=vdev_params)
def random_graphs_compute(t: Target, rec: Recorder, spec: GraphSpec, device: VDevParams) -> None:
    """A random graph computed on the CPU backend: the node and leaf order, then every node's
    layout and value; the same graph computed on a virtual device gives the same bytes."""
    cpu = t.cpu_init()
    ran = run_spec(t, spec, cpu)
    rec("nodes", _names(t, ran.nodes))
    rec("leafs", _names(t, t.graph_leafs(ran.built.graph)))
    record_graph(t, rec, ran)
    backend = t.vdev_init(device)
    dev = run_spec(t, spec, backend)
    if t.backend_name(backend) == WEBGPU_NAME:
        # kernels of its own (--device webgpu): every node within the Tolerances of the
        # reference's, not byte for byte the CPU's (spec/core.md, Devices with kernels of their own)
        record_graph(t, rec, dev, "device: ")
        return
    rec("nodes the virtual device computed differently",
        [t.tensor_name(a) for a, b in zip(ran.nodes, dev.nodes, strict=True) if raw(t, a) != raw(t, b)])


@check("CORE-48", fixture=st.sampled_from(sorted(FIXTURES)))
def model_graphs_compute(t: Target, rec: Recorder, fixture: str) -> None:
    """A whisper-style encoder block and a decoder step (conformance/fixtures.py) with every
    tensor on the CPU: node order and every node's value."""
    spec = FIXTURES[fixture](2)
    ran = run_spec(t, spec, t.cpu_init())
    rec("nodes", _names(t, ran.nodes))
    record_graph(t, rec, ran)
