"""native/'s thin Python wrapper: good calls reach the C code, misuse raises the reference's
typed exceptions (never an abort of the Python process)."""

from __future__ import annotations

import pytest
from ggspec.native import backend, buffer, copy, cpu, registry, tdata, tensor, vdev
from ggspec.reference.clauses import SpecViolation, UndefinedBehaviour, UsageError, UseAfterFree
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
    buf = cpu.cpu_buffer_from_ptr(bytearray(8), 8)
    assert buffer.buffer_get_base(buf) != 0
    null_buf = cpu.cpu_buffer_from_ptr(None, 0)
    with pytest.raises(SpecViolation) as err:
        buffer.buffer_get_base(null_buf)
    assert err.value.clause_id == "BUF-5"


def test_freed_objects_and_their_dependents_raise_use_after_free() -> None:
    c = tensor.init(1 << 16)
    b = cpu.cpu_init()
    buf = backend.backend_alloc_buffer(b, 256)
    t = tensor.new_tensor(c, GGMLType.F32, [8])
    tdata.tensor_alloc(buf, t, 0)
    v = tensor.view(tensor.init(1 << 16), t, [4], [], 0)
    buffer.buffer_free(buf)
    for call in (lambda: buffer.buffer_get_size(buf), lambda: tdata.tensor_set(t, bytes(4)), lambda: tensor.nbytes(v),
                 lambda: buffer.buffer_free(buf)):
        with pytest.raises(UseAfterFree):
            call()
    buffer.buffer_free(None)  # BUF-4: a no-op
    t2 = tensor.new_tensor(c, GGMLType.F32, [8])
    tensor.free(c)
    with pytest.raises(UseAfterFree):
        tensor.nbytes(t2)
    with pytest.raises(UseAfterFree):
        tensor.free(c)
    backend.backend_free(b)
    with pytest.raises(UseAfterFree):
        backend.backend_name(b)


def test_wrong_kinds_and_foreign_pointers_are_refused(ctx) -> None:  # type: ignore[no-untyped-def]
    from ggspec.native._lib import lib

    with pytest.raises(UsageError):
        vdev.vdev_pending(cpu.cpu_init())
    with pytest.raises(UsageError):
        buffer.buffer_name(cpu.cpu_init())  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        backend.backend_name(lib.ggspec_backend_cpu_init())  # a bare pointer is not a handle
    with pytest.raises(UsageError):
        tensor.view(None, tensor.new_tensor(ctx, GGMLType.F32, [4]), [2], [], 0)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        registry.reg_register("x", None, cpu.cpu_buffer_type())
    with pytest.raises(UsageError):
        registry.reg_register("x", lib.ggspec_py_init_fn, None)  # type: ignore[arg-type]


def test_buffer_from_ptr_needs_writable_memory_of_the_size() -> None:
    with pytest.raises(TypeError):
        cpu.cpu_buffer_from_ptr(bytes(64), 64)
    with pytest.raises(ValueError):
        cpu.cpu_buffer_from_ptr(bytearray(16), 64)
    np = pytest.importorskip("numpy")
    arr = np.zeros(64, dtype=np.uint8)
    buf = cpu.cpu_buffer_from_ptr(arr, 64)
    buffer.buffer_clear(buf, 7)
    assert arr.tolist() == [7] * 64


def test_a_view_reaching_past_its_buffer_is_refused_before_c(ctx) -> None:  # type: ignore[no-untyped-def]
    buf = backend.backend_alloc_buffer(cpu.cpu_init(), 64)
    root = tensor.new_tensor(ctx, GGMLType.F32, [16])
    tdata.tensor_alloc(buf, root, 0)
    wide = tensor.view(ctx, root, [1, 4], [4096], 0)  # passes CORE-5: 16 bytes of data, strides of 4 KiB
    with pytest.raises(UndefinedBehaviour):
        tdata.tensor_set(wide, bytes(tensor.nbytes(wide)))
    with pytest.raises(UndefinedBehaviour):
        tdata.tensor_get(wide, 0, tensor.nbytes(wide))
    tdata.tensor_set(wide, bytes(4))  # the first row is inside


def test_async_host_memory_is_checked_and_kept_alive() -> None:
    c = tensor.init(1 << 16)
    dev = vdev.vdev_init(VDevParams(lazy=True))
    buf = backend.backend_alloc_buffer(dev, 64)
    t = tensor.new_tensor(c, GGMLType.F32, [4])
    tdata.tensor_alloc(buf, t, 0)
    with pytest.raises(UsageError):
        tdata.tensor_set_async(dev, t, None, 0, 16)
    with pytest.raises(TypeError):
        tdata.tensor_get_async(dev, t, bytes(16), 0, 16)  # read-only
    tdata.tensor_set_async(dev, t, bytes(range(16)), 0, 16)  # a temporary: the wrapper keeps it
    out = bytearray(16)
    tdata.tensor_get_async(dev, t, out, 0, 16)
    backend.backend_synchronize(dev)
    assert bytes(out) == bytes(range(16))
    tensor.free(c)


def test_sizes_that_wrap_are_refused() -> None:
    """BUFT-7, profile fixed: the CPU type's size + 64 must not wrap; ggml_init's rounding that
    would wrap (CORE-79, where the C code aborts) is refused by the wrapper before the call."""
    for size in (2**64 - 1, 2**64 - 64):
        with pytest.raises(SpecViolation) as err:
            buffer.buft_alloc_buffer(cpu.cpu_buffer_type(), size)
        assert err.value.clause_id == "BUFT-7"
        with pytest.raises(SpecViolation):
            backend.backend_alloc_buffer(cpu.cpu_init(), size)
    with pytest.raises(ValueError):
        tensor.init(2**64 - 1)
    with pytest.raises(ValueError):
        buffer.buft_alloc_buffer(cpu.cpu_buffer_type(), 2**64)


def test_the_c_code_refuses_sizes_that_wrap_too() -> None:
    """native/src itself (not only its wrapper) aborts on a wrapping CPU allocation (BUFT-7)."""
    from forked import assert_aborts
    from ggspec.native._lib import lib

    assert_aborts(lambda: lib.ggspec_backend_buft_alloc_buffer(lib.ggspec_backend_cpu_buffer_type(), 2**64 - 1),
                  "failed to allocate buffer")
