"""Small-scope testing of the scheduler's assignment: every tiny graph, compared pass by pass.

Most defects of an assignment algorithm show on tiny inputs (the small-scope hypothesis), so
instead of sampling, `scope_cases` enumerates *every* case up to a bound: every DAG of up to
`max_nodes` nodes over two F32 leafs, each node a unary op (SCALE), a binary op (ADD of two
different values) or a view op (RESHAPE), every placement of each leaf (weights in a device's
buffer, weights in the CPU's buffer, or no buffer at all), and every set of user pins that
pins at most `max_pins` nodes, on `n_backends` backends (devices first, the CPU last).

`compare(t, case)` runs the case's graph on the target (sched_new, init_measure on one build,
graph_compute on a second, pinned alike) and on the reference model, and returns the first
difference of the plans, *pass by pass*: each tensor's backend and the pass
that decided it (`SchedPlan.causes`) give the assignment after every pass (a tensor decided by
pass 2.1 is assigned from pass 2.1 on), so the first pass after which the two assignments
differ is named. A target without the scheduler's debug hooks (rc.8) shows only the final
assignment: a difference there is named with the pass that decided the tensor on the reference.
Cases the reference refuses (a node or source no pass assigns: SCHED-14, SCHED-16) are
skipped: each of them aborts on a faithful target, which the death checks cover.
"""

from __future__ import annotations

import contextlib
import io
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from ggspec.reference.clauses import Profile, SpecError
from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..target import SchedPlan, Target, VDevParams
from .graphspec import GraphSpec, Leaf, Node, build
from .strategies import DEVICE_NAMES, SchedGraph, SchedSetup

F32 = int(GGMLType.F32)
NE = (4, 2)
#: the order of the passes, as `SchedPlan.causes` names them (by prefix)
PASSES = ("user", "1", "2.1", "2.2", "2.3", "2.4", "3", "4")


@dataclass(frozen=True)
class ScopeCase:
    setup: SchedSetup
    graph: SchedGraph


def _nodes(max_nodes: int) -> Iterator[tuple[Node, ...]]:
    """Every node list of 1 to `max_nodes` nodes over the leafs a and b: node k reads earlier
    values (unary, view) or two different ones (binary)."""

    def extend(prefix: tuple[Node, ...]) -> Iterator[tuple[Node, ...]]:
        values = ["a", "b", *(n.name for n in prefix)]
        k = len(prefix)
        for v in values:
            yield (*prefix, Node(f"s{k}", "scale", (v,), (0.5,)))
        for x, y in itertools.combinations(values, 2):
            yield (*prefix, Node(f"add{k}", "add", (x, y)))
        for v in values:
            yield (*prefix, Node(f"r{k}", "reshape", (v,), tuple(float(x) for x in NE)))

    level: list[tuple[Node, ...]] = [()]
    for _ in range(max_nodes):
        level = [nodes for prefix in level for nodes in extend(prefix)]
        yield from level


def _outputs(nodes: tuple[Node, ...]) -> tuple[str, ...]:
    """The sinks: nodes no other node reads (in order)."""
    read = {s for n in nodes for s in n.srcs}
    return tuple(n.name for n in nodes if n.name not in read)


def _placements(n_backends: int) -> list[tuple[int, bool]]:
    """(place, weights) of a leaf: weights on each device, weights on the CPU, no buffer."""
    return [*((d, True) for d in range(n_backends - 1)), (n_backends - 1, True), (-1, False)]


def setup_of(n_backends: int) -> SchedSetup:
    return SchedSetup(tuple(VDevParams(name=DEVICE_NAMES[i]) for i in range(n_backends - 1)))


def scope_cases(n_backends: int, max_nodes: int, max_pins: int = 1) -> Iterator[ScopeCase]:
    """Every case of the bound (see the module doc), in a fixed order."""
    setup = setup_of(n_backends)
    for nodes in _nodes(max_nodes):
        used = {s for n in nodes for s in n.srcs}
        leaf_names = [x for x in ("a", "b") if x in used]
        pinnable = [n.name for n in nodes if n.op != "reshape"]
        for places in itertools.product(_placements(n_backends), repeat=len(leaf_names)):
            leafs = tuple(Leaf(name, F32, NE, p, weights=w, seed=i + 1)
                          for i, (name, (p, w)) in enumerate(zip(leaf_names, places, strict=True)))
            spec = GraphSpec(leafs, nodes, _outputs(nodes), graph_size=64)
            for k in range(max_pins + 1):
                for names in itertools.combinations(pinnable, k):
                    for backends in itertools.product(range(n_backends), repeat=k):
                        yield ScopeCase(setup, SchedGraph(spec, tuple(zip(names, backends, strict=True))))


def split_plan(t: Target, case: ScopeCase) -> SchedPlan:
    """The plan of the case's graph on `t`: init_measure on one build, graph_compute on a
    second (init_measure resets the assignment it made; computing a build that was split
    already would read the freed copies of its first split), both pinned."""
    backends = [t.vdev_init(p) for p in case.setup.devices] + [t.cpu_init()]
    t.cpu_set_n_threads(backends[-1], 1)  # the plan does not depend on threads; starting them costs
    s = t.sched_new(backends, None, case.graph.spec.graph_size)
    for step in ("measure", "compute"):
        built = build(t, case.graph.spec, backends, fill=False, weights_apart=True)
        for name, b in case.graph.assign:
            t.sched_set_node_backend(s, built.tensors[name], backends[b])
        if step == "measure":
            t.sched_init_measure(s, built.graph)
        else:
            t.sched_graph_compute(s, built.graph)
    plan = t.sched_plan(s, built.graph)
    t.sched_free(s)
    return plan


def reference_plan(case: ScopeCase, profile: Profile = Profile.RC8) -> SchedPlan | None:
    """The reference's plan, or None when the reference refuses the case (an assert)."""
    from ..adapters.reference import ReferenceTarget

    try:
        return split_plan(ReferenceTarget(profile), case)
    except SpecError:
        return None


def _rank(cause: str) -> int:
    for i, p in enumerate(PASSES):
        if cause == p or cause.startswith(p + ".") or (p in ("1", "3", "4") and cause.startswith(p)):
            return i
    raise ValueError(f"unknown cause {cause!r}")


def after_each_pass(plan: SchedPlan) -> list[dict[str, int]]:
    """The assignment (tensor -> backend, -1 unassigned) after each of PASSES."""
    assert plan.causes is not None
    cause = dict(plan.causes)
    backend = dict(plan.nodes) | dict(plan.leafs)
    return [{x: (b if cause.get(x) and _rank(cause[x]) <= i else -1) for x, b in backend.items()}
            for i in range(len(PASSES))]


def difference(want: SchedPlan, got: SchedPlan) -> str | None:
    """The first difference of two plans, pass by pass where both name their passes."""
    if want.causes is not None and got.causes is not None:
        for name, a, b in zip(PASSES, after_each_pass(want), after_each_pass(got), strict=True):
            if a != b:
                diff = {x: (a[x], b.get(x)) for x in a if a[x] != b.get(x)}
                return f"after pass {name}: tensor -> (reference, target) backend: {diff}"
    wb, gb = dict(want.nodes) | dict(want.leafs), dict(got.nodes) | dict(got.leafs)
    if wb != gb:
        cause = dict(want.causes or ())
        final = {x: (wb[x], gb.get(x), f"decided by {cause.get(x) or '?'} on the reference")
                 for x in wb if wb[x] != gb.get(x)}
        return f"final assignment: tensor -> (reference, target, pass): {final}"
    if want != got:
        return f"splits, copies or n_splits: reference {want!r}, target {got!r}"
    return None


def compare(t: Target, case: ScopeCase, profile: Profile = Profile.RC8) -> str | None:
    """None when `t` splits the case as the reference does (or the reference refuses it), else
    the first difference."""
    want = reference_plan(case, profile)
    if want is None:
        return None
    return difference(want, split_plan(t, case))


@st.composite
def scope_samples(draw: st.DrawFn, min_nodes: int = 4, max_nodes: int = 6) -> ScopeCase:
    """A case beyond the exhaustive bound, built from the same parts: `min_nodes` to
    `max_nodes` nodes, 2 or 3 backends, any placement of the two leafs and any pins. The
    reference must accept it under both profiles (see `reference_plan`)."""
    n_backends = draw(st.sampled_from([2, 3]), label="backends")
    nodes: list[Node] = []
    for k in range(draw(st.integers(min_nodes, max_nodes), label="nodes")):
        values = ["a", "b", *(n.name for n in nodes)]
        kind = draw(st.sampled_from(["scale", "add", "reshape"]), label=f"node {k}")
        if kind == "add":
            x, y = draw(st.lists(st.sampled_from(values), min_size=2, max_size=2, unique=True), label=f"node {k} sources")
            nodes.append(Node(f"add{k}", "add", (x, y)))
        else:
            v = draw(st.sampled_from(values), label=f"node {k} source")
            nodes.append(Node(f"s{k}", "scale", (v,), (0.5,)) if kind == "scale"
                         else Node(f"r{k}", "reshape", (v,), tuple(float(x) for x in NE)))
    used = {s for n in nodes for s in n.srcs}
    leafs = tuple(Leaf(name, F32, NE, p, weights=w, seed=i + 1) for i, name in enumerate(("a", "b")) if name in used
                  for p, w in [draw(st.sampled_from(_placements(n_backends)), label=f"leaf {name}")])
    pinnable = [n.name for n in nodes if n.op != "reshape"]
    pins = draw(st.lists(st.tuples(st.sampled_from(pinnable), st.integers(0, n_backends - 1)), max_size=3,
                         unique_by=lambda p: p[0]), label="pins") if pinnable else []
    spec = GraphSpec(leafs, tuple(nodes), _outputs(tuple(nodes)), graph_size=64)
    return ScopeCase(setup_of(n_backends), SchedGraph(spec, tuple(pins)))


def accepted(case: ScopeCase) -> bool:
    """Whether the reference splits and computes the case under both profiles."""
    with contextlib.redirect_stderr(io.StringIO()):  # the model prints rc.8's out-of-space line
        return all(reference_plan(case, p) is not None for p in (Profile.RC8, Profile.FIXED))
