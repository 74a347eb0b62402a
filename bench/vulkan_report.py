"""The tables of docs/vulkan-port.md, generated from real runs: ggspec's `--device vulkan` reports of
each llama-cpp-python version and upstream's test-backend-ops verdicts of the same sources
(bench/vulkan_upstream_ops.py).

    python bench/vulkan_report.py --runs R1.json R2.json ... --ops O1.json ... \\
        [--tally T.txt ...] --data docs/data/vulkan-port.json --page docs/vulkan-port.md

`--data` keeps what the page is made from (per run: target, seed, size, clause counts, failing
and xfail clauses, examples that reached the device; per version: upstream's verdicts per op),
so the page is rewritten from it alone with `--page` and no `--runs`. The page's text outside
the markers `<!-- generated: NAME -->` ... `<!-- end -->` is kept as it is.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

#: test-backend-ops' op (op_desc) -> the clauses of spec/core.md that say what it computes
OP_CLAUSES = {
    "ADD": ("CORE-54",), "MUL": ("CORE-57",), "SCALE": ("CORE-59",), "MUL_MAT": ("CORE-61", "CORE-76"),
    "GET_ROWS": ("CORE-65",), "NORM": ("CORE-66",), "SOFT_MAX": ("CORE-69",), "CPY": ("CORE-51",),
    "DUP": ("CORE-51",), "CONT": ("CORE-51",), "GELU": ("CORE-70",), "SILU": ("CORE-71",),
}
#: areas of the spec no op test reaches (test-backend-ops builds one op's graph and compares it)
BEYOND_OPS = ("BUF", "BUFT", "TDATA", "COPY", "BACK", "ALLOC", "SCHED", "GCOPY", "REG", "CPU")
STATUSES = ("pass", "fail", "crash", "timeout", "xfail", "xpass", "unsupported", "partial", "uncovered")


_WORST = ("crash", "timeout", "fail", "pass", "unsupported")


def _from_stream(path: Path) -> dict[str, Any]:
    """A report's shape from the results a run streams as its checks finish (FILE.jsonl): for a
    run that did not finish, its clauses judged from the checks that did (a clause takes its worst
    check's status; no known-failures file applied), marked `partial_run`."""
    start: dict[str, Any] = {}
    checks = []
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e.get("event") == "start":
            start = e
        elif e.get("event") == "check":
            checks.append(e)
    per: dict[str, list[str]] = {}
    for c in checks:
        for cid in c["clauses"]:
            per.setdefault(cid, []).append(c["status"])
    failing: dict[str, list[str]] = {}
    for c in checks:
        for cid in c["clauses"]:
            if c["status"] in ("fail", "crash", "timeout"):
                failing.setdefault(cid, []).append(c["check"])
    clauses = [{"id": cid, "status": min(st, key=lambda s: _WORST.index(s) if s in _WORST else len(_WORST)),
                "failing": failing.get(cid, [])} for cid, st in per.items()]
    return {"target": start.get("target"), "seed": start.get("seed"), "size": start.get("size"), "seconds": None,
            "clauses": clauses, "checks": [{"name": c["check"], "reached_device": None} for c in checks],
            "partial_run": f"{len(checks)} of {len(start.get('checks', []))} checks finished"}


def _with_known(r: dict[str, Any]) -> None:
    """Apply the target's shipped known-failures file to a report run with --no-known, as
    reports/known.py does: a failing clause is xfail when an entry names it (or its area), or
    when check entries name every check that failed it."""
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.reports import known

    path = known.default_for(r["target"])
    if path is None:
        return
    entries = [k for k in known.load(path, load_checks()) if k.for_target(r["target"])]
    names = {k.kind: set() for k in entries}
    for k in entries:
        names[k.kind].add(k.name)
    for c in r["clauses"]:
        if c["status"] not in ("fail", "crash", "timeout"):
            continue
        failing = set(c.get("failing") or c.get("checks") or [])
        if (c["id"] in names.get("clause", set()) or c["id"].split("-")[0] in names.get("area", set())
                or (failing and failing <= names.get("check", set()))):
            c["status"] = "xfail"


def summarise_run(path: Path, tally: Path | None) -> dict[str, Any]:
    r = _from_stream(path) if path.suffix == ".jsonl" else json.loads(path.read_text())
    if path.suffix == ".jsonl" or r.get("summary", {}).get("xfail", 0) == 0:
        _with_known(r)  # runs made with --no-known: judged here with the shipped file
    counts = Counter(c["status"] for c in r["clauses"])
    reached = sum(1 for c in r["checks"] if c.get("reached_device"))
    out: dict[str, Any] = {
        "target": r["target"], "seed": r["seed"], "size": r["size"], "seconds": r.get("seconds"),
        "counts": {s: counts.get(s, 0) for s in STATUSES if counts.get(s)},
        "clauses": {c["id"]: c["status"] for c in r["clauses"]},
        "failing": sorted(c["id"] for c in r["clauses"] if c["status"] in ("fail", "crash", "timeout")),
        "checks_reaching_the_device": reached, "checks": len(r["checks"]),
    }
    if r.get("partial_run"):
        out["partial_run"] = r["partial_run"]
    if tally is not None and tally.is_file():
        events = Counter(tally.read_text().split())
        out["device_examples"] = dict(events)
    return out


def summarise_ops(path: Path) -> dict[str, Any]:
    d = json.loads(path.read_text())
    per_op = {}
    for op in d["ops"]:
        kinds = Counter()
        for _, verdict in op["cases"]:
            kinds["abort" if verdict.startswith("abort") else "not supported" if verdict == "not supported"
                  else verdict.split(" ")[0]] += 1
        aborts = [f"{case}: {v}" for case, v in op["cases"] if v.startswith("abort")]
        per_op[op["op"]] = {"counts": dict(kinds), "aborts": aborts}
    return {"target": d["target"], "device": d["device"], "registered": d.get("registered", True), "ops": per_op}


def _version(target: str) -> str:
    return target.rsplit("-", 1)[-1]


def runs_table(runs: list[dict[str, Any]]) -> str:
    lines = ["| version | size | seed | pass | fail | crash | xfail | xpass | unsupported | partial "
             "| checks reaching the device | examples on Vulkan |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(runs, key=lambda r: (r["target"], r["size"], str(r["seed"]))):
        c = r["counts"]
        dev = r.get("device_examples", {})
        on = f"{dev.get('made', 0)} made, {dev.get('computed', 0)} graphs" if dev else "(not tallied)"
        size = r["size"] + (f" (unfinished: {r['partial_run']})" if r.get("partial_run") else "")
        reach = "(not in the stream)" if r.get("partial_run") else f"{r['checks_reaching_the_device']} of {r['checks']}"
        lines.append(f"| {_version(r['target'])} | {size} | {r['seed']} | {c.get('pass', 0)} | {c.get('fail', 0)} | "
                     f"{c.get('crash', 0) + c.get('timeout', 0)} | {c.get('xfail', 0)} | {c.get('xpass', 0)} | "
                     f"{c.get('unsupported', 0)} | {c.get('partial', 0)} | {reach} | {on} |")
    return "\n".join(lines)


def side_by_side(runs: list[dict[str, Any]], ops: list[dict[str, Any]]) -> str:
    """Per version and op: upstream's verdict counts beside ggspec's verdict of the op's clauses."""
    lines = ["| version | op | test-backend-ops on Vulkan | ggspec (its clauses) |", "|---|---|---|---|"]
    for o in sorted(ops, key=lambda o: o["target"]):
        mine = [r for r in runs if r["target"] == o["target"]]
        run = max(mine, key=lambda r: (r["size"] == "ci", r["size"] == "dev")) if mine else None
        for op, v in o["ops"].items():
            c = v["counts"]
            theirs = ", ".join(f"{n} {k}" for k, n in sorted(c.items())) or "no case"
            if v["aborts"]:
                theirs += " (" + "; ".join(v["aborts"])[:160] + ")"
            ours = ", ".join(f"{cl} {run['clauses'].get(cl, '-')}" for cl in OP_CLAUSES.get(op, ())) if run else "-"
            lines.append(f"| {_version(o['target'])} | {op} | {theirs} | {ours} |")
    for o in sorted(ops, key=lambda o: o["target"]):
        if not o.get("registered", True):
            lines.append(f"\n{_version(o['target'])}: test-backend-ops as upstream builds it does not list "
                         f"{o['device']} (its registry is filled before the Vulkan instance exists) and tests the CPU "
                         "alone; the verdicts above are from the same objects linked with the instance made first "
                         "(bench/vulkan_upstream_ops.py).")
    return "\n".join(lines)


def beyond_ops(runs: list[dict[str, Any]]) -> str:
    """What test-backend-ops cannot reach: per version, the verdicts of the areas beyond ops."""
    lines = ["| version | run | " + " | ".join(BEYOND_OPS) + " |", "|---|---|" + "---|" * len(BEYOND_OPS)]
    for r in sorted(runs, key=lambda r: (r["target"], r["size"], str(r["seed"]))):
        cells = []
        for area in BEYOND_OPS:
            got = Counter(s for cid, s in r["clauses"].items() if cid.split("-")[0] == area)
            bad = got.get("fail", 0) + got.get("crash", 0) + got.get("timeout", 0)
            cells.append(f"{got.get('pass', 0)}/{sum(got.values())}" + (f", {bad} failing" if bad else "")
                         + (f", {got['xfail']} xfail" if got.get("xfail") else ""))
        lines.append(f"| {_version(r['target'])} | {r['size']} seed {r['seed']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_page(page: Path, data: dict[str, Any]) -> None:
    text = page.read_text()
    parts = {"runs": runs_table(data["runs"]), "side-by-side": side_by_side(data["runs"], data["ops"]),
             "beyond-ops": beyond_ops(data["runs"])}
    for name, table in parts.items():
        pat = re.compile(rf"(<!-- generated: {name} -->\n).*?(<!-- end -->)", re.S)
        if not pat.search(text):
            sys.exit(f"{page}: no <!-- generated: {name} --> ... <!-- end --> markers")
        text = pat.sub(lambda m, t=table: m.group(1) + t + "\n" + m.group(2), text)
    page.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="*", type=Path, default=[])
    ap.add_argument("--tally", nargs="*", type=Path, default=[], help="one per run, same order (GGSPEC_DEVICE_TALLY)")
    ap.add_argument("--ops", nargs="*", type=Path, default=[])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--page", type=Path)
    args = ap.parse_args()
    if args.runs or args.ops:
        old = json.loads(args.data.read_text()) if args.data.is_file() else {"runs": [], "ops": []}
        tallies = args.tally + [None] * (len(args.runs) - len(args.tally))
        new_runs = [summarise_run(p, t) for p, t in zip(args.runs, tallies, strict=True)]
        keys = {(r["target"], r["size"], r["seed"]) for r in new_runs}
        runs = [r for r in old["runs"] if (r["target"], r["size"], r["seed"]) not in keys] + new_runs
        new_ops = [summarise_ops(p) for p in args.ops]
        targets = {o["target"] for o in new_ops}
        ops = [o for o in old["ops"] if o["target"] not in targets] + new_ops
        args.data.write_text(json.dumps({"runs": runs, "ops": ops}, indent=1) + "\n")
    if args.page:
        write_page(args.page, json.loads(args.data.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
