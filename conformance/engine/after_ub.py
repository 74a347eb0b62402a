"""Undefined behaviour, confirmed or not: what a target did after an undefined-behaviour point.

Under profile rc8 the reference stops where rc.8 crashes or corrupts memory without an assert
(`UndefinedBehaviour`), and `differential.judge` does not judge what the target does next. This
module records it, so that the spec's prediction is checked on the real build:

- **confirmed**: the target crashed (a signal, a timeout), aborted where profile fixed does not
  abort, or finished with observations that differ from what profile fixed records (a wrong
  byte, read or written through the defect);
- **not observed**: the target finished as profile fixed would (same observations), or aborted
  with the assert that profile fixed expects there.

A clause's verdict is "confirmed" when any example confirmed it (`merge`).
"""

from __future__ import annotations

from typing import Any

from ggspec.reference.clauses import Profile, clause

from .differential import Example, assert_message_seen, run_on_reference
from .results import CONFIRMED, NOT_OBSERVED


def observe(ex: Example) -> tuple[str, str, str] | None:
    """(clause, verdict, how) for an example whose reference stopped at undefined behaviour,
    or None when it did not."""
    exp, act = ex.expected, ex.actual
    if exp.ending != "ub" or exp.clause_id is None or act.ending in ("error", "unsupported", "violation", "ub"):
        return None  # the reference model as target raises UndefinedBehaviour itself: nothing to see
    cid = exp.clause_id
    if act.ending == "crash":
        return cid, CONFIRMED, f"{ex.check.name}: the target {act.detail}"
    fixed = run_on_reference(ex.check, ex.args, Profile.FIXED)
    if act.ending == "abort":
        c = clause(fixed.clause_id) if fixed.ending == "violation" and fixed.clause_id else None
        if c is not None and c.message is not None and assert_message_seen(act.stderr, c.message):
            return cid, NOT_OBSERVED, f"{ex.check.name}: aborted with '{c.message}', as profile fixed requires"
        return cid, CONFIRMED, f"{ex.check.name}: the target {act.detail}"
    # the target finished
    if fixed.ending == "ok":
        if act.observations == fixed.observations:
            return cid, NOT_OBSERVED, f"{ex.check.name}: finished with what profile fixed records"
        return cid, CONFIRMED, f"{ex.check.name}: wrong result: {_first_difference(fixed.observations, act.observations)}"
    if fixed.ending == "violation":
        return cid, CONFIRMED, f"{ex.check.name}: finished where profile fixed aborts ({fixed.clause_id})"
    return cid, NOT_OBSERVED, f"{ex.check.name}: finished normally (profile fixed has no result to compare)"


def _first_difference(want: list[tuple[str, Any]], got: list[tuple[str, Any]]) -> str:
    for (label, a), (_, b) in zip(want, got, strict=False):
        if a != b:
            return f"'{label}' differs from profile fixed's"
    return f"{len(got)} observations where profile fixed records {len(want)}"


def markdown(report: dict[str, Any]) -> str:
    """The undefined-behaviour table of a JSON report (`ggspec check --json`), as markdown."""
    lines = [f"Target `{report['target']}`, profile `{report['profile']}`, seed {report['seed']}, "
             f"{report.get('examples', '?')} examples a check.", "",
             "| clause | title | rc.8 | how |", "|---|---|---|---|"]
    for cid, v in report["undefined_behaviour"].items():
        how = v["detail"].splitlines()[0].split("((")[0].replace("|", "\\|")[:160]  # no call arguments (pointers)
        lines.append(f"| {cid} | {clause(cid).title} | {v['status']} | {how} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m ggspec.conformance.engine.after_ub",
                                 description="print a report's undefined-behaviour verdicts as a markdown table")
    ap.add_argument("report", help="a JSON report of ggspec check --json")
    args = ap.parse_args(argv)
    with open(args.report, encoding="utf-8") as f:
        print(markdown(json.load(f)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
