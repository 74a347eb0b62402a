"""The WebGPU backend built against rc.8's ggml-backend-impl.h (the second host, as the virtual
device's shim is) and run under rc.8's own code: its graph_compute, tensor_copy and scheduler.

webgpu.c is compiled with VD(x) = wsp_ggml_##x and linked to rc.8's library (built by the rc8
adapter, conformance/adapters/rc8.py); skipped where rc.8 or WebGPU is unavailable (CI=true with
wgpu and lavapipe present fails on a missing adapter instead, as test_webgpu.py does).

Expected values: the same graph computed by rc.8's CPU backend alone. Only exact operations are
used (ADD, MUL, SCALE, CPY F32 -> F16: bytes exactly, spec/core.md's Tolerances), so the bytes must
be equal whichever backend the scheduler gives each node.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ggspec.native import build
from ggspec.native.webgpu import wgpu_library
from test_webgpu import IN_CI, LAVAPIPE

_NATIVE = Path(build.HERE)

CDEF = """
struct wsp_ggml_init_params { size_t mem_size; void * mem_buffer; bool no_alloc; };
struct wsp_ggml_context;
struct wsp_ggml_tensor;
struct wsp_ggml_cgraph;
typedef struct wsp_ggml_backend * wsp_ggml_backend_t;
typedef struct wsp_ggml_backend_buffer * wsp_ggml_backend_buffer_t;
typedef struct wsp_ggml_backend_buffer_type * wsp_ggml_backend_buffer_type_t;
typedef struct wsp_ggml_backend_sched * wsp_ggml_backend_sched_t;

struct wsp_ggml_context * wsp_ggml_init(struct wsp_ggml_init_params params);
void   wsp_ggml_free(struct wsp_ggml_context * ctx);
struct wsp_ggml_tensor * wsp_ggml_new_tensor_2d(struct wsp_ggml_context * ctx, int type, int64_t ne0, int64_t ne1);
struct wsp_ggml_tensor * wsp_ggml_add(struct wsp_ggml_context * ctx, struct wsp_ggml_tensor * a, struct wsp_ggml_tensor * b);
struct wsp_ggml_tensor * wsp_ggml_mul(struct wsp_ggml_context * ctx, struct wsp_ggml_tensor * a, struct wsp_ggml_tensor * b);
struct wsp_ggml_tensor * wsp_ggml_scale(struct wsp_ggml_context * ctx, struct wsp_ggml_tensor * a, float s);
struct wsp_ggml_tensor * wsp_ggml_cpy(struct wsp_ggml_context * ctx, struct wsp_ggml_tensor * a, struct wsp_ggml_tensor * b);
struct wsp_ggml_cgraph * wsp_ggml_new_graph(struct wsp_ggml_context * ctx);
void   wsp_ggml_build_forward_expand(struct wsp_ggml_cgraph * g, struct wsp_ggml_tensor * t);
size_t wsp_ggml_nbytes(const struct wsp_ggml_tensor * t);

wsp_ggml_backend_t wsp_ggml_backend_cpu_init(void);
void wsp_ggml_backend_free(wsp_ggml_backend_t backend);
bool wsp_ggml_backend_graph_compute(wsp_ggml_backend_t backend, struct wsp_ggml_cgraph * cgraph);
bool wsp_ggml_backend_supports_op(wsp_ggml_backend_t backend, const struct wsp_ggml_tensor * op);
wsp_ggml_backend_buffer_type_t wsp_ggml_backend_get_default_buffer_type(wsp_ggml_backend_t backend);
bool wsp_ggml_backend_buffer_is_host(wsp_ggml_backend_buffer_t buffer);
void wsp_ggml_backend_buffer_free(wsp_ggml_backend_buffer_t buffer);
void wsp_ggml_backend_tensor_set(struct wsp_ggml_tensor * tensor, const void * data, size_t offset, size_t size);
void wsp_ggml_backend_tensor_get(const struct wsp_ggml_tensor * tensor, void * data, size_t offset, size_t size);
void wsp_ggml_backend_synchronize(wsp_ggml_backend_t backend);
wsp_ggml_backend_buffer_t wsp_ggml_backend_alloc_ctx_tensors(struct wsp_ggml_context * ctx, wsp_ggml_backend_t backend);

wsp_ggml_backend_sched_t wsp_ggml_backend_sched_new(wsp_ggml_backend_t * backends, wsp_ggml_backend_buffer_type_t * bufts,
                                                    int n_backends, size_t graph_size);
void wsp_ggml_backend_sched_free(wsp_ggml_backend_sched_t sched);
void wsp_ggml_backend_sched_init_measure(wsp_ggml_backend_sched_t sched, struct wsp_ggml_cgraph * measure_graph);
int  wsp_ggml_backend_sched_get_n_splits(wsp_ggml_backend_sched_t sched);
void wsp_ggml_backend_sched_set_node_backend(wsp_ggml_backend_sched_t sched, struct wsp_ggml_tensor * node,
                                             wsp_ggml_backend_t backend);
void wsp_ggml_backend_sched_graph_compute(wsp_ggml_backend_sched_t sched, struct wsp_ggml_cgraph * graph);

wsp_ggml_backend_t ggspec_webgpu_init(const char * lib_path, char * reason, size_t reason_size);
bool ggspec_backend_is_webgpu(wsp_ggml_backend_t b);
"""

F32, F16 = 0, 1
#: .ci/run's sanitizer step sets this (with libasan preloaded): webgpu.c is then built against
#: rc.8 with AddressSanitizer and UndefinedBehaviorSanitizer, as native/ is there
SANITIZE = os.environ.get("GGSPEC_WEBGPU_SANITIZE", "") == "1"
SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all", "-g"]


@pytest.fixture(scope="module")
def rc8(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The cffi module: rc.8's declarations above, webgpu.c compiled against rc.8's headers."""
    import cffi
    from ggspec.conformance.adapters.external import TargetUnavailable, link_flags
    from ggspec.conformance.adapters.rc8 import ensure_rc8

    try:
        cpp, lib_path = ensure_rc8()
    except TargetUnavailable as exc:
        pytest.skip(f"rc.8 unavailable: {exc}")
    wgpu = build.wgpu_include_dir()
    if wgpu is None:
        pytest.skip("WebGPU unavailable: no webgpu.h (the wgpu package is not installed)")
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source(
        "_ggspec_webgpu_rc8",
        '#include "ggml.h"\n#include "ggml-alloc.h"\n#include "ggml-backend.h"\n#include "ggml-backend-impl.h"\n'
        '#include "ggspec-webgpu.h"\n',
        sources=[str(_NATIVE / "src" / "webgpu.c")],
        include_dirs=[str(cpp), str(_NATIVE / "include"), wgpu],
        define_macros=[("VD(x)", "wsp_ggml_##x"), ("VDU(x)", "WSP_GGML_##x"),
                       ("VDEV_IMPL_HEADER", '"ggml-backend-impl.h"'), ("GGSPEC_HAVE_WGPU", None)],
        extra_compile_args=["-std=c11", "-O1", "-Werror=implicit-function-declaration",
                            "-Werror=incompatible-pointer-types", "-Werror=int-conversion",
                            *(SANITIZER_FLAGS if SANITIZE else [])],
        extra_link_args=[*link_flags(lib_path), *(["-fsanitize=address,undefined"] if SANITIZE else [])],
    )
    out = tmp_path_factory.mktemp("webgpu-rc8")
    so = ffi.compile(tmpdir=str(out), verbose=False)
    import importlib.util

    spec = importlib.util.spec_from_file_location("_ggspec_webgpu_rc8", so)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gpu(rc8: Any) -> Iterator[Any]:
    ffi, lib = rc8.ffi, rc8.lib
    reason = ffi.new("char[512]")
    b = lib.ggspec_webgpu_init((wgpu_library() or "").encode(), reason, len(reason))
    if b == ffi.NULL:
        why = ffi.string(reason).decode()
        if IN_CI and wgpu_library() is not None and LAVAPIPE:
            pytest.fail(f"CI=true, wgpu and lavapipe are installed, but: {why}")
        pytest.skip(why)
    yield b
    lib.wsp_ggml_backend_free(b)


def _ctx(lib: Any, ffi: Any) -> Any:
    return lib.wsp_ggml_init({"mem_size": 8 << 20, "mem_buffer": ffi.NULL, "no_alloc": True})


def _graph(lib: Any, ctx: Any, a: Any, b: Any, c: Any) -> tuple[Any, list[Any]]:
    x = lib.wsp_ggml_add(ctx, a, b)
    y = lib.wsp_ggml_mul(ctx, x, c)
    z = lib.wsp_ggml_scale(ctx, y, 0.75)
    h = lib.wsp_ggml_cpy(ctx, z, lib.wsp_ggml_new_tensor_2d(ctx, F16, 37, 5))
    g = lib.wsp_ggml_new_graph(ctx)
    lib.wsp_ggml_build_forward_expand(g, h)
    return g, [x, y, z, h]


rng = np.random.default_rng(8)
INPUTS = [(rng.standard_normal((5, 37)) * 3).astype(np.float32) for _ in range(3)]


def _on(rc8: Any, backend: Any) -> bytes:
    """The graph with every tensor in a buffer of `backend`, computed there."""
    ffi, lib = rc8.ffi, rc8.lib
    ctx = _ctx(lib, ffi)
    try:
        ins = [lib.wsp_ggml_new_tensor_2d(ctx, F32, 37, 5) for _ in INPUTS]
        g, nodes = _graph(lib, ctx, *ins)
        buf = lib.wsp_ggml_backend_alloc_ctx_tensors(ctx, backend)
        try:
            for t, arr in zip(ins, INPUTS, strict=True):
                lib.wsp_ggml_backend_tensor_set(t, arr.tobytes(), 0, arr.nbytes)
            for n in nodes:
                assert lib.wsp_ggml_backend_supports_op(backend, n)
            assert lib.wsp_ggml_backend_graph_compute(backend, g)
            out = ffi.new("uint8_t[]", 5 * 37 * 2)
            lib.wsp_ggml_backend_tensor_get(nodes[-1], out, 0, len(out))
            return bytes(out)
        finally:
            lib.wsp_ggml_backend_buffer_free(buf)
    finally:
        lib.wsp_ggml_free(ctx)


def test_rc8_graph_compute_on_webgpu_gives_the_cpu_bytes(rc8: Any, gpu: Any) -> None:
    cpu = rc8.lib.wsp_ggml_backend_cpu_init()
    try:
        expect = _on(rc8, cpu)
    finally:
        rc8.lib.wsp_ggml_backend_free(cpu)
    want = ((((INPUTS[0] + INPUTS[1]) * INPUTS[2]) * np.float32(0.75)).astype(np.float16)).tobytes()
    assert expect == want
    assert _on(rc8, gpu) == expect


def test_rc8_scheduler_splits_between_webgpu_and_cpu(rc8: Any, gpu: Any) -> None:
    """a, b in a WebGPU buffer, c in a CPU buffer; rc.8's scheduler runs ADD and SCALE on WebGPU,
    MUL and CPY on the CPU (set per node), copying between them."""
    ffi, lib = rc8.ffi, rc8.lib
    cpu = lib.wsp_ggml_backend_cpu_init()
    wctx, cctx, mctx, gctx = (_ctx(lib, ffi) for _ in range(4))
    bufs: list[Any] = []
    sched = ffi.NULL
    try:
        a, b = (lib.wsp_ggml_new_tensor_2d(wctx, F32, 37, 5) for _ in range(2))
        c = lib.wsp_ggml_new_tensor_2d(cctx, F32, 37, 5)
        bufs = [lib.wsp_ggml_backend_alloc_ctx_tensors(wctx, gpu), lib.wsp_ggml_backend_alloc_ctx_tensors(cctx, cpu)]
        assert not lib.wsp_ggml_backend_buffer_is_host(bufs[0]) and lib.wsp_ggml_backend_buffer_is_host(bufs[1])
        for t, arr in zip((a, b, c), INPUTS, strict=True):
            lib.wsp_ggml_backend_tensor_set(t, arr.tobytes(), 0, arr.nbytes)
        backends = ffi.new("wsp_ggml_backend_t[2]", [gpu, cpu])
        bufts = ffi.new("wsp_ggml_backend_buffer_type_t[2]", [lib.wsp_ggml_backend_get_default_buffer_type(gpu),
                                                               lib.wsp_ggml_backend_get_default_buffer_type(cpu)])
        sched = lib.wsp_ggml_backend_sched_new(backends, bufts, 2, 64)
        # rc.8's way: measure with one graph, compute a fresh one (the measure leaves addresses behind)
        for ctx, run in ((mctx, lib.wsp_ggml_backend_sched_init_measure), (gctx, lib.wsp_ggml_backend_sched_graph_compute)):
            g, (x, y, z, h) = _graph(lib, ctx, a, b, c)
            for node, on in ((x, gpu), (y, cpu), (z, gpu), (h, cpu)):
                lib.wsp_ggml_backend_sched_set_node_backend(sched, node, on)
            run(sched, g)
        assert lib.wsp_ggml_backend_sched_get_n_splits(sched) == 4
        lib.wsp_ggml_backend_synchronize(gpu)
        out = ffi.new("uint8_t[]", 5 * 37 * 2)
        lib.wsp_ggml_backend_tensor_get(h, out, 0, len(out))
        want = ((((INPUTS[0] + INPUTS[1]) * INPUTS[2]) * np.float32(0.75)).astype(np.float16)).tobytes()
        assert bytes(out) == want
    finally:
        if sched != ffi.NULL:
            lib.wsp_ggml_backend_sched_free(sched)
        for buf in bufs:
            lib.wsp_ggml_backend_buffer_free(buf)
        for ctx in (wctx, cctx, mctx, gctx):
            lib.wsp_ggml_free(ctx)
        lib.wsp_ggml_backend_free(cpu)


def test_the_shim_build_needs_no_generated_file() -> None:
    """webgpu.c finds webgpu_wgsl.h beside itself (a shim build runs no generator)."""
    assert os.path.isfile(os.path.join(build.SRC_DIR, "webgpu_wgsl.h"))
