"""`ggspec check --workers N` splits the checks over N forked workers at a time, with the same
verdicts as one at a time: the same statuses, example counts and details, check by check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _run(workers: int, tmp_path: Path) -> dict[str, Any]:
    report = tmp_path / f"w{workers}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ggspec.conformance", "check", "--select", "tdata.*", "--select", "buf.*", "--quiet",
         "--seed", "7", "--max-examples", "3", "--no-c-reproducers", "--workers", str(workers), "--json", str(report)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    data: dict[str, Any] = json.loads(report.read_text())
    return data


def test_two_workers_give_the_verdicts_of_one(tmp_path: Path) -> None:
    one, two = _run(1, tmp_path), _run(2, tmp_path)

    def checks(data: dict[str, Any]) -> list[tuple[str, str, int, str]]:
        return [(c["name"], c["status"], c["examples"], c["detail"]) for c in data["checks"]]

    assert len(one["checks"]) > 10
    assert checks(two) == checks(one)  # in the selection's order, whatever order they finished in
    assert [(c["id"], c["status"]) for c in two["clauses"]] == [(c["id"], c["status"]) for c in one["clauses"]]
