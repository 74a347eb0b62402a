"""A run's plan: every decision made before anything of the target runs, made once and frozen.

A front end (the `ggspec check` command, the pytest plugin, `ggspec compare`) parses its own
options into `Options` (the same names for all three) and calls `make_plan`; what it gets back
is a `Plan` that `execute.py` runs. Every mistake in the options is found here, in this order,
as one line (UsageError, SelectionError, ChangedError: exit 2), before any check runs: the
counts, the report paths, the selection (`--select`/`--deselect`, then `--changed`, then
`--shard`), the known-failures file, the baseline, the cache folder, the `--reuse-from` report
(whose seed the run takes when none is given), the timeouts and the workers.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile

from ..engine.registry import Check
from ..engine.results import DEFAULT_CHECK_BUDGET, DEFAULT_TIMEOUT, RunConfig
from ..engine.stream import stream_path
from ..errors import UsageError
from ..reports.known import Known
from ..target_names import default_profile, parse


@dataclass(frozen=True)
class Options:
    """What a front end was asked for, in its words parsed (defaults: `ggspec check`'s)."""

    target: str = "native"
    profile: str | None = None
    size: str = "dev"
    max_examples: int | None = None
    seed: int | None = None
    derandomize: bool = False
    select: tuple[str, ...] = ()
    deselect: tuple[str, ...] = ()
    #: `--changed REV`: only the checks the files changed since REV can reach
    changed: str | None = None
    shard: str | None = None
    known: str | None = None
    no_known: bool = False
    baseline: str | None = None
    reuse_from: str | None = None
    no_cache: bool = False
    device: str = "vdev"
    timeout: float = DEFAULT_TIMEOUT
    check_budget: float = DEFAULT_CHECK_BUDGET
    workers: int = 1
    json: str | None = None
    junit: str | None = None
    html: str | None = None
    repro_dir: str | None = None
    c_reproducers: bool = True
    #: keep the run's files (C reproducers, vectors) in a run folder (run_folder); off: none written
    files: bool = True
    strict: bool = False


@dataclass(frozen=True)
class Plan:
    """What a run will do (make_plan): its settings, the checks it runs and what it compares with."""

    options: Options
    cfg: RunConfig
    checks: Mapping[str, Check]
    #: the selected checks, in the order they run; None: every check (no selection)
    names: tuple[str, ...] | None
    known_path: Path | None
    known: tuple[Known, ...]
    #: the `--baseline` report, read
    baseline: dict[str, Any] | None
    #: the `--reuse-from` report, read and checked against the run
    reuse_from: dict[str, Any] | None
    #: why --changed picked these checks (lines to print), empty without --changed
    changed_lines: tuple[str, ...] = ()
    made: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def selected(self) -> list[str]:
        return list(self.names) if self.names is not None else sorted(self.checks)

    @property
    def nothing_to_run(self) -> bool:
        """--changed found no check the changes can reach."""
        return self.names is not None and not self.names

    @property
    def planned(self) -> dict[str, tuple[str, ...]]:
        """The checks the run means to run -> their clauses (engine.results.verdicts' `planned`)."""
        return {n: self.checks[n].clauses for n in self.selected}

    def verdict_keys(self) -> dict[str, str]:
        """Each selected check's verdict key (cache.py `key`): in the JSON report, for a later
        run's `--reuse-from`, and the verdict cache's."""
        from . import cache

        target = cache.target_key(self.cfg.target)
        return {n: cache.key(self.checks[n], self.cfg, target) for n in self.selected}

    def header(self) -> str:
        cfg = self.cfg
        return (f"target {cfg.target}, profile {cfg.profile.value}, size {cfg.size} ({cfg.examples} examples a check), "
                f"seed {cfg.seed}" + (f", {len(self.names)} of {len(self.checks)} checks" if self.names is not None else "")
                + (f", known failures from {self.known_path}" if self.known_path is not None else ""))


def writable(option: str, value: str | None) -> None:
    """A report path must be writable before the run starts, not after it."""
    if not value:
        return
    path = Path(value)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"{option} {value}: is a directory, not a file")
    if not parent.is_dir():
        raise UsageError(f"{option} {value}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{option} {value}: not writable")


def cache_writable(target: str) -> None:
    """Targets built at test time (rc8, ggml-python, external) need a writable GGSPEC_CACHE."""
    if parse(target).kind in ("reference", "native"):
        return
    from ..adapters.external import cache_dir

    where = cache_dir()
    label = f"GGSPEC_CACHE={os.environ['GGSPEC_CACHE']}" if os.environ.get("GGSPEC_CACHE") else f"the cache {where}"
    if where.exists() and not where.is_dir():
        raise UsageError(f"{label} is not a folder (the target {target} is built there)")
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{label} cannot be created: {exc.strerror or exc}") from None
    if not where.is_dir() or not os.access(where, os.W_OK | os.X_OK):
        raise UsageError(f"{label} is not a writable folder (the target {target} is built there)")


def check_counts(max_examples: int | None, seed: int | None) -> None:
    if max_examples is not None and max_examples < 1:
        raise UsageError(f"--max-examples must be at least 1, got {max_examples}")
    if seed is not None and seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {seed}")


def _positive(option: str, value: float) -> float:
    if not value > 0:
        raise UsageError(f"{option} must be a positive number of seconds, got {value}")
    return value


def run_folder(repro_dir: str | None, json: str | None) -> str:
    """Where this run's files go (C reproducers, vectors): --repro-dir, else $GGSPEC_REPRO_DIR,
    else <report>.files next to the --json report, else a folder of its own under the cache's
    runs/ (created only when something is written there). Resolved once, here."""
    given = repro_dir or os.environ.get("GGSPEC_REPRO_DIR")
    if given:
        return str(Path(given).expanduser().resolve())
    if json:
        report_path = Path(json).resolve()
        return str(report_path.parent / f"{report_path.stem}.files")
    from ..adapters.external import cache_dir

    return str(cache_dir() / "runs" / f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{os.getpid()}")


def _names(checks: Mapping[str, Check], patterns: tuple[str, ...], out: tuple[str, ...], changed: str | None,
           shard: str | None) -> tuple[list[str] | None, tuple[str, ...]]:
    """The selection: --select/--deselect, cut by --changed, then --shard's part of it."""
    from .select import select

    names = select(checks, patterns, out) if (patterns or out) else None
    lines: list[str] = []
    if changed is not None:  # the checks the changed files can reach, and why (changed.py)
        from .changed import select_changed

        chosen, lines = select_changed(changed, checks)
        if names is not None:
            chosen = [n for n in chosen if n in set(names)]
            lines[0] += f", {len(chosen)} of them in the --select/--deselect selection"
        if not chosen:
            return [], tuple(lines)
        names = chosen
    if shard:  # a deterministic 1/N of the selection (reports/merge.py)
        from ..reports.merge import parse_shard, shard_of

        names = shard_of(names if names is not None else sorted(checks), parse_shard(shard))
    return names, tuple(lines)


def make_plan(opts: Options, checks: Mapping[str, Check] | None = None) -> Plan:
    """The plan of a run (the module's docstring); `checks`: the registered ones by default."""
    from ..reports import known as known_mod
    from ..reports import report

    check_counts(opts.max_examples, opts.seed)
    for option in ("json", "junit", "html"):
        writable(f"--{option}", getattr(opts, option))
    if checks is None:
        from ..engine.runner import load_checks

        checks = load_checks()
    names, changed_lines = _names(checks, opts.select, opts.deselect, opts.changed, opts.shard)
    if opts.known and opts.no_known:
        raise UsageError("--known FILE and --no-known conflict: give one of them")
    known_path = Path(opts.known) if opts.known else None if opts.no_known else known_mod.default_for(opts.target)
    known = known_mod.load(known_path, checks) if known_path is not None else []
    base = report.load_json(Path(opts.baseline)) if opts.baseline else None  # a bad file: one line, before the run
    cache_writable(opts.target)
    profile = Profile(opts.profile) if opts.profile else default_profile(opts.target)
    repro_dir = run_folder(opts.repro_dir, opts.json) if opts.files else None
    reused = None
    seed = opts.seed
    if opts.reuse_from:  # read and checked against the run; without --seed the run takes the report's seed
        from . import reuse

        reused = reuse.read(Path(opts.reuse_from))
        if seed is None and isinstance(reused.get("seed"), int):
            seed = reused["seed"]
    cfg = RunConfig(opts.target, profile, size=opts.size, max_examples=opts.max_examples,
                    seed=seed if seed is not None else random.getrandbits(32), derandomize=opts.derandomize,
                    timeout=opts.timeout, check_budget=opts.check_budget,
                    stream=stream_path(opts.json) if opts.json else None, workers=opts.workers,
                    c_reproducers=opts.c_reproducers, repro_dir=repro_dir)
    if reused is not None and opts.reuse_from:
        reuse.agree(Path(opts.reuse_from), reused, cfg)
    _positive("--timeout", opts.timeout)
    _positive("--check-budget", opts.check_budget)
    if opts.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {opts.workers}")
    return Plan(opts, cfg, checks, tuple(names) if names is not None else None, known_path, tuple(known), base,
                reused, changed_lines)
