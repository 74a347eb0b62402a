"""Reports of a run: the terminal table, JSON and JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from .runner import CheckResult, ClauseVerdict, RunConfig

STATUSES = ("pass", "fail", "crash", "unsupported", "uncovered", "xfail", "xpass")  # runner.STATUSES


def table(verdicts: list[ClauseVerdict], cfg: RunConfig) -> str:
    width = max(len(v.title) for v in verdicts)
    lines = [
        f"ggspec check — target {cfg.target}, profile {cfg.profile.value}, size {cfg.size}, seed {cfg.seed}",
        f"{'clause':9s} {'kind':9s} {'status':9s} {'examples':>8s}  title",
        "-" * (42 + min(width, 60)),
    ]
    for v in verdicts:
        lines.append(f"{v.id:9s} {v.kind:9s} {v.status.upper() if v.status != 'pass' else 'pass':9s} {v.examples:8d}  {v.title}")
        if v.status != "pass" and v.detail:
            lines.append(f"{'':29s}  ↳ {v.detail[:300]}")
    counts = Counter(v.status for v in verdicts)
    lines.append("-" * (42 + min(width, 60)))
    lines.append(", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES) + f" — {len(verdicts)} clauses")
    return "\n".join(lines)


def to_json(verdicts: list[ClauseVerdict], results: list[CheckResult], cfg: RunConfig) -> dict[str, object]:
    return {
        "target": cfg.target,
        "profile": cfg.profile.value,
        "size": cfg.size,
        "seed": cfg.seed,
        "clauses": [
            {"id": v.id, "title": v.title, "kind": v.kind, "status": v.status, "examples": v.examples,
             "detail": v.detail, "checks": v.checks}
            for v in verdicts
        ],
        "checks": [
            {"name": r.check, "clauses": list(r.clauses), "status": r.status, "examples": r.examples,
             "seconds": round(r.seconds, 3), "detail": r.detail,
             "errata": {cid: {"status": st, "detail": d} for cid, (st, d) in r.errata.items()}}
            for r in results
        ],
    }


def write_json(path: Path, verdicts: list[ClauseVerdict], results: list[CheckResult], cfg: RunConfig) -> None:
    path.write_text(json.dumps(to_json(verdicts, results, cfg), indent=2) + "\n", encoding="utf-8")


def write_junit(path: Path, verdicts: list[ClauseVerdict], cfg: RunConfig) -> None:
    """One test case per clause; fail and crash are failures, uncovered is skipped."""
    suite = ET.Element(
        "testsuite",
        name=f"ggspec.{cfg.target}.{cfg.profile.value}",
        tests=str(len(verdicts)),
        failures=str(sum(v.status in ("fail", "crash") for v in verdicts)),
        skipped=str(sum(v.status == "uncovered" for v in verdicts)),
    )
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname=f"ggspec.{v.id.split('-')[0]}", name=f"{v.id} {v.title}")
        if v.status in ("fail", "crash"):
            ET.SubElement(case, "failure", message=v.status, type=v.status).text = v.detail
        elif v.status == "uncovered":
            ET.SubElement(case, "skipped", message="no check covers this clause")
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
