"""`ggspec compare`: the clause x target table and its HTML page."""

from __future__ import annotations

from pathlib import Path

from ggspec.conformance.engine.results import ClauseVerdict
from ggspec.conformance.tools.compare import Column, parse_target, table, write_html
from ggspec.reference.clauses import Profile, catalogue


def _column(target: str, profile: Profile, failing: set[str]) -> Column:
    verdicts = {}
    for cid, c in catalogue().items():
        status = "fail" if cid in failing else "pass" if cid.startswith("TDATA") else "uncovered"
        verdicts[cid] = ClauseVerdict(cid, c.title, c.kind, status, 3, "why" if status == "fail" else "", [])
    return Column(target, profile, verdicts)


def test_parse_target_takes_the_default_profile() -> None:
    assert parse_target("rc8") == ("rc8", Profile.RC8)
    assert parse_target("native") == ("native", Profile.FIXED)
    assert parse_target("rc8@fixed") == ("rc8", Profile.FIXED)


def test_table_and_html(tmp_path: Path) -> None:
    cols = [_column("native", Profile.FIXED, set()), _column("rc8", Profile.FIXED, {"TDATA-6"})]
    text = table(cols)
    row = next(line for line in text.splitlines() if line.startswith("TDATA-6 "))
    assert row.split()[1:3] == ["pass", "FAIL"]
    assert not any(line.startswith("CPU-1 ") for line in text.splitlines())  # uncovered everywhere: left out
    page = tmp_path / "compare.html"
    write_html(page, cols, seed=1)
    assert "rc8@fixed" in page.read_text() and "TDATA-6" in page.read_text()


def test_check_and_compare_judge_a_selection_alike(tmp_path: Path) -> None:
    """Under --select TDATA a clause of another area with only some of its checks selected is
    `partial` in both commands, never pass in one and uncovered in the other."""
    import json

    from ggspec.conformance.tools.cli import main

    args = ["--select", "TDATA", "--max-examples", "2", "--seed", "3"]
    assert main(["check", *args, "--quiet", "--no-c-reproducers", "--json", str(tmp_path / "c.json")]) == 0
    check = {c["id"]: c["status"] for c in json.loads((tmp_path / "c.json").read_text())["clauses"]}
    assert main(["compare", "native", *args, "--quiet", "--json", str(tmp_path / "m.json")]) == 0
    rows = json.loads((tmp_path / "m.json").read_text())["clauses"]
    compared = {r["id"]: next(iter(r["statuses"].values())) for r in rows}
    assert check["ALLOC-23"] == "partial"
    assert {c: s for c, s in check.items() if not c.startswith("TDATA")} == \
        {c: s for c, s in compared.items() if not c.startswith("TDATA")}
