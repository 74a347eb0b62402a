"""adapters/webgpu_device.device_gave_up (issue 30, class 9): a run that selected a real device
whose every check that asked for it ended unsupported has one line saying so (and must not pass);
a run that judged something on the device, or the mock, has none."""

from __future__ import annotations

from ggspec.conformance.adapters.webgpu_device import device_gave_up
from ggspec.conformance.engine.results import CheckResult


def _r(name: str, status: str, reached: bool, detail: str = "") -> CheckResult:
    return CheckResult(name, ("BACK-15",), status, 1, detail, 0.0, reached_device=reached)  # type: ignore[arg-type]


MISSING = "target native lacks a WebGPU device (WebGPU unavailable: cannot load /nonexistent)"


def test_every_asking_check_unsupported_is_a_device_that_gave_up() -> None:
    results = [_r("a", "pass", False), _r("b", "unsupported", True, MISSING), _r("c", "unsupported", True, MISSING)]
    line = device_gave_up("webgpu", results)
    assert line is not None and "\n" not in line
    assert line.startswith("NO DEVICE: all 2 check(s) that asked for the webgpu device ended unsupported")
    assert MISSING in line


def test_a_check_judged_on_the_device_or_the_mock_is_not() -> None:
    assert device_gave_up("webgpu", [_r("b", "unsupported", True, MISSING), _r("c", "fail", True)]) is None
    assert device_gave_up("webgpu", [_r("b", "unsupported", True, MISSING), _r("c", "pass", True)]) is None
    assert device_gave_up("webgpu", [_r("a", "pass", False)]) is None  # nothing asked for it
    assert device_gave_up("vdev", [_r("b", "unsupported", True, MISSING)]) is None
