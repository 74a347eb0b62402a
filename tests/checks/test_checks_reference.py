"""Every registered check passes against the reference model itself, under both profiles, and
every clause of spec/ is covered by at least one check.

This keeps the checks honest: a behaviour check must draw only calls the reference accepts, an
assert check must break exactly its own clause on the reference (the harness enforces both), and
the state machine must run its lifecycles without a disagreement between two reference targets.
"""

from __future__ import annotations

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check_here
from ggspec.reference.clauses import Profile, catalogue

load_checks()

SEED = 20261130
EXAMPLES = 5


@pytest.mark.parametrize("profile", [Profile.FIXED, Profile.RC8], ids=lambda p: p.value)
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_check_passes_on_the_reference(name: str, profile: Profile) -> None:
    cfg = RunConfig("reference", profile, max_examples=EXAMPLES, seed=SEED, derandomize=False)
    result = run_check_here(CHECKS[name], cfg)
    if CHECKS[name].sizes is not None:  # registry.only_at: not run at the default size, and says so
        assert (result.status, result.examples) == ("skipped", 0), result.detail
        assert "runs only at --size" in result.detail
        return
    assert result.status == "pass", result.detail
    assert result.examples >= 1


def test_every_clause_is_covered() -> None:
    covered = {cid for chk in CHECKS.values() for cid in chk.clauses}
    missing = [cid for cid in catalogue() if cid not in covered]
    assert not missing, f"clauses no check covers: {missing}"


def test_state_machine_is_registered_as_a_check() -> None:
    machines = {chk.name: chk for chk in CHECKS.values() if chk.machine is not None}
    assert sorted(machines) == ["stateful.lifecycle", "stateful.scheduler"]
    assert set(machines["stateful.lifecycle"].clauses) == {"BUF-4", "BUF-9", "BUF-11", "BUF-13", "BACK-2"}
    assert {"SCHED-26", "SCHED-32"} <= set(machines["stateful.scheduler"].clauses)
