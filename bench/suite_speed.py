"""How fast the suite itself runs: `ggspec check` per run size, wall and CPU seconds (the run and
all its workers), examples, examples per CPU-second; graph examples per CPU-second.

    python bench/suite_speed.py [--size dev] [--workers N] [--select PATTERN ...] [--seed 1]

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


def measure(size: str, workers: int | None, select: list[str], seed: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "run.json"
        cmd = [sys.executable, "-m", "ggspec.conformance", "check", "--quiet", "--seed", str(seed), "--size", size,
               "--json", str(report), *(["--workers", str(workers)] if workers else []),
               *(a for s in select for a in ("--select", s))]
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        data = json.loads(report.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    examples = sum(int(c["examples"]) for c in data["checks"])
    statuses: dict[str, int] = {}
    for c in data["checks"]:
        statuses[c["status"]] = statuses.get(c["status"], 0) + 1
    return {"command": " ".join(cmd[1:]), "exit": proc.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "checks": len(data["checks"]), "examples": examples, "examples_per_cpu_s": round(examples / cpu, 1),
            "statuses": statuses, "load_1min_before": round(load_before, 1), "load_1min": round(os.getloadavg()[0], 1),
            "cores": os.cpu_count(), "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="dev")
    parser.add_argument("--workers", type=int)
    parser.add_argument("--select", action="append", default=[])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    got = measure(args.size, args.workers, args.select, args.seed)
    print(f"{got['command']}: {got['wall_s']} s wall, {got['cpu_s']} CPU-s, {got['examples']} examples "
          f"({got['examples_per_cpu_s']}/CPU-s), {got['statuses']}, load {got['load_1min_before']} -> {got['load_1min']}")
    print(json.dumps(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
