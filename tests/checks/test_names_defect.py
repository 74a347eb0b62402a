"""Issue 30, class 2: names at and past their fields' limits (conformance/checks/names.py).

`GGSPEC_DEFECT_REG_FROM_STR_NAME` (native/testing/defects.py) makes init_backend_from_str keep
one byte less of a name without params than the registry stores: a backend registered under a
name of 127 bytes or more is then not found from its own name. names.registry_names_at_the_limit
fails on that build (its explicit examples reach the cut under every seed); the checks of the
tensor names do not. All three checks pass on the reference, on native and on rc.8.
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

DEFINE = "GGSPEC_DEFECT_REG_FROM_STR_NAME"
REGISTRY = "names.registry_names_at_the_limit"
TENSORS = ("names.derived_tensor_names_at_the_limit", "names.copies_named_at_the_limit")


def _cfg(target: str, profile: Profile = Profile.FIXED) -> RunConfig:
    # 5 examples: the explicit ones come first, so every landing of the name is run
    return RunConfig(target, profile, max_examples=5, seed=20261205, shrink=False, c_reproducers=False)


def test_a_name_cut_a_byte_early_fails_the_registry_check_only(tmp_path: Path) -> None:
    target = variant_target(DEFINE, tmp_path)
    result = run_check(CHECKS[REGISTRY], _cfg(target))
    assert result.status == "fail", result.detail
    assert "init from 127 bytes" in result.detail or "init from 128 bytes" in result.detail, result.detail
    for name in TENSORS:
        assert run_check(CHECKS[name], _cfg(target)).status == "pass", name


@pytest.mark.parametrize("target", ["reference", "native"])
@pytest.mark.parametrize("check", [REGISTRY, *TENSORS])
def test_the_checks_pass_on_the_model_and_native(target: str, check: str) -> None:
    assert run_check(CHECKS[check], _cfg(target)).status == "pass"


@pytest.mark.parametrize("check", [REGISTRY, *TENSORS])
def test_the_checks_pass_on_rc8(rc8_or_skip: Any, check: str) -> None:
    rc8_or_skip.target()
    result = run_check(CHECKS[check], _cfg("rc8", Profile.RC8))
    assert result.status == "pass", result.detail
