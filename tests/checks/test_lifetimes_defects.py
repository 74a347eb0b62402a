"""Issue 30, class 1: lifetimes longer than one graph (conformance/checks/lifetimes.py).

Each planted defect (native/testing/defects.py) keeps state that should have been emptied or
grown between graphs, and the check of its scenario fails on that build while the other check
of the module passes:

- `GGSPEC_DEFECT_SCHED_RESET_KEYS`: a scheduler's reset leaves its hash set's keys, so over three
  graphs (each well within the set) it fills up: lifetimes.sched_hash_set_over_many_graphs fails;
- `GGSPEC_DEFECT_GALLOC_NO_GROW`: a graph allocator keeps the table of its first graph, so a larger
  one fills it: lifetimes.graph_allocator_reused_for_larger_graphs fails.

Both checks pass on the reference, on native and on rc.8.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.reference.clauses import Profile
from sched_defects import variant_target

load_checks()

SCHED = "lifetimes.sched_hash_set_over_many_graphs"
GALLOC = "lifetimes.graph_allocator_reused_for_larger_graphs"
#: defect -> (the check that must fail, the check that must still pass)
CAUGHT_BY = {
    "GGSPEC_DEFECT_SCHED_RESET_KEYS": (SCHED, GALLOC),
    "GGSPEC_DEFECT_GALLOC_NO_GROW": (GALLOC, SCHED),
}


def _cfg(target: str, profile: Profile = Profile.FIXED) -> RunConfig:
    return RunConfig(target, profile, max_examples=3, seed=20261205, shrink=False, c_reproducers=False)


@pytest.mark.parametrize("define", sorted(CAUGHT_BY))
def test_the_defect_fails_its_check_and_only_it(define: str, tmp_path: Path) -> None:
    target = variant_target(define, tmp_path)
    failing, passing = CAUGHT_BY[define]
    result = run_check(CHECKS[failing], _cfg(target))
    assert result.status in ("fail", "crash"), f"{define} went unnoticed by {failing}: {result.detail}"
    assert "CORE-11" in result.detail or "i != GGML_HASHTABLE_FULL" in result.detail, result.detail
    assert run_check(CHECKS[passing], _cfg(target)).status == "pass"


@pytest.mark.parametrize("target", ["reference", "native"])
@pytest.mark.parametrize("check", [SCHED, GALLOC])
def test_the_checks_pass_on_the_model_and_native(target: str, check: str) -> None:
    assert run_check(CHECKS[check], _cfg(target)).status == "pass"


@pytest.mark.parametrize("check", [SCHED, GALLOC])
def test_the_checks_pass_on_rc8(rc8_or_skip: Any, check: str) -> None:
    rc8_or_skip.target()
    result = run_check(CHECKS[check], _cfg("rc8", Profile.RC8))
    assert result.status == "pass", result.detail
