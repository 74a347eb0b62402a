"""Graph vectors (conformance/vectors): the fixture vectors are the current fixtures, a vector
survives JSON, `ggspec replay` runs one against a target, and a failing scheduler check saves
its shrunk example as a vector that replays the failure.

The shrunk vector shipped in conformance/vectors/ was saved by the runner from native/ built with
the planted defect GGSPEC_DEFECT_SCHED_DEDUP (a split lists an input once per use, SCHED-17)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.conformance.inputs.fixtures import FIXTURES
from ggspec.conformance.tools.vectors import FORMAT, Vector
from ggspec.native.build import build_variant
from ggspec.reference.clauses import Profile
from ggspec.reference.types import Op
from ggspec.reference.vdev import VDevParams

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance" / "vectors"
SHRUNK = VECTORS / "shrunk-sched-dedup.json"
DEFECT = "GGSPEC_DEFECT_SCHED_DEDUP"


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", "replay", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def dedup_defect(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("dedup-defect")
    # named as tests/checks/test_sched_defects.py names it: the run's build cache compiles it once
    build_variant("ggspec_native_ggspec_defect_sched_dedup", str(out), defines=[DEFECT])
    return f"native:{out}:ggspec_native_ggspec_defect_sched_dedup"


@pytest.mark.parametrize("fixture", ["encoder", "decoder"])
def test_fixture_vectors_are_the_fixtures(fixture: str) -> None:
    v = Vector.load(VECTORS / f"{fixture}.json")
    assert v.graph == FIXTURES[fixture](2) and [d.name for d in v.devices] == ["GPU0"] and v.check is None


def test_round_trip() -> None:
    v = Vector.load(SHRUNK)
    assert Vector.from_json(v.to_json()) == v
    odd = Vector(v.graph, (VDevParams(name="DEV", alignment=64, lazy=True, ops=frozenset({Op.ADD, Op.MUL_MAT})),),
                 (("add1", 0),), want=frozenset({"add1"}), args={"n": 3, "xs": [1, 2]})
    assert Vector.from_json(odd.to_json()) == odd
    assert json.loads(odd.to_json())["format"] == FORMAT


def test_bad_vector_is_one_line() -> None:
    proc = replay(str(ROOT / "pyproject.toml"))
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_replay_fixture_on_native() -> None:
    proc = replay(str(VECTORS / "encoder.json"), "--target", "native")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 of 4 check(s) agree on native (fixed)" in proc.stdout


def test_shrunk_vector_agrees_on_native_and_fails_on_the_defect(dedup_defect: str) -> None:
    ok = replay(str(SHRUNK), "--target", "native")
    assert ok.returncode == 0 and "1 of 1 check(s) agree" in ok.stdout, ok.stdout + ok.stderr
    bad = replay(str(SHRUNK), "--target", dedup_defect)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "differing: sched.pass4_inputs_once" in bad.stdout and "inputs" in bad.stdout


def test_failing_check_saves_its_shrunk_example(dedup_defect: str, tmp_path: Path) -> None:
    load_checks()
    cfg = RunConfig(dedup_defect, Profile.FIXED, max_examples=25, seed=20261130, c_reproducers=False,
                    repro_dir=str(tmp_path))
    result = run_check(CHECKS["sched.pass4_inputs_once"], cfg)
    assert result.status in ("fail", "crash"), result
    m = re.search(r"^vector: (\S+)$", result.detail, re.M)
    assert m is not None, result.detail
    path = Path(m.group(1))
    assert path.parent == tmp_path / "vectors" and path.is_file()
    v = Vector.load(path)
    assert v.check == "sched.pass4_inputs_once" and v.clauses == ("SCHED-17",) and v.found["seed"] == 20261130
    assert len(v.graph.nodes) <= 6  # shrunk
    assert replay(str(path), "--target", dedup_defect).returncode == 1
    assert replay(str(path), "--target", "native").returncode == 0
