"""Sharding for CI matrices: `ggspec check --shard K/N` and `ggspec merge A.json B.json ...`.

`--shard K/N` (1 <= K <= N) runs every N-th check of the selection, sorted by name, starting at
the K-th: a deterministic, balanced 1/N of it. The N shards of one command line (same target,
profile, seed and selection) run every selected check exactly once, and as each check's examples
depend only on the seed and the check, a check runs the same examples in its shard as in one run.

`merge` joins the shards' JSON reports into one with the verdicts one run would give: a clause
covered by checks of several shards takes the strongest of their statuses (crash, timeout,
fail, xfail, unsupported, xpass, pass, uncovered — the order in which one run's checks decide a
clause, known failures included), its examples add up, its checks and details are joined. The
reports must agree on target, profile, seed and examples a check; a check in two reports is an
error (two shards overlap).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..engine.results import Status
from ..errors import MergeError
from . import report

#: how a clause's statuses in several shards combine: the first one present wins
PRECEDENCE: tuple[Status, ...] = ("crash", "timeout", "fail", "interrupted", "xfail", "unsupported", "xpass", "partial",
                                  "skipped", "pass", "not run", "uncovered", "not selected")
_SHARD = re.compile(r"^(\d+)/(\d+)$")


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` → (K, N); ValueError unless 1 <= K <= N."""
    m = _SHARD.match(text.strip())
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"--shard {text!r}: expected K/N with 1 <= K <= N, for example 1/4")
    return int(m.group(1)), int(m.group(2))


def shard_of(names: Sequence[str], shard: tuple[int, int]) -> list[str]:
    """The checks of shard K of N: every N-th of the sorted names, starting at the K-th."""
    k, n = shard
    return [name for i, name in enumerate(sorted(names)) if i % n == k - 1]


def _status(statuses: list[str]) -> str:
    known = [s for s in PRECEDENCE if s in statuses]
    other = sorted(set(statuses) - set(PRECEDENCE))  # a status added later is never hidden
    return other[0] if other and "crash" not in statuses else known[0]


def merge(reports: Sequence[dict[str, Any]], names: Sequence[str] | None = None) -> dict[str, Any]:
    """One JSON report from the shard reports (see the module's docstring)."""
    if not reports:
        raise MergeError("nothing to merge")
    names = list(names) if names is not None else [f"report {i + 1}" for i in range(len(reports))]
    first = reports[0]
    for key in ("target", "profile", "seed", "examples"):
        for name, r in zip(names, reports, strict=True):
            if r.get(key) != first.get(key):
                raise MergeError(f"{name} has {key} {r.get(key)!r}, {names[0]} has {first.get(key)!r}: "
                                 "not shards of one run")
    checks: dict[str, dict[str, Any]] = {}
    for name, r in zip(names, reports, strict=True):
        for c in r["checks"]:
            if c["name"] in checks:
                raise MergeError(f"the check {c['name']} is in two reports (the second: {name}): the shards overlap")
            checks[c["name"]] = c
    clauses: dict[str, list[dict[str, Any]]] = {}
    for r in reports:
        for c in r["clauses"]:
            clauses.setdefault(c["id"], []).append(c)
    if not any((r.get("selection") or {}).get(k) for r in reports for k in ("select", "deselect")):
        _add_uncovered(clauses)  # shards of a whole run: the clauses no shard covers, as one run lists them
    merged_clauses = []
    for cid, parts in clauses.items():
        status = _status([p["status"] for p in parts])
        covered = [p for p in parts if p["status"] != "uncovered"]
        detail = "; ".join(p["detail"] for p in covered if p.get("detail") and p["status"] != "pass")
        if status == "uncovered":
            detail = parts[0].get("detail", "")
        ran = [n for p in parts for n in p.get("checks", [])]
        left_out: list[str] = []
        if status == "partial":
            # a check one shard left out may have run in another: partial only if no shard ran it
            left_out = sorted(set.intersection(*(set(p.get("left_out", [])) for p in parts if p["status"] == "partial"))
                              - set(ran))
            if not left_out:
                status, detail = "pass", ""
            else:
                detail = f"not judged: {len(left_out)} of its checks were not selected (left out: {', '.join(left_out)})"
        merged_clauses.append({
            "id": cid, "title": parts[0].get("title", ""), "kind": parts[0].get("kind", ""), "status": status,
            "examples": sum(int(p.get("examples", 0)) for p in parts), "detail": detail,
            "checks": ran, **({"left_out": left_out} if left_out else {}),
        })
    order = _clause_order()
    merged_clauses.sort(key=lambda c: order.get(c["id"], len(order)))
    verdicts, _ = report.from_json({"clauses": merged_clauses, "checks": []})
    starts = [r["started"] for r in reports if r.get("started")]
    out = dict(first)
    out.update({
        "summary": report.summary(verdicts),
        "started": min(starts) if starts else None,  # ISO 8601 in UTC: the earliest sorts first
        "seconds": round(sum(float(r.get("seconds", 0.0)) for r in reports), 3),
        "shard": None,
        "merged_from": [{"report": n, "shard": r.get("shard"), "checks": len(r["checks"])}
                        for n, r in zip(names, reports, strict=True)],
        "clauses": merged_clauses,
        "checks": [checks[n] for n in sorted(checks)],
    })
    return out


def _add_uncovered(clauses: dict[str, list[dict[str, Any]]]) -> None:
    from ggspec.reference.clauses import catalogue

    for cid, c in catalogue().items():
        if cid not in clauses:
            clauses[cid] = [{"id": cid, "title": c.title, "kind": c.kind, "status": "uncovered", "examples": 0,
                             "detail": "no check covers this clause", "checks": []}]


def run_merge(args: argparse.Namespace) -> int:
    """`ggspec merge A.json B.json ... [--json OUT] [--junit OUT] [--html OUT]`: exit 1 when the
    merged run fails, 0 when it passes, 2 when the reports cannot be merged."""
    from ggspec.reference.clauses import Profile

    from ..engine.results import RunConfig

    data = merge([report.load_json(Path(p)) for p in args.reports], args.reports)
    verdicts, results = report.from_json(data)
    cfg = RunConfig(str(data["target"]), Profile(data["profile"]), size=str(data.get("size", "dev")),
                    max_examples=data.get("examples"), seed=int(data.get("seed", 0)))
    print(report.table(verdicts, cfg, results, verbose=args.verbose, seconds=float(data["seconds"])))
    print(f"merged {len(args.reports)} report(s): {len(results)} checks", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.junit:
        report.write_junit(Path(args.junit), verdicts, cfg, results, seconds=float(data["seconds"]))
    if args.html:
        from .html import docs_base, write_html

        write_html(Path(args.html), data, docs_base(getattr(args, "docs_url", None)))
    return 1 if data["summary"]["verdict"] == "fail" else 0


def _clause_order() -> dict[str, int]:
    from ggspec.reference.clauses import catalogue

    return {cid: i for i, cid in enumerate(catalogue())}
