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
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from reference.clauses import Profile, catalogue

from . import checks as checks_pkg
from . import isolate
from .harness import CHECKS, Check, differential

#: examples per check for each run-size profile
PROFILES: dict[str, int] = {"dev": 10, "ci": 40, "thorough": 300}


def load_checks() -> dict[str, Check]:
    """Import every module of conformance/checks (each registers its checks)."""
    for mod in pkgutil.iter_modules(checks_pkg.__path__):
        importlib.import_module(f"{checks_pkg.__name__}.{mod.name}")
    return CHECKS


@dataclass
class CheckResult:
    check: str
    clauses: tuple[str, ...]
    status: str  # "pass" | "fail" | "crash"
    examples: int
    detail: str = ""
    seconds: float = 0.0


@dataclass
class RunConfig:
    target: str
    profile: Profile
    size: str = "dev"
    max_examples: int | None = None
    seed: int = field(default_factory=lambda: random.getrandbits(32))
    derandomize: bool = False
    timeout: float = 900.0

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
    )
    @given(args=st.fixed_dictionaries(chk.strategies))
    def test(args: dict[str, Any]) -> None:
        counter[0] += 1
        differential(chk, args, cfg.target, cfg.profile)

    return seed(cfg.seed)(test)


def run_check_here(chk: Check, cfg: RunConfig) -> CheckResult:
    """Run one check in this process; a target crash here ends this process."""
    counter = [0]
    start = time.monotonic()
    try:
        _hypothesis_test(chk, cfg, counter)()
    except AssertionError as exc:
        return CheckResult(chk.name, chk.clauses, "fail", counter[0], str(exc), time.monotonic() - start)
    except Exception as exc:  # noqa: BLE001 - any other error is a failure of this check, reported
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return CheckResult(chk.name, chk.clauses, "fail", counter[0], detail, time.monotonic() - start)
    return CheckResult(chk.name, chk.clauses, "pass", counter[0], "", time.monotonic() - start)


def run_check(chk: Check, cfg: RunConfig) -> CheckResult:
    """Run one check in a forked worker; a crash of the target is this check's verdict."""
    start = time.monotonic()
    forked = isolate.run_forked(lambda: run_check_here(chk, cfg), timeout=cfg.timeout)
    if forked.status == "ok":
        result: CheckResult = forked.value
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
            progress(f"[{i:3d}/{len(selected)}] {res.status:5s} {chk.name} ({res.examples} examples, {res.seconds:.1f}s)")
    return results


@dataclass
class ClauseVerdict:
    id: str
    title: str
    kind: str
    status: str  # "pass" | "fail" | "crash" | "uncovered"
    examples: int
    detail: str
    checks: list[str]


def verdicts(results: list[CheckResult]) -> list[ClauseVerdict]:
    """Per clause: crash beats fail beats pass; no check at all is 'uncovered'."""
    out = []
    for cid, c in catalogue().items():
        mine = [r for r in results if cid in r.clauses]
        if not mine:
            out.append(ClauseVerdict(cid, c.title, c.kind, "uncovered", 0, "no check covers this clause", []))
            continue
        status = "pass"
        for r in mine:
            if r.status == "crash" or (r.status == "fail" and status == "pass"):
                status = r.status
        detail = "; ".join(f"{r.check}: {r.detail.splitlines()[0] if r.detail else ''}" for r in mine if r.status != "pass")
        out.append(ClauseVerdict(cid, c.title, c.kind, status, sum(r.examples for r in mine), detail, [r.check for r in mine]))
    return out


def print_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
