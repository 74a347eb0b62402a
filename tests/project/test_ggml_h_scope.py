"""Issue 30, class 5: every public ggml.h function that rc.8's ggml-backend.c and ggml-alloc.c
call is in the table of spec/core.md ("The ggml.h functions the backend code calls"), with the
clauses that specify it or a reason it is out of scope, and every clause the table names exists.

The sources are read at test time from the cache (never committed); without them the test skips
with one line, except under CI=true, where it fails (tests/conftest.py, rc8_or_skip).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ggspec.reference.clauses import catalogue

SPEC = Path(__file__).resolve().parents[2] / "spec" / "core.md"
HEAD = "## The ggml.h functions the backend code calls"


def _table() -> dict[str, str]:
    """function (ggml_ prefix) -> what the table says of it."""
    text = SPEC.read_text(encoding="utf-8")
    assert HEAD in text, f"spec/core.md has no section {HEAD!r}"
    section = text.split(HEAD, 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`(ggml_\w+)`", cells[0]):
            rows[name] = cells[1]
    return rows


def _called_from_ggml_h(cpp: Path) -> set[str]:
    """The ggml.h functions (declared there with GGML_API) that ggml-backend.c and ggml-alloc.c call."""
    header = (cpp / "ggml.h").read_text(encoding="utf-8", errors="replace")
    declared = set(re.findall(r"\b(wsp_ggml_\w+)\s*\(", header))
    called: set[str] = set()
    for name in ("ggml-backend.c", "ggml-alloc.c"):
        called |= set(re.findall(r"\b(wsp_ggml_\w+)\s*\(", (cpp / name).read_text(encoding="utf-8", errors="replace")))
    return {n.removeprefix("wsp_") for n in called & declared}


@pytest.fixture(scope="module")
def cpp(rc8_or_skip: Any) -> Path:
    return Path(rc8_or_skip.sources()[0])


def test_every_called_ggml_h_function_is_in_the_table(cpp: Path) -> None:
    called = _called_from_ggml_h(cpp)
    assert "ggml_graph_view" in called and "ggml_nbytes" in called, sorted(called)  # the scan finds calls
    missing = sorted(called - set(_table()))
    assert not missing, f"ggml.h functions rc.8's backend code calls that spec/core.md's table lacks: {missing}"


def test_each_row_names_clauses_that_exist_or_a_reason() -> None:
    known = set(catalogue())
    for name, says in _table().items():
        ids = re.findall(r"\b([A-Z]+-\d+)\b", says)
        if says.startswith("out of scope:"):
            assert len(says) > 40 and not ids, (name, says)
            continue
        assert ids, f"{name}: neither clauses nor 'out of scope: <why>'"
        ranges = re.findall(r"\b([A-Z]+)-(\d+) to \1-(\d+)\b", says)
        for area, lo, hi in ranges:
            ids += [f"{area}-{i}" for i in range(int(lo), int(hi) + 1)]
        unknown = [i for i in ids if i not in known]
        assert not unknown, f"{name}: unknown clauses {unknown}"
