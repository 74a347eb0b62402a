"""SIGINT or SIGTERM in the middle of `ggspec check`: the workers stop, the reports of what
finished are written and marked interrupted, the table so far is printed, and the exit code is
130 / 143, without a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ggspec.conformance.engine.stream import read as read_stream

ROOT = Path(__file__).resolve().parents[2]


def _workers_of(marker: str, parent: int) -> list[int]:
    """Processes still alive whose command line holds `marker` (forked workers keep the parent's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == parent:
            continue
        try:
            if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_leaves_its_report(signum: int, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ggspec.conformance", "check", "--select", "tdata.*", "--max-examples", "3", "--seed", "1",
         "--no-c-reproducers", "--json", str(report), "--junit", str(tmp_path / "r.xml"), "--html", str(tmp_path / "r.html")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a shell's background job (`.ci/run &`, nohup) starts with SIGINT ignored, and Python keeps an
        # ignored SIGINT: give the run the default disposition, as a terminal user's run has
        preexec_fn=_default_sigint,
    )
    stream = tmp_path / "report.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:  # wait for two finished checks
        if stream.exists() and sum(r["event"] == "check" for r in read_stream(stream)) >= 2:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err[-2000:]
    assert "Traceback" not in err, err[-3000:]
    assert f"INTERRUPTED by {signal.Signals(signum).name}" in out
    assert "clause" in out and "TDATA-" in out  # the table so far
    name = signal.Signals(signum).name
    assert out.strip().splitlines()[-1].startswith(f"verdict: INTERRUPTED by {name}")  # the output ends with it
    data = json.loads(report.read_text())
    assert data["interrupted"] == name
    assert data["summary"]["verdict"] == "interrupted"  # never "pass"
    statuses = {c["status"] for c in data["clauses"]}
    assert "not run" in statuses and "uncovered" not in statuses  # not reached is not "no check covers it"
    junit = ET.parse(tmp_path / "r.xml").getroot()
    assert junit.get("errors") == "1" and junit.find("testcase/error").get("type") == "interrupted"  # type: ignore[union-attr]
    assert ">INTERRUPTED</span>" in (tmp_path / "r.html").read_text()  # the HTML badge
    done = [c["name"] for c in data["checks"]]
    assert len(done) >= 2
    records = read_stream(stream)
    assert records[-1] == {"event": "end", "checks_done": len(done), "interrupted": signal.Signals(signum).name}
    assert sorted(r["name"] for r in records if r["event"] == "check") == sorted(done)  # in the order they finished
    time.sleep(0.5)
    assert _workers_of(str(report), os.getpid()) == []  # no worker outlives the run
