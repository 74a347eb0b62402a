"""A known-failures entry is checked for what it names before its reason is looked up
(reports/known.py): a misspelt clause with a one-word reason is reported as the unknown clause,
not as a missing `[reasons]` key."""

from __future__ import annotations

from pathlib import Path

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.errors import KnownFileError
from ggspec.conformance.reports.known import load


def write(tmp_path: Path, clause: str, reason: str) -> Path:
    path = tmp_path / "k.toml"
    path.write_text(f'[[known]]\nclause = "{clause}"\nreason = "{reason}"\n', encoding="utf-8")
    return path


def test_a_misspelt_clause_is_named_before_a_one_word_reason(tmp_path: Path) -> None:
    with pytest.raises(KnownFileError, match=r"entry 1: no clause TDAT-3 .*did you mean TDATA-3"):
        load(write(tmp_path, "TDAT-3", "typo"), CHECKS)


def test_a_one_word_reason_of_a_real_clause_says_how_reasons_are_read(tmp_path: Path) -> None:
    with pytest.raises(KnownFileError, match=r"no reason named 'typo' .*a reason of one word is read as the key"):
        load(write(tmp_path, "TDATA-3", "typo"), CHECKS)


def test_a_sentence_is_a_reason(tmp_path: Path) -> None:
    (entry,) = load(write(tmp_path, "tdata-3", "a typo in our bounds check"), CHECKS)
    assert (entry.kind, entry.name, entry.reason) == ("clause", "TDATA-3", "a typo in our bounds check")
