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


def _check(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--target", "native", "--device", "webgpu",
                           "--size", "ci", "--select", CHECK, "--json", str(out)],
                          capture_output=True, text=True, timeout=300, check=False, env={**os.environ, **env})
    return proc, json.loads(out.read_text())


def test_a_plain_device_is_webgpu_on_native_and_shaped_like_it_on_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    _require_webgpu()
    code = ("from ggspec.conformance.adapters import make_target\n"
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
    assert proc.returncode == 0, proc.stdout + proc.stderr
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


