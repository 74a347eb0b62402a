"""`ggspec check --baseline OLD.json`: what changed since an earlier run, and whether it regressed.

Per clause, the baseline's verdict (from its JSON report) against this run's:

- **newly failing** — fails now (fail, crash, timeout) and did not fail in the baseline (or the
  baseline did not have the clause): a *regression*;
- **newly passing** — passes now and failed in the baseline;
- **now unsupported** — unsupported now, and not in the baseline;
- **other changes** — any other change of status (a failure that now crashes, an xfail that
  now passes, a clause the baseline did not run, one this run did not run).

With `--baseline` the run's exit code is the gate's: 1 when there is a regression, else 0 —
a clause that failed in the baseline and still fails is known, not new. A baseline made
with another target, profile or seed is compared all the same; the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.results import FAILING, ClauseVerdict


@dataclass
class Changes:
    newly_failing: list[tuple[str, str, str]] = field(default_factory=list)  # (clause, was, now)
    newly_passing: list[tuple[str, str, str]] = field(default_factory=list)
    now_unsupported: list[tuple[str, str, str]] = field(default_factory=list)
    other: list[tuple[str, str, str]] = field(default_factory=list)
    #: settings that differ from the baseline's: (name, baseline's, this run's)
    settings: list[tuple[str, object, object]] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return bool(self.newly_failing)

    def to_json(self) -> dict[str, Any]:
        def rows(items: list[tuple[str, str, str]]) -> list[dict[str, str]]:
            return [{"clause": c, "was": w, "now": n} for c, w, n in items]

        return {"regressed": self.regressed, "newly_failing": rows(self.newly_failing),
                "newly_passing": rows(self.newly_passing), "now_unsupported": rows(self.now_unsupported),
                "other": rows(self.other),
                "settings": [{"name": n, "baseline": b, "now": v} for n, b, v in self.settings]}


def compare(baseline: dict[str, Any], verdicts: list[ClauseVerdict], settings: dict[str, object] | None = None) -> Changes:
    """The changes from the JSON report `baseline` to this run's `verdicts`."""
    was = {c["id"]: str(c["status"]) for c in baseline.get("clauses", [])}
    now = {v.id: v.status for v in verdicts}
    out = Changes()
    for cid in [*now, *(c for c in was if c not in now)]:
        before, after = was.get(cid, "absent"), now.get(cid, "absent")
        if before == after:
            continue
        row = (cid, before, after)
        if after in FAILING and before not in FAILING:
            out.newly_failing.append(row)
        elif after == "pass" and before in FAILING:
            out.newly_passing.append(row)
        elif after == "unsupported":
            out.now_unsupported.append(row)
        else:
            out.other.append(row)
    for name, value in (settings or {}).items():
        if name in baseline and baseline[name] != value:
            out.settings.append((name, baseline[name], value))
    return out


def lines(changes: Changes, path: str) -> list[str]:
    """What the terminal shows: every change, then the gate's word."""
    out = [f"compared with the baseline {path}:"]
    for name, before, now in changes.settings:
        out.append(f"  note: {name} was {before!r} in the baseline, is {now!r} now")
    for title, items in (("newly failing", changes.newly_failing), ("newly passing", changes.newly_passing),
                         ("now unsupported", changes.now_unsupported), ("other changes", changes.other)):
        if items:
            out.append(f"  {title} ({len(items)}): " + ", ".join(f"{c} ({w} -> {n})" for c, w, n in items))
    if not (changes.newly_failing or changes.newly_passing or changes.now_unsupported or changes.other):
        out.append("  no clause changed")
    out.append(f"REGRESSION: {len(changes.newly_failing)} clause(s) newly failing" if changes.regressed
               else "no regression")
    return out
