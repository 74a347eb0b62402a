"""Port A (tests/checks/rc8_ports.py: rc.8 with tensor_set's bound `<` for `<=`) fails TDATA-3,
the clause of the changed line, by the explicit edge examples of conformance/checks/tdata.py (a
range ending exactly at the tensor's end is accepted): under every seed, also where the drawn
examples never hit the edge."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.reference.clauses import Profile
from rc8_ports import PORT_A, build_port

load_checks()


@pytest.fixture
def port_a(rc8_or_skip: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    cpp, _ = rc8_or_skip.sources()
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path / "cache"))  # its adapter module: a throwaway build
    return build_port(PORT_A, cpp, tmp_path)


def test_the_edge_checks_fail_port_a_on_tdata_3(port_a: str) -> None:
    cfg = RunConfig(port_a, Profile.RC8, max_examples=1, seed=1, c_reproducers=False, shrink=False)
    result = run_check(CHECKS["tdata.set_to_the_edge"], cfg)
    assert result.status in ("fail", "crash") and "TDATA-3" in result.clauses, (result.status, result.detail)
    assert "tensor write out of bounds" in result.detail, result.detail
    # the out-of-bounds check alone passes it: the change lets no longer range through
    out_of_bounds = run_check(CHECKS["tdata.set_out_of_bounds"], replace(cfg, max_examples=10))
    assert out_of_bounds.status == "pass", out_of_bounds.detail
