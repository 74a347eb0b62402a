"""run/plan.py and run/execute.py without running a target: a plan is made once and frozen, its
settings carry no results, the selection and the seed are decided there, and the exit status is
one table."""

from __future__ import annotations

import dataclasses
import signal
from pathlib import Path

import pytest
from ggspec.conformance.engine.results import ClauseVerdict, RunConfig
from ggspec.conformance.errors import SelectionError, UsageError
from ggspec.conformance.reports.baseline import Changes
from ggspec.conformance.run.execute import exit_status
from ggspec.conformance.run.plan import Options, make_plan


def _verdict(status: str) -> ClauseVerdict:
    return ClauseVerdict("TDATA-3", "t", "assert", status, 1, "", [])  # type: ignore[arg-type]


def test_the_settings_are_frozen_and_hold_no_results() -> None:
    plan = make_plan(Options(target="reference", select=("TDATA-3",), seed=5, files=False))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.cfg.seed = 6  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.names = ()  # type: ignore[misc]
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    assert not fields & {"interrupted", "load_error", "results"}, fields


def test_the_plan_decides_the_selection_the_seed_and_the_run_folder(tmp_path: Path) -> None:
    every = make_plan(Options(target="reference", seed=5, files=False))
    assert every.names is None and every.selected == sorted(every.checks) and every.cfg.repro_dir is None
    picked = make_plan(Options(target="reference", select=("TDATA-3",), seed=5, json=str(tmp_path / "r.json")))
    assert picked.names is not None and all("TDATA-3" in picked.checks[n].clauses for n in picked.names)
    assert picked.cfg.seed == 5 and picked.cfg.stream == str(tmp_path / "r.jsonl")
    assert picked.cfg.repro_dir == str(tmp_path / "r.files")
    halves = [make_plan(Options(target="reference", seed=5, shard=f"{k}/2", files=False)).names for k in (1, 2)]
    assert halves[0] is not None and halves[1] is not None
    assert sorted([*halves[0], *halves[1]]) == sorted(every.checks) and not set(halves[0]) & set(halves[1])
    assert "seed 5" in picked.header() and f"{len(picked.selected)} of {len(picked.checks)} checks" in picked.header()


def test_a_mistake_is_found_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(SelectionError):
        make_plan(Options(target="reference", select=("NOPE-1",), files=False))
    with pytest.raises(UsageError, match="--workers"):
        make_plan(Options(target="reference", workers=0, files=False))
    with pytest.raises(UsageError, match="--timeout"):
        make_plan(Options(target="reference", timeout=0, files=False))
    with pytest.raises(UsageError, match="conflict"):
        make_plan(Options(target="reference", known=str(tmp_path / "k.toml"), no_known=True, files=False))


@pytest.mark.parametrize(("found", "interrupted", "load_error", "changes", "strict", "want"), [
    (["pass"], "", "", None, False, 0),
    (["pass", "fail"], "", "", None, False, 1),
    (["crash"], "", "", None, False, 1),
    (["xpass"], "", "", None, False, 0),
    (["xpass"], "", "", None, True, 1),
    (["uncovered"], "", "", None, True, 1),
    (["fail"], "", "", Changes(), False, 0),  # with a baseline only a newly failing clause fails
    (["fail"], "", "", Changes(newly_failing=[("TDATA-3", "pass", "fail")]), False, 1),
    (["pass"], "", "the target could not be loaded", None, False, 3),
    (["pass"], "SIGINT", "", None, False, 128 + signal.SIGINT),
    (["pass"], "SIGTERM", "", None, False, 128 + signal.SIGTERM),
])
def test_the_exit_status(found: list[str], interrupted: str, load_error: str, changes: Changes | None, strict: bool,
                         want: int) -> None:
    assert exit_status([_verdict(s) for s in found], interrupted, load_error, changes, strict) == want
