"""Fuzz test of native/'s Python wrapper: random calls of its public functions with random and
hostile arguments (None, wrong kinds, freed and foreign objects, huge and negative ints, read-only
memory), each batch in a forked worker. No call may crash or abort the process, raise anything
but TypeError / ValueError / the reference's SpecError family (UseAfterFree included), or
silently accept a freed object or an object of the wrong kind (see tests/fuzzcalls.py).

GGSPEC_FUZZ_CALLS sets the number of calls (default 2,000; CI runs 10,000). Under the
AddressSanitizer build (GGSPEC_NATIVE_MODULE + LD_PRELOAD of libasan, see .ci/run) a report in a
worker's stderr fails the test too.
"""

from __future__ import annotations

import os

from fuzzcalls import BATCH, fuzz

CALLS = int(os.environ.get("GGSPEC_FUZZ_CALLS", "2000"))


def test_native_wrapper_survives_random_calls() -> None:
    total = fuzz("native", CALLS)
    calls = sum(total.outcomes.values())
    print(f"native wrapper: {calls} calls: {dict(total.outcomes)}")
    assert calls >= CALLS // BATCH * BATCH
    assert total.outcomes["ok"] > calls // 10, "too few calls got through: the fuzz test would test only refusals"
