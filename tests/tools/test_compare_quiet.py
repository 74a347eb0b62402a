"""`ggspec compare --quiet` keeps what the targets print (rc.8 prints each allocation it cannot
make, `wsp_ggml_aligned_malloc: insufficient memory ...`, from the forked workers) out of the
terminal: it goes to a log under $GGSPEC_CACHE/runs/, and one line says where."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.tools import compare


def test_quiet_keeps_the_targets_output_in_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path))

    def columns_printing_in_a_worker(columns: list[Any], progress: bool = False) -> list[Any]:
        pid = os.fork()
        if pid == 0:  # a worker, as the runner forks them: its stdout is the process's
            os.write(1, b"wsp_ggml_aligned_malloc: insufficient memory (attempted to allocate 268435456.00 MB)\n")
            os._exit(0)
        os.waitpid(pid, 0)
        return []

    monkeypatch.setattr(compare, "run_columns", columns_printing_in_a_worker)
    assert compare._quietly([]) == []
    out, err = capfd.readouterr()
    assert "insufficient memory" not in out + err.split("kept in")[0]
    (log,) = (tmp_path / "runs").glob("compare-*.log")
    assert "insufficient memory" in log.read_text() and f"printed 1 line(s), kept in {log}" in err
