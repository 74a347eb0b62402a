"""A check's progress line says `xfail` when the known-failures file expects its failure (every
clause it fails becomes xfail), not FAIL or CRASH in a run that ends "0 fail"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any


def test_an_expected_failure_is_xfail_in_its_progress_line(rc8_or_skip: Any, tmp_path: Path) -> None:
    rc8_or_skip.sources()
    known = tmp_path / "k.toml"
    known.write_text('[[known]]\nclause = "TDATA-6"\nreason = "rc.8 asserts t->buffer (erratum TDATA-6)"\n'
                     '[[known]]\nclause = "TDATA-8"\nreason = "reading a view goes through erratum TDATA-6"\n')
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", "rc8", "--profile", "fixed",
                           "--select", "tdata.get_view_without_own_buffer", "--select", "tdata.set_unallocated",
                           "--max-examples", "3", "--seed", "1", "--known", str(known), "--no-cache"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("[")]
    assert any(" xfail tdata.get_view_without_own_buffer " in ln for ln in progress), progress
    assert not any(" FAIL " in ln or " CRASH " in ln for ln in progress), progress
    assert "0 fail, 0 crash, 1 xfail" in proc.stdout
