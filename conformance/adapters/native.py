"""The `native` adapter: the C API adapter over our own build (ggspec.native._native, prefix ggspec_).

`GGSPEC_NATIVE_MODULE` (see native.load_lib) or a target name `native:DIR:MODULE` selects
another build of native/, such as a sanitizer or defect variant.
"""

from __future__ import annotations

from typing import Any

from .capi import CApiTarget, python_init_fn

_bound: set[int] = set()


def _load(module: str | None) -> tuple[Any, Any]:
    """The module of a variant target (`native:DIR:MODULE`), else the one GGSPEC_NATIVE_MODULE
    names, else the bundled build. A variant is named to load_lib, not put in the environment:
    there it outlived the target, and every later `native` target of the process (a test file
    run after one that made a defect variant) loaded the defective build."""
    from ggspec.native import load_lib

    ffi, lib = load_lib(module or None)
    if id(ffi) not in _bound:  # give this module's extern "Python" init function its body
        ffi.def_extern(name="ggspec_py_init_fn")(python_init_fn)
        _bound.add(id(ffi))
    return ffi, lib


class NativeTarget(CApiTarget):
    def __init__(self, module: str | None = None) -> None:
        ffi, lib = _load(module)
        super().__init__(ffi, lib, "ggspec_", "native" if not module else f"native:{module}")
