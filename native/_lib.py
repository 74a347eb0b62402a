"""The loaded native module and the pieces every wrapper module shares.

`ffi` and `lib` come from `native.load_lib()` (ggspec.native._native, or the build named by
GGSPEC_NATIVE_MODULE). `TensorView` shows a native tensor to the reference model's assert
checks (reference.tdata.check_*), so the wrapper refuses misuse with the same SpecViolation the
reference raises, instead of letting the C code abort the process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ggspec.reference.clauses import UsageError
from ggspec.reference.types import GGMLType

from . import load_lib

ffi, lib = load_lib()

CData = Any  # a cffi pointer


def not_null(value: CData | None, what: str, clause_id: str) -> CData:
    """Refuse None / NULL where the C function would dereference it."""
    if value is None or value == ffi.NULL:
        raise UsageError(clause_id, f"{what} must not be NULL")
    return value


class TensorView:
    """A native `struct ggspec_tensor *` seen through the reference's TensorState protocol."""

    def __init__(self, t: CData) -> None:
        self._t = t

    @property
    def type(self) -> GGMLType:
        return GGMLType(int(self._t.type))

    @property
    def ne(self) -> Sequence[int]:
        return [int(x) for x in self._t.ne]

    @property
    def nb(self) -> Sequence[int]:
        return [int(x) for x in self._t.nb]

    @property
    def data(self) -> int | None:
        addr = int(ffi.cast("uintptr_t", self._t.data))
        return addr or None

    @property
    def buffer(self) -> object | None:
        return None if self._t.buffer == ffi.NULL else self._t.buffer

    @property
    def view_src(self) -> TensorView | None:
        return None if self._t.view_src == ffi.NULL else TensorView(self._t.view_src)
