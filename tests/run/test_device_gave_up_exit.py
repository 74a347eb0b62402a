"""A run that selected a real device whose every check that asked for it ended unsupported is not
a pass (issue 30, class 9): `ggspec check --device webgpu` where no WebGPU device can start (the
library path points nowhere) exits 1 with one verdict line saying why; the same selection on the
mock passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SELECT = ["--select", "backend.supports_op_tells_the_truth", "--select", "backend.backend_name"]


def _check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GGSPEC_WGPU_LIB": str(tmp_path / "no-such-library.so"), "GGSPEC_CACHE": str(tmp_path / "c")}
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--seed", "1", "--no-cache", *SELECT,
                           *args], capture_output=True, text=True, timeout=300, check=False, env=env)


def test_no_device_is_not_a_pass(tmp_path: Path) -> None:
    proc = _check(tmp_path, "--device", "webgpu")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("verdict: NO DEVICE: all 1 check(s) that asked for the webgpu device ended unsupported"), last
    assert "WebGPU" in last


def test_the_same_selection_on_the_mock_passes(tmp_path: Path) -> None:
    proc = _check(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "verdict: PASS"
