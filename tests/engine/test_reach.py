"""Whether a check's examples asked for a plain virtual device (engine/reach.py), the device
`--device webgpu` replaces, and `--reuse-from` (run/reuse.py), which takes another run's
verdicts only where that record says they do not depend on the device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ggspec.conformance.engine import reach
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check, run_check_here
from ggspec.reference.clauses import Profile

ROOT = Path(__file__).resolve().parents[2]
#: one check that never makes a device, one whose explicit examples put tensors on a plain one
#: (`VDevParams(name="VDEV")`), one that asks only for devices with a knob set (a lazy queue)
FREE, USES = "core.new_tensors_are_contiguous", "copy.copy_needs_every_field_equal"
KNOBS = "backend.sync_set_runs_the_queue_first"


def test_a_mark_in_a_forked_worker_reaches_the_checks_record() -> None:
    """An example in a worker of its own (expected to die, or the device worker) is counted,
    even when that worker dies right after."""
    with reach.watching() as reached:
        assert not reached()
        pid = os.fork()
        if pid == 0:
            reach.mark()
            os._exit(7)
        os.waitpid(pid, 0)
        assert reached()
    reach.mark()  # outside a check: recorded nowhere, no error
    with reach.watching() as fresh:
        assert not fresh()


@pytest.mark.parametrize(("name", "expected"), [(FREE, False), (USES, True), (KNOBS, False)])
def test_a_checks_result_says_whether_it_asked_for_a_plain_device(name: str, expected: bool) -> None:
    chk = load_checks()[name]
    res = run_check_here(chk, RunConfig("reference", Profile.FIXED, max_examples=3, seed=5, c_reproducers=False))
    assert res.status == "pass", res.detail
    assert res.reached_device is expected


@pytest.mark.parametrize(("fault", "status", "expected"), [
    ("segfault@graph_compute", "crash", True),  # devices made, then the check's worker dies
    ("hang@graph_compute", "timeout", True),  # devices made, then the worker hangs and is killed
    ("segfault@init", "crash", False),  # the first context dies before any device is asked for
])
def test_a_check_whose_worker_dies_still_says_it_asked_for_a_device(fault_target: str, fault: str, status: str,
                                                                     expected: bool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheduler state machine (one process for all its steps: nothing forks an example)
    makes its plain devices at its first step. When its worker then crashes or hangs, no result
    comes back from the worker; the record run_check opened before forking it still says a
    device was asked for (before, such a verdict read `reached_device: false` and a crash seen on
    the mock could be reused for another device)."""
    monkeypatch.setenv("GGSPEC_FAULT", fault)
    chk = load_checks()["stateful.scheduler"]
    res = run_check(chk, RunConfig(fault_target, Profile.FIXED, max_examples=5, seed=3, timeout=5.0,
                                   c_reproducers=False))
    assert res.status == status, res.detail
    assert res.reached_device is expected


def ggspec(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GGSPEC_DEVICE"}
    env["GGSPEC_CACHE"] = str(tmp_path / "cache")
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=env)


def test_reuse_from_takes_the_device_free_verdicts_and_runs_the_rest(tmp_path: Path) -> None:
    """The mock's report gives the WebGPU run (the reference's WebGPU shape: no GPU needed) its
    device-free checks; the one that used a plain device runs again; the JSON says which were
    reused and from where, and the run takes the report's seed."""
    base = ["check", "--target", "reference", "--select", FREE, "--select", USES, "--select", KNOBS,
            "--max-examples", "3", "--quiet"]
    mock = ggspec(tmp_path, *base, "--seed", "21", "--json", "mock.json")
    assert mock.returncode == 0, mock.stderr
    reached = {c["name"]: c["reached_device"] for c in json.loads((tmp_path / "mock.json").read_text())["checks"]}
    assert reached == {FREE: False, USES: True, KNOBS: False}
    webgpu = ggspec(tmp_path, *base, "--device", "webgpu", "--reuse-from", "mock.json", "--json", "webgpu.json")
    assert webgpu.returncode == 0, webgpu.stderr
    assert "--reuse-from mock.json: 2 of 3 check(s) reused" in webgpu.stderr
    assert "seed 21" in webgpu.stderr
    out = json.loads((tmp_path / "webgpu.json").read_text())
    assert out["seed"] == 21 and out["reused"] == {"mock.json": [KNOBS, FREE]}
    assert {c["name"]: c["status"] for c in out["checks"]} == {FREE: "pass", USES: "pass", KNOBS: "pass"}


@pytest.mark.parametrize(("option", "message"), [
    (["--seed", "22"], "its seed is 21, this run's is 22"),
    (["--profile", "rc8"], "its profile is 'fixed', this run's is 'rc8'"),
    (["--max-examples", "4"], "its examples a check is 3, this run's is 4"),
])
def test_reuse_from_a_run_of_other_settings_is_one_line(tmp_path: Path, option: list[str], message: str) -> None:
    made = ggspec(tmp_path, "check", "--target", "reference", "--select", FREE, "--max-examples", "3", "--seed", "21",
                  "--quiet", "--json", "r.json")
    assert made.returncode == 0, made.stderr
    args = ["check", "--target", "reference", "--select", FREE, "--max-examples", "3", "--reuse-from", "r.json", *option]
    if "--max-examples" in option:
        args = ["check", "--target", "reference", "--select", FREE, "--reuse-from", "r.json", *option]
    bad = ggspec(tmp_path, *args)
    assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_reuse_from_what_is_not_a_whole_report_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "junk.json").write_text("{", encoding="utf-8")
    bad = ggspec(tmp_path, "check", "--target", "reference", "--select", FREE, "--reuse-from", "junk.json")
    assert bad.returncode == 2 and "--reuse-from: junk.json: not JSON" in bad.stderr, bad.stderr
    made = ggspec(tmp_path, "check", "--target", "reference", "--select", FREE, "--seed", "3", "--shard", "1/2",
                  "--quiet", "--json", "s.json")
    assert made.returncode in (0, 1), made.stderr
    shard = ggspec(tmp_path, "check", "--target", "reference", "--select", FREE, "--reuse-from", "s.json")
    assert shard.returncode == 2 and "the report is of shard 1/2" in shard.stderr, shard.stderr
    (tmp_path / "merged.json").write_text(json.dumps({"clauses": [], "checks": [{"name": FREE, "status": "pass"}]}),
                                          encoding="utf-8")
    keyless = ggspec(tmp_path, "check", "--target", "reference", "--select", FREE, "--reuse-from", "merged.json")
    assert keyless.returncode == 2 and "has no verdict keys (a merged report" in keyless.stderr, keyless.stderr
