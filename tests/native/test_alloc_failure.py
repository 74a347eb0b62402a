"""Allocation failure: every allocation native/ makes in a lifecycle and in a scheduler run is made
to fail in turn (the n-th, for every n the run reaches), each in a forked worker. Each run must
end cleanly: a Python error (the wrapper's MemoryError for a NULL result, a typed error) or an
abort naming the failed allocation (rc.8's GGML_ASSERT message, or the virtual device's own
report), never a segfault, a hang or a leak (a clean ending frees what it made: the blocks still
live afterwards are no more than the run keeps for the process's lifetime, such as devices).

The build hook is native/src/alloc_failure.h: a variant built with it and the linker's --wrap
counts and fails malloc / calloc / realloc / aligned_alloc and counts free.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from ggspec.conformance.engine.isolate import run_forked

WRAPPED = ("malloc", "calloc", "realloc", "aligned_alloc", "free")


@pytest.fixture(scope="module")
def variant(tmp_path_factory: pytest.TempPathFactory) -> str:
    from ggspec.native.build import SRC_DIR, build_variant

    out = tmp_path_factory.mktemp("alloc_failure")
    build_variant(
        "ggspec_native_alloc_failure", str(out),
        extra_cflags=["-include", os.path.join(SRC_DIR, "alloc_failure.h")],
        extra_ldflags=["-Wl," + ",".join(f"--wrap={f}" for f in WRAPPED)],
    )
    return str(out)


def _load(variant: str) -> tuple[Any, Any, Any]:
    """In the worker: the variant as the native module (the wrapper loads it), and its hook."""
    os.environ["GGSPEC_NATIVE_MODULE"] = f"{variant}:ggspec_native_alloc_failure"
    sys.path.insert(0, variant)
    import ggspec.native as package

    for name in [m for m in sys.modules if m.startswith("ggspec.native.") and m != "ggspec.native.build"]:
        del sys.modules[name]  # the parent may have loaded the default build's wrapper: load it again
        if hasattr(package, name.rsplit(".", 1)[1]):
            delattr(package, name.rsplit(".", 1)[1])  # else `from ggspec.native import x` finds the old one
    import ggspec_native_alloc_failure as mod  # type: ignore[import-not-found]

    hook = ctypes.CDLL(mod.__file__)
    hook.ggspec_alloc_count.restype = hook.ggspec_alloc_live.restype = ctypes.c_long
    hook.ggspec_alloc_fail_at.argtypes = [ctypes.c_long]
    return mod.ffi, mod.lib, hook


def lifecycle(ffi: Any, lib: Any) -> None:
    """Contexts, tensors, views, CPU and device buffers, data, copies, the registry; all freed."""
    from ggspec.native import backend, buffer, copy, cpu, registry, tdata, tensor, vdev
    from ggspec.reference.types import GGMLType
    from ggspec.reference.vdev import VDevParams

    made: list[Callable[[], None]] = []
    try:
        ctx = tensor.init(1 << 16, no_alloc=True)
        made.append(lambda: tensor.free(ctx))
        b_cpu = cpu.cpu_init()
        made.append(lambda: backend.backend_free(b_cpu))
        b_dev = vdev.vdev_init(VDevParams(lazy=True))
        made.append(lambda: backend.backend_free(b_dev))
        bufs = []
        for b in (b_cpu, b_dev):
            buf = backend.backend_alloc_buffer(b, 256)
            if buf is None:
                raise MemoryError("backend_alloc_buffer returned NULL")
            made.append(lambda buf=buf: buffer.buffer_free(buf))
            bufs.append(buf)
        ts = []
        for buf in bufs:
            t = tensor.new_tensor(ctx, GGMLType.F32, [8, 2])
            tdata.tensor_alloc(buf, t, 0)
            tdata.tensor_set(t, bytes(range(64)))
            ts.append(t)
        copy.tensor_copy(ts[0], ts[1])
        copy.tensor_copy_async(b_dev, ts[1], ts[0])
        host = bytearray(64)
        tdata.tensor_get_async(b_dev, ts[1], host, 0, 64)
        backend.backend_synchronize(b_dev)
        v = tensor.view(ctx, ts[0], [4], [], 8)
        tdata.tensor_get(v, 0, 16)
        wrapped = cpu.cpu_buffer_from_ptr(bytearray(128), 128)
        made.append(lambda: buffer.buffer_free(wrapped))
        buffer.buffer_clear(wrapped, 1)
        b_reg = registry.reg_init_backend_from_str("CPU")
        if b_reg is None:
            raise MemoryError("reg_init_backend_from_str returned NULL")
        made.append(lambda: backend.backend_free(b_reg))
        reg_buf = registry.reg_alloc_buffer(0, 64)
        if reg_buf is None:
            raise MemoryError("reg_alloc_buffer returned NULL")
        made.append(lambda: buffer.buffer_free(reg_buf))
    finally:
        for undo in reversed(made):
            undo()


def sched_run(ffi: Any, lib: Any) -> None:
    """Weights on a device and the CPU, a graph split between them, measured and computed; all freed."""
    made: list[Callable[[], None]] = []

    def need(p: Any, what: str) -> Any:
        if p == ffi.NULL:
            raise MemoryError(f"{what} returned NULL")
        return p

    def new_ctx(n_tensors: int, extra: int = 0) -> Any:
        params = ffi.new("struct ggspec_init_params *")
        params.mem_size = n_tensors * lib.ggspec_tensor_overhead() + extra
        params.no_alloc = True
        ctx = need(lib.ggspec_init(params[0]), "ggspec_init")
        made.append(lambda: lib.ggspec_free(ctx))
        return ctx

    try:
        p = ffi.new("struct ggspec_vdev_params *")
        name = ffi.new("char[]", b"GPU")
        p.name, p.alignment, p.async_entries, p.buffer_cpy_tensor, p.cpy_tensor_async = name, 32, True, True, True
        p.ops_mask = [2**64 - 1, 2**64 - 1]
        dev = need(lib.ggspec_vdev_init(p), "ggspec_vdev_init")
        made.append(lambda: lib.ggspec_backend_free(dev))
        cpu_b = need(lib.ggspec_backend_cpu_init(), "ggspec_backend_cpu_init")
        made.append(lambda: lib.ggspec_backend_free(cpu_b))
        weights = {}
        for backend, names in ((dev, ("w0",)), (cpu_b, ("w1", "x"))):
            ctx = new_ctx(4)
            for n in names:
                t = lib.ggspec_new_tensor_2d(ctx, lib.GGSPEC_TYPE_F32, 8, 4)
                lib.ggspec_set_name(t, n.encode())
                weights[n] = t
            buf = need(lib.ggspec_backend_alloc_ctx_tensors(ctx, backend), "alloc_ctx_tensors")
            made.append(lambda buf=buf: lib.ggspec_backend_buffer_free(buf))
            lib.ggspec_backend_buffer_set_usage(buf, lib.GGSPEC_BACKEND_BUFFER_USAGE_WEIGHTS)
            for n in names:
                data = bytes(range(128))
                lib.ggspec_backend_tensor_set(weights[n], data, 0, len(data))
        arr = ffi.new("ggspec_backend_t[]", [dev, cpu_b])
        sched = need(lib.ggspec_backend_sched_new(arr, ffi.NULL, 2, 64), "sched_new")
        made.append(lambda: lib.ggspec_backend_sched_free(sched))

        def graph() -> tuple[Any, Any]:
            gctx = new_ctx(64, extra=4 * lib.ggspec_graph_overhead_custom(64, False))
            g = need(lib.ggspec_new_graph_custom(gctx, 64, False), "new_graph")
            a = lib.ggspec_add(gctx, weights["x"], weights["w0"])
            m = lib.ggspec_mul(gctx, a, weights["w1"])
            out = lib.ggspec_scale(gctx, m, 0.5)
            lib.ggspec_build_forward_expand(g, out)
            return g, out

        measure, _ = graph()
        lib.ggspec_backend_sched_init_measure(sched, measure)
        g, out = graph()
        lib.ggspec_backend_sched_graph_compute(sched, g)
        for b in (dev, cpu_b):
            lib.ggspec_backend_synchronize(b)
        res = ffi.new("char[]", 128)
        lib.ggspec_backend_tensor_get(out, res, 0, 128)
    finally:
        for undo in reversed(made):
            undo()


SCENARIOS = {"lifecycle": lifecycle, "scheduler": sched_run}


def _run(variant: str, scenario: str, fail_at: int) -> tuple[int, int]:
    """In the worker: (allocations made, blocks left live) by the scenario with the fail_at-th failing."""
    ffi, lib, hook = _load(variant)
    # what the process keeps once loaded (the registry's CPU entry, the CPU buffer type) is made
    # before counting: query it once
    lib.ggspec_backend_reg_get_count()
    start, live = hook.ggspec_alloc_count(), hook.ggspec_alloc_live()
    hook.ggspec_alloc_fail_at(fail_at)
    try:
        SCENARIOS[scenario](ffi, lib)
    except MemoryError:
        pass  # a NULL result, reported by the wrapper or the scenario: a clean error
    hook.ggspec_alloc_fail_at(0)
    return hook.ggspec_alloc_count() - start, hook.ggspec_alloc_live() - live


CLEAN_ABORTS = ("GGML_ASSERT", "ggspec vdev:")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_allocation_failure_ends_cleanly(variant: str, scenario: str) -> None:
    base = run_forked(lambda: _run(variant, scenario, 0), timeout=120)
    assert base.status == "ok", f"the scenario must run without failures first: {base.describe()}\n{base.stderr}"
    n_allocs, kept = base.value
    assert n_allocs > 10, f"the scenario reached only {n_allocs} allocations"
    outcomes: Counter[str] = Counter()
    bad: list[str] = []
    for n in range(1, n_allocs + 1):
        res = run_forked(lambda n=n: _run(variant, scenario, n), timeout=60)
        if res.status == "ok":
            _, left = res.value
            outcomes["clean error or survived"] += 1
            if left > kept:
                bad.append(f"allocation {n}: {left - kept} block(s) leaked")
        elif res.status == "exception" and isinstance(res.value, Exception):
            outcomes[f"typed error {type(res.value).__name__}"] += 1
            from ggspec.reference.clauses import SpecError

            if not isinstance(res.value, (SpecError, TypeError, ValueError)):
                bad.append(f"allocation {n}: untyped {res.value!r}")
        elif res.status == "signal" and res.signum == signal.SIGABRT and any(m in res.stderr for m in CLEAN_ABORTS):
            said = [line for line in res.stderr.splitlines() if any(m in line for m in CLEAN_ABORTS)][-1]
            outcomes[f"abort: {said.rsplit(': ', 1)[-1].strip()}"] += 1
        else:
            outcomes[res.describe()] += 1
            bad.append(f"allocation {n}: {res.describe()}\n{res.stderr[-800:]}")
    print(f"{scenario}: {n_allocs} allocations failed in turn: {dict(outcomes)}")
    assert not bad, "\n".join(bad[:10])
