"""One scheduler for graphs built again in the same memory (issue 30: found by
bench/mutation.py's semantic operators, `reset` kind).

A reset forgets every copy the scheduler made (SCHED-26), and graph_compute and init_measure reset
first when the scheduler has split a graph since. The copies of the split inputs live in the
scheduler's own context, which each split remakes from its start, and a copy is found by the hash
of its input's address: a copy remembered across a reset is found again only by a tensor at the
address of an earlier input, and points into the context where the new split puts other objects.
A program that builds every graph in one static buffer (as whisper.cpp does) makes exactly that:
the same graph, rebuilt in the same memory, gives each tensor its old address. The other checks
build each graph in fresh memory.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ..engine.registry import Recorder, check
from ..inputs.graphspec import GraphSpec as SchedSpec
from ..inputs.graphspec import Leaf, Node
from ..inputs.strategies import DEVICE_NAMES, SchedGraph, SchedSetup
from ..target import Target, VDevParams
from .sched import F32, compute, make_backends, measure, record_outputs


@check("SCHED-26", "SCHED-22", rounds=st.just(3))
def graphs_rebuilt_in_the_same_memory(t: Target, rec: Recorder, rounds: int) -> None:
    """[device, CPU] and one scheduler, measured once (SCHED-28) on the graph x (a CPU weight) ->
    a = 2x pinned to the device (x is copied there: a split input) -> b = 3a, built in a rebuilt
    tensor context. `rounds` times: the context is rebuilt in the same memory (the first round
    after the measure, where the measure's build was), the graph built in it and computed: b is
    right every round (deterministic)."""
    backends = make_backends(t, SchedSetup((VDevParams(name=DEVICE_NAMES[0]),)))
    spec = SchedSpec((Leaf("x", F32, (4, 2), 1, weights=True, seed=8),),
                     (Node("a", "scale", ("x",), (2.0,)), Node("b", "scale", ("a",), (3.0,))), ("b",))
    g = SchedGraph(spec, assign=(("a", 0),))
    t.context_rebuild()
    run = measure(t, backends, g)
    for _ in range(rounds):
        t.context_rebuild()
        built = compute(t, run, g)
        record_outputs(t, rec, spec, built, backends)
    t.sched_free(run.sched)
