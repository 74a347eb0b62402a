"""Benchmark: computing graphs on the CPU backend — native/ against the real rc.8 code and numpy.

    python bench/graph_compute.py [--quick] [--out bench/RESULTS.md]

One run measures every case on every implementation and prints (and with --out writes) one
markdown table, so the ratios come from the same run on the same machine:

- cases: MUL_MAT of square N x N matrices (N = 64, 128, 256, 512, 1024) with F32 and Q4_0
  weights (b F32, so Q4_0 converts b to Q8_0 first), and ADD, MUL, GELU on 1M F32 elements
  (1024 x 1024);
- implementations: `native` (our build, ggspec.native._native as installed: gcc -O2), `rc8 -O2`
  (the rc8 target's library exactly as conformance/adapters/rc8.py builds it), `rc8 -O3
  native` (the same sources built here with `-O3 -march=native`, the bar the issue names), and
  numpy (OpenBLAS matmul; Q4_0 weights dequantized to F32 once, outside the timing; GELU with
  the tanh formula ggml uses);
- threads: 1 and 2 (`ggml_backend_cpu_set_n_threads`; OPENBLAS_NUM_THREADS for numpy).

Each implementation and thread count runs in a worker process of its own (the two rc.8 builds
export the same symbols; numpy's thread count is fixed at import), one after the other. Inside a
worker a graph is built through the conformance suite's Target protocol (the same calls for
native and rc.8), its tensors placed by hand, inputs set, computed once to warm up, then timed
with `time.perf_counter` around `backend_graph_compute` until 0.3 s have passed (at least 3, at
most 50 runs); the median is reported. Each worker also returns a sample of the result, and the
table says how far it is from numpy's (relative to numpy's largest value).

Nothing here is a test: there are no timed assertions anywhere in the project.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SIZES = (64, 128, 256, 512, 1024)
ELEMENTWISE = ("add", "mul", "gelu")
THREADS = (1, 2)
IMPLS = ("native", "rc8 -O2", "rc8 -O3 native", "numpy")
O3_FLAGS = ("-O3", "-march=native", "-fPIC", "-shared", "-std=c11", "-D_GNU_SOURCE", "-DNDEBUG")
SAMPLE = 4096


def cases(quick: bool) -> list[tuple[str, str, int]]:
    """(op, weight type, N): N x N mul_mat, or N*N elements for the element-wise ops."""
    sizes = SIZES[:3] if quick else SIZES
    out = [("mul_mat", wt, n) for wt in ("F32", "Q4_0") for n in sizes]
    out += [(op, "F32", 256 if quick else 1024) for op in ELEMENTWISE]
    return out


def case_name(op: str, wt: str, n: int) -> str:
    if op == "mul_mat":
        return f"MUL_MAT {n}x{n}, {wt} weights"
    return f"{op.upper()} {n * n // (1 << 20)}M F32" if n * n >= 1 << 20 else f"{op.upper()} {n * n} F32"


# --- the rc.8 builds -------------------------------------------------------------------------------


def rc8_o3_library() -> tuple[Path, Path]:
    """rc.8's sources (fetched by the rc8 adapter) built with -O3 -march=native, cached."""
    from ggspec.conformance.adapters.external import cache_dir
    from ggspec.conformance.adapters.rc8 import LIBS, SOURCES, ensure_rc8

    cpp, _ = ensure_rc8()
    lib = cache_dir() / "rc8-O3-native" / "libwsp_ggml_rc8_O3.so"
    stamp = lib.with_suffix(".cmd")
    cmd = ["gcc", *O3_FLAGS, *(str(cpp / s) for s in SOURCES), "-o", str(lib), *LIBS]
    if not lib.is_file() or not stamp.is_file() or stamp.read_text() != " ".join(cmd):
        lib.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(cmd, check=True, capture_output=True)
        stamp.write_text(" ".join(cmd))
    return cpp, lib


def make_target(impl: str) -> Any:
    from ggspec.conformance.adapters import make_target as make
    from ggspec.reference.clauses import Profile

    if impl == "native":
        return make("native")
    if impl == "rc8 -O2":
        return make("rc8", Profile.RC8)
    from ggspec.conformance.adapters.external import build_external
    from ggspec.conformance.adapters.rc8 import PREFIX, spellings

    cpp, lib = rc8_o3_library()
    return build_external(cpp, lib, PREFIX, "rc8-O3", Profile.RC8, spellings)()


# --- a worker: one implementation, one thread count ------------------------------------------------


def _timed(run: Any) -> float:
    """Median seconds of `run()` (after one warm-up run)."""
    run()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < 0.3 and len(times) < 50):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _spec(op: str, wt: str, n: int) -> Any:
    from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node
    from ggspec.reference.types import GGMLType

    if op == "mul_mat":
        leafs = (Leaf("w", int(GGMLType[wt]), (n, n), 0, True, 1), Leaf("x", int(GGMLType.F32), (n, n), 0, False, 2))
        return GraphSpec(leafs, (Node("y", "mul_mat", ("w", "x")),), ("y",), 16)
    leafs = (Leaf("a", int(GGMLType.F32), (n, n), 0, False, 1), Leaf("b", int(GGMLType.F32), (n, n), 0, False, 2))
    srcs = ("a",) if op == "gelu" else ("a", "b")
    return GraphSpec(leafs if op != "gelu" else leafs[:1], (Node("y", op, srcs),), ("y",), 16)


def worker_ggml(impl: str, threads: int, quick: bool) -> dict[str, Any]:
    import numpy as np
    from ggspec.conformance.checks._placement import place_all
    from ggspec.conformance.inputs.graphspec import build

    t = make_target(impl)
    cpu = t.cpu_init()
    t.cpu_set_n_threads(cpu, threads)
    out: dict[str, Any] = {}
    for op, wt, n in cases(quick):
        built = build(t, _spec(op, wt, n), [cpu])
        place_all(t, built.graph, cpu)
        y = built.tensors["y"]
        seconds = _timed(functools.partial(t.backend_graph_compute, cpu, built.graph))
        sample = np.frombuffer(t.tensor_get(y, 0, 4 * SAMPLE), dtype=np.float32)
        out[case_name(op, wt, n)] = {"seconds": seconds, "sample": sample.tolist()}
    return out


def _numpy_case(op: str, arrays: dict[str, Any]) -> Any:
    """The numpy computation of a case, as a function of no arguments."""
    import numpy as np

    if op == "mul_mat":  # ggml: y[j, i] = dot(w row i, x row j)
        w_t, x = np.ascontiguousarray(arrays["w"].T), arrays["x"]
        return lambda: x @ w_t
    a = arrays["a"]
    if op == "gelu":  # the tanh form ggml computes
        c, k = np.float32(0.7978845608028654), np.float32(0.044715)
        return lambda: 0.5 * a * (1.0 + np.tanh(c * (a + k * a * a * a)))
    b = arrays["b"]
    return functools.partial(np.add if op == "add" else np.multiply, a, b)


def worker_numpy(threads: int, quick: bool) -> dict[str, Any]:
    import numpy as np
    from ggspec.conformance.inputs.graphspec import leaf_bytes
    from ggspec.reference.quants import dequantize_q4_0

    out: dict[str, Any] = {}
    for op, wt, n in cases(quick):
        spec = _spec(op, wt, n)
        arrays = {}
        for leaf in spec.leafs:
            raw = np.frombuffer(leaf_bytes(leaf), dtype=np.uint8)
            values = dequantize_q4_0(raw) if wt == "Q4_0" and leaf.name == "w" else raw.view(np.float32)
            arrays[leaf.name] = np.ascontiguousarray(np.asarray(values, dtype=np.float32).reshape(n, n))
        run = _numpy_case(op, arrays)
        seconds = _timed(run)
        out[case_name(op, wt, n)] = {"seconds": seconds, "sample": np.asarray(run(), dtype=np.float32).ravel()[:SAMPLE].tolist()}
    return out


# --- the main run ------------------------------------------------------------------------------------


def run_worker(impl: str, threads: int, quick: bool) -> dict[str, Any]:
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", impl, "--threads", str(threads)]
    if quick:
        cmd.append("--quick")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"worker {impl} / {threads} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _ms(s: float) -> str:
    return f"{s * 1e3:.3f}" if s < 0.01 else f"{s * 1e3:.1f}"


def _deviation(sample: list[float], truth: list[float]) -> float:
    scale = max((abs(v) for v in truth), default=1.0) or 1.0
    return max((abs(a - b) for a, b in zip(sample, truth, strict=False)), default=0.0) / scale


def table(results: dict[tuple[str, int], dict[str, Any]], quick: bool) -> str:
    head = ("| case | threads | native ms | rc.8 -O2 ms | rc.8 -O3 -march=native ms | numpy ms | native / rc.8 -O2 "
            "| native / rc.8 -O3 | native / numpy | max deviation from numpy (native, rc.8 -O2, rc.8 -O3) |")
    lines = [head, "|" + "---|" * 10]
    for op, wt, n in cases(quick):
        name = case_name(op, wt, n)
        for th in THREADS:
            r = {impl: results[(impl, th)][name] for impl in IMPLS}
            sec = {impl: r[impl]["seconds"] for impl in IMPLS}
            dev = ", ".join(f"{_deviation(r[i]['sample'], r['numpy']['sample']):.1e}" for i in IMPLS[:3])
            lines.append(
                f"| {name} | {th} | {_ms(sec['native'])} | {_ms(sec['rc8 -O2'])} | {_ms(sec['rc8 -O3 native'])} "
                f"| {_ms(sec['numpy'])} | {sec['native'] / sec['rc8 -O2']:.2f} | {sec['native'] / sec['rc8 -O3 native']:.2f} "
                f"| {sec['native'] / sec['numpy']:.2f} | {dev} |")
    return "\n".join(lines)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gcc = "?"
    if shutil.which("gcc"):
        gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    import numpy as np

    return (f"{cpu}, {os.cpu_count()} logical CPUs, Linux {platform.release()}, Python {platform.python_version()}, "
            f"numpy {np.__version__}, {gcc}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    ap.add_argument("--out", help="also write the markdown table to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        if args.worker == "numpy":
            res = worker_numpy(args.threads, args.quick)
        else:
            res = worker_ggml(args.worker, args.threads, args.quick)
        print(json.dumps(res))
        return 0
    results: dict[tuple[str, int], dict[str, Any]] = {}
    load_before = os.getloadavg()
    for impl in IMPLS:
        for th in THREADS:
            print(f"running {impl}, {th} thread(s) ...", file=sys.stderr, flush=True)
            results[(impl, th)] = run_worker(impl, th, args.quick)
    load_after = os.getloadavg()
    load = (f"Load average (1, 5, 15 min) before the run: {', '.join(f'{x:.2f}' for x in load_before)}; after: "
            f"{', '.join(f'{x:.2f}' for x in load_after)}")
    text = f"Machine: {machine()}\n\n{load}\n\n{table(results, args.quick)}\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
