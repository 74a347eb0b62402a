"""Issue 30, class 5: graph_cpy and graph_dup (conformance/checks/graphcpy.py, CORE-81 to CORE-86).

`GGSPEC_DEFECT_GRAPH_CPY_LEAFS` (native/testing/defects.py) copies as many leafs as the source
has nodes: a graph of 6 leafs and 3 nodes copied into a graph that held another one lists 3
leafs the copy never wrote (that graph's, or NULL: the target crashes reading them).
graphcpy.graph_cpy_and_dup fails on that build (its first explicit example is that copy, so
under every seed); the capacity checks (CORE-82 to CORE-85, asserted before
anything is copied) still pass. Every check of the module passes on the reference, native and rc.8.
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

DEFINE = "GGSPEC_DEFECT_GRAPH_CPY_LEAFS"
CHECK = "graphcpy.graph_cpy_and_dup"
ALL = sorted(name for name in CHECKS if name.startswith("graphcpy."))


def _cfg(target: str, profile: Profile = Profile.FIXED) -> RunConfig:
    return RunConfig(target, profile, max_examples=4, seed=20261205, shrink=False, c_reproducers=False)


def test_leafs_copied_up_to_the_node_count_fail_the_copy_check(tmp_path: Path) -> None:
    target = variant_target(DEFINE, tmp_path)
    result = run_check(CHECKS[CHECK], _cfg(target))
    assert result.status in ("fail", "crash"), result.detail
    # the copy of 6 leafs and 3 nodes: its leaf list reads 3 entries the defect never wrote
    assert "Shape(pairs=3, chain=0)" in result.detail, result.detail
    for name in ALL:
        if name != CHECK:
            assert run_check(CHECKS[name], _cfg(target)).status == "pass", name


def test_the_module_has_the_six_clauses() -> None:
    assert {c for name in ALL for c in CHECKS[name].clauses} >= {f"CORE-{i}" for i in range(81, 87)}


@pytest.mark.parametrize("target", ["reference", "native"])
@pytest.mark.parametrize("check", ALL)
def test_the_checks_pass_on_the_model_and_native(target: str, check: str) -> None:
    assert run_check(CHECKS[check], _cfg(target)).status == "pass"


@pytest.mark.parametrize("check", ALL)
def test_the_checks_pass_on_rc8(rc8_or_skip: Any, check: str) -> None:
    rc8_or_skip.target()
    assert run_check(CHECKS[check], _cfg("rc8", Profile.RC8)).status == "pass"
