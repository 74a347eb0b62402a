"""Fuzz test of reference/: the native wrapper's random calls (tests/fuzzcalls.py) in the model's
terms, plus the scheduler and the allocators. Bad input raises TypeError, ValueError, SpecViolation,
UndefinedBehaviour or UseAfterFree, never AttributeError / IndexError / AssertionError /
struct.error / ZeroDivisionError, and a freed object (or one whose context or buffer was freed)
is never used silently. Each batch runs in a forked worker; GGSPEC_FUZZ_CALLS sets the count."""

from __future__ import annotations

import os
import subprocess
import sys

from fuzzcalls import assert_survives

CALLS = int(os.environ.get("GGSPEC_FUZZ_CALLS", "2000"))


def test_reference_survives_random_calls() -> None:
    assert_survives("reference", CALLS)


def test_invariants_survive_python_O() -> None:
    """The model's checks are explicit raises: under python -O a bad call still raises typed."""
    code = (
        "from ggspec.reference.world import World\n"
        "from ggspec.reference import cpu, tdata, tensor\n"
        "from ggspec.reference.clauses import SpecError\n"
        "w = World()\n"
        "ctx = tensor.init(w)\n"
        "t = tensor.new_tensor(ctx, 0, [4])\n"
        "for bad in (lambda: tdata.tensor_set(t, 0, 0, 4), lambda: cpu.cpu_set_n_threads(None, 2),\n"
        "            lambda: tdata.tensor_set(object(), 0, 0, 4)):\n"
        "    try:\n"
        "        bad()\n"
        "    except (SpecError, TypeError, ValueError):\n"
        "        pass\n"
        "    else:\n"
        "        raise SystemExit('accepted under -O')\n"
        "print('typed')\n"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "typed", out.stderr
