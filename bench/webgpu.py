"""Benchmark: the WebGPU device backend (native/src/webgpu.c) beside native's CPU backend.

    python bench/webgpu.py [--quick]

Prints one markdown table: device start-up (dlopen, instance, adapter, device, pipelines), the
graph cases (MUL_MAT F32 512 and 1024, MUL_MAT Q4_0 1024, SOFT_MAX and ADD on 1024 x 1024 F32),
each timed as graph_compute + synchronize on WebGPU and graph_compute on native's CPU backend
(1 thread), and upload / download bandwidth (tensor_set / tensor_get of 64 MiB). A case is run once
to warm up, then timed with time.perf_counter until 1 s has passed (at least 1, at most 20 runs);
the median is reported. The kernels are the straightforward ones (one invocation per result
element or row, no tiling, no workgroup memory): the numbers say what the backend costs as it is,
on whatever adapter the machine has (lavapipe here: Vulkan on the CPU).

Nothing here is a test: there are no timed assertions anywhere in the project.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402


def _time(fn: Callable[[], None], budget: float = 1.0) -> float:
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while not times or (time.perf_counter() - start < budget and len(times) < 20):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _graph(lib: Any, ffi: Any, backend: Any, case: str, n: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """(compute, free) for one case with every tensor in a buffer of `backend`."""
    from ggspec.reference import quants

    params = ffi.new("struct ggspec_init_params *", {"mem_size": 16 << 20, "no_alloc": True})
    ctx = lib.ggspec_init(params[0])
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, n)).astype(np.float32)
    if case == "mul_mat_f32":
        a, b = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, n, n), lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, n, n)
        out, data = lib.ggspec_mul_mat(ctx, a, b), [(a, x.tobytes()), (b, x.tobytes())]
    elif case == "mul_mat_q4_0":
        a, b = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_Q4_0, n, n), lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, n, n)
        q = b"".join(quants.quantize_q4_0(r).tobytes() for r in x)
        out, data = lib.ggspec_mul_mat(ctx, a, b), [(a, q), (b, x.tobytes())]
    elif case == "soft_max":
        a = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, n, n)
        out, data = lib.ggspec_soft_max(ctx, a), [(a, x.tobytes())]
    else:
        a, b = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, n, n), lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, n, n)
        out, data = lib.ggspec_add(ctx, a, b), [(a, x.tobytes()), (b, x.tobytes())]
    g = lib.ggspec_new_graph(ctx)
    lib.ggspec_build_forward_expand(g, out)
    buf = lib.ggspec_backend_alloc_ctx_tensors(ctx, backend)
    for t, raw in data:
        lib.ggspec_backend_tensor_set(t, raw, 0, len(raw))

    def compute() -> None:
        assert lib.ggspec_backend_graph_compute(backend, g)
        lib.ggspec_backend_synchronize(backend)

    def free() -> None:
        lib.ggspec_backend_buffer_free(buf)
        lib.ggspec_free(ctx)

    return compute, free


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="256 instead of 512/1024")
    args = parser.parse_args(argv)

    from ggspec.native import load_lib
    from ggspec.native.webgpu import WebGPUUnavailable, adapter_name, webgpu_init

    ffi, lib = load_lib()
    t0 = time.perf_counter()
    try:
        gpu = webgpu_init().ptr
    except WebGPUUnavailable as exc:
        print(exc)
        return 0
    startup = time.perf_counter() - t0
    cpu = lib.ggspec_backend_cpu_init()
    lib.ggspec_backend_cpu_set_n_threads(cpu, 1)
    big = 256 if args.quick else 1024
    cases = [("MUL_MAT F32", "mul_mat_f32", 256 if args.quick else 512), ("MUL_MAT F32", "mul_mat_f32", big),
             ("MUL_MAT Q4_0", "mul_mat_q4_0", big), ("SOFT_MAX", "soft_max", big), ("ADD", "add", big)]
    print(f"WebGPU adapter: {adapter_name()}; device start-up {startup * 1e3:.0f} ms\n")
    print("| case | WebGPU ms | native CPU (1 thread) ms | WebGPU / CPU |")
    print("|---|---|---|---|")
    for label, case, n in cases:
        row = []
        for backend in (gpu, cpu):
            compute, free = _graph(lib, ffi, backend, case, n)
            try:
                row.append(_time(compute) * 1e3)
            finally:
                free()
        print(f"| {label} {n} x {n} | {row[0]:.1f} | {row[1]:.1f} | {row[0] / row[1]:.1f} |")
    # bandwidth: 64 MiB up and down
    size = 64 << 20
    params = ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 20, "no_alloc": True})
    ctx = lib.ggspec_init(params[0])
    t = lib.ggspec_new_tensor_1d(ctx, lib.GGSPEC_TYPE_I8, size)
    buf = lib.ggspec_backend_alloc_ctx_tensors(ctx, gpu)
    host = ffi.new("uint8_t[]", size)
    try:
        def upload() -> None:
            lib.ggspec_backend_tensor_set(t, host, 0, size)
            lib.ggspec_backend_synchronize(gpu)

        up = _time(upload)
        down = _time(lambda: lib.ggspec_backend_tensor_get(t, host, 0, size))
        print(f"| upload 64 MiB (tensor_set + synchronize) | {up * 1e3:.1f} ({size / up / 2**30:.2f} GiB/s) | — | — |")
        print(f"| download 64 MiB (tensor_get) | {down * 1e3:.1f} ({size / down / 2**30:.2f} GiB/s) | — | — |")
    finally:
        lib.ggspec_backend_buffer_free(buf)
        lib.ggspec_free(ctx)
        lib.ggspec_backend_free(cpu)
        lib.ggspec_backend_free(gpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
