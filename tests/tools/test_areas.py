"""CONTRIBUTING.md's area table (area → chapter → model → native → checks) is generated and current."""

from __future__ import annotations

from pathlib import Path

from ggspec.conformance.tools import areas
from ggspec.reference.clauses import catalogue

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_in_contributing_is_current() -> None:
    assert areas.main(["--check", str(ROOT / "CONTRIBUTING.md")]) == 0, (
        "CONTRIBUTING.md's area table is stale: python -m ggspec.conformance.tools.areas --update CONTRIBUTING.md"
    )


def test_every_area_has_a_row_with_every_column() -> None:
    rows = {row[0]: row for row in areas.area_rows()}
    assert set(rows) == {c.area for c in catalogue().values()}
    for area, chapter, model, native, checks in rows.values():
        assert (ROOT / "spec" / f"{chapter}.md").exists() or (ROOT / "spec" / chapter).exists(), area
        assert model and native and checks, f"{area}: an empty column"


def test_the_table_does_not_count_clauses() -> None:
    """A newcomer's first clause must not make the table stale: no column counts clauses."""
    head = areas.table_markdown().splitlines()[2]
    assert "clauses |" not in head.split("conformance/checks/")[0], head


def test_a_stale_table_is_reported(tmp_path: Path) -> None:
    stale = tmp_path / "C.md"
    stale.write_text(f"x\n{areas.BEGIN}\n| old |\n{areas.END}\n", encoding="utf-8")
    assert areas.main(["--check", str(stale)]) == 1
    assert areas.main(["--update", str(stale)]) == 0
    assert areas.main(["--check", str(stale)]) == 0


def test_a_file_without_markers_is_one_line(tmp_path: Path, capsys: object) -> None:
    plain = tmp_path / "P.md"
    plain.write_text("no table here\n", encoding="utf-8")
    assert areas.main(["--check", str(plain)]) == 2
