"""A state machine for one scheduler across many graphs: nothing of a graph may leak into the next.

`SchedMachine` drives the reference model and a target in lockstep, as `stateful.LifecycleMachine`
does: one scheduler over 2 or 3 backends (devices, then the CPU), measured once with a wide
graph, then rules that build a new graph (sched_scope's parts: SCALE / ADD / RESHAPE nodes over
two leafs placed anywhere; beside the last one, or in its memory, so that state kept by address
goes stale: the model's tensors take the target's tensor addresses, see `Side.build`), pin its
nodes (set_node_backend), compute it (graph_compute: the
whole plan is compared, pass by pass where the target names its passes), reset (sched_reset)
and query (get_node_backend, get_n_splits), in any order. A rule the model refuses (an abort or
undefined behaviour of rc.8: a node no pass assigns, a graph that does not fit the measured
buffers) is not made on the target, and the machine stops making calls (a C target runs
in-process: an abort would end the run).

`ggspec check` runs it as the check `stateful.scheduler`.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any, ClassVar

from ggspec.reference.clauses import Profile, SpecError
from ggspec.reference.tensor import Context
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ..adapters import make_target
from ..engine.registry import register_machine
from ..errors import Mismatch
from ..inputs.graphspec import Built, GraphSpec, Leaf, Node, build
from ..inputs.sched_scope import F32, NE, accepted, difference, scope_samples, setup_of
from ..target import Handle, Target

#: the clauses a failure of the machine is blamed on
CLAUSES = ("SCHED-26", "SCHED-30", "SCHED-32")


def _wide(n_backends: int) -> GraphSpec:
    """The measuring graph: on every backend a weights leaf and 16 nodes reading it, all of them
    outputs (live at once), so each backend's measured buffer holds more than any graph the
    machine builds later (at most 5 nodes, 2 leafs and their copies)."""
    leafs = tuple(Leaf(f"w{b}", F32, NE, b, weights=True, seed=b + 1) for b in range(n_backends))
    nodes = tuple(Node(f"m{b}_{k}", "add", (f"w{b}", f"w{b}")) for b in range(n_backends) for k in range(16))
    return GraphSpec(leafs, nodes, tuple(n.name for n in nodes), graph_size=64)


class Side:
    """One side of the machine: a target, its backends and scheduler, the current build."""

    def __init__(self, t: Target, n_backends: int) -> None:
        self.t = t
        setup = setup_of(n_backends)
        self.backends: list[Handle] = [t.vdev_init(p) for p in setup.devices] + [t.cpu_init()]
        self.sched: Handle = t.sched_new(self.backends, None, 64)
        self.built: Built | None = None

    def build(self, spec: GraphSpec, like: Side | None = None, fill: bool = True) -> Built:
        """Build `spec` in this side's tensor context. With `like` (the target's side, already
        built), this side is the model: its tensors take the addresses of `like`'s tensors of
        the same names, since where a tensor struct lies in a context is each build's own layout
        (rc.8, native/ and the model all differ), and SCHED-32's stale assignments follow it."""
        if like is None:
            self.built = build(self.t, spec, self.backends, fill=fill, weights_apart=True)
            return self.built
        assert like.built is not None
        ctx = getattr(self.t, "ctx", None)
        if not isinstance(ctx, Context):
            raise TypeError(f"the model side must be a reference target, not {type(self.t).__name__}")
        made = [x.name for x in spec.leafs] + [n.name for n in spec.nodes]  # the order build makes them in
        ctx.take_addresses([like.t.tensor_address(like.built.tensors[n]) for n in made])
        before = len(ctx.tensors)
        self.built = build(self.t, spec, self.backends, fill=fill, weights_apart=True)
        if ctx.addresses_left or len(ctx.tensors) - before != len(made):
            raise AssertionError(f"the model made {len(ctx.tensors) - before} tensors for {made}")
        return self.built

    def where(self, x: Handle) -> int:
        b = self.t.sched_get_node_backend(self.sched, x)
        return -1 if b is None else next((i for i, c in enumerate(self.backends) if c == b), -2)


class SchedMachine(RuleBasedStateMachine):
    target_name: ClassVar[str] = "reference"
    profile: ClassVar[Profile] = Profile.FIXED

    def __init__(self) -> None:
        super().__init__()
        self.sides: list[Side] = []
        self.spec: GraphSpec | None = None
        self.computed = False
        self.dead = False

    @classmethod
    def for_target(cls, target_name: str, profile: Profile) -> type[SchedMachine]:
        return type(f"{cls.__name__}[{target_name},{profile.value}]", (cls,),
                    {"target_name": target_name, "profile": profile})

    def make_model(self) -> Target:
        return make_target("reference", self.profile)  # through make_target: --device webgpu shapes it too

    def make_target(self) -> Target:
        return make_target(self.target_name, self.profile)

    def agree(self, what: str, model: Any, target: Any) -> None:
        if model != target:
            raise Mismatch(f"{what}: the reference answers {model!r}, the target {target!r}")

    def both(self, what: str, call: Any) -> list[Any] | None:
        """`call(side)` on the model, then (if the model accepted it) on the target."""
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                first = call(self.sides[0])
        except SpecError as exc:
            note(f"{what}: the reference stops ({exc}); the machine makes no more calls")
            self.dead = True
            return None
        return [first, call(self.sides[1])]

    @initialize(n_backends=st.sampled_from([2, 3]))
    def start(self, n_backends: int) -> None:
        self.n_backends = n_backends
        self.sides = [Side(self.make_model(), n_backends), Side(self.make_target(), n_backends)]
        model, target = self.sides
        note(f"{n_backends} backends; init_measure with a wide graph")
        target.build(_wide(n_backends), fill=False)
        model.build(_wide(n_backends), like=target, fill=False)
        self.both("init_measure", lambda s: s.t.sched_init_measure(s.sched, self._graph(s)))

    @precondition(lambda self: not self.dead)
    @rule(data=st.data(), same_memory=st.booleans())
    def new_graph(self, data: st.DataObject, same_memory: bool) -> None:
        """A new graph on every side; with `same_memory` built in the memory of the previous one
        (the tensor context is freed and made again in the same static buffer, as whisper.cpp
        does, so the new tensors take the old ones' addresses), else beside it. rc.8, native/
        and the model key the scheduler's assignments by address (SCHED-32): a new tensor at
        an assigned old tensor's address shows the old backend until the next reset. Which old
        tensor it meets depends on the build's context layout, so the model takes the target's
        addresses (`Side.build`)."""
        case = data.draw(scope_samples(1, 5).filter(lambda c: c.setup.n_backends == self.n_backends and accepted(c)),
                         label="graph")
        self.rebuild(case.graph.spec, same_memory)

    def rebuild(self, spec: GraphSpec, same_memory: bool) -> None:
        """`new_graph`'s work for a given graph (tests/checks/test_sched_machine_pinned.py replays cases)."""
        self.spec, self.computed = spec, False
        note(f"new graph{' in the same memory' if same_memory else ''}: {[(n.name, n.op, n.srcs) for n in spec.nodes]}, "
             f"leafs {[(x.name, x.place, x.weights) for x in spec.leafs]}")
        model, target = self.sides
        if same_memory:
            target.t.context_rebuild()
            model.t.context_rebuild()
        target.build(spec)
        model.build(spec, like=target)

    @precondition(lambda self: not self.dead and self.spec is not None and not self.computed)
    @rule(data=st.data())
    def pin(self, data: st.DataObject) -> None:
        assert self.spec is not None
        names = [n.name for n in self.spec.nodes if n.op != "reshape"]
        if not names:
            return
        name = data.draw(st.sampled_from(names), label="node")
        b = data.draw(st.integers(0, self.n_backends - 1), label="backend")
        note(f"set_node_backend({name}, {b})")
        got = self.both("set_node_backend", lambda s: (
            s.t.sched_set_node_backend(s.sched, self._tensor(s, name), s.backends[b]), s.where(self._tensor(s, name)))[1])
        if got is not None:
            self.agree(f"get_node_backend({name}) after set_node_backend", *got)

    @precondition(lambda self: not self.dead and self.spec is not None and not self.computed)
    @rule()
    def compute(self) -> None:
        note("graph_compute")
        self.computed = True  # a split graph is never computed again (its copies are freed later)
        plans = self.both("graph_compute", lambda s: (
            s.t.sched_graph_compute(s.sched, self._graph(s)), s.t.sched_plan(s.sched, self._graph(s)))[1])
        if plans is not None:
            diff = difference(*plans)
            if diff is not None:
                raise Mismatch(f"the plan of graph_compute: {diff}")

    @precondition(lambda self: not self.dead)
    @rule()
    def reset(self) -> None:
        note("sched_reset")
        self.both("sched_reset", lambda s: s.t.sched_reset(s.sched))
        if self.spec is not None:
            self.query()

    @precondition(lambda self: not self.dead and self.spec is not None)
    @rule()
    def query(self) -> None:
        """get_node_backend of every node and leaf of the current graph, and get_n_splits."""
        assert self.spec is not None
        names = [x.name for x in self.spec.nodes] + [x.name for x in self.spec.leafs]
        got = self.both("get_node_backend", lambda s: [(n, s.where(self._tensor(s, n))) for n in names])
        if got is not None:
            self.agree("get_node_backend of the current graph", *got)

    @precondition(lambda self: self.dead)
    @rule()
    def stopped(self) -> None:
        """After the model refused a call nothing more is asked of either side."""

    @invariant()
    def n_splits_agree(self) -> None:
        if self.sides and not self.dead:
            got = self.both("get_n_splits", lambda s: s.t.sched_get_n_splits(s.sched))
            if got is not None:
                self.agree("get_n_splits", *got)

    def _tensor(self, s: Side, name: str) -> Handle:
        assert s.built is not None
        return s.built.tensors[name]

    def _graph(self, s: Side) -> Handle:
        assert s.built is not None
        return s.built.graph

    def teardown(self) -> None:
        for s in self.sides:
            if not self.dead:
                s.t.sched_free(s.sched)
            close = getattr(s.t, "close", None)
            if close is not None:
                close()


def sched_machine(target_name: str, profile: Profile) -> type[RuleBasedStateMachine]:
    return SchedMachine.for_target(target_name, profile)


register_machine("stateful.scheduler", CLAUSES, sched_machine)
