"""The suite never fails the real code it describes: the rc8 target, under its own profile, at
the `ci` size, passes the scheduler's pass checks and the graph allocator's placement checks on
several seeds (the seed-5 false failure of sched.pass2_devices_down, issue 20, was found this
way; its example is pinned in the check). About two minutes on a 2-core machine.

Skips where rc.8 cannot be fetched (npm or its registry missing), except under `CI=true`, where
that fails.
"""

from __future__ import annotations

from typing import Any

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.reference.clauses import Profile

SEEDS = (5, 17, 29)
NAMES = (
    "sched.pass1_preallocated_and_weights",
    "sched.pass2_devices_up",
    "sched.pass2_devices_down",
    "sched.pass2_any_up",
    "sched.pass2_any_down",
    "sched.pass3_views_and_sources",
    "alloc.placement_keeps_the_invariants",
    "alloc.in_place_nodes_become_views",
    "alloc.inputs_are_not_overwritten",
    "alloc.measured_size_suffices",
    "sched.allocation_graph",
    "sched.compute_copies_then_runs",
)


@pytest.fixture(scope="module")
def rc8_available(rc8_or_skip: Any) -> None:
    rc8_or_skip.target()


@pytest.mark.parametrize("seed", SEEDS)
def test_rc8_passes_the_sched_and_alloc_checks_at_ci_size(rc8_available: None, seed: int) -> None:
    load_checks()
    cfg = RunConfig("rc8", Profile.RC8, size="ci", seed=seed, c_reproducers=False)
    failed = {}
    for name in NAMES:
        result = run_check(CHECKS[name], cfg)
        assert result.examples > 0, name
        if result.status != "pass":
            failed[name] = (result.status, result.detail[:2000])
    assert not failed, f"seed {seed}: {failed}"
