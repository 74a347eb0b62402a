"""Benchmark, in one run: upstream's Vulkan backend (a llama-cpp-python target's, conformance/
adapters/vulkan_device.py) beside ggspec's WebGPU backend (native/src/webgpu.c) and native's CPU
backend, on the same cases as bench/webgpu.py.

    python bench/vulkan_speed.py [--target llama-cpp-python-0.2.38] [--quick]

Cases: MUL_MAT F32 512 and 1024, MUL_MAT Q4_0 1024, SOFT_MAX and ADD on 1024 x 1024 F32 (1M
elements), each timed as graph_compute + synchronize; upload / download of 64 MiB (tensor_set /
tensor_get). Each is run once to warm up, then until 1 s has passed (1 to 20 runs); the median
wall time and the median CPU time of this process (every thread: lavapipe runs the Vulkan and
WebGPU kernels on the CPU, in this process) are reported, with the largest difference of the
result from numpy's, so a number for a result that is wrong (bench/vulkan_defects.c) says so.

Nothing here is a test: there are no timed assertions anywhere in the project.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


class Renamed:
    """A cffi lib whose `ggspec_x` / `GGSPEC_X` are spelled `ggml_x` / `GGML_X` (an upstream build)."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib

    def __getattr__(self, name: str) -> Any:
        for old, new in (("ggspec_", "ggml_"), ("GGSPEC_", "GGML_")):
            if name.startswith(old):
                return getattr(self.lib, new + name[len(old):])
        return getattr(self.lib, name)


def _timed(fn: Callable[[], None], budget: float = 1.0) -> tuple[float, float]:
    """(median wall s, median CPU s of this process) of fn, after one warm-up call."""
    fn()
    walls: list[float] = []
    cpus: list[float] = []
    start = time.perf_counter()
    while not walls or (time.perf_counter() - start < budget and len(walls) < 20):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def _expected(case: str, n: int) -> np.ndarray:
    x = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    if case.startswith("mul_mat"):
        return (x.astype(np.float64) @ x.astype(np.float64).T).astype(np.float32)  # ggml: rows of a times rows of b
    if case == "soft_max":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return x + x


def _is_ours(lib: Any) -> bool:
    return not isinstance(lib, Renamed)


def _graph(lib: Any, ffi: Any, backend: Any, case: str, n: int) -> tuple[Callable[[], None], Callable[[], float],
                                                                          Callable[[], None]]:
    """(compute, max |result - numpy| after a compute, free) for one case with every tensor in a
    buffer of `backend` (bench/webgpu.py's cases; Q4_0 is compared with F32, so its quantization
    error is in the number)."""
    from ggspec.reference import quants

    name = "struct ggspec_init_params *" if _is_ours(lib) else "struct ggml_init_params *"
    params = ffi.new(name, {"mem_size": 16 << 20, "no_alloc": True})
    ctx = lib.ggspec_init(params[0])
    x = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    f32 = lib.GGSPEC_TYPE_F32
    a = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_Q4_0 if case == "mul_mat_q4_0" else f32, n, n)
    b = lib.ggspec_new_tensor_2d(ctx, f32, n, n)
    if case == "soft_max":
        y = lib.ggspec_soft_max(ctx, a)
    elif case == "add":
        y = lib.ggspec_add(ctx, a, b)
    else:
        y = lib.ggspec_mul_mat(ctx, a, b)
    g = lib.ggspec_new_graph(ctx)
    lib.ggspec_build_forward_expand(g, y)
    buf = lib.ggspec_backend_alloc_ctx_tensors(ctx, backend)
    raw_a = b"".join(quants.quantize_q4_0(r).tobytes() for r in x) if case == "mul_mat_q4_0" else x.tobytes()
    lib.ggspec_backend_tensor_set(a, raw_a, 0, len(raw_a))
    lib.ggspec_backend_tensor_set(b, x.tobytes(), 0, x.nbytes)

    def compute() -> None:
        lib.ggspec_backend_graph_compute(backend, g)
        lib.ggspec_backend_synchronize(backend)

    def error() -> float:
        got = ffi.new("float[]", n * n)
        lib.ggspec_backend_tensor_get(y, got, 0, 4 * n * n)
        res = np.frombuffer(ffi.buffer(got), dtype=np.float32).reshape(n, n)
        return float(np.max(np.abs(res - _expected(case, n))))

    def free() -> None:
        lib.ggspec_backend_buffer_free(buf)
        lib.ggspec_free(ctx)

    return compute, error, free


def upstream_vulkan(target: str) -> tuple[Any, Any, Any, Any]:
    """(renamed lib, ffi, Vulkan backend, CPU backend) of `target`'s own build."""
    from ggspec.conformance.adapters import make_target

    t: Any = make_target(target)
    lib = ctypes.CDLL(str(t.build.lib_path))
    count = getattr(lib, "ggml_backend_vk_get_device_count", None)
    if count is not None:
        count()
    init = lib.ggml_backend_vk_init
    init.restype, init.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    vk = t.ffi.cast("ggml_backend_t", init(0))
    cpu = t.lib.ggml_backend_cpu_init()
    t.lib.ggml_backend_cpu_set_n_threads(cpu, 1)
    return Renamed(t.lib), t.ffi, vk, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="llama-cpp-python-0.2.38")
    parser.add_argument("--quick", action="store_true", help="256 instead of 512/1024")
    args = parser.parse_args(argv)
    from ggspec.native import load_lib
    from ggspec.native.webgpu import WebGPUUnavailable, webgpu_init

    ffi, lib = load_lib()
    try:
        gpu = webgpu_init().ptr
    except WebGPUUnavailable as exc:
        gpu = None
        print(f"no WebGPU: {exc}")
    cpu = lib.ggspec_backend_cpu_init()
    lib.ggspec_backend_cpu_set_n_threads(cpu, 1)
    ulib, uffi, vk, ucpu = upstream_vulkan(args.target)
    big = 256 if args.quick else 1024
    cases = [("MUL_MAT F32", "mul_mat_f32", 256 if args.quick else 512), ("MUL_MAT F32", "mul_mat_f32", big),
             ("MUL_MAT Q4_0", "mul_mat_q4_0", big), ("SOFT_MAX", "soft_max", big), ("ADD", "add", big)]
    columns = [(f"upstream Vulkan ({args.target})", ulib, uffi, vk), ("ggspec WebGPU", lib, ffi, gpu),
               ("native CPU, 1 thread", lib, ffi, cpu), (f"upstream CPU ({args.target}), 1 thread", ulib, uffi, ucpu)]
    print("| case | " + " | ".join(f"{c[0]}: wall ms / CPU ms / max err" for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for label, case, n in cases:
        cells = []
        for _, clib, cffi, backend in columns:
            if backend is None:
                cells.append("—")
                continue
            compute, error, free = _graph(clib, cffi, backend, case, n)
            try:
                wall, cpu_s = _timed(compute)
                err = error()
            finally:
                free()
            cells.append(f"{wall * 1e3:.1f} / {cpu_s * 1e3:.1f} / {err:.2g}")
        print(f"| {label} {n} x {n} | " + " | ".join(cells) + " |")
    size = 64 << 20
    cells_up, cells_down = [], []
    for _, clib, cffi, backend in columns[:2]:
        if backend is None:
            cells_up.append("—")
            cells_down.append("—")
            continue
        name = "struct ggspec_init_params *" if _is_ours(clib) else "struct ggml_init_params *"
        params = cffi.new(name, {"mem_size": 1 << 20, "no_alloc": True})
        ctx = clib.ggspec_init(params[0])
        t = clib.ggspec_new_tensor_1d(ctx, clib.GGSPEC_TYPE_I8, size)
        buf = clib.ggspec_backend_alloc_ctx_tensors(ctx, backend)
        host = cffi.new("uint8_t[]", size)

        def upload(clib: Any = clib, t: Any = t, host: Any = host, backend: Any = backend) -> None:
            clib.ggspec_backend_tensor_set(t, host, 0, size)
            clib.ggspec_backend_synchronize(backend)

        up = _timed(upload)
        down = _timed(lambda clib=clib, t=t, host=host: clib.ggspec_backend_tensor_get(t, host, 0, size))
        cells_up.append(f"{up[0] * 1e3:.1f} / {up[1] * 1e3:.1f} ({size / up[0] / 2**30:.2f} GiB/s)")
        cells_down.append(f"{down[0] * 1e3:.1f} / {down[1] * 1e3:.1f} ({size / down[0] / 2**30:.2f} GiB/s)")
        clib.ggspec_backend_buffer_free(buf)
        clib.ggspec_free(ctx)
    print("| upload 64 MiB | " + " | ".join(cells_up) + " | — | — |")
    print("| download 64 MiB | " + " | ".join(cells_down) + " | — | — |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
