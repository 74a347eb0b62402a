"""`ggspec check --device webgpu` (conformance/adapters/webgpu_device.py): a check asking for a
plain virtual device gets the WebGPU backend on the target and a virtual device of WebGPU's shape
on the reference; without a WebGPU device the check is `unsupported`, with one line, exit 0.
Skips where this machine has no WebGPU adapter (fails instead under CI=true with wgpu and
lavapipe installed, as tests/native/test_webgpu.py does)."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.adapters.webgpu_device import WEBGPU_SHAPE
from ggspec.native import load_lib
from ggspec.native.webgpu import wgpu_library
from ggspec.reference.vdev import VDevParams

IN_CI = os.environ.get("CI", "").lower() == "true"
LAVAPIPE = bool(glob.glob("/usr/share/vulkan/icd.d/lvp_icd*.json"))
#: a check whose one device is a plain VDevParams on every example (checks/sched.py)
CHECK = "sched.cpu_first_device_last"


def _require_webgpu() -> None:
    """Start WebGPU in a child (never in this process before the CLI forks), skip without it."""
    code = ("from ggspec.native.webgpu import webgpu_init, WebGPUUnavailable\n"
            "try:\n    webgpu_init()\nexcept WebGPUUnavailable as e:\n    print(e)\nelse:\n    print('started')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()
    if line != "started":
        if IN_CI and wgpu_library() is not None and LAVAPIPE:
            pytest.fail(f"CI=true, wgpu and lavapipe are installed, but: {line}")
        pytest.skip(line)


def _require_target(target: str) -> None:
    """rc.8 fetched and built (skip without it); native is always there."""
    if target == "rc8":
        from ggspec.conformance.adapters.external import TargetUnavailable
        from ggspec.conformance.adapters.rc8 import ensure_rc8

        try:
            ensure_rc8()
        except TargetUnavailable as exc:
            pytest.skip(f"rc.8 unavailable: {exc}")


def _check(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", "native", "--device", "webgpu",
                           "--size", "ci", "--select", CHECK, "--json", str(out)],
                          capture_output=True, text=True, timeout=300, check=False, env={**os.environ, **env})
    return proc, json.loads(out.read_text())


def test_a_plain_device_is_webgpu_on_native_and_shaped_like_it_on_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    _require_webgpu()
    code = ("from ggspec.conformance.adapters import make_target\n"
            "from ggspec.conformance.engine.plugins import enter_pristine_worker\n"
            "enter_pristine_worker()  # as a worker forked for one example (WebGPU starts only there)\n"
            "from ggspec.native import load_lib\n"
            "from ggspec.reference.vdev import VDevParams\n"
            "t = make_target('native')\n"
            "b = t.vdev_init(VDevParams(name='Dev0'))\n"
            "lazy = t.vdev_init(VDevParams(name='Dev1', lazy=True))\n"
            "ffi, lib = load_lib()\n"
            "print(bool(lib.ggspec_backend_is_webgpu(b)), t.backend_name(b), t.buft_name(t.backend_get_default_buffer_type(b)),"
            " bool(lib.ggspec_backend_is_webgpu(lazy)), t.backend_name(lazy))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "GGSPEC_DEVICE": "webgpu"})
    assert out.stdout.split() == ["True", "WebGPU", "WebGPU", "False", "Dev1"], out.stderr
    monkeypatch.setenv("GGSPEC_DEVICE", "webgpu")
    ref = make_target("reference")
    b = ref.vdev_init(VDevParams(name="Dev0"))
    assert ref.backend_name(b) == "WebGPU"
    assert ref.backend_get_alignment(b) == WEBGPU_SHAPE.alignment
    assert ref.backend_name(ref.vdev_init(VDevParams(name="Dev1"))) == "Dev1"  # one WebGPU device a process


def test_check_device_webgpu_passes_a_selection_on_native(tmp_path: Path) -> None:
    _require_webgpu()
    proc, report = _check(tmp_path, {})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["target_description"]["device"] == "webgpu"  # type: ignore[index]
    assert [c["status"] for c in report["checks"]] == ["pass"], report["checks"]  # type: ignore[index,union-attr]


def test_without_an_adapter_the_check_is_unsupported_with_one_line(tmp_path: Path) -> None:
    lib_path = str(tmp_path / "no-such-libwgpu_native.so")
    proc, report = _check(tmp_path, {"GGSPEC_WGPU_LIB": lib_path})
    # the check is unsupported, and a run whose every device check ended so judged nothing on the
    # device: not a pass (issue 30, class 9), one verdict line saying why
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "verdict: NO DEVICE: " in proc.stdout, proc.stdout
    (only,) = report["checks"]  # type: ignore[misc]
    assert only["status"] == "unsupported"
    detail = only["detail"]
    assert "\n" not in detail and "WebGPU" in detail, detail
    ffi, lib = load_lib()
    if bool(lib.ggspec_webgpu_compiled()):
        assert lib_path in detail, detail


def test_vdev_is_the_default_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GGSPEC_DEVICE", raising=False)
    ref = make_target("reference")
    assert ref.backend_name(ref.vdev_init(VDevParams(name="Dev0"))) == "Dev0"


def test_a_mock_reading_of_a_real_device_is_not_observable_and_the_data_is_still_compared(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """tdata.async_round_trip on the reference's WebGPU shape: the mock's queue counter is
    `NotObservable` (the same on both sides, so the check goes on), the bytes read back are
    still recorded, and a MissingSymbol that is not a mock reading still propagates."""
    from ggspec.conformance.engine.differential import run_on_reference
    from ggspec.conformance.engine.registry import NotObservable, mock_reading
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.errors import MissingSymbol, MockOnly
    from ggspec.conformance.inputs.strategies import Placement, TensorSpec
    from ggspec.reference.clauses import Profile

    monkeypatch.setenv("GGSPEC_DEVICE", "webgpu")
    chk = load_checks()["tdata.async_round_trip"]
    args = {"placement": Placement("vdev", VDevParams(name="Dev0")), "spec": TensorSpec(0, (3, 2)),
            "fill": b"\x01\x02\x03", "reuse": False}
    out = run_on_reference(chk, args, Profile.FIXED)
    assert out.ending == "ok", out.detail
    got = dict(out.observations)
    assert got["pending"] == NotObservable("vdev_pending on the WebGPU device (the mock's counter)")
    assert repr(got["pending"]).startswith("not observable: vdev_pending")
    assert got["read back"] == (b"\x01\x02\x03" * 8)[:24]
    monkeypatch.setenv("GGSPEC_DEVICE", "vdev")
    assert dict(run_on_reference(chk, args, Profile.FIXED).observations)["pending"] == 0  # the mock's own count

    def missing() -> int:
        raise MissingSymbol("x", "ggml_backend_foo")

    def mock_only() -> int:
        raise MockOnly("x", "vdev_counters of it")

    assert mock_reading(mock_only) == NotObservable("vdev_counters of it")
    with pytest.raises(MissingSymbol, match="ggml_backend_foo"):
        mock_reading(missing)


_GAP_CASE = """
import sys
from ggspec.conformance.engine.differential import Example, judge, run_on_reference, run_on_target
from ggspec.conformance.engine.runner import load_checks
from ggspec.conformance.inputs.strategies import Placement
from ggspec.reference.clauses import Profile
from ggspec.reference.vdev import VDevParams
chk = load_checks()["ops.unimplemented_cases_abort"]
args = {"case": sys.argv[1], "where": Placement("vdev", VDevParams(name="Dev0")), "seed": 1}
exp = run_on_reference(chk, args, Profile.FIXED)
act = run_on_target(chk, args, "native", Profile.FIXED, expect_death=False)
judge(Example(chk, args, exp, act))
print(exp.ending, exp.observations, act.ending, act.observations, act.detail)
"""


@pytest.mark.parametrize("case", ["mul of F16", "cpy to Q8_0 from a transposed source", "get_rows of an I16 table"])
def test_a_cpu_code_gap_refused_by_webgpu_is_recorded_alike_on_both_sides(case: str) -> None:
    """ops.unimplemented_cases_abort on the WebGPU device: a graph the CPU code does not implement
    (CORE-49) is refused by webgpu.c and by the reference's WebGPU shape alike (DeviceRefused,
    recorded by the check), so the example is judged, not `unsupported`. In a process of its
    own: the WebGPU device must not have been started in the process the example forks from."""
    _require_webgpu()
    out = subprocess.run([sys.executable, "-c", _GAP_CASE, case], capture_output=True, text=True, timeout=120,
                         check=False, env={**os.environ, "GGSPEC_DEVICE": "webgpu"})
    assert out.returncode == 0, out.stderr[-2000:]
    refused = "[('refused by the device', True)]"
    assert out.stdout.split("\n")[0] == f"ok {refused} ok {refused} ", out.stdout + out.stderr[-2000:]


_COPY_BETWEEN = """
import sys
from ggspec.conformance.adapters import make_target
from ggspec.conformance.engine.plugins import enter_pristine_worker
from ggspec.reference.vdev import VDevParams
enter_pristine_worker()  # as a worker forked for one example (WebGPU starts only there)
t = make_target(sys.argv[1])
gpu = t.vdev_init(VDevParams(name="Dev0"))           # the WebGPU device
mock = t.vdev_init(VDevParams(name="Dev1"))          # the second plain device stays the mock
assert t.backend_name(gpu) == "WebGPU" and t.backend_name(mock) == "Dev1"
out = []
for src_b, dst_b in ((mock, gpu), (gpu, mock)):
    s, d = t.new_tensor(0, (37,), "s"), t.new_tensor(0, (37,), "d")
    sb, db = t.backend_alloc_buffer(src_b, 256), t.backend_alloc_buffer(dst_b, 256)
    t.tensor_alloc(sb, s, 0)
    t.tensor_alloc(db, d, 0)
    payload = bytes(range(1, 149))
    t.tensor_set(s, payload, 0, 148)
    t.tensor_copy(s, d)
    out.append(t.tensor_get(d, 0, 148) == payload)
print(*out)
"""


@pytest.mark.parametrize("target", ["native", "rc8"])
def test_a_copy_between_the_mock_and_webgpu_is_staged(target: str) -> None:
    """Both buffer types have a cpy_tensor entry, for their own device only. rc.8 calls the
    *source* buffer's entry with the destination's buffer (erratum COPY-6): each entry must
    refuse a buffer of another type (false) so that tensor_copy stages the copy (COPY-7) —
    before vdev.c and webgpu.c checked, the mock's entry aborted on the WebGPU buffer."""
    _require_webgpu()
    _require_target(target)
    out = subprocess.run([sys.executable, "-c", _COPY_BETWEEN, target], capture_output=True, text=True, timeout=300,
                         check=False, env={**os.environ, "GGSPEC_DEVICE": "webgpu"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"], out.stdout + out.stderr[-2000:]


_EXAMPLES = """
import json, sys
from ggspec.conformance.engine.differential import differential
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.runner import load_checks
from ggspec.conformance.inputs.strategies import Placement
from ggspec.reference.clauses import Profile
from ggspec.reference.vdev import VDevParams
load_checks()
plain = Placement("vdev", VDevParams(name="VDEV"))
cases = [("ops.norm_needs_positive_eps", {"eps": 0.0, "where": plain, "seed": 1}),
         ("ops.scale_needs_contiguous", {"ne": (3, 4), "where": plain, "seed": 2}),
         ("ops.norm_needs_adjacent_elements", {"ne": (3, 4), "where": plain, "seed": 3}),
         ("ops.mul_needs_f32_b", {"ne": (3, 2), "a_type": 0, "b_type": 1, "where": plain, "seed": 4}),
         ("ops.norm_needs_positive_eps", {"eps": 0.0, "where": Placement("cpu"), "seed": 1})]
out = []
for name, args in cases:
    ex = differential(CHECKS[name], args, sys.argv[1], Profile(sys.argv[2]))
    out.append([name, ex.expected.ending, ex.expected.clause_id, ex.expected.not_binding, ex.actual.ending])
print(json.dumps(out))
"""


@pytest.mark.parametrize(("target", "profile"), [("native", "fixed"), ("rc8", "rc8")])
def test_cpu_code_asserts_do_not_bind_the_webgpu_device(target: str, profile: str) -> None:
    """CORE-58/60/67/68 are asserts of the CPU code (spec/core.md, Devices with kernels of their
    own): on WebGPU the example passes whether the device computes the node (NORM with eps 0,
    SCALE of padded rows, NORM of a transposed operand) or refuses it (MUL with an F16 `b`);
    on the CPU backend the same example still requires rc.8's abort."""
    _require_webgpu()
    _require_target(target)
    out = subprocess.run([sys.executable, "-c", _EXAMPLES, target, profile], capture_output=True, text=True, timeout=300,
                         check=False, env={**os.environ, "GGSPEC_DEVICE": "webgpu"})
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == [
        ["ops.norm_needs_positive_eps", "ub", "CORE-67", True, "ok"],
        ["ops.scale_needs_contiguous", "ub", "CORE-60", True, "ok"],
        ["ops.norm_needs_adjacent_elements", "ub", "CORE-68", True, "ok"],
        ["ops.mul_needs_f32_b", "ub", "CORE-58", True, "unsupported"],
        ["ops.norm_needs_positive_eps", "violation", "CORE-67", False, "abort"],
    ], got


def test_cpu_copy_errata_do_not_bind_a_device_with_kernels_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """CORE-52 (spec/core.md, Devices with kernels of their own): on the mock, which runs the
    host's CPU code, profile rc8 lands rows where rc.8 does; on WebGPU's shape both profiles copy
    in logical order. The example CI's WebGPU run of rc8 drew (seed 2687194227); the reproducer
    of such a run names the device, so the replay runs on WebGPU again."""
    from ggspec.conformance.engine.differential import Example, reproducer, run_on_reference
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.inputs.strategies import Placement
    from ggspec.reference.clauses import Profile

    chk = load_checks()["ops.same_type_copy_rows"]
    args = {"where": Placement("vdev", VDevParams(name="VDEV")), "seed": 0, "case": (0, (1, 2, 2), (1, 1, 4))}

    def copied(profile: Profile) -> bytes:
        out = run_on_reference(chk, args, profile)
        assert out.ending == "ok", out.detail
        return bytes(dict(out.observations)["x1 (copy of x0 (permuted)): bytes"])

    monkeypatch.setenv("GGSPEC_DEVICE", "vdev")
    logical = copied(Profile.FIXED)
    assert copied(Profile.RC8) != logical  # the erratum, where the CPU code computes
    monkeypatch.setenv("GGSPEC_DEVICE", "webgpu")
    assert copied(Profile.RC8) == copied(Profile.FIXED) == logical
    out = run_on_reference(chk, args, Profile.RC8)
    ex = Example(chk, args, out, out)
    assert reproducer(ex, "rc8", Profile.RC8).splitlines()[1].endswith(", device='webgpu')")
    monkeypatch.setenv("GGSPEC_DEVICE", "vdev")
    assert "device=" not in reproducer(ex, "rc8", Profile.RC8)


@pytest.mark.parametrize("target", ["native", "rc8"])
def test_a_get_async_before_synchronize_is_the_mocks_to_define(target: str, monkeypatch: pytest.MonkeyPatch,
                                                                request: pytest.FixtureRequest) -> None:
    """BACK-9's pinned example (CI's WebGPU runs drew it at seed 769134631): on the eager mock
    the host block of a get_async is written before synchronize; WebGPU reads it back at
    synchronize, which is all the API promises, so that reading is not observable there, on
    both sides, and the rest (after synchronize) is compared. Replayed on the target itself."""
    from ggspec.conformance.engine.differential import run_on_reference
    from ggspec.conformance.engine.registry import NotObservable
    from ggspec.conformance.engine.runner import load_checks
    from ggspec.conformance.inputs.strategies import TensorSpec
    from ggspec.reference.clauses import Profile

    if target == "rc8":
        request.getfixturevalue("rc8_or_skip").target()
    chk = load_checks()["backend.synchronize_completes_pending_work"]
    args = {"device": VDevParams(name="VDEV"), "spec": TensorSpec(0, (1,)), "seed": 0}
    assert args in chk.examples
    monkeypatch.setenv("GGSPEC_DEVICE", "vdev")
    assert dict(run_on_reference(chk, args, Profile.FIXED).observations)["host block of the get before"] == b"\x22" * 4
    monkeypatch.setenv("GGSPEC_DEVICE", "webgpu")
    seen = dict(run_on_reference(chk, args, Profile.FIXED).observations)
    assert isinstance(seen["host block of the get before"], NotObservable)
    assert seen["host block of the get after"] == b"\x22" * 4
    # the replay forks workers that start WebGPU: in a fresh process, not in this one, where an
    # earlier test may have started the device already (a device never crosses a fork)
    code = ("from ggspec.conformance.tools.replay import replay; from ggspec.conformance.inputs.strategies import TensorSpec; "
            "from ggspec.reference.vdev import ALL_OPS, VDevParams; "
            f"replay({chk.name!r}, target={target!r}, profile={'rc8' if target == 'rc8' else 'fixed'!r}, "
            f"args={args!r}, device='webgpu')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_replay_refuses_an_unknown_device() -> None:
    from ggspec.conformance.tools.replay import replay

    with pytest.raises(ValueError, match="unknown device 'metal'; known: vdev, webgpu"):
        replay("ops.same_type_copy_rows", target="native", profile="fixed", args={}, device="metal")


_DEVICE_WORKER = """
import json, os, sys
os.environ["GGSPEC_DEVICE"] = "webgpu"
from hypothesis import Phase, given, settings, strategies as st
from ggspec.conformance.engine.differential import RunState, run_on_target
from ggspec.conformance.engine.runner import load_checks
from ggspec.reference.clauses import Profile

chk = load_checks()[sys.argv[1]]
drawn = []

@settings(max_examples=4, database=None, derandomize=True, phases=[Phase.generate])
@given(st.fixed_dictionaries(chk.strategies))
def collect(args):
    drawn.append(args)

collect()
shared, pids, same = RunState(), [], []
for args in drawn:
    in_device_worker = run_on_target(chk, args, "native", Profile.FIXED, False, shared)
    pids.append(shared.device_worker.pid if shared.device_worker is not None else 0)
    own = run_on_target(chk, args, "native", Profile.FIXED, False, RunState(fork_every_example=True))
    same.append([in_device_worker.ending, own.ending,
                 repr(in_device_worker.observations) == repr(own.observations)])
shared.close()
print(json.dumps({"pids": pids, "same": same, "closed": shared.device_worker is None}))
"""


def test_a_checks_webgpu_examples_share_one_device_worker_and_end_as_in_their_own() -> None:
    """The examples of a check that use the WebGPU device run in one device worker (the device
    starts once per check, docs/webgpu.md), and each ends with the observations it has in a
    worker of its own. In a fresh process: one that had started WebGPU could not fork it."""
    _require_webgpu()
    proc = subprocess.run([sys.executable, "-c", _DEVICE_WORKER, "sched.buffer_owner"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    used = [pid for pid in got["pids"] if pid != 0]  # 0: the example did not use WebGPU (the first does not)
    assert len(used) >= 2 and set(used) == {used[0]}, got["pids"]  # one device worker for all of them
    assert got["same"] == [["ok", "ok", True]] * 4, got["same"]
    assert got["closed"]
