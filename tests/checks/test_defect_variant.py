"""The suite catches real defects: a native build with a bounds check off by one
(GGSPEC_DEFECT_BOUNDS) and a copy path that skips a view's offset
(GGSPEC_DEFECT_COPY_VIEW_OFFSET) fails exactly the clauses those defects break."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ggspec.native.build import build_variant

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def defect_module(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("defect")
    build_variant("ggspec_native_defect", str(out), defines=["GGSPEC_DEFECT_BOUNDS", "GGSPEC_DEFECT_COPY_VIEW_OFFSET"])
    return f"{out}:ggspec_native_defect"


def _check(target: str, tmp_path: Path, *extra: str) -> dict[str, str]:
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--quiet", "--seed", "20261130",
         "--max-examples", "25", "--json", str(report), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=1200,
    )
    data = json.loads(report.read_text())
    statuses = {c["id"]: c["status"] for c in data["clauses"]}
    assert proc.returncode == (1 if any(s in ("fail", "crash") for s in statuses.values()) else 0), proc.stderr[-2000:]
    return statuses


def test_defect_variant_fails_exactly_the_broken_clauses(defect_module: str, tmp_path: Path) -> None:
    statuses = _check(f"native:{defect_module}", tmp_path)
    failing = {cid for cid, s in statuses.items() if s in ("fail", "crash")}
    assert failing == {"TDATA-3", "COPY-4"}, statuses
    assert "uncovered" not in statuses.values()
