"""The checks written for the survivors of the semantic mutation run (issue 30, bench/RESULTS.md
"Semantic mutation score") fail on the mutant they were written for and pass on the unmutated
build of the same sources. Each mutant is built by bench/mutation.py `one` (only the mutated
source recompiled) under tmp_path; native's always, rc.8's where rc.8 is available."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchscripts import load_bench

#: (target, site, kind, the check that kills the mutant)
GAPS = [
    ("native", "alloc.c:551", "reset", "regrowth.graph_allocator_regrowth_releases_the_old_table"),
    ("rc8", "ggml.c:16052", "reset", "reused_memory.new_graph_in_reused_memory_starts_empty"),
    ("rc8", "ggml-backend.c:698:28", "index", "cpu_pairs.supports_mul_mat_every_type_pair"),
    ("rc8", "ggml-backend.c:1387", "reset", "recompute.graphs_rebuilt_in_the_same_memory"),
]


def _check(target: str, env: dict[str, str], check: str, tmp_path: Path) -> int:
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--select", check,
                           "--max-examples", "2", "--seed", "1", "--no-cache", "--no-c-reproducers", "--quiet"],
                          env={**os.environ, **env, "GGSPEC_REPRO_DIR": str(tmp_path / "repro")},
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.returncode


@pytest.mark.parametrize("target, site, kind, check", GAPS, ids=[f"{t}:{s}" for t, s, _, _ in GAPS])
def test_the_check_kills_its_mutant(target: str, site: str, kind: str, check: str, tmp_path: Path,
                                    request: pytest.FixtureRequest) -> None:
    if target == "rc8":
        request.getfixturevalue("rc8_or_skip").sources()  # fetched and built, or the test is skipped
    tool = load_bench("mutation.py")
    work = tmp_path / "one"
    assert tool.main(["one", target, site, "--operators", "semantic", "--kind", kind, "--dir", str(work)]) == 0

    def at(folder: Path) -> dict[str, str]:  # how `one` says to run the suite against a folder
        if target == "native":
            return {"GGSPEC_NATIVE_MODULE": f"{folder}:{tool.NATIVE_MODULE}"}
        return {"LD_LIBRARY_PATH": f"{folder}:{os.environ.get('LD_LIBRARY_PATH', '')}".rstrip(":")}

    assert _check(target, at(work / "mutant"), check, tmp_path) == 1
    assert _check(target, at(work / "unmutated"), check, tmp_path) == 0
