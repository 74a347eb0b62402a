"""Deterministic examples: one or more per erratum and per undefined-behaviour point a check reaches.

Hypothesis draws a check's arguments from a seed, so a rare case (an erratum that only some
graphs reach) is found by some seeds and missed by others, and the verdicts of a real build
would depend on the seed. Each example below is given to hypothesis as an explicit example of
its check (`registry.add_example`; the runner enables `Phase.explicit`), so it runs first under
every seed and every run size. Each names what it reaches on the reference under profile rc8;
tests/checks/test_seed_independence.py checks that it still does, and that an rc8 build run under
profile fixed fails exactly the erratum clauses whatever the seed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ggspec.reference.types import GGMLType, Op
from ggspec.reference.vdev import ALL_OPS

from ..engine.registry import CHECKS, add_example
from ..inputs.graphspec import GraphSpec, Leaf, Node
from ..inputs.sched_scope import ScopeCase
from ..inputs.strategies import CopyRoute, Placement, SchedCase, SchedGraph, SchedSetup, TensorSpec, ViewSpec
from ..target import VDevParams
from . import alloc, backend, copy, core, cpu, graph, graph_copy, graphcompute, ops, sched, tdata  # noqa: F401 - the checks must be registered first

F32, F16, Q4_0, I32 = int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.Q4_0), int(GGMLType.I32)
CPU = Placement("cpu")
GPU0 = VDevParams(name="GPU0")
#: in0 (F32 [4, 1], placed by the check) -> gelu n0: the smallest graph of one node
GELU_GRAPH = GraphSpec((Leaf("in0", F32, (4, 1)),), (Node("n0", "gelu", ("in0",)),), ("n0",))


def _vdev(**kw: Any) -> VDevParams:
    return VDevParams(**{"name": "VDEV", **kw})


#: (check, what the example reaches on the reference under profile rc8: (ending, clause), args)
EXAMPLES: list[tuple[str, tuple[str, str], dict[str, Any]]] = [
    # ALLOC-7: the allocation that uses up the buffer empties the free list; the next one reads
    # the entry before the list (rc8: undefined behaviour; fixed: the out-of-space assert)
    ("alloc.alloc_after_the_last_byte", ("ub", "ALLOC-7"), {"size": 1, "parts": 1, "next_size": 1}),
    # ... and a tensor of 0 bytes fits in the range that read makes: rc.8 places it at the address
    # the allocator's alignment field holds (1), fixed at the buffer's end
    ("alloc.alloc_after_the_last_byte", ("ub", "ALLOC-7"), {"size": 1, "parts": 1, "next_size": 0}),
    # ALLOC-7, the other consequence (observable, unlike the read above): once ranges are freed
    # again, rc.8 takes the highest free range for the one at the buffer's end and leaves it out
    # of the best fit, so in a buffer of the measured 36 bytes n3 aborts "needed 8, largest block
    # available 4" (rc8: the abort; fixed, and the ALLOC-7 correction alone: everything fits)
    ("alloc.measured_size_suffices", ("violation", "ALLOC-7"), {
        "placement": Placement("vdev", _vdev(alignment=1)), "seq": "none", "same_galloc": False,
        "spec": GraphSpec(
            (Leaf("x", F32, (2, 1), -1, seed=1), Leaf("i1", I32, (1,), -1, seed=2), Leaf("i2", I32, (1,), -1, seed=3)),
            (Node("n0", "gelu", ("x",)), Node("n1", "get_rows", ("x", "i1")), Node("n2", "gelu", ("x",)),
             Node("n3", "get_rows", ("n1", "i2"))), ("n0", "n2", "n3"))}),
    # ALLOC-13: one graph allocator, a graph of size 2048 then a small one reading its 8 inputs
    # in place: rc.8 clears only the small graph's part of its hash table, so an input whose slot
    # lies beyond it is found with the earlier graph's counts. Each input is still viewed by a
    # live output of the first graph (n_i, in place of in_i), so each stale entry refuses the
    # in-place reuse a fresh one allows. Which slot an input takes is its address modulo the
    # table size (4099): the 8 inputs lie 400 bytes apart in one context, so at most one of them
    # falls into the 131 slots rc.8 clears, whatever the addresses (with one input, as before
    # 2026-12-02, the example missed about one process in 30: CI's did)
    ("alloc.one_graph_allocator_many_graphs", ("ub", "ALLOC-13"), {
        "sizes": [2048], "shared": True, "placement": CPU,
        "spec": GraphSpec(
            tuple(Leaf(f"in{i}", F32, (32, 2), -1, seed=i + 1) for i in range(8)),
            tuple(Node(f"n{i}", "gelu", (f"in{i}",)) for i in range(8)), tuple(f"n{i}" for i in range(8)))}),
    # ALLOC-20: a graph input is placed only when its first reader is reached, so a node placed
    # earlier can take its memory and overwrite it before it is read
    ("alloc.inputs_are_not_overwritten", ("ok", "ALLOC-20"), {
        "preplace": frozenset(), "placement": Placement("vdev", VDevParams(name="GPU0", alignment=32, lazy=True)),
        "spec": GraphSpec(
            (Leaf("in1", F32, (4, 2), -1, seed=1678), Leaf("idx2", I32, (1,), -1, seed=1679, int_range=2),
             Leaf("in3", F32, (4, 1), -1, seed=1680)),
            (Node("n0", "get_rows", ("in1", "idx2")), Node("n1", "transpose", ("n0",)),
             Node("n2", "cpy", ("n0", "in3"))), ("n1", "n2", "n0"))}),
    # COPY-6: a copy between two devices whose source buffer has no cpy_tensor entry: rc.8 checks
    # the destination's entry and calls the source's (NULL)
    ("copy.buffer_copy_tensor_asks_the_destination", ("ub", "COPY-6"), {
        "spec": TensorSpec(F32, (4, 2)), "seed": 1,
        "route": CopyRoute("vdev", "vdev", same_device=False, same_buffer=False,
                           src_dev=_vdev(buffer_cpy_tensor=False), dst_dev=_vdev(buffer_cpy_tensor=True))}),
    # CPU-19: a plan made for a graph that is then cleared and rebuilt computes the new nodes
    ("graphcompute.plans_and_changed_graphs", ("ok", "CPU-19"),
     {"ne": (4, 1), "ops": ("add", "add"), "how": "clear and rebuild", "seed": 0}),
    # CORE-52: a same-type copy with unit steps whose shapes differ in dims 1..3 writes rows
    # past the destination's end in rc.8
    ("ops.same_type_copy_rows", ("ub", "CORE-52"), {"where": CPU, "seed": 1, "case": (1, (2, 3, 3), (2, 9, 1))}),
    # ... and rows that stay inside it but land elsewhere, on a plain virtual device: the mock
    # runs the host's CPU code, so under rc8 its rows land where rc.8's do; with --device webgpu
    # the device has kernels of its own and copies in logical order under both profiles (CI's
    # WebGPU run of rc8 drew this at seed 2687194227)
    ("ops.same_type_copy_rows", ("ok", "CORE-52"),
     {"where": Placement("vdev", _vdev()), "seed": 0, "case": (int(GGMLType.F32), (1, 2, 2), (1, 1, 4))}),
    # CORE-53: a quantized same-type copy copies 32x the blocks
    ("ops.quantized_copies_copy_blocks", ("ub", "CORE-53"),
     {"type_": Q4_0, "blocks": 1, "rows": 1, "op": "dup", "flat": False, "where": CPU, "seed": 0}),
    # SCHED-25: the callback answers false after the device split's node: rc.8 goes on with the
    # CPU split, profile fixed stops
    ("sched.eval_callback_stops", ("ok", "SCHED-25"), {"case": SchedCase(
        SchedSetup((GPU0,)),
        SchedGraph(GraphSpec((Leaf("w", F32, (4, 4), 0, weights=True, seed=1), Leaf("x", F32, (4, 2), 1, seed=2)),
                             (Node("n0", "mul_mat", ("w", "x")), Node("n1", "scale", ("n0",), (0.5,))), ("n1",)),
                   (("n1", 1),)),
        want=frozenset({"n0"}), stop=frozenset({"n0"}))}),
    # TDATA-4: tensor_set on a view not yet given to view_init (own buffer NULL): rc.8 calls
    # through the view's NULL buffer
    ("tdata.views_use_the_roots_buffer", ("ub", "TDATA-4"), {
        "placement": CPU, "rv": (TensorSpec(F32, (1,)), ViewSpec((1,), (), 0)), "init": False, "fill": b"\x00"}),
    # TDATA-6: tensor_get on such a view: rc.8 asserts the view's own buffer
    ("tdata.get_view_without_own_buffer", ("violation", "TDATA-6"),
     {"placement": CPU, "rv": (TensorSpec(F32, (1,)), ViewSpec((1,), (), 0))}),
    # BACK-14 (undefined behaviour, no erratum): a backend computing a graph in memory it cannot
    # reach: the CPU on a device's copy of the graph, a device on a graph in host memory
    *(("graphcompute.backends_compute_in_their_memory", ("ub", "BACK-14"),
       {"dst": dst, "reach": False, "spec": GELU_GRAPH}) for dst in (CPU, Placement("vdev", GPU0))),
    # SCHED-33: rc.8's scheduler gives a device nodes its supports_op refuses (the check's own
    # scenes are fixed)
    ("sched.refused_nodes_are_assigned", ("ok", "SCHED-33"), {"scene": "both"}),
    # SCHED-35: a graph whose only node is a VIEW: rc.8 computes its split through a NULL backend
    ("sched.graph_of_views_only", ("ub", "SCHED-35"), {"rows": 2}),
    # TDATA-3/7/10/12: offset SIZE_MAX - 3 with size 8 wraps in rc.8's size_t bounds test
    ("tdata.set_offset_wraps", ("ok", "TDATA-3"), {"offset": tdata.WRAPPING_OFFSET}),
    ("tdata.get_offset_wraps", ("ok", "TDATA-7"), {"offset": tdata.WRAPPING_OFFSET}),
    ("tdata.set_async_offset_wraps", ("ok", "TDATA-10"), {"offset": tdata.WRAPPING_OFFSET}),
    ("tdata.get_async_offset_wraps", ("ok", "TDATA-12"), {"offset": tdata.WRAPPING_OFFSET}),
]

for _name, _reaches, _args in EXAMPLES:
    add_example(_name, _args)


# --- exact boundaries of the bounds asserts ---------------------------------------------------------
#
# Each bounds assert gets examples *at* its boundary, on the CPU and on a device: the range that
# ends at the tensor's (or the buffer's, or the root's) last byte passes, one byte more aborts.
# F32[4] has 16 bytes; tdata's checks take `rng` = (a, b) as offset a % 17, size b % (17 - offset).

VDEV = Placement("vdev", VDevParams(name="VDEV"))
F32_4 = TensorSpec(F32, (4,))

#: (check, ending on the reference under both profiles: "ok" or the clause it aborts with, args)
BOUNDARIES: list[tuple[str, str, dict[str, Any]]] = []
for _where in (CPU, VDEV):
    for _rng in ((0, 16), (16, 0), (5, 11), (15, 1)):  # offset + size == nbytes
        BOUNDARIES.append(("tdata.set_writes_the_range", "ok",
                           {"placement": _where, "spec": F32_4, "rng": _rng, "data": b"\x01\x02"}))
        BOUNDARIES.append(("tdata.get_reads_the_range", "ok",
                           {"placement": _where, "spec": F32_4, "rng": _rng, "fill": b"\x03\x04"}))
    for _split in (0, 16, 17):  # offset + size == nbytes + 1: (0, 17), (16, 1), (17, 0)
        BOUNDARIES.append(("tdata.set_out_of_bounds", "TDATA-3",
                           {"placement": _where, "spec": F32_4, "excess": 1, "split": _split}))
        BOUNDARIES.append(("tdata.get_out_of_bounds", "TDATA-7",
                           {"placement": _where, "spec": F32_4, "excess": 1, "split": _split}))
    BOUNDARIES.append(("tdata.async_round_trip", "ok",  # set_async / get_async of [0, nbytes)
                       {"placement": _where, "spec": F32_4, "fill": b"\x05", "reuse": False}))
    BOUNDARIES.append(("tdata.set_async_out_of_bounds", "TDATA-10", {"placement": _where, "spec": F32_4, "excess": 1}))
    BOUNDARIES.append(("tdata.get_async_out_of_bounds", "TDATA-12", {"placement": _where, "spec": F32_4, "excess": 1}))
    for _slack in (0, 8):  # the tensor's alloc size ends at the buffer's last byte
        BOUNDARIES.append(("tdata.tensor_alloc_places", "ok",
                           {"placement": _where, "spec": F32_4, "where": _slack, "slack": _slack}))
    BOUNDARIES.append(("tdata.tensor_alloc_past_end", "TDATA-23", {"placement": _where, "spec": F32_4, "over": 1}))
    BOUNDARIES.append(("tdata.tensor_alloc_before_base", "TDATA-22", {"placement": _where, "spec": F32_4, "before": 1}))
    # view_init of a view that ends at its root's last byte
    BOUNDARIES.append(("tdata.view_init_places_the_view", "ok",
                       {"placement": _where, "rv": (TensorSpec(F32, (4, 2)), ViewSpec((4,), (), 16))}))
# a view one byte past its root (CORE-5, ggml_view's bounds), directly and through a first view
for _nested in (False, True):
    BOUNDARIES.append(("core.view_past_the_root", "CORE-5",
                       {"spec": F32_4, "excess": 1, "split": 3, "nested": _nested}))

for _name, _ending, _args in BOUNDARIES:
    add_example(_name, _args)


# --- differences of the version line, pinned -------------------------------------------------------
#
# A difference a known-failures file lists (conformance/known/*.toml) must show under every seed,
# or the file's own run fails under the seeds that miss it (issue 21). Each example below is the
# shrunk example of a default-size run that found it, given as an explicit example so that it
# runs first whatever the seed. They pass on rc.8 and on the reference (both profiles);
# tests/tools/test_known_files.py runs each on the builds named and checks that it still fails there.
#
# ggml-python 0.0.26 (`ggspec check --target ggml-python-0.0.26 --seed 5`, default size): its
# tallocr_max_size adds a tenth to what a measuring allocator placed (ALLOC-3 "Changed after
# rc.8"), so the buffers the scheduler and the measuring allocators size are asked about 10%
# larger (alloc_buffer 35 where rc.8 asks 32): the entry logs differ from rc.8's in every such
# example, which also keeps the runner from matching the example's erratum (SCHED-33's
# supports_op calls, ALLOC-20's overwritten inputs) to rc.8's behaviour. core.init_aborts_...:
# its ggml_aligned_malloc aborts with GGML_ASSERT(false) on the failed allocation itself.

# The pinned examples below share their devices and graphs: the names for them.

#: the scheduler checks' one device, eager and lazy (every other knob at VDevParams' defaults),
#: and one that refuses MUL_MAT
GPU0_LAZY = VDevParams(name="GPU0", lazy=True)
GPU0_NO_MUL_MAT = VDevParams(name="GPU0", ops=ALL_OPS - {Op.MUL_MAT})
ONE_GPU = SchedSetup((GPU0,))
ONE_LAZY_GPU = SchedSetup((GPU0_LAZY,))
#: w0 (F32 [4, 4], a weight on the device) times in1 (F32 [4, 1], on the CPU): the scheduler
#: checks' smallest graph that crosses the two backends
MUL_MAT_GRAPH = GraphSpec((Leaf("w0", F32, (4, 4), 0, weights=True, seed=1), Leaf("in1", F32, (4, 1), 1, seed=2)),
                          (Node("mul_mat0", "mul_mat", ("w0", "in1")),), ("mul_mat0",))


def _scales(src: str, names: tuple[str, ...]) -> tuple[Node, ...]:
    """A chain of scale(0.5) nodes: names[0] reads src, each next one the one before."""
    return tuple(Node(n, "scale", (prev,), (0.5,)) for prev, n in zip((src, *names[:-1]), names, strict=True))


def _three_scales(seed: int) -> GraphSpec:
    """x (F32 [4, 2] on the CPU) through three scale(0.5) nodes s0 -> s1 -> s2."""
    return GraphSpec((Leaf("x", F32, (4, 2), 1, seed=seed),), _scales("x", ("s0", "s1", "s2")), ("s2",))


def _case(spec: GraphSpec, assign: tuple[tuple[str, int], ...] = (), setup: SchedSetup = ONE_GPU,
          want: frozenset[str] = frozenset()) -> SchedCase:
    return SchedCase(setup, SchedGraph(spec, assign), want=want)


#: ggml-python 0.0.26: (check, args)
_PINNED_0_0_26: list[tuple[str, dict[str, Any]]] = [
    ("alloc.alloc_after_the_last_byte", {"size": 64, "parts": 1, "next_size": 0}),
    ("alloc.legacy_allocr", {
        "placement": Placement("vdev", _vdev(alignment=1, async_entries=False, buffer_cpy_tensor=False,
                                             cpy_tensor_async=False)),
        "spec": replace(GELU_GRAPH, graph_size=256),
        "how": "buffer", "seq": "none"}),
    ("alloc.reset_keeps_max_size", {"placement": CPU, "specs": [TensorSpec(F32, (1,))],
                                    "later": [TensorSpec(F32, (1,)), TensorSpec(F32, (1,))], "measure": True}),
    ("alloc.cpu_spare_bytes_after_a_compute", {"pinned_at_measure": True}),
    # copy_async's fallback to tensor_copy calls the source buffer's NULL cpy_tensor (COPY-6 kept)
    ("copy.copy_async_falls_back_to_copy", {
        "case": (CopyRoute("vdev", "vdev", same_device=False, same_buffer=False,
                           src_dev=_vdev(alignment=1, buffer_cpy_tensor=False),
                           dst_dev=VDevParams(name="GPU0", alignment=1, cpy_tensor_async=False)), "dst"),
        "spec": TensorSpec(F32, (5,)), "seed": 400796}),
    ("core.init_aborts_without_its_pool", {"mem_size": 18446744073709551600}),
    ("sched.allocation_graph", {"case": _case(MUL_MAT_GRAPH, (("mul_mat0", 0),))}),
    ("sched.assignments_after_a_compute", {"reset": False}),
    ("sched.at_the_limits", {"limits": (2, 1, 1)}),
    ("sched.compute_copies_then_runs", {"case": _case(GraphSpec(
        (Leaf("w0", F16, (4, 4), 1, weights=True, seed=1), Leaf("in1", F32, (4, 1), 1, seed=2),
         Leaf("cvt2", F32, (4, 4), seed=3)),
        (Node("mul_mat0", "mul_mat", ("w0", "in1")), Node("scale1", "scale", ("mul_mat0",), (0.5,)),
         Node("cpy2", "cpy", ("w0", "cvt2")), Node("scale3", "scale", ("in1",), (0.5,))),
        ("scale1", "cpy2", "scale3")), (("scale1", 0),), ONE_LAZY_GPU)}),
    ("sched.computing_a_split_graph_again", {"again": "graph_compute"}),
    ("sched.construction_and_measure", {"case": _case(MUL_MAT_GRAPH), "explicit": False}),
    ("sched.copies_of_inputs_with_long_names", {"extra": 7}),
    ("sched.cpu_first_device_last", {"pin_cpu": True}),
    ("sched.eval_callback_batches", {"case": _case(_three_scales(4), (("s0", 0), ("s1", 0), ("s2", 0)), ONE_LAZY_GPU,
                                                   want=frozenset({"s1"}))}),
    ("sched.every_source_slot", {"device": GPU0}),
    ("sched.failed_split_is_taken_as_computed", {"fails": True}),
    *((f"sched.fixture_{what}", {"fixture": ("decoder", ONE_GPU)}) for what in ("copies", "inputs", "outputs", "plan")),
    *((name, {"case": _case(MUL_MAT_GRAPH)}) for name in (
        "sched.n_splits_of_the_last_split", "sched.node_assignments", "sched.pass1_preallocated_and_weights",
        "sched.pass2_any_down", "sched.pass2_any_up")),
    ("sched.pass2_devices_down", {"case": _case(GraphSpec(
        (Leaf("w", F16, (4, 4), 0, weights=True, seed=1), Leaf("x", F32, (4, 1), 1, seed=2)),
        (Node("mm", "mul_mat", ("w", "x")), Node("c", "cont", ("mm",))), ("c",)), setup=SchedSetup((GPU0_NO_MUL_MAT,)))}),
    ("sched.pass2_devices_up", {"case": _case(_three_scales(3), (("s0", 0), ("s2", 1)))}),
    ("sched.pass3_views_and_sources", {"case": _case(GraphSpec(
        (Leaf("l", F32, (4, 2), seed=2), Leaf("y", F32, (4, 2), 1, seed=3)), (Node("n0", "add", ("l", "y")),), ("n0",)),
        (("n0", 0),))}),
    ("sched.pass4_copies", {"case": _case(MUL_MAT_GRAPH, (("mul_mat0", 0),))}),
    ("sched.pass4_inputs_once", {"case": _case(MUL_MAT_GRAPH, (("mul_mat0", 0),))}),
    ("sched.pass4_splits", {"case": _case(GraphSpec(
        (Leaf("x", F32, (4, 2), 1, seed=5),),
        (Node("s0", "scale", ("x",), (0.5,)), Node("r", "reshape", ("s0",), (8.0,)), Node("s1", "scale", ("r",), (2.0,))),
        ("s1",)), (("s0", 1), ("s1", 0)))}),
    ("sched.reset_forgets", {"case": _case(MUL_MAT_GRAPH), "reset_first": False}),
    ("sched.small_scope_sampled", {"case": ScopeCase(ONE_GPU, SchedGraph(GraphSpec(
        (Leaf("a", F32, (4, 2), 0, weights=True, seed=1),),
        tuple(Node(f"s{i}", "scale", ("a",), (0.5,)) for i in range(4)), ("s0", "s1", "s2", "s3"), graph_size=64)))}),
    # its tensor_get calls the view's own buffer's entry (the device's) with the root's CPU buffer
    # (an explicit example of the check already; listed here for the build test)
    ("tdata.view_init_into_another_buffer", {"other": "vdev"}),
]

# ggml-python 0.0.36 and 0.0.37 (`--seed 5`, default size): their ggml.c's soft_max_ext asserts that the mask has
# at least the input's rows (mask->ne[1] >= a->ne[1]); rc.8 takes a mask of one row, so the soft_max
# checks and the graph checks whose graphs hold such a soft_max abort there.

#: a mask of one row (F32 [4]) for a soft_max_ext of more rows
MASK2 = Leaf("mask2", F32, (4,), 0, seed=2)

#: ggml-python 0.0.36 and 0.0.37: (check, args)
_PINNED_0_0_37: list[tuple[str, dict[str, Any]]] = [
    ("graph.expansion_order", {
        "spec": GraphSpec((Leaf("in0", F16, (4,), 0), Leaf("in1", F32, (4, 2, 1, 2), 0, seed=1), MASK2),
                          (Node("n0", "soft_max_ext", ("in1", "mask2"), (1.0,)),), ("n0",)),
        "order": 0, "unnamed": set(), "again": []}),
    ("graph.graph_view_shares_the_nodes", {
        "spec": GraphSpec((Leaf("in0", F16, (4, 2), 0), Leaf("dst1", F32, (4, 2), 0, seed=1), MASK2),
                          (Node("n0", "cpy", ("in0", "dst1")), Node("n1", "soft_max_ext", ("n0", "mask2"), (1.0,))),
                          ("n1",)),
        "cut": (0, 0)}),
    ("ops.soft_max_keeps_mask_and_scale", {"shapes": ((1, 2, 1, 1), (1, 1)), "ext": True, "scale": 0.0, "memory": False}),
    # ... and both dropped GGML_OP_ALIBI: a node given rc.8's ALIBI number is a CLAMP there
    ("backend.supports_op_is_the_entry", {"ops": frozenset(), "asked": [Op.ALIBI]}),
    ("graph.graph_clear_empties_the_graph", {
        "spec": GraphSpec((Leaf("in0", F32, (4, 2, 1, 2), 0), Leaf("mask1", F32, (4,), 0, seed=1)),
                          (Node("n0", "soft_max_ext", ("in0", "mask1"), (1.0,)),), ("n0",)),
        "again": 0}),
]

# ggml-python 0.0.31 to 0.0.37 (seen on 0.0.37, `--seed 1`, default size; the same lines in each sdist's
# ggml-backend.c): ggml_backend_graph_compute is graph_compute_async then
# ggml_backend_synchronize, so every compute on a device logs one synchronize more than rc.8's; its
# tensor_copy_async takes both backends and calls the destination's cpy_tensor_async without
# asking supports_backend. Each check below, on the smallest device (VDEV_PLAIN), shows it.

#: the smallest virtual device the checks draw: alignment 1, no async entries, no buffer copies
VDEV_PLAIN = _vdev(alignment=1, async_entries=False, buffer_cpy_tensor=False, cpy_tensor_async=False)
ON_VDEV_PLAIN = Placement("vdev", VDEV_PLAIN)

#: the builds whose graph_compute synchronizes (and whose copy_async takes two backends)
SYNC_BUILDS = tuple(f"ggml-python-0.0.{v}" for v in range(31, 38))
#: the builds of 0.0.27's ggml-alloc rewrite (the linear tallocr that alloc_ctx_tensors uses)
REWRITE_BUILDS = tuple(f"ggml-python-0.0.{v}" for v in range(27, 38))

#: ggml-python 0.0.31 to 0.0.37: (check, args)
_PINNED_0_0_37_SYNC: list[tuple[str, dict[str, Any]]] = [
    ("copy.copy_async_queues_a_device_copy", {
        "route": CopyRoute("vdev", "vdev", same_device=True, same_buffer=False,
                           src_dev=replace(VDEV_PLAIN, cpy_tensor_async=True),
                           dst_dev=replace(VDEV_PLAIN, cpy_tensor_async=True)),
        "spec": TensorSpec(F32, (1,)), "seed": 0}),
    ("graph.random_graphs_compute", {
        "spec": GraphSpec((Leaf("in0", F32, (4,), 0),), (Node("n0", "add", ("in0", "in0")),), ("n0",)),
        "device": VDEV_PLAIN}),
    ("graphcompute.compute_ignores_supports_op", {"spec": replace(GELU_GRAPH, graph_size=256),
                                                  "device": replace(VDEV_PLAIN, ops=frozenset())}),
    ("graphcompute.plans_compute_what_graph_compute_computes", {
        "placement": ON_VDEV_PLAIN, "spec": replace(GELU_GRAPH, graph_size=256), "repeat": 1}),
    ("ops.activations_compute", {"a": TensorSpec(F32, (1,)), "op": "gelu", "how": "root", "where": ON_VDEV_PLAIN,
                                 "seed": 0, "spread": 0}),
    *((f"ops.{op}_computes", {"case": (0, 0, (1, 1, 1), (1, 1, 1), "root", "root"), "where": ON_VDEV_PLAIN,
                              "seed": 0, "spread": 0}) for op in ("add", "mul")),
    ("ops.copies_go_in_logical_order", {"case": (0, (1, 1, 1), "root", (0, 1, 2, 3), "cpy", 0, "same shape"),
                                        "where": ON_VDEV_PLAIN, "seed": 0}),
    ("ops.dequantization", {"type_": Q4_0, "blocks": 1, "rows": 1, "n": 1, "where": ON_VDEV_PLAIN, "seed": 0}),
    ("ops.f16_conversion", {"bits": [0], "halves": [0], "where": ON_VDEV_PLAIN}),
    ("ops.get_rows_computes", {"shapes": (0, (1, 1, 1, 1), (1, 1, 1)), "padded": False, "where": ON_VDEV_PLAIN,
                               "seed": 0}),
    ("ops.mul_mat_computes", {"case": (0, 0, (1, 1, 1, 1), (1, 1, 1, 1), False, False), "where": ON_VDEV_PLAIN,
                              "seed": 0, "spread": 0}),
    ("ops.norm_computes", {"a": TensorSpec(F32, (1,)), "eps": 1e-05, "constant": False, "where": ON_VDEV_PLAIN,
                           "seed": 0, "spread": 0}),
    ("ops.quantization", {"blocks": [[0.0] * 32], "type_": Q4_0, "src_type": F32, "rows": 1, "where": ON_VDEV_PLAIN}),
    ("ops.quantized_dot_products", {"type_": Q4_0, "blocks": 1, "m": 1, "n": 1, "b_blocks": False,
                                    "where": ON_VDEV_PLAIN, "seed": 0, "spread": 0}),
    ("ops.scale_computes", {"a": TensorSpec(F32, (1,)), "s": 0.0, "where": ON_VDEV_PLAIN, "seed": 0, "spread": 0}),
    ("ops.soft_max_computes", {"shapes": ((1, 1, 1, 1), None), "scale": 1.0, "masked": 0, "where": ON_VDEV_PLAIN,
                               "seed": 0, "spread": 0}),  # seen on 0.0.31
]

# ggml-python 0.0.27's rewrite of ggml-alloc, in 0.0.27 to 0.0.37 (seen on 0.0.30 and 0.0.37, `--seed 1`, default
# size; the same code in each sdist): graph_copy places
# the device's copy with alloc_ctx_tensors, whose linear tallocr never resets the buffer and asks
# get_base for every tensor, so the device's entry log differs from rc.8's once the device
# computes its own copy (reach=True).

#: (check, the builds whose file lists it, args)
_PINNED_REWRITE: list[tuple[str, tuple[str, ...], dict[str, Any]]] = [
    ("graphcompute.backends_compute_in_their_memory", REWRITE_BUILDS, {
        "dst": ON_VDEV_PLAIN,
        "spec": replace(GELU_GRAPH, graph_size=256), "reach": True}),
]

#: pinned for 0.0.26 and listed by later files too: check -> those builds
_ALSO: dict[str, tuple[str, ...]] = {
    "sched.copies_of_inputs_with_long_names": ("ggml-python-0.0.27", "ggml-python-0.0.30", *SYNC_BUILDS),
    "sched.allocation_graph": SYNC_BUILDS[:-1],
    "tdata.view_init_into_another_buffer": tuple(f"ggml-python-0.0.{v}" for v in (25, 27, 28, 29, 30)),
    "copy.copy_async_falls_back_to_copy": ("ggml-python-0.0.25",)}

#: (check, the builds whose known-failures file lists the difference, args)
VERSION_DIFFERENCES: list[tuple[str, tuple[str, ...], dict[str, Any]]] = [
    *((name, ("ggml-python-0.0.26", *_ALSO.get(name, ())), args) for name, args in _PINNED_0_0_26
      if name != "core.init_aborts_without_its_pool"),
    # from 0.0.26 to 0.0.37 ggml_aligned_malloc itself aborts (GGML_ASSERT(false)) on a failed allocation;
    # 0.0.25, llama-cpp-python 0.2.30 and rc.8 return NULL to ggml_init's assert (read in each sdist's ggml.c)
    ("core.init_aborts_without_its_pool", tuple(f"ggml-python-0.0.{v}" for v in range(26, 38)),
     {"mem_size": 18446744073709551600}),
    *((name, ("ggml-python-0.0.36", "ggml-python-0.0.37"), args) for name, args in _PINNED_0_0_37),
    *((name, SYNC_BUILDS, args) for name, args in _PINNED_0_0_37_SYNC),
    *_PINNED_REWRITE,
    # every version keeps erratum COPY-6 (ggml_backend_buffer_copy_tensor asks the destination buffer's cpy_tensor
    # entry and calls the source's; read in each sdist's ggml-backend.c): tensor_copy between two devices whose
    # source has no entry dies there (SIGSEGV on each build), and each file lists COPY-7 for it, which drawn
    # routes reach under some seeds only (0.0.25/0.0.27 --seed 11, 0.0.28 --seed 11: COPY-7 xpassed)
    ("copy.device_to_device_copy", tuple(f"ggml-python-0.0.{v}" for v in range(25, 38)), {
        "route": CopyRoute("vdev", "vdev", same_device=False, same_buffer=False,
                           src_dev=_vdev(alignment=1, buffer_cpy_tensor=False), dst_dev=VDevParams(name="GPU0", alignment=1)),
        "spec": TensorSpec(F32, (4,)), "seed": 0}),
    # ... and buffer_copy_tensor from such a device into a CPU tensor (CPU-9: the CPU buffer's cpy_tensor answers
    # false for a device source, which these builds never ask): SIGSEGV on 0.0.25/0.0.26, whose files list CPU-9 for
    # COPY-6; drawn examples reach it under some seeds only (CPU-9 xpassed on both under --seed 20261130). Later builds
    # crash on it too (replayed on 0.0.27, 0.0.31, 0.0.37); their files list CPU-9 for the CPU buffer's layout, which
    # the check's own explicit example shows under every seed
    ("cpu.cpy_tensor_takes_host_sources", ("ggml-python-0.0.25", "ggml-python-0.0.26"), {
        "case": "device", "spec": TensorSpec(F32, (4,)), "seed": 0, "device": _vdev(buffer_cpy_tensor=False)}),
    # ... and inside graph_copy from such a device to another (0.0.25 --seed 5: GCOPY-1/3/5 xpassed); from 0.0.27 these
    # two checks need ggml_tallocr_new_from_buft, which the rewrite dropped (unsupported there)
    *((name, ("ggml-python-0.0.25", "ggml-python-0.0.26"), {
        "src": Placement("vdev", _vdev(alignment=1, buffer_cpy_tensor=False)),
        "dst": Placement("vdev", VDevParams(name="GPU0", alignment=1)), "spec": replace(GELU_GRAPH, graph_size=256),
        "compute": False}) for name in ("gcopy.copy_rebuilds_the_graph", "gcopy.copy_carries_the_data"))]

for _name, _targets, _args in VERSION_DIFFERENCES:
    if _args not in CHECKS[_name].examples:  # a check's own @example is not given twice
        add_example(_name, _args)


#: (check, args): cases a run with `--device webgpu` reaches only where a plain virtual device is
#: drawn (that device is then WebGPU), pinned so that every seed's run reaches them; each runs
#: on the mock too, in every run
DEVICE_CASES: list[tuple[str, dict[str, Any]]] = [
    # BACK-9: WebGPU reads a get_async back at synchronize, the eager mock at once; before
    # synchronize the host block is the mock's to define, not observable on a real device (CI's
    # WebGPU runs of native and rc8 drew this at seed 769134631, before that reading was the mock's)
    ("backend.synchronize_completes_pending_work", {"device": _vdev(), "spec": TensorSpec(F32, (1,)), "seed": 0}),
]

for _name, _args in DEVICE_CASES:
    add_example(_name, _args)
