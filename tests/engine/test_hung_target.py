"""A target that hangs mid-run (issue 32): after it has hung in HUNG_AFTER checks, the run says so
and judges every remaining check with a short limit on each API call, more of them at once
(engine/hangs.py), so that a build whose graph_compute never returns from its third call on
costs seconds a check, not a whole --timeout each. The hang is planted with the fault-injection
variant (native/src/fault.h: GGSPEC_FAULT=hang@graph_compute#3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ggspec.conformance.engine import isolate
from ggspec.conformance.engine.hangs import HUNG_AFTER, HUNG_CALL_TIMEOUT, HangWatch, is_hang
from ggspec.conformance.engine.results import CheckResult
from ggspec.conformance.engine.stream import read as read_stream

ROOT = Path(__file__).resolve().parents[2]
#: checks that compute graphs (each hangs at its target's third graph_compute) and two that do not
SELECT = "graphcompute.*,ops.add_computes,ops.mul_computes,ops.scale_computes,tdata.get_reads_the_range"


def test_a_target_hanging_from_its_third_compute_on_is_judged_with_a_short_call_limit(
        fault_target: str, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    timeout = 4
    proc = subprocess.run(
        [sys.executable, "-m", "ggspec.conformance", "check", "--target", fault_target, "--select", SELECT,
         "--seed", "1", "--max-examples", "4", "--timeout", str(timeout), "--workers", "1", "--no-cache",
         "--no-c-reproducers", "--json", str(report)],
        cwd=ROOT, env={**os.environ, "GGSPEC_FAULT": "hang@graph_compute#3"}, capture_output=True, text=True,
        timeout=600)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    checks = json.loads(report.read_text())["checks"]
    stream = read_stream(tmp_path / "r.jsonl")
    hung = [r for r in stream if r["event"] == "hung"]
    assert len(hung) == 1 and len(hung[0]["after"]) == HUNG_AFTER, stream
    first = hung[0]["after"]
    line = next(ln for ln in proc.stderr.splitlines() if "remaining check(s) run with" in ln)
    assert f"the target hung in {HUNG_AFTER} checks ({', '.join(first)})" in line
    assert f"run with {HUNG_CALL_TIMEOUT:g} s for each API call instead of --timeout" in line
    # the stream's order: the checks that showed the hang (the last just before it), the event, the rest
    order = [r["name"] if r["event"] == "check" else r["event"] for r in stream if r["event"] in ("check", "hung")]
    at = order.index("hung")
    assert order[at - 1] == first[-1] and set(first) <= set(order[:at])
    by_name = {c["name"]: c for c in checks}
    for name in first:  # judged with the run's --timeout
        assert by_name[name]["status"] == "timeout" and f"hung for {timeout} s" in by_name[name]["detail"]
    later = [by_name[n] for n in order[at + 1:]]
    later_hung = [c for c in later if c["status"] == "timeout"]
    assert len(later_hung) >= 3, later
    for c in later_hung:  # judged with the short limit, and saying so
        assert c["detail"].startswith(f"judged with {HUNG_CALL_TIMEOUT:g} s for each API call: the target had hung "
                                      f"in {HUNG_AFTER} checks ({', '.join(first)})"), c["detail"]
        assert f"hung for {HUNG_CALL_TIMEOUT:g} s, in ggspec_backend_" in c["detail"] and "compute(" in c["detail"]
    assert {c["status"] for c in later} - {"timeout"} <= {"pass"}  # the others still ran, and passed
    assert "pass" in {c["status"] for c in later}


def test_a_run_switches_after_hangs_of_the_target_and_not_a_spent_budget() -> None:
    watch = HangWatch(timeout=10)
    widened: list[bool] = []
    watch.widen = lambda: widened.append(True)

    def res(name: str, status: str, detail: str = "") -> CheckResult:
        return CheckResult(name, ("X-1",), status, 1, detail)  # type: ignore[arg-type]

    seen = [watch.saw(r) for r in [res("a", "timeout", "example 1 hung for 10 s, in f(...)"), res("b", "pass"),
                                   res("c", "timeout", "x"), res("d", "timeout", "the check's budget of 300 s ran out"),
                                   res("e", "fail")]]
    assert seen == [False] * 5 and watch.call_timeout() is None and widened == []  # a spent budget is no hang
    assert watch.saw(res("f", "timeout", "z")) is True and watch.after == ("a", "c", "f") and widened == [True]
    assert watch.call_timeout() == HUNG_CALL_TIMEOUT and watch.saw(res("g", "timeout", "v")) is False
    assert widened == [True]  # once
    assert HangWatch(timeout=0.2).short == 0.2  # never longer than the run's own --timeout
    assert not is_hang(res("i", "fail")) and is_hang(res("j", "timeout", "example 2 did not finish within 100 s"))


def test_a_hang_after_a_call_back_returned_is_the_outer_calls() -> None:
    """A C function that calls back into Python (compare_graph_backend, the scheduler's eval
    callback), which makes API calls of its own: after those return, the outer call is in
    progress again, so a hang there is a hung call (named, and caught by the call limit), not an
    example that 'did not finish' after the inner call returned."""
    def outer() -> None:
        isolate.traced_call("inner", lambda: None)()
        time.sleep(30)

    res = isolate.run_forked(lambda: isolate.traced_call("outer", outer)(), timeout=30, call_timeout=0.5)
    assert res.status == "timeout" and res.call_stuck and res.where() == "in outer(...)"
