"""Smoke tests of the native build (ggspec.native._native, or the build GGSPEC_NATIVE_MODULE names).

They exercise each area once through the raw cffi binding: the CPU backend, tensor placement
and data access (including views made after their root was placed: errata 1 and 2 of rc.8,
corrected in ggspec's "fixed" profile), the virtual device (eager and lazy queues, device
addresses the host cannot read), the registry and one assert. Process-global state (the
registry) and aborts are tested in forked children.
"""

from __future__ import annotations

import contextlib
import errno
import faulthandler
import importlib
import os
import signal
import struct
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ggspec.native import load_lib
from made import ALL_OPS, context, vdev  # noqa: F401 - ALL_OPS for the tests below

ffi, lib = load_lib()

SIZE_MAX = 2**64 - 1


# --- helpers ------------------------------------------------------------------------------


class Child:
    """How a forked child ended: exit status or signal, and what it wrote on stderr."""

    def __init__(self, status: int, stderr: str) -> None:
        self.status = status
        self.stderr = stderr

    @property
    def exit_code(self) -> int | None:
        return os.waitstatus_to_exitcode(self.status) if os.WIFEXITED(self.status) else None

    @property
    def signal(self) -> int | None:
        return os.WTERMSIG(self.status) if os.WIFSIGNALED(self.status) else None


def run_forked(fn: Callable[[], None]) -> Child:
    """Run `fn` in a forked child; a raised exception makes the child exit with 1."""
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        os.dup2(w, 2)
        faulthandler.disable()  # an expected abort needs no Python traceback dump
        code = 0
        try:
            fn()
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stderr.flush()
        os._exit(code)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return Child(status, b"".join(chunks).decode(errors="replace"))


def assert_no_sanitizer_report(child: Child) -> None:
    """A sanitizer build (see GGSPEC_NATIVE_MODULE) reports on stderr; there must be nothing."""
    assert "Sanitizer" not in child.stderr and "runtime error:" not in child.stderr, child.stderr


def assert_child_ok(child: Child) -> None:
    assert child.exit_code == 0, f"child failed (status {child.status}):\n{child.stderr}"
    assert_no_sanitizer_report(child)


@pytest.fixture
def ctx() -> Iterator[Any]:
    """A no_alloc context: tensors get their bytes from buffers."""
    yield from context(64 * lib.ggspec_tensor_overhead(), no_alloc=True)


def addr(p: Any) -> int:
    return int(ffi.cast("uintptr_t", p))


def place(buffer: Any, tensor: Any, offset: int = 0) -> None:
    """tensor_alloc at the first aligned address at or after base + offset."""
    align = lib.ggspec_backend_buffer_get_alignment(buffer)
    base = addr(lib.ggspec_backend_buffer_get_base(buffer))
    at = (base + offset + align - 1) // align * align
    lib.ggspec_backend_tensor_alloc(buffer, tensor, ffi.cast("void *", at))


def floats(*xs: float) -> Any:
    return ffi.new("float[]", list(xs))


def get_floats(tensor: Any, n: int, offset: int = 0) -> list[float]:
    out = ffi.new("float[]", n)
    lib.ggspec_backend_tensor_get(tensor, out, offset, 4 * n)
    return list(out)


def device_bytes(buffer: Any, offset: int, size: int) -> bytes:
    out = ffi.new("char[]", size)
    lib.ggspec_vdev_read(buffer, offset, out, size)
    data: bytes = ffi.buffer(out, size)[:]
    return data


def f32(*xs: float) -> bytes:
    return struct.pack(f"<{len(xs)}f", *xs)


# --- core ---------------------------------------------------------------------------------


def test_type_traits() -> None:
    expect = {
        lib.GGSPEC_TYPE_F32: (1, 4, "f32", lib.GGSPEC_TYPE_F32),
        lib.GGSPEC_TYPE_F16: (1, 2, "f16", lib.GGSPEC_TYPE_F16),
        lib.GGSPEC_TYPE_Q4_0: (32, 18, "q4_0", lib.GGSPEC_TYPE_Q8_0),
        lib.GGSPEC_TYPE_Q8_0: (32, 34, "q8_0", lib.GGSPEC_TYPE_Q8_0),
        lib.GGSPEC_TYPE_Q8_K: (256, 292, "q8_K", lib.GGSPEC_TYPE_F32),
        lib.GGSPEC_TYPE_IQ2_XXS: (256, 66, "iq2_xxs", lib.GGSPEC_TYPE_Q8_K),
        lib.GGSPEC_TYPE_IQ2_XS: (256, 74, "iq2_xs", lib.GGSPEC_TYPE_Q8_K),
    }
    for t, (blck, size, name, vdt) in expect.items():
        assert (lib.ggspec_blck_size(t), lib.ggspec_type_size(t)) == (blck, size)
        assert ffi.string(lib.ggspec_type_name(t)).decode() == name
        assert lib.ggspec_vec_dot_type(t) == vdt
        assert lib.ggspec_is_quantized(t) == (blck > 1)
    int_types = (
        (lib.GGSPEC_TYPE_I8, 1, "i8"),
        (lib.GGSPEC_TYPE_I16, 2, "i16"),
        (lib.GGSPEC_TYPE_I32, 4, "i32"),
    )
    for t, size, name in int_types:
        assert (lib.ggspec_blck_size(t), lib.ggspec_type_size(t)) == (1, size)
        assert ffi.string(lib.ggspec_type_name(t)).decode() == name
    assert (lib.GGSPEC_TYPE_I8, lib.GGSPEC_TYPE_COUNT) == (18, 21)
    assert (lib.GGSPEC_OP_VIEW, lib.GGSPEC_OP_MUL_MAT, lib.GGSPEC_OP_COUNT) == (31, 23, 72)


def test_new_tensor_is_contiguous(ctx: Any) -> None:
    t = lib.ggspec_new_tensor_3d(ctx, lib.GGSPEC_TYPE_F32, 4, 3, 2)
    assert list(t.ne) == [4, 3, 2, 1]
    assert list(t.nb) == [4, 16, 48, 96]
    assert t.data == ffi.NULL and t.buffer == ffi.NULL and t.view_src == ffi.NULL
    assert t.op == lib.GGSPEC_OP_NONE
    assert lib.ggspec_nbytes(t) == 96

    q = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_Q4_0, 64, 3)
    assert list(q.nb) == [18, 36, 108, 108]
    assert lib.ggspec_nbytes(q) == 108


def test_context_that_allocates_gives_data() -> None:
    params = ffi.new("struct ggspec_init_params *", {"mem_size": 4096, "no_alloc": False})
    c = lib.ggspec_init(params[0])
    try:
        t = lib.ggspec_new_tensor_1d(c, lib.GGSPEC_TYPE_F32, 8)
        assert t.data != ffi.NULL
        v = lib.ggspec_view_1d(c, t, 2, 8)
        assert addr(v.data) == addr(t.data) + 8
        assert lib.ggspec_get_first_tensor(c) == t
        assert lib.ggspec_get_next_tensor(c, t) == v
    finally:
        lib.ggspec_free(c)


# --- CPU backend --------------------------------------------------------------------------


def test_cpu_buffer_basics() -> None:
    buft = lib.ggspec_backend_cpu_buffer_type()
    assert ffi.string(lib.ggspec_backend_buft_name(buft)) == b"CPU"
    assert lib.ggspec_backend_buft_get_alignment(buft) == 64
    assert lib.ggspec_backend_buft_is_host(buft)

    buf = lib.ggspec_backend_buft_alloc_buffer(buft, 100)
    try:
        assert lib.ggspec_backend_buffer_get_size(buf) == 164  # rc.8 pads by the alignment
        assert ffi.string(lib.ggspec_backend_buffer_name(buf)) == b"CPU"
        assert lib.ggspec_backend_buffer_get_type(buf) == buft
        assert lib.ggspec_backend_buffer_is_host(buf)
        assert buf.usage == lib.GGSPEC_BACKEND_BUFFER_USAGE_ANY
        lib.ggspec_backend_buffer_set_usage(buf, lib.GGSPEC_BACKEND_BUFFER_USAGE_WEIGHTS)
        assert buf.usage == lib.GGSPEC_BACKEND_BUFFER_USAGE_WEIGHTS
        lib.ggspec_backend_buffer_clear(buf, 0xAB)
        assert ffi.buffer(lib.ggspec_backend_buffer_get_base(buf), 164)[:] == b"\xab" * 164
    finally:
        lib.ggspec_backend_buffer_free(buf)
    lib.ggspec_backend_buffer_free(ffi.NULL)  # a no-op

    backend = lib.ggspec_backend_cpu_init()
    try:
        assert ffi.string(lib.ggspec_backend_name(backend)) == b"CPU"
        assert lib.ggspec_backend_is_cpu(backend) and not lib.ggspec_backend_is_cpu(ffi.NULL)
        assert lib.ggspec_backend_get_alignment(backend) == 64
        assert lib.ggspec_backend_cpu_get_n_threads(backend) == 4
        lib.ggspec_backend_cpu_set_n_threads(backend, 2)
        assert lib.ggspec_backend_cpu_get_n_threads(backend) == 2
        assert lib.ggspec_backend_buft_supports_backend(buft, backend)
        assert backend.iface.set_tensor_async == ffi.NULL and backend.iface.synchronize == ffi.NULL
    finally:
        lib.ggspec_backend_free(backend)
    assert ffi.string(lib.ggspec_backend_name(ffi.NULL)) == b"NULL"


def test_cpu_buffer_from_ptr_does_not_own() -> None:
    mem = ffi.new("char[]", 256)
    buf = lib.ggspec_backend_cpu_buffer_from_ptr(mem, 256)
    assert lib.ggspec_backend_buffer_get_base(buf) == mem
    assert lib.ggspec_backend_buffer_get_size(buf) == 256
    assert buf.iface.free_buffer == ffi.NULL
    lib.ggspec_backend_buffer_free(buf)  # must not free `mem`


def test_set_get_round_trip(ctx: Any) -> None:
    buf = lib.ggspec_backend_buft_alloc_buffer(lib.ggspec_backend_cpu_buffer_type(), 256)
    try:
        t = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_F32, 8)
        place(buf, t)
        assert t.buffer == buf and t.data != ffi.NULL
        lib.ggspec_backend_tensor_set(t, floats(*range(8)), 0, 32)
        assert get_floats(t, 8) == [float(i) for i in range(8)]
        lib.ggspec_backend_tensor_set(t, floats(-1, -2), 8, 8)
        assert get_floats(t, 4) == [0.0, 1.0, -1.0, -2.0]
    finally:
        lib.ggspec_backend_buffer_free(buf)


def test_view_made_after_allocation(ctx: Any) -> None:
    """Errata 1 and 2: tensor_set/get of a view with data but no buffer of its own."""
    buf = lib.ggspec_backend_buft_alloc_buffer(lib.ggspec_backend_cpu_buffer_type(), 256)
    try:
        t = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_F32, 8)
        lib.ggspec_set_name(t, b"t")
        place(buf, t)
        lib.ggspec_backend_tensor_set(t, floats(*range(8)), 0, 32)

        v = lib.ggspec_view_1d(ctx, t, 4, 16)
        assert v.buffer == ffi.NULL and v.view_src == t and v.src[0] == t
        assert addr(v.data) == addr(t.data) + 16 and v.view_offs == 16
        assert v.op == lib.GGSPEC_OP_VIEW
        assert ffi.string(lib.ggspec_get_name(v)) == b"t (view)"
        assert ffi.cast("size_t *", v.op_params)[0] == 16

        assert get_floats(v, 4) == [4.0, 5.0, 6.0, 7.0]  # erratum 2
        lib.ggspec_backend_tensor_set(v, floats(40, 50), 4, 8)  # erratum 1
        assert get_floats(t, 8) == [0, 1, 2, 3, 4, 40, 50, 7]

        # a view of a view is rooted at t, offsets add up
        vv = lib.ggspec_view_1d(ctx, v, 2, 8)
        assert vv.view_src == t and vv.src[0] == v and vv.view_offs == 24
        assert get_floats(vv, 2) == [50.0, 7.0]

        lib.ggspec_backend_view_init(buf, v)
        assert v.buffer == buf
    finally:
        lib.ggspec_backend_buffer_free(buf)


def test_cpu_supports_op(ctx: Any) -> None:
    backend = lib.ggspec_backend_cpu_init()
    try:
        a = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_Q4_0, 32, 2)
        b = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F16, 32, 2)
        mm = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, 2, 2)
        mm.op = lib.GGSPEC_OP_MUL_MAT
        mm.src[0], mm.src[1] = a, b
        assert not lib.ggspec_backend_supports_op(backend, mm)
        b.type = lib.GGSPEC_TYPE_Q8_0
        assert lib.ggspec_backend_supports_op(backend, mm)
        cpy = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_IQ2_XS, 256)
        cpy.op = lib.GGSPEC_OP_CPY
        assert not lib.ggspec_backend_supports_op(backend, cpy)
    finally:
        lib.ggspec_backend_free(backend)


# --- virtual device -----------------------------------------------------------------------


def test_vdev_basics(ctx: Any) -> None:
    be = vdev("GPU0", alignment=128, alloc_pad=256, ops=(1 << lib.GGSPEC_OP_ADD, 0))
    other = vdev("GPU1")
    try:
        buft = lib.ggspec_vdev_buffer_type(be)
        assert lib.ggspec_backend_is_vdev(be) and not lib.ggspec_backend_is_vdev(ffi.NULL)
        assert lib.ggspec_backend_get_default_buffer_type(be) == buft
        assert ffi.string(lib.ggspec_backend_name(be)) == b"GPU0"
        assert ffi.string(lib.ggspec_backend_buft_name(buft)) == b"GPU0"
        assert lib.ggspec_backend_buft_get_alignment(buft) == 128
        assert not lib.ggspec_backend_buft_is_host(buft)
        assert lib.ggspec_backend_buft_supports_backend(buft, be)
        assert not lib.ggspec_backend_buft_supports_backend(buft, other)

        t = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_F32, 10)
        assert lib.ggspec_backend_buft_get_alloc_size(buft, t) == 256  # 40 padded to 256
        t.op = lib.GGSPEC_OP_ADD
        assert lib.ggspec_backend_supports_op(be, t)
        t.op = lib.GGSPEC_OP_MUL
        assert not lib.ggspec_backend_supports_op(be, t)

        buf = lib.ggspec_backend_alloc_buffer(be, 1000)
        assert lib.ggspec_backend_buffer_get_size(buf) == 1000
        assert ffi.string(lib.ggspec_backend_buffer_name(buf)) == b"GPU0"
        place(buf, t)
        assert lib.ggspec_vdev_init_tensor_calls(buf) == 1
        lib.ggspec_backend_buffer_reset(buf)
        assert lib.ggspec_vdev_reset_calls(buf) == 1
        lib.ggspec_backend_tensor_set(t, f32(1, 2), 4, 8)
        start = addr(t.data) - addr(lib.ggspec_backend_buffer_get_base(buf))
        assert device_bytes(buf, start, 12) == f32(0, 1, 2)
        lib.ggspec_backend_buffer_clear(buf, 7)
        assert device_bytes(buf, 0, 1000) == b"\x07" * 1000
        lib.ggspec_backend_buffer_free(buf)
    finally:
        lib.ggspec_backend_free(be)
        lib.ggspec_backend_free(other)


def test_vdev_base_is_not_host_memory() -> None:
    be = vdev()
    buf = lib.ggspec_backend_alloc_buffer(be, 100)
    try:
        base = addr(lib.ggspec_backend_buffer_get_base(buf))
        with open("/proc/self/maps") as maps:
            for line in maps:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if lo <= base < hi:
                    assert line.split()[1].startswith("---"), line
                    break
            else:
                pytest.fail("device base is not mapped at all")
        # the kernel refuses to read it (EFAULT) instead of the process faulting
        r, w = os.pipe()
        try:
            with pytest.raises(OSError) as e:
                os.write(w, ffi.buffer(ffi.cast("char *", base), 16))
            assert e.value.errno == errno.EFAULT
        finally:
            os.close(r)
            os.close(w)
    finally:
        lib.ggspec_backend_buffer_free(buf)
        lib.ggspec_backend_free(be)


@contextlib.contextmanager
def _device_tensor(ctx: Any, *, lazy: bool) -> Iterator[tuple[Any, Any, Any, int]]:
    """A virtual device, a buffer of it and a 4-float tensor placed there: (backend, buffer,
    tensor, the tensor's offset in the buffer); the buffer and the device are freed after."""
    be = vdev(lazy=lazy)
    buf = lib.ggspec_backend_alloc_buffer(be, 256)
    try:
        t = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_F32, 4)
        place(buf, t)
        yield be, buf, t, addr(t.data) - addr(lib.ggspec_backend_buffer_get_base(buf))
    finally:
        lib.ggspec_backend_buffer_free(buf)
        lib.ggspec_backend_free(be)


def test_vdev_eager_async_runs_at_submission(ctx: Any) -> None:
    with _device_tensor(ctx, lazy=False) as (be, buf, t, start):
        host = floats(1, 2, 3, 4)
        lib.ggspec_backend_tensor_set_async(be, t, host, 0, 16)
        host[0] = 99  # too late: the bytes were read at submission
        assert lib.ggspec_vdev_pending(be) == 0
        assert device_bytes(buf, start, 16) == f32(1, 2, 3, 4)
        out = floats(0, 0, 0, 0)
        lib.ggspec_backend_tensor_get_async(be, t, out, 0, 16)
        assert list(out) == [1, 2, 3, 4]


def test_vdev_lazy_async_runs_in_order_at_synchronize(ctx: Any) -> None:
    with _device_tensor(ctx, lazy=True) as (be, buf, t, start):
        h1, h2 = floats(1, 2, 3, 4), floats(5, 6, 7, 8)
        o1, o2 = floats(0, 0, 0, 0), floats(0, 0, 0, 0)
        lib.ggspec_backend_tensor_set_async(be, t, h1, 0, 16)
        lib.ggspec_backend_tensor_get_async(be, t, o1, 0, 16)
        lib.ggspec_backend_tensor_set_async(be, t, h2, 0, 16)
        lib.ggspec_backend_tensor_get_async(be, t, o2, 0, 16)
        h1[0] = 10  # host memory is read only at synchronize
        assert lib.ggspec_vdev_pending(be) == 4
        assert device_bytes(buf, start, 16) == bytes(16)
        assert list(o1) == [0, 0, 0, 0]

        lib.ggspec_backend_synchronize(be)
        assert lib.ggspec_vdev_pending(be) == 0
        assert list(o1) == [10, 2, 3, 4]
        assert list(o2) == [5, 6, 7, 8]
        assert device_bytes(buf, start, 16) == f32(5, 6, 7, 8)

        # a synchronous access drains the queue first
        lib.ggspec_backend_tensor_set_async(be, t, h1, 0, 16)
        assert get_floats(t, 4) == [10, 2, 3, 4]
        assert lib.ggspec_vdev_pending(be) == 0


def test_copies_between_cpu_and_vdev(ctx: Any) -> None:
    with _device_tensor(ctx, lazy=True) as (be, dbuf, d, _):
        cbuf = lib.ggspec_backend_buft_alloc_buffer(lib.ggspec_backend_cpu_buffer_type(), 64)
        try:
            c = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_F32, 4)
            place(cbuf, c)
            lib.ggspec_backend_tensor_set(c, floats(1, 2, 3, 4), 0, 16)
            lib.ggspec_backend_tensor_copy(c, d)  # host source: tensor_set into the device
            assert get_floats(d, 4) == [1, 2, 3, 4]

            d2 = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_F32, 4)
            place(dbuf, d2, 64)
            lib.ggspec_backend_tensor_copy_async(be, d, d2)  # same device: queued
            assert lib.ggspec_vdev_pending(be) == 1
            lib.ggspec_backend_synchronize(be)
            assert get_floats(d2, 4) == [1, 2, 3, 4]

            lib.ggspec_backend_tensor_set(c, floats(0, 0, 0, 0), 0, 16)
            lib.ggspec_backend_tensor_copy(d2, c)  # host destination: tensor_get from the device
            assert get_floats(c, 4) == [1, 2, 3, 4]
        finally:
            lib.ggspec_backend_buffer_free(cbuf)


# --- registry (process-global: in forked children) ----------------------------------------


def test_registry_basics() -> None:
    def body() -> None:
        seen: list[tuple[bytes, int]] = []

        @ffi.def_extern()  # type: ignore[untyped-decorator]
        def ggspec_py_init_fn(params: Any, user_data: Any) -> Any:
            seen.append((ffi.string(params), addr(user_data)))
            return lib.ggspec_backend_cpu_init()

        # registered before the first query: comes before the lazily added CPU entry
        lib.ggspec_backend_register(
            b"PY", lib.ggspec_py_init_fn, lib.ggspec_backend_cpu_buffer_type(), ffi.cast("void *", 1234)
        )
        assert lib.ggspec_backend_reg_get_count() == 2
        assert ffi.string(lib.ggspec_backend_reg_get_name(0)) == b"PY"
        assert ffi.string(lib.ggspec_backend_reg_get_name(1)) == b"CPU"
        assert lib.ggspec_backend_reg_find_by_name(b"CPU") == 1
        assert lib.ggspec_backend_reg_find_by_name(b"nope") == SIZE_MAX

        cpu = lib.ggspec_backend_reg_init_backend_from_str(b"CPU")
        assert lib.ggspec_backend_is_cpu(cpu)
        lib.ggspec_backend_free(cpu)

        py = lib.ggspec_backend_reg_init_backend_from_str(b"PY:a:b")
        assert lib.ggspec_backend_is_cpu(py)
        lib.ggspec_backend_free(py)
        assert seen == [(b"a:b", 1234)]

        assert lib.ggspec_backend_reg_init_backend_from_str(b"nope:x") == ffi.NULL
        assert lib.ggspec_backend_reg_get_default_buffer_type(1) == lib.ggspec_backend_cpu_buffer_type()
        buf = lib.ggspec_backend_reg_alloc_buffer(1, 10)
        assert lib.ggspec_backend_buffer_get_size(buf) == 74
        lib.ggspec_backend_buffer_free(buf)

        long_name = b"x" * 200
        lib.ggspec_backend_register(long_name, lib.ggspec_py_init_fn, ffi.NULL, ffi.NULL)
        assert ffi.string(lib.ggspec_backend_reg_get_name(2)) == b"x" * 127

    child = run_forked(body)
    assert_child_ok(child)
    assert "backend nope not found" in child.stderr


def test_registry_first_query_adds_cpu() -> None:
    def body() -> None:
        assert lib.ggspec_backend_reg_get_count() == 1
        assert ffi.string(lib.ggspec_backend_reg_get_name(0)) == b"CPU"

    assert_child_ok(run_forked(body))


# --- asserts (death tests) ----------------------------------------------------------------


def _set_out_of_bounds(module_lib: Any, module_ffi: Any) -> None:
    params = module_ffi.new("struct ggspec_init_params *", {"mem_size": 4096, "no_alloc": True})
    c = module_lib.ggspec_init(params[0])
    buf = module_lib.ggspec_backend_buft_alloc_buffer(module_lib.ggspec_backend_cpu_buffer_type(), 256)
    t = module_lib.ggspec_new_tensor_1d(c, module_lib.GGSPEC_TYPE_F32, 4)
    module_lib.ggspec_backend_tensor_alloc(buf, t, module_lib.ggspec_backend_buffer_get_base(buf))
    data = module_ffi.new("char[]", 17)
    module_lib.ggspec_backend_tensor_set(t, data, 0, 17)  # nbytes + 1
    module_lib.ggspec_backend_buffer_free(buf)
    module_lib.ggspec_free(c)


def test_tensor_set_out_of_bounds_aborts() -> None:
    child = run_forked(lambda: _set_out_of_bounds(lib, ffi))
    assert child.signal == signal.SIGABRT, child.stderr
    assert_no_sanitizer_report(child)
    assert "GGML_ASSERT: " in child.stderr
    assert "tensor write out of bounds" in child.stderr


def test_buffer_init_without_get_base_aborts() -> None:
    def body() -> None:
        iface = ffi.new("struct ggspec_backend_buffer_i *")
        lib.ggspec_backend_buffer_init(lib.ggspec_backend_cpu_buffer_type(), iface[0], ffi.NULL, 0)

    child = run_forked(body)
    assert child.signal == signal.SIGABRT, child.stderr
    assert_no_sanitizer_report(child)
    assert "GGML_ASSERT: " in child.stderr and "iface.get_base != NULL" in child.stderr


# --- defect variants ----------------------------------------------------------------------


def _import_variant(directory: Path, name: str) -> Any:
    sys.path.insert(0, str(directory))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(directory))


@pytest.mark.skipif(bool(os.environ.get("GGSPEC_NATIVE_MODULE")),
                    reason="builds its own variants, uninstrumented: under a sanitizer build it repeats the default run")
def test_defect_variants_build_and_misbehave(tmp_path: Path) -> None:
    from ggspec.native.build import build_variant

    so = build_variant("_ggspec_defect_bounds", str(tmp_path), defines=["GGSPEC_DEFECT_BOUNDS"])
    assert os.path.exists(so)
    bounds = _import_variant(tmp_path, "_ggspec_defect_bounds")
    child = run_forked(lambda: _set_out_of_bounds(bounds.lib, bounds.ffi))
    assert_child_ok(child)  # nbytes + 1 is accepted

    so = build_variant("_ggspec_defect_copy", str(tmp_path), defines=["GGSPEC_DEFECT_COPY_VIEW_OFFSET"])
    assert os.path.exists(so)
    m = _import_variant(tmp_path, "_ggspec_defect_copy")
    vffi, vlib = m.ffi, m.lib
    params = vffi.new("struct ggspec_init_params *", {"mem_size": 4096, "no_alloc": True})
    c = vlib.ggspec_init(params[0])
    buf = vlib.ggspec_backend_buft_alloc_buffer(vlib.ggspec_backend_cpu_buffer_type(), 256)
    try:
        root = vlib.ggspec_new_tensor_1d(c, vlib.GGSPEC_TYPE_F32, 8)
        vlib.ggspec_backend_tensor_alloc(buf, root, vlib.ggspec_backend_buffer_get_base(buf))
        vlib.ggspec_backend_tensor_set(root, vffi.new("float[]", list(range(8))), 0, 32)
        view = vlib.ggspec_view_1d(c, root, 2, 16)
        vlib.ggspec_backend_view_init(buf, view)
        dst = vlib.ggspec_new_tensor_1d(c, vlib.GGSPEC_TYPE_F32, 2)
        base = vffi.cast("char *", vlib.ggspec_backend_buffer_get_base(buf))
        vlib.ggspec_backend_tensor_alloc(buf, dst, base + 64)
        vlib.ggspec_backend_tensor_copy(view, dst)
        out = vffi.new("float[]", 2)
        vlib.ggspec_backend_tensor_get(dst, out, 0, 8)
        assert list(out) == [0.0, 1.0]  # the defect copies from the root's start, not [4, 5]
    finally:
        vlib.ggspec_backend_buffer_free(buf)
        vlib.ggspec_free(c)
