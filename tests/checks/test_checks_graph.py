"""The CORE checks of graphs and operations (conformance/checks/graph.py and ops.py) pass on the
reference under both profiles and on native/; every clause CORE-6 to CORE-76 has one; the
random-graph strategy draws only graphs the reference accepts and shrinks well; `Approx`
compares as spec/core.md's Tolerances say; and the findings behind the fixes made while writing
the checks, tested directly. The rc.8 part skips only where rc.8 cannot be fetched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.checks._graphs import Scene, record_graph, run_spec
from ggspec.conformance.engine.approx import Approx, decode, f16_operands_atol, mul_mat_atol
from ggspec.conformance.engine.registry import CHECKS, Recorder
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check, run_check_here
from ggspec.conformance.inputs.graphspec import GraphSpec
from ggspec.conformance.inputs.strategies import graph_specs
from ggspec.conformance.target import TensorInfo
from ggspec.reference.clauses import Profile, catalogue
from ggspec.reference.types import GGMLType
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

load_checks()

SEED = 20261130
EXAMPLES = 5
NAMES = sorted(n for n in CHECKS if n.startswith(("graph.", "ops.")))
F32 = int(GGMLType.F32)


def test_every_graph_clause_is_covered() -> None:
    mine = [f"CORE-{i}" for i in range(6, 77)]
    assert all(c in catalogue() for c in mine)
    covered = {cid for n in NAMES for cid in CHECKS[n].clauses}
    assert not [c for c in mine if c not in covered]


@pytest.mark.parametrize("profile", [Profile.FIXED, Profile.RC8], ids=lambda p: p.value)
@pytest.mark.parametrize("name", NAMES)
def test_check_passes_on_the_reference(name: str, profile: Profile) -> None:
    cfg = RunConfig("reference", profile, max_examples=EXAMPLES, seed=SEED, c_reproducers=False)
    result = run_check_here(CHECKS[name], cfg)
    assert result.status == "pass", result.detail
    assert result.examples >= 1


@pytest.mark.parametrize("name", NAMES)
def test_check_passes_on_native(name: str) -> None:
    cfg = RunConfig("native", Profile.FIXED, max_examples=EXAMPLES, seed=SEED, c_reproducers=False)
    result = run_check(CHECKS[name], cfg)
    assert result.status == "pass", result.detail


# --- the random graphs ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(spec=graph_specs(), profile=st.sampled_from([Profile.FIXED, Profile.RC8]))
def test_random_graphs_are_valid_on_the_reference(spec: GraphSpec, profile: Profile) -> None:
    """Built, computed and recorded without SpecViolation or UndefinedBehaviour (which would
    make the behaviour check stop judging)."""
    t = make_target("reference", profile)
    rec = Recorder()
    record_graph(t, rec, run_spec(t, spec, t.cpu_init()))
    # a layout and a value per node, and a judgement from its own inputs of a node downstream of
    # an inexact one (checks/_graphs.py, GraphRecorder.record)
    assert len([k for k, _ in rec.items if not k.endswith(": from its inputs")]) == 2 * len(spec.nodes)
    assert all(str(v).startswith(("within", "bytes as", "not recomputed")) for k, v in rec.items
               if k.endswith(": from its inputs"))


@pytest.mark.parametrize("op", ["mul_mat", "permute", "soft_max_ext", "get_rows", "cpy"])
def test_graphs_shrink_to_one_op(op: str) -> None:
    """The smallest graph holding an op is that op on new leafs (a CPY may bring the view of
    its destination)."""
    smallest = find(graph_specs(), lambda s: any(n.op == op for n in s.nodes),
                    settings=settings(database=None, max_examples=500))
    assert len(smallest.nodes) <= 2 and smallest.nodes[-1].op == op, smallest


# --- Approx --------------------------------------------------------------------------------------


def test_approx_applies_the_looser_tolerance() -> None:
    a = Approx(np.array([1.0, 2.0], np.float32), atol=1e-3)
    b = Approx(np.array([1.0005, 2.0], np.float32))
    assert a == b and b == a
    c = Approx(np.array([1.01, 2.0], np.float32), rtol=2**-10)
    assert not a == c
    assert "DIFFERS" in repr(a) and "DIFFERS" in repr(c)
    assert "(i0, i1, ...) = (0,): 1.0 vs 1.00999" in a.mismatch


def test_approx_exact_compares_bits() -> None:
    z = Approx(np.array([0.0], np.float32), exact=True)
    nz = Approx(np.array([-0.0], np.float32), exact=True)
    assert z != nz
    assert Approx(np.array([0.0], np.float32)) == Approx(np.array([-0.0], np.float32))  # |Δ| ≤ 0 holds
    nan = Approx(np.array([np.nan], np.float32), atol=1.0)
    assert nan == Approx(np.array([np.nan], np.float32))
    assert Approx(np.array([np.inf], np.float32), atol=1.0) != Approx(np.array([1e30], np.float32))
    assert Approx(np.zeros((1, 1, 2, 3), np.float32)) != Approx(np.zeros((1, 1, 3, 2), np.float32))


def test_approx_mul_mat_bound_is_the_tables() -> None:
    a = np.array([[[[1.0, -2.0, 4.0]]]], np.float32)  # one row, K = 3
    b = np.array([[[[0.5, 0.5, 0.5], [1.0, 0.0, -1.0]]]], np.float32)  # two rows
    bound = mul_mat_atol(GGMLType.F32, a, b)
    u = 2.0**-24
    assert bound.shape == (1, 1, 2, 1)
    assert bound[0, 0, 0, 0] == pytest.approx(3 * 2 * u * 3.5 + 2.0**-126)
    assert bound[0, 0, 1, 0] == pytest.approx(3 * 2 * u * 5.0 + 2.0**-126)


def _products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """MUL_MAT's result (1, 1, rows of b, rows of a) in F32, products summed in index order."""
    out = np.zeros((1, 1, b.shape[2], a.shape[2]), np.float32)
    for i in range(b.shape[2]):
        for j in range(a.shape[2]):
            acc = np.float32(0.0)
            for k in range(a.shape[3]):
                acc = np.float32(acc + a[0, 0, j, k] * b[0, 0, i, k])
            out[0, 0, i, j] = acc
    return out


@pytest.mark.parametrize("positive", [False, True])
def test_f16_operands_are_within_the_device_allowance(positive: bool) -> None:
    """spec/core.md, Devices with kernels of their own: an F32 MUL_MAT whose operands a device
    rounds to F16 (as rc.8's Metal kernel_mul_mm stages its weights in half) is within the F32
    row plus f16_operands_atol, and outside the F32 row alone; truncating the operands to
    bfloat16 (8 significant bits) is outside even the allowance where the products share a sign
    (the errors then add up instead of cancelling)."""
    rng = np.random.default_rng(7)
    lo = 0.0 if positive else -2.0
    a = rng.uniform(lo, 2.0, (1, 1, 8, 64)).astype(np.float32)
    b = rng.uniform(lo, 2.0, (1, 1, 4, 64)).astype(np.float32)
    exact = a.astype(np.float64)[0, 0] @ b.astype(np.float64)[0, 0].T  # (rows of a, rows of b)
    exact = exact.T[None, None]
    f32_row = mul_mat_atol(GGMLType.F32, a, b)
    allowed = f32_row * (1 + 4 * 2.0**-11) + f16_operands_atol(a, b)

    def half(x: np.ndarray) -> np.ndarray:
        return x.astype(np.float16).astype(np.float32)

    def bf16(x: np.ndarray) -> np.ndarray:
        return (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)

    assert np.all(np.abs(_products(a, b) - exact) <= f32_row)
    rounded = np.abs(_products(half(a), half(b)) - exact)
    assert np.all(rounded <= allowed)
    assert np.any(rounded > f32_row)  # the F32 row alone would fail such a device
    if positive:
        assert np.all(np.abs(_products(bf16(a), bf16(b)) - exact) > allowed)


def test_f16_operands_atol_is_the_formula() -> None:
    a = np.array([[[[1.0, -2.0, 4.0]]]], np.float32)
    b = np.array([[[[0.5, 0.5, 0.5]]]], np.float32)
    u16 = 2.0**-11
    want = (2 * u16 + u16 * u16) * 3.5 + 2.0**-24 * (7.0 + 1.5) + 3 * 2.0**-50
    assert f16_operands_atol(a, b)[0, 0, 0, 0] == pytest.approx(want)


def test_decode_follows_strides() -> None:
    raw = np.arange(6, dtype=np.float32).tobytes()
    info = TensorInfo(F32, (2, 3, 1, 1), (12, 4, 24, 24), 0, "t", 0, False, True, True, 0)  # a transposed [3, 2]
    assert decode(info, raw).reshape(3, 2).tolist() == [[0, 3], [1, 4], [2, 5]]


# --- findings ------------------------------------------------------------------------------------


def _norm_of_negative_zeros(target: str) -> bytes:
    t = make_target(target)
    scene = Scene(t, t.cpu_init(), [(F32, (2,), np.array([-0.0, -0.0], np.float32).tobytes())])
    (out,) = scene.run([t.op("norm", [scene.leafs[0]], (1e-5,))])
    return t.tensor_get(out, 0, 8)


def test_norm_sums_start_from_positive_zero() -> None:
    """rc.8's sums start at +0.0, so a row of -0.0 has mean +0.0 and normalizes to -0.0 (the
    reference's cumulative sum used to keep -0.0 and give +0.0)."""
    want = np.array([-0.0, -0.0], np.float32).tobytes()
    assert _norm_of_negative_zeros("reference") == want
    assert _norm_of_negative_zeros("native") == want


# --- rc.8 ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rc8_available(rc8_or_skip: Any) -> None:
    rc8_or_skip.target()


RC8_CHECKS = (
    "graph.random_graphs_compute",     # whole graphs, every node
    "graph.expansion_order",           # CORE-8's order and names
    "ops.unimplemented_cases_abort",   # CORE-49's gaps abort in rc.8's own CPU code
    "ops.same_type_copy_rows",         # erratum CORE-52
    "ops.quantized_copies_copy_blocks",  # erratum CORE-53: undefined under rc8
    "ops.mul_mat_computes",
    "ops.quantization",
)


@pytest.mark.parametrize("name", RC8_CHECKS)
def test_check_passes_on_rc8(name: str, rc8_available: None) -> None:
    cfg = RunConfig("rc8", Profile.RC8, max_examples=EXAMPLES, seed=SEED, c_reproducers=False)
    result = run_check(CHECKS[name], cfg)
    assert result.status == "pass", result.detail


@pytest.mark.parametrize("name", ["ops.same_type_copy_rows", "ops.quantized_copies_copy_blocks"])
def test_rc8_errata_show_under_the_fixed_profile(name: str, rc8_available: None) -> None:
    """Under `fixed`, rc.8's copies differ where the errata say: the check of the erratum
    clause fails (or the difference is blamed on it)."""
    cfg = RunConfig("rc8", Profile.FIXED, max_examples=30, seed=SEED, c_reproducers=False)
    result = run_check(CHECKS[name], cfg)
    erratum = CHECKS[name].clauses[0]
    assert result.status in ("fail", "crash") or erratum in result.errata, (result.status, result.detail)
