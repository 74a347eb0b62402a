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

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from ggspec.reference.clauses import Profile, SpecError
from ggspec.reference.types import GGMLType

from .graphspec import GraphSpec, Leaf, Node, build
from .strategies import DEVICE_NAMES, SchedGraph, SchedSetup
from .target import SchedPlan, Target, VDevParams

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
    from .adapters.reference import ReferenceTarget

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
