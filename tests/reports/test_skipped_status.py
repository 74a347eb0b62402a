"""A clause whose check runs only at a larger --size (SCHED-40's, at thorough) is `skipped` at a
smaller one (issue 32), where it was `unsupported`, a status that means "the target lacks a
function or hook": counted apart in the terminal table, the JSON summary, JUnit (skipped), the
HTML page, `ggspec merge` and `--baseline`, and no failure, with --strict neither (docs/user-guide.md,
Verdicts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SIZED = "capacity.sched_context_holds_the_allocation_graph"


def _ggspec(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def _check(tmp: Path, name: str, select: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = _ggspec("check", "--target", "reference", "--select", select, "--size", "dev", "--seed", "1", "--quiet",
                   "--json", f"{name}.json", "--junit", f"{name}.xml", "--html", f"{name}.html", *extra, cwd=tmp)
    return proc, json.loads((tmp / f"{name}.json").read_text())


def test_a_check_of_a_larger_size_is_skipped_and_counted_apart_in_every_report(tmp_path: Path) -> None:
    proc, data = _check(tmp_path, "r", f"{SIZED},tdata.get_reads_the_range", "--strict")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # not a failure, --strict included
    statuses = {c["id"]: c["status"] for c in data["clauses"]}
    assert statuses["SCHED-40"] == "skipped"
    assert data["summary"]["skipped"] == 1 and data["summary"]["unsupported"] == 0
    sched40 = next(c for c in data["clauses"] if c["id"] == "SCHED-40")
    assert "runs only at --size thorough" in sched40["detail"]
    table = proc.stdout
    assert "SCHED-40  limit     SKIPPED" in table and "1 skipped" in table.splitlines()[-2]
    junit = (tmp_path / "r.xml").read_text()
    assert '<skipped message="skipped: capacity.sched_context_holds_the_allocation_graph: runs only at --size thorough' \
        in junit
    assert "skipped" in (tmp_path / "r.html").read_text()

    # merge: one shard skipped SCHED-40's check, the other ran another check; still skipped, counted apart
    _, other = _check(tmp_path, "s", "tdata.set_writes_the_range")
    merged = _ggspec("merge", "r.json", "s.json", "--json", "m.json", cwd=tmp_path)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    assert {c["id"]: c["status"] for c in m["clauses"]}["SCHED-40"] == "skipped" and m["summary"]["skipped"] == 1

    # baseline: a report of before, when SCHED-40 read unsupported: a change, not a regression
    old = json.loads((tmp_path / "r.json").read_text())
    for c in old["clauses"]:
        if c["id"] == "SCHED-40":
            c["status"] = "unsupported"
    (tmp_path / "old.json").write_text(json.dumps(old))
    again, _ = _check(tmp_path, "b", f"{SIZED},tdata.get_reads_the_range", "--baseline", "old.json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "SCHED-40" in again.stdout and "skipped" in again.stdout and "no regression" in again.stdout, again.stdout


def test_the_one_sized_check_is_sched_40s() -> None:
    """Only SCHED-40's check is sized (tests/checks/test_sched_context.py runs it at thorough)."""
    from ggspec.conformance.engine.registry import CHECKS
    from ggspec.conformance.engine.runner import load_checks

    load_checks()
    assert CHECKS[SIZED].sizes == ("thorough",)
    assert [n for n, c in CHECKS.items() if c.sizes is not None] == [SIZED]
