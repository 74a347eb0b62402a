"""The runner's warm-up (runner.warm_up: strategies validated, @checked plans compiled, the
target's Python modules imported, hypothesis' constants scanned, once, before any worker is
forked) changes no verdict: each check run alone (one check: run_all skips the warm-up) gives the
status and example count it gets in a run that warmed up, death tests (forked examples) included."""

from __future__ import annotations

from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import run_all
from ggspec.reference.clauses import Profile

#: behaviour checks, assert checks whose examples fork and die, a graph check
NAMES = ["tdata.get_reads_the_range", "tdata.set_out_of_bounds", "buf.buffer_name", "graph.random_graphs_compute"]


def test_warming_up_changes_no_verdict() -> None:
    def cfg() -> RunConfig:
        return RunConfig("native", Profile.FIXED, max_examples=4, seed=3, c_reproducers=False)

    warmed = run_all(cfg(), NAMES)
    alone = [r for name in NAMES for r in run_all(cfg(), [name])]
    assert [r.check for r in warmed] == NAMES
    assert [(r.check, r.status, r.examples) for r in warmed] == [(r.check, r.status, r.examples) for r in alone]
    assert all(r.status == "pass" and r.examples >= 1 for r in warmed), [(r.check, r.status, r.detail[:200]) for r in warmed]
