"""`ggspec check --changed [REV]`: the checks the changed files can reach (run/changed.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ggspec.conformance.engine.runner import load_checks
from ggspec.conformance.run import changed
from ggspec.conformance.run.changed import enforcing_places

ROOT = Path(__file__).resolve().parents[2]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True, timeout=60)


def test_a_native_source_selects_the_checks_of_the_clauses_its_area_enforces() -> None:
    checks = load_checks()
    enforced = {cid for cid, where in enforcing_places().items() if any(p.startswith("alloc.py:") for p in where)}
    expected = {n for n, c in checks.items() if enforced & set(c.clauses)}
    (r,) = changed.reasons(["native/src/alloc.c"], checks)
    assert r.checks == expected and "alloc.tallocr_over_caller_memory" in expected
    assert not any(n.startswith("sched.") and not enforced & set(checks[n].clauses) for n in r.checks)
    assert "reference/alloc.py" in r.why and "ALLOC" in r.why


def test_check_strategy_reference_docs_and_unknown_files() -> None:
    checks = load_checks()
    by = {r.path: r for r in changed.reasons(
        ["conformance/checks/copy.py", "conformance/inputs/sched_scope.py", "reference/sched.py", "spec/sched.md",
         "docs/guide.md", "bench/run_all.py", "conformance/engine/runner.py", "native/src/internal.h"], checks)}
    copy_checks = {n for n, c in checks.items() if c.module.endswith(".checks.copy")}
    assert copy_checks and copy_checks <= (by["conformance/checks/copy.py"].checks or set())
    machine = {n for n, c in checks.items() if c.module.endswith(".checks.sched_machine")}
    assert machine and machine <= (by["conformance/inputs/sched_scope.py"].checks or set())
    assert not any(n.startswith("registry.") for n in by["conformance/inputs/sched_scope.py"].checks or ())
    sched = {n for n, c in checks.items() if any(cid.startswith("SCHED-") for cid in c.clauses)}
    assert by["spec/sched.md"].checks == sched
    enforced = {cid for cid, where in enforcing_places().items() if any(p.startswith("sched.py:") for p in where)}
    assert by["reference/sched.py"].checks == {n for n, c in checks.items() if enforced & set(c.clauses)}
    assert by["docs/guide.md"].checks == frozenset() and by["bench/run_all.py"].checks == frozenset()
    assert by["conformance/engine/runner.py"].checks is None and by["native/src/internal.h"].checks is None


def test_changed_files_lists_diffs_and_untracked_files(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.c").write_text("1\n")
    (tmp_path / "b.c").write_text("1\n")
    _git(tmp_path, "add", "a.c", "b.c")
    _git(tmp_path, "commit", "-q", "-m", "one")
    assert changed.changed_files("HEAD", tmp_path) == []
    (tmp_path / "a.c").write_text("2\n")
    (tmp_path / "new.c").write_text("1\n")
    assert changed.changed_files("HEAD", tmp_path) == ["a.c", "new.c"]
    with pytest.raises(changed.ChangedError, match="no-such-rev"):
        changed.changed_files("no-such-rev", tmp_path)


def test_not_a_git_repository_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with pytest.raises(changed.ChangedError, match="not in a git repository"):
        changed.changed_files("HEAD", tmp_path)
    code = (f"import sys; from ggspec.conformance.run import changed; from ggspec.conformance.tools import cli; "
            "from pathlib import Path; "
            f"changed.ROOT = Path({str(tmp_path)!r}); sys.exit(cli.main(['check', '--changed', '--quiet']))")
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "not in a git repository" in proc.stderr


def test_the_cli_prints_what_it_selected_and_why(tmp_path: Path) -> None:
    code = ("import sys; from ggspec.conformance.run import changed; from ggspec.conformance.tools import cli; "
            "changed.changed_files = lambda rev, root=None: ['docs/guide.md']; "
            "sys.exit(cli.main(['check', '--changed', 'HEAD~1', '--quiet']))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "--changed HEAD~1: 1 changed file(s) -> 0 of" in proc.stderr
    assert "docs/guide.md: no check reads it -> 0 check(s)" in proc.stderr and "nothing to run" in proc.stderr
