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


def _clear_then_overrun(t: Target, rec: Recorder) -> None:
    """A device buffer cleared and its bytes recorded; then a tensor_set past the tensor's end
    (TDATA-3's assert)."""
    dev = t.vdev_init(rv.VDevParams(name="GPU0"))
    buf = t.backend_alloc_buffer(dev, 64)
    t.buffer_clear(buf, 1)
    rec("bytes", t.buffer_bytes(buf))
    x = t.new_tensor(0, (4,), "x")
    t.tensor_alloc(buf, x, 0)
    t.tensor_set(x, bytes(32), 0, 32)


def test_an_example_that_aborts_is_compared_up_to_the_last_observation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Live: the reference stops at TDATA-3's assert, native aborts there in a forked worker. The
    logs up to the one observation before the stop are compared: equal as they are; with the
    model logging a call of its own before that observation, the example fails by the log."""
    chk = Check("t.overrun", ("TDATA-3",), _clear_then_overrun, {}, "t")
    for profile in (Profile.RC8, Profile.FIXED):
        ex = differential(chk, {}, "native", profile)
        assert ex.expected.ending == "violation" and ex.actual.ending == "abort"
        assert ex.expected.logs_at[1] == ex.actual.logs_at[1] and "GPU0 clear buffer#0 1" in ex.actual.logs_at[1]
    real = rv._buffer_clear

    def clear_logged_twice(buffer: rv.Buffer, value: int) -> None:
        rv._dbuf(buffer).note("clear", value)
        real(buffer, value)

    monkeypatch.setattr(rv, "_buffer_clear", clear_logged_twice)
    for profile in (Profile.RC8, Profile.FIXED):
        with pytest.raises(Mismatch, match=r"entry logs part at entry \d+ .*\n(.*\n)*.*up to observation 1, the "
                                           r"reference's last before its violation"):
            differential(chk, {}, "native", profile)


def test_before_a_stop_the_target_log_is_taken_at_the_reference_s_last_observation() -> None:
    chk = Check("x.y", ("TDATA-3",), lambda t, rec: None, {}, "x")
    obs = [("a", 1)]
    expected = Outcome(obs, "ub", "TDATA-3", profile=Profile.RC8, logs_at={1: LOG[:2]})
    # the target went on past the reference's stop: its later entries are not compared
    actual = Outcome([*obs, ("b", 2)], "crash", logs_at={1: LOG[:2], 2: LOG})
    judge(Example(chk, {}, expected, actual))
    actual.logs_at[1] = LOG[:1]
    with pytest.raises(Mismatch, match="up to observation 1"):
        judge(Example(chk, {}, expected, actual))
    actual.logs_at = {}  # no log from the target (in process, or no device log): not judged
    judge(Example(chk, {}, expected, actual))
