"""The run survives anything a target does: faults injected into a native variant (built with
-DGGSPEC_FAULT_INJECTION, the fault chosen by GGSPEC_FAULT=KIND@POINT, see native/src/fault.h)
at load and in a common call. Every selected clause still gets a verdict, the reports exist,
crash and timeout details name the API call, and the run takes seconds, not hours."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.engine import isolate
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.conformance.engine.stream import read as read_stream
from ggspec.conformance.errors import Unsendable
from ggspec.reference.clauses import Profile

ROOT = Path(__file__).resolve().parents[2]
HANG_TIMEOUT = 2  # --timeout of the runs with a hang: it costs this much per check
NO_HANG_TIMEOUT = 60  # --timeout of the others: never reached, however loaded the machine


def _clauses_of(pattern: str) -> set[str]:
    from fnmatch import fnmatch

    return {cid for name, chk in load_checks().items() if fnmatch(name, pattern) for cid in chk.clauses}


def _check(target: str, fault: str, select: str, tmp_path: Path, timeout: float = NO_HANG_TIMEOUT,
           repro: Path | None = None) -> dict[str, Any]:
    report = tmp_path / "report.json"
    env = {**os.environ, "GGSPEC_FAULT": fault}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--select", select, "--quiet",
         "--seed", "1", "--max-examples", "3", "--timeout", str(timeout), "--json", str(report),
         *(["--repro-dir", str(repro)] if repro else ["--no-c-reproducers"])],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    seconds = time.monotonic() - start
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    data = json.loads(report.read_text())
    stream = read_stream(tmp_path / "report.jsonl")
    statuses = {c["id"]: c["status"] for c in data["clauses"]}
    assert set(statuses) == _clauses_of(select), "every selected clause gets a verdict"
    assert stream[0]["event"] == "start" and stream[-1]["event"] == "end"
    assert len([r for r in stream if r["event"] == "check"]) == len(data["checks"])
    return {"rc": proc.returncode, "data": data, "statuses": statuses, "seconds": seconds, "stdout": proc.stdout,
            "details": "\n".join(c["detail"] for c in data["checks"])}


def test_segfault_at_load_ends_the_run_with_a_report(fault_target: str, tmp_path: Path) -> None:
    run = _check(fault_target, "segfault@load", "tdata.set_*", tmp_path)
    assert run["rc"] == 3
    assert set(run["statuses"].values()) == {"crash"}
    assert "could not be loaded: killed by SIGSEGV" in run["data"]["load_error"]
    assert "TDATA-3" in run["stdout"]  # the table is printed


def test_hang_at_load_times_out_within_the_timeout(fault_target: str, tmp_path: Path) -> None:
    run = _check(fault_target, "hang@init", "tdata.set_*", tmp_path, HANG_TIMEOUT)
    assert run["rc"] == 3
    assert set(run["statuses"].values()) == {"timeout"}
    assert "in ggspec_init(" in run["data"]["load_error"]
    assert run["seconds"] < 60


def test_segfault_in_a_common_call_is_a_crash_whatever_the_clause_kind(fault_target: str, tmp_path: Path) -> None:
    run = _check(fault_target, "segfault@tensor_set", "tdata.set_*", tmp_path)
    assert run["rc"] == 1
    kinds = {c["id"]: c["kind"] for c in run["data"]["clauses"]}
    crashed = {cid for cid, s in run["statuses"].items() if s == "crash"}
    assert {"TDATA-3", "TDATA-4"} <= crashed, run["details"]  # an assert clause and a behaviour clause
    assert {kinds[c] for c in crashed} == {"assert", "behaviour"}
    assert "fail" not in run["statuses"].values(), run["details"]
    assert "killed by SIGSEGV in ggspec_backend_tensor_set((struct ggspec_tensor *)0x" in run["details"]


def test_hang_in_a_common_call_is_a_timeout_naming_the_call(fault_target: str, tmp_path: Path) -> None:
    run = _check(fault_target, "hang@tensor_set", "tdata.set_*", tmp_path, HANG_TIMEOUT)
    assert run["rc"] == 1
    assert {"TDATA-1", "TDATA-3", "TDATA-4"} <= {cid for cid, s in run["statuses"].items() if s == "timeout"}
    assert f"hung for {HANG_TIMEOUT} s in ggspec_backend_tensor_set(" in run["details"]
    checks = len(run["data"]["checks"])
    assert run["seconds"] < 30 + checks * (2 * HANG_TIMEOUT + 3)  # each check: one hang, seen within 1.5 timeouts


def test_a_hang_before_undefined_behaviour_is_a_timeout_not_a_difference(fault_target: str, tmp_path: Path) -> None:
    """SCHED-34's check computes a graph twice, the second time undefined behaviour (after which
    a hang is allowed); a target hanging in the first compute hung where the behaviour is
    defined: timeout, naming the call, for every clause of every check it hangs in."""
    run = _check(fault_target, "hang@graph_compute", "sched.computing_a_split_graph_again", tmp_path, HANG_TIMEOUT)
    assert run["rc"] == 1
    assert run["statuses"] == {"SCHED-34": "timeout"}, run["details"]
    assert f"hung for {HANG_TIMEOUT} s in ggspec_backend_sched_graph_compute(" in run["details"]
    assert "before the expected ub" not in run["details"]


def test_abort_in_a_common_call_fails_or_crashes_every_clause_using_it(fault_target: str, tmp_path: Path) -> None:
    run = _check(fault_target, "abort@tensor_get", "tdata.get_*", tmp_path)
    assert run["rc"] == 1
    assert "pass" not in {s for cid, s in run["statuses"].items() if cid in ("TDATA-5", "TDATA-7", "TDATA-8")}
    assert run["statuses"]["TDATA-8"] == "crash"  # behaviour: it aborted where the reference lives
    assert "fault injection: abort in tensor_get" in run["details"]  # the target's stderr is carried


def test_a_corrupted_byte_is_a_failure_with_its_difference(fault_target: str, tmp_path: Path) -> None:
    run = _check(fault_target, "corrupt@tensor_get", "tdata.get_reads_the_range", tmp_path)
    assert run["rc"] == 1
    assert run["statuses"] == {"TDATA-8": "fail"}


def test_a_c_reproducer_carries_the_flags_of_the_variant(fault_target: str, tmp_path: Path) -> None:
    run = _check(fault_target, "corrupt@tensor_get", "tdata.get_reads_the_range", tmp_path, repro=tmp_path / "repro")
    line = next(ln.strip() for ln in run["details"].splitlines() if ln.strip().startswith("gcc "))
    assert "-DGGSPEC_FAULT_INJECTION" in line.split()
    c_file = next((tmp_path / "repro").glob("*.c"))
    assert "GGSPEC_FAULT=corrupt@tensor_get" in c_file.read_text()  # the header says how the suite ran it
    built = subprocess.run(line.partition(" && ")[0], shell=True, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    exe = line.partition(" && ")[2]
    env = {**os.environ, "GGSPEC_FAULT": "corrupt@tensor_get"}
    ran = subprocess.run([exe], capture_output=True, text=True, timeout=60, env=env)
    assert ran.returncode == 1 and "1 difference(s) from the reference" in ran.stdout, ran.stdout[-2000:]


def test_a_failing_run_leaves_nothing_in_the_current_or_temporary_folder(fault_target: str, tmp_path: Path) -> None:
    """From an empty folder, with a relative GGSPEC_CACHE: the C reproducers go to the run's folder
    (REPORT.files next to --json), hypothesis' files under the cache (resolved once, against the
    starting folder), nothing named ggspec* into TMPDIR and nothing but the report into the
    current folder; one line says where the reproducers are."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = {**os.environ, "GGSPEC_FAULT": "corrupt@tensor_get", "GGSPEC_CACHE": "cache", "TMPDIR": str(tmp)}
    env.pop("GGSPEC_REPRO_DIR", None)
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", fault_target, "--select",
                           "tdata.get_reads_the_range", "--quiet", "--seed", "1", "--max-examples", "3", "--json",
                           "r.json"], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert list((work / "r.files").glob("*.c")) and (work / "r.files" / "c-reproducers.txt").is_file()
    assert f"C reproducer(s) with their gcc lines: {work / 'r.files' / 'c-reproducers.txt'}" in proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("verdict: FAIL")
    # a run on the reference, whose examples hypothesis keeps its constants cache for
    again = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", "reference", "--select",
                            "tdata.get_reads_the_range", "--quiet", "--seed", "1", "--max-examples", "2"], cwd=work,
                           env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (work / "cache" / "hypothesis").is_dir()
    assert sorted(p.name for p in work.iterdir()) == ["cache", "r.files", "r.json", "r.jsonl"], list(work.iterdir())
    assert not [p for p in tmp.iterdir() if p.name.startswith("ggspec")], list(tmp.iterdir())


def test_the_python_reproducer_says_how_the_target_died(fault_target: str, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from ggspec.conformance.inputs.strategies import Placement, TensorSpec
    from ggspec.conformance.tools.replay import ReplayFailed, replay

    args = {"placement": Placement(kind="cpu", vdev=None), "spec": TensorSpec(type=0, ne=(1,)), "rng": (0, 0), "fill": b"\0"}
    replay("tdata.get_reads_the_range", target="native", profile="fixed", args=args)
    assert "agree" in capsys.readouterr().out
    monkeypatch.setenv("GGSPEC_FAULT", "segfault@tensor_get")
    with pytest.raises(ReplayFailed, match="SIGSEGV"):
        replay("tdata.get_reads_the_range", target=fault_target, profile="fixed", args=args)
    assert "killed by SIGSEGV in ggspec_backend_tensor_get((struct ggspec_tensor *)0x" in capsys.readouterr().out


def test_the_check_budget_stops_a_long_check() -> None:
    chk = load_checks()["tdata.set_writes_the_range"]
    start = time.monotonic()
    res = run_check(chk, RunConfig("native", Profile.FIXED, max_examples=100_000, seed=1, check_budget=1.0))
    assert res.status == "timeout"
    assert "budget of 1 s ran out" in res.detail
    assert time.monotonic() - start < 30


# --- the worker's reports to its parent (conformance/isolate.py) ------------------------------------


def _segfault() -> None:
    ctypes.string_at(0)


def test_a_crash_names_the_call_it_happened_in() -> None:
    def work() -> None:
        isolate.traced_call("fine", lambda *a: None)(1)
        isolate.traced_call("boom", lambda *a: _segfault())(7, b"xy")

    res = isolate.run_forked(work, full_args=True)
    assert res.status == "signal" and res.where() == "in boom(7, b'xy')"
    assert "Segmentation fault" in res.traceback and "work" in res.traceback  # faulthandler, apart from stderr


def test_a_death_test_worker_writes_no_python_traceback_not_even_into_its_parents_file(tmp_path: Path) -> None:
    """python_traceback=False (a worker forked for one death test): faulthandler is off in it, so
    its crash adds nothing to the file of a parent worker that enabled faulthandler itself."""
    def parent() -> tuple[str, str, str]:
        with (tmp_path / "parent-tb").open("w+") as mine:
            import faulthandler

            faulthandler.enable(file=mine)
            child = isolate.run_forked(lambda: isolate.traced_call("boom", lambda: _segfault())(), python_traceback=False)
            mine.seek(0)
            return child.status, child.traceback, mine.read()

    res = isolate.run_forked(parent)
    assert res.status == "ok", res.describe()
    status, traceback, parents_file = res.value
    assert status == "signal" and traceback == "" and parents_file == ""


class _TwoArguments(Exception):
    """Pickles as (the first argument,) and so cannot be rebuilt from its pickle."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__(a)


def _raises_two_arguments() -> None:
    isolate.report(_TwoArguments(1, 2))  # a report that cannot be read back: dropped
    isolate.report("readable")
    raise _TwoArguments(1, 2)


def test_a_result_the_parent_cannot_read_back_is_the_workers_exception_not_the_runs() -> None:
    """A frame the parent cannot unpickle (here an exception whose __init__ wants two
    arguments) once ended the whole run with a traceback and no report: now it is the worker's
    own exception, saying why, and the reports that can be read are kept."""
    res = isolate.run_forked(_raises_two_arguments)
    assert res.status == "exception"
    assert "could not be read back" in str(res.value) and "TypeError" in str(res.value)
    assert res.reports == ["readable"]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_of_the_harness_is_one_checks_crash_and_the_run_goes_on(monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """An exception out of run_check itself (the harness, not the target) is that check's
    verdict, `crash` saying so; the other checks of the run get theirs."""
    from ggspec.conformance.engine import runner

    names = ["tdata.get_reads_the_range", "tdata.set_writes_the_range"]
    real = runner.run_check

    def broken(chk: Any, cfg: RunConfig) -> Any:
        if chk.name == names[0]:
            raise TypeError("a harness bug")
        return real(chk, cfg)

    monkeypatch.setattr(runner, "run_check", broken)
    cfg = RunConfig("reference", Profile.FIXED, max_examples=2, seed=1, workers=workers, c_reproducers=False)
    got = {r.check: r for r in runner.run_all(cfg, names)}
    assert got[names[0]].status == "crash" and "the harness itself failed" in got[names[0]].detail
    assert "TypeError: a harness bug" in got[names[0]].detail
    assert got[names[1]].status == "pass", got[names[1]].detail


def test_after_a_call_returned_the_worker_says_so() -> None:
    def work() -> None:
        isolate.traced_call("fine", lambda *a: None)(1)
        _segfault()

    assert isolate.run_forked(work, full_args=True).where() == "after fine(1) returned"
    assert isolate.run_forked(work).where() == "after fine(...) returned"  # by default, the name only: cheap


def test_beats_keep_a_slow_worker_alive_and_a_budget_ends_it() -> None:
    def slow(n: int) -> int:
        for i in range(n):
            isolate.beat(1.0, f"step {i}")
            time.sleep(0.3)
        return n

    ok = isolate.run_forked(lambda: slow(5), timeout=1.0)
    assert (ok.status, ok.value) == ("ok", 5)  # 1.5 s in all, never 1 s without a beat
    capped = isolate.run_forked(lambda: slow(100), timeout=1.0, budget=1.0)
    assert capped.status == "timeout" and capped.budget_spent and capped.beat.startswith("step ")
    hung = isolate.run_forked(lambda: time.sleep(30), timeout=0.5)
    assert hung.status == "timeout" and not hung.budget_spent


def test_one_call_that_hangs_times_out_while_many_short_ones_do_not() -> None:
    def calls(n: int, seconds: float) -> int:
        for _ in range(n):
            isolate.traced_call("nap", time.sleep)(seconds)
        return n

    busy = isolate.run_forked(lambda: calls(20, 0.1), timeout=30, call_timeout=0.5)
    assert (busy.status, busy.value) == ("ok", 20)  # 2 s in all, no call near 0.5 s
    stuck = isolate.run_forked(lambda: calls(1, 30), timeout=30, call_timeout=0.5, full_args=True)
    assert stuck.status == "timeout" and stuck.call_stuck and stuck.where() == "in nap(30)"


def test_an_interrupt_in_the_parent_kills_the_worker(tmp_path: Path) -> None:
    import signal

    pid_file = tmp_path / "pid"

    def work() -> None:
        pid_file.write_text(str(os.getpid()))
        time.sleep(30)

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            isolate.run_forked(work)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert time.monotonic() - start < 5
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def _lasting(request: tuple[str, int]) -> tuple[int, int]:
    """A LastingWorker's function: what each request asks, with this process's pid."""
    what, n = request
    if what == "segfault":
        _segfault()
    if what == "hang":
        isolate.traced_call("nap", time.sleep)(n)
    if what == "raise":
        raise ValueError(f"asked to raise {n}")
    if what == "stderr":
        sys.stderr.write(f"line {n}\n")
    isolate.report(("seen", n))
    return os.getpid(), n


def test_a_lasting_worker_makes_call_after_call_in_one_process() -> None:
    """engine.isolate.LastingWorker (the device worker of differential.run_on_target): each call
    ends as run_forked's one does, with its own reports and stderr; a call that ends the worker
    leaves the next one a new worker; an exception does not end it."""
    worker = isolate.LastingWorker(_lasting)
    try:
        first, second = worker.call(("ok", 1)), worker.call(("stderr", 2))
        assert (first.status, first.value[1], first.reports) == ("ok", 1, [("seen", 1)])
        assert (second.status, second.value[1], second.reports, second.stderr) == ("ok", 2, [("seen", 2)], "line 2\n")
        assert first.value[0] == second.value[0] != os.getpid()  # one worker, not this process
        raised = worker.call(("raise", 3))
        assert raised.status == "exception" and "asked to raise 3" in str(raised.value)
        assert worker.call(("ok", 4)).value[0] == first.value[0]  # the same worker goes on
        crashed = worker.call(("segfault", 5))
        assert crashed.status == "signal" and crashed.stderr == ""
        after = worker.call(("ok", 6))
        assert after.status == "ok" and after.value[0] != first.value[0]  # a new worker
        stuck = worker.call(("hang", 30), timeout=30, call_timeout=0.5)
        assert stuck.status == "timeout" and stuck.call_stuck and stuck.where() == "in nap(...)"
        assert worker.call(("ok", 7)).status == "ok"
        with pytest.raises(Unsendable):
            worker.call(("ok", lambda: 8))  # type: ignore[arg-type]
        pid = worker.pid
    finally:
        worker.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # closed: it ended and was reaped


def test_an_interrupt_during_a_lasting_workers_call_kills_it(tmp_path: Path) -> None:
    """An interrupt while a LastingWorker's call hangs in the worker ends the worker at once (the
    worker is not between calls, so closing its pipe would not end it)."""
    import signal

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    worker = isolate.LastingWorker(_lasting)
    assert worker.call(("ok", 1)).status == "ok"
    pid = worker.pid
    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            worker.call(("hang", 30), timeout=60)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert time.monotonic() - start < 5 and worker.pid == 0
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
