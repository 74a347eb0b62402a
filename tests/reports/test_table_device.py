"""The terminal table's head names the device the run gave the target (`--device`), and
`ggspec check` passes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ggspec.conformance.engine.results import CheckResult, RunConfig, verdicts
from ggspec.conformance.reports import report
from ggspec.reference.clauses import Profile


def test_the_head_names_the_device() -> None:
    results = [CheckResult("tdata.set_unallocated", ("TDATA-1",), "pass", 5)]
    text = report.table(verdicts(results), RunConfig("native", Profile.FIXED, seed=1), results, device="webgpu")
    assert text.splitlines()[0].endswith("seed 1, device webgpu")


def test_ggspec_check_names_the_default_device(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--select", "TDATA-1", "--max-examples",
                           "1", "--seed", "1", "--quiet"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "seed 1, device vdev" in proc.stdout
