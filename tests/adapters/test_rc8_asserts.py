"""The `rc8-asserts` target: rc.8 built without NDEBUG, so its C `assert()`s (compiled out of
release builds, and of the `rc8` target) are compiled in. Two behaviours the spec names but the
suite cannot check on a release build, each run on both builds, each in a forked worker:

- GCOPY-6: compare_graph_backend's consistency check (`t1->op == t2->op && same layout`) is an
  `assert()`: a callback that rewrites the caller's next node makes the debug build abort there,
  while the release build calls back for every node;
- COPY-7: the slow copy's warning (`#ifndef NDEBUG`) asks both buffers for their names: the
  devices' entry logs show two `get_name` calls the release build never makes. The entry-log
  comparison removes exactly those from a debug build's log (differential.debug_prints_removed),
  so that the checks that make a slow copy pass on `rc8-asserts` as on `rc8`, and nothing else.

Skips where rc.8 cannot be fetched, except under CI=true, where that fails.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.engine import isolate
from ggspec.conformance.engine.differential import debug_prints_removed
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.reference.clauses import Profile
from ggspec.reference.types import GGMLType, Op
from ggspec.reference.vdev import VDevParams

BUILDS = ("rc8", "rc8-asserts")


@pytest.fixture(scope="module")
def rc8_builds(rc8_or_skip: Any) -> None:
    for name in BUILDS:
        rc8_or_skip.target(name)


def _compare_with_a_rewriting_callback(name: str) -> list[int]:
    """x -> a = scale(x) -> b = scale(a) on a CPU buffer; compare on two CPU backends with a
    callback that, at node 0, turns the caller's b into a DUP of a (same layout, another op)."""
    t = make_target(name)
    f32 = int(GGMLType.F32)
    cpu = t.cpu_init()
    buf = t.backend_alloc_buffer(cpu, 3 * 64)
    x = t.new_tensor(f32, (16,), "x")
    t.tensor_alloc(buf, x, 0)
    t.tensor_set(x, bytes(64), 0, 64)
    a = t.op("scale", [x], [2.0])
    b = t.op("scale", [a], [0.5])
    for k, y in enumerate((a, b), start=1):
        t.tensor_alloc(buf, y, 64 * k)
    g = t.new_graph(16)
    t.build_forward_expand(g, b)
    calls: list[int] = []

    def callback(i: int, t1: object, t2: object) -> bool:
        calls.append(i)
        if i == 0:
            t.set_op(b, int(Op.DUP), [a])
        return True

    t.backend_compare_graph_backend(cpu, t.cpu_init(), g, callback)
    return calls


def test_compare_graph_backend_asserts_only_in_a_build_without_ndebug(rc8_builds: None) -> None:
    release = isolate.run_forked(lambda: _compare_with_a_rewriting_callback("rc8"))
    assert (release.status, release.value) == ("ok", [0, 1]), release.describe()
    debug = isolate.run_forked(lambda: _compare_with_a_rewriting_callback("rc8-asserts"))
    assert debug.status == "signal" and debug.signum == signal.SIGABRT, debug.describe()
    assert "t1->op == t2->op" in debug.stderr, debug.stderr


def _slow_copy_log(name: str) -> list[str]:
    """A tensor copied from one virtual device's buffer to another's (no cpy_tensor entry: the
    slow copy through host memory); the devices' entry logs from the copy on."""
    t = make_target(name)
    f32 = int(GGMLType.F32)
    tensors = []
    for dev_name in ("A", "B"):
        dev = t.vdev_init(VDevParams(name=dev_name, buffer_cpy_tensor=False))
        y = t.new_tensor(f32, (4,), dev_name.lower())
        t.tensor_alloc(t.backend_alloc_buffer(dev, 64), y, 0)
        tensors.append(y)
    before = len(t.vdev_log())
    t.tensor_copy(tensors[0], tensors[1])
    return t.vdev_log()[before:]


def test_the_slow_copy_warning_asks_for_names_only_without_ndebug(rc8_builds: None) -> None:
    release = isolate.run_forked(lambda: _slow_copy_log("rc8"))
    debug = isolate.run_forked(lambda: _slow_copy_log("rc8-asserts"))
    assert release.status == debug.status == "ok", (release.describe(), debug.describe())
    assert not any(" get_name " in e for e in release.value), release.value
    # both names are the warning's arguments: their order is the compiler's (gcc: right to left)
    assert sorted(e for e in debug.value if " get_name " in e) == ["A get_name buffer#0", "B get_name buffer#0"], debug.value
    assert [e for e in debug.value if " get_name " not in e] == release.value


def test_the_comparison_removes_the_warnings_names_and_nothing_else() -> None:
    warning = ("B get_name buffer#0", "A get_name buffer#1")
    copy = ("A get_tensor buffer#1 'a' 0 16", "B set_tensor buffer#0 'b' 0 16")
    before = ("A set_tensor buffer#1 'a' 0 16",)
    assert debug_prints_removed(before + warning + copy) == before + copy
    assert debug_prints_removed(before + warning[::-1] + copy) == before + copy
    # names not directly followed by the staged copy, or not naming the destination, stay
    assert debug_prints_removed(warning + before + copy) == warning + before + copy
    other = ("C get_name buffer#0", "A get_name buffer#1")
    assert debug_prints_removed(other + copy) == other + copy
    backend_names = ("B get_name backend", "A get_name backend")
    assert debug_prints_removed(backend_names + copy) == backend_names + copy


@pytest.mark.parametrize("name", ["copy.slow_copy_stages_through_host", "sched.compute_copies_then_runs"])
def test_checks_with_a_slow_copy_pass_on_the_debug_build(rc8_builds: None, name: str) -> None:
    """A check whose scenarios make slow copies (one of the 22 that failed on rc8-asserts before
    the comparison knew the warning's calls) passes there under profile rc8."""
    load_checks()
    result = run_check(CHECKS[name], RunConfig("rc8-asserts", Profile.RC8, max_examples=20, seed=3001736897,
                                               c_reproducers=False))
    assert result.status == "pass", result.detail
