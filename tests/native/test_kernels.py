"""The native CPU kernels on both paths: the run-time chosen SIMD kernels (native/src/simd.h)
and the portable C ones forced by GGSPEC_NATIVE_PORTABLE=1.

Shapes are picked to cross the blocked matrix product's edges (k past one GGSPEC_GEMM_KC block
of 256, more b rows than one MC block of 120, more weight rows than one NC block of 1024, tails
that are not multiples of the 6 x 16 micro-tile, quantized rows whose block count is not a
multiple of 8, Q8_0 inputs holding -128). What is compared is what spec/core.md's Tolerances
table asks:

- ADD, MUL (row broadcasting), GELU, SILU and SOFT_MAX: the same bytes on both paths (GELU,
  SILU and SOFT_MAX through rc.8's F16 tables), ADD / MUL also equal to numpy's float32 result;
- MUL_MAT (F32, F16, Q4_0, Q8_0 weights): within `conformance.approx.mul_mat_atol` of the
  float64 product of the values the kernel reads, on each path;
- NORM: within `conformance.approx.norm_atol` of the other path;
- every case: the same bytes with 1, 2 and 3 threads (CPU-16; native computes a graph of less
  than 2^20 multiply-adds / elements on one thread, so the larger cases are the ones split);
- CPY to Q8_0: the reference rounding's bytes (roundf's ties included);
- and a few of the suite's compute checks pass with the portable path forced.

The portable side runs in a subprocess (the kernel choice is made once per process): this file
run as a script with ``--emit`` prints its results as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ggspec.conformance.approx import dequantized_blocks, mul_mat_atol, norm_atol
from ggspec.native import load_lib
from ggspec.reference import quants
from ggspec.reference.types import GGMLType

ffi, lib = load_lib()

F32, F16, Q4_0, Q8_0 = lib.GGSPEC_TYPE_F32, lib.GGSPEC_TYPE_F16, lib.GGSPEC_TYPE_Q4_0, lib.GGSPEC_TYPE_Q8_0


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(seed: int, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _q8_with_extremes(seed: int, rows: int, k: int) -> bytes:
    """Q8_0 rows quantized by the reference, then some codes set to -128 and 127."""
    blocks = np.frombuffer(b"".join(quants.quantize_q8_0(_f32(seed + r, k)).tobytes() for r in range(rows)),
                           dtype=np.uint8).copy().reshape(-1, 34)
    blocks[::3, 2 + 5] = 0x80  # -128
    blocks[1::4, 2 + 30] = 0x7F
    return blocks.tobytes()


# --- building and computing one graph -----------------------------------------------------------


class Graph:
    """A context with tensors holding given bytes, one result node, computed on a CPU backend."""

    def __init__(self) -> None:
        params = ffi.new("struct ggspec_init_params *", {"mem_size": 96 << 20, "no_alloc": False})
        self.ctx = ffi.gc(lib.ggspec_init(params[0]), lib.ggspec_free)

    def tensor(self, type_: int, ne: tuple[int, ...], data: bytes) -> Any:
        t = getattr(lib, f"ggspec_new_tensor_{len(ne)}d")(self.ctx, type_, *ne)
        assert len(data) == lib.ggspec_nbytes(t)
        ffi.memmove(t.data, data, len(data))
        return t

    def compute(self, out: Any, threads: int) -> bytes:
        backend = ffi.gc(lib.ggspec_backend_cpu_init(), lib.ggspec_backend_free)
        lib.ggspec_backend_cpu_set_n_threads(backend, threads)
        g = lib.ggspec_new_graph(self.ctx)
        lib.ggspec_build_forward_expand(g, out)
        assert lib.ggspec_backend_graph_compute(backend, g)
        return bytes(ffi.buffer(out.data, lib.ggspec_nbytes(out)))


def _weights(type_: int, rows: int, k: int, seed: int) -> bytes:
    w = _f32(seed, rows, k)
    if type_ == F32:
        return w.tobytes()
    if type_ == F16:
        return w.astype(np.float16).tobytes()
    fn = quants.quantize_q4_0 if type_ == Q4_0 else quants.quantize_q8_0
    return b"".join(fn(row).tobytes() for row in w)


#: name -> (weight type, (K, weight rows, weight batches), (b rows, b batches), b given as Q8_0)
MUL_MAT: dict[str, tuple[int, tuple[int, int, int], tuple[int, int], bool]] = {
    "f32_blocks": (F32, (300, 1030, 1), (130, 1), False),
    "f32_batched": (F32, (40, 21, 2), (7, 4), False),
    "f32_tiny": (F32, (3, 1, 1), (1, 1), False),
    "f16_blocks": (F16, (264, 37, 1), (13, 1), False),
    "q4_0_tail": (Q4_0, (32 * 13, 19, 1), (5, 2), False),
    "q4_0_q8_input": (Q4_0, (32 * 9, 11, 1), (3, 1), True),
    "q4_0_split": (Q4_0, (32 * 9, 67, 1), (31, 2), False),  # above native's small-graph bound: split over threads
    "q8_0_q8_input": (Q8_0, (32 * 17, 10, 1), (4, 1), True),
}


def _mul_mat_inputs(name: str) -> tuple[Graph, Any, bytes, bytes]:
    wt, (k, rows, wb), (brows, bb), q8_input = MUL_MAT[name]
    g = Graph()
    wbytes = _weights(wt, rows * wb, k, 1)
    a = g.tensor(wt, (k, rows, wb), wbytes)
    if q8_input:
        bbytes = _q8_with_extremes(7, brows * bb, k)
        b = g.tensor(Q8_0, (k, brows, bb), bbytes)
    else:
        bbytes = _f32(2, bb, brows, k).tobytes()
        b = g.tensor(F32, (k, brows, bb), bbytes)
    return g, lib.ggspec_mul_mat(g.ctx, a, b), wbytes, bbytes


def _elementwise(name: str) -> tuple[Graph, Any]:
    g = Graph()
    a = g.tensor(F32, (48, 5, 3), _f32(3, 3, 5, 48, scale=3.0).tobytes())
    if name in ("add", "mul"):
        b = g.tensor(F32, (16, 1, 3), _f32(4, 3, 1, 16).tobytes())
        return g, getattr(lib, f"ggspec_{name}")(g.ctx, a, b)
    if name == "add_rows":
        b = g.tensor(F32, (48, 5, 1), _f32(5, 1, 5, 48).tobytes())
        return g, lib.ggspec_add(g.ctx, a, b)
    if name == "soft_max":
        mask = _f32(6, 5, 48)
        mask[1, 3:9] = -np.inf
        m = g.tensor(F32, (48, 5), mask.tobytes())
        return g, lib.ggspec_soft_max_ext(g.ctx, a, m, 0.75)
    if name == "norm":
        return g, lib.ggspec_norm(g.ctx, a, 1e-5)
    if name == "cpy_q8_0":
        src = g.tensor(F32, (64, 7), _halves().tobytes())
        return g, lib.ggspec_cpy(g.ctx, src, g.tensor(Q8_0, (64, 7), bytes(34 * 2 * 7)))
    return g, getattr(lib, f"ggspec_{name}")(g.ctx, a)


ELEMENTWISE = ("add", "mul", "add_rows", "gelu", "silu", "soft_max", "norm", "cpy_q8_0")


def _halves() -> np.ndarray:
    """Rows whose values scaled by 127 / max|x| fall on or next to halves (roundf's ties), a zero
    row and a tiny one."""
    x = (_rng(8).integers(-254, 255, size=(7, 64)) / 2.0).astype(np.float32)
    x[:, 0] = 127.0
    x[2] = 0.0
    x[3] *= np.float32(1e-30)
    x[4] = np.nextafter(x[4], np.float32(np.inf))
    return x


def _all_results(threads: int) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name in MUL_MAT:
        g, node, _, _ = _mul_mat_inputs(name)
        out[f"mul_mat_{name}"] = g.compute(node, threads)
    for name in ELEMENTWISE:
        g, node = _elementwise(name)
        out[name] = g.compute(node, threads)
    return out


def _portable_results(threads: int) -> tuple[str, dict[str, bytes]]:
    env = dict(os.environ, GGSPEC_NATIVE_PORTABLE="1")
    proc = subprocess.run([sys.executable, __file__, "--emit", str(threads)], env=env, capture_output=True,
                          text=True, check=True, timeout=600)
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc["kernels"], {k: bytes.fromhex(v) for k, v in doc["results"].items()}


@pytest.fixture(scope="module")
def portable() -> dict[str, bytes]:
    kernels, results = _portable_results(2)
    assert kernels == "portable"
    return results


@pytest.fixture(scope="module")
def default() -> dict[str, bytes]:
    return _all_results(2)


# --- the tests ------------------------------------------------------------------------------------


def test_the_environment_variable_forces_the_portable_path(portable: dict[str, bytes]) -> None:
    """The fixture ran with GGSPEC_NATIVE_PORTABLE=1 and reported the portable kernels; this
    process reports the kernels it chose (avx2 on a CPU that has AVX2, FMA and F16C)."""
    name = ffi.string(lib.ggspec_backend_cpu_kernels()).decode()
    assert name in ("portable", "avx2")
    if os.environ.get("GGSPEC_NATIVE_PORTABLE", "") in ("", "0"):
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
        expected = "avx2" if {"avx2", "fma", "f16c"} <= set(flags) else "portable"
        assert name == expected
    assert set(portable) == {f"mul_mat_{n}" for n in MUL_MAT} | set(ELEMENTWISE)


def _mul_mat_bound(name: str, got: bytes) -> None:
    wt, (k, rows, wb), (brows, bb), q8_input = MUL_MAT[name]
    _, _, wbytes, bbytes = _mul_mat_inputs(name)
    if wt in (F32, F16):
        a = np.frombuffer(wbytes, np.float32 if wt == F32 else np.float16).astype(np.float64).reshape(1, wb, rows, k)
        b = np.frombuffer(bbytes, np.float32).reshape(1, bb, brows, k)
        if wt == F16:
            b = b.astype(np.float16)  # b' is b rounded to F16 (CORE-61)
        b = b.astype(np.float64)
        exact = np.einsum("xyjk,xyik->xyji", b, np.repeat(a, bb // wb, axis=1))
        atol = mul_mat_atol(GGMLType(wt), a, b)
    else:
        size = 18 if wt == Q4_0 else 34
        a_blocks = dequantized_blocks(GGMLType(wt), np.frombuffer(wbytes, np.uint8).reshape(-1, size))
        b8 = bbytes if q8_input else b"".join(
            quants.quantize_q8_0(row).tobytes() for row in np.frombuffer(bbytes, np.float32).reshape(-1, k))
        b_blocks = dequantized_blocks(GGMLType.Q8_0, np.frombuffer(b8, np.uint8).reshape(-1, 34))
        av = (a_blocks[0] * a_blocks[1][:, None].astype(np.float64)).reshape(1, wb, rows, k)
        bv = (b_blocks[0] * b_blocks[1][:, None].astype(np.float64)).reshape(1, bb, brows, k)
        exact = np.einsum("xyjk,xyik->xyji", bv, np.repeat(av, bb // wb, axis=1))
        atol = mul_mat_atol(GGMLType(wt), av, bv, a_blocks, b_blocks)
    result = np.frombuffer(got, np.float32).astype(np.float64).reshape(exact.shape)
    excess = np.abs(result - exact) - atol
    assert excess.max() <= 0, f"{name}: worst |Δ| over the bound by {excess.max():.3g}"


@pytest.mark.parametrize("name", sorted(MUL_MAT))
def test_mul_mat_within_the_bound_on_both_paths(name: str, default: dict[str, bytes], portable: dict[str, bytes]) -> None:
    _mul_mat_bound(name, default[f"mul_mat_{name}"])
    _mul_mat_bound(name, portable[f"mul_mat_{name}"])


@pytest.mark.parametrize("name", ["add", "mul", "add_rows", "gelu", "silu", "soft_max", "cpy_q8_0"])
def test_exact_kernels_give_the_portable_bytes(name: str, default: dict[str, bytes], portable: dict[str, bytes]) -> None:
    assert default[name] == portable[name]


@pytest.mark.parametrize("name", ["add", "mul", "add_rows"])
def test_broadcast_binary_ops_match_numpy(name: str, default: dict[str, bytes]) -> None:
    a = _f32(3, 3, 5, 48, scale=3.0)
    b = np.tile(_f32(4, 3, 1, 16), (1, 5, 3)) if name != "add_rows" else _f32(5, 1, 5, 48)
    fn: Callable[[Any, Any], Any] = np.multiply if name == "mul" else np.add
    assert default[name] == fn(a, b).astype(np.float32).tobytes()


def test_q8_0_quantization_is_the_reference_rounding(default: dict[str, bytes]) -> None:
    """CPY to Q8_0 (and MUL_MAT's conversion of b, the same function) gives the reference's bytes."""
    assert default["cpy_q8_0"] == b"".join(quants.quantize_q8_0(row).tobytes() for row in _halves())


def test_norm_within_its_bound(default: dict[str, bytes], portable: dict[str, bytes]) -> None:
    x = _f32(3, 3, 5, 48, scale=3.0)
    d, p = (np.frombuffer(r["norm"], np.float32).reshape(x.shape) for r in (default, portable))
    assert np.all(np.abs(d.astype(np.float64) - p) <= norm_atol(x, p, 1e-5))


def test_results_do_not_depend_on_the_thread_count(default: dict[str, bytes]) -> None:
    for threads in (1, 3):
        assert _all_results(threads) == default


def test_graph_checks_pass_on_the_portable_path(tmp_path: Any) -> None:
    """A few of the suite's compute checks with the portable kernels forced (CI runs the whole
    suite that way once too)."""
    env = dict(os.environ, GGSPEC_NATIVE_PORTABLE="1")
    cmd = [sys.executable, "-m", "ggspec.conformance", "check", "--target", "native", "--max-examples", "3",
           "--seed", "1", "--quiet", "--repro-dir", str(tmp_path)]
    for pattern in ("ops.mul_mat_computes", "ops.soft_max_computes", "ops.activations_compute", "graph.random_graphs_compute",
                    "CPU-16"):
        cmd += ["--select", pattern]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--emit":
        res = _all_results(int(sys.argv[2]))
        print(json.dumps({"kernels": ffi.string(lib.ggspec_backend_cpu_kernels()).decode(),
                          "results": {k: v.hex() for k, v in res.items()}}))
