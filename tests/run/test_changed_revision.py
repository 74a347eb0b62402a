"""`--changed REV` with a revision the repository lacks says so, naming it (git's `rev-parse
--verify --quiet` prints nothing; the line was "git failed")."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from ggspec.conformance.run import changed


def test_a_missing_revision_is_named(tmp_path: Path) -> None:
    for args in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "1"]):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)
    with pytest.raises(changed.ChangedError) as exc:
        changed.changed_files("origin/mian", tmp_path)
    assert "no commit, branch or tag 'origin/mian'" in str(exc.value) and "git failed" not in str(exc.value)
