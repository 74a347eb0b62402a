"""Running checks: hypothesis drives each check's scenario through `differential`, inside a
forked worker per check, and the verdicts are gathered per clause."""

from __future__ import annotations

import importlib
import pkgutil
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile, catalogue
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from . import checks as checks_pkg
from . import isolate
from .harness import CHECKS, Check, ErratumDifference, Unsupported, differential, fork_every_example
from .target import MissingSymbol

#: examples per check for each run-size profile
PROFILES: dict[str, int] = {"dev": 10, "ci": 40, "thorough": 300}


def load_checks() -> dict[str, Check]:
    """Import every module of conformance/checks (each registers its checks)."""
    for mod in pkgutil.iter_modules(checks_pkg.__path__):
        importlib.import_module(f"{checks_pkg.__name__}.{mod.name}")
    importlib.import_module(f"{__package__}.stateful")  # registers the state-machine checks
    return CHECKS


@dataclass
class CheckResult:
    check: str
    clauses: tuple[str, ...]
    status: str  # "pass" | "fail" | "crash" | "unsupported" (the target lacks a symbol the check needs)
    examples: int
    detail: str = ""
    seconds: float = 0.0
    #: erratum clause -> (status, detail): differences that one erratum explains (see
    #: harness.ErratumDifference); they are blamed on that clause, not on the check's own
    errata: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class RunConfig:
    target: str
    profile: Profile
    size: str = "dev"
    max_examples: int | None = None
    seed: int = field(default_factory=lambda: random.getrandbits(32))
    derandomize: bool = False
    timeout: float = 900.0
    #: write a C reproducer for each failing example of a C target (native, rc8, external) ...
    c_reproducers: bool = True
    #: ... into this directory (default: $GGSPEC_REPRO_DIR, else <tmp>/ggspec-repro)
    repro_dir: str | None = None

    @property
    def examples(self) -> int:
        return self.max_examples if self.max_examples is not None else PROFILES[self.size]


def _hypothesis_test(chk: Check, cfg: RunConfig, counter: list[int]) -> Callable[[], None]:
    @settings(
        max_examples=cfg.examples,
        deadline=None,
        derandomize=cfg.derandomize,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        print_blob=False,
        report_multiple_bugs=False,  # one shrunk failure with its reproducer, not an ExceptionGroup
    )
    @given(args=st.fixed_dictionaries(chk.strategies))
    def test(args: dict[str, Any]) -> None:
        counter[0] += 1
        try:
            differential(chk, args, cfg.target, cfg.profile)
        except ErratumDifference as exc:  # explained: blamed on the erratum, the run goes on
            if exc.clause_id not in _ERRATA_SEEN:
                _ERRATA_SEEN[exc.clause_id] = ("crash" if exc.crashed else "fail", str(exc) + _c_reproducer(exc, cfg))

    for args in reversed(chk.examples):  # the check's deterministic examples, run under every seed
        test = example(args=args)(test)
    return seed(cfg.seed)(test)


def _machine_test(chk: Check, cfg: RunConfig, counter: list[int]) -> Callable[[], None]:
    """The check's state machine under the run's settings, each example counted. Hypothesis
    attaches the steps of the shrunk failing example to the exception as notes."""
    assert chk.machine is not None
    machine = chk.machine(cfg.target, cfg.profile)

    def factory() -> Any:
        counter[0] += 1
        return machine()

    seed(cfg.seed)(factory)
    machine_settings = settings(
        max_examples=cfg.examples,
        deadline=None,
        derandomize=cfg.derandomize,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        print_blob=False,
    )

    # typed loosely on purpose: hypothesis' own annotation of this function changed across releases
    run_machine: Any = run_state_machine_as_test

    def test() -> None:
        run_machine(factory, settings=machine_settings)

    return test


def run_check_here(chk: Check, cfg: RunConfig) -> CheckResult:
    """Run one check in this process; a target crash here ends this process."""
    counter = [0]
    start = time.monotonic()
    try:
        if chk.machine is not None:
            try:
                _machine_test(chk, cfg, counter)()
            except AssertionError as exc:
                steps = "\n".join(getattr(exc, "__notes__", []))
                replay = (f"replay: ggspec check --target {cfg.target} --profile {cfg.profile.value} "
                          f"--select {chk.name} --seed {cfg.seed} --max-examples {cfg.examples}")
                raise AssertionError(f"{chk.name} [{', '.join(chk.clauses)}]: {exc}\n{steps}\n{replay}") from None
        else:
            _hypothesis_test(chk, cfg, counter)()
    except AssertionError as exc:
        detail = str(exc) + _c_reproducer(exc, cfg)
        return CheckResult(chk.name, chk.clauses, "fail", counter[0], detail, time.monotonic() - start)
    except (Unsupported, MissingSymbol) as exc:  # the target lacks what this check needs: not a failure
        return CheckResult(chk.name, chk.clauses, "unsupported", counter[0], str(exc), time.monotonic() - start)
    except Exception as exc:  # noqa: BLE001 - any other error is a failure of this check, reported
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return CheckResult(chk.name, chk.clauses, "fail", counter[0], detail, time.monotonic() - start)
    return CheckResult(chk.name, chk.clauses, "pass", counter[0], "", time.monotonic() - start)


def _c_reproducer(exc: BaseException, cfg: RunConfig) -> str:
    """For a failing example of a C target: the path of its C reproducer and the gcc line."""
    if not cfg.c_reproducers:
        return ""
    from .creproducer import note_for

    return note_for(exc, Path(cfg.repro_dir) if cfg.repro_dir else None)


#: what ErratumDifference blamed on erratum clauses while this worker ran its check
_ERRATA_SEEN: dict[str, tuple[str, str]] = {}


def _run_and_collect(chk: Check, cfg: RunConfig, fork_each: bool = False) -> CheckResult:
    if fork_each:
        fork_every_example()
    _ERRATA_SEEN.clear()
    result = run_check_here(chk, cfg)
    result.errata = dict(_ERRATA_SEEN)
    return result


def run_check(chk: Check, cfg: RunConfig) -> CheckResult:
    """Run one check in a forked worker; a crash of the target is this check's verdict. After a
    crash the check runs again with every example forked, so the crash is shrunk to an example
    with a reproducer (and blamed on an erratum where one explains it)."""
    start = time.monotonic()
    forked = isolate.run_forked(lambda: _run_and_collect(chk, cfg), timeout=cfg.timeout)
    if forked.status == "ok":
        result: CheckResult = forked.value
        return result
    again = isolate.run_forked(lambda: _run_and_collect(chk, cfg, fork_each=True), timeout=cfg.timeout)
    if again.status == "ok":
        result = again.value
        result.status = "crash" if result.status == "fail" else result.status
        result.seconds = time.monotonic() - start
        return result
    tail = "\n".join(forked.stderr.strip().splitlines()[-12:])
    status = "crash"
    detail = f"the target {forked.describe()} while running {chk.name}\n{tail}"
    return CheckResult(chk.name, chk.clauses, status, 0, detail, time.monotonic() - start)


def run_all(
    cfg: RunConfig, names: Iterable[str] | None = None, progress: Callable[[str], None] | None = None
) -> list[CheckResult]:
    load_checks()
    selected = [CHECKS[n] for n in (names if names is not None else sorted(CHECKS))]
    results = []
    for i, chk in enumerate(selected, 1):
        res = run_check(chk, cfg)
        results.append(res)
        if progress is not None:
            from .report import progress_line  # never "pass" for a check whose erratum clause fails

            progress(progress_line(i, len(selected), res))
    return results


@dataclass
class ClauseVerdict:
    id: str
    title: str
    kind: str
    status: str  # one of STATUSES
    examples: int
    detail: str
    checks: list[str]


#: a clause's verdict: pass, fail, crash, unsupported (a check needs what the target lacks),
#: uncovered (no check), xfail / xpass (a known failure that failed / passed, see known.py)
STATUSES = ("pass", "fail", "crash", "unsupported", "uncovered", "xfail", "xpass")
#: the order in which a clause's checks decide its verdict: the first status any of them has
_PRECEDENCE = ("crash", "fail", "unsupported", "pass")


def verdicts(results: list[CheckResult]) -> list[ClauseVerdict]:
    """Per clause: crash beats fail beats unsupported beats pass (a clause passes only when every
    check of it passed); no check at all is 'uncovered'. Known failures are applied afterwards
    (known.apply)."""
    out = []
    for cid, c in catalogue().items():
        mine = [r for r in results if cid in r.clauses]
        blamed = [(r, r.errata[cid]) for r in results if cid in r.errata]
        if not mine and not blamed:
            out.append(ClauseVerdict(cid, c.title, c.kind, "uncovered", 0, "no check covers this clause", []))
            continue
        seen = {r.status for r in mine} | {st_ for _, (st_, _) in blamed}
        other = sorted(seen - set(_PRECEDENCE))  # a status added later (a timeout, say) is never hidden
        status = other[0] if other and "crash" not in seen else next(s for s in _PRECEDENCE if s in seen or s == "pass")
        detail = "; ".join(f"{r.check}: {r.detail.splitlines()[0] if r.detail else ''}" for r in mine if r.status != "pass")
        detail = "; ".join(x for x in [detail, *(f"{r.check}: {d.splitlines()[0]}" for r, (_, d) in blamed)] if x)
        out.append(ClauseVerdict(cid, c.title, c.kind, status, sum(r.examples for r in mine), detail,
                                  [r.check for r in mine] + [r.check for r, _ in blamed if r not in mine]))
    return out


def print_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
