"""What tests/checks/test_sched_defect_*.py share: native builds with one planted scheduler defect
each (`GGSPEC_DEFECT_SCHED_*`, native/testing/defects.py) must fail the clause the defect breaks, and
hypothesis must shrink the failing example to a graph of at most 6 nodes.

- `GGSPEC_DEFECT_SCHED_PASS2`: pass 2.1 spreads the lowest-priority backend too: one of
  SCHED-8 to SCHED-11 fails (tests/checks/test_sched_defect_pass2.py);
- `GGSPEC_DEFECT_SCHED_DEDUP`: a split lists an input once per use: SCHED-17 fails
  (tests/checks/test_sched_defect_dedup.py);
- `GGSPEC_DEFECT_SCHED_EVAL_BATCH`: with an eval callback, each range's last node is never
  computed: SCHED-24 fails (tests/checks/test_sched_defect_eval_batch.py).

Each variant runs every scheduler check (a fixed seed, 25 examples a check); no other
scheduler clause may fail, so a defect is blamed on the clause it breaks. Only the checks of the
broken clauses shrink their failing example (the size of the shrunk graph is asserted for them);
the downstream checks' failures are reported as drawn. One file per defect,
so that pytest-xdist (`--dist loadfile`) runs the three variants on different workers; the
default build's run of the same checks is tests/checks/test_sched_defects.py.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import CheckResult, RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.conformance.inputs.strategies import SchedCase
from ggspec.native.build import build_variant
from ggspec.reference.clauses import Profile

load_checks()

SEED = 20261130
EXAMPLES = 25
MAX_SHRUNK_NODES = 6

#: defect -> the clauses it breaks (at least one must fail, no other scheduler clause may)
DEFECTS = {
    "GGSPEC_DEFECT_SCHED_PASS2": {"SCHED-8", "SCHED-9", "SCHED-10", "SCHED-11"},
    "GGSPEC_DEFECT_SCHED_DEDUP": {"SCHED-17"},
    "GGSPEC_DEFECT_SCHED_EVAL_BATCH": {"SCHED-24"},
}

#: what a defect may also be seen through: a wrong pass 2 changes every later decision of the
#: scheduler (passes 3 and 4, each split's inputs and copies, what is queued on each device, the
#: fallback's plan), so the whole-plan checks of those clauses see it too (the fixtures' plan
#: check also names pass 1, SCHED-7).
#: Since the harness compares the virtual devices' entry logs (judge_entry_logs), a defect is
#: also seen, truly, by any check whose run makes the device calls the defect changes (seen with
#: seed 20261130): under PASS2 the fallback's spread changes the supports_op calls and the
#: splits, so SCHED-25's callback run and SCHED-32's weights run log other entries; under DEDUP
#: a split copies a repeated input once per use, an extra set_tensor_async on the device's log
#: of every check that computes such a graph; under EVAL_BATCH a range's graph_compute holds one
#: node less (an empty range computes none), which SCHED-25's callback run logs too, and so does
#: SCHED-22's fixture check, which asks the callback for every node to judge each where it is
#: computed (every range is one node: none is computed).
DOWNSTREAM = {
    "GGSPEC_DEFECT_SCHED_PASS2": {"SCHED-7", "SCHED-12", "SCHED-13", "SCHED-17", "SCHED-19", "SCHED-22", "SCHED-38",
                                  "SCHED-25", "SCHED-32"},
    "GGSPEC_DEFECT_SCHED_DEDUP": {"SCHED-7", "SCHED-8", "SCHED-9", "SCHED-10", "SCHED-11", "SCHED-12", "SCHED-13",
                                  "SCHED-19", "SCHED-20", "SCHED-21", "SCHED-22", "SCHED-24", "SCHED-25", "SCHED-26",
                                  "SCHED-30", "SCHED-32"},
    "GGSPEC_DEFECT_SCHED_EVAL_BATCH": {"SCHED-25", "SCHED-22"},
}


def shrunk_case(detail: str) -> SchedCase | None:
    """The SchedCase of a failure's reproducer (None when the check draws no SchedCase)."""
    found = re.search(r"args=(\{.*\})\)\nEOF", detail, re.DOTALL)
    assert found is not None, f"no reproducer in:\n{detail}"
    namespace: dict[str, Any] = {}
    exec("from ggspec.conformance.inputs.strategies import *\nfrom ggspec.reference.vdev import *\n"  # noqa: S102
         "from ggspec.conformance.inputs.sched_scope import ScopeCase", namespace)
    args = eval(found.group(1), namespace)  # noqa: S307 - our own reproducer text
    cases = [v if isinstance(v, SchedCase) else SchedCase(v.setup, v.graph)
             for v in args.values() if isinstance(v, SchedCase) or type(v).__name__ == "ScopeCase"]
    return cases[0] if cases else None


def variant_target(define: str, out: Path) -> str:
    """The native build with `define`, in `out` (the run's build cache compiles it once; the
    module name is the one tests/inputs/test_vectors.py and tests/inputs/test_sched_exhaustive.py use too)."""
    module = "ggspec_native_" + define.lower()
    build_variant(module, str(out), defines=[define])
    return f"native:{out}:{module}"


def run_sched_checks(target: str, shrink_for: frozenset[str] | None = None) -> list[CheckResult]:
    """Every scheduler check at EXAMPLES examples. With `shrink_for`, a failing example is shrunk
    only in the checks of a clause in it, and the other checks report theirs as drawn: shrinking
    does not change which checks fail, and their examples are not looked at (PASS2's and
    DEDUP's runs took 35 s and 28 s instead of 49 s and 51 s, bench/RESULTS.md)."""
    shrunk = RunConfig(target, Profile.FIXED, max_examples=EXAMPLES, seed=SEED, c_reproducers=False)
    as_drawn = replace(shrunk, shrink=False)
    return [run_check(CHECKS[name], shrunk if shrink_for is None or set(CHECKS[name].clauses) & shrink_for else as_drawn)
            for name in sorted(CHECKS) if name.startswith("sched.")]


def assert_caught_where_it_is_and_shrunk(define: str, target: str) -> None:
    """The defect `define`, built into `target`, fails a check of the clauses it breaks (one
    whose clauses are all broken ones), no scheduler clause outside DEFECTS and DOWNSTREAM, and
    the checks of its clauses shrink it to at most MAX_SHRUNK_NODES nodes."""
    results = run_sched_checks(target, frozenset(DEFECTS[define]))
    failing = [r for r in results if r.status != "pass"]
    failing_clauses = {c for r in failing for c in r.clauses}
    broken = DEFECTS[define]
    assert failing_clauses & broken, f"{define} went unnoticed: {[r.check for r in failing]}"
    # caught where it is: some failing check covers only the broken clauses
    assert any(set(r.clauses) <= broken for r in failing), (define, [(r.check, r.clauses) for r in failing])
    allowed = broken | DOWNSTREAM[define]
    assert failing_clauses <= allowed, (f"{define} is blamed on more than {sorted(allowed)}: "
                                        + "\n".join(f"{r.check} {r.clauses}: {r.detail[:600]}" for r in failing))
    for r in failing:  # the checks of the broken clauses shrink it (downstream checks may not)
        if not set(r.clauses) & broken:
            continue
        case = shrunk_case(r.detail)
        if case is not None:
            assert len(case.graph.spec.nodes) <= MAX_SHRUNK_NODES, (r.check, case.graph.spec.nodes)
