"""One Status type (engine/results.py): every status a check or a clause can have is defined
there once, every table of statuses covers all of them, and no other module lists its own."""

from __future__ import annotations

import ast
from pathlib import Path

from ggspec.conformance.engine import results
from ggspec.conformance.reports import html, merge
from ggspec.conformance.tools import compare, versions

ROOT = Path(__file__).resolve().parents[2] / "conformance"


def test_the_status_type_has_timeout_interrupted_and_room_for_combined_reports() -> None:
    assert {"timeout", "interrupted", "not run", "partial"} <= set(results.ALL_STATUSES)
    assert set(results.FAILING) == {"fail", "crash", "timeout"}
    assert set(results.STATUSES) <= set(results.ALL_STATUSES) and set(results.FAILING) <= set(results.ALL_STATUSES)


def test_every_table_of_statuses_covers_every_status() -> None:
    tables = {"reports.html.COLOUR": set(html.COLOUR), "reports.html.ORDER": set(html.ORDER),
              "reports.merge.PRECEDENCE": set(merge.PRECEDENCE), "tools.compare._MARK": set(compare._MARK),
              "tools.versions.MARK": set(versions.MARK)}
    every = set(results.ALL_STATUSES)
    for name, keys in tables.items():
        assert keys == every, f"{name}: missing {every - keys}, extra {keys - every}"


def test_no_other_module_defines_a_status_list() -> None:
    """FAILING and STATUSES are assigned in engine/results.py only (elsewhere they are imported)."""
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        if path == ROOT / "engine" / "results.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id in ("FAILING", "STATUSES", "ALL_STATUSES", "Status"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {t.id}")
    assert not bad, bad


def test_a_timeout_beats_fail_and_loses_to_crash_in_a_clause_verdict() -> None:
    def verdict(*statuses: results.Status) -> str:
        rs = [results.CheckResult(f"c{i}", ("TDATA-1",), s, 1) for i, s in enumerate(statuses)]
        (v,) = [v for v in results.verdicts(rs) if v.id == "TDATA-1"]
        return v.status

    assert verdict("pass", "timeout", "fail") == "timeout"
    assert verdict("timeout", "crash") == "crash"
    assert verdict("pass", "unsupported") == "unsupported"
    assert verdict("pass", "pass") == "pass"
