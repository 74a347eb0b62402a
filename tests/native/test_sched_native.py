"""Smoke tests of the native scheduler (native/src/sched.c) against the reference model
(reference/sched.py, profile fixed).

One small model runs on a virtual device (priority 0) and the CPU (the fallback): weights in
device and CPU buffers marked WEIGHTS, an input in a CPU buffer. The same graph is built on
both sides from one description (`build_model`), computed with the scheduler, and compared:
the plan (each tensor's backend and the pass that decided it, the splits, their inputs, the
copies and their names), the numbers (also against a plain CPU compute of the same graph) and
the eval callback's call sequence. Aborts are tested in forked children.

They use the raw cffi binding of the build under test (ggspec.native._native, or the build
GGSPEC_NATIVE_MODULE names: a sanitizer build, or a defect variant of sched.c, which
`test_planted_defects_are_caught` checks these tests notice).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from forked import assert_aborts, run_forked  # noqa: F401 - shared death-test helpers
from ggspec.native import load_lib
from ggspec.reference import alloc as ralloc
from ggspec.reference import backend as rbackend
from ggspec.reference import buffer as rbuffer
from ggspec.reference import cpu as rcpu
from ggspec.reference import graph as rgraph
from ggspec.reference import ops as rops
from ggspec.reference import sched as rsched
from ggspec.reference import tdata as rtdata
from ggspec.reference import vdev as rvdev
from ggspec.reference.clauses import Profile
from ggspec.reference.tensor import Context, Tensor, nbytes
from ggspec.reference.types import GGMLType
from ggspec.reference.world import World
from made import vdev

ffi, lib = load_lib()

ROOT = Path(__file__).resolve().parents[2]
GRAPH_SIZE = 64
VDEV, CPU = 0, 1  # backend indices: the device first, the CPU the fallback


# --- the model, described once ----------------------------------------------------------------

# name: (backend index of the buffer, shape); all F32
WEIGHTS: dict[str, tuple[int, list[int]]] = {
    "w1": (VDEV, [8, 6]),
    "b1": (VDEV, [6]),
    "w2": (CPU, [6, 6]),
    "w3": (VDEV, [6, 6]),
    "w4": (CPU, [6, 6]),
}
INPUTS: dict[str, list[int]] = {"x": [8, 4]}


def values(name: str, shape: list[int]) -> np.ndarray:
    """Deterministic data for a leaf (numpy order: shape reversed)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    return rng.uniform(-1.0, 1.0, size=shape[::-1]).astype(np.float32)


def build_model(op: Callable[..., Any], t: dict[str, Any]) -> Any:
    """The graph, through `op(kind, *args, name=...)`; `t` maps leaf names to tensors.

    Weights on both backends make two device splits and two CPU splits; h4 is read by three
    nodes of the third split (its input is listed once), x and g are inputs of two splits on
    the same backend (the copy is made once and reused).
    """
    h1 = op("mul_mat", t["w1"], t["x"], name="h1")
    h2 = op("add", h1, t["b1"], name="h2")
    g = op("gelu", h2, name="g")
    h4 = op("mul_mat", t["w2"], g, name="h4")
    sq = op("mul", h4, h4, name="sq")
    r = op("reshape", sq, [24], name="r")
    s = op("scale", r, 0.5, name="s")
    s2 = op("reshape", s, [6, 4], name="s2")
    u = op("mul_mat", t["w3"], s2, name="u")
    h1b = op("mul_mat", t["w1"], t["x"], name="h1b")
    dd = op("add", u, h4, name="dd")
    ee = op("mul", dd, h4, name="ee")
    e2 = op("add", ee, h1b, name="e2")
    ff = op("mul_mat", t["w4"], e2, name="ff")
    return op("add", ff, g, name="out")


# --- the reference side ------------------------------------------------------------------------


def ref_op(ctx: Context) -> Callable[..., Tensor]:
    def op(kind: str, *args: Any, name: str) -> Tensor:
        if kind == "reshape":
            out = rops.reshape_nd(ctx, args[0], args[1])
        elif kind == "scale":
            out = rops.scale(ctx, args[0], args[1])
        else:
            out = getattr(rops, kind)(ctx, *args)
        out.name = name
        return out

    return op


@dataclass
class RefRun:
    world: World
    backends: list[Any]
    sched: rsched.Sched
    leafs: dict[str, Tensor]
    gctx: Context
    calls: list[tuple[str, bool]] = field(default_factory=list)
    seen: dict[str, np.ndarray] = field(default_factory=dict)

    def read(self, t: Tensor) -> np.ndarray:
        n = nbytes(t)
        region = self.world.host_alloc(n, "read-back")
        rtdata.tensor_get(t, region.base, 0, n)
        return np.frombuffer(bytes(region.data), dtype=np.float32).copy()

    def graph(self) -> tuple[rgraph.CGraph, Tensor]:
        g = rgraph.new_graph_custom(self.gctx, GRAPH_SIZE, False)
        out = build_model(ref_op(self.gctx), self.leafs)
        rgraph.build_forward_expand(g, out)
        return g, out


def ref_setup() -> RefRun:
    world = World(profile=Profile.FIXED)
    dev = rvdev.vdev_init(world, rvdev.VDevParams(name="VDEV", alignment=32))
    cpu = rcpu.cpu_init(world)
    backends = [dev, cpu]
    leafs: dict[str, Tensor] = {}
    for bi, usage in ((VDEV, rbuffer.BufferUsage.WEIGHTS), (CPU, rbuffer.BufferUsage.WEIGHTS), (CPU, None)):
        ctx = Context(world, no_alloc=True)
        if usage is None:
            made = {n: ctx.new_tensor(GGMLType.F32, s, n) for n, s in INPUTS.items()}
        else:
            made = {n: ctx.new_tensor(GGMLType.F32, s, n) for n, (b, s) in WEIGHTS.items() if b == bi}
        buf = ralloc.alloc_ctx_tensors(ctx, backends[bi])
        assert buf is not None
        if usage is not None:
            rbuffer.buffer_set_usage(buf, usage)
        for n, t in made.items():
            data = values(n, t.ne[: len(INPUTS.get(n, WEIGHTS.get(n, (0, []))[1]))]).tobytes()
            rtdata.tensor_set(t, world.host_bytes(data), 0, len(data))
        leafs.update(made)
    sched = rsched.sched_new(world, backends, None, GRAPH_SIZE)
    return RefRun(world, backends, sched, leafs, Context(world, no_alloc=True))


def ref_run(callback: Callable[[str, bool], bool] | None = None) -> tuple[RefRun, rgraph.CGraph, Tensor]:
    run = ref_setup()
    measure, _ = run.graph()
    rsched.init_measure(run.sched, measure)
    g, out = run.graph()
    if callback is not None:

        def cb(t: Tensor, ask: bool) -> bool:
            run.calls.append((t.name, ask))
            if not ask:
                run.seen[t.name] = run.read(t)
            return callback(t.name, ask)

        rsched.set_eval_callback(run.sched, cb)
    rsched.graph_compute(run.sched, g)
    for b in run.backends:
        rbackend.backend_synchronize(b)
    return run, g, out


# --- the native side ---------------------------------------------------------------------------


def cstr(p: Any) -> str:
    return ffi.string(p).decode() if p != ffi.NULL else ""


def new_ctx(n_tensors: int, no_alloc: bool = True, extra: int = 0) -> Any:
    params = ffi.new("struct ggspec_init_params *")
    params.mem_size = n_tensors * lib.ggspec_tensor_overhead() + extra
    params.no_alloc = no_alloc
    return lib.ggspec_init(params[0])


def nat_op(ctx: Any) -> Callable[..., Any]:
    def op(kind: str, *args: Any, name: str) -> Any:
        if kind == "reshape":
            a, ne = args
            out = lib.ggspec_reshape_1d(ctx, a, *ne) if len(ne) == 1 else lib.ggspec_reshape_2d(ctx, a, *ne)
        elif kind == "scale":
            out = lib.ggspec_scale(ctx, args[0], args[1])
        else:
            out = getattr(lib, f"ggspec_{kind}")(ctx, *args)
        lib.ggspec_set_name(out, name.encode())
        return out

    return op


def nat_read(t: Any) -> np.ndarray:
    n = lib.ggspec_nbytes(t)
    out = ffi.new("char[]", n)
    lib.ggspec_backend_tensor_get(t, out, 0, n)
    return np.frombuffer(ffi.buffer(out, n), dtype=np.float32).copy()


@dataclass
class NatRun:
    backends: list[Any]
    sched: Any
    leafs: dict[str, Any]
    keep: list[Any]
    calls: list[tuple[str, bool]] = field(default_factory=list)
    seen: dict[str, np.ndarray] = field(default_factory=dict)

    def graph(self) -> tuple[Any, Any]:
        gctx = new_ctx(256, extra=4 * lib.ggspec_graph_overhead_custom(GRAPH_SIZE, False))
        self.keep.append(gctx)
        g = lib.ggspec_new_graph_custom(gctx, GRAPH_SIZE, False)
        out = build_model(nat_op(gctx), self.leafs)
        lib.ggspec_build_forward_expand(g, out)
        return g, out

    def close(self) -> None:
        lib.ggspec_backend_sched_free(self.sched)
        for obj in self.keep:
            if ffi.typeof(obj) is ffi.typeof("ggspec_backend_buffer_t"):
                lib.ggspec_backend_buffer_free(obj)
        for obj in self.keep:
            if ffi.typeof(obj) is ffi.typeof("struct ggspec_context *"):
                lib.ggspec_free(obj)
        for b in self.backends:
            lib.ggspec_backend_free(b)


def nat_setup(graph_size: int = GRAPH_SIZE) -> NatRun:
    backends = [vdev(), lib.ggspec_backend_cpu_init()]
    leafs: dict[str, Any] = {}
    keep: list[Any] = []
    for bi, weights in ((VDEV, True), (CPU, True), (CPU, False)):
        ctx = new_ctx(16)
        keep.append(ctx)
        shapes = {n: s for n, (b, s) in WEIGHTS.items() if b == bi} if weights else INPUTS
        made = {}
        for n, s in shapes.items():
            t = lib.ggspec_new_tensor(ctx, lib.GGSPEC_TYPE_F32, len(s), ffi.new("int64_t[]", s))
            lib.ggspec_set_name(t, n.encode())
            made[n] = t
        buf = lib.ggspec_backend_alloc_ctx_tensors(ctx, backends[bi])
        assert buf != ffi.NULL
        keep.append(buf)
        if weights:
            lib.ggspec_backend_buffer_set_usage(buf, lib.GGSPEC_BACKEND_BUFFER_USAGE_WEIGHTS)
        for n, t in made.items():
            data = values(n, shapes[n]).tobytes()
            lib.ggspec_backend_tensor_set(t, data, 0, len(data))
        leafs.update(made)
    arr = ffi.new("ggspec_backend_t[]", backends)
    sched = lib.ggspec_backend_sched_new(arr, ffi.NULL, len(backends), graph_size)
    return NatRun(backends, sched, leafs, keep)


_handler: list[Callable[[Any, bool], bool]] = []


@ffi.def_extern()
def ggspec_py_sched_eval_callback(t: Any, ask: bool, user_data: Any) -> bool:
    return _handler[-1](t, ask)


@pytest.fixture
def nat() -> Iterator[NatRun]:
    run = nat_setup()
    yield run
    _handler.clear()
    run.close()


def nat_compute(run: NatRun, callback: Callable[[str, bool], bool] | None = None) -> tuple[Any, Any]:
    measure, _ = run.graph()
    lib.ggspec_backend_sched_init_measure(run.sched, measure)
    g, out = run.graph()
    if callback is not None:

        def cb(t: Any, ask: bool) -> bool:
            name = cstr(t.name)
            run.calls.append((name, bool(ask)))
            if not ask:
                run.seen[name] = nat_read(t)
            return callback(name, bool(ask))

        _handler.append(cb)
        lib.ggspec_backend_sched_set_eval_callback(run.sched, lib.ggspec_py_sched_eval_callback, ffi.NULL)
    lib.ggspec_backend_sched_graph_compute(run.sched, g)
    for b in run.backends:
        lib.ggspec_backend_synchronize(b)
    return g, out


def nat_cpu_only() -> np.ndarray:
    """The model computed by the CPU backend alone, every tensor in context memory."""
    ctx = new_ctx(256, no_alloc=False, extra=(1 << 20) + lib.ggspec_graph_overhead_custom(GRAPH_SIZE, False))
    cpu = lib.ggspec_backend_cpu_init()
    try:
        leafs = {}
        for n, s in {**INPUTS, **{n: s for n, (_, s) in WEIGHTS.items()}}.items():
            t = lib.ggspec_new_tensor(ctx, lib.GGSPEC_TYPE_F32, len(s), ffi.new("int64_t[]", s))
            data = values(n, s).tobytes()
            ffi.memmove(t.data, data, len(data))
            leafs[n] = t
        g = lib.ggspec_new_graph_custom(ctx, GRAPH_SIZE, False)
        out = build_model(nat_op(ctx), leafs)
        lib.ggspec_build_forward_expand(g, out)
        assert lib.ggspec_backend_graph_compute(cpu, g)
        n = lib.ggspec_nbytes(out)
        return np.frombuffer(ffi.buffer(out.data, n), dtype=np.float32).copy()
    finally:
        lib.ggspec_backend_free(cpu)
        lib.ggspec_free(ctx)


# --- the plan, as plain data ---------------------------------------------------------------------


def nat_tensors(g: Any) -> list[Any]:
    """Leafs and nodes of the graph, and every source of a node (copies included)."""
    seen: dict[int, Any] = {}
    for i in range(g.n_leafs):
        seen.setdefault(int(ffi.cast("uintptr_t", g.leafs[i])), g.leafs[i])
    for i in range(g.n_nodes):
        node = g.nodes[i]
        seen.setdefault(int(ffi.cast("uintptr_t", node)), node)
        for j in range(10):
            if node.src[j] == ffi.NULL:
                break
            seen.setdefault(int(ffi.cast("uintptr_t", node.src[j])), node.src[j])
    return list(seen.values())


def ref_tensors(g: rgraph.CGraph) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    for t in g.leaf_list():
        seen.setdefault(id(t), t)
    for node in g.node_list():
        seen.setdefault(id(node), node)
        for src in node.src:
            if src is None:
                break
            seen.setdefault(id(src), src)
    return list(seen.values())


def nat_plan(run: NatRun, g: Any) -> dict[str, Any]:
    s = run.sched
    n = lib.ggspec_backend_sched_debug_n_splits(s)
    splits = []
    for k in range(n):
        inputs = [lib.ggspec_backend_sched_debug_split_input(s, k, j)
                  for j in range(lib.ggspec_backend_sched_debug_split_n_inputs(s, k))]
        b = lib.ggspec_backend_sched_debug_split_backend(s, k)
        splits.append((
            b,
            lib.ggspec_backend_sched_debug_split_i_start(s, k),
            lib.ggspec_backend_sched_debug_split_i_end(s, k),
            [cstr(t.name) for t in inputs],
            [cstr(lib.ggspec_backend_sched_debug_tensor_copy(s, t, b).name) for t in inputs],
        ))
    tensors = {
        cstr(t.name): (lib.ggspec_backend_sched_debug_tensor_backend(s, t),
                       cstr(lib.ggspec_backend_sched_debug_tensor_cause(s, t)))
        for t in nat_tensors(g)
    }
    return {"n_splits": lib.ggspec_backend_sched_get_n_splits(s), "splits": splits, "tensors": tensors}


def ref_plan(run: RefRun, g: rgraph.CGraph) -> dict[str, Any]:
    s = run.sched
    splits = []
    for split in s.splits:
        b = rsched.allocr_prio(s, split.tallocr)
        splits.append((
            b,
            split.i_start,
            split.i_end,
            [t.name for t in split.inputs],
            [s.node_copies[rsched._slot(s, t)][b].name for t in split.inputs],
        ))
    tensors = {}
    for t in ref_tensors(g):
        a = rsched.get_assignment(s, t)
        tensors[t.name] = (-1 if a is None else rsched.allocr_prio(s, a), rsched.cause_of(s, t))
    return {"n_splits": rsched.get_n_splits(s), "splits": splits, "tensors": tensors}


# --- plan, numbers, eval callback -----------------------------------------------------------------


def test_plan_matches_reference(nat: NatRun) -> None:
    g, _ = nat_compute(nat)
    rrun, rg, _ = ref_run()
    got, want = nat_plan(nat, g), ref_plan(rrun, rg)
    assert got["splits"] == want["splits"]
    assert got["tensors"] == want["tensors"]
    assert got["n_splits"] == want["n_splits"] == 4
    # the things this model is built to show, stated plainly
    tensors = want["tensors"]
    assert tensors["h1"] == (VDEV, "1.wgt0") and tensors["h4"] == (CPU, "1.wgt0")
    assert tensors["g"] == (VDEV, "2.2") and tensors["sq"] == (VDEV, "2.1") and tensors["out"] == (CPU, "2.4")
    assert tensors["r"] == (VDEV, "3.vsrc") and tensors["x"] == (CPU, "1.dst")
    assert tensors["VDEV#x"] == (VDEV, "4.cpy") and tensors["CPU#g"] == (CPU, "4.cpy")
    # h4 is read three times by split 2 (sq twice, dd, ee) and listed once; x and g are copied
    # to a backend for two splits each, with one copy
    assert [sp[3] for sp in want["splits"]] == [["x"], ["g"], ["h4", "x"], ["e2", "g"]]
    # node sources now read the copies: the caller's graph was changed (SCHED-19)
    nodes = {cstr(g.nodes[i].name): g.nodes[i] for i in range(g.n_nodes)}
    assert cstr(nodes["ee"].src[1].name) == "VDEV#h4"
    assert nodes["ee"].src[1] == nodes["dd"].src[1] == nodes["sq"].src[0]  # one copy per (input, backend)
    assert nodes["h1"].src[1] == nodes["h1b"].src[1]
    # SCHED-20: the allocation graph is each split's copies, then its nodes
    ag = lib.ggspec_backend_sched_debug_alloc_graph(nat.sched)
    order = [cstr(ag.nodes[i].name) for i in range(ag.n_nodes)]
    want_order = []
    for sp in want["splits"]:
        want_order += sp[4] + [rg.node(i).name for i in range(sp[1], sp[2])]
    assert order == want_order


def test_numbers_match_cpu_and_reference(nat: NatRun) -> None:
    _, out = nat_compute(nat)
    got = nat_read(out)
    rrun, _, rout = ref_run()
    np.testing.assert_allclose(got, nat_cpu_only(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, rrun.read(rout), rtol=1e-4, atol=1e-5)


def watch(wanted: set[str], stop_at: str | None = None) -> Callable[[str, bool], bool]:
    def cb(name: str, ask: bool) -> bool:
        if ask:
            return name in wanted
        return name != stop_at

    return cb


@pytest.mark.parametrize(
    "wanted",
    [set(), {"g", "sq", "ee"}, {"h1", "h2", "g", "h4", "sq", "r", "s", "s2", "u", "h1b", "dd", "ee", "e2", "ff", "out"}],
    ids=["none", "some", "all"],
)
def test_eval_callback_sequence_matches_reference(nat: NatRun, wanted: set[str]) -> None:
    _, out = nat_compute(nat, watch(wanted))
    rrun, _, rout = ref_run(watch(wanted))
    assert nat.calls and nat.calls == rrun.calls
    assert [n for n, ask in nat.calls if not ask] == [n for n, ask in rrun.calls if not ask]
    assert set(nat.seen) == set(rrun.seen) == {n for n, ask in rrun.calls if not ask}
    for name, data in rrun.seen.items():  # the node shown has been computed
        np.testing.assert_allclose(nat.seen[name], data, rtol=1e-4, atol=1e-5, err_msg=name)
    np.testing.assert_allclose(nat_read(out), rrun.read(rout), rtol=1e-4, atol=1e-5)


def test_false_return_stops_the_whole_graph(nat: NatRun) -> None:
    """SCHED-25, profile fixed: nothing after the refused node is asked or computed."""
    wanted = {"h2", "sq", "ee"}
    nat_compute(nat, watch(wanted, stop_at="h2"))
    rrun, _, _ = ref_run(watch(wanted, stop_at="h2"))
    assert nat.calls == rrun.calls
    assert nat.calls[-1] == ("h2", False)
    assert all(name in ("h1", "h2") for name, _ in nat.calls)


# --- the public API around the plan ---------------------------------------------------------------


def test_node_backend_splits_and_reset(nat: NatRun) -> None:
    s = nat.sched
    dev, cpu = nat.backends
    assert lib.ggspec_backend_sched_debug_is_reset(s)
    assert lib.ggspec_backend_sched_get_n_splits(s) == 0
    g, _ = nat.graph()
    nodes = {cstr(g.nodes[i].name): g.nodes[i] for i in range(g.n_nodes)}
    # SCHED-32: a user assignment survives pass 1
    lib.ggspec_backend_sched_set_node_backend(s, nodes["h1"], cpu)
    assert lib.ggspec_backend_sched_get_node_backend(s, nodes["h1"]) == cpu
    assert lib.ggspec_backend_sched_get_node_backend(s, nodes["g"]) == ffi.NULL
    lib.ggspec_backend_sched_init_measure(s, g)
    assert lib.ggspec_backend_sched_debug_is_reset(s)  # SCHED-29: measuring ends with a reset
    assert lib.ggspec_backend_sched_get_node_backend(s, nodes["h1"]) == ffi.NULL
    for i, b in enumerate(nat.backends):
        buf = lib.ggspec_backend_sched_get_buffer(s, b)
        assert buf == lib.ggspec_tallocr_get_buffer(lib.ggspec_backend_sched_get_tallocr(s, b))
        assert not lib.ggspec_tallocr_is_measure(lib.ggspec_backend_sched_get_tallocr(s, b))
        assert lib.ggspec_backend_buffer_get_size(buf) > 0, i

    # the same user assignment on the reference
    rrun = ref_setup()
    rg, _ = rrun.graph()
    rnodes = {t.name: t for t in rg.node_list()}
    rsched.set_node_backend(rrun.sched, rnodes["h1"], rrun.backends[CPU])
    rsched.init_measure(rrun.sched, rg)

    g2, _ = nat.graph()
    rg2, _ = rrun.graph()
    nodes2 = {cstr(g2.nodes[i].name): g2.nodes[i] for i in range(g2.n_nodes)}
    lib.ggspec_backend_sched_set_node_backend(s, nodes2["h1"], cpu)
    rsched.set_node_backend(rrun.sched, {t.name: t for t in rg2.node_list()}["h1"], rrun.backends[CPU])
    lib.ggspec_backend_sched_graph_compute(s, g2)
    rsched.graph_compute(rrun.sched, rg2)
    assert not lib.ggspec_backend_sched_debug_is_reset(s)
    got, want = nat_plan(nat, g2), ref_plan(rrun, rg2)
    assert got == want
    assert want["tensors"]["h1"] == (CPU, "user")
    lib.ggspec_backend_sched_reset(s)
    assert lib.ggspec_backend_sched_debug_is_reset(s)
    assert lib.ggspec_backend_sched_debug_tensor_backend(s, nodes2["h1"]) == -1


def test_graph_of_views_only(nat: NatRun) -> None:
    """No non-view node: one split without a backend, nothing to compute (rc.8 would compute it
    on a stale or NULL backend; the reference model stops on an internal assertion)."""
    gctx = new_ctx(8, extra=lib.ggspec_graph_overhead_custom(GRAPH_SIZE, False))
    nat.keep.append(gctx)
    g = lib.ggspec_new_graph_custom(gctx, GRAPH_SIZE, False)
    v = lib.ggspec_reshape_1d(gctx, nat.leafs["x"], 32)
    lib.ggspec_build_forward_expand(g, v)
    lib.ggspec_backend_sched_graph_compute(nat.sched, g)
    assert lib.ggspec_backend_sched_get_n_splits(nat.sched) == 1
    assert lib.ggspec_backend_sched_debug_split_backend(nat.sched, 0) == -1
    assert lib.ggspec_backend_sched_debug_tensor_backend(nat.sched, v) == CPU  # 1.vsrc: x's buffer
    assert cstr(lib.ggspec_backend_sched_debug_tensor_cause(nat.sched, v)) == "1.vsrc"


# --- asserts, in forked children -------------------------------------------------------------------


def test_sched_1_no_backends() -> None:
    def fn() -> None:
        lib.ggspec_backend_sched_new(ffi.new("ggspec_backend_t[]", 1), ffi.NULL, 0, GRAPH_SIZE)

    assert_aborts(fn, "n_backends > 0")


def test_sched_2_too_many_backends() -> None:
    def fn() -> None:
        cpus = [lib.ggspec_backend_cpu_init() for _ in range(17)]
        lib.ggspec_backend_sched_new(ffi.new("ggspec_backend_t[]", cpus), ffi.NULL, 17, GRAPH_SIZE)

    assert_aborts(fn, "n_backends <= GGML_MAX_BACKENDS")


@pytest.mark.parametrize("entry", ["get_tallocr", "get_buffer", "set_node_backend"])
def test_sched_31_foreign_backend(entry: str) -> None:
    def fn() -> None:
        cpu = lib.ggspec_backend_cpu_init()
        sched = lib.ggspec_backend_sched_new(ffi.new("ggspec_backend_t[]", [cpu]), ffi.NULL, 1, GRAPH_SIZE)
        other = lib.ggspec_backend_cpu_init()
        if entry == "set_node_backend":
            ctx = new_ctx(4)
            t = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_F32, 4)
            lib.ggspec_backend_sched_set_node_backend(sched, t, other)
        else:
            getattr(lib, f"ggspec_backend_sched_{entry}")(sched, other)

    assert_aborts(fn, "backend_index >= 0 && backend_index < sched->n_backends")


def test_sched_27_graph_larger_than_the_hash_set() -> None:
    def fn() -> None:
        run = nat_setup(graph_size=0)  # hash_size(0 + 4096) = 4099 slots: room for 3 nodes
        g, _ = run.graph()
        lib.ggspec_backend_sched_graph_compute(run.sched, g)

    assert_aborts(fn, "(int)sched->hash_set.size >= graph->n_nodes + GGML_MAX_SPLITS*GGML_MAX_SPLIT_INPUTS")


def test_sched_28_init_measure_twice() -> None:
    def fn() -> None:
        run = nat_setup()
        g, _ = run.graph()
        lib.ggspec_backend_sched_init_measure(run.sched, g)
        g, _ = run.graph()
        lib.ggspec_backend_sched_init_measure(run.sched, g)

    assert_aborts(fn, "ggml_tallocr_is_measure(sched->tallocs[0])")


# --- the planted defects (GGSPEC_DEFECT_SCHED_*) are caught by the tests above ---------------------


DEFECTS = {
    "GGSPEC_DEFECT_SCHED_PASS2": "test_plan_matches_reference",
    "GGSPEC_DEFECT_SCHED_DEDUP": "test_plan_matches_reference",
    "GGSPEC_DEFECT_SCHED_EVAL_BATCH": "test_eval_callback_sequence_matches_reference",
}


@pytest.mark.skipif("GGSPEC_NATIVE_MODULE" in os.environ, reason="runs on the default build only")
@pytest.mark.parametrize("define", sorted(DEFECTS))
def test_planted_defects_are_caught(define: str, tmp_path: Path) -> None:
    from ggspec.native.build import build_variant

    module = "ggspec_native_" + define.lower()
    build_variant(module, str(tmp_path), defines=[define])
    env = {**os.environ, "GGSPEC_NATIVE_MODULE": f"{tmp_path}:{module}"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", DEFECTS[define]],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1 and " failed" in proc.stdout, proc.stdout[-3000:]
