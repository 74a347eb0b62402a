"""Every clause of spec/ has an enforcing place in reference/ and a covering check, and
docs/traceability.md is the current matrix."""

from pathlib import Path

from ggspec.conformance.tools.trace import covering_checks, enforcing_places, matrix_markdown
from ggspec.reference.clauses import catalogue

ROOT = Path(__file__).resolve().parents[2]


def test_every_clause_is_enforced_in_the_reference() -> None:
    places = enforcing_places()
    missing = [cid for cid in catalogue() if cid not in places]
    assert not missing, f"clauses with no require/undefined/@implements in reference/: {missing}"


def test_every_clause_is_covered_by_a_check() -> None:
    cover = covering_checks()
    missing = [cid for cid in catalogue() if cid not in cover]
    assert not missing, f"clauses no check covers: {missing}"


def test_assert_clauses_are_enforced_by_require() -> None:
    """An assert-kind clause must be raised somewhere with require(), not only marked."""
    places = enforcing_places()

    for cid, c in catalogue().items():
        if c.kind != "assert":
            continue
        found = False
        for where in places[cid]:
            path = ROOT / "reference" / where.split(":")[0]
            line = int(where.split(":")[1].split()[0])
            text = path.read_text(encoding="utf-8").splitlines()[line - 1]
            found = found or "require(" in text or "required(" in text
        assert found, f"{cid} is an assert clause but no require(..., {cid!r}) or required(..., {cid!r}) raises it"


def test_traceability_matrix_is_current() -> None:
    committed = (ROOT / "docs" / "traceability.md").read_text(encoding="utf-8")
    hint = "docs/traceability.md is stale: run `python -m ggspec.conformance.tools.trace > docs/traceability.md`"
    assert committed == matrix_markdown(), hint


def test_errata_have_corrections() -> None:
    for cid, c in catalogue().items():
        if c.erratum is not None:
            assert len(c.erratum) > 20, f"{cid}: the erratum line must state the corrected behaviour"


def test_every_erratum_is_explained_in_the_docs() -> None:
    doc = (ROOT / "docs" / "profiles-and-errata.md").read_text(encoding="utf-8")
    missing = [cid for cid, c in catalogue().items() if c.erratum is not None and f"## {cid}" not in doc]
    assert not missing, f"docs/profiles-and-errata.md has no section for the errata {missing}"
