"""The virtual devices' entry logs as an observable (DESIGN.md, "Every device, mock or real, keeps
an ordered log"): the harness compares them between the reference and the target, exactly under
profile rc8, and under profile fixed lets an entry differ only where an erratum's text names it."""

from __future__ import annotations

import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.engine.differential import Example, Mismatch, Outcome, differential, judge
from ggspec.conformance.engine.registry import Check, Recorder
from ggspec.conformance.target import Target
from ggspec.reference import vdev as rv
from ggspec.reference.clauses import Profile

LOG = ("GPU0 alloc_buffer buft 64", "GPU0 set_tensor buffer#0 'x' 0 16", "GPU0 graph_compute backend 2 'a' 'b'")


def _example(clauses: tuple[str, ...], exp: tuple[str, ...], act: tuple[str, ...], profile: Profile,
             errata: frozenset[str] = frozenset()) -> Example:
    chk = Check("x.y", clauses, lambda t, rec: None, {}, "x")
    expected = Outcome([], "ok", entry_log=exp, profile=profile, errata=errata)
    return Example(chk, {}, expected, Outcome([], "ok", entry_log=act))


def test_equal_logs_pass_and_a_missing_log_is_not_judged() -> None:
    judge(_example(("BACK-8",), LOG, LOG, Profile.RC8))
    ex = _example(("BACK-8",), LOG, (), Profile.RC8)
    ex.actual.entry_log = None  # a target that keeps no log
    judge(ex)


def test_under_rc8_an_extra_entry_fails_and_the_report_shows_where_the_logs_part() -> None:
    extra = (*LOG[:2], "GPU0 supports_op backend 'a' ADD", LOG[2])
    with pytest.raises(Mismatch) as err:
        judge(_example(("SCHED-33",), extra, LOG, Profile.RC8))
    text = str(err.value)
    assert "entry logs part at entry 2 (reference 4 entries, target 3)" in text
    assert "reference: GPU0 supports_op backend 'a' ADD" in text
    assert "target:    GPU0 graph_compute backend 2 'a' 'b'" in text


def test_under_fixed_only_entries_an_erratum_names_may_differ() -> None:
    extra = (*LOG[:2], "GPU0 supports_op backend 'a' ADD", LOG[2])
    # SCHED-33's erratum names supports_op: the model asks it under fixed, rc.8 does not
    judge(_example(("SCHED-9",), extra, LOG, Profile.FIXED, errata=frozenset({"SCHED-33"})))
    judge(_example(("SCHED-33",), extra, LOG, Profile.FIXED))
    with pytest.raises(Mismatch):  # no erratum of the example names supports_op
        judge(_example(("SCHED-9",), extra, LOG, Profile.FIXED))
    other = (*LOG[:2], "GPU0 synchronize backend", LOG[2])
    with pytest.raises(Mismatch):  # SCHED-33's erratum does not name synchronize
        judge(_example(("SCHED-33",), other, LOG, Profile.FIXED))


def _clears(t: Target, rec: Recorder) -> None:
    """A device buffer cleared twice; its bytes recorded."""
    dev = t.vdev_init(rv.VDevParams(name="GPU0"))
    buf = t.backend_alloc_buffer(dev, 16)
    for value in (1, 2):
        t.buffer_clear(buf, value)
    rec("bytes", t.buffer_bytes(buf))


def test_a_model_that_calls_an_extra_entry_fails_a_device_check_on_native(monkeypatch: pytest.MonkeyPatch) -> None:
    """Live: the reference's device logs an entry call the target never makes (as the model's
    bookkeeping supports_op calls did): a scenario with a device fails on native by the log alone,
    under both profiles (no erratum names clear)."""
    chk = Check("t.clears", ("BUF-9",), _clears, {}, "t")
    for profile in (Profile.RC8, Profile.FIXED):
        differential(chk, {}, "native", profile)  # agrees as it is
    real = rv._buffer_clear

    def clear_logged_twice(buffer: rv.Buffer, value: int) -> None:
        rv._dbuf(buffer).note("clear", value)  # a call the model makes for itself
        real(buffer, value)

    monkeypatch.setattr(rv, "_buffer_clear", clear_logged_twice)
    for profile in (Profile.RC8, Profile.FIXED):
        with pytest.raises(Mismatch, match="entry logs part at entry 3"):
            differential(chk, {}, "native", profile)


def test_both_targets_merge_their_devices_logs_in_call_order() -> None:
    for name in ("reference", "native"):
        t = make_target(name, Profile.RC8)
        a = t.vdev_init(rv.VDevParams(name="A"))
        b = t.vdev_init(rv.VDevParams(name="A"))
        t.backend_synchronize(b)
        t.backend_synchronize(a)
        t.backend_synchronize(b)
        assert t.vdev_log() == ["A#1 synchronize backend", "A synchronize backend", "A#1 synchronize backend"], name
