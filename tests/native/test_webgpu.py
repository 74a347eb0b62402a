"""The WebGPU device backend (native/src/webgpu.c) on the adapter this machine has (lavapipe in CI).

Where there is no WebGPU (no `wgpu` package, no Vulkan driver) every test here skips with the one
line `webgpu_init` gives; under CI=true, with the `wgpu` package and Mesa's lavapipe installed, a
missing adapter fails instead (CI installs both: pip's `wgpu`, apt's `mesa-vulkan-drivers`).

Expected values: the adapter's limits come from the `wgpu` Python package in a subprocess (its own
instance); bytes moved are checked against a host mirror; kernels against numpy where the spec's
Tolerances table asks for exact bytes (ADD, MUL, SCALE, the F32 <-> F16 conversions of CORE-50),
and against the same graph computed by native's CPU backend (the build the suite holds to the
reference) within the table's bounds otherwise (conformance.approx).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from ggspec.conformance.engine.approx import mul_mat_atol, norm_atol
from ggspec.native import build, load_lib
from ggspec.native.webgpu import WebGPUUnavailable, adapter_name, webgpu_init, webgpu_pending, wgpu_library
from ggspec.reference.types import GGMLType
from made import context

ffi, lib = load_lib()

F32, F16, I32, I8 = lib.GGSPEC_TYPE_F32, lib.GGSPEC_TYPE_F16, lib.GGSPEC_TYPE_I32, lib.GGSPEC_TYPE_I8
IN_CI = os.environ.get("CI", "").lower() == "true"
LAVAPIPE = bool(glob.glob("/usr/share/vulkan/icd.d/lvp_icd*.json"))


def test_the_embedded_wgsl_is_current() -> None:
    with open(build.WGSL_HEADER, encoding="utf-8") as f:
        assert f.read() == build.wgsl_header_text(), "run python -m ggspec.native.build to regenerate webgpu_wgsl.h"


@pytest.fixture(scope="module")
def gpu() -> Iterator[Any]:
    try:
        b = webgpu_init()
    except WebGPUUnavailable as exc:
        if IN_CI and wgpu_library() is not None and LAVAPIPE:
            pytest.fail(f"CI=true, wgpu and lavapipe are installed, but: {exc}")
        pytest.skip(str(exc))
    yield b.ptr
    lib.ggspec_backend_free(b.ptr)
    b.kill("backend_free")


@pytest.fixture(scope="module")
def limits() -> dict[str, int]:
    """The adapter's limits as the wgpu package reports them (a process of its own)."""
    code = "import json, wgpu; a = wgpu.gpu.request_adapter_sync(); print(json.dumps(dict(a.limits)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        pytest.skip(f"the wgpu package gives no adapter: {out.stderr.strip().splitlines()[-1:]}")
    return {k: int(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


@pytest.fixture
def noalloc() -> Iterator[Any]:
    yield from context(16 << 20, no_alloc=True)


def bytes_tensor(ctx: Any, n: int) -> Any:
    return lib.ggspec_new_tensor_1d(ctx, I8, n)


def get(t: Any, offset: int = 0, size: int | None = None) -> bytes:
    size = lib.ggspec_nbytes(t) - offset if size is None else size
    out = ffi.new("uint8_t[]", max(size, 1))
    lib.ggspec_backend_tensor_get(t, out, offset, size)
    return bytes(out)[:size]


def put(t: Any, data: bytes, offset: int = 0) -> None:
    lib.ggspec_backend_tensor_set(t, data, offset, len(data))


# --- the buffer type and buffers ---------------------------------------------------------------


def test_the_adapter_and_buffer_type(gpu: Any, limits: dict[str, int], noalloc: Any) -> None:
    assert adapter_name()
    buft = lib.ggspec_backend_get_default_buffer_type(gpu)
    assert buft == lib.ggspec_webgpu_buffer_type(gpu)
    assert not lib.ggspec_backend_buft_is_host(buft)
    assert lib.ggspec_backend_buft_get_alignment(buft) == limits["min-storage-buffer-offset-alignment"]
    cpu = lib.ggspec_backend_cpu_init()
    try:
        assert not lib.ggspec_backend_buft_supports_backend(buft, cpu)
        assert lib.ggspec_backend_buft_supports_backend(buft, gpu)
        assert not lib.ggspec_backend_buft_supports_backend(lib.ggspec_backend_get_default_buffer_type(cpu), gpu)
    finally:
        lib.ggspec_backend_free(cpu)
    # no padding: a tensor needs its nbytes (each GPU buffer is rounded up to 4 itself, and
    # partial words are merged), so a tensor may end anywhere in a buffer
    for n in (1, 4, 6, 13):
        assert lib.ggspec_backend_buft_get_alloc_size(buft, bytes_tensor(noalloc, n)) == n
    half = lib.ggspec_new_tensor_1d(noalloc, F16, 3)  # 6 bytes
    assert lib.ggspec_backend_buft_get_alloc_size(buft, half) == 6


def test_tensors_sharing_a_word_keep_each_others_bytes(gpu: Any) -> None:
    """Two F16 tensors of 3 elements back to back in a buffer of 13 bytes (the second ends
    inside the buffer's last word, the first shares a word with it): an F32 -> F16 copy into
    each, and an unaligned set, leave the other's bytes as they were."""
    params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
    ctx = lib.ggspec_init(params[0])
    buft = lib.ggspec_webgpu_buffer_type(gpu)
    buf = lib.ggspec_backend_buft_alloc_buffer(buft, 13)
    try:
        base = int(ffi.cast("uintptr_t", lib.ggspec_backend_buffer_get_base(buf)))
        whole = bytes_tensor(ctx, 13)
        h0, h1 = lib.ggspec_new_tensor_1d(ctx, F16, 3), lib.ggspec_new_tensor_1d(ctx, F16, 3)
        src = [lib.ggspec_new_tensor_1d(ctx, F32, 3) for _ in range(2)]
        for t, at in ((whole, 0), (h0, 1 * 0 + 0), (h1, 6)):
            lib.ggspec_backend_tensor_alloc(buf, t, ffi.cast("void *", base + at))
        other = lib.ggspec_backend_buft_alloc_buffer(buft, 64)
        for i, t in enumerate(src):
            lib.ggspec_backend_tensor_alloc(other, t, ffi.cast("void *", int(ffi.cast("uintptr_t",
                                            lib.ggspec_backend_buffer_get_base(other))) + 32 * i))
        put(whole, bytes(range(0xA0, 0xAD)))
        a, b = np.array([1.5, -2.0, 3.25], np.float32), np.array([0.5, 7.0, -0.125], np.float32)
        put(src[0], a.tobytes())
        put(src[1], b.tobytes())
        g = lib.ggspec_new_graph(ctx)
        lib.ggspec_build_forward_expand(g, lib.ggspec_cpy(ctx, src[1], h1))
        assert lib.ggspec_backend_graph_compute(gpu, g)
        lib.ggspec_backend_synchronize(gpu)
        want = bytearray(range(0xA0, 0xAD))
        want[6:12] = b.astype(np.float16).tobytes()
        assert get(whole) == bytes(want)
        g = lib.ggspec_new_graph(ctx)
        lib.ggspec_build_forward_expand(g, lib.ggspec_cpy(ctx, src[0], h0))
        assert lib.ggspec_backend_graph_compute(gpu, g)
        lib.ggspec_backend_synchronize(gpu)
        want[0:6] = a.astype(np.float16).tobytes()
        assert get(whole) == bytes(want)
        put(whole, b"\x11\x22", 11)
        want[11:13] = b"\x11\x22"
        assert get(whole) == bytes(want) and get(h1) == bytes(want[6:12])
        lib.ggspec_backend_buffer_free(other)
    finally:
        lib.ggspec_backend_buffer_free(buf)
        lib.ggspec_free(ctx)


def test_a_buffer_past_the_device_limit_is_refused(gpu: Any, limits: dict[str, int]) -> None:
    most = min(limits["max-buffer-size"], limits["max-storage-buffer-binding-size"], 0xFFFFFFFC)
    buft = lib.ggspec_webgpu_buffer_type(gpu)
    assert lib.ggspec_backend_buft_alloc_buffer(buft, most + 4) == ffi.NULL


def test_the_base_is_not_host_memory_and_clear_fills(gpu: Any, noalloc: Any) -> None:
    t = bytes_tensor(noalloc, 37)
    buf = lib.ggspec_backend_alloc_ctx_tensors(noalloc, gpu)
    try:
        assert not lib.ggspec_backend_buffer_is_host(buf)
        base = lib.ggspec_backend_buffer_get_base(buf)
        assert base != ffi.NULL and t.data == base
        # the base is a reservation without access rights: a host read of it faults
        code = ("import ctypes, mmap, sys; m = mmap.mmap(-1, 4096, prot=mmap.PROT_NONE);"
                "ctypes.string_at(ctypes.addressof(ctypes.c_char.from_buffer(m)), 1)")
        assert subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode != 0
        for value in (0x00, 0xA5, 0x01):
            lib.ggspec_backend_buffer_clear(buf, value)
            assert get(t) == bytes([value]) * 37
    finally:
        lib.ggspec_backend_buffer_free(buf)


def test_unaligned_set_and_get_are_byte_exact(gpu: Any, noalloc: Any) -> None:
    n = 203
    t = bytes_tensor(noalloc, n)
    buf = lib.ggspec_backend_alloc_ctx_tensors(noalloc, gpu)
    rng = np.random.default_rng(19)
    mirror = bytearray(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    try:
        put(t, bytes(mirror))
        assert get(t) == bytes(mirror)
        for _ in range(60):
            off = int(rng.integers(0, n))
            size = int(rng.integers(0, n - off + 1))
            data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
            put(t, data, off)
            mirror[off:off + size] = data
            o2 = int(rng.integers(0, n))
            s2 = int(rng.integers(0, n - o2 + 1))
            assert get(t, o2, s2) == bytes(mirror[o2:o2 + s2]), (off, size, o2, s2)
        assert get(t) == bytes(mirror)
    finally:
        lib.ggspec_backend_buffer_free(buf)


def test_device_copies_at_unaligned_offsets(gpu: Any, noalloc: Any) -> None:
    whole = bytes_tensor(noalloc, 64)
    other = bytes_tensor(noalloc, 64)
    buf = lib.ggspec_backend_alloc_ctx_tensors(noalloc, gpu)
    rng = np.random.default_rng(5)
    try:
        for src_off, dst_off, n, dst in ((1, 6, 13, whole), (3, 3, 21, other), (0, 40, 8, whole), (8, 12, 16, other),
                                         (2, 1, 33, other)):
            start = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
            put(whole, start)
            put(other, start[::-1])
            src = lib.ggspec_view_1d(noalloc, whole, n, src_off)
            target = lib.ggspec_view_1d(noalloc, dst, n, dst_off)
            lib.ggspec_backend_view_init(buf, src)
            lib.ggspec_backend_view_init(buf, target)
            expect = bytearray(start if dst == whole else start[::-1])
            expect[dst_off:dst_off + n] = start[src_off:src_off + n]
            lib.ggspec_backend_tensor_copy(src, target)
            assert get(dst) == bytes(expect), (src_off, dst_off, n)
            # the same through the backend's async copy
            put(whole, start)
            put(other, start[::-1])
            lib.ggspec_backend_tensor_copy_async(gpu, src, target)
            lib.ggspec_backend_synchronize(gpu)
            assert get(dst) == bytes(expect), (src_off, dst_off, n)
    finally:
        lib.ggspec_backend_buffer_free(buf)


def test_async_operations_run_in_submission_order(gpu: Any, noalloc: Any) -> None:
    t = bytes_tensor(noalloc, 10)
    buf = lib.ggspec_backend_alloc_ctx_tensors(noalloc, gpu)
    try:
        put(t, bytes(10))
        outs = [ffi.new("uint8_t[10]") for _ in range(4)]
        lib.ggspec_backend_tensor_set_async(gpu, t, b"\x01\x02\x03", 1, 3)
        lib.ggspec_backend_tensor_get_async(gpu, t, outs[0], 0, 10)
        lib.ggspec_backend_tensor_set_async(gpu, t, b"\x09" * 10, 0, 10)
        lib.ggspec_backend_tensor_get_async(gpu, t, outs[1], 0, 10)
        lib.ggspec_backend_tensor_set_async(gpu, t, b"\x07\x07", 5, 2)
        lib.ggspec_backend_tensor_get_async(gpu, t, outs[2] + 3, 3, 5)
        assert webgpu_pending(Backend_of(gpu)) == 3
        lib.ggspec_backend_synchronize(gpu)
        assert webgpu_pending(Backend_of(gpu)) == 0
        assert bytes(outs[0]) == b"\x00\x01\x02\x03" + bytes(6)
        assert bytes(outs[1]) == b"\x09" * 10
        assert bytes(outs[2]) == bytes(3) + b"\x09\x09\x07\x07\x09" + bytes(2)
    finally:
        lib.ggspec_backend_buffer_free(buf)


def Backend_of(ptr: Any) -> Any:  # noqa: N802 - the wrapper's handle of a raw backend pointer
    from ggspec.native._lib import Backend

    found = Backend.wrap(ptr)
    assert found is not None
    return found


# --- kernels -----------------------------------------------------------------------------------

Builder = Callable[[Any, list[Any]], Any]


def _run(backend: Any, build_graph: Builder, inputs: list[tuple[int, np.ndarray]], out_dtype: Any,
         on_gpu: bool) -> np.ndarray:
    """Build the graph in a no_alloc context, put its tensors in a buffer of `backend`, write the
    inputs, compute, read the output (numpy shape (ne3, ne2, ne1, ne0) of a contiguous result)."""
    params = ffi.new("struct ggspec_init_params *", {"mem_size": 16 << 20, "no_alloc": True})
    ctx = lib.ggspec_init(params[0])
    buf = ffi.NULL
    try:
        ts = []
        for type_, arr in inputs:
            ne = list(arr.shape[::-1])
            if type_ == lib.GGSPEC_TYPE_Q4_0:  # arr holds the blocks' bytes: 18 per 32 elements
                ne[0] = ne[0] // 18 * 32
            if type_ == lib.GGSPEC_TYPE_Q8_0:  # 34 bytes per 32 elements
                ne[0] = ne[0] // 34 * 32
            ts.append(getattr(lib, f"ggspec_new_tensor_{len(ne)}d")(ctx, type_, *ne))
        out = build_graph(ctx, ts)
        g = lib.ggspec_new_graph(ctx)
        lib.ggspec_build_forward_expand(g, out)
        buf = lib.ggspec_backend_alloc_ctx_tensors(ctx, backend)
        assert buf != ffi.NULL
        assert bool(lib.ggspec_backend_buffer_is_host(buf)) != on_gpu
        for t, (_, arr) in zip(ts, inputs, strict=True):
            data = np.ascontiguousarray(arr).tobytes()
            lib.ggspec_backend_tensor_set(t, data, 0, len(data))
        for i in range(g.n_nodes):
            assert lib.ggspec_backend_supports_op(backend, g.nodes[i]), ffi.string(g.nodes[i].name)
        assert lib.ggspec_backend_graph_compute(backend, g)
        lib.ggspec_backend_synchronize(backend)
        n = lib.ggspec_nbytes(out)
        got = ffi.new("uint8_t[]", n)
        lib.ggspec_backend_tensor_get(out, got, 0, n)
        if out_dtype == np.uint8:  # the result's bytes as they are (quantized blocks)
            return np.frombuffer(bytes(got), dtype=np.uint8)
        shape = [int(x) for x in out.ne][::-1]
        return np.frombuffer(bytes(got), dtype=out_dtype).reshape(shape)
    finally:
        if buf != ffi.NULL:
            lib.ggspec_backend_buffer_free(buf)
        lib.ggspec_free(ctx)


def both(gpu: Any, build_graph: Builder, inputs: list[tuple[int, np.ndarray]],
         out_dtype: Any = np.float32) -> tuple[np.ndarray, np.ndarray]:
    """(WebGPU result, native CPU result) of one graph."""
    cpu = lib.ggspec_backend_cpu_init()
    try:
        expect = _run(cpu, build_graph, inputs, out_dtype, on_gpu=False)
    finally:
        lib.ggspec_backend_free(cpu)
    return _run(gpu, build_graph, inputs, out_dtype, on_gpu=True), expect


rng = np.random.default_rng(20261201)


def randn(*shape: int, scale: float = 2.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def test_add_mul_scale_are_exact(gpu: Any) -> None:
    a, b = randn(2, 3, 5, 33), randn(1, 3, 1, 33)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_add(c, t[0], t[1]), [(F32, a), (F32, b)])
    assert got.tobytes() == (a + b).astype(np.float32).tobytes() == cpu.tobytes()
    got, cpu = both(gpu, lambda c, t: lib.ggspec_mul(c, t[0], t[1]), [(F32, a), (F32, b)])
    assert got.tobytes() == (a * b).astype(np.float32).tobytes() == cpu.tobytes()
    got, cpu = both(gpu, lambda c, t: lib.ggspec_scale(c, t[0], 0.37), [(F32, a)])
    assert got.tobytes() == (a * np.float32(0.37)).tobytes() == cpu.tobytes()
    # ADD of F16 operands: one F32 addition, rounded to F16
    h, h1 = randn(4, 40).astype(np.float16), randn(4, 40).astype(np.float16)  # the CPU adds F16 of one shape only
    got, cpu = both(gpu, lambda c, t: lib.ggspec_add(c, t[0], t[1]), [(F16, h), (F16, h1)], np.float16)
    want = (h.astype(np.float32) + h1.astype(np.float32)).astype(np.float16)
    assert got.tobytes() == want.tobytes() == cpu.tobytes()


def test_subnormal_operands_and_results_are_kept(gpu: Any) -> None:
    """ADD / MUL are "bytes, exactly" (Tolerances); WGSL would let a driver flush subnormals, which
    would show here (docs/webgpu.md)."""
    sub = (np.arange(1, 65, dtype=np.uint32) * 12345).view(np.float32).reshape(2, 32)
    tiny = np.full((2, 32), 2.0**-126, np.float32)
    quarter = np.full((2, 32), 0.25, np.float32)
    for fn, a, b, want in ((lib.ggspec_add, sub, sub, sub + sub), (lib.ggspec_mul, tiny, quarter, tiny * quarter),
                           (lib.ggspec_add, tiny, -sub, tiny - sub)):
        got, cpu = both(gpu, lambda c, t, fn=fn: fn(c, t[0], t[1]), [(F32, a), (F32, b)])
        assert got.tobytes() == want.tobytes() == cpu.tobytes()


def _halves_and_edges() -> np.ndarray:
    """F32 values that stress CORE-50: every tie class, subnormal halves, overflow, NaN, -0."""
    ties = np.arange(0, 1 << 16, 7, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    with np.errstate(invalid="ignore"):
        up = np.nextafter(ties, np.float32(np.inf))
    mid = (ties.view(np.uint32) + np.uint32(0x1000)).view(np.float32)  # halfway to the next half
    special = np.array([0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e9, -1e9, 2.0**-24, 2.0**-25, 2.0**-25 * 1.5,
                        2.0**-26, 5.9604645e-08, 6.1035156e-05, np.inf, -np.inf], dtype=np.float32)
    nans = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF], dtype=np.uint32).view(np.float32)
    vals = np.concatenate([ties, up, mid, special, nans])
    return vals[np.isfinite(vals) | np.isnan(vals) | np.isinf(vals)].astype(np.float32)


def _rne_f16_bits(x: np.ndarray) -> np.ndarray:
    """CORE-50's F32 -> F16 bits: numpy's conversion (round to nearest even), NaN -> 0x7E00 | sign."""
    with np.errstate(over="ignore", invalid="ignore"):
        bits = x.astype(np.float16).view(np.uint16).copy()
    nan = np.isnan(x)
    bits[nan] = 0x7E00 | ((x[nan].view(np.uint32) >> 16) & 0x8000).astype(np.uint16)
    return bits


def test_cpy_f32_f16_conversions_are_exact(gpu: Any) -> None:
    x = _halves_and_edges()
    x = np.concatenate([x, np.zeros((-len(x)) % 64, np.float32)]).reshape(-1, 64)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_cpy(c, t[0], lib.ggspec_new_tensor_2d(c, F16, 64, t[0].ne[1])),
                    [(F32, x)], np.uint16)
    want = _rne_f16_bits(x).reshape(got.shape)
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]
    assert np.array_equal(cpu, want)
    # F16 -> F32, every half
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).reshape(-1, 256)
    got, _ = both(gpu, lambda c, t: lib.ggspec_cpy(c, t[0], lib.ggspec_new_tensor_2d(c, F32, 256, t[0].ne[1])),
                  [(F16, h.view(np.float16))], np.uint32)
    want32 = h.view(np.float16).astype(np.float32).view(np.uint32).reshape(got.shape)
    finite = ~np.isnan(h.view(np.float16)).reshape(got.shape)
    assert np.array_equal(got[finite], want32[finite])
    # NaN halves keep sign and payload, widened (rc.8's portable conversion)
    hn = h.reshape(got.shape)[~finite].astype(np.uint32)
    assert np.array_equal(got[~finite], ((hn & 0x8000) << 16) | 0x7F800000 | ((hn & 0x3FF) << 13))


def test_cont_dup_of_strided_views_move_bits(gpu: Any) -> None:
    a = randn(3, 4, 6)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_cont(c, lib.ggspec_transpose(c, t[0])), [(F32, a)])
    assert got.tobytes() == np.ascontiguousarray(a.transpose(0, 2, 1)).tobytes() == cpu.tobytes()
    got, cpu = both(gpu, lambda c, t: lib.ggspec_cont(c, lib.ggspec_permute(c, t[0], 2, 0, 1, 3)), [(F32, a)])
    assert got.tobytes() == cpu.tobytes()
    h = randn(5, 7).astype(np.float16)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_cont(c, lib.ggspec_transpose(c, t[0])), [(F16, h)], np.float16)
    assert got.tobytes() == np.ascontiguousarray(h.T).tobytes() == cpu.tobytes()
    i = rng.integers(-2**31, 2**31, (4, 9), dtype=np.int64).astype(np.int32)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_dup(c, t[0]), [(I32, i)], np.int32)
    assert got.tobytes() == i.tobytes() == cpu.tobytes()


@pytest.mark.parametrize("a_type", [F32, F16])
def test_mul_mat_within_the_bound(gpu: Any, a_type: int) -> None:
    k = 67
    a, b = randn(2, 1, 9, k), randn(2, 3, 5, k)
    a_in = a.astype(np.float16) if a_type == F16 else a
    got, cpu = both(gpu, lambda c, t: lib.ggspec_mul_mat(c, t[0], t[1]), [(a_type, a_in), (F32, b)])
    a_vals = a_in.astype(np.float32)
    b_prime = b.astype(np.float16).astype(np.float32) if a_type == F16 else b
    exact = np.einsum("xyik,xzjk->xzji", a_vals.astype(np.float64), b_prime.astype(np.float64))
    bound = mul_mat_atol(GGMLType(int(a_type)), a_vals, b_prime)
    assert got.shape == exact.shape == bound.shape
    assert np.all(np.abs(got - exact) <= bound)
    assert np.all(np.abs(cpu - exact) <= bound)


def test_norm_within_the_bound(gpu: Any) -> None:
    x = randn(2, 3, 47) + np.float32(3.0)
    eps = 1e-5
    got, cpu = both(gpu, lambda c, t: lib.ggspec_norm(c, t[0], eps), [(F32, x)])
    x4 = x.reshape(1, 2, 3, 47)
    bound = norm_atol(x4, cpu, eps)
    assert np.all(np.abs(got.astype(np.float64) - cpu) <= 2 * bound)


def test_soft_max_within_the_bound(gpu: Any) -> None:
    x = randn(3, 4, 29, scale=4.0)
    mask = randn(4, 29)
    mask[:, ::5] = -np.inf
    got, cpu = both(gpu, lambda c, t: lib.ggspec_soft_max_ext(c, t[0], t[1], 0.5), [(F32, x), (F32, mask)])
    assert np.all(np.abs(got.astype(np.float64) - cpu) <= 2.0**-10 * np.abs(cpu) + 2.0**-24)
    assert np.all(got[..., ::5] == 0)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_soft_max(c, t[0]), [(F32, x)])
    assert np.all(np.abs(got.astype(np.float64) - cpu) <= 2.0**-10 * np.abs(cpu) + 2.0**-24)


@pytest.mark.parametrize("name", ["gelu", "silu"])
def test_gelu_silu_within_the_bound(gpu: Any, name: str) -> None:
    x = np.concatenate([randn(3, 64, scale=3.0).ravel(), np.array([0.0, -0.0, 255.9, -256.0, 20.0, -20.0])])
    x = np.concatenate([x, np.zeros((-len(x)) % 2, np.float32)]).astype(np.float32).reshape(2, -1)
    fn = getattr(lib, f"ggspec_{name}")
    got, cpu = both(gpu, lambda c, t: fn(c, t[0]), [(F32, x)])
    bound = 2.0**-9 * (np.abs(cpu) + np.abs(x.reshape(cpu.shape))) + 2.0**-24
    assert np.all(np.abs(got.astype(np.float64) - cpu) <= bound)
    # every result is an F16 value (the table's)
    assert np.array_equal(got.astype(np.float16).astype(np.float32), got)


def test_supports_op_refuses_what_has_no_kernel(gpu: Any, noalloc: Any) -> None:
    a = lib.ggspec_new_tensor_2d(noalloc, F32, 32, 4)
    q4 = lib.ggspec_new_tensor_2d(noalloc, lib.GGSPEC_TYPE_Q4_0, 32, 4)
    q8 = lib.ggspec_new_tensor_2d(noalloc, lib.GGSPEC_TYPE_Q8_0, 32, 4)
    assert lib.ggspec_backend_supports_op(gpu, lib.ggspec_add(noalloc, a, a))
    assert lib.ggspec_backend_supports_op(gpu, lib.ggspec_mul_mat(noalloc, q4, a))
    assert lib.ggspec_backend_supports_op(gpu, lib.ggspec_mul_mat(noalloc, q8, a))
    assert lib.ggspec_backend_supports_op(gpu, lib.ggspec_mul_mat(noalloc, q4, q8))  # b already Q8_0
    assert not lib.ggspec_backend_supports_op(gpu, lib.ggspec_mul_mat(noalloc, q4, q4))  # b of another type
    assert lib.ggspec_backend_supports_op(gpu, lib.ggspec_cpy(noalloc, a, q4))
    assert not lib.ggspec_backend_supports_op(gpu, lib.ggspec_cpy(noalloc, lib.ggspec_transpose(noalloc, a), q4))
    assert not lib.ggspec_backend_supports_op(gpu, lib.ggspec_cpy(noalloc, q4, q8))  # requantizing
    rows = lib.ggspec_new_tensor_1d(noalloc, I32, 2)
    assert lib.ggspec_backend_supports_op(gpu, lib.ggspec_get_rows(noalloc, q8, rows))
    odd = lib.ggspec_new_tensor_2d(noalloc, lib.GGSPEC_TYPE_Q8_0, 32, 4)
    odd.ne[0] = 16  # a row of half a block (undefined for the CPU code): refused
    assert not lib.ggspec_backend_supports_op(gpu, lib.ggspec_get_rows(noalloc, odd, rows))


@pytest.mark.parametrize("table", ["F32", "I32", "F16", "Q4_0", "Q8_0"])
def test_get_rows_is_exact(gpu: Any, table: str) -> None:
    """GET_ROWS (CORE-65): rows copied, converted from F16 or dequantized (CORE-75): bytes, exactly,
    against the reference's dequantization and native's CPU backend; index tables (i1, i2)."""
    from ggspec.reference import quants

    k, n_rows, b1, b2 = 64, 5, 3, 2
    values = randn(b2, b1, n_rows, k)
    want_rows = values
    if table == "F32":
        arr = values
    elif table == "I32":
        arr = (values * 1000).astype(np.int32)
        want_rows = arr
    elif table == "F16":
        arr = values.astype(np.float16)
        want_rows = arr.astype(np.float32)
    else:
        quant, dequant, size = ((quants.quantize_q4_0, quants.dequantize_q4_0, 18) if table == "Q4_0"
                                else (quants.quantize_q8_0, quants.dequantize_q8_0, 34))
        blocks = quant(values.reshape(-1)).reshape(-1, size)
        want_rows = dequant(blocks).reshape(values.shape)
        arr = blocks.reshape(b2, b1, n_rows, (k // 32) * size).view(np.uint8)
    index = rng.integers(0, n_rows, (b2, b1, 4)).astype(np.int32)
    type_ = getattr(lib, f"GGSPEC_TYPE_{table}")
    out_dtype = np.int32 if table == "I32" else np.float32
    got, cpu = both(gpu, lambda c, t: lib.ggspec_get_rows(c, t[0], t[1]), [(type_, arr), (I32, index)], out_dtype)
    want = np.stack([np.stack([want_rows[i2, i1][index[i2, i1]] for i1 in range(b1)]) for i2 in range(b2)])
    assert got.shape == want.shape == (b2, b1, 4, k)
    assert got.tobytes() == cpu.tobytes() == want.astype(out_dtype).tobytes()


def test_mul_mat_q4_0_within_the_bound(gpu: Any) -> None:
    """Q4_0 weights: b quantized to Q8_0 by the kernel (CORE-61/74), integer block sums (CORE-76);
    expected: the reference's quantization and dot product (reference/quants.py)."""
    from ggspec.conformance.engine.approx import dequantized_blocks
    from ggspec.reference import quants

    k, rows, brows, batches = 32 * 7, 13, 6, 2
    w = randn(rows, k)
    wq = np.stack([quants.quantize_q4_0(r) for r in w]).reshape(rows, -1)  # (rows, 7 * 18) bytes
    b = randn(batches, brows, k)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_mul_mat(c, t[0], t[1]),
                    [(lib.GGSPEC_TYPE_Q4_0, wq.view(np.uint8)), (F32, b)])
    assert got.shape == (1, batches, brows, rows)
    ref = np.stack([np.stack([quants.vec_dot_q_q8_0(True, wq.reshape(rows, 7, 18), quants.quantize_q8_0(row).reshape(7, 34))
                              for row in b[i]]) for i in range(batches)])
    a_blocks = dequantized_blocks(GGMLType.Q4_0, wq.reshape(-1, 18))
    b_blocks = dequantized_blocks(GGMLType.Q8_0, np.stack([quants.quantize_q8_0(r) for r in b.reshape(-1, k)]).reshape(-1, 34))
    av = (a_blocks[0] * a_blocks[1][:, None].astype(np.float64)).reshape(1, 1, rows, k)
    bv = (b_blocks[0] * b_blocks[1][:, None].astype(np.float64)).reshape(1, batches, brows, k)
    bound = mul_mat_atol(GGMLType.Q4_0, av, bv, a_blocks, b_blocks)
    assert np.all(np.abs(got[0].astype(np.float64) - ref) <= bound[0])
    assert np.all(np.abs(cpu[0].astype(np.float64) - ref) <= bound[0])


def _blocks_to_quantize(src_type: int) -> np.ndarray:
    """Rows of 2 blocks: random values, a zero block, ties of x * id + 8.5 and of roundf, equal
    magnitudes of both signs (the first one sets Q4_0's max), subnormal inputs (1 / d finite); F16
    when the source is F16."""
    v = randn(3, 4, 64)
    v[0, 0, :32] = 0.0
    v[0, 1, :32] = np.tile(np.float32([-8, 8, 4, -4, 1, -1, 0.5, 3]), 4)
    v[0, 2, 32:] = np.float32(127) * (np.arange(32) % 5 - 2) / np.float32(2)
    if src_type == F32:  # subnormals, and one value large enough for 1 / d to stay finite
        v[0, 3, :32] = np.float32(1e-39) * np.arange(32)
        v[0, 3, 31] = np.float32(1e-36)
    else:
        v[0, 3, :32] = np.float32(6e-8) * np.arange(32)
    return v.astype(np.float16) if src_type == F16 else v


@pytest.mark.parametrize("dst", ["Q4_0", "Q8_0"])
@pytest.mark.parametrize("src_type", [F32, F16])
def test_quantizing_copies_are_exact(gpu: Any, src_type: int, dst: str) -> None:
    """CPY from F32 / F16 into Q4_0 / Q8_0 (CORE-49, 73, 74): each source row quantized into the
    destination's blocks, bytes equal to the reference's quantize_q4_0 / quantize_q8_0 and to
    native's CPU backend."""
    from ggspec.reference import quants

    v = _blocks_to_quantize(src_type)
    quant, size = (quants.quantize_q4_0, 18) if dst == "Q4_0" else (quants.quantize_q8_0, 34)
    want = quant(v.astype(np.float32).reshape(-1)).reshape(-1)
    empty = np.zeros((3, 4, 2 * size), dtype=np.uint8)
    dst_type = getattr(lib, f"GGSPEC_TYPE_{dst}")
    got, cpu = both(gpu, lambda c, t: lib.ggspec_cpy(c, t[0], t[1]), [(src_type, v), (dst_type, empty)], np.uint8)
    assert got.tobytes() == want.tobytes()
    assert cpu.tobytes() == want.tobytes()


@pytest.mark.parametrize("type_", ["Q4_0", "Q8_0"])
def test_quantized_same_type_copies_copy_blocks(gpu: Any, type_: str) -> None:
    """CORE-53 (profile fixed): CPY into a flat tensor of the same type, and CONT of a view of
    every other row, copy whole blocks in logical order; against the blocks themselves and
    native's CPU backend."""
    size = 18 if type_ == "Q4_0" else 34
    blocks = rng.integers(0, 256, (6, 3 * size), dtype=np.uint8)  # 6 rows of 3 blocks (96 elements)
    qt = getattr(lib, f"GGSPEC_TYPE_{type_}")
    flat = np.zeros((1, 18 * size), dtype=np.uint8)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_cpy(c, t[0], t[1]), [(qt, blocks), (qt, flat)], np.uint8)
    assert got.tobytes() == cpu.tobytes() == blocks.tobytes()

    def every_other_row(c: Any, t: list[Any]) -> Any:
        view = lib.ggspec_view_2d(c, t[0], 96, 3, 2 * t[0].nb[1], t[0].nb[1])  # rows 1, 3, 5
        return lib.ggspec_cont(c, view)

    got, cpu = both(gpu, every_other_row, [(qt, blocks)], np.uint8)
    assert got.tobytes() == cpu.tobytes() == blocks[1::2].tobytes()


@pytest.mark.parametrize("b_blocks", [False, True])
@pytest.mark.parametrize("a_type", ["Q4_0", "Q8_0"])
def test_mul_mat_quantized_within_the_bound(gpu: Any, a_type: str, b_blocks: bool) -> None:
    """Q4_0 / Q8_0 weights times b: an F32 b quantized to Q8_0 by the kernel (CORE-61/74) or b
    given as Q8_0 blocks; integer block sums (CORE-76). Expected: the reference's dot products,
    and native's CPU backend within the same bound."""
    from ggspec.conformance.engine.approx import dequantized_blocks
    from ggspec.reference import quants

    k, rows, brows, batches = 32 * 5, 7, 4, 2
    quant, size = (quants.quantize_q4_0, 18) if a_type == "Q4_0" else (quants.quantize_q8_0, 34)
    wq = np.stack([quant(r) for r in randn(rows, k)]).reshape(rows, -1)
    b = randn(batches, brows, k)
    bq = np.stack([quants.quantize_q8_0(r) for r in b.reshape(-1, k)]).reshape(batches, brows, 5 * 34)
    b_in = (lib.GGSPEC_TYPE_Q8_0, bq.view(np.uint8)) if b_blocks else (F32, b)
    got, cpu = both(gpu, lambda c, t: lib.ggspec_mul_mat(c, t[0], t[1]),
                    [(getattr(lib, f"GGSPEC_TYPE_{a_type}"), wq.view(np.uint8)), b_in])
    assert got.shape == (1, batches, brows, rows)
    ref = np.stack([np.stack([quants.vec_dot_q_q8_0(a_type == "Q4_0", wq.reshape(rows, 5, size), row.reshape(5, 34))
                              for row in bq[i]]) for i in range(batches)])
    a_blocks = dequantized_blocks(GGMLType[a_type], wq.reshape(-1, size))
    b_blocks_ = dequantized_blocks(GGMLType.Q8_0, bq.reshape(-1, 34))
    av = (a_blocks[0] * a_blocks[1][:, None].astype(np.float64)).reshape(1, 1, rows, k)
    bv = (b_blocks_[0] * b_blocks_[1][:, None].astype(np.float64)).reshape(1, batches, brows, k)
    bound = mul_mat_atol(GGMLType[a_type], av, bv, a_blocks, b_blocks_)
    assert np.all(np.abs(got[0].astype(np.float64) - ref) <= bound[0])
    assert np.all(np.abs(cpu[0].astype(np.float64) - ref) <= bound[0])


def test_a_device_started_before_a_fork_is_refused_in_the_child(gpu: Any) -> None:
    """The module's device was started in this process; a forked child must not use it: init
    there returns NULL with one line naming both processes (start WebGPU in the worker)."""
    from forked import run_forked

    def child() -> None:
        try:
            webgpu_init()
        except WebGPUUnavailable as exc:
            text = str(exc)
            ok = f"started in process {os.getppid()}" in text and f"this is {os.getpid()}" in text
            sys.stderr.write(text + "\n")
            os._exit(0 if ok else 3)
        os._exit(4)

    status, err = run_forked(child)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, err
    assert "before a fork" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("env, says", [
    ({"GGSPEC_WGPU_LIB": "/nonexistent/libwgpu_native.so"}, "WebGPU unavailable: cannot load /nonexistent/"),
    ({"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json"}, "WebGPU unavailable: no adapter"),
])
def test_no_library_or_no_driver_is_one_line(env: dict[str, str], says: str) -> None:
    """Without the library or without a Vulkan driver, init reports one line; no crash, no hang."""
    if wgpu_library() is None:
        pytest.skip("the wgpu package is not installed")
    code = ("from ggspec.native.webgpu import webgpu_init, WebGPUUnavailable\n"
            "try:\n    webgpu_init()\nexcept WebGPUUnavailable as e:\n    print(e)\nelse:\n    print('started')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(says), out.stdout
