"""What one forked worker costs, in a process loaded as `ggspec check`'s are (issue 22).

    python bench/fork_cost.py [--n 200]

Three figures, each per worker, CPU milliseconds of the parent and of the children (from
getrusage) and the children's page faults:

- an empty worker: `isolate.run_forked(lambda: None)`: the fork, the worker's set-up, its exit;
- a death example: `differential.run_on_target(..., expect_death=True)` of
  tdata.set_out_of_bounds (the target aborts, as the reference says it must);
- a check's worker: `runner.run_check` against `runner._run_and_collect` in this process, for
  three small checks at 1 example (their pinned examples run too).

The process first does what a run does before its workers: load_checks, warm_up, load_target.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from typing import Any

from ggspec.conformance.engine import differential, isolate, runner
from ggspec.conformance.engine.results import RunConfig
from ggspec.reference.clauses import Profile

SMALL_CHECKS = ("alloc.tallocr_over_caller_memory", "tdata.get_reads_the_range", "core.view_past_the_root")


def _usage() -> tuple[float, float, int]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, kids.ru_minflt


def measure(label: str, n: int, fn: Callable[[], Any]) -> None:
    before, start = _usage(), time.monotonic()
    for _ in range(n):
        fn()
    after, wall = _usage(), time.monotonic() - start
    print(f"{label:<34} wall {wall / n * 1e3:6.2f} ms  parent {(after[0] - before[0]) / n * 1e3:6.2f} ms  "
          f"children {(after[1] - before[1]) / n * 1e3:6.2f} ms  children's page faults {(after[2] - before[2]) / n:6.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="workers per figure")
    n = ap.parse_args().n
    checks = runner.load_checks()
    cfg = RunConfig("native", Profile.FIXED, max_examples=1, seed=1, c_reproducers=False)
    runner.warm_up(cfg, list(checks.values()))
    assert runner.load_target(cfg) is None
    rss = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
    print(f"this process: {rss:.0f} MiB resident")

    measure("empty worker", n, lambda: isolate.run_forked(lambda: None, reports=False))

    death = checks["tdata.set_out_of_bounds"]
    args = death.examples[0] if death.examples else None
    if args is None:  # no pinned example: the first one the reference says must abort
        seen: list[dict[str, Any]] = []
        real = differential.run_on_target

        def grab(chk: Any, a: dict[str, Any], *rest: Any, **kw: Any) -> Any:
            if kw.get("expect_death", rest[2] if len(rest) > 2 else False) and not seen:
                seen.append(a)
            return real(chk, a, *rest, **kw)

        differential.run_on_target = grab  # type: ignore[assignment]
        try:
            runner.run_check_here(death, RunConfig("native", Profile.FIXED, max_examples=5, seed=1, c_reproducers=False))
        finally:
            differential.run_on_target = real  # type: ignore[assignment]
        args = seen[0]
    ending = differential.run_on_target(death, args, "native", Profile.FIXED, True).ending
    assert ending == "abort", ending
    measure("death example (the target aborts)", n,
            lambda: differential.run_on_target(death, args, "native", Profile.FIXED, True))

    small = [checks[c] for c in SMALL_CHECKS]
    measure("check in its own worker", max(n // 10, 1), lambda: [runner.run_check(c, cfg) for c in small])
    measure("check in this process", max(n // 10, 1), lambda: [runner._run_and_collect(c, cfg) for c in small])
    print(f"(the two check lines are for {len(small)} checks a round)")


if __name__ == "__main__":
    main()
