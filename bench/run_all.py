"""Benchmark: native's CPU kernels against rc.8 (two builds) and numpy; regenerates the kernel
section of bench/RESULTS.md and its plot.

    python bench/run_all.py [--quick] [--runs N] [--out bench/RESULTS.md] [--plot bench/kernels.png]

One run measures every case on every implementation at 1 and 2 threads, so all ratios come
from the same run on the same machine:

- cases: MUL_MAT of square N x N matrices (N = 64 .. 1024) with F32, F16 and Q4_0 weights (b is
  F32; F16 / Q4_0 weights convert it first), and ADD, MUL, GELU, SOFT_MAX, NORM on 1M F32
  elements (1024 x 1024);
- implementations: `native` (our build as installed: baseline x86-64 code, its SIMD kernels
  chosen at run time: portable, avx2 or avx512, see native/src/simd.h), `native portable`
  (the same library with GGSPEC_NATIVE_PORTABLE=1: the reference C path; 1 thread only),
  `rc8 -O2` (the rc8 target's library as conformance/adapters/rc8.py builds it), `rc8 -O3
  native` (rc.8's sources built with -O3 -march=native by bench/graph_compute.py: the bar
  the issue names) and numpy (OpenBLAS matmul);
- timing: these machines are shared and `nice` does not protect a run (autogroup
  scheduling), so a 1-thread figure is the median *CPU time* of one call (time.process_time
  around it: time the process was actually on a CPU), and a 2-thread figure the *best wall
  time* over the calls (CPU time would count both threads' work). Each case: one warm-up call,
  then calls until 0.3 s have been measured (at least 3, at most 30; a case whose warm-up call
  took over a second, the portable path's large products, is timed once). With `--runs N` each
  2-thread worker runs N times and a 2-thread figure is the median of the N runs' best wall
  times (the 1-thread CPU times are steady enough from one run);
- what ran: the CPU model (lscpu), and for every worker the kernels it computed with: native's
  path (`ggspec_backend_cpu_kernels`), and OpenBLAS's kernel as threadpoolctl reports it
  (`architecture`, which OpenBLAS chooses at load time from the CPU; `pip install -e '.[bench]'`).

Each implementation and thread count runs in a worker process of its own (the rc.8 builds export
the same symbols; numpy fixes its thread count at import). The machine (lscpu model), date and
/proc/loadavg before and after are written with the table. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.graph_compute import _deviation, _ms, machine, make_target  # noqa: E402

SIZES = (64, 128, 256, 512, 1024)
WEIGHTS = ("F32", "F16", "Q4_0")
ROWWISE = ("add", "mul", "gelu", "soft_max", "norm")
THREADS = (1, 2)
IMPLS = ("native", "native portable", "rc8 -O2", "rc8 -O3 native", "numpy")
#: the portable path is the reference path, measured for the record on one thread only (slow)
ONE_THREAD_ONLY = ("native portable",)
SAMPLE = 4096
BEGIN, END = "<!-- kernels:begin (bench/run_all.py writes this part) -->", "<!-- kernels:end -->"


def cases(quick: bool) -> list[tuple[str, str, int]]:
    """(op, weight type, N): an N x N mul_mat, or N*N elements for the row-wise ops."""
    sizes = SIZES[:3] if quick else SIZES
    out = [("mul_mat", wt, n) for wt in WEIGHTS for n in sizes]
    out += [(op, "F32", 256 if quick else 1024) for op in ROWWISE]
    return out


def case_name(op: str, wt: str, n: int) -> str:
    if op == "mul_mat":
        return f"MUL_MAT {n}, {wt}"
    return f"{op.upper()} {n * n // (1 << 20)}M" if n * n >= 1 << 20 else f"{op.upper()} {n * n}"


def _spec(op: str, wt: str, n: int) -> Any:
    from ggspec.conformance.inputs.graphspec import GraphSpec, Leaf, Node
    from ggspec.reference.types import GGMLType

    f32 = int(GGMLType.F32)
    if op == "mul_mat":
        leafs = (Leaf("w", int(GGMLType[wt]), (n, n), 0, True, 1), Leaf("x", f32, (n, n), 0, False, 2))
        return GraphSpec(leafs, (Node("y", "mul_mat", ("w", "x")),), ("y",), 16)
    a, b = Leaf("a", f32, (n, n), 0, False, 1), Leaf("b", f32, (n, n), 0, False, 2)
    if op in ("add", "mul"):
        return GraphSpec((a, b), (Node("y", op, ("a", "b")),), ("y",), 16)
    params = (1e-5,) if op == "norm" else ()
    return GraphSpec((a,), (Node("y", op, ("a",), params),), ("y",), 16)


# --- timing ------------------------------------------------------------------------------------------


def _timed(run: Callable[[], Any], threads: int) -> float:
    """1 thread: median CPU seconds of a call; more: best wall seconds (after one warm-up call;
    a call of more than a second is timed once)."""
    w0 = time.perf_counter()
    run()
    least = 1 if time.perf_counter() - w0 > 1.0 else 3
    samples: list[float] = []
    spent = 0.0
    while len(samples) < least or (spent < 0.3 and len(samples) < 30):
        c0, w0 = time.process_time(), time.perf_counter()
        run()
        c1, w1 = time.process_time(), time.perf_counter()
        samples.append(c1 - c0 if threads == 1 else w1 - w0)
        spent += w1 - w0
    return statistics.median(samples) if threads == 1 else min(samples)


def _ran_native() -> str:
    from ggspec.native import load_lib

    ffi, lib = load_lib()
    return f"native kernels `{ffi.string(lib.ggspec_backend_cpu_kernels()).decode()}`"


def _ran_openblas() -> str:
    """numpy's BLAS as threadpoolctl sees it: library, version, kernel (architecture), threads."""
    try:
        from threadpoolctl import threadpool_info  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return "BLAS kernel unknown (threadpoolctl is not installed: pip install -e '.[bench]')"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return "; ".join(f"{i.get('internal_api')} {i.get('version')}, kernel `{i.get('architecture')}`, "
                     f"{i.get('num_threads')} thread(s)" for i in blas) or "no BLAS found by threadpoolctl"


def worker_ggml(impl: str, threads: int, quick: bool) -> dict[str, Any]:
    import numpy as np
    from ggspec.conformance.checks._placement import place_all
    from ggspec.conformance.inputs.graphspec import build

    t = make_target("native" if impl.startswith("native") else impl)
    cpu = t.cpu_init()
    t.cpu_set_n_threads(cpu, threads)
    out: dict[str, Any] = {}
    for op, wt, n in cases(quick):
        built = build(t, _spec(op, wt, n), [cpu])
        place_all(t, built.graph, cpu)
        seconds = _timed(functools.partial(t.backend_graph_compute, cpu, built.graph), threads)
        sample = np.frombuffer(t.tensor_get(built.tensors["y"], 0, 4 * SAMPLE), dtype=np.float32)
        out[case_name(op, wt, n)] = {"seconds": seconds, "sample": sample.tolist()}
    ran = _ran_native() if impl.startswith("native") else "rc.8's own kernels (compiled in, no run-time choice)"
    return {"ran": ran, "cases": out}


def _numpy_case(op: str, arrays: dict[str, Any]) -> Callable[[], Any]:
    import numpy as np

    if op == "mul_mat":  # ggml: y[j, i] = dot(w row i, x row j)
        w_t, x = np.ascontiguousarray(arrays["w"].T), arrays["x"]
        return lambda: x @ w_t
    a = arrays["a"]
    if op == "gelu":  # the tanh form ggml computes
        c, k = np.float32(0.7978845608028654), np.float32(0.044715)
        return lambda: 0.5 * a * (1.0 + np.tanh(c * (a + k * a * a * a)))
    if op == "soft_max":
        def soft_max() -> Any:
            e = np.exp(a - a.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        return soft_max
    if op == "norm":
        def norm() -> Any:
            c = a - a.mean(axis=1, keepdims=True)
            return c / np.sqrt((c * c).mean(axis=1, keepdims=True) + np.float32(1e-5))
        return norm
    return functools.partial(np.add if op == "add" else np.multiply, a, arrays["b"])


def worker_numpy(threads: int, quick: bool) -> dict[str, Any]:
    import numpy as np
    from ggspec.conformance.inputs.graphspec import leaf_bytes
    from ggspec.reference.quants import dequantize_q4_0

    out: dict[str, Any] = {}
    for op, wt, n in cases(quick):
        arrays = {}
        for leaf in _spec(op, wt, n).leafs:
            raw = np.frombuffer(leaf_bytes(leaf), dtype=np.uint8)
            if leaf.name == "w" and wt == "Q4_0":
                values = dequantize_q4_0(raw)
            elif leaf.name == "w" and wt == "F16":
                values = raw.view(np.float16).astype(np.float32)
            else:
                values = raw.view(np.float32)
            arrays[leaf.name] = np.ascontiguousarray(np.asarray(values, dtype=np.float32).reshape(n, n))
        run = _numpy_case(op, arrays)
        seconds = _timed(run, threads)
        sample = np.asarray(run(), dtype=np.float32).ravel()[:SAMPLE]
        out[case_name(op, wt, n)] = {"seconds": seconds, "sample": sample.tolist()}
    return {"ran": _ran_openblas(), "cases": out}


def run_worker(impl: str, threads: int, quick: bool) -> dict[str, Any]:
    """One worker process's {"ran": what computed, "cases": case -> {seconds, sample}}."""
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
    env.pop("GGSPEC_NATIVE_PORTABLE", None)
    env.pop("GGSPEC_NATIVE_KERNELS", None)
    if impl == "native portable":
        env["GGSPEC_NATIVE_PORTABLE"] = "1"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", impl, "--threads", str(threads)]
    if quick:
        cmd.append("--quick")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"worker {impl} / {threads} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def run_workers(impl: str, threads: int, quick: bool, runs: int) -> dict[str, Any]:
    """`runs` workers' results merged: each case's seconds the median over the runs (the rest
    from the first run); "ran" and "runs" say what computed and how often."""
    results = [run_worker(impl, threads, quick) for _ in range(runs)]
    merged: dict[str, Any] = {"ran": results[0]["ran"], "runs": runs, "cases": {}}
    for name, first in results[0]["cases"].items():
        seconds = [r["cases"][name]["seconds"] for r in results]
        merged["cases"][name] = dict(first, seconds=statistics.median(seconds), each=seconds)
    if any(r["ran"] != merged["ran"] for r in results):
        merged["ran"] += " (other runs: " + ", ".join(r["ran"] for r in results[1:]) + ")"
    return merged


# --- the report ----------------------------------------------------------------------------------------


Results = dict[tuple[str, int], dict[str, Any]]


def table(results: Results, quick: bool) -> str:
    head = ("| case | threads | native ms | native portable ms | rc.8 -O2 ms | rc.8 -O3 -march=native ms | numpy ms "
            "| native / rc.8 -O2 | native / rc.8 -O3 | native / numpy | deviation from numpy (native, rc.8 -O3) |")
    lines = [head, "|" + "---|" * 11]
    for op, wt, n in cases(quick):
        name = case_name(op, wt, n)
        for th in THREADS:
            r = {impl: results[(impl, th)]["cases"][name] for impl in IMPLS if (impl, th) in results}
            sec = {impl: r[impl]["seconds"] for impl in r}
            portable = _ms(sec["native portable"]) if "native portable" in sec else "—"
            dev = ", ".join(f"{_deviation(r[i]['sample'], r['numpy']['sample']):.1e}" for i in ("native", "rc8 -O3 native"))
            lines.append(
                f"| {name} | {th} | {_ms(sec['native'])} | {portable} | {_ms(sec['rc8 -O2'])} "
                f"| {_ms(sec['rc8 -O3 native'])} | {_ms(sec['numpy'])} | {sec['native'] / sec['rc8 -O2']:.2f} "
                f"| {sec['native'] / sec['rc8 -O3 native']:.2f} | {sec['native'] / sec['numpy']:.2f} | {dev} |")
    return "\n".join(lines)


def goals(results: Results, quick: bool) -> str:
    """The issue's two goals, read off this run."""
    slower = []
    for op, wt, n in cases(quick):
        name = case_name(op, wt, n)
        for th in THREADS:
            ratio = (results[("native", th)]["cases"][name]["seconds"]
                     / results[("rc8 -O3 native", th)]["cases"][name]["seconds"])
            if ratio > 1.0:
                slower.append(f"{name} at {th} thread{'s' if th > 1 else ''} ({ratio:.2f})")
    n_lines = len(cases(quick)) * len(THREADS)
    first = (f"- native no slower than rc.8 -O3 -march=native: met on {n_lines - len(slower)} of {n_lines} lines"
             + (f"; slower on {', '.join(slower)}." if slower else "."))
    big = case_name("mul_mat", "F32", SIZES[2] if quick else 1024)
    nat, blas = results[("native", 1)]["cases"][big]["seconds"], results[("numpy", 1)]["cases"][big]["seconds"]
    n = int(big.split()[1].rstrip(","))
    second = (f"- {big} on 1 thread: native {2 * n**3 / nat / 1e9:.1f} GFLOP/s, OpenBLAS {2 * n**3 / blas / 1e9:.1f} "
              f"GFLOP/s: native at {100 * blas / nat:.0f}% of OpenBLAS (goal: at least 60%).")
    return first + "\n" + second


def plot(results: Results, quick: bool, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [case_name(*c) for c in cases(quick)]
    shown = ("native", "native portable", "rc8 -O2", "numpy")
    fig, axes = plt.subplots(1, len(THREADS), figsize=(12, 0.32 * len(names) + 1.6), sharey=True)
    for ax, th in zip(axes, THREADS, strict=True):
        bar = 0.8 / len(shown)
        for k, impl in enumerate(shown):
            if (impl, th) not in results:
                continue
            ratios = [results[(impl, th)]["cases"][nm]["seconds"] / results[("rc8 -O3 native", th)]["cases"][nm]["seconds"]
                      for nm in names]
            ax.barh([i + (k - (len(shown) - 1) / 2) * bar for i in range(len(names))], ratios, height=bar, label=impl,
                    color=f"C{k}")
        ax.axvline(1.0, color="black", linewidth=1)
        ax.set_xscale("log")
        ax.set_title(f"{th} thread{'s' if th > 1 else ''}: " + ("median CPU time" if th == 1 else "best wall time"))
        ax.set_xlabel("time / rc.8 -O3 -march=native (log; < 1 is faster)")
        ax.grid(axis="x", which="both", alpha=0.3)
    axes[0].set_yticks(range(len(names)), names)
    axes[0].invert_yaxis()
    axes[0].legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _lscpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "?"
    m = re.search(r"^Model name:\s*(.+)$", out, re.M)
    flags = re.search(r"^Flags:\s*(.+)$", out, re.M)
    have = sorted({"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl"} & set(flags.group(1).split() if flags else ()))
    return f"{m.group(1).strip() if m else '?'} (lscpu; SIMD flags: {', '.join(have) or 'none'})"


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def what_ran(results: Results) -> str:
    """One line per worker: the kernels it computed with, and how many runs its figures are of."""
    lines = ["| implementation | threads | runs | computed with |", "|---|---|---|---|"]
    for (impl, th), r in results.items():
        lines.append(f"| {impl} | {th} | {r['runs']} | {r['ran']} |")
    return "\n".join(lines)


def section(results: Results, quick: bool, command: str, started: str, took: float, load: tuple[str, str],
            plot_path: Path | None) -> str:
    kernels = results[("native", 1)]["ran"]
    runs = max(r["runs"] for r in results.values())
    parts = [
        BEGIN,
        "## Kernels: native against rc.8 and numpy",
        "",
        f"Command (from the repository root): `{command}`  ",
        f"Date: {started} UTC, {took:.0f} s  ",
        f"Machine: {_lscpu_model()}; {machine()}  ",
        f"native on this machine: {kernels}  ",
        f"Load (/proc/loadavg, 1 / 5 / 15 min) before: {load[0]}; after: {load[1]}",
        "",
        "1 thread: median CPU time of one `graph_compute` call (or numpy call); 2 threads: best wall time"
        + (f", the median over {runs} runs of the worker" if runs > 1 else "")
        + ". Ratios are time over time from this one run (below 1: native is faster).",
        "",
        table(results, quick),
        "",
        "What computed each column (every worker process):",
        "",
        what_ran(results),
        "",
        "Goals (from this run):",
        "",
        goals(results, quick),
    ]
    if plot_path is not None:
        rel = os.path.relpath(plot_path, ROOT / "bench")
        parts += ["", f"![time relative to rc.8 -O3 -march=native, 1 and 2 threads]({rel})"]
    parts.append(END)
    return "\n".join(parts)


def write_section(path: Path, text: str) -> None:
    """Replace the kernel section of `path` (between the markers), or append it."""
    old = path.read_text() if path.is_file() else "# Benchmark results\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + text + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(new)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    ap.add_argument("--out", help="replace the kernel section of this markdown file (bench/RESULTS.md)")
    ap.add_argument("--plot", help="write the PNG plot here (needs matplotlib: pip install -e '.[bench]')")
    ap.add_argument("--runs", type=int, default=1, metavar="N",
                    help="run each 2-thread worker N times; its figures are the medians (default 1)")
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
    if args.runs < 1:
        ap.error("--runs must be at least 1")

    command = "python " + " ".join(["bench/run_all.py", *sys.argv[1:]])
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    t0 = time.perf_counter()
    load_before = _loadavg()
    results: Results = {}
    for impl in IMPLS:
        for th in THREADS:
            if th > 1 and impl in ONE_THREAD_ONLY:
                continue
            print(f"running {impl}, {th} thread(s) ...", file=sys.stderr, flush=True)
            results[(impl, th)] = run_workers(impl, th, args.quick, args.runs if th > 1 else 1)
    load_after = _loadavg()
    plot_path = Path(args.plot).resolve() if args.plot else None
    if plot_path is not None:
        plot(results, args.quick, plot_path)
    text = section(results, args.quick, command, started, time.perf_counter() - t0, (load_before, load_after), plot_path)
    print(text)
    if args.out:
        write_section(Path(args.out), text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
