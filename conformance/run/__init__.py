"""A run's one home, between the front ends and engine/ + reports/: front ends parse and print,
run/ decides, engine/ executes, reports/ write.

- plan.py: `Options` (what a front end parsed) -> `make_plan` -> a frozen `Plan`;
- execute.py: `execute(plan)` -> `Outcome` (results, verdicts, baseline changes, exit code),
  `report_json`; `judge` / `judge_one` for a front end that runs checks one at a time;
- select.py (`--select`/`--deselect`), changed.py (`--changed`), cache.py (the verdict cache),
  reuse.py (`--reuse-from`): the parts of a plan and of its execution.
"""

from __future__ import annotations

from .execute import Outcome, execute, judge, report_json
from .plan import Options, Plan, make_plan

__all__ = ["Options", "Outcome", "Plan", "execute", "judge", "make_plan", "report_json"]
