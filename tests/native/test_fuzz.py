"""Fuzz test of native/'s Python wrapper: random calls of its public functions with random and
hostile arguments (None, wrong kinds, freed and foreign objects, huge and negative ints, read-only
memory), each batch in a forked worker. No call may crash or abort the process, raise anything
but TypeError / ValueError / the reference's SpecError family (UseAfterFree included), or
silently accept a freed object or an object of the wrong kind (see tests/fuzzcalls.py).

GGSPEC_FUZZ_CALLS sets the number of calls (default 2,000; CI runs 10,000). Under the
AddressSanitizer build (GGSPEC_NATIVE_MODULE + LD_PRELOAD of libasan, see .ci/run) a report in a
worker's stderr fails the test too.
"""

from __future__ import annotations

import importlib
import inspect
import os

from fuzzcalls import assert_survives
from fuzzcalls_native import native_api

CALLS = int(os.environ.get("GGSPEC_FUZZ_CALLS", "2000"))


def test_native_wrapper_survives_random_calls() -> None:
    assert_survives("native", CALLS)


#: the wrapper's modules whose public functions the fuzz test calls (the others: build.py builds
#: the module, webgpu.py needs a browser, _lib.py is the handles' machinery)
FUZZED_MODULES = ("backend", "buffer", "copy", "cpu", "registry", "tdata", "tensor", "vdev")


def test_every_public_function_of_the_wrapper_is_fuzzed() -> None:
    """A public function the fuzz list misses is one hostile caller's way to an abort (the raw-pointer
    helpers of buffer.py were: a handle or host memory given as a buffer reached C)."""
    called = {id(getattr(fn.call, "__wrapped__", None)) for fn in native_api().fns}
    missing = [
        f"{m}.{name}"
        for m in FUZZED_MODULES
        for name, obj in vars(importlib.import_module(f"ggspec.native.{m}")).items()
        if not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == f"ggspec.native.{m}"
        and id(obj) not in called
    ]
    assert missing == []


def test_the_raw_pointer_helpers_refuse_anything_but_the_raw_pointer_they_name() -> None:
    """buffer.new_buffer / is_cpu_buft / check_alloc take what a C function returned; a handle or
    host memory given instead is a TypeError naming the argument, before C could misread it."""
    import pytest
    from ggspec.native import buffer, cpu
    from ggspec.native._lib import lib

    buft = cpu.cpu_buffer_type()
    for call, what in [(lambda: buffer.new_buffer(bytearray(64)), "raw must be a raw ggspec_backend_buffer_t"),
                       (lambda: buffer.is_cpu_buft(buft), "b must be a raw ggspec_backend_buffer_type_t"),
                       (lambda: buffer.check_alloc(None, 1), "b must be a raw ggspec_backend_buffer_type_t")]:
        with pytest.raises(TypeError, match=what):
            call()
    assert buffer.is_cpu_buft(lib.ggspec_backend_cpu_buffer_type()) is True
