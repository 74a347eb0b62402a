"""The fuzz tests' view of native/'s Python wrapper: every public function, with its parameter kinds
(see fuzzcalls.py)."""

from __future__ import annotations

import importlib
import os
from typing import Any

from fuzzcalls import Api, Fn


def native_api() -> Api:
    """The wrapper is ggspec.native, or the package GGSPEC_FUZZ_WRAPPER names (an older copy, to
    measure what it let through)."""
    package = os.environ.get("GGSPEC_FUZZ_WRAPPER", "ggspec.native")
    nb, nbuf, ncopy, ncpu, nreg, ntd, nt, nvd, _lib = (
        importlib.import_module(f"{package}.{m}")
        for m in ("backend", "buffer", "copy", "cpu", "registry", "tdata", "tensor", "vdev", "_lib")
    )
    ffi, lib = _lib.ffi, _lib.lib
    from ggspec.reference.clauses import SpecError

    def host_alloc(_: Any, size: int, as_cdata: bool) -> Any:
        if not isinstance(size, int) or not isinstance(as_cdata, bool) or not 0 <= size <= 1 << 20:
            raise ValueError("the fuzz test's own host memory: a small size")
        return ffi.new("uint8_t[]", size) if as_cdata else bytearray(size)

    def f(name: str, params: str, call: Any, returns: str | None = None, frees: int | None = None) -> Fn:
        fn = Fn(name, tuple(params.split()), lambda _state, *a: call(*a), returns, frees)
        fn.call.__wrapped__ = call  # type: ignore[attr-defined]
        return fn

    fns = [
        Fn("host_alloc", ("size", "bool"), host_alloc, "host"),
        f("cpu_init", "", ncpu.cpu_init, "backend"),
        f("cpu_buffer_type", "", ncpu.cpu_buffer_type, "buft"),
        f("vdev_init", "vparams", nvd.vdev_init, "backend"),
        f("backend_name", "backend", nb.backend_name),
        f("backend_free", "backend", nb.backend_free, frees=0),
        f("backend_get_default_buffer_type", "backend", nb.backend_get_default_buffer_type, "buft"),
        f("backend_alloc_buffer", "backend size", nb.backend_alloc_buffer, "buffer"),
        f("backend_get_alignment", "backend", nb.backend_get_alignment),
        f("backend_synchronize", "backend", nb.backend_synchronize),
        f("backend_supports_op", "backend tensor", nb.backend_supports_op),
        f("buft_name", "buft", nbuf.buft_name),
        f("buft_alloc_buffer", "buft size", nbuf.buft_alloc_buffer, "buffer"),
        f("buft_get_alignment", "buft", nbuf.buft_get_alignment),
        f("buft_get_alloc_size", "buft tensor", nbuf.buft_get_alloc_size),
        f("buft_supports_backend", "buft backend", nbuf.buft_supports_backend),
        f("buft_is_host", "buft", nbuf.buft_is_host),
        f("buffer_name", "buffer", nbuf.buffer_name),
        f("buffer_free", "buffer", nbuf.buffer_free, frees=0),
        f("buffer_get_base", "buffer", nbuf.buffer_get_base),
        f("buffer_get_size", "buffer", nbuf.buffer_get_size),
        f("buffer_get_alignment", "buffer", nbuf.buffer_get_alignment),
        f("buffer_get_alloc_size", "buffer tensor", nbuf.buffer_get_alloc_size),
        f("buffer_clear", "buffer byte", nbuf.buffer_clear),
        f("buffer_is_host", "buffer", nbuf.buffer_is_host),
        f("buffer_set_usage", "buffer usage", nbuf.buffer_set_usage),
        f("buffer_get_type", "buffer", nbuf.buffer_get_type, "buft"),
        f("buffer_reset", "buffer", nbuf.buffer_reset),
        f("init", "memsize bool", nt.init, "ctx"),
        f("free", "ctx", nt.free, frees=0),
        f("new_tensor", "ctx type ne", nt.new_tensor, "tensor"),
        f("new_tensor", "ctx type ne", nt.new_tensor, "tensor"),
        f("view", "ctx tensor ne nb offset", nt.view, "tensor"),
        f("nbytes", "tensor", nt.nbytes),
        f("tensor_alloc", "buffer tensor offset", ntd.tensor_alloc),
        f("tensor_alloc", "buffer tensor offset", ntd.tensor_alloc),
        f("view_init", "buffer tensor", ntd.view_init),
        f("tensor_set", "tensor payload offset", ntd.tensor_set),
        f("tensor_get", "tensor offset size", ntd.tensor_get),
        f("tensor_set_async", "backend tensor host offset size", ntd.tensor_set_async),
        f("tensor_get_async", "backend tensor host offset size", ntd.tensor_get_async),
        f("tensor_copy", "tensor tensor", ncopy.tensor_copy),
        f("tensor_copy_async", "backend tensor tensor", ncopy.tensor_copy_async),
        f("reg_get_count", "", nreg.reg_get_count),
        f("reg_find_by_name", "name", nreg.reg_find_by_name),
        f("reg_init_backend_from_str", "name", nreg.reg_init_backend_from_str, "backend"),
        f("reg_get_name", "index", nreg.reg_get_name),
        f("reg_init_backend", "index name", nreg.reg_init_backend, "backend"),
        f("reg_get_default_buffer_type", "index", nreg.reg_get_default_buffer_type, "buft"),
        f("reg_alloc_buffer", "index size", nreg.reg_alloc_buffer, "buffer"),
        f("reg_register", "name initfn buft", lambda n, fn, b: nreg.reg_register(n, fn, b)),
        f("is_cpu", "backend", ncpu.is_cpu),
        f("cpu_set_n_threads", "backend nthreads", ncpu.cpu_set_n_threads),
        f("cpu_buffer_from_ptr", "host size", ncpu.cpu_buffer_from_ptr, "buffer"),
        f("vdev_read", "buffer offset size", nvd.vdev_read),
        f("vdev_pending", "backend", nvd.vdev_pending),
        f("vdev_buffer_type", "backend", nvd.vdev_buffer_type, "buft"),
        f("vdev_log", "buft", nvd.vdev_log),
        f("vdev_log_clear", "buft", nvd.vdev_log_clear),
        f("new_tensor_named", "ctx type ne name", nt.new_tensor, "tensor"),
        f("tensor_set_at", "tensor payload", ntd.tensor_set),
        f("init_default", "", nt.init, "ctx"),
        f("reg_register_with_data", "name initfn buft host", nreg.reg_register),
        # the buffer module's helpers over raw C pointers (public, so fuzzed too)
        f("is_cpu_buft", "buft", nbuf.is_cpu_buft),
        f("check_alloc", "buft size", nbuf.check_alloc),
        f("new_buffer", "host", nbuf.new_buffer, "buffer"),
    ]
    # "initfn" is this API's own scalar kind: the registry's test hook, a C function pointer
    scalars = {"initfn": lambda k: lib.ggspec_py_init_fn}
    return Api("native", fns, lambda: None, (TypeError, ValueError, SpecError), scalars)
