"""Verdicts that do not depend on the seed: every erratum has deterministic examples
(conformance/checks/deterministic.py), so the rc.8 build held to profile fixed fails the same
clauses, exactly the errata, under every seed.

The rc8 tests skip only when npm or the network to the npm registry is missing (`CannotFetch`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.checks.deterministic import EXAMPLES
from ggspec.conformance.engine.differential import run_on_reference
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig, ub_clauses, verdicts
from ggspec.conformance.engine.runner import load_checks, run_all
from ggspec.reference.clauses import Profile, catalogue

SEEDS = (1, 2, 3, 20261130, 4294967295)


def _errata() -> set[str]:
    return {cid for cid, c in catalogue().items() if c.erratum}


def _erratum_checks() -> list[str]:
    """The checks that cover an erratum clause or carry one of the deterministic examples."""
    load_checks()
    errata = _errata()
    names = {name for name, chk in CHECKS.items() if chk.machine is None and errata & set(chk.clauses)}
    return sorted(names | {name for name, _, _ in EXAMPLES})


@pytest.mark.parametrize("name, reaches, args", EXAMPLES, ids=[f"{n}:{r[1]}" for n, r, _ in EXAMPLES])
def test_each_example_reaches_its_erratum_on_the_reference(name: str, reaches: tuple[str, str], args: dict[str, object]) -> None:
    """Under rc8 the example stops at the erratum (ub / violation) or, for a behaviour erratum,
    records something else than profile fixed does."""
    load_checks()
    chk = CHECKS[name]
    assert args in chk.examples
    rc8, fixed = run_on_reference(chk, args, Profile.RC8), run_on_reference(chk, args, Profile.FIXED)
    ending, clause_id = reaches
    assert clause_id in _errata() or (ending == "ub" and clause_id in ub_clauses())
    assert rc8.ending == ending
    if ending == "ok":
        assert (fixed.ending, fixed.observations) != ("ok", rc8.observations)
    else:
        assert rc8.clause_id == clause_id
        if clause_id in _errata():  # the correction changes what happens there
            assert (fixed.ending, fixed.clause_id, fixed.observations) != (rc8.ending, rc8.clause_id, rc8.observations)


def _reached_by(name: str, args: dict[str, object]) -> set[str]:
    """The errata one explicit example reaches on the reference: the clause profile rc8 stops at,
    or, where the two profiles record different things, the check's erratum clauses."""
    chk = CHECKS[name]
    rc8, fixed = run_on_reference(chk, args, Profile.RC8), run_on_reference(chk, args, Profile.FIXED)
    if rc8.ending in ("ub", "violation") and rc8.clause_id in _errata():
        return {rc8.clause_id}
    if (rc8.ending, rc8.clause_id, rc8.observations) != (fixed.ending, fixed.clause_id, fixed.observations):
        return ({fixed.clause_id} if fixed.clause_id else set()) | (set(chk.clauses) & _errata())
    return set()


def test_every_erratum_has_an_example() -> None:
    """Each erratum is reached by an explicit example (deterministic.py's, or a check's own
    `@example`), so every seed reaches it."""
    load_checks()
    reached: set[str] = set()
    for name, chk in CHECKS.items():
        if _errata() & set(chk.clauses) or name in {n for n, _, _ in EXAMPLES}:
            for args in chk.examples:
                reached |= _reached_by(name, args)
    assert _errata() - reached == set()


@pytest.fixture(scope="module")
def rc8_available(rc8_or_skip: Any) -> None:
    rc8_or_skip.target()


def _five_seed_run() -> tuple[dict[int, list[str]], dict[str, str]]:
    """The rc8 target under profile fixed, the erratum checks, 2 examples each, per seed: the
    failing clauses, and for a failing clause that is not an erratum the first detail naming it."""
    names = _erratum_checks()
    failing: dict[int, list[str]] = {}
    why: dict[str, str] = {}
    for s in SEEDS:
        cfg = RunConfig("rc8", Profile.FIXED, max_examples=2, seed=s, c_reproducers=False)
        results = run_all(cfg, names)
        failing[s] = sorted({v.id for v in verdicts(results) if v.status in ("fail", "crash")})
        for cid in set(failing[s]) - _errata():
            for r in results:
                if cid in r.clauses and r.status != "pass":
                    why.setdefault(cid, f"seed {s}: {r.check} {r.status}: {r.detail[:3000]}")
    return failing, why


def test_rc8_under_fixed_fails_exactly_the_errata_under_five_seeds(rc8_available: None, tmp_path: Path) -> None:
    """Run in a fresh interpreter: late in one long pytest process (CI, and a whole-suite run
    here, 2026-12-02) graphcompute.backends_compute_in_their_memory failed BACK-14/GCOPY-1 on
    every seed, while the same test after any third of the suite passes. That order dependence
    is an open finding, not yet pinned to a cause; this test checks the verdicts that a user's
    own process gets."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_seed_independence as t; "
            "f, w = t._five_seed_run(); json.dump({'failing': f, 'why': w}, open(sys.argv[2], 'w'))")
    out = tmp_path / "five-seeds.json"
    proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(out)],
                          capture_output=True, text=True, timeout=1800, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    failing = {int(k): set(v) for k, v in got["failing"].items()}
    off = {s: {"missing": sorted(_errata() - f), "extra": sorted(f - _errata())} for s, f in failing.items()
           if f != _errata()}
    assert off == {}, (off, got["why"])


def test_alloc_13_example_reaches_the_erratum_whatever_the_addresses(rc8_available: None) -> None:
    """CI's run of 75dda32 missed ALLOC-13 under four of the five seeds: the example then had
    one input whose stale entry differed from a fresh one, and an input's slot is its address
    modulo the table size, so about one process in 30 put it in the part rc.8 clears. Now each
    of the 8 inputs carries a stale view, and they lie one tensor apart in one context, so at
    most one of them can fall there: at least 7 of the 8 readings differ in any process."""
    from ggspec.conformance.engine.differential import run_on_target

    load_checks()
    [(name, _, args)] = [e for e in EXAMPLES if e[1] == ("ub", "ALLOC-13")]
    chk = CHECKS[name]
    expected = dict(run_on_reference(chk, args, Profile.FIXED).observations)
    actual = dict(run_on_target(chk, args, "rc8", Profile.FIXED, expect_death=False).observations)
    readings = [k for k in expected if k == "z" or (k.startswith("z") and k[1:].isdigit())]
    assert len(readings) == 8
    differ = [k for k in readings if expected[k] != actual[k]]
    assert len(differ) >= 7, (differ, {k: (expected[k], actual[k]) for k in readings})


def test_eager_inputs_difference_is_blamed_on_alloc_20() -> None:
    """Seed 2 drew this measure-then-place example: nothing is released, yet `fixed` places
    `in1` before the walk and rc.8 only at `n3`, so the entry logs part (init_tensor 'in1' vs
    'n0'). The reference records ALLOC-20's branch, and the difference is the erratum's, not
    ALLOC-3's or ALLOC-21's."""
    from ggspec.conformance.engine.differential import Example, erratum_behind
    from ggspec.conformance.inputs.strategies import GraphSpec, Leaf, Node, Placement
    from ggspec.reference.vdev import ALL_OPS, VDevParams

    load_checks()
    chk = CHECKS["alloc.measured_size_suffices"]
    vdev = VDevParams(name="VDEV", alignment=1, lazy=False, async_entries=False, buffer_cpy_tensor=False,
                      cpy_tensor_async=False, alloc_pad=0, ops=ALL_OPS)
    leafs = tuple(Leaf(name=f"in{k}", type=0, ne=(4, 1), place=-1, weights=False, seed=k, int_range=1) for k in (0, 1))
    nodes = (Node(name="n0", op="gelu", srcs=("in0",), params=()), Node(name="n1", op="gelu", srcs=("in0",), params=()),
             Node(name="n2", op="gelu", srcs=("in0",), params=()), Node(name="n3", op="cpy", srcs=("in0", "in1"), params=()))
    args = {"placement": Placement(kind="vdev", vdev=vdev),
            "spec": GraphSpec(leafs=leafs, nodes=nodes, outputs=("n0", "n1", "n2", "n3"), graph_size=256),
            "seq": "none", "same_galloc": False}
    fixed, rc8 = run_on_reference(chk, args, Profile.FIXED), run_on_reference(chk, args, Profile.RC8)
    assert fixed.ending == rc8.ending == "ok"
    assert fixed.entry_log != rc8.entry_log
    assert "ALLOC-20" in fixed.errata & rc8.errata
    assert erratum_behind(Example(chk, args, fixed, rc8), Profile.FIXED) == "ALLOC-20"


def test_a_scenario_that_reads_the_profile_is_blamed_on_the_erratum_it_meets(rc8_available: None) -> None:
    """Seed 3 drew this: a device refusing MUL_MAT, weights on it. Profile fixed asks supports_op
    (SCHED-33) and sends mm to the CPU; rc.8 keeps it on the device, where pass 2.2 then decides
    `c`. sched._pass_check records the tensors its pass decides *under the run's profile*, so
    rc.8's run under fixed cannot agree with the rc8 reference on that observation: the target is
    run again under rc8, agrees, and the difference (fixed's supports_op calls in the entry log)
    is SCHED-33's, not SCHED-9's."""
    from ggspec.conformance.engine.differential import Example, erratum_behind, judge, run_on_target
    from ggspec.conformance.errors import Mismatch
    from ggspec.conformance.inputs.strategies import GraphSpec, Leaf, Node, SchedCase, SchedGraph, SchedSetup
    from ggspec.reference.types import Op
    from ggspec.reference.vdev import ALL_OPS, VDevParams

    load_checks()
    chk = CHECKS["sched.pass2_devices_down"]
    spec = GraphSpec(leafs=(Leaf("w", 1, (4, 4), 0, weights=True, seed=1), Leaf("x", 0, (4, 1), 1, seed=2)),
                     nodes=(Node("mm", "mul_mat", ("w", "x")), Node("c", "cont", ("mm",))), outputs=("c",))
    args = {"case": SchedCase(SchedSetup((VDevParams(name="GPU0", ops=ALL_OPS - {Op.MUL_MAT}),)), SchedGraph(spec, ()))}
    expected = run_on_reference(chk, args, Profile.FIXED)
    actual = run_on_target(chk, args, "rc8", Profile.FIXED, expect_death=True)
    ex = Example(chk, args, expected, actual)
    with pytest.raises(Mismatch, match="entry logs"):  # fixed's supports_op calls
        judge(ex)
    assert erratum_behind(ex, Profile.FIXED) is None  # judged against the rc8 reference as it ran
    assert erratum_behind(ex, Profile.FIXED, "rc8") == "SCHED-33"
