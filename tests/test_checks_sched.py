"""Every scheduler check (conformance/checks/sched.py) passes on the reference model under both
profiles and on the native build, with a few examples and a fixed seed; and the plan compares
as SchedPlan promises: full plans on their splits and causes, a public plan (a target without
debug hooks) on the public part only.

A check that cannot pass here is wrong (a behaviour check drew a call the reference rejects, an
assert check missed its clause) or found a native disagreement; `ggspec check --select sched`
prints its reproducer.
"""

from __future__ import annotations

import pytest

from conformance.harness import CHECKS
from conformance.runner import RunConfig, load_checks, run_check, run_check_here
from conformance.target import SchedPlan
from reference.clauses import Profile, clause

load_checks()

SEED = 20261130
EXAMPLES = 8
SCHED_CHECKS = sorted(name for name in CHECKS if name.startswith("sched."))


@pytest.mark.parametrize(("target", "profile"), [("reference", Profile.FIXED), ("reference", Profile.RC8),
                                                 ("native", Profile.FIXED)], ids=["reference-fixed", "reference-rc8",
                                                                                  "native-fixed"])
@pytest.mark.parametrize("name", SCHED_CHECKS)
def test_sched_check_passes(name: str, target: str, profile: Profile) -> None:
    cfg = RunConfig(target, profile, max_examples=EXAMPLES, seed=SEED, c_reproducers=False)
    result = run_check_here(CHECKS[name], cfg) if target == "reference" else run_check(CHECKS[name], cfg)
    assert result.status == "pass", result.detail
    assert result.examples >= 1
    assert not result.errata, result.errata  # no disagreement explained away by an erratum either


def test_every_sched_clause_has_a_check() -> None:
    covered = {cid for name in SCHED_CHECKS for cid in CHECKS[name].clauses}
    assert covered == {f"SCHED-{i}" for i in range(1, 33)}
    assert all(clause(cid).kind in ("assert", "behaviour", "limit") for cid in covered)


FULL = SchedPlan(((0, 0, 2, ("x",)), (1, 2, 3, ())), (("a", 0), ("b", 1)), ("CPU#x",), 2,
                 (("a", "1.wgt0"), ("b", "2.2"), ("x", "1.dst")), (("x", 1),))


def test_plans_compare_on_what_both_sides_show() -> None:
    public = FULL.public()
    assert public == FULL and FULL == public  # a target without hooks is not failed for that
    other_split = SchedPlan(((0, 0, 3, ("x",)),), FULL.nodes, FULL.copies, 2, FULL.causes, FULL.leafs)
    assert other_split != FULL and other_split == public
    other_cause = SchedPlan(FULL.splits, FULL.nodes, FULL.copies, 2, (("a", "user"),), FULL.leafs)
    assert other_cause != FULL
    assert SchedPlan(None, (("a", 1), ("b", 1)), FULL.copies, 2, None, FULL.leafs) != FULL
    assert SchedPlan(None, FULL.nodes, FULL.copies, 2, None, (("x", 0),)) != public


def test_projections_blank_the_same_parts_on_both_kinds_of_plan() -> None:
    picked = FULL.select({"b", "x"})
    assert picked.nodes == (("b", 1),) and picked.leafs == (("x", 1),)
    assert picked.causes == (("b", "2.2"), ("x", "1.dst")) and picked.copies == () and picked.n_splits == 0
    assert FULL.public().select({"b", "x"}) == picked
    inputs_only = FULL.project(nodes=False, ranges=False, copies=False, causes=False)
    assert inputs_only.splits == ((0, 0, 0, ("x",)), (0, 0, 0, ())) and inputs_only.nodes == ()
    assert FULL.public().project(nodes=False, ranges=False, copies=False, causes=False) == inputs_only
