"""Time to a counterexample: how fast the suite reports each planted defect, and how small the
shrunk case is (issue 12, "The suite").

For each planted defect of native/src (``GGSPEC_DEFECT_*``) the script builds the native variant
once (`ggspec.native.build.build_variant`, into a work folder), then, for each seed, runs

    ggspec check --target native:<dir>:<module> --select <the clauses the defect breaks>
                 --seed S --max-examples N --json OUT --quiet

(only the checks of the clauses the defect breaks, not the whole suite) and records

- the wall of the whole run (start-up, loading the target in a worker, every selected check),
- the ``seconds`` of the failing check in the JSON report (the first failing one when several
  fail): the time from that check's start to its reported failure, shrinking included,
- the size of the shrunk case, read from the failing check's reproducer (``args={...}`` in its
  detail): for the graph and scheduler defects the number of nodes of the shrunk graph (count of
  ``Node(`` in the arguments; a check on a fixed fixture graph has no node count, it says
  ``fixture_graph``); for BOUNDS the bytes past the tensor's end (``excess``) and the
  tensor's elements; for COPY_VIEW_OFFSET the elements of the source tensor and of the view copied
  from it, and the view's offset in bytes; for every
  defect also the length of the arguments' text, a measure common to all,
- the CPU seconds of the run (``resource.getrusage(RUSAGE_CHILDREN)`` before and after).

Median, min and max over the seeds, and whether every seed found the defect, go to a markdown
table on stdout (and the raw runs to ``--out`` as JSON).

    nice -n 19 .venv/bin/python bench/counterexample.py --seeds 5 --out /tmp/cx.json
"""

from __future__ import annotations

import argparse
import json
import math
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Defect:
    """One planted defect: its define, the checks selected, and how its shrunk case is measured."""

    define: str
    select: tuple[str, ...]
    size_kind: str  # "nodes" | "bounds" | "copy"


DEFECTS: tuple[Defect, ...] = (
    Defect("GGSPEC_DEFECT_BOUNDS", ("TDATA-3",), "bounds"),
    Defect("GGSPEC_DEFECT_COPY_VIEW_OFFSET", ("COPY-4",), "copy"),
    Defect("GGSPEC_DEFECT_PERMUTE_STRIDES", ("graph.random_graphs_compute",), "nodes"),
    Defect("GGSPEC_DEFECT_SCHED_PASS2", ("SCHED-8", "SCHED-9", "SCHED-10", "SCHED-11"), "nodes"),
    Defect("GGSPEC_DEFECT_SCHED_DEDUP", ("SCHED-17",), "nodes"),
    Defect("GGSPEC_DEFECT_SCHED_EVAL_BATCH", ("SCHED-24",), "nodes"),
)


@dataclass
class Run:
    """One `ggspec check` run of one defect at one seed."""

    define: str
    seed: int
    rc: int
    wall: float
    cpu: float
    found: bool
    failing_check: str = ""
    check_seconds: float = math.nan
    examples: int = 0
    size: dict[str, int] = field(default_factory=dict)


def args_text(detail: str) -> str:
    """The ``args={...}`` of the reproducer in a failure's detail ('' when there is none)."""
    m = re.search(r"args=(\{.*\})\)\s*\nEOF", detail, re.S)
    return m.group(1) if m else ""


def elements(text: str) -> list[int]:
    """The element count of each ``ne=(...)`` in a reproducer's arguments."""
    out = []
    for ne in re.findall(r"ne=\(([^)]*)\)", text):
        out.append(math.prod(int(x) for x in re.findall(r"-?\d+", ne)) if ne.strip() else 1)
    return out


def shrunk_size(kind: str, detail: str) -> dict[str, int]:
    """The documented size measures of the shrunk case (see the module docstring)."""
    text = args_text(detail)
    if not text:
        return {}
    size = {"args_chars": len(text)}
    if kind == "nodes" and text.startswith("{'fixture':"):
        size["fixture_graph"] = 1  # a fixed graph (the whisper decoder...): nothing to shrink, no node count
    elif kind == "nodes":
        size["nodes"] = text.count("Node(")
    elif kind == "bounds":
        m = re.search(r"'excess': (\d+)", text)
        if m:
            size["excess_bytes"] = int(m.group(1))
        size["elements"] = sum(elements(text))
    else:
        # COPY: the source tensor (TensorSpec) and the view copied from it (ViewSpec)
        src = re.search(r"TensorSpec\([^)]*ne=\(([^)]*)\)", text)
        view = re.search(r"ViewSpec\(ne=\(([^)]*)\)", text)
        for key, m in (("source_elements", src), ("view_elements", view)):
            if m:
                size[key] = math.prod(int(x) for x in re.findall(r"-?\d+", m.group(1)))
        off = re.search(r"offset=(\d+)", text)
        if off:
            size["view_offset_bytes"] = int(off.group(1))
    return size


def build(defect: Defect, work: Path) -> str:
    """The variant's target string, building it unless the work folder already holds it."""
    from ggspec.native.build import build_variant

    module = "ggspec_native_cx_" + defect.define.removeprefix("GGSPEC_DEFECT_").lower()
    out = work / module
    if not any(out.glob(f"{module}*.so")):
        out.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        build_variant(module, str(out), defines=[defect.define])
        print(f"built {module} in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    return f"native:{out}:{module}"


def run_one(defect: Defect, target: str, seed: int, max_examples: int, work: Path) -> Run:
    report = work / f"{defect.define}-{seed}.json"
    cmd = [sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--seed", str(seed),
           "--max-examples", str(max_examples), "--json", str(report), "--quiet", "--no-c-reproducers"]
    for sel in defect.select:
        cmd += ["--select", sel]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run = Run(defect.define, seed, proc.returncode, wall, cpu, found=False)
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        print(f"{defect.define} seed {seed}: no report (rc {proc.returncode}): {proc.stderr[-500:]}", file=sys.stderr)
        return run
    failing = [c for c in data["checks"] if c["status"] in ("fail", "crash")]
    if failing:
        first = min(failing, key=lambda c: float(c["seconds"]))
        run.found = True
        run.failing_check = str(first["name"])
        run.check_seconds = float(first["seconds"])
        run.examples = int(first["examples"])
        run.size = shrunk_size(defect.size_kind, str(first["detail"]))
    return run


def summary(values: list[float]) -> str:
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return "—"
    return f"{statistics.median(vals):.2f} ({min(vals):.2f}–{max(vals):.2f})"


def size_summary(runs: list[Run]) -> str:
    keys = sorted({k for r in runs for k in r.size if k != "args_chars"}) + ["args_chars"]
    parts = []
    for k in keys:
        vals = [r.size[k] for r in runs if k in r.size]
        if vals:
            med = statistics.median(vals)
            parts.append(f"{k} {med:g} ({min(vals)}–{max(vals)})")
    return ", ".join(parts) or "no reproducer"


def table(runs: list[Run], seeds: list[int]) -> str:
    lines = ["| defect | checks selected | found | failing check | check s to failure, median (min–max) "
             "| examples of the failing check | run wall s | run CPU s | shrunk case, median (min–max) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for d in DEFECTS:
        rs = [r for r in runs if r.define == d.define]
        if not rs:
            continue
        hit = [r for r in rs if r.found]
        checks = sorted({r.failing_check for r in hit})
        lines.append(f"| {d.define.removeprefix('GGSPEC_DEFECT_')} | {' '.join(d.select)} | {len(hit)}/{len(seeds)} "
                     f"| {', '.join(checks) or '—'} | {summary([r.check_seconds for r in hit])} "
                     f"| {summary([float(r.examples) for r in hit]).replace('.00', '')} "
                     f"| {summary([r.wall for r in rs])} | {summary([r.cpu for r in rs])} | {size_summary(hit)} |")
    return "\n".join(lines)


def per_check_table(runs: list[Run], work: Path) -> str:
    """Every failing check of every run (from the saved reports): seeds it failed, seconds, shrunk size."""
    kinds = {d.define: d.size_kind for d in DEFECTS}
    rows: dict[tuple[str, str], list[tuple[float, dict[str, int]]]] = {}
    for r in runs:
        report = work / f"{r.define}-{r.seed}.json"
        if not report.exists():
            continue
        for c in json.loads(report.read_text())["checks"]:
            if c["status"] in ("fail", "crash"):
                rows.setdefault((r.define, str(c["name"])), []).append(
                    (float(c["seconds"]), shrunk_size(kinds[r.define], str(c["detail"]))))
    lines = ["| defect | failing check | seeds | check s to failure, median (min–max) | shrunk case, median (min–max) |",
             "|---|---|---|---|---|"]
    for (define, check), got in rows.items():
        fake = [Run(define, 0, 1, 0.0, 0.0, True, check, sec, 0, size) for sec, size in got]
        lines.append(f"| {define.removeprefix('GGSPEC_DEFECT_')} | {check} | {len(got)} "
                     f"| {summary([sec for sec, _ in got])} | {size_summary(fake)} |")
    return "\n".join(lines)


def retable(runs_file: Path, work: Path) -> int:
    """Print the table of saved runs, the shrunk sizes measured again from the saved reports."""
    kinds = {d.define: d.size_kind for d in DEFECTS}
    runs = [Run(**r) for r in json.loads(runs_file.read_text())]
    for r in runs:
        report = work / f"{r.define}-{r.seed}.json"
        if r.found and report.exists():
            checks = {c["name"]: c for c in json.loads(report.read_text())["checks"]}
            if r.failing_check in checks:
                r.size = shrunk_size(kinds[r.define], str(checks[r.failing_check]["detail"]))
    print(table(runs, sorted({r.seed for r in runs})))
    print()
    print(per_check_table(runs, work))
    return 0 if all(r.found for r in runs) else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    p.add_argument("--max-examples", type=int, default=100, help="examples a check at most (default 100)")
    p.add_argument("--only", action="append", default=[], help="only this define (repeatable)")
    p.add_argument("--work", type=Path, default=None, help="folder for the variants and reports (default: a temp dir)")
    p.add_argument("--out", type=Path, default=None, help="write the raw runs here as JSON")
    p.add_argument("--from", dest="from_", type=Path, default=None,
                   help="no runs: print the table of an earlier --out file, sizes re-read from the reports in --work")
    a = p.parse_args()
    if a.from_:
        if a.work is None:
            p.error("--from needs --work (the folder holding the reports)")
        return retable(a.from_, a.work)
    work = a.work or Path(tempfile.mkdtemp(prefix="ggspec-cx-"))
    work.mkdir(parents=True, exist_ok=True)
    seeds = list(range(1, a.seeds + 1))
    defects = [d for d in DEFECTS if not a.only or d.define in a.only]
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}", file=sys.stderr)
    runs: list[Run] = []
    for d in defects:
        target = build(d, work)
        for s in seeds:
            r = run_one(d, target, s, a.max_examples, work)
            print(f"{d.define} seed {s}: found={r.found} {r.failing_check} check {r.check_seconds:.2f}s "
                  f"wall {r.wall:.2f}s cpu {r.cpu:.2f}s size {r.size}", file=sys.stderr)
            runs.append(r)
            if a.out:
                a.out.write_text(json.dumps([asdict(x) for x in runs], indent=1))
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}", file=sys.stderr)
    print(table(runs, seeds))
    print()
    print(per_check_table(runs, work))
    return 0 if all(r.found for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
