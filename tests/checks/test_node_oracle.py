"""checks/_graphs.py, Oracle (issue 30, class 8): each computed node is judged from its own sources as the
target computed them, within its operation's own bound, so a wrong value fails where the outputs'
chained bound (sched.py's `_tolerances`: ~1e10 through MUL_MAT -> SOFT_MAX -> MUL_MAT) cannot.
A wrong kernel is planted here by overwriting one node's result after native's CPU backend
computed it (the WebGPU kernels' planted defects: tests/native/test_webgpu_defects.py)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.checks._graphs import Oracle, Sources, raw
from ggspec.conformance.checks.sched import _tolerances, compute_each, make_backends, measure, sync_all
from ggspec.conformance.inputs.fixtures import FIXTURES
from ggspec.conformance.inputs.graphspec import Built
from ggspec.conformance.inputs.strategies import SchedGraph, SchedSetup
from ggspec.conformance.target import Handle, Target, VDevParams
from ggspec.reference.types import GGMLType, Op


def _each_node(t: Target, fixture: str) -> tuple[Oracle, list[tuple[str, str, str, Op]]]:
    """The fixture on [a plain virtual device, the CPU] through the scheduler, as
    sched.fixture_outputs runs it: at each node, where it is computed, its judgement, then its
    judgement with one element spoiled (its bytes put back after, so the next nodes read the
    right ones): (node, judgement, spoiled judgement, op)."""
    oracle = Oracle()
    g = SchedGraph(FIXTURES[fixture](2))
    run = measure(t, make_backends(t, SchedSetup((VDevParams(name="GPU0"),))), g)
    before: dict[str, Sources] = {}
    seen: list[tuple[str, str, str, Op]] = []

    def each(built: Built, name: str, ask: bool) -> bool:
        node = built.tensors[name]
        sync_all(t, run.backends)
        if ask:
            before[name] = oracle.sources(t, node)
            return True
        line = oracle.judge(t, node, before[name])
        if line.startswith(("within", "bytes as")):
            good = raw(t, node)
            _spoiled(t, node)
            seen.append((name, line, oracle.judge(t, node, before[name]), Op(t.tensor_info(node).op)))
            t.tensor_set(node, good, 0, len(good))
        elif line != "writes nothing":
            seen.append((name, line, "", Op(t.tensor_info(node).op)))
        return True

    compute_each(t, run, g, each)
    return oracle, seen


def _spoiled(t: Target, node: Handle) -> None:
    """One element of the node made wrong: an F32 value off by 1e-2 of its magnitude (and by 1e-2
    where it is 0), any other type's first byte flipped."""
    info = t.tensor_info(node)
    data = bytearray(raw(t, node))
    if info.type == int(GGMLType.F32):
        (v,) = struct.unpack_from("<f", data, 0)
        struct.pack_into("<f", data, 0, v + max(abs(v), 1.0) * 1e-2)
    else:
        data[0] ^= 0xFF
    t.tensor_set(node, bytes(data), 0, len(data))


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_every_node_is_within_its_own_bound_and_a_spoiled_one_is_not(fixture: str) -> None:
    _, seen = _each_node(make_target("native"), fixture)
    assert {Op.MUL_MAT, Op.SOFT_MAX, Op.ADD, Op.MUL, Op.NORM} <= {op for *_, op in seen}, seen
    for name, line, spoiled, _ in seen:
        assert line.startswith(("within", "bytes as")), (name, line)
        assert spoiled.startswith("off"), (name, spoiled)


def test_the_outputs_chained_bound_lets_a_wrong_value_through_and_the_node_does_not() -> None:
    """The decoder's output `out` (CPU): the chained bound allows more than 1e6 per element, so
    `out` plus 1000 everywhere would pass it; judged from its own inputs where it is computed, the
    same node with one element off by 1e-2 of its magnitude fails (the GELU and SOFT_MAX rows allow ~2e-3)."""
    t = make_target("native")
    spec = FIXTURES["decoder"](2)
    bound = _tolerances(t, spec, spec.outputs, t.cpu_init())["out"]
    assert bound.atol is not None and float(np.min(bound.atol)) > 1e6
    _, seen = _each_node(t, "decoder")
    ((_, line, spoiled, _),) = [x for x in seen if x[0] == "out"]
    assert line.startswith("within") and spoiled.startswith("off"), (line, spoiled)


def test_a_graph_record_judges_each_node_with_inexact_sources_from_them() -> None:
    """checks/_graphs.py's GraphRecorder.record (every CORE graph check): a node downstream of an
    inexact one gets a judgement from its own inputs besides its compounded Approx; spoiling the
    decoder's last MUL_MAT by 1e-2 of one element's magnitude stays inside the compounded bound
    and fails the judgement."""
    from ggspec.conformance.checks._graphs import GraphRecorder, run_spec

    t = make_target("native")
    ran = run_spec(t, FIXTURES["decoder"](2), t.cpu_init())

    def recorded() -> dict[str, object]:
        out: dict[str, object] = {}
        GraphRecorder(t).record(lambda k, v: out.__setitem__(k, v), ran.nodes)
        return out

    good = recorded()
    assert str(good["mlp1: from its inputs"]).startswith("within")
    (mlp1,) = [n for n in ran.nodes if t.tensor_name(n) == "mlp1"]
    _spoiled(t, mlp1)
    bad = recorded()
    assert str(bad["mlp1: from its inputs"]).startswith("off")
    assert bad["mlp1: values"] == good["mlp1: values"]  # the compounded bound lets it through
