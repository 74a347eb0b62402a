"""The suite inside pytest: `pytest --ggspec --ggspec-target rc8`.

Registered through the `pytest11` entry point (pyproject.toml), so every pytest in an
environment with ggspec installed loads it — and it stays inert unless `--ggspec` is given:
it adds its options and nothing else. With `--ggspec` it collects one item per check,
`ggspec::<check name>` (keywords: the check's name and its clause IDs, so `-k TDATA-3`,
`-k "sched and not split"` work), and each item runs its check as `ggspec check` does: in a
forked worker, with the run's seed, examples and profile. A failing item shows each failing
clause's labelled difference and reproducer; an item whose clauses are all known failures
(the target's known-failures file, or `--ggspec-known FILE`) is xfail; one the target cannot
run (a missing symbol) is skipped as unsupported.

`-k`, `-x`, `--junitxml` and pytest-xdist's `-n` work as usual; with the same seed (printed in
the header; `--ggspec-seed N` to fix it — under `-n` a seed is required, so all workers share
it) the verdicts are those of `ggspec check`. `--ggspec-json FILE` writes the JSON report of
`ggspec check --json` (the controller gathers every worker's results).

Without paths on the command line (`pytest --ggspec`), only the suite's items are collected;
with paths (`pytest --ggspec tests/`), the suite's items come first, then the tests found there.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from ..errors import CheckFailed

_KEY = "ggspec_result"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ggspec", "ggspec conformance suite (inert without --ggspec)")
    group.addoption("--ggspec", action="store_true", default=False, help="collect the ggspec checks, one item each")
    group.addoption("--ggspec-target", default="native", metavar="TARGET",
                    help="the target: reference, native, rc8, ggml-python-0.0.26, external:PREFIX:INCLUDE_DIR:LIBRARY")
    group.addoption("--ggspec-profile", default=None, choices=("rc8", "fixed"),
                    help="semantics to expect (default: the target's)")
    group.addoption("--ggspec-size", default="dev", choices=("dev", "ci", "thorough"), help="run size: examples per check")
    group.addoption("--ggspec-seed", type=int, default=None, metavar="N", help="hypothesis seed (printed when not given)")
    group.addoption("--ggspec-max-examples", type=int, default=None, metavar="N", help="override the examples per check")
    group.addoption("--ggspec-select", action="append", default=None, metavar="PATTERN",
                    help="only these checks: clause IDs, areas, check names, globs (as ggspec check --select)")
    group.addoption("--ggspec-known", default=None, metavar="FILE", help="a known-failures TOML file (default: the target's)")
    group.addoption("--ggspec-json", default=None, metavar="FILE", help="write the JSON report of the run here")


def _on(config: pytest.Config) -> bool:
    return bool(config.getoption("ggspec", default=False))


def pytest_configure(config: pytest.Config) -> None:
    if not _on(config):
        return
    seed = config.getoption("ggspec_seed")
    if seed is None:
        if getattr(config, "workerinput", None) is not None or config.getoption("numprocesses", default=None):
            raise pytest.UsageError("--ggspec under pytest-xdist needs --ggspec-seed N (every worker must use one seed)")
        seed = random.getrandbits(32)
    if seed < 0:
        raise pytest.UsageError(f"--ggspec-seed must be a non-negative integer, got {seed}")
    examples = config.getoption("ggspec_max_examples")
    if examples is not None and examples < 1:
        raise pytest.UsageError(f"--ggspec-max-examples must be at least 1, got {examples}")
    config.addinivalue_line("markers", "ggspec: an item of the ggspec conformance suite")
    config.stash[_SEED] = int(seed)
    config.stash[_RESULTS] = []
    config.stash[_STARTED] = (datetime.now(timezone.utc), time.monotonic())


_SEED = pytest.StashKey[int]()
_RESULTS = pytest.StashKey[list[dict[str, Any]]]()
_STARTED = pytest.StashKey[tuple[datetime, float]]()
_RUN = pytest.StashKey[Any]()


def _suite_only(config: pytest.Config) -> bool:
    """No paths given: collect only the suite (the inifile's testpaths are not collected)."""
    source = getattr(config, "args_source", None)
    kinds = getattr(pytest.Config, "ArgsSource", None)  # pytest >= 7.4
    return source is not None and kinds is not None and source != kinds.ARGS


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if _on(config) and _suite_only(config):
        return True
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if not _on(config):
        return None
    cfg = _run(config).cfg
    return (f"ggspec: target {cfg.target}, profile {cfg.profile.value}, size {cfg.size} ({cfg.examples} examples a check), "
            f"seed {cfg.seed}")


class _Run:
    """The run's plan (run/plan.py, from the plugin's options), made once per process."""

    def __init__(self, config: pytest.Config) -> None:
        from ..run.plan import Options, make_plan

        patterns = config.getoption("ggspec_select")
        self.plan = make_plan(Options(
            target=str(config.getoption("ggspec_target")), profile=config.getoption("ggspec_profile"),
            size=str(config.getoption("ggspec_size")), max_examples=config.getoption("ggspec_max_examples"),
            seed=config.stash[_SEED], select=tuple(patterns or ()), known=config.getoption("ggspec_known"),
            json=config.getoption("ggspec_json"), no_cache=True, workers=1))
        self.cfg = self.plan.cfg
        self.checks = self.plan.checks
        self.names = self.plan.selected
        self.prepared = False

    def prepare(self) -> None:
        """Fetch and build the target once (rc8, external builds), before the first check."""
        if self.prepared:
            return
        from ..run.execute import prepare

        prepare(self.plan)
        self.prepared = True


def _run(config: pytest.Config) -> _Run:
    if _RUN not in config.stash:
        try:
            config.stash[_RUN] = _Run(config)
        except ValueError as exc:  # a selection that matches nothing, a bad known file, an unknown target
            raise pytest.UsageError(f"ggspec: {exc}") from None
    run: _Run = config.stash[_RUN]
    return run


class GgspecSuite(pytest.Collector):
    def collect(self) -> Iterator[pytest.Item]:
        for name in _run(self.config).names:
            yield CheckItem.from_parent(self, name=name)


class CheckItem(pytest.Item):
    """One check of the suite, run as `ggspec check` runs it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        chk = _run(self.config).checks[self.name]
        self.extra_keyword_matches.update(chk.clauses)
        self.extra_keyword_matches.add(chk.name.split(".")[0])
        self.add_marker(pytest.mark.ggspec)

    def runtest(self) -> None:
        from ..engine.results import FAILING
        from ..engine.runner import run_check
        from ..reports import report
        from ..run.execute import judge_one

        run = _run(self.config)
        run.prepare()
        result = run_check(run.checks[self.name], run.cfg)
        self.user_properties.append((_KEY, result.to_json()))
        found = judge_one(run.plan, result)
        failing = [v for v in found if v.status in FAILING]
        if failing:
            lines = report.failure_lines(failing, [result], verbose=True)[1:]  # without "N failing clause(s):"
            first = next((f.difference[0] for f in report.failures_of(failing[0], [result]) if f.difference), "")
            head = ", ".join(f"{v.id} {v.status.upper()}" for v in failing) + (f": {first}" if first else "")
            raise CheckFailed("\n".join([head, *lines]).strip())
        if any(v.status == "xfail" for v in found):
            pytest.xfail("; ".join(f"{v.id}: {v.detail}" for v in found if v.status == "xfail"))
        if result.status in ("unsupported", "skipped"):
            pytest.skip(f"{result.status}: {result.detail.splitlines()[0] if result.detail else ''}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        chk = _run(self.config).checks[self.name]
        return self.path, None, f"ggspec check {chk.name} [{', '.join(chk.clauses)}]"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the suite's items first (before -k and -m deselect, which run after this hook)."""
    if not _on(config):
        return
    suite = GgspecSuite.from_parent(session, name="ggspec", nodeid="ggspec")
    mine = list(suite.collect())
    items[:0] = mine
    # counted as collected by the terminal ("collected N items"), as a collector's items are
    config.hook.pytest_collectreport(report=pytest.CollectReport(suite.nodeid, "passed", None, [*mine]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Gather each check's result (from this process, or from an xdist worker's report)."""
    for key, value in getattr(report, "user_properties", []):
        if key == _KEY and report.when == "call":
            _PENDING.append(value)


#: results seen by pytest_runtest_logreport, which gets no config: moved to the stash at the end
_PENDING: list[dict[str, Any]] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The JSON report of `--ggspec-json`: the one that `ggspec check --json` writes for the same
    plan (run/execute.py's judge and report_json), from every worker's results."""
    config = session.config
    if not _on(config) or getattr(config, "workerinput", None) is not None or not config.getoption("ggspec_json"):
        return
    from ..engine.results import CheckResult
    from ..run.execute import Outcome, judge, report_json

    plan = _run(config).plan
    order = {n: i for i, n in enumerate(plan.selected)}
    results = sorted((CheckResult.from_json(r) for r in _PENDING), key=lambda r: order.get(r.check, len(order)))
    started, t0 = config.stash[_STARTED]
    outcome = Outcome(judge(plan, results), results, started, time.monotonic() - t0, keys=plan.verdict_keys())
    out = report_json(plan, outcome)
    Path(config.getoption("ggspec_json")).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
