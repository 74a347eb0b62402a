"""The pytest plugin (conformance/tools/pytest_plugin.py, entry point pytest11): inert without --ggspec;
with it, one item per check, -k / -x / --junitxml as pytest users expect, each failure with its
difference and reproducer, and `pytest -n 2` (pytest-xdist) gives the verdicts of `ggspec check`
on the same seed."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
ERRATUM_CHECK = "tdata.set_offset_wraps"  # TDATA-3 fails on native under the rc8 profile
SELECTION = ["tdata.set_writes_the_range", "tdata.get_reads_the_range", "tdata.views_use_the_roots_buffer", ERRATUM_CHECK]
SEED = "11"


def pytest_run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def suite(*args: str) -> list[str]:
    return ["--ggspec", "--ggspec-profile", "rc8", "--ggspec-seed", SEED, "--ggspec-max-examples", "3",
            *(a for name in SELECTION for a in ("--ggspec-select", name)), *args]


def test_registered_as_a_pytest11_entry_point() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert declared == {"ggspec": "ggspec.conformance.tools.pytest_plugin"}
    installed = {ep.name: ep.value for ep in metadata.entry_points(group="pytest11")}
    assert installed.get("ggspec") == "ggspec.conformance.tools.pytest_plugin", "reinstall: pip install -e ."


def test_inert_without_the_option(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    proc = pytest_run(tmp_path, "-q")
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout
    assert "ggspec" not in proc.stdout
    assert "--ggspec-target" in pytest_run(tmp_path, "--help").stdout


def test_one_item_per_check_with_k_x_and_junit(tmp_path: Path) -> None:
    listed = pytest_run(tmp_path, *suite("--collect-only", "-q"))
    assert listed.returncode == 0, listed.stdout[-2000:]
    assert [line for line in listed.stdout.splitlines() if line.startswith("ggspec::")] == [
        f"ggspec::{n}" for n in sorted(SELECTION)]
    by_clause = pytest_run(tmp_path, *suite("--collect-only", "-q", "-k", "TDATA-3"))
    assert [line for line in by_clause.stdout.splitlines() if line.startswith("ggspec::")] == [f"ggspec::{ERRATUM_CHECK}"]

    xml = tmp_path / "j.xml"
    proc = pytest_run(tmp_path, *suite("-k", "set_offset_wraps or set_writes", f"--junitxml={xml}"))
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "1 failed, 1 passed, 2 deselected" in proc.stdout
    assert "TDATA-3 " in proc.stdout and f"replay({ERRATUM_CHECK!r}" in proc.stdout
    cases = {c.get("name"): c for c in ET.parse(xml).getroot().iter("testcase")}
    failure = cases[ERRATUM_CHECK].find("failure")
    assert failure is not None and f"replay({ERRATUM_CHECK!r}" in (failure.text or "")
    assert cases["tdata.set_writes_the_range"].find("failure") is None

    first = pytest_run(tmp_path, *suite("-x", "-k", "set_offset_wraps or views_use"))
    assert "1 failed" in first.stdout and "passed" not in first.stdout.splitlines()[-1], first.stdout[-2000:]


def test_xdist_gives_the_verdicts_of_ggspec_check(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    cli = tmp_path / "cli.json"
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--profile", "rc8", "--seed", SEED,
                           "--max-examples", "3", "--quiet", *(a for n in SELECTION for a in ("--select", n)),
                           "--json", str(cli)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    plugin = tmp_path / "plugin.json"
    run = pytest_run(tmp_path, *suite("-n", "2", f"--ggspec-json={plugin}"))
    assert run.returncode == 1 and "1 failed, 3 passed" in run.stdout, run.stdout[-3000:]
    a, b = json.loads(cli.read_text()), json.loads(plugin.read_text())
    assert [(c["id"], c["status"], c["examples"]) for c in a["clauses"]] == [(c["id"], c["status"], c["examples"])
                                                                           for c in b["clauses"]]
    assert {c["name"]: c["status"] for c in a["checks"]} == {c["name"]: c["status"] for c in b["checks"]}


def test_xdist_needs_a_seed(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    proc = pytest_run(tmp_path, "--ggspec", "-n", "2", "--ggspec-select", ERRATUM_CHECK)
    assert proc.returncode == 4 and "needs --ggspec-seed" in proc.stderr, proc.stderr[-2000:]
