"""Class 3 of issue 30: a view placed in a buffer other than its root's. A native build whose
data calls take the view's own buffer before its root's (a defect planted in a patched copy of
native/src/tdata.c under tmp_path) passes the check that gives the view its root's buffer
(tdata.views_use_the_roots_buffer) and fails views.data_through_a_view_placed_elsewhere, which
places the view elsewhere as a graph allocator does."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchscripts import load_bench
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.reference.clauses import Profile

load_checks()
ROOT = Path(__file__).resolve().parents[2]


def test_a_view_resolved_to_its_own_buffer_fails_only_the_placed_elsewhere_check(tmp_path: Path) -> None:
    bench = load_bench("webgpu_defects.py")
    defect = bench.Defect("view_own_buffer_first", "tdata.c",
                          "return tensor->view_src != NULL ? tensor->view_src->buffer : tensor->buffer;",
                          "return tensor->buffer != NULL ? tensor->buffer : tensor->view_src->buffer;",
                          "a view's data calls go through its own buffer when it has one")
    bench.patch_sources(tmp_path / "src", defect, ROOT / "native" / "src")
    target = bench.build_sources(tmp_path / "src", tmp_path / "build", "_ggspec_views_defect")
    cfg = RunConfig(target, Profile.FIXED, max_examples=3, seed=20261205, shrink=False, c_reproducers=False)
    assert run_check(CHECKS["tdata.views_use_the_roots_buffer"], cfg).status == "pass"
    result = run_check(CHECKS["views.data_through_a_view_placed_elsewhere"], cfg)
    assert result.status in ("fail", "crash"), result.detail


@pytest.mark.parametrize("target", ["reference", "native"])
def test_the_check_passes_on_the_model_and_native(target: str) -> None:
    cfg = RunConfig(target, Profile.FIXED, max_examples=5, seed=7, c_reproducers=False)
    assert run_check(CHECKS["views.data_through_a_view_placed_elsewhere"], cfg).status == "pass"
