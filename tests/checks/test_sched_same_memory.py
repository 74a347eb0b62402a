"""A graph rebuilt in the same memory (as whisper.cpp builds every graph in one static buffer):
rc.8's scheduler keys its assignments by tensor address, so until the next reset a tensor of the
new graph at an old tensor's address shows the old tensor's backend (get_node_backend). native/
does the same, and so does the reference model (SCHED-32: its hash set keys a tensor by its
address in its context's memory, and `context_rebuild` reuses the old context's memory), under
both profiles. The rc8 test skips only when npm or the network to the npm registry is missing.
"""

from __future__ import annotations

from typing import Any

import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.checks.sched_machine import Side, _wide
from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node, build
from ggspec.conformance.target import Target
from ggspec.reference.clauses import Profile
from ggspec.reference.tensor import Tensor
from ggspec.reference.types import GGMLType

F32 = int(GGMLType.F32)
SPEC = GraphSpec((Leaf("a", F32, (4, 2), 0, weights=True, seed=1), Leaf("b", F32, (4, 2), 0, weights=True, seed=2)),
                 (Node("s0", "scale", ("a",), (0.5,)), Node("add1", "add", ("s0", "b"))), ("add1",), graph_size=64)
NAMES = ("a", "b", "s0", "add1")


def _address(t: Target, tensor: object) -> int:
    """The tensor struct's address: the C pointer, or the reference tensor's `addr`."""
    if isinstance(tensor, Tensor):
        return tensor.addr
    return int(t.ffi.cast("uintptr_t", tensor))  # type: ignore[attr-defined]


def _stale(name: str, profile: Profile | None) -> tuple[list[int], list[bool], list[int], list[int]]:
    """(backends after graph_compute, same addresses?, backends of the rebuild before and after
    sched_reset)."""
    t = make_target(name, profile)
    s = Side(t, 2)
    t.sched_init_measure(s.sched, build(t, _wide(2), s.backends, fill=False, weights_apart=True).graph)
    t.context_rebuild()
    first = build(t, SPEC, s.backends, weights_apart=True)
    t.sched_graph_compute(s.sched, first.graph)
    computed = [s.where(first.tensors[n]) for n in NAMES]
    old = [_address(t, first.tensors[n]) for n in NAMES]
    t.context_rebuild()
    again = build(t, SPEC, s.backends, weights_apart=True)
    same = [_address(t, again.tensors[n]) == a for n, a in zip(NAMES, old, strict=True)]
    before = [s.where(again.tensors[n]) for n in NAMES]
    t.sched_reset(s.sched)
    after = [s.where(again.tensors[n]) for n in NAMES]
    return computed, same, before, after


@pytest.mark.parametrize(("name", "profile"), [("reference", Profile.FIXED), ("reference", Profile.RC8),
                                              ("native", None), ("rc8", None)])
def test_a_rebuild_in_the_same_memory_sees_the_last_assignments(name: str, profile: Profile | None,
                                                                 rc8_or_skip: Any) -> None:
    rc8_or_skip.target(name)
    computed, same, before, after = _stale(name, profile)
    assert computed == [0, 0, 0, 0] and all(same)
    assert before == computed  # keyed by address: the old graph's backends
    assert after == [-1, -1, -1, -1]  # sched_reset forgets them
