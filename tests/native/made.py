"""What tests/native's files make the same way through the C API: contexts and virtual devices."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ggspec.native import load_lib

ffi, lib = load_lib()

#: supports_op's mask with every op
ALL_OPS = (2**64 - 1, 2**64 - 1)


def context(mem_size: int, no_alloc: bool) -> Iterator[Any]:
    """A context of `mem_size` bytes, freed after its one use (a fixture's body: `yield from`)."""
    params = ffi.new("struct ggspec_init_params *", {"mem_size": mem_size, "no_alloc": no_alloc})
    c = lib.ggspec_init(params[0])
    yield c
    lib.ggspec_free(c)


def vdev(
    name: str = "VDEV",
    *,
    lazy: bool = False,
    alignment: int = 32,
    alloc_pad: int = 0,
    cpy: bool = True,
    ops: tuple[int, int] = ALL_OPS,
) -> Any:
    """A virtual device with its async entries; `cpy` gives it both copy entries (the buffers'
    cpy_tensor and the backend's cpy_tensor_async). The device copies the name."""
    p = ffi.new("struct ggspec_vdev_params *")
    keep = ffi.new("char[]", name.encode())
    p.name = keep
    p.alignment = alignment
    p.lazy = lazy
    p.async_entries = True
    p.buffer_cpy_tensor = cpy
    p.cpy_tensor_async = cpy
    p.alloc_pad = alloc_pad
    p.ops_mask = list(ops)
    return lib.ggspec_vdev_init(p)
