"""What an allocator releases when it outgrows its tables (issue 30: found by bench/mutation.py's
semantic operators, `reset` kind).

A graph allocator sizes its key table from the visited set of the graph it places and, when a
graph with a larger set comes, frees the old table and makes a larger one (ALLOC-13). Freeing the
allocator then releases the table it holds (ALLOC-25). A port that drops the old table instead of
freeing it places every graph right and passes every check of a single allocation: only a cycle
that grows the table, measured for heap growth, tells.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check
from ..target import Handle, Target

F32 = int(GGMLType.F32)


def _chain_in(t: Target, sizes: tuple[int, ...]) -> list[Handle]:
    """x -> scale -> add(., x) -> cont, placed once by a measuring allocator (never freed), and
    expanded into one graph of each of `sizes` (visited sets of growing size)."""
    x = t.new_tensor(F32, (16,), "x")
    a = t.op("scale", [x], [2.0])
    b = t.op("add", [a, x], [])
    c = t.op("cont", [b], [])
    graphs = []
    for size in sizes:
        g = t.new_graph(size)
        t.build_forward_expand(g, c)
        graphs.append(g)
    t.gallocr_alloc_graph(t.gallocr_new(), t.tallocr_new_measure(64), graphs[0])
    return graphs


@check("ALLOC-25", "ALLOC-13", sizes=st.just((16, 256, 2048)))
def graph_allocator_regrowth_releases_the_old_table(t: Target, rec: Recorder, sizes: tuple[int, ...]) -> None:
    """A round: a graph allocator is made, places graphs of the same nodes with visited sets of
    growing size (each larger than the table the one before sized), one after another over a
    measuring tensor allocator, and is freed. Done once through the adapter; then, on a C target,
    many rounds through its C functions: the heap must not grow with the rounds (deterministic)."""
    from ._leaks import leaks

    graphs = _chain_in(t, sizes)
    rec("hash sizes", [t.graph_info(g).hash_size for g in graphs])
    talloc = t.tallocr_new_measure(64)
    galloc = t.gallocr_new()
    rec("sizes measured", [t.gallocr_alloc_graph(galloc, talloc, g) for g in graphs])
    t.gallocr_free(galloc)
    t.tallocr_free(talloc)

    def make_round(c: Callable[[str], Any]) -> Callable[[], None]:
        new_measure, talloc_free = c("tallocr_new_measure"), c("tallocr_free")
        new, alloc_graph, free = c("gallocr_new"), c("gallocr_alloc_graph"), c("gallocr_free")

        def one_round() -> None:
            ta = new_measure(64)
            ga = new()
            for g in graphs:
                alloc_graph(ga, ta, g)
            free(ga)
            talloc_free(ta)

        return one_round

    rec("the heap grows with the rounds", leaks(t, make_round))
