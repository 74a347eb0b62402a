"""How fast the suite itself runs: `ggspec check` per run size, wall and CPU seconds (the run and
all its workers), examples, examples per CPU-second; graph examples per CPU-second.

    python bench/suite_speed.py [--size dev] [--workers N] [--select PATTERN ...] [--seed 1]
    python bench/suite_speed.py --goals [--native-file native/src/tdata.c]

--goals measures issue 22's four runs, each with its load before and after: the full dev run and
the ci run (both --no-cache), `--changed` after a one-file change to native/ (a comment appended
to --native-file, taken back afterwards; run it on a clean tree, or the other changes count too),
and a rerun with nothing changed (the same `--seed 1` run twice on a fresh verdict cache: the
second is measured).

CPU seconds are what to compare on a shared machine (wall time depends on the other processes;
`nice` does not protect a run from them). Prints one line per run and its figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure(size: str, workers: int | None, select: list[str], seed: int, extra: tuple[str, ...] = ("--no-cache",),
            env: dict[str, str] | None = None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "run.json"
        cmd = [sys.executable, "-m", "ggspec.conformance", "check", "--quiet", "--seed", str(seed), "--size", size,
               "--json", str(report), *(["--workers", str(workers)] if workers else []),
               *(a for s in select for a in ("--select", s)), *extra]
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT, env=env)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        data = json.loads(report.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    examples = sum(int(c["examples"]) for c in data["checks"])
    statuses: dict[str, int] = {}
    for c in data["checks"]:
        statuses[c["status"]] = statuses.get(c["status"], 0) + 1
    said = [line for line in proc.stderr.splitlines() if "verdict cache" in line or "--changed" in line]
    return {"command": " ".join(cmd[1:]), "exit": proc.returncode, "said": said, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "checks": len(data["checks"]), "examples": examples, "examples_per_cpu_s": round(examples / cpu, 1),
            "statuses": statuses, "load_1min_before": round(load_before, 1), "load_1min": round(os.getloadavg()[0], 1),
            "cores": os.cpu_count(), "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def goals(native_file: str) -> list[dict[str, object]]:
    """Issue 22's four runs (see the module's docstring)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GGSPEC_VERDICT_CACHE")}
    out = [dict(measure("dev", None, [], 1), goal="dev full <= 10 s"),
           dict(measure("ci", None, [], 1), goal="ci <= 30 s")]
    path = ROOT / native_file
    text = path.read_text(encoding="utf-8")
    try:
        path.write_text(text + "\n/* bench/suite_speed.py: a one-file change */\n", encoding="utf-8")
        out.append(dict(measure("dev", None, [], 1, ("--no-cache", "--changed")), goal="--changed <= 3 s"))
    finally:
        path.write_text(text, encoding="utf-8")
    with tempfile.TemporaryDirectory() as cache:
        env["GGSPEC_CACHE"] = cache
        measure("dev", None, [], 1, (), env)
        out.append(dict(measure("dev", None, [], 1, (), env), goal="rerun, nothing changed <= 1 s"))
    return out


def _line(got: dict[str, object]) -> str:
    return (f"{got['command']}: {got['wall_s']} s wall, {got['cpu_s']} CPU-s, {got['examples']} examples "
            f"({got['examples_per_cpu_s']}/CPU-s), {got['statuses']}, load {got['load_1min_before']} -> {got['load_1min']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="dev")
    parser.add_argument("--workers", type=int)
    parser.add_argument("--select", action="append", default=[])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--goals", action="store_true", help="issue 22's four runs")
    parser.add_argument("--native-file", default="native/src/tdata.c", help="the file --goals changes")
    args = parser.parse_args()
    for got in goals(args.native_file) if args.goals else [measure(args.size, args.workers, args.select, args.seed)]:
        print(f"{got.get('goal', '')}: {_line(got)}", *(f"  {s}" for s in got["said"]), sep="\n", flush=True)  # type: ignore[attr-defined]
        print(json.dumps(got), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
