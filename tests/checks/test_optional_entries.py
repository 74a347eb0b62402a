"""Issue 30, class 4: each optional entry of a backend on its own switch (VDevParams.absent) and
the check that walks each fallback rule per entry (conformance/checks/optional_entries.py).

Each planted defect (native/testing/defects.py) decides one entry's fallback by another entry:

- `GGSPEC_DEFECT_GET_ASYNC_BY_SET`: get_async falls back to tensor_get when set_tensor_async is
  missing (TDATA-13);
- `GGSPEC_DEFECT_RESET_BY_INIT`: buffer_reset calls reset when init_tensor is there (BUF-13).

On devices whose optional entries come and go together (all there, all missing: what the
virtual device could be before) each defect does exactly what the correct code does, and the
check passes; on a device lacking one of the two entries alone it fails, by a deterministic
example. The check passes on the reference, native and rc.8.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.reference.clauses import Profile
from ggspec.reference.vdev import OPTIONAL_ENTRIES, VDevParams, consistent
from ggspec.reference.world import World
from hypothesis import strategies as st
from sched_defects import variant_target

load_checks()

CHECK = "optional_entries.each_fallback_alone"
#: defect -> the entry whose absence alone shows it, and what the failing example's device lacks
CAUGHT = {
    "GGSPEC_DEFECT_GET_ASYNC_BY_SET": "absent=frozenset(['set_tensor_async'])",
    "GGSPEC_DEFECT_RESET_BY_INIT": "absent=frozenset(['reset'])",
}


def _cfg(target: str, profile: Profile = Profile.FIXED) -> RunConfig:
    return RunConfig(target, profile, max_examples=5, seed=20261205, shrink=False, c_reproducers=False)


def _together() -> Any:
    """The check with its optional entries going together only: every entry there, or every one
    missing (on an eager device, which may lack synchronize), lazy or not where allowed."""
    chk = CHECKS[CHECK]
    both = [VDevParams(name="GPU0", lazy=lazy) for lazy in (False, True)]
    both += [VDevParams(name="GPU0", async_entries=False, absent=frozenset(OPTIONAL_ENTRIES) - {"synchronize"},
                        lazy=lazy) for lazy in (False, True)]
    both += [VDevParams(name="GPU0", async_entries=False, absent=frozenset(OPTIONAL_ENTRIES))]
    return replace(chk, examples=tuple({"device": d, "seed": k} for k, d in enumerate(both)),
                   strategies={"device": st.sampled_from(both), "seed": st.integers(0, 2**32 - 1)})


@pytest.fixture(scope="module", params=sorted(CAUGHT))
def defect_target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    define = str(request.param)
    return define, variant_target(define, tmp_path_factory.mktemp(define.lower()))


def test_the_defect_fails_the_check_on_one_entry_alone(defect_target: tuple[str, str]) -> None:
    define, target = defect_target
    result = run_check(CHECKS[CHECK], _cfg(target))
    assert result.status in ("fail", "crash"), f"{define} went unnoticed: {result.detail}"
    assert CAUGHT[define] in result.detail, result.detail


def test_the_defect_is_invisible_where_the_entries_go_together(defect_target: tuple[str, str]) -> None:
    _, target = defect_target
    result = run_check(_together(), _cfg(target))
    assert result.status == "pass", result.detail


@pytest.mark.parametrize("target", ["reference", "native"])
def test_the_check_passes_on_the_model_and_native(target: str) -> None:
    result = run_check(CHECKS[CHECK], _cfg(target))
    assert result.status == "pass", result.detail


def test_the_check_passes_on_rc8(rc8_or_skip: Any) -> None:
    rc8_or_skip.target()
    result = run_check(CHECKS[CHECK], _cfg("rc8", Profile.RC8))
    assert result.status == "pass", result.detail


def test_consistent_keeps_a_lazy_devices_synchronize() -> None:
    assert consistent(VDevParams(lazy=True, absent=frozenset({"synchronize", "reset"}))).absent == {"reset"}
    assert consistent(VDevParams(lazy=False, absent=frozenset({"synchronize"}))).absent == {"synchronize"}


def test_each_entry_is_missing_alone_in_an_example() -> None:
    lacking = {frozenset(ex["device"].absent) for ex in CHECKS[CHECK].examples}
    assert {frozenset({e}) for e in OPTIONAL_ENTRIES} <= lacking


# --- the switch itself --------------------------------------------------------------------------


def test_absent_entries_are_null_in_the_model() -> None:
    from ggspec.reference.vdev import vdev_init

    for entry in OPTIONAL_ENTRIES:
        params = VDevParams(lazy=entry != "synchronize", absent=frozenset({entry}))
        backend = vdev_init(World(), params)
        ifaces = {"set_tensor_async": backend.iface.set_tensor_async, "get_tensor_async": backend.iface.get_tensor_async,
                  "synchronize": backend.iface.synchronize}
        if entry in ifaces:
            assert ifaces.pop(entry) is None
        assert all(v is not None for v in ifaces.values()), entry


@pytest.mark.parametrize("bad", [VDevParams(lazy=True, absent=frozenset({"synchronize"})),
                                 VDevParams(absent=frozenset({"clear"}))])
def test_a_device_that_cannot_be_is_refused_on_both_sides(bad: VDevParams) -> None:
    from ggspec.native import vdev as native_vdev
    from ggspec.reference.vdev import vdev_init

    with pytest.raises(ValueError) as model:
        vdev_init(World(), bad)
    with pytest.raises(ValueError) as native:
        native_vdev.vdev_init(bad)
    assert str(model.value) == str(native.value) and "\n" not in str(model.value)


def test_the_c_device_refuses_it_with_null(capfd: pytest.CaptureFixture[str]) -> None:
    from ggspec.native._lib import ffi, lib

    name = ffi.new("char[]", b"GPU0")
    p = ffi.new("struct ggspec_vdev_params *", {"name": name, "alignment": 32, "lazy": True, "absent": 4})
    assert lib.ggspec_vdev_init(p) == ffi.NULL
    p.absent = 1 << 5
    p.lazy = False
    assert lib.ggspec_vdev_init(p) == ffi.NULL
    assert capfd.readouterr().err.count("ggspec vdev: absent entries") == 2
