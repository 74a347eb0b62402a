"""native/'s thin Python wrapper: good calls reach the C code, misuse raises the reference's
typed exceptions (never an abort of the Python process)."""

from __future__ import annotations

import pytest
from ggspec.native import backend, buffer, copy, cpu, registry, tdata, tensor, vdev
from ggspec.reference.clauses import SpecViolation, UsageError
from ggspec.reference.types import GGMLType
from ggspec.reference.vdev import VDevParams
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture()
def ctx():  # type: ignore[no-untyped-def]
    c = tensor.init()
    yield c
    tensor.free(c)


def test_round_trip_on_cpu_and_device(ctx) -> None:  # type: ignore[no-untyped-def]
    for b in (cpu.cpu_init(), vdev.vdev_init(VDevParams(lazy=True))):
        buf = backend.backend_alloc_buffer(b, 64)
        t = tensor.new_tensor(ctx, GGMLType.F32, [4, 2])
        tdata.tensor_alloc(buf, t, 0)
        tdata.tensor_set(t, bytes(range(32)))
        assert tdata.tensor_get(t, 8, 8) == bytes(range(8, 16))
        assert buffer.buffer_name(buf) == backend.backend_name(b)


@given(excess=st.integers(1, 100))
def test_out_of_bounds_is_a_spec_violation(excess: int) -> None:
    c = tensor.init(1 << 16)
    try:
        buf = backend.backend_alloc_buffer(cpu.cpu_init(), 256)
        t = tensor.new_tensor(c, GGMLType.F16, [8])
        tdata.tensor_alloc(buf, t, 0)
        with pytest.raises(SpecViolation) as err:
            tdata.tensor_set(t, bytes(16 + excess))
        assert err.value.clause_id == "TDATA-3"
        with pytest.raises(SpecViolation) as err:
            tdata.tensor_get(t, excess, 16)
        assert err.value.clause_id == "TDATA-7"
    finally:
        tensor.free(c)


def test_misuse_is_typed(ctx) -> None:  # type: ignore[no-untyped-def]
    t = tensor.new_tensor(ctx, GGMLType.F32, [4])
    with pytest.raises(SpecViolation) as err:
        tdata.tensor_get(t, 0, 4)
    assert err.value.clause_id == "TDATA-5"
    with pytest.raises(UsageError):
        tdata.tensor_set(None, b"x")
    with pytest.raises(SpecViolation) as err:
        copy.tensor_copy(t, tensor.new_tensor(ctx, GGMLType.F16, [4]))
    assert err.value.clause_id == "COPY-2"
    with pytest.raises(SpecViolation) as err:
        cpu.cpu_set_n_threads(vdev.vdev_init(), 2)
    assert err.value.clause_id == "CPU-13"
    with pytest.raises(SpecViolation) as err:
        tensor.view(ctx, t, [5], [], 0)
    assert err.value.clause_id == "CORE-5"
    with pytest.raises(SpecViolation) as err:
        registry.reg_get_name(registry.reg_get_count())
    assert err.value.clause_id == "REG-6"
    with pytest.raises(ValueError):
        buffer.buffer_clear(backend.backend_alloc_buffer(cpu.cpu_init(), 8), 256)


def test_null_base_is_a_spec_violation() -> None:
    buf = cpu.cpu_buffer_from_ptr(__import__("ggspec.native._lib", fromlist=["ffi"]).ffi.new("uint8_t[]", 8), 8)
    assert buffer.buffer_get_base(buf) != 0
    from ggspec.native._lib import ffi, lib

    null_buf = lib.ggspec_backend_cpu_buffer_from_ptr(ffi.NULL, 8)
    with pytest.raises(SpecViolation) as err:
        buffer.buffer_get_base(null_buf)
    assert err.value.clause_id == "BUF-5"
