"""One JSON encoding of a check result (engine/results.py `CheckResult.to_json` / `from_json`):
every writer uses it (the JSON report, the stream, `ggspec compare`, the verdict cache, the
pytest plugin), and the pytest plugin's report is `ggspec check --json`'s for the same plan and
seed — undefined-behaviour observations included (the plugin used to drop them, so that such
clauses read "not reached" there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ggspec.conformance.engine.results import CheckResult, RunConfig, verdicts
from ggspec.conformance.engine.stream import Stream
from ggspec.conformance.engine.stream import read as read_stream
from ggspec.conformance.reports import report
from ggspec.conformance.run import cache
from ggspec.conformance.tools import compare
from ggspec.reference.clauses import Profile

ROOT = Path(__file__).resolve().parents[2]
#: on native under profile rc8, seed 11, 5 examples: both checks pass and reach an
#: undefined-behaviour point (ALLOC-7, COPY-6: "not observed"), found by running them
UB_CHECKS = ["alloc.alloc_after_the_last_byte", "copy.device_to_device_copy"]
SEED = "11"

RESULT = CheckResult("a.check", ("TDATA-3", "TDATA-4"), "fail", 7, "a difference\nreproducer:\nx\nEOF", 1.23456,
                     {"TDATA-3": ("fail", "wraps")}, {"ALLOC-7": ("confirmed", "the target crashed")}, True)


def test_a_check_result_survives_its_json() -> None:
    data = RESULT.to_json()
    assert data["name"] == "a.check" and data["undefined_behaviour"] == {"ALLOC-7": {"status": "confirmed",
                                                                                      "detail": "the target crashed"}}
    back = CheckResult.from_json(json.loads(json.dumps(data)))
    assert back == CheckResult(**{**RESULT.__dict__, "seconds": 1.235})


def test_every_writer_writes_the_one_encoding(tmp_path: Path, monkeypatch: Any) -> None:
    cfg = RunConfig("native", Profile.RC8, seed=1)
    found = verdicts([RESULT])
    assert report.to_json(found, [RESULT], cfg)["checks"] == [RESULT.to_json()]
    assert report.from_json(report.to_json(found, [RESULT], cfg))[1] == [CheckResult.from_json(RESULT.to_json())]
    stream = Stream(tmp_path / "s.jsonl", cfg, [RESULT.check])
    stream.result(RESULT)
    stream.end([RESULT], "")
    assert read_stream(tmp_path / "s.jsonl")[1] == {"event": "check", **RESULT.to_json()}
    column = compare.Column("native", Profile.RC8, {v.id: v for v in found}, [RESULT])
    assert compare.to_json([column], cfg, descriptions={column.label: {}})["columns"][0]["checks"] == [RESULT.to_json()]
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path / "cache"))
    passing = CheckResult(**{**RESULT.__dict__, "status": "pass", "seconds": 1.0})
    cache.store("k", passing, "vdev")
    assert json.loads((cache.verdict_dir() / "k.vdev.json").read_text()) == passing.to_json()
    assert cache.load("k", "vdev") == passing


def _normal(data: dict[str, Any]) -> dict[str, Any]:
    """A report without what differs between two runs of one plan: when and how long, and the
    run's own folder in the details."""
    out = {k: v for k, v in data.items() if k not in ("started", "seconds", "versions")}
    out["checks"] = [{k: v for k, v in c.items() if k != "seconds"} for c in data["checks"]]
    return out


def test_the_plugin_writes_the_json_report_of_ggspec_check(tmp_path: Path) -> None:
    env = {**os.environ, "GGSPEC_REPRO_DIR": str(tmp_path / "files")}
    cli = tmp_path / "cli.json"
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", "native", "--profile", "rc8",
                           "--seed", SEED, "--max-examples", "5", "--quiet", "--workers", "1",
                           *(a for n in UB_CHECKS for a in ("--select", n)), "--json", str(cli)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    plugin = tmp_path / "plugin.json"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--ggspec", "--ggspec-target",
                          "native", "--ggspec-profile", "rc8", "--ggspec-seed", SEED, "--ggspec-max-examples", "5",
                          *(a for n in UB_CHECKS for a in ("--ggspec-select", n)), f"--ggspec-json={plugin}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-3000:]
    a, b = json.loads(cli.read_text()), json.loads(plugin.read_text())
    seen = {cid: v["status"] for cid, v in a["undefined_behaviour"].items() if v["status"] != "not reached"}
    assert seen == {"ALLOC-7": "not observed", "COPY-6": "not observed"}, a["undefined_behaviour"]
    assert _normal(a) == _normal(b)
