"""CORE-2 to CORE-5, CORE-77: tensors, views and nbytes, as far as the backend API sees them.

A tensor is the C struct's fields that the backend API reads or writes. `data` is an address in
the world's address space (a buffer's base plus an offset), or None for NULL.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .checked import checked, require_live
from .clauses import implements, require
from .types import MAX_DIMS, MAX_NAME, MAX_SRC, GGMLType, Op, _traits, blck_size, row_size
from .world import OBSERVED_ADDRESSES, SIZE_MAX, World

#: the alignment ggml_init pads a context's pool size to
MEM_ALIGN = 16
#: the bytes a tensor struct takes in its context's pool (the model's slot size; rc.8's struct
#: and object header are of the same order)
TENSOR_OVERHEAD = 368

if TYPE_CHECKING:
    from .buffer import Buffer


class TensorShape(Protocol):
    """What nbytes needs: a type, four extents and four strides."""

    @property
    def type(self) -> GGMLType: ...
    @property
    def ne(self) -> Sequence[int]: ...
    @property
    def nb(self) -> Sequence[int]: ...


@dataclass(eq=False)
class Tensor:
    """`struct ggml_tensor`, the fields the backend API uses."""

    ctx: Context
    type: GGMLType
    ne: list[int]
    nb: list[int]
    op: Op = Op.NONE
    op_params: bytes = b""
    src: list[Tensor | None] = field(default_factory=lambda: [None] * MAX_SRC)
    view_src: Tensor | None = None
    view_offs: int = 0
    buffer: Buffer | None = None
    data: int | None = None
    name: str = ""
    #: CORE-14, CORE-15: the gradient tensor (parameters, and results of operands with one)
    grad: Tensor | None = None
    is_param: bool = False
    #: the struct's address in its context's memory (CORE-2): what a hash set keys it by
    addr: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.addr = self.ctx.place()

    @property
    def world(self) -> World:
        return self.ctx.world

    def __repr__(self) -> str:
        return f"<tensor {self.name!r} {self.type.name} ne={self.ne} nb={self.nb}>"


@implements("CORE-3")
@checked
def nbytes(t: TensorShape) -> int:
    """CORE-3: the span of bytes the tensor touches, as ggml_nbytes computes it."""
    if isinstance(t, Tensor):
        require_live(t)
    elif not all(hasattr(t, f) for f in ("type", "ne", "nb")):
        raise TypeError(f"nbytes needs a tensor, got {type(t).__name__}")
    bs = blck_size(t.type)  # (checks the type: _traits below does not again)
    ne, nb = t.ne, t.nb
    if bs == 1:
        n = _traits(t.type).type_size
        for i in range(MAX_DIMS):
            n += (ne[i] - 1) * nb[i]
        return n
    n = ne[0] * nb[0] // bs
    for i in range(1, MAX_DIMS):
        n += (ne[i] - 1) * nb[i]
    return n


@checked
def contiguous_strides(type_: GGMLType, ne: Sequence[int]) -> list[int]:
    if len(ne) != MAX_DIMS:
        raise ValueError(f"contiguous_strides: ne must hold {MAX_DIMS} extents, got {list(ne)}")
    traits = _traits(type_)  # `type_` is checked already, as an int
    nb = [traits.type_size, 0, 0, 0]
    nb[1] = nb[0] * (ne[0] // traits.blck_size)
    for i in range(2, MAX_DIMS):
        nb[i] = nb[i - 1] * ne[i - 1]
    return nb


@implements("CORE-77")
@checked
def view_strides(type_: GGMLType, ne: Sequence[int], given: Sequence[int]) -> list[int]:
    """CORE-77: a view's strides: `nb[0]` the type size, `nb[1 ..]` as given, each one past the
    given ones `nb[i - 1]·ne[i - 1]` (`ne` padded to four extents)."""
    if len(given) >= MAX_DIMS:
        raise ValueError(f"view_strides: at most {MAX_DIMS - 1} strides may be given, got {list(given)}")
    strides = contiguous_strides(type_, ne)
    for i, s in enumerate(given, start=1):
        strides[i] = int(s)
    for i in range(max(len(given) + 1, 2), MAX_DIMS):
        strides[i] = strides[i - 1] * ne[i - 1]
    return strides


@checked
def resolved_buffer(t: Tensor) -> Buffer | None:
    """The buffer a tensor's bytes live in: its view_src's for a view, its own otherwise."""
    return t.view_src.buffer if t.view_src is not None else t.buffer


class Context:
    """A ggml context. The model only tracks what the backend API needs: the world it lives in
    and whether new tensors get memory (`no_alloc` False gives each tensor its own host block).

    Its tensor structs lie one after the other in its memory pool, at `memory` when the caller
    gives the pool (a context rebuilt in the same static buffer, as whisper.cpp builds each graph),
    else at fresh addresses: the same tensors made in the same order get the same addresses.

    Where a struct lies in a pool is each build's own layout (its struct sizes, its object
    headers, the graphs it keeps in the pool), which the API does not fix. A harness that runs
    the model beside a build gives the model the build's addresses instead (`take_addresses`),
    so that state keyed by address (SCHED-32) goes stale exactly where it does in the build.
    """

    def __init__(self, world: World, no_alloc: bool = True, memory: int | None = None) -> None:
        self.world = world
        self.no_alloc = no_alloc
        self.memory = world.context_memory() if memory is None else memory
        self._placed = 0
        self._observed: list[int] = []
        self.tensors: list[Tensor] = []
        #: set by `free()` (ggml_free): the context's tensors and graphs are gone
        self.freed = False

    def place(self) -> int:
        """The address of the next tensor struct: the next address given to `take_addresses`,
        else the next slot of the pool."""
        if self._observed:
            return OBSERVED_ADDRESSES + self._observed.pop(0)
        addr = self.memory + self._placed * TENSOR_OVERHEAD
        self._placed += 1
        return addr

    def take_addresses(self, addresses: Sequence[int]) -> None:
        """The next `len(addresses)` tensors made in this context get these addresses (a real
        build's tensor structs, in the order it made them), moved by `OBSERVED_ADDRESSES` so
        that they never meet an address the model hands out itself. Equal addresses stay equal,
        different ones different: a hash set keyed by address behaves as the build's does."""
        if not all(isinstance(a, int) and 0 <= a < OBSERVED_ADDRESSES for a in addresses):
            raise ValueError(f"addresses must be ints in [0, 2**62), got {list(addresses)!r}")
        self._observed = list(addresses)

    @property
    def addresses_left(self) -> int:
        """How many addresses given to `take_addresses` no tensor has taken yet."""
        return len(self._observed)

    def free(self) -> None:
        """`ggml_free(ctx)`: release the memory the context gave its tensors (CORE-6)."""
        if self.freed:
            return
        self.freed = True
        for t in self.tensors:
            if t.view_src is None and t.data is not None and t.buffer is None and not self.no_alloc:
                region = self.world.memory.region_of(t.data)
                if region.base == t.data and region.label.startswith("context memory"):
                    self.world.memory.unmap(region)

    @implements("CORE-2")
    def new_tensor(self, type_: GGMLType, ne: Sequence[int], name: str = "") -> Tensor:
        """CORE-2: a new contiguous tensor of 1 to 4 dimensions."""
        if not 1 <= len(ne) <= MAX_DIMS or any(int(n) < 0 for n in ne):
            raise ValueError(f"ne must be 1 to {MAX_DIMS} non-negative extents, got {list(ne)}")
        full = [int(n) for n in ne] + [1] * (MAX_DIMS - len(ne))
        type_ = GGMLType(type_)
        t = Tensor(self, type_, full, contiguous_strides(type_, full), name=cut_name(name))
        if not self.no_alloc:
            t.data = self.world.host_alloc(nbytes(t), f"context memory of {name!r}").base
        self.tensors.append(t)
        return t

    @implements("CORE-4")
    def view(self, a: Tensor, ne: Sequence[int], nb: Sequence[int], offset: int) -> Tensor:
        """CORE-4, CORE-5: `ggml_view_{1,2,3,4}d(a, ne..., nb[1:]..., offset)`.

        `ne` has 1 to 4 extents and `nb` the strides of dimensions 1 and up (len(ne) - 1 of them).
        """
        if not 1 <= len(ne) <= MAX_DIMS or len(nb) != len(ne) - 1:
            raise ValueError(f"a view needs 1 to 4 extents and one stride fewer, got ne={list(ne)} nb={list(nb)}")
        if offset < 0 or any(int(n) < 1 for n in ne):
            raise ValueError(f"view extents must be >= 1 and the offset >= 0, got ne={list(ne)} offset={offset}")
        root, offs = a, offset
        if a.view_src is not None:
            root, offs = a.view_src, offset + a.view_offs
        full = [int(n) for n in ne] + [1] * (MAX_DIMS - len(ne))
        data_size = row_size(a.type, full[0])
        for i in range(1, len(ne)):
            data_size *= full[i]
        require(data_size + offs <= nbytes(root), "CORE-5")
        t = Tensor(self, a.type, full, view_strides(a.type, full, nb), op=Op.VIEW, view_src=root, view_offs=offs)
        t.op_params = struct.pack("<Q", offset)
        t.src[0] = a
        t.name = cut_name(f"{a.name} (view)")
        t.data = root.data + offs if root.data is not None else None
        self.tensors.append(t)
        return t


# --- the C API's functions for contexts (ggml_init, ggml_free, ggml_new_tensor, ggml_dup_tensor, ggml_view_Nd) --------


@checked
def init(world: World, mem_size: int = 16 << 20, no_alloc: bool = True) -> Context:
    """`ggml_init` with `mem_buffer` NULL: a new context. The model keeps no pool, so only its
    size is checked, as CORE-79 says: "`mem_size` (16 when it is 0) rounded up to a multiple of
    16 in `size_t` arithmetic" must be a request the host can give; 0 (the rounding of a size
    within 15 bytes of SIZE_MAX wraps to 0) or more than the host limit aborts."""
    if not 0 <= mem_size <= SIZE_MAX:
        raise ValueError(f"mem_size is a size_t, got {mem_size}")
    padded = ((mem_size or MEM_ALIGN) + MEM_ALIGN - 1) % (SIZE_MAX + 1) // MEM_ALIGN * MEM_ALIGN
    require(0 < padded <= world.host_limit, "CORE-79")
    return Context(world, no_alloc)


@checked
def free(ctx: Context) -> None:
    """`ggml_free`: the context's tensors die with it; a second free is a use after free."""
    ctx.free()


@checked
def new_tensor(ctx: Context, type_: GGMLType, ne: Sequence[int], name: str = "") -> Tensor:
    """`ggml_new_tensor_Nd` (CORE-2)."""
    return ctx.new_tensor(GGMLType(type_), ne, name)


@checked
def dup_tensor(ctx: Context, a: Tensor) -> Tensor:
    """`ggml_dup_tensor`: a fresh unnamed tensor of `a`'s type and shape (contiguous, CORE-2)."""
    return ctx.new_tensor(a.type, a.ne)


@implements("CORE-80")
@checked
def set_name(t: Tensor, name: str) -> None:
    """CORE-80: "a name of up to 63 bytes is kept whole, and one of 64 bytes or more keeps its
    first 63 bytes, always terminated. The cut is in bytes, not characters." A character cut
    at byte 63 is kept as its leading bytes (surrogate escapes, see `name_bytes`)."""
    t.name = cut_name(name)


def cut_name(text: str) -> str:
    """`text` as the 64-byte name array keeps it: its first 63 bytes (CORE-80; snprintf into
    the array cuts the same way)."""
    return name_bytes(text)[: MAX_NAME - 1].decode("utf-8", errors="surrogateescape")


def name_bytes(name: str) -> bytes:
    """The bytes of a name as the 64-byte array holds them (a name cut inside a character keeps
    that character's leading bytes as surrogate escapes)."""
    if not isinstance(name, str):  # by hand, not @checked: every tensor the model makes is named through here
        raise TypeError(f"name_bytes: name must be a str, got {type(name).__name__}")
    return name.encode("utf-8", errors="surrogateescape")


@checked
def view(ctx: Context, a: Tensor, ne: Sequence[int], nb: Sequence[int], offset: int) -> Tensor:
    """`ggml_view_Nd` (CORE-4, CORE-5)."""
    if not 0 <= offset <= SIZE_MAX or not all(0 <= s <= SIZE_MAX for s in nb):
        raise ValueError(f"offset and strides are size_t, got offset={offset} nb={list(nb)}")
    return ctx.view(a, ne, nb, offset)
