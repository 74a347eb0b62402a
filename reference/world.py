"""What C keeps in process memory: an address space, its static variables, and the profile.

ggml passes raw pointers around (`tensor->data`, the `data` argument of tensor_set, a buffer's
base). The model keeps them as integers in a simulated address space made of *regions*: host
regions hold bytes the host may read and write; device regions (a GPU buffer's addresses) are
reserved but not readable from the host, like a real device pointer. Reading a pointer that is
not inside a mapped region, or a device region from the host, is undefined behaviour.

A tensor's `data` is therefore `buffer base + offset`: an offset into its buffer expressed as an
address, never a detached array.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from dataclasses import dataclass, field

from .checked import checked
from .clauses import ModelOutOfMemory, Profile, undefined

PAGE = 4096
SIZE_MAX = 2**64 - 1
#: where contexts' memory pools start, apart from the data regions, and the span each one gets
CONTEXT_MEMORY = 1 << 56
CONTEXT_SPAN = 1 << 32
#: where the model puts tensor structs at addresses a real build reported (`Context.take_addresses`):
#: the build's address plus this, apart from every address the model hands out itself
OBSERVED_ADDRESSES = 1 << 62


@checked
def size_add(a: int, b: int) -> int:
    """`a + b` in size_t: the sum modulo 2**64, as C computes it (TDATA-3's erratum)."""
    return (a + b) & SIZE_MAX


@checked
def ptr_add(addr: int, offset: int) -> int:
    """`(char *)addr + offset` on a 64-bit machine: the address wraps modulo 2**64."""
    return (addr + offset) & SIZE_MAX


@dataclass(eq=False)
class Region:
    """A mapped range of addresses. `data` is its storage (the device's own for device regions)."""

    base: int
    size: int
    host: bool
    label: str
    data: bytearray

    @property
    def end(self) -> int:
        return self.base + self.size


class AddressSpace:
    """Hands out non-overlapping, page-aligned regions and resolves addresses to them."""

    def __init__(self) -> None:
        self._next = 0x10000
        self._bases: list[int] = []
        self._regions: dict[int, Region] = {}

    def map(self, size: int, *, host: bool, label: str) -> Region:
        base = self._next
        span = max(size, 1)
        self._next = base + (span + PAGE - 1) // PAGE * PAGE + PAGE  # a guard page between regions
        try:
            data = bytearray(size)
        except MemoryError:
            raise ModelOutOfMemory(f"the reference cannot hold the {size} bytes of {label} (ggspec's own limit: its "
                                   "process's memory, ulimit -v; not a verdict on the program modelled)") from None
        region = Region(base, size, host, label, data)
        insort(self._bases, base)
        self._regions[base] = region
        return region

    def unmap(self, region: Region) -> None:
        if self._regions.pop(region.base, None) is None:
            undefined("BUF-4", f"{region.label} at {region.base:#x} released twice")
        self._bases.remove(region.base)

    def region_of(self, addr: int, size: int = 1) -> Region:
        """The region holding `[addr, addr + size)`; undefined behaviour if there is none."""
        i = bisect_right(self._bases, addr) - 1
        if i >= 0:
            region = self._regions[self._bases[i]]
            if addr + max(size, 1) <= region.base + max(region.size, 1):
                return region
        undefined("TDATA-4", f"access to unmapped memory [{addr:#x}, {addr + size:#x})")

    def read(self, addr: int, size: int) -> bytes:
        """Host read of `size` bytes at `addr`."""
        if size == 0:
            return b""
        region = self.region_of(addr, size)
        if not region.host:
            undefined("TDATA-4", f"host read of device memory at {addr:#x} ({region.label})")
        off = addr - region.base
        return bytes(region.data[off : off + size])

    def write(self, addr: int, payload: bytes) -> None:
        """Host write of `payload` at `addr`."""
        if not payload:
            return
        region = self.region_of(addr, len(payload))
        if not region.host:
            undefined("TDATA-4", f"host write to device memory at {addr:#x} ({region.label})")
        off = addr - region.base
        region.data[off : off + len(payload)] = payload


@dataclass(eq=False)
class World:
    """One process's worth of ggml-backend state, under one semantics profile.

    `host_limit` is the largest host allocation that succeeds (rc.8's CPU buffer type asserts
    when malloc fails, CPU-5).
    """

    profile: Profile = Profile.FIXED
    host_limit: int = 2**40
    memory: AddressSpace = field(default_factory=AddressSpace)
    #: what C keeps in static variables (the CPU buffer type, the backend registry), by name
    statics: dict[str, object] = field(default_factory=dict)
    #: behaviour errata whose rc8 and fixed branches the model has reached (SCHED-33, say):
    #: the suite blames a difference on one of them when the other profile explains it
    errata_taken: set[str] = field(default_factory=set)
    #: errata whose correction (profile fixed) made calls rc.8 never makes, whatever came of
    #: them (SCHED-33's supports_op): the suite's entry-log judge lets those calls through
    errata_calls: set[str] = field(default_factory=set)
    #: how many context memory pools have been handed out (`context_memory`)
    context_pools: int = 0

    @property
    def fixed(self) -> bool:
        return self.profile is Profile.FIXED

    def context_memory(self) -> int:
        """The base address of a new context's memory pool (what ggml_init mallocs). The model
        keeps no bytes there, only the addresses of the tensor structs it places in it."""
        base = CONTEXT_MEMORY + self.context_pools * CONTEXT_SPAN
        self.context_pools += 1
        return base

    def host_alloc(self, size: int, label: str = "host memory") -> Region:
        """Host memory owned by the caller (what a C program gets from malloc)."""
        return self.memory.map(size, host=True, label=label)

    def host_bytes(self, payload: bytes) -> int:
        """Copy `payload` into fresh host memory and return its address."""
        region = self.host_alloc(len(payload), "host bytes")
        region.data[:] = payload
        return region.base
