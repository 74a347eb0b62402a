"""Deterministic examples: one or more per erratum and per undefined-behaviour point a check reaches.

Hypothesis draws a check's arguments from a seed, so a rare case (an erratum that only some
graphs reach) is found by some seeds and missed by others, and the verdicts of a real build
would depend on the seed. Each example below is given to hypothesis as an explicit example of
its check (`registry.add_example`; the runner enables `Phase.explicit`), so it runs first under
every seed and every run size. Each names what it reaches on the reference under profile rc8;
tests/test_seed_independence.py checks that it still does, and that an rc8 build run under
profile fixed fails exactly the erratum clauses whatever the seed.
"""

from __future__ import annotations

from typing import Any

from ggspec.reference.types import GGMLType, Op
from ggspec.reference.vdev import ALL_OPS

from ..engine.registry import add_example
from ..inputs.graphspec import GraphSpec, Leaf, Node
from ..inputs.sched_scope import ScopeCase
from ..inputs.strategies import CopyRoute, Placement, SchedCase, SchedGraph, SchedSetup, TensorSpec, ViewSpec
from ..target import VDevParams
from . import alloc, copy, core, graph, graphcompute, ops, sched, tdata  # noqa: F401 - the checks must be registered first

F32, Q4_0, I32 = int(GGMLType.F32), int(GGMLType.Q4_0), int(GGMLType.I32)
CPU = Placement("cpu")
GPU0 = VDevParams(name="GPU0")


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
    # in place: rc.8 clears only the small graph's part of its hash table, so inputs whose slot
    # lies beyond it are found with the earlier graph's counts (and are not reused in place)
    ("alloc.one_graph_allocator_many_graphs", ("ub", "ALLOC-13"), {
        "sizes": [2048], "shared": True, "placement": CPU,
        "spec": GraphSpec(
            tuple(Leaf(f"in{i}", F32, (32, 2), -1, seed=i + 1) for i in range(8)),
            (Node("n0", "add", ("in0", "in1")),
             *(Node(f"n{i - 1}", "add", (f"n{i - 2}", f"in{i}")) for i in range(2, 8))), ("n6",))}),
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
    ("graphcompute.backends_compute_in_their_memory", ("ub", "BACK-14"), {
        "dst": CPU, "reach": False, "spec": GraphSpec((Leaf("in0", F32, (4, 1), -1, seed=0),),
                                                      (Node("n0", "gelu", ("in0",)),), ("n0",))}),
    ("graphcompute.backends_compute_in_their_memory", ("ub", "BACK-14"), {
        "dst": Placement("vdev", GPU0), "reach": False, "spec": GraphSpec((Leaf("in0", F32, (4, 1), -1, seed=0),),
                                                                          (Node("n0", "gelu", ("in0",)),), ("n0",))}),
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
# tests/test_known_files.py runs each on the builds named and checks that it still fails there.
#
# ggml-python 0.0.26 (`ggspec check --target ggml-python-0.0.26 --seed 5`, default size): its
# tallocr_max_size adds a tenth to what a measuring allocator placed (ALLOC-3 "Changed after
# rc.8"), so the buffers the scheduler and the measuring allocators size are asked about 10%
# larger (alloc_buffer 35 where rc.8 asks 32): the entry logs differ from rc.8's in every such
# example, which also keeps the runner from matching the example's erratum (SCHED-33's
# supports_op calls, ALLOC-20's overwritten inputs) to rc.8's behaviour. core.init_aborts_...:
# its ggml_aligned_malloc aborts with GGML_ASSERT(false) on the failed allocation itself.

#: ggml-python 0.0.26: (check, args)
_PINNED_0_0_26: list[tuple[str, dict[str, Any]]] = [
    ("alloc.alloc_after_the_last_byte", {"size": 64, "parts": 1, "next_size": 0}),
    (
        "alloc.legacy_allocr",
        {
            "placement": Placement(
                kind="vdev",
                vdev=VDevParams(
                    name="VDEV",
                    alignment=1,
                    lazy=False,
                    async_entries=False,
                    buffer_cpy_tensor=False,
                    cpy_tensor_async=False,
                    alloc_pad=0,
                    ops=ALL_OPS,
                ),
            ),
            "spec": GraphSpec(
                leafs=(Leaf(name="in0", type=0, ne=(4, 1), place=-1, weights=False, seed=0, int_range=1),),
                nodes=(Node(name="n0", op="gelu", srcs=("in0",), params=()),),
                outputs=("n0",),
                graph_size=256,
            ),
            "how": "buffer",
            "seq": "none",
        },
    ),
    (
        "alloc.reset_keeps_max_size",
        {
            "placement": Placement(kind="cpu", vdev=None),
            "specs": [TensorSpec(type=0, ne=(1,))],
            "later": [TensorSpec(type=0, ne=(1,)), TensorSpec(type=0, ne=(1,))],
            "measure": True,
        },
    ),
    ("core.init_aborts_without_its_pool", {"mem_size": 18446744073709551600}),
    (
        "sched.allocation_graph",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(("mul_mat0", 0),),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    ("sched.assignments_after_a_compute", {"reset": False}),
    ("sched.at_the_limits", {"limits": (2, 1, 1)}),
    (
        "sched.compute_copies_then_runs",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=True,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=1, ne=(4, 4), place=1, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                            Leaf(name="cvt2", type=0, ne=(4, 4), place=-1, weights=False, seed=3, int_range=1),
                        ),
                        nodes=(
                            Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),
                            Node(name="scale1", op="scale", srcs=("mul_mat0",), params=(0.5,)),
                            Node(name="cpy2", op="cpy", srcs=("w0", "cvt2"), params=()),
                            Node(name="scale3", op="scale", srcs=("in1",), params=(0.5,)),
                        ),
                        outputs=("scale1", "cpy2", "scale3"),
                        graph_size=2048,
                    ),
                    assign=(("scale1", 0),),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    ("sched.copies_of_inputs_with_long_names", {"extra": 7}),
    ("sched.cpu_first_device_last", {"pin_cpu": True}),
    (
        "sched.eval_callback_batches",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=True,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(Leaf(name="x", type=0, ne=(4, 2), place=1, weights=False, seed=4, int_range=1),),
                        nodes=(
                            Node(name="s0", op="scale", srcs=("x",), params=(0.5,)),
                            Node(name="s1", op="scale", srcs=("s0",), params=(0.5,)),
                            Node(name="s2", op="scale", srcs=("s1",), params=(0.5,)),
                        ),
                        outputs=("s2",),
                        graph_size=2048,
                    ),
                    assign=(("s0", 0), ("s1", 0), ("s2", 0)),
                    caches=(),
                ),
                want=frozenset({"s1"}),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.every_source_slot",
        {
            "device": VDevParams(
                name="GPU0",
                alignment=32,
                lazy=False,
                async_entries=True,
                buffer_cpy_tensor=True,
                cpy_tensor_async=True,
                alloc_pad=0,
                ops=ALL_OPS,
            )
        },
    ),
    ("sched.failed_split_is_taken_as_computed", {"fails": True}),
    (
        "sched.fixture_copies",
        {
            "fixture": (
                "decoder",
                SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
            )
        },
    ),
    (
        "sched.fixture_inputs",
        {
            "fixture": (
                "decoder",
                SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
            )
        },
    ),
    (
        "sched.fixture_outputs",
        {
            "fixture": (
                "decoder",
                SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
            )
        },
    ),
    (
        "sched.fixture_plan",
        {
            "fixture": (
                "decoder",
                SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
            )
        },
    ),
    (
        "sched.n_splits_of_the_last_split",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.node_assignments",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass1_preallocated_and_weights",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass2_any_down",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass2_any_up",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass2_devices_down",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=frozenset(
                                {
                                    Op.NONE,
                                    Op.DUP,
                                    Op.ADD,
                                    Op.ADD1,
                                    Op.ACC,
                                    Op.SUB,
                                    Op.MUL,
                                    Op.DIV,
                                    Op.SQR,
                                    Op.SQRT,
                                    Op.LOG,
                                    Op.SUM,
                                    Op.SUM_ROWS,
                                    Op.MEAN,
                                    Op.ARGMAX,
                                    Op.REPEAT,
                                    Op.REPEAT_BACK,
                                    Op.CONCAT,
                                    Op.SILU_BACK,
                                    Op.NORM,
                                    Op.RMS_NORM,
                                    Op.RMS_NORM_BACK,
                                    Op.GROUP_NORM,
                                    Op.MUL_MAT_ID,
                                    Op.OUT_PROD,
                                    Op.SCALE,
                                    Op.SET,
                                    Op.CPY,
                                    Op.CONT,
                                    Op.RESHAPE,
                                    Op.VIEW,
                                    Op.PERMUTE,
                                    Op.TRANSPOSE,
                                    Op.GET_ROWS,
                                    Op.GET_ROWS_BACK,
                                    Op.DIAG,
                                    Op.DIAG_MASK_INF,
                                    Op.DIAG_MASK_ZERO,
                                    Op.SOFT_MAX,
                                    Op.SOFT_MAX_BACK,
                                    Op.ROPE,
                                    Op.ROPE_BACK,
                                    Op.ALIBI,
                                    Op.CLAMP,
                                    Op.CONV_TRANSPOSE_1D,
                                    Op.IM2COL,
                                    Op.CONV_TRANSPOSE_2D,
                                    Op.POOL_1D,
                                    Op.POOL_2D,
                                    Op.UPSCALE,
                                    Op.PAD,
                                    Op.ARGSORT,
                                    Op.LEAKY_RELU,
                                    Op.FLASH_ATTN,
                                    Op.FLASH_FF,
                                    Op.FLASH_ATTN_BACK,
                                    Op.WIN_PART,
                                    Op.WIN_UNPART,
                                    Op.GET_REL_POS,
                                    Op.ADD_REL_POS,
                                    Op.UNARY,
                                    Op.MAP_UNARY,
                                    Op.MAP_BINARY,
                                    Op.MAP_CUSTOM1_F32,
                                    Op.MAP_CUSTOM2_F32,
                                    Op.MAP_CUSTOM3_F32,
                                    Op.MAP_CUSTOM1,
                                    Op.MAP_CUSTOM2,
                                    Op.MAP_CUSTOM3,
                                    Op.CROSS_ENTROPY_LOSS,
                                    Op.CROSS_ENTROPY_LOSS_BACK,
                                    Op.COUNT,
                                }
                            ),
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w", type=1, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="x", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(
                            Node(name="mm", op="mul_mat", srcs=("w", "x"), params=()),
                            Node(name="c", op="cont", srcs=("mm",), params=()),
                        ),
                        outputs=("c",),
                        graph_size=2048,
                    ),
                    assign=(),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass2_devices_up",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(Leaf(name="x", type=0, ne=(4, 2), place=1, weights=False, seed=3, int_range=1),),
                        nodes=(
                            Node(name="s0", op="scale", srcs=("x",), params=(0.5,)),
                            Node(name="s1", op="scale", srcs=("s0",), params=(0.5,)),
                            Node(name="s2", op="scale", srcs=("s1",), params=(0.5,)),
                        ),
                        outputs=("s2",),
                        graph_size=2048,
                    ),
                    assign=(("s0", 0), ("s2", 1)),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass3_views_and_sources",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="l", type=0, ne=(4, 2), place=-1, weights=False, seed=2, int_range=1),
                            Leaf(name="y", type=0, ne=(4, 2), place=1, weights=False, seed=3, int_range=1),
                        ),
                        nodes=(Node(name="n0", op="add", srcs=("l", "y"), params=()),),
                        outputs=("n0",),
                        graph_size=2048,
                    ),
                    assign=(("n0", 0),),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass4_copies",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(("mul_mat0", 0),),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass4_inputs_once",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(("mul_mat0", 0),),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.pass4_splits",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(Leaf(name="x", type=0, ne=(4, 2), place=1, weights=False, seed=5, int_range=1),),
                        nodes=(
                            Node(name="s0", op="scale", srcs=("x",), params=(0.5,)),
                            Node(name="r", op="reshape", srcs=("s0",), params=(8.0,)),
                            Node(name="s1", op="scale", srcs=("r",), params=(2.0,)),
                        ),
                        outputs=("s1",),
                        graph_size=2048,
                    ),
                    assign=(("s0", 1), ("s1", 0)),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            )
        },
    ),
    (
        "sched.reset_forgets",
        {
            "case": SchedCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(
                            Leaf(name="w0", type=0, ne=(4, 4), place=0, weights=True, seed=1, int_range=1),
                            Leaf(name="in1", type=0, ne=(4, 1), place=1, weights=False, seed=2, int_range=1),
                        ),
                        nodes=(Node(name="mul_mat0", op="mul_mat", srcs=("w0", "in1"), params=()),),
                        outputs=("mul_mat0",),
                        graph_size=2048,
                    ),
                    assign=(),
                    caches=(),
                ),
                want=frozenset(),
                stop=frozenset(),
            ),
            "reset_first": False,
        },
    ),
    (
        "sched.small_scope_sampled",
        {
            "case": ScopeCase(
                setup=SchedSetup(
                    devices=(
                        VDevParams(
                            name="GPU0",
                            alignment=32,
                            lazy=False,
                            async_entries=True,
                            buffer_cpy_tensor=True,
                            cpy_tensor_async=True,
                            alloc_pad=0,
                            ops=ALL_OPS,
                        ),
                    )
                ),
                graph=SchedGraph(
                    spec=GraphSpec(
                        leafs=(Leaf(name="a", type=0, ne=(4, 2), place=0, weights=True, seed=1, int_range=1),),
                        nodes=(
                            Node(name="s0", op="scale", srcs=("a",), params=(0.5,)),
                            Node(name="s1", op="scale", srcs=("a",), params=(0.5,)),
                            Node(name="s2", op="scale", srcs=("a",), params=(0.5,)),
                            Node(name="s3", op="scale", srcs=("a",), params=(0.5,)),
                        ),
                        outputs=("s0", "s1", "s2", "s3"),
                        graph_size=64,
                    ),
                    assign=(),
                    caches=(),
                ),
            )
        },
    ),
]

# ggml-python 0.0.36 and 0.0.37 (`--seed 5`, default size): their ggml.c's soft_max_ext asserts that the mask has
# at least the input's rows (mask->ne[1] >= a->ne[1]); rc.8 takes a mask of one row, so the soft_max
# checks and the graph checks whose graphs hold such a soft_max abort there.

#: ggml-python 0.0.36 and 0.0.37: (check, args)
_PINNED_0_0_37: list[tuple[str, dict[str, Any]]] = [
    (
        "graph.expansion_order",
        {
            "spec": GraphSpec(
                leafs=(
                    Leaf(name="in0", type=1, ne=(4,), place=0, weights=False, seed=0, int_range=1),
                    Leaf(name="in1", type=0, ne=(4, 2, 1, 2), place=0, weights=False, seed=1, int_range=1),
                    Leaf(name="mask2", type=0, ne=(4,), place=0, weights=False, seed=2, int_range=1),
                ),
                nodes=(Node(name="n0", op="soft_max_ext", srcs=("in1", "mask2"), params=(1.0,)),),
                outputs=("n0",),
                graph_size=2048,
            ),
            "order": 0,
            "unnamed": set(),
            "again": [],
        },
    ),
    (
        "graph.graph_view_shares_the_nodes",
        {
            "spec": GraphSpec(
                leafs=(
                    Leaf(name="in0", type=1, ne=(4, 2), place=0, weights=False, seed=0, int_range=1),
                    Leaf(name="dst1", type=0, ne=(4, 2), place=0, weights=False, seed=1, int_range=1),
                    Leaf(name="mask2", type=0, ne=(4,), place=0, weights=False, seed=2, int_range=1),
                ),
                nodes=(
                    Node(name="n0", op="cpy", srcs=("in0", "dst1"), params=()),
                    Node(name="n1", op="soft_max_ext", srcs=("n0", "mask2"), params=(1.0,)),
                ),
                outputs=("n1",),
                graph_size=2048,
            ),
            "cut": (0, 0),
        },
    ),
    ("ops.soft_max_keeps_mask_and_scale", {"shapes": ((1, 2, 1, 1), (1, 1)), "ext": True, "scale": 0.0, "memory": False}),
]

#: (check, the builds whose known-failures file lists the difference, args)
VERSION_DIFFERENCES: list[tuple[str, tuple[str, ...], dict[str, Any]]] = [
    *((name, ("ggml-python-0.0.26",), args) for name, args in _PINNED_0_0_26 if name != "core.init_aborts_without_its_pool"),
    # from 0.0.26 to 0.0.37 ggml_aligned_malloc itself aborts (GGML_ASSERT(false)) on a failed allocation;
    # 0.0.25, llama-cpp-python 0.2.30 and rc.8 return NULL to ggml_init's assert (read in each sdist's ggml.c)
    ("core.init_aborts_without_its_pool", tuple(f"ggml-python-0.0.{v}" for v in range(26, 38)),
     {"mem_size": 18446744073709551600}),
    *((name, ("ggml-python-0.0.36", "ggml-python-0.0.37"), args) for name, args in _PINNED_0_0_37)]

for _name, _targets, _args in VERSION_DIFFERENCES:
    add_example(_name, _args)
