"""The native CPU kernels on every path this machine has (native/src/simd.h): the portable C
ones, the AVX2 ones and the AVX-512 ones, each reached with GGSPEC_NATIVE_KERNELS (and the
portable ones with GGSPEC_NATIVE_PORTABLE=1 too); the test process itself runs the widest.

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

Each path runs in a subprocess (the kernel choice is made once per process): this file run as
a script with ``--emit THREADS[,THREADS...]`` prints its results as JSON.
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
from ggspec.conformance.engine.approx import dequantized_blocks, mul_mat_atol, norm_atol
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


def _row_length(name: str) -> int:
    """48 floats a row, or 53 for the `*_odd` cases (a tail after 8- and 16-lane loops)."""
    return 53 if name.endswith("_odd") else 48


def _elementwise(name: str) -> tuple[Graph, Any]:
    g = Graph()
    n = _row_length(name)
    name = name.removesuffix("_odd")
    a = g.tensor(F32, (n, 5, 3), _f32(3, 3, 5, n, scale=3.0).tobytes())
    if name in ("add", "mul") and n == 53:
        b = g.tensor(F32, (53, 1, 3), _f32(4, 3, 1, 53).tobytes())
        return g, getattr(lib, f"ggspec_{name}")(g.ctx, a, b)
    if name in ("add", "mul"):
        b = g.tensor(F32, (16, 1, 3), _f32(4, 3, 1, 16).tobytes())
        return g, getattr(lib, f"ggspec_{name}")(g.ctx, a, b)
    if name == "add_rows":
        b = g.tensor(F32, (48, 5, 1), _f32(5, 1, 5, 48).tobytes())
        return g, lib.ggspec_add(g.ctx, a, b)
    if name == "soft_max":
        mask = _f32(6, 5, n)
        mask[1, 3:9] = -np.inf
        m = g.tensor(F32, (n, 5), mask.tobytes())
        return g, lib.ggspec_soft_max_ext(g.ctx, a, m, 0.75)
    if name == "norm":
        return g, lib.ggspec_norm(g.ctx, a, 1e-5)
    if name == "cpy_q8_0":
        src = g.tensor(F32, (64, 7), _halves().tobytes())
        return g, lib.ggspec_cpy(g.ctx, src, g.tensor(Q8_0, (64, 7), bytes(34 * 2 * 7)))
    return g, getattr(lib, f"ggspec_{name}")(g.ctx, a)


ELEMENTWISE = ("add", "mul", "add_rows", "gelu", "silu", "soft_max", "norm", "cpy_q8_0",
               "add_odd", "mul_odd", "gelu_odd", "soft_max_odd", "norm_odd")
EXACT = ("add", "mul", "add_rows", "gelu", "silu", "soft_max", "cpy_q8_0", "add_odd", "mul_odd", "gelu_odd",
         "soft_max_odd", "f32_to_f16")


def _halves() -> np.ndarray:
    """Rows whose values scaled by 127 / max|x| fall on or next to halves (roundf's ties), a zero
    row and a tiny one."""
    x = (_rng(8).integers(-254, 255, size=(7, 64)) / 2.0).astype(np.float32)
    x[:, 0] = 127.0
    x[2] = 0.0
    x[3] *= np.float32(1e-30)
    x[4] = np.nextafter(x[4], np.float32(np.inf))
    return x


def _f16_specials() -> np.ndarray:
    """Floats for the F32 -> F16 conversion: ties at several exponents, F16 subnormals and
    overflow, infinities, NaNs with payloads (in a 16-lane group and in the tail), random."""
    ties = (np.arange(1, 200, dtype=np.float32) + np.float32(0.5)) * np.float32(2.0**-10)
    sub = np.array([2.0**-25, 3 * 2.0**-26, 2.0**-24, 1.5 * 2.0**-24, 6e-8, 65504, 65520, 65519.99, 1e6],
                   dtype=np.float32)
    x = np.concatenate([ties, sub, -sub, _f32(9, 300, scale=100.0)]).astype(np.float32)
    x[[7, 40, len(x) - 3]] = np.array([np.inf, -np.inf, 0.0], dtype=np.float32)
    bits = x.view(np.uint32)
    bits[[20, 21, len(x) - 1]] = [0x7FC01234, 0x7FFFE000, 0xFFA00000]  # NaNs: payloads low, high; signalling
    return x


def _all_results(threads: int) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    x = _f16_specials()
    y = ffi.new("uint16_t[]", len(x))
    lib.ggspec_quantize_chunk(lib.GGSPEC_TYPE_F16, ffi.from_buffer("float[]", x), y, 0, 1, len(x), ffi.NULL, ffi.NULL)
    out["f32_to_f16"] = bytes(ffi.buffer(y))
    for name in MUL_MAT:
        g, node, _, _ = _mul_mat_inputs(name)
        out[f"mul_mat_{name}"] = g.compute(node, threads)
    for name in ELEMENTWISE:
        g, node = _elementwise(name)
        out[name] = g.compute(node, threads)
    return out


def _cpu_flags() -> set[str]:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        return set(next((line.split() for line in f if line.startswith("flags")), []))


def machine_paths() -> list[str]:
    """The kernel paths this CPU has, narrowest first (simd.c's conditions)."""
    flags = _cpu_flags()
    paths = ["portable"]
    if {"avx2", "fma", "f16c"} <= flags:
        paths.append("avx2")
        if {"avx512f", "avx512bw", "avx512vl"} <= flags:
            paths.append("avx512")
    return paths


def _path_results(env_update: dict[str, str], threads: tuple[int, ...]) -> tuple[str, dict[int, dict[str, bytes]]]:
    """(the kernels the subprocess chose, threads -> results) with `env_update` set."""
    env = {k: v for k, v in os.environ.items() if k not in ("GGSPEC_NATIVE_PORTABLE", "GGSPEC_NATIVE_KERNELS")}
    env.update(env_update)
    proc = subprocess.run([sys.executable, __file__, "--emit", ",".join(map(str, threads))], env=env,
                          capture_output=True, text=True, check=True, timeout=600)
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    return doc["kernels"], {int(t): {k: bytes.fromhex(v) for k, v in r.items()} for t, r in doc["results"].items()}


@pytest.fixture(scope="module")
def paths() -> dict[str, dict[int, dict[str, bytes]]]:
    """path -> threads -> results, for each path this machine has, each in its own process."""
    out = {}
    for path in machine_paths():
        kernels, results = _path_results({"GGSPEC_NATIVE_KERNELS": path}, (2, 1, 3))
        assert kernels == path
        out[path] = results
    return out


@pytest.fixture(scope="module")
def default() -> dict[str, bytes]:
    return _all_results(2)


# --- the tests ------------------------------------------------------------------------------------


def test_the_widest_path_is_chosen_and_the_variables_cap_it(paths: dict[str, dict[int, dict[str, bytes]]]) -> None:
    """This process runs the widest path the CPU has; the fixture's processes ran each path
    named by GGSPEC_NATIVE_KERNELS; GGSPEC_NATIVE_PORTABLE=1 wins over it; a path the CPU lacks
    gives the widest below it, an unknown name the widest (with a line on stderr)."""
    have = machine_paths()
    assert set(paths) == set(have)
    name = ffi.string(lib.ggspec_backend_cpu_kernels()).decode()
    if os.environ.get("GGSPEC_NATIVE_PORTABLE", "") in ("", "0") and not os.environ.get("GGSPEC_NATIVE_KERNELS"):
        assert name == have[-1]
    kernels, _ = _path_results({"GGSPEC_NATIVE_PORTABLE": "1", "GGSPEC_NATIVE_KERNELS": "avx512"}, ())
    assert kernels == "portable"
    kernels, _ = _path_results({"GGSPEC_NATIVE_KERNELS": "avx512"}, ())
    assert kernels == have[-1]
    env = {k: v for k, v in os.environ.items() if k not in ("GGSPEC_NATIVE_PORTABLE", "GGSPEC_NATIVE_KERNELS")}
    proc = subprocess.run([sys.executable, __file__, "--emit", ""], env=dict(env, GGSPEC_NATIVE_KERNELS="avx9"),
                          capture_output=True, text=True, check=True, timeout=600)
    assert json.loads(proc.stdout.strip().splitlines()[-1])["kernels"] == have[-1]
    assert "GGSPEC_NATIVE_KERNELS=avx9 is not one of portable, avx2, avx512" in proc.stderr
    for results in paths.values():
        assert set(results[2]) == {f"mul_mat_{n}" for n in MUL_MAT} | set(ELEMENTWISE) | {"f32_to_f16"}


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
def test_mul_mat_within_the_bound_on_every_path(name: str, default: dict[str, bytes],
                                                paths: dict[str, dict[int, dict[str, bytes]]]) -> None:
    _mul_mat_bound(name, default[f"mul_mat_{name}"])
    for results in paths.values():
        _mul_mat_bound(name, results[2][f"mul_mat_{name}"])


@pytest.mark.parametrize("name", EXACT)
def test_exact_kernels_give_the_portable_bytes(name: str, default: dict[str, bytes],
                                               paths: dict[str, dict[int, dict[str, bytes]]]) -> None:
    assert default[name] == paths["portable"][2][name]
    for results in paths.values():
        assert results[2][name] == paths["portable"][2][name]


def test_the_simd_paths_give_each_others_bytes(default: dict[str, bytes],
                                               paths: dict[str, dict[int, dict[str, bytes]]]) -> None:
    """Every case, MUL_MAT and NORM included: the AVX-512 kernels keep the AVX2 ones' operation
    order (simd_avx512.c); the test process's results are those of the path it chose."""
    assert default == paths[ffi.string(lib.ggspec_backend_cpu_kernels()).decode()][2]
    simd = [p for p in paths if p != "portable"]
    if not simd:
        pytest.skip("this CPU has no SIMD path")
    for path in simd:
        assert paths[path][2] == paths[simd[0]][2], path


@pytest.mark.parametrize("name", ["add", "mul", "add_rows", "add_odd", "mul_odd"])
def test_broadcast_binary_ops_match_numpy(name: str, default: dict[str, bytes]) -> None:
    n = _row_length(name)
    a = _f32(3, 3, 5, n, scale=3.0)
    b = (_f32(5, 1, 5, 48) if name == "add_rows" else np.tile(_f32(4, 3, 1, 53), (1, 5, 1)) if n == 53
         else np.tile(_f32(4, 3, 1, 16), (1, 5, 3)))
    fn: Callable[[Any, Any], Any] = np.multiply if name.startswith("mul") else np.add
    assert default[name] == fn(a, b).astype(np.float32).tobytes()


def test_q8_0_quantization_is_the_reference_rounding(default: dict[str, bytes],
                                                    paths: dict[str, dict[int, dict[str, bytes]]]) -> None:
    """CPY to Q8_0 (and MUL_MAT's conversion of b, the same function) gives the reference's
    bytes on every path."""
    expected = b"".join(quants.quantize_q8_0(row).tobytes() for row in _halves())
    assert default["cpy_q8_0"] == expected
    for path, results in paths.items():
        assert results[2]["cpy_q8_0"] == expected, path


@pytest.mark.parametrize("name", ["norm", "norm_odd"])
def test_norm_within_its_bound(name: str, default: dict[str, bytes], paths: dict[str, dict[int, dict[str, bytes]]]) -> None:
    n = _row_length(name)
    x = _f32(3, 3, 5, n, scale=3.0)
    p = np.frombuffer(paths["portable"][2][name], np.float32).reshape(x.shape)
    for r in (default, *(results[2] for results in paths.values())):
        d = np.frombuffer(r[name], np.float32).reshape(x.shape)
        assert np.all(np.abs(d.astype(np.float64) - p) <= norm_atol(x, p, 1e-5))


def test_results_do_not_depend_on_the_thread_count(default: dict[str, bytes],
                                                   paths: dict[str, dict[int, dict[str, bytes]]]) -> None:
    for threads in (1, 3):
        assert _all_results(threads) == default
    for path, results in paths.items():
        for threads in (1, 3):
            assert results[threads] == results[2], (path, threads)


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
        counts = [int(t) for t in sys.argv[2].split(",") if t]
        print(json.dumps({"kernels": ffi.string(lib.ggspec_backend_cpu_kernels()).decode(),
                          "results": {t: {k: v.hex() for k, v in _all_results(t).items()} for t in counts}}))
