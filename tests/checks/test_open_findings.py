"""Open findings, pinned so they do not depend on a seed: each test replays a saved example and
is marked xfail(strict=True) with the reason, so it turns into a failure (XPASS) the day the
cause is fixed and the marker must go; a fixed finding stays as a passing regression test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _has_avx2() -> bool:
    try:
        return " avx2 " in Path("/proc/cpuinfo").read_text(encoding="utf-8").replace("\n", " ")
    except OSError:
        return False


@pytest.mark.skipif(not _has_avx2(), reason="needs a CPU with AVX2 (native's SIMD kernels)")
def test_lazy_device_output_reading_reused_inexact_bytes() -> None:
    """Fixed (was xfail strict): sched.allocation_graph (seed 4 of a dev run): with a lazy
    virtual device, add2 reads a copy of cpy1's CPU memory after the allocator reused it for
    scale4 (SCHED-22's finding), so add2 holds the low bytes of an inexact F32 MUL_MAT result,
    which native's SIMD sums give otherwise than the reference's (within MUL_MAT's bound). The
    check compared add2 as exact, its bound taken from a plain CPU run; now the bound follows
    the bytes actually read (checks/sched.py, reads_reused_memory): add2 is not compared by
    value, and says so, while every other output still is."""
    env = {**os.environ, "GGSPEC_NATIVE_KERNELS": "avx2"}
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "replay",
                           str(HERE / "data" / "lazy-device-reused-memory-simd.json"), "--target", "native"],
                          capture_output=True, text=True, env=env, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "1 of 1 check(s) agree" in out, out[-1500:]
    assert "add2: reads reused memory" in out and "scale3: bytes" in out and "scale4: values" in out, out[-1500:]


def test_an_exact_late_read_is_still_compared_bit_for_bit() -> None:
    """The other side of the rule: scale1 of SCHED-22's pinned case reads memory another tensor
    took meanwhile, but that tensor is exact (rc8: cvt2, w0's values; fixed: scale3) and SCALE is
    exact, so scale1 is compared byte for byte, under both profiles; in the pinned finding the
    bytes read are scale4's (MUL_MAT), so add2 is not."""
    from ggspec.conformance.adapters.reference import ReferenceTarget
    from ggspec.conformance.checks import sched as C
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.tools.vectors import Vector, check_args
    from ggspec.reference.clauses import Profile

    load_checks()
    for profile in Profile:
        assert C.reads_reused_memory(ReferenceTarget(profile), C._LATE_READ_MEETS_INPUTS_FIRST) == {"scale1": True}
    case = check_args(Vector.load(HERE / "data" / "lazy-device-reused-memory-simd.json"), "sched.allocation_graph")["case"]
    assert C.reads_reused_memory(ReferenceTarget(Profile.FIXED), case) == {"add2": False}


def test_the_same_example_agrees_with_the_portable_kernels() -> None:
    env = {**os.environ, "GGSPEC_NATIVE_KERNELS": "portable"}
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "replay",
                           str(HERE / "data" / "lazy-device-reused-memory-simd.json"), "--target", "native"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and "1 of 1 check(s) agree" in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-1500:]
