"""Run a plan (plan.py), judge it and pick the exit status: the one copy of a run that `ggspec check`,
the pytest plugin and `ggspec compare` share.

`execute` fetches and builds the target, takes the verdicts it need not compute (`--reuse-from`,
then the verdict cache), loads the target in a worker (a target that cannot load gives every
check that verdict), runs the rest (`engine.runner.run_all`; an interrupt keeps what finished),
stores the new verdicts in the cache and judges the run (`judge`: per clause, known failures
applied, a selection's untouched clauses left out; the baseline's changes). It returns an
`Outcome` with the run's exit code (`exit_status`); `report_json` its JSON report. It prints
nothing: what it has to say goes to the `note` callback, and each check's progress line to
`progress` — the front end prints them.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..engine.results import FAILING, NOT_SELECTED, CheckResult, ClauseVerdict, verdicts
from ..errors import HarnessFailed, RunInterrupted
from .plan import Plan

Note = Callable[[str], None]


def _quiet(line: str) -> None:
    pass


@dataclass(frozen=True)
class Outcome:
    """What a run found: never written into its settings."""

    found: list[ClauseVerdict]
    results: list[CheckResult]
    started: datetime
    seconds: float
    #: the signal that stopped the run ("SIGINT", "SIGTERM"), else ""
    interrupted: str = ""
    #: how the target's loading ended, when it could not be loaded, else ""
    load_error: str = ""
    #: the changes since `--baseline` (reports/baseline.py's Changes), else None
    changes: Any = None
    #: each selected check's verdict key (run/cache.py), when computed
    keys: dict[str, str] = field(default_factory=dict)
    #: where the verdicts this run did not compute came from: source -> check names
    reused: dict[str, list[str]] = field(default_factory=dict)
    #: the run's exit code (exit_status; 1 also when `gave_up`)
    status: int = 0
    #: a device was selected (`--device webgpu`, ...) and every check that asked for it ended
    #: unsupported: the one line why (adapters/webgpu_device.device_gave_up), else ""
    gave_up: str = ""
    #: ggspec itself failed (engine/limits.py: out of memory, too small an address space): the
    #: one line why, and the run has no verdict (exit 3), else ""
    harness: str = ""

    @property
    def failing(self) -> list[ClauseVerdict]:
        return [v for v in self.found if v.status in FAILING]


@dataclass
class _Taken:
    """What a run takes from elsewhere: the results, by source, every selected check's verdict
    key, and whether the cache stores this run's verdicts."""

    results: list[CheckResult]
    sources: dict[str, list[str]]
    keys: dict[str, str]
    store: bool


def _taken(plan: Plan, note: Note) -> _Taken:
    """The verdicts this run does not compute: first those of `--reuse-from` (reuse.py), then the
    verdict cache's (cache.py)."""
    from . import cache, reuse

    opts, cfg, selected = plan.options, plan.cfg, plan.selected
    off = cache.off_reason(opts.no_cache, cfg.derandomize, opts.seed is not None or plan.reuse_from is not None)
    if off is not None and not opts.no_cache:
        note(f"verdict cache off ({off})")
    if off is not None and plan.reuse_from is None and not opts.json:
        return _Taken([], {}, {}, False)
    keys = plan.verdict_keys()
    found = _Taken([], {}, keys, off is None)
    if plan.reuse_from is not None:
        taken = reuse.reused(plan.reuse_from, keys, opts.device)
        found.results += taken
        found.sources[str(opts.reuse_from)] = [r.check for r in taken]
        note(f"--reuse-from {opts.reuse_from}: {len(taken)} of {len(selected)} check(s) reused (no example of theirs "
             "asked for a device there, so their verdict is the same on any device; same target build, sources, seed, "
             "size and profile)")
    if off is None:
        done = {r.check for r in found.results}
        cached = [r for r in (cache.load(keys[n], opts.device) for n in selected if n not in done) if r is not None]
        found.results += cached
        found.sources["verdict cache"] = [r.check for r in cached]
        note(f"verdict cache: {len(cached)} of {len(selected)} check(s) reused from {cache.verdict_dir()} "
             "(unchanged check, reference, target, seed, size, profile; --no-cache runs them)")
    return found


def prepare(plan: Plan) -> None:
    """Fetch and build the target (runs nothing of it: it loads in a worker)."""
    from ..adapters import prepare_target

    prepare_target(plan.cfg.target)


def load_failure(plan: Plan) -> CheckResult | None:
    """Load the target in a worker: None when it loads, else the verdict every check gets (a
    front end that checks its targets before it runs any: `ggspec compare`)."""
    from ..engine.runner import load_target

    return load_target(plan.cfg)


def execute(plan: Plan, progress: Note | None = None, note: Note = _quiet) -> Outcome:
    """Run the plan and judge it (the module's docstring)."""
    from ..adapters import prepare_target
    from ..adapters.webgpu_device import device_gave_up
    from ..engine.limits import address_space_problem
    from ..engine.runner import load_error, load_target, run_all, unloaded_results
    from ..engine.stream import write_all as write_stream

    cfg = plan.cfg
    prepare_target(cfg.target)  # fetch and build (runs nothing of the target: it loads in a worker)
    note(plan.header())
    started, t0 = datetime.now(timezone.utc), time.monotonic()
    took = _taken(plan, note)
    done = {r.check for r in took.results}
    to_run = [n for n in plan.selected if n not in done]
    harness = address_space_problem() if to_run else None
    if harness is not None:  # nothing of the target runs: its verdicts would be ggspec's limit
        return Outcome(judge(plan, took.results), took.results, started, time.monotonic() - t0, keys=took.keys,
                       status=3, harness=harness)
    failure = load_target(cfg) if to_run else None
    interrupted, why_not_loaded, harness = "", "", ""
    if failure is not None:  # every check gets the loading's verdict; the report says why
        why_not_loaded = load_error(failure)
        note(why_not_loaded)
        results = unloaded_results(failure, [plan.checks[n] for n in plan.selected])
        if cfg.stream:
            write_stream(Path(cfg.stream), cfg, results)
    else:
        try:
            results = run_all(cfg, to_run, progress=progress, note=note) if to_run else []
        except RunInterrupted as exc:  # report what finished, marked interrupted
            results, interrupted = exc.results, signal.Signals(exc.signum).name
            note(f"{exc}; the report holds the checks that finished")
        except HarnessFailed as exc:  # ggspec's own failure: what finished is reported, no verdict
            results, harness = exc.results, str(exc)
        flaky = [r.check for r in results if r.flaky is not None]
        if took.store and not interrupted and not harness:
            _store(took, results, flaky, plan.options.device, note)
        if took.results:  # the reused verdicts, in the selection's order
            order = {n: i for i, n in enumerate(plan.selected)}
            results = sorted(results + took.results, key=lambda r: order[r.check])
    found = judge(plan, results)
    changes = None
    if plan.baseline is not None:
        from ..reports import baseline

        changes = baseline.compare(plan.baseline, found, {"target": cfg.target, "profile": cfg.profile.value,
                                                          "seed": cfg.seed})
    status = 3 if harness else exit_status(found, interrupted, why_not_loaded, changes, plan.options.strict)
    gave_up = device_gave_up(plan.options.device, results) if status == 0 and not interrupted else None
    if gave_up is not None:  # a real device selected, and nothing judged on it: not a pass
        status = 1
    return Outcome(found, results, started, time.monotonic() - t0, interrupted, why_not_loaded, changes, took.keys,
                   {k: v for k, v in took.sources.items() if v}, status, gave_up or "", harness)


def _store(took: _Taken, results: list[CheckResult], flaky: list[str], device: str, note: Note) -> None:
    """Keep the run's verdicts in the verdict cache: none from a run that saw a flaky check (its
    passes may be lucky), and one line when the cache cannot be written."""
    from .cache import store, verdict_dir

    if flaky:
        note(f"verdict cache: nothing stored: the target was flaky ({len(flaky)} check(s) whose failing example "
             f"did not fail again: {', '.join(flaky)})")
        return
    for res in results:
        problem = store(took.keys[res.check], res, device)
        if problem is not None:
            note(f"verdict cache: not written ({verdict_dir()}: {problem}); the verdicts stand")
            return


def judge(plan: Plan, results: list[CheckResult]) -> list[ClauseVerdict]:
    """Per clause (engine.results.verdicts), known failures applied; a selection or a shard
    reports the clauses it touches (merge adds back the rest)."""
    from ..reports import known as known_mod

    every = {n: c.clauses for n, c in plan.checks.items()}
    found = known_mod.apply(verdicts(results, plan.planned, every), list(plan.known), plan.cfg.target)
    if plan.names is not None:
        found = [v for v in found if v.status not in (NOT_SELECTED, "uncovered")]
    return found


def judge_one(plan: Plan, result: CheckResult) -> list[ClauseVerdict]:
    """One check's own clauses (and the errata it blamed), judged as `judge` would: the pytest
    plugin's verdict of one item."""
    from ..reports import known as known_mod

    mine = set(plan.checks[result.check].clauses) | set(result.errata)
    return [v for v in known_mod.apply(verdicts([result]), list(plan.known), plan.cfg.target) if v.id in mine]


def exit_status(found: list[ClauseVerdict], interrupted: str, load_error: str, changes: Any, strict: bool) -> int:
    """0 pass; 1 a clause failed (with --strict also an xpass or an uncovered clause; with
    --baseline only a newly failing clause); 3 the target could not be loaded; 128 + the signal
    when interrupted."""
    if interrupted:
        return 128 + int(signal.Signals[interrupted])
    if load_error:
        return 3
    if changes is not None:  # the gate: only a clause newly failing fails the run
        return 1 if changes.regressed else 0
    failing = any(v.status in FAILING for v in found)
    loose = any(v.status in ("uncovered", "xpass") for v in found)
    return 1 if failing or (loose and strict) else 0


def report_json(plan: Plan, outcome: Outcome) -> dict[str, object]:
    """The run's JSON report (reports/report.to_json), the same from every front end; the target
    described (adapters.describe_target) with the device the run used."""
    from ..adapters import describe_target
    from ..reports import report

    opts = plan.options
    target = describe_target(plan.cfg.target)
    target["device"] = opts.device
    return report.to_json(outcome.found, outcome.results, plan.cfg, started=outcome.started, seconds=outcome.seconds,
                          target=target, baseline=outcome.changes.to_json() if outcome.changes is not None else None,
                          shard=opts.shard, selection={"select": list(opts.select), "deselect": list(opts.deselect)},
                          keys=outcome.keys, reused=outcome.reused, interrupted=outcome.interrupted,
                          load_error=outcome.load_error)

