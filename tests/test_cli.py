"""`ggspec check`: exit codes, the JSON report's schema, JUnit XML, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ggspec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_check_writes_json_and_junit(tmp_path: Path) -> None:
    out, xml = tmp_path / "r.json", tmp_path / "r.xml"
    proc = ggspec("check", "--target", "native", "--select", "tdata.set_", "--max-examples", "5", "--seed", "7",
                  "--json", str(out), "--junit", str(xml))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "seed 7" in proc.stderr and "TDATA-3" in proc.stdout
    report = json.loads(out.read_text())
    assert report["target"] == "native" and report["profile"] == "fixed"
    assert report["clauses"], "no clause in the report"
    for c in report["clauses"]:
        assert set(c) >= {"id", "status", "examples", "detail"}
        assert c["status"] in ("pass", "fail", "crash", "uncovered")
        assert isinstance(c["examples"], int)
    suite = ET.parse(xml).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests", "0")) == len(report["clauses"])


def test_profile_defaults_to_the_targets_and_can_be_set(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = ggspec("check", "--target", "reference", "--profile", "rc8", "--select", "tdata.get_view", "--max-examples", "3",
                  "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["profile"] == "rc8"


def test_unknown_target_is_one_clear_line() -> None:
    proc = ggspec("check", "--target", "nope")
    assert proc.returncode == 2
    assert "unknown target 'nope'" in proc.stderr
