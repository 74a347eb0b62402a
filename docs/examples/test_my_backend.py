"""Testing your own ggml-backend build with ggspec's strategies, from your own pytest suite.

Copy this file into your project's tests and point MY_TARGET at your build:

    MY_TARGET=external:ggml_:/path/to/include:/path/to/libggml.so pytest test_my_backend.py

(`external:PREFIX:INCLUDE_DIR:LIBRARY`, the same build `ggspec check --target external` takes;
the default, `native`, is ggspec's own build). Every test draws its inputs from
`ggspec.conformance`'s hypothesis strategies and holds the target to the reference model.
"""

from __future__ import annotations

import os

from ggspec.conformance.adapters import make_target
from ggspec.conformance.engine.differential import differential
from ggspec.conformance.engine.registry import CHECKS, Check, Recorder
from ggspec.conformance.engine.runner import load_checks
from ggspec.conformance.inputs.strategies import SchedCase, TensorSpec, payload, sched_cases, tensor_specs
from ggspec.conformance.target import Target
from ggspec.reference.clauses import Profile
from ggspec.reference.vdev import VDevParams
from hypothesis import given, settings
from hypothesis import strategies as st

MY_TARGET = os.environ.get("MY_TARGET", "native")
load_checks()  # the suite's own checks, to reuse their scenarios


@settings(max_examples=20, deadline=None)
@given(spec=tensor_specs(), data=st.data())
def test_bytes_survive_a_lazy_device(spec: TensorSpec, data: st.DataObject) -> None:
    """Bytes written with set_async and read back with get_async through a *lazy* virtual device
    (host memory is read and written only at synchronize) are the bytes written."""
    t = make_target(MY_TARGET)
    dev = t.vdev_init(VDevParams(name="MYDEV", lazy=True))
    x = t.new_tensor(spec.type, spec.ne, "x")
    buf = t.backend_alloc_buffer(dev, t.buft_get_alloc_size(t.backend_get_default_buffer_type(dev), x))
    t.tensor_alloc(buf, x, 0)
    n = t.nbytes(x)
    written = data.draw(payload(n), label="payload")
    src, dst = t.host_alloc(n), t.host_alloc(n)
    t.host_write(src, 0, written)
    t.tensor_set_async(dev, x, src, 0, 0, n)
    t.tensor_get_async(dev, x, dst, 0, 0, n)
    t.backend_synchronize(dev)
    assert t.host_read(dst, 0, n) == written
    t.buffer_free(buf)
    t.backend_free(dev)


def scenario(t: Target, rec: Recorder, spec: TensorSpec, value: int) -> None:
    """Your own scenario: clear a device buffer, then read a tensor placed in it."""
    dev = t.vdev_init(VDevParams(name="MYDEV"))
    x = t.new_tensor(spec.type, spec.ne, "x")
    buf = t.backend_alloc_buffer(dev, t.nbytes(x))
    t.buffer_clear(buf, value)
    t.tensor_alloc(buf, x, 0)
    rec("bytes after clear", t.tensor_get(x, 0, t.nbytes(x)))
    t.buffer_free(buf)


MY_CHECK = Check("mine.clear_then_read", ("BUF-9",), scenario, {}, __name__)


@settings(max_examples=20, deadline=None)
@given(spec=tensor_specs(), value=st.integers(0, 255))
def test_my_scenario_agrees_with_the_reference(spec: TensorSpec, value: int) -> None:
    """`differential` runs a scenario on the reference model and on the target and raises
    `Mismatch` (with a reproducer) when they disagree."""
    differential(MY_CHECK, {"spec": spec, "value": value}, MY_TARGET, Profile.FIXED)


@settings(max_examples=5, deadline=None)
@given(case=sched_cases(max_steps=4, pin="all"))
def test_the_scheduler_copies_like_the_reference(case: SchedCase) -> None:
    """The suite's scheduler scenario `sched.pass4_copies` on graphs drawn by `sched_cases`:
    one copy per (input, backend), named `<backend>#<input>`."""
    differential(CHECKS["sched.pass4_copies"], {"case": case}, MY_TARGET, Profile.FIXED)
