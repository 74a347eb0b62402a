"""The loaded native module and the pieces every wrapper module shares.

`ffi` and `lib` come from `native.load_lib()` (ggspec.native._native, or the build named by
GGSPEC_NATIVE_MODULE).

Every native object the wrapper hands out is a `Handle` (`BufferType`, `Buffer`, `Backend`,
`Context`, `Tensor`), never a bare pointer: the wrapper accepts only handles of the kind a
parameter wants, and a handle knows when it was freed. Freeing an object kills its handle and the
handles that depend on it, as the spec says they do: a context's tensors (and the views of them),
the tensors placed in a buffer (and their views). Using a dead handle raises `UseAfterFree`, the
reference model's error for the same misuse, before any C code could read freed memory.

`TensorView` shows a native tensor to the reference model's assert checks (reference.tdata.check_*),
so the wrapper refuses misuse with the same SpecViolation the reference raises, instead of letting
the C code abort the process. An allocation that cannot succeed is refused the same way, before the
call (`host_alloc_limit`): ValueError for a context's pool, SpecViolation CPU-5 for a CPU buffer.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

from ggspec.reference.clauses import UsageError, UseAfterFree, undefined
from ggspec.reference.types import GGMLType

from . import load_lib

ffi, lib = load_lib()

CData = Any  # a cffi pointer

SIZE_MAX = 2**64 - 1
INT64_MAX = 2**63 - 1
#: the reference's World.host_limit: the largest host allocation the model lets succeed
HOST_LIMIT = 2**40


def host_alloc_limit() -> int:
    """The largest host allocation the wrapper lets reach the C code, in bytes.

    The wrapper promises a typed error, before the call, for an allocation that cannot succeed,
    where rc.8 (and native/src, which keeps its behaviour) aborts when malloc returns NULL
    (CPU-5, "ctx->mem_buffer != NULL"). It cannot know what malloc will do, so it refuses what
    is larger than the smallest of: the reference's host limit (2**40), this machine's physical
    memory, and the process's address-space limit (RLIMIT_AS). Below that an allocation may
    still fail (memory in use elsewhere, a stricter overcommit policy): that is rc.8's abort.
    """
    limit = HOST_LIMIT
    try:
        limit = min(limit, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # no sysconf, or no such name here
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
    except (ImportError, ValueError, OSError):
        pass
    return limit


def address(ptr: CData) -> int:
    return int(ffi.cast("uintptr_t", ptr))


class Handle:
    """A native object handed to Python: its pointer while it lives.

    Handles are interned per (class, address): the C function that returns the same object twice
    (the CPU buffer type, a buffer's type) returns the same handle, so `is` and `==` compare
    objects. A killed handle leaves the table, so memory reused by a later allocation gets a new one.
    """

    kind: ClassVar[str] = "object"
    #: the clause a use after free is reported against
    free_clause: ClassVar[str] = "BUF-4"
    _table: ClassVar[dict[tuple[type[Handle], int], Handle]] = {}

    def __init__(self, ptr: CData) -> None:
        self._ptr = ptr
        self._addr = address(ptr)
        self._dead: str | None = None
        self._dependents: list[Handle] = []

    @classmethod
    def wrap(cls: type[H], ptr: CData) -> H | None:
        """The handle of `ptr` (None for NULL): the live one if there is one, else a new one."""
        if ptr == ffi.NULL:
            return None
        key = (cls, address(ptr))
        found = Handle._table.get(key)
        if found is None:
            found = cls(ptr)
            Handle._table[key] = found
        assert isinstance(found, cls)
        return found

    @property
    def ptr(self) -> CData:
        """The pointer; UseAfterFree once the object (or what it depends on) was freed."""
        if self._dead is not None:
            raise UseAfterFree(self.free_clause, f"{self!r} is used after {self._dead}")
        return self._ptr

    @property
    def alive(self) -> bool:
        return self._dead is None

    def depend(self, child: Handle) -> None:
        """`child` dies when this object does."""
        self._dependents.append(child)

    def kill(self, why: str) -> None:
        """Mark this handle and everything depending on it dead (`why` says what freed it)."""
        if self._dead is not None:
            return
        self._dead = why
        Handle._table.pop((type(self), self._addr), None)
        dependents, self._dependents = self._dependents, []
        for d in dependents:
            d.kill(f"{why} (which it depended on)")

    def __repr__(self) -> str:
        state = "" if self._dead is None else " (freed)"
        return f"<native {self.kind} at {self._addr:#x}{state}>"


H = TypeVar("H", bound=Handle)


class BufferType(Handle):
    """`ggml_backend_buffer_type_t`; buffer types are never freed (CPU: static, vdev: per device)."""

    kind = "buffer type"
    free_clause = "BUFT-1"


class Buffer(Handle):
    """`ggml_backend_buffer_t`; `memory` keeps the caller's memory of a buffer_from_ptr alive."""

    kind = "buffer"
    free_clause = "BUF-4"
    memory: object = None


class Backend(Handle):
    """`ggml_backend_t`; `pending` keeps the host memory of queued async calls alive until
    the next synchronize (a lazy device reads or writes it only then)."""

    kind = "backend"
    free_clause = "BACK-2"

    def __init__(self, ptr: CData) -> None:
        super().__init__(ptr)
        self.pending: list[object] = []


class Context(Handle):
    """`struct ggml_context *`; `mem_size` is its pool's size (for the room check of new tensors)."""

    kind = "context"
    free_clause = "CORE-6"
    mem_size: int = 0


class Tensor(Handle):
    """`struct ggml_tensor *`: lives in its context's pool; dies with it, with its root, and with
    the buffer it was placed in."""

    kind = "tensor"
    free_clause = "CORE-6"


def arg(value: object, cls: type[H], what: str, clause_id: str) -> H:
    """`value` as a live handle of kind `cls`: UsageError for None or another kind, UseAfterFree
    for a dead one."""
    if value is None:
        raise UsageError(clause_id, f"{what} must not be NULL")
    if not isinstance(value, cls):
        raise UsageError(clause_id, f"{what} must be a native {cls.kind} handle, got {type(value).__name__} {value!r:.60}")
    value.ptr  # noqa: B018 - raises UseAfterFree for a dead handle
    return value


def ptr(value: object, cls: type[Handle], what: str, clause_id: str) -> CData:
    """The pointer of `value`, checked as by `arg`."""
    return arg(value, cls, what, clause_id).ptr


def integer(value: object, what: str, lo: int, hi: int) -> int:
    """`value` as an int in [lo, hi]: TypeError for a non-integer (bool included), ValueError outside."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = operator.index(value)  # type: ignore[arg-type]  # numpy integers
        except TypeError:
            raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r:.60}") from None
        if isinstance(value, bool):
            raise TypeError(f"{what} must be an int, got a bool")
    if not lo <= value <= hi:
        raise ValueError(f"{what} must be in [{lo}, {hi}], got {value}")
    return value


def size_t(value: object, what: str = "size") -> int:
    return integer(value, what, 0, SIZE_MAX)


def text(value: object, what: str) -> bytes:
    """A str argument as the bytes C gets (NUL-terminated by cffi); TypeError otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"{what} must not contain NUL")
    return value.encode()


def host_memory(memory: object, size: int, what: str, *, writable: bool) -> CData:
    """A cffi pointer to caller memory of at least `size` bytes (writable when C writes to it).

    Accepted: a cffi array or buffer (ffi.new / ffi.from_buffer) and any object with the buffer
    protocol (bytearray, memoryview, a writable numpy array; bytes only where C just reads).
    """
    if memory is None:
        raise UsageError("TDATA-13", f"{what} must not be NULL")
    if isinstance(memory, ffi.CData):
        if ffi.typeof(memory).kind != "array":
            raise UsageError("TDATA-13", f"{what}: a cffi pointer of unknown size ({ffi.typeof(memory).cname}); pass an array")
        n = ffi.sizeof(memory)
        cptr = memory
    else:
        try:
            cptr = ffi.from_buffer(memory, require_writable=writable)
        except (TypeError, BufferError) as exc:
            raise TypeError(f"{what} must be {'writable ' if writable else ''}memory (a buffer): {exc}") from None
        n = len(ffi.buffer(cptr))
    if n < size:
        raise ValueError(f"{what} has {n} bytes, fewer than the {size} the call reads or writes")
    return cptr


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

    @property
    def resolved_buffer(self) -> CData | None:
        """The buffer the tensor's bytes live in: its view_src's for a view (TDATA-2)."""
        src = self.view_src
        return src.buffer if src is not None else self.buffer


def tensor_view(t: object, what: str, clause_id: str) -> TensorView:
    return TensorView(ptr(t, Tensor, what, clause_id))


def buffer_span(buf: CData) -> tuple[int, int]:
    """[start, end) of a live buffer's memory as addresses (the base entry, the recorded size)."""
    entry = buf.iface.get_base
    base = address(entry(buf)) if entry != ffi.NULL else 0
    return base, base + int(buf.size)


def check_reach(t: TensorView, offset: int, size: int, clause_id: str) -> None:
    """Bytes [data + offset, data + offset + size) must lie in the buffer that holds the tensor.

    A view whose strides reach past its root passes every assert of rc.8 (they measure the
    tensor, not the buffer); the C code would then read or write past the buffer's memory. The
    reference reports the access as undefined behaviour (an unmapped address); so does this.
    """
    buf = t.resolved_buffer
    data = t.data
    if buf is None or data is None or size == 0:
        return
    start, end = buffer_span(buf)
    if not (start <= data + offset and data + offset + size <= end):
        at = data + offset
        undefined(clause_id, f"access to [{at:#x}, {at + size:#x}) outside its buffer [{start:#x}, {end:#x})")


def not_null(value: CData | None, what: str, clause_id: str) -> CData:
    """Refuse None / NULL where the C function would dereference it (raw pointers)."""
    if value is None or value == ffi.NULL:
        raise UsageError(clause_id, f"{what} must not be NULL")
    return value
