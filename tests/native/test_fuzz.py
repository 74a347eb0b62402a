"""Fuzz test of native/'s Python wrapper: random calls of its public functions with random and
hostile arguments (None, wrong kinds, freed and foreign objects, huge and negative ints, read-only
memory), each batch in a forked worker. No call may crash or abort the process, raise anything
but TypeError / ValueError / the reference's SpecError family, or silently accept a freed object
or an object of the wrong kind.

GGSPEC_FUZZ_CALLS sets the number of calls (default 2,000; CI runs 10,000). Under the
AddressSanitizer build (GGSPEC_NATIVE_MODULE + LD_PRELOAD of libasan, see .ci/run) a report in a
worker's stderr fails the test too.
"""

from __future__ import annotations

import os

from fuzzcalls import BATCH, Tally, hypothesis_batches, run_forked_batch
from hypothesis import HealthCheck, given, settings

CALLS = int(os.environ.get("GGSPEC_FUZZ_CALLS", "2000"))


def fuzz(api: str) -> Tally:
    """Play CALLS random calls against `api`, BATCH per forked worker; fail on the first bad batch."""
    total = Tally()

    @settings(max_examples=max(1, CALLS // BATCH), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(batch=hypothesis_batches())
    def one(batch: list[tuple[int, tuple[tuple[int, int], ...]]]) -> None:
        ending, tally, stderr = run_forked_batch(api, batch)
        assert ending == "ok", f"a worker ended with {ending}: {tally.examples}"
        assert tally.bad() == 0, f"bad outcomes: {dict(tally.outcomes)}\n{tally.examples}"
        assert "Sanitizer" not in stderr and "runtime error:" not in stderr, stderr
        total.merge(tally)

    one()
    return total


def test_native_wrapper_survives_random_calls() -> None:
    total = fuzz("native")
    calls = sum(total.outcomes.values())
    print(f"native wrapper: {calls} calls: {dict(total.outcomes)}")
    assert calls >= CALLS // BATCH * BATCH
    assert total.outcomes["ok"] > calls // 10, "too few calls got through: the fuzz test would test only refusals"
