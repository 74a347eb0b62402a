"""The fuzz tests' view of native/'s Python wrapper: every public function, with its parameter kinds
(see fuzzcalls.py)."""

from __future__ import annotations

import importlib
import os
from typing import Any

from fuzzcalls import Api, Fn, common_fns, plain


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

    def own(call: Any) -> Any:
        return lambda name, params, returns, frees: plain(name, params, call, returns, frees)

    modules = {"backend": nb, "buffer": nbuf, "copy": ncopy, "cpu": ncpu, "registry": nreg, "tdata": ntd,
               "tensor": nt, "vdev": nvd}
    fns = common_fns(modules, {
        "host_alloc": lambda name, params, returns, frees: Fn(name, tuple(params.split()), host_alloc, returns),
        # a function of its own, so that reg_register_with_data below is another entry of the fuzz
        "reg_register": own(lambda n, fn, b: nreg.reg_register(n, fn, b)),
    })
    fns += [
        plain("vdev_buffer_type", "backend", nvd.vdev_buffer_type, "buft"),
        plain("vdev_log", "buft", nvd.vdev_log),
        plain("vdev_log_clear", "buft", nvd.vdev_log_clear),
        plain("new_tensor_named", "ctx type ne name", nt.new_tensor, "tensor"),
        plain("tensor_set_at", "tensor payload", ntd.tensor_set),
        plain("init_default", "", nt.init, "ctx"),
        plain("reg_register_with_data", "name initfn buft host", nreg.reg_register),
        # the buffer module's helpers over raw C pointers (public, so fuzzed too)
        plain("is_cpu_buft", "buft", nbuf.is_cpu_buft),
        plain("check_alloc", "buft size", nbuf.check_alloc),
        plain("new_buffer", "host", nbuf.new_buffer, "buffer"),
    ]
    # "initfn" is this API's own scalar kind: the registry's test hook, a C function pointer
    scalars = {"initfn": lambda k: lib.ggspec_py_init_fn}
    return Api("native", fns, lambda: None, (TypeError, ValueError, SpecError), scalars)
