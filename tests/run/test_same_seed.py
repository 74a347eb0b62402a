"""The same seed gives the same run: two runs of one seed on one target have the same verdict
and the same number of examples for every clause and every check (hypothesis draws from the
seed only; nothing else of a run, no module-level state, changes what runs).

This is how the conformance/ restructure was checked, on the whole suite (seed 1, default size,
native and rc8): the JSON reports of the tree before and after agreed clause by clause. Here a
sample of the checks, on native and on rc8 (which skips only when npm or the network to the npm
registry is missing, CannotFetch).
"""

from __future__ import annotations

from typing import Any

import pytest
from ggspec.conformance.adapters import default_profile
from ggspec.conformance.engine.results import RunConfig, verdicts
from ggspec.conformance.engine.runner import load_checks, run_all

SEED = 20261201


def _sample() -> list[str]:
    """Every 9th check by name: each area, state machines included, in a minute."""
    return sorted(load_checks())[::9]


def _run(target: str) -> tuple[dict[str, tuple[str, int]], dict[str, tuple[str, int]]]:
    cfg = RunConfig(target, default_profile(target), max_examples=4, seed=SEED, c_reproducers=False, workers=2)
    results = run_all(cfg, _sample())
    checks = {r.check: (r.status, r.examples) for r in results}
    clauses = {v.id: (v.status, v.examples) for v in verdicts(results) if v.status != "uncovered"}
    return checks, clauses


@pytest.mark.parametrize("target", ["native", "rc8"])
def test_two_runs_of_one_seed_agree(target: str, rc8_or_skip: Any) -> None:
    rc8_or_skip.target(target)
    first, second = _run(target), _run(target)
    assert len(first[0]) == len(_sample()) and first[1]
    assert first == second
