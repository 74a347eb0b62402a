"""The `native` adapter: the C API adapter over our own build (ggspec.native._native, prefix ggspec_).

`GGSPEC_NATIVE_MODULE` (see native.load_lib) or a target name `native:DIR:MODULE` selects
another build of native/, such as a sanitizer or defect variant.
"""

from __future__ import annotations

import os
from typing import Any

from .capi import CApiTarget, python_init_fn

_bound: set[int] = set()


def _load(module: str | None) -> tuple[Any, Any]:
    from ggspec.native import load_lib

    if module:
        os.environ["GGSPEC_NATIVE_MODULE"] = module
    ffi, lib = load_lib()
    if id(ffi) not in _bound:  # give this module's extern "Python" init function its body
        ffi.def_extern(name="ggspec_py_init_fn")(python_init_fn)
        _bound.add(id(ffi))
    return ffi, lib


class NativeTarget(CApiTarget):
    def __init__(self, module: str | None = None) -> None:
        ffi, lib = _load(module)
        super().__init__(ffi, lib, "ggspec_", "native" if not module else f"native:{module}")
