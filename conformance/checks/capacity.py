"""Capacities a large graph outgrows: the scheduler's hash set (spec/sched.md, SCHED-3;
spec/core.md, CORE-11), the scheduler's split context (SCHED-40) and the CPU backend's work
memory (spec/cpu.md, CPU-20).

rc.8's scheduler sizes its node hash set once, from `sched_new`'s `graph_size`, and
`graph_compute` / `init_measure` check only the graph's *node* count against it (SCHED-27). The
graph's leafs take slots too, so a graph within SCHED-27's bound can still fill the set: the
insert that finds no free slot aborts with CORE-11's assert. The check builds a graph whose
nodes and leafs number exactly the set's slots, or one more.

rc.8's scheduler makes its copies and the allocation graph in a context over a fixed array
(SCHED-40): a one-split graph of 32,752 nodes fits, one of 32,753 does not (its allocation
graph's visited set doubles), and rc.8 dereferences the NULL its context returns. The check
builds both; each takes the reference model seconds, so it runs at `--size thorough` only.

rc.8's CPU backend does not check the allocation of its work memory; computing without it
aborts (CPU-20). A MUL_MAT of an F16 `a` and an F32 `b` of 2^59 elements each needs 2^60 bytes
to convert `b` (CORE-61), which no 64-bit allocator grants; the tensors need no memory, since the
abort comes before any node is computed.
"""

from __future__ import annotations

from ggspec.reference.graph import hash_size
from ggspec.reference.sched import MAX_SPLIT_INPUTS, MAX_SPLITS
from ggspec.reference.types import GGMLType
from hypothesis import strategies as st

from ..engine.registry import Recorder, check, example, only_at
from ..target import Target

F32 = int(GGMLType.F32)
#: sched_new's graph_size: hash_size(4 + 4096) = 8209 slots, so SCHED-27 lets through graphs of
#: up to 8209 - 4096 = 4113 nodes, and a graph of about 2,740 nodes with two leafs each fills it
GRAPH_SIZE = 4


def _node_kinds(total: int) -> tuple[int, int]:
    """(binary nodes with two leafs of their own, unary nodes with one) whose tensors number `total`."""
    unary = {0: 0, 1: 2, 2: 1}[total % 3]
    return (total - 2 * unary) // 3, unary


@check("SCHED-3", "CORE-11", extra=st.sampled_from([0, 1]))
def sched_hash_set_holds_nodes_and_leafs(t: Target, rec: Recorder, extra: int) -> None:
    """A scheduler made for graph_size 4 over the CPU measures a graph of independent nodes over
    weights leafs: `add(l, l')` and `scale(l)`, as many tensors in all as its hash set has slots
    (`extra` 0: it measures) or one more (`extra` 1: CORE-11 aborts), with far fewer nodes than
    SCHED-27 allows."""
    slots = hash_size(GRAPH_SIZE + MAX_SPLITS * MAX_SPLIT_INPUTS)
    binary, unary = _node_kinds(slots + extra)
    n_leafs = 2 * binary + unary
    cpu = t.cpu_init()
    buft = t.backend_get_default_buffer_type(cpu)
    align = t.buft_get_alignment(buft)
    buf = t.backend_alloc_buffer(cpu, (n_leafs + 1) * align)
    t.buffer_set_usage(buf, 1)  # weights: pass 1 gives their readers the CPU (SCHED-7)
    pad = (-t.buffer_get_base(buf)) % align
    leafs = [t.new_tensor(F32, (1,), f"l{i}") for i in range(n_leafs)]
    for i, leaf in enumerate(leafs):
        t.tensor_alloc(buf, leaf, pad + i * align)
    g = t.new_graph(2 * (binary + unary) + 2 * n_leafs)
    for i in range(binary):
        t.build_forward_expand(g, t.op("add", [leafs[2 * i], leafs[2 * i + 1]], []))
    for i in range(unary):
        t.build_forward_expand(g, t.op("scale", [leafs[2 * binary + i]], [2.0]))
    rec("nodes, leafs", (binary + unary, n_leafs))
    s = t.sched_new([cpu], None, GRAPH_SIZE)
    t.sched_init_measure(s, g)
    rec("n_splits", t.sched_get_n_splits(s))


#: the most nodes a one-split graph without copies may have (SCHED-40): its allocation graph of
#: 32,752 + 16 = 32,768 entries has a visited set of hash_size(65,536) = 65,537 slots
CONTEXT_NODES = 32752


@example(extra=1)  # the undefined-behaviour point under every seed (a 2-value space: both are run anyway)
@only_at("thorough", why="its two graphs of 32,752 and 32,753 nodes take the reference model about 7 s each")
@check("SCHED-40", extra=st.sampled_from([0, 1]))
def sched_context_holds_the_allocation_graph(t: Target, rec: Recorder, extra: int) -> None:
    """A CPU-only scheduler measures a chain of 32,752 + `extra` SCALE nodes over one weights
    leaf (one split, no copies): 32,752 fit the split context (`extra` 0), 32,753 do not
    (`extra` 1: the allocation graph's visited set doubles, rc.8 dereferences NULL)."""
    n = CONTEXT_NODES + extra
    cpu = t.cpu_init()
    align = t.buft_get_alignment(t.backend_get_default_buffer_type(cpu))
    buf = t.backend_alloc_buffer(cpu, 2 * align)
    t.buffer_set_usage(buf, 1)  # weights: pass 1 gives the first node the CPU, pass 2 the rest (SCHED-7)
    x = t.new_tensor(F32, (1,), "x")
    t.tensor_alloc(buf, x, (-t.buffer_get_base(buf)) % align)
    g = t.new_graph(n + 1)
    y = x
    for _ in range(n):
        y = t.op("scale", [y], [2.0])
    t.build_forward_expand(g, y)
    rec("nodes, leafs", (t.graph_info(g).n_nodes, t.graph_info(g).n_leafs))
    s = t.sched_new([cpu], None, n + 1)
    t.sched_init_measure(s, g)
    rec("n_splits", t.sched_get_n_splits(s))
    t.sched_free(s)


#: the extent of `a` and `b` whose MUL_MAT needs 2^60 bytes of work memory (b converted to F16)
HUGE = 2**59


@check("CPU-20", "CPU-17", "CPU-18", how=st.sampled_from(["graph_compute", "plan"]))
def work_memory_that_cannot_be_allocated(t: Target, rec: Recorder, how: str) -> None:
    """The CPU backend computes, directly or through a plan, a graph whose work memory cannot be
    allocated: it aborts (a plan is still created)."""
    cpu = t.cpu_init()
    a = t.new_tensor(int(GGMLType.F16), (HUGE, 1), "a")
    b = t.new_tensor(F32, (HUGE, 1), "b")
    g = t.new_graph(8)
    t.build_forward_expand(g, t.op("mul_mat", [a, b], []))
    if how == "graph_compute":
        t.backend_graph_compute(cpu, g)
        return
    plan = t.backend_graph_plan_create(cpu, g)
    rec("plan created", True)
    t.backend_graph_plan_compute(cpu, plan)
