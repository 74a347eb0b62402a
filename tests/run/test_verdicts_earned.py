"""No verdict the run did not earn (issue 32): the verdict cache is keyed on everything that can
change a verdict (GGSPEC_FAULT among the variables, --timeout, --check-budget) and keeps nothing
of a run that saw a flaky check, which the run names; ggspec's own memory failures are ggspec's
(one line, exit 3), never the target's verdicts; a cache folder that cannot be written costs one
line, never the verdict line."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.engine import runner
from ggspec.conformance.engine.limits import MIN_ADDRESS_SPACE
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.errors import HarnessFailed
from ggspec.conformance.run import cache
from ggspec.reference.clauses import Profile

ROOT = Path(__file__).resolve().parents[2]
GET = "tdata.get_reads_the_range"


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None, limit: int | None = None
         ) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("GGSPEC_VERDICT_CACHE", "CI", "GGSPEC_FAULT")}
    full.update(env or {})

    def lower() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

    return subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=600, preexec_fn=lower)


def test_the_key_holds_every_variable_and_option_that_can_change_a_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    chk = runner.load_checks()[GET]
    cfg = RunConfig("native", Profile.FIXED, seed=1)
    for name in ("GGSPEC_FAULT", "GGSPEC_WEBGPU_MIN_ALIGNMENT", "GGSPEC_REPRO_DIR", "GGSPEC_DEVICE", "LD_PRELOAD"):
        monkeypatch.delenv(name, raising=False)
    clean = cache.key(chk, cfg, cache.target_key("native"))
    monkeypatch.setenv("GGSPEC_FAULT", "corrupt@tensor_get")
    faulty = cache.key(chk, cfg, cache.target_key("native"))
    assert faulty != clean
    assert cache.verdict_env()["GGSPEC_FAULT"] == "corrupt@tensor_get"
    monkeypatch.delenv("GGSPEC_FAULT")
    for name, value in (("GGSPEC_WEBGPU_MIN_ALIGNMENT", "256"), ("LD_PRELOAD", "libasan.so")):
        monkeypatch.setenv(name, value)
        assert cache.key(chk, cfg, cache.target_key("native")) != clean, name
        monkeypatch.delenv(name)
    for name, value in (("GGSPEC_REPRO_DIR", "/elsewhere"), ("GGSPEC_DEVICE", "webgpu")):  # where files go; the device
        monkeypatch.setenv(name, value)  # is kept beside the verdict (cache.reusable)
        assert cache.key(chk, cfg, cache.target_key("native")) == clean, name
        monkeypatch.delenv(name)
    target = cache.target_key("native")
    assert cache.key(chk, replace(cfg, timeout=2.0), target) != clean
    assert cache.key(chk, replace(cfg, check_budget=30.0), target) != clean


def test_a_fault_variable_is_never_answered_from_a_clean_runs_cache(fault_target: str, tmp_path: Path) -> None:
    env = {"GGSPEC_CACHE": str(tmp_path / "cache")}
    args = ("--target", fault_target, "--select", GET, "--seed", "1", "--max-examples", "3", "--no-c-reproducers")
    clean = _run(tmp_path, *args, env=env)
    assert clean.returncode == 0 and list((tmp_path / "cache" / "verdicts").glob("*.json")), clean.stderr
    faulty = _run(tmp_path, *args, env={**env, "GGSPEC_FAULT": "corrupt@tensor_get"})
    assert faulty.returncode == 1, faulty.stdout + faulty.stderr  # run, not reused: it fails
    assert "0 of 1 check(s) reused" in faulty.stderr
    again = _run(tmp_path, *args, env=env)
    assert again.returncode == 0 and "1 of 1 check(s) reused" in again.stderr  # the clean verdict is still there


_CALLS = [0]


def test_a_failure_that_does_not_fail_again_is_flaky_with_its_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The third drawn example of the check fails, and never again (the check's worker counts its
    calls, its explicit examples first): hypothesis' replay of it passes, so the check is flaky,
    replayed FLAKY_REPLAYS times."""
    real = runner.differential
    chk = runner.load_checks()[GET]
    third_drawn = len(chk.examples) + 3

    def once(*args: Any, **kwargs: Any) -> Any:
        _CALLS[0] += 1
        if _CALLS[0] == third_drawn:
            raise AssertionError("a difference that does not come back")
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "differential", once)
    res = runner.run_check(chk, RunConfig("reference", Profile.FIXED, max_examples=10, seed=1, c_reproducers=False))
    assert (res.status, res.flaky) == ("fail", (0, runner.FLAKY_REPLAYS)), res.detail
    assert res.detail.startswith("flaky: the failing example did not fail again when hypothesis replayed it; it "
                                 f"failed again in 0 of {runner.FLAKY_REPLAYS} replays")
    assert res.to_json()["flaky"] == {"failed": 0, "replays": runner.FLAKY_REPLAYS}
    assert type(res).from_json(res.to_json()).flaky == res.flaky
    from ggspec.conformance.reports.report import flaky_line

    assert flaky_line([res]) == (f"flaky target: 1 check(s) failed on an example that did not fail again: TDATA-8 "
                                 f"({GET}: failed again in 0 of {runner.FLAKY_REPLAYS} replays)")


def test_a_run_that_saw_a_flaky_check_stores_no_verdict(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ggspec.conformance.engine.results import CheckResult
    from ggspec.conformance.run.execute import execute
    from ggspec.conformance.run.plan import Options, make_plan

    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("GGSPEC_VERDICT_CACHE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    names = [GET, "tdata.set_writes_the_range"]
    for flaky in (True, False):
        def ran(cfg: Any, to_run: list[str], **kwargs: Any) -> list[CheckResult]:
            return [CheckResult(GET, ("TDATA-8",), "fail", 3, "flaky: ...", flaky=(0, 10) if flaky else None),  # noqa: B023
                    CheckResult("tdata.set_writes_the_range", ("TDATA-4",), "pass", 10)]

        monkeypatch.setattr(runner, "run_all", ran)
        notes: list[str] = []
        plan = make_plan(Options(target="reference", seed=1 if flaky else 2, select=tuple(names), files=False))
        execute(plan, note=notes.append)
        stored = sorted((tmp_path / "cache" / "verdicts").glob("*.json"))
        if flaky:
            assert stored == [] and any(n.startswith("verdict cache: nothing stored: the target was flaky (1 check(s)")
                                        for n in notes), notes
        else:
            assert len(stored) == 2, notes  # the same run without the flaky check: both kept


def test_a_flaky_build_is_named_and_its_run_not_cached(fault_target: str, tmp_path: Path) -> None:
    """The fault build flipping a bit in the first tensor_get of each process alone (`=1`,
    native/src/fault.h): a check whose examples run in its worker fails on its first read, and
    the failing example passes when replayed there (the count has moved on), deterministically.
    It read `/3` (one read in 3 at random) until a CI run drew no flaky check among 16 failing
    clauses: a replay that reads several times fails again more often than the docstring's
    estimate said. Every check named flaky was replayed; nothing of the run is kept."""
    env = {"GGSPEC_CACHE": str(tmp_path / "cache"), "GGSPEC_FAULT": "corrupt@tensor_get=1"}
    proc = _run(tmp_path, "--target", fault_target, "--select", "TDATA", "--seed", "1", "--max-examples", "10",
                "--no-c-reproducers", "--json", "r.json", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    flaky = [c for c in json.loads((tmp_path / "r.json").read_text())["checks"] if c["flaky"] is not None]
    assert flaky, proc.stderr
    assert all(c["flaky"]["replays"] == runner.FLAKY_REPLAYS and c["status"] == "fail" for c in flaky)
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("flaky target:"))
    assert f"flaky target: {len(flaky)} check(s)" in line and all(c["name"] in line for c in flaky)
    assert "verdict cache: nothing stored: the target was flaky" in proc.stderr
    assert not list((tmp_path / "cache" / "verdicts").glob("*.json"))


def _unwritable(tmp_path: Path) -> Path:
    """A cache folder that cannot be written: under a plain file (a chmod does not stop root)."""
    (tmp_path / "a-file").write_text("")
    return tmp_path / "a-file" / "cache"


def test_a_cache_that_cannot_be_written_costs_one_line_never_the_verdict(fault_target: str, tmp_path: Path) -> None:
    env = {"GGSPEC_CACHE": str(_unwritable(tmp_path)), "GGSPEC_FAULT": "corrupt@tensor_get"}
    failing = _run(tmp_path, "--target", fault_target, "--select", GET, "--seed", "1", "--max-examples", "3",
                   "--quiet", env=env)
    assert failing.returncode == 1 and "Traceback" not in failing.stderr, failing.stderr[-3000:]
    assert failing.stdout.strip().splitlines()[-1] == "verdict: FAIL"
    assert "could not write the list of C reproducers to" in failing.stderr and "Not a directory" in failing.stderr
    assert "verdict cache: not written (" in failing.stderr
    passing = _run(tmp_path, "--target", "reference", "--select", GET, "--seed", "1", "--max-examples", "3",
                   "--quiet", env={"GGSPEC_CACHE": env["GGSPEC_CACHE"]})
    assert passing.returncode == 0 and passing.stdout.strip().splitlines()[-1] == "verdict: PASS", passing.stderr
    assert "verdict cache: not written (" in passing.stderr and "the verdicts stand" in passing.stderr


def test_too_small_an_address_space_is_ggspecs_not_the_targets(tmp_path: Path) -> None:
    """Under `ulimit -v` 512 MiB (and 256): one line, exit 3, nothing of the target judged."""
    for mib in (512, 256):
        proc = _run(tmp_path, "--target", "native", "--select", "SCHED", "--seed", "1", "--quiet", "--json",
                    f"r{mib}.json", env={"GGSPEC_CACHE": str(tmp_path / "cache")}, limit=mib << 20)
        assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert proc.stdout.strip().splitlines() == [
            f"verdict: none: ggspec needs at least {MIN_ADDRESS_SPACE >> 20} MiB of address space and this process is "
            f"limited to {mib} MiB (ulimit -v {mib * 1024}): raise the limit; under it an allocation failure would be "
            "ggspec's own, not the target's"], proc.stdout  # one line: no table of crashes, no verdict on the target


def test_a_memory_error_of_the_harness_stops_the_run_as_the_harnesss(monkeypatch: pytest.MonkeyPatch) -> None:
    """A MemoryError in a check's worker (the reference, hypothesis, the harness) is no verdict:
    the run stops with HarnessFailed naming the check; the checks that finished are kept."""
    real = runner.differential

    def short_of_memory(chk: Any, *args: Any, **kwargs: Any) -> Any:
        if chk.name == "tdata.set_writes_the_range":
            raise MemoryError("the reference's buffer")
        return real(chk, *args, **kwargs)

    monkeypatch.setattr(runner, "differential", short_of_memory)
    cfg = RunConfig("reference", Profile.FIXED, max_examples=2, seed=1, c_reproducers=False)
    with pytest.raises(HarnessFailed) as info:
        runner.run_all(cfg, [GET, "tdata.set_writes_the_range"])
    assert str(info.value).startswith("ggspec itself ran out of memory while running tdata.set_writes_the_range")
    assert "(MemoryError: the reference's buffer): not a verdict on the target" in str(info.value)
    assert [(r.check, r.status) for r in info.value.results] == [(GET, "pass")]
