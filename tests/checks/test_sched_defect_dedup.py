"""`GGSPEC_DEFECT_SCHED_DEDUP` (planted by
native/testing/defects.py in a copy of native/src/sched.c): a split lists an input once per use; SCHED-17
must fail, no scheduler clause outside
tests/checks/sched_defects.py's DOWNSTREAM may, and the failing example shrinks to a small graph."""

from __future__ import annotations

from pathlib import Path

from sched_defects import assert_caught_where_it_is_and_shrunk, variant_target

DEFINE = "GGSPEC_DEFECT_SCHED_DEDUP"


def test_defect_is_caught_where_it_is_and_shrunk(tmp_path: Path) -> None:
    target = variant_target(DEFINE, tmp_path)
    assert_caught_where_it_is_and_shrunk(DEFINE, target)
