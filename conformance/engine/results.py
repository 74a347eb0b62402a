"""What a run finds, as data: the run's configuration (`RunConfig`), each check's result
(`CheckResult`), each clause's verdict (`ClauseVerdict`, `verdicts`), and what was seen after
undefined-behaviour points (`ub_summary`). The reports (conformance/reports/) read only these.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from ggspec.reference.clauses import Profile, catalogue

#: examples per check for each run-size profile
PROFILES: dict[str, int] = {"dev": 10, "ci": 40, "thorough": 300}
#: seconds an example may take on the target: generous for the slowest honest example on a
#: loaded 2-core machine (see bench/RESULTS.md, "Suite speed"), short enough that a target that
#: hangs in a common call costs minutes, not hours
DEFAULT_TIMEOUT = 10.0
#: seconds a check may take in all
DEFAULT_CHECK_BUDGET = 300.0



#: Every status a check or a clause can have, defined here once (the reports, the gates and the
#: known-failures files read it from here):
#:
#: - pass, fail, crash: the target agreed with the reference / differed / died;
#: - timeout: an API call (or an example) of the target hung past the run's --timeout;
#: - unsupported: the target lacks a function or hook the check needs (not a failure);
#: - skipped: a check of the clause runs only at a larger --size (registry.only_at): not run at
#:   this size, not judged (SCHED-40's, at thorough);
#: - uncovered: no check covers the clause;
#: - xfail / xpass: a known failure (conformance/known/) that failed / passed;
#: - interrupted: the run was stopped (SIGINT, SIGTERM) before the check finished;
#: - not run: a check of the clause was meant to run, but the run stopped before it did;
#: - partial: only some of the clause's checks were selected: not judged (a failure found stays one);
#: - not selected: none of its checks was selected (`verdicts` marks it, the reports leave it out).
Status = Literal["pass", "fail", "crash", "timeout", "unsupported", "skipped", "uncovered", "xfail", "xpass",
                 "interrupted", "not run", "partial", "not selected"]
ALL_STATUSES: tuple[Status, ...] = get_args(Status)
#: the statuses the JSON summary always counts, in this order (others are counted when they occur)
STATUSES: tuple[Status, ...] = ("pass", "fail", "crash", "unsupported", "skipped", "uncovered", "xfail", "xpass")
#: the statuses that fail a run (the gate, the summary's verdict, JUnit failures, a baseline's regressions)
FAILING: tuple[Status, ...] = ("fail", "crash", "timeout")


@dataclass
class CheckResult:
    check: str
    clauses: tuple[str, ...]
    status: Status  # pass, fail, crash, timeout or unsupported
    examples: int
    detail: str = ""
    seconds: float = 0.0
    #: erratum clause -> (status, detail): differences that one erratum explains (see
    #: differential.ErratumDifference); they are blamed on that clause, not on the check's own
    errata: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: undefined-behaviour clause -> ("confirmed" | "not observed", how): what the target did
    #: after the reference stopped at undefined behaviour (see engine/after_ub.py)
    ub: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: an example asked for a plain virtual device, one that `--device webgpu` replaces
    #: (engine/reach.py): when False, the verdict is the same on every device
    reached_device: bool = False
    #: the check's failing example did not fail again when hypothesis replayed it: (how many of
    #: the runner's replays of it failed, how many it made); None when it was not flaky
    flaky: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The one JSON encoding of a check result: the JSON report's `checks` entries, the
        stream's lines, the pytest plugin's and `ggspec compare`'s reports and the verdict cache
        all write this, and `from_json` reads it back (merge, `--reuse-from`, the cache)."""
        return {"name": self.check, "clauses": list(self.clauses), "status": self.status, "examples": self.examples,
                "seconds": round(self.seconds, 3), "detail": self.detail,
                "errata": {cid: {"status": st, "detail": d} for cid, (st, d) in self.errata.items()},
                "undefined_behaviour": {cid: {"status": st, "detail": d} for cid, (st, d) in self.ub.items()},
                "reached_device": self.reached_device,
                "flaky": None if self.flaky is None else {"failed": self.flaky[0], "replays": self.flaky[1]}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CheckResult:
        """`to_json`'s inverse (KeyError, TypeError or ValueError on an entry that is not one)."""
        return cls(str(data["name"]), tuple(data.get("clauses", [])), data["status"], int(data.get("examples", 0)),
                   str(data.get("detail", "")), float(data.get("seconds", 0.0)),
                   {cid: (e["status"], e["detail"]) for cid, e in data.get("errata", {}).items()},
                   {cid: (u["status"], u["detail"]) for cid, u in data.get("undefined_behaviour", {}).items()},
                   bool(data.get("reached_device", False)),
                   (int(data["flaky"]["failed"]), int(data["flaky"]["replays"])) if data.get("flaky") else None)


@dataclass(frozen=True)
class RunConfig:
    """A run's settings, made once (run/plan.py builds it from a front end's options) and never
    changed; what the run finds is in its results, never here."""

    target: str
    profile: Profile
    size: str = "dev"
    max_examples: int | None = None
    seed: int = field(default_factory=lambda: random.getrandbits(32))
    derandomize: bool = False
    #: shrink a failing example to a small one (hypothesis' shrink phase). Off, a check's verdict
    #: and clauses are the same and its reproducer is the first failing example as drawn: for a
    #: caller that needs only which checks fail (tests/checks/sched_defects.py's downstream checks)
    shrink: bool = True
    #: seconds one example may take on the target (and the target's loading): a hang past it is
    #: the check's `timeout` verdict, naming the API call in progress
    timeout: float = DEFAULT_TIMEOUT
    #: seconds one check may take in all, every example, shrinking and reproducers included
    check_budget: float = DEFAULT_CHECK_BUDGET
    #: stream each check's result, as it finishes, to this JSON-lines file (see stream.py)
    stream: str | None = None
    #: how many checks run at once (each in its own forked worker; `ggspec check` defaults to
    #: the number of cores)
    workers: int = 1
    #: write a C reproducer for each failing example of a C target (native, rc8, external) ...
    c_reproducers: bool = True
    #: ... into this directory (default: $GGSPEC_REPRO_DIR, else <tmp>/ggspec-repro)
    repro_dir: str | None = None

    @property
    def examples(self) -> int:
        return self.max_examples if self.max_examples is not None else PROFILES[self.size]


@dataclass
class ClauseVerdict:
    id: str
    title: str
    kind: str
    status: Status
    examples: int
    detail: str
    checks: list[str]
    #: partial: the existing checks of the clause that the selection left out (merge re-judges
    #: the clause when the shards together ran them all)
    left_out: list[str] = field(default_factory=list)
    #: the checks that made it fail (a failing, crashing or timed-out result, or a difference
    #: blamed on it as an erratum): what a known failure's `check = NAME` entry must cover
    failing: list[str] = field(default_factory=list)


#: the order in which a clause's checks decide its verdict: the first status any of them has
_PRECEDENCE: tuple[Status, ...] = ("crash", "timeout", "fail", "unsupported", "skipped", "pass")
#: what `verdicts` gives a clause none of whose checks was selected: the reports leave it out
NOT_SELECTED: Status = "not selected"


def verdicts(results: list[CheckResult], planned: dict[str, tuple[str, ...]] | None = None,
             existing: dict[str, tuple[str, ...]] | None = None) -> list[ClauseVerdict]:
    """Per clause: crash beats timeout beats fail beats unsupported beats pass (a clause passes
    only when every check of it passed); no check at all is 'uncovered'. Known failures are
    applied afterwards (known.apply).

    `planned` (check name -> clauses) are the checks the run meant to run, `existing` every check
    there is. A clause judged pass is `not run` when a planned check of it has no result (the run
    was interrupted), and `partial` when some of its existing checks were not planned (a
    selection): a clause is judged only on all of its checks. A clause none of whose checks was
    planned is NOT_SELECTED. A failure found stays a failure either way."""
    finished = {r.check for r in results}
    out = []
    for cid, c in catalogue().items():
        mine = [r for r in results if cid in r.clauses]
        blamed = [(r, r.errata[cid]) for r in results if cid in r.errata]
        have = sorted(n for n, cl in (existing or {}).items() if cid in cl)
        meant = sorted(n for n, cl in planned.items() if cid in cl) if planned is not None else have
        missing = [n for n in meant if n not in finished]
        left_out = [n for n in have if n not in meant]
        if not mine and not blamed:
            if missing:
                out.append(ClauseVerdict(cid, c.title, c.kind, "not run", 0,
                                         f"the run stopped before its checks ran: {', '.join(missing)}", missing))
            elif have and not meant:
                out.append(ClauseVerdict(cid, c.title, c.kind, NOT_SELECTED, 0, "none of its checks was selected", []))
            else:
                out.append(ClauseVerdict(cid, c.title, c.kind, "uncovered", 0, "no check covers this clause", []))
            continue
        seen = {r.status for r in mine} | {st_ for _, (st_, _) in blamed}
        other = sorted(seen - set(_PRECEDENCE))  # a status added later is never hidden
        status = cast(Status, other[0]) if other and "crash" not in seen else next(
            s for s in _PRECEDENCE if s in seen or s == "pass")
        detail = "; ".join(f"{r.check}: {r.detail.splitlines()[0] if r.detail else ''}" for r in mine if r.status != "pass")
        detail = "; ".join(x for x in [detail, *(f"{r.check}: {d.splitlines()[0]}" for r, (_, d) in blamed)] if x)
        if status == "pass" and missing:
            status, detail = "not run", f"the run stopped before these of its checks ran: {', '.join(missing)}"
        elif status == "pass" and left_out:
            status, detail = "partial", (f"not judged: {len(meant)} of its {len(have)} checks were selected "
                                         f"(left out: {', '.join(left_out)})")
        failing = [r.check for r in mine if r.status in FAILING] + [r.check for r, (st_, _) in blamed if st_ in FAILING]
        out.append(ClauseVerdict(cid, c.title, c.kind, status, sum(r.examples for r in mine), detail,
                                  [r.check for r in mine] + [r.check for r, _ in blamed if r not in mine],
                                  left_out if status == "partial" else [], sorted(set(failing))))
    return out


def run_verdict(verdicts: list[ClauseVerdict], interrupted: str = "") -> str:
    """The run's one-word verdict: interrupted (a signal stopped it: never pass), fail (a clause
    failed, crashed or timed out), else pass."""
    if interrupted:
        return "interrupted"
    return "fail" if any(v.status in ("fail", "crash", "timeout") for v in verdicts) else "pass"


def check_status(r: CheckResult) -> str:
    """A check's status as a progress line shows it: never pass when a difference it found is
    blamed on an erratum clause (that clause ends as FAIL or CRASH)."""
    if r.status == "pass" and r.errata:
        return "crash" if any(s == "crash" for s, _ in r.errata.values()) else "fail"
    return r.status


def progress_line(i: int, n: int, r: CheckResult) -> str:
    status = check_status(r)
    shown = status if status == "pass" else status.upper()
    blamed = f" [erratum {', '.join(sorted(r.errata))}]" if r.errata else ""
    return f"[{i:3d}/{n}] {shown:5s} {r.check} ({r.examples} examples, {r.seconds:.1f}s){blamed}"


# --- undefined behaviour: what the target did after it (engine/after_ub.py observes it) ---

CONFIRMED, NOT_OBSERVED = "confirmed", "not observed"


def merge(seen: dict[str, tuple[str, str]], cid: str, verdict: str, how: str) -> None:
    """Keep one verdict per clause: the first confirmation, else the first non-observation."""
    if cid not in seen or (verdict == CONFIRMED and seen[cid][0] != CONFIRMED):
        seen[cid] = (verdict, how)


def ub_clauses() -> list[str]:
    """The clauses at which the reference model raises UndefinedBehaviour (rc.8 crashes or
    corrupts memory there without an assert), read from the model's `undefined("ID", ...)` calls."""
    import re
    from pathlib import Path

    import ggspec.reference as ref

    found: set[str] = set()
    for path in Path(ref.__file__).parent.glob("*.py"):
        found.update(re.findall(r'undefined\(\s*"([A-Z]+-\d+)"', path.read_text(encoding="utf-8")))
    return sorted(found, key=lambda c: (c.split("-")[0], int(c.split("-")[1])))


def ub_summary(results: list[Any]) -> dict[str, dict[str, str]]:
    """Per undefined-behaviour clause of the model: confirmed / not observed (with how) across
    the run's check results (`CheckResult.ub`), or "not reached" when no example of the run got there."""
    seen: dict[str, tuple[str, str]] = {}
    for r in results:
        for cid, (verdict, how) in getattr(r, "ub", {}).items():
            merge(seen, cid, verdict, how)
    out = {cid: {"status": v, "detail": how} for cid, (v, how) in sorted(seen.items())}
    for cid in ub_clauses():
        out.setdefault(cid, {"status": "not reached", "detail": "no example of this run reached it"})
    return out
