"""A graph made where an earlier graph was (issue 30: found by bench/mutation.py's semantic
operators, `reset` kind).

A new graph's visited set is empty (CORE-7), whatever the memory it is made in held before. A
context rebuilt in the same memory (as whisper.cpp makes every graph in one static buffer) gives
the same tensors the same addresses, and the new graph's visited set the place of the old one's:
an implementation that does not empty the set finds every tensor "visited" already and builds an
empty graph. A context whose memory comes fresh from the allocator (the usual case in the other
checks) hides it.
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check
from ..target import Target

F32 = int(GGMLType.F32)


@check("CORE-7", "CORE-8", rounds=st.just(3))
def new_graph_in_reused_memory_starts_empty(t: Target, rec: Recorder, rounds: int) -> None:
    """`rounds` times: the tensor context is rebuilt in the same memory, the same chain
    x -> scale -> add(., x) -> cont is made in it and expanded into a new graph of 64 nodes: each
    graph holds the chain's three nodes and its leaf (deterministic)."""
    for r in range(rounds):
        t.context_rebuild()
        x = t.new_tensor(F32, (16,), "x")
        a = t.op("scale", [x], [2.0])
        b = t.op("add", [a, x], [])
        c = t.op("cont", [b], [])
        g = t.new_graph(64)
        t.build_forward_expand(g, c)
        info = t.graph_info(g)
        rec(f"round {r}: nodes, leafs", (info.n_nodes, info.n_leafs))
