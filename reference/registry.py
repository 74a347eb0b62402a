"""REG: the backend registry — a fixed table of named backend constructors.

In C the registry is process-global (a static of ggml-backend.c); in the model each World has
one, among its statics: `registry_of(world)`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from .backend import Backend
from .buffer import Buffer, BufferType, buft_alloc_buffer
from .checked import checked
from .clauses import implements, require
from .cpu import cpu_buffer_type, cpu_init
from .world import SIZE_MAX, World

MAX_BACKENDS_REG = 16
NAME_SIZE = 128  # char name[128]: at most 127 bytes and a NUL

InitFn = Callable[[str, object], Backend | None]


@dataclass
class RegistryEntry:
    name: str
    init_fn: InitFn
    default_buffer_type: BufferType
    user_data: object


@implements("REG-12")
def _bounded(name: str) -> str:
    """REG-12: "write at most 127 bytes and then the terminator ... The cut counts bytes, not
    characters": the first 127 bytes of `name` (snprintf into char[128]), a character cut there
    keeping its leading bytes (as surrogate escapes, as tensor names keep theirs: CORE-80)."""
    raw = name.encode("utf-8", errors="surrogateescape")[: NAME_SIZE - 1]
    return raw.decode("utf-8", errors="surrogateescape")


class Registry:
    def __init__(self, world: World) -> None:
        self.world = world
        self.entries: list[RegistryEntry] = []
        self._initialized = False

    @implements("REG-1", "REG-11")
    def _ensure_builtin(self) -> None:
        """REG-1: the first query registers the CPU backend, once. REG-11: "a plain
        process-wide flag, read and then set without a lock" — the model is one thread, as the
        API supports the registry from one thread at a time: the flag is the world's (the
        process's), not a thread's."""
        if self._initialized:
            return
        self._initialized = True
        self.register("CPU", lambda params, user_data: cpu_init(self.world), cpu_buffer_type(self.world), None)

    @implements("REG-3")
    @checked
    def register(self, name: str, init_fn: InitFn, default_buffer_type: BufferType, user_data: object) -> None:
        """REG-2, REG-3: append an entry (not triggering REG-1)."""
        if not callable(init_fn):
            raise TypeError(f"init_fn must be a function, got {type(init_fn).__name__}")
        require(len(self.entries) < MAX_BACKENDS_REG, "REG-2")
        self.entries.append(RegistryEntry(_bounded(name), init_fn, default_buffer_type, user_data))

    def get_count(self) -> int:
        self._ensure_builtin()
        return len(self.entries)

    @implements("REG-4")
    @checked
    def find_by_name(self, name: str) -> int:
        """REG-4: index of the first exact match, SIZE_MAX when absent."""
        self._ensure_builtin()
        for i, entry in enumerate(self.entries):
            if entry.name == name:
                return i
        return SIZE_MAX

    @implements("REG-5")
    @checked
    def init_backend_from_str(self, backend_str: str) -> Backend | None:
        """REG-5: "name" or "name:params"; the name is cut to 127 bytes."""
        self._ensure_builtin()
        name, colon, params = backend_str.partition(":")
        name = _bounded(name)
        i = self.find_by_name(name)
        if i == SIZE_MAX:
            print(f"ggml_backend_reg_init_backend_from_str: backend {name} not found", file=sys.stderr)
            return None
        return self.init_backend(i, params if colon else "")

    @implements("REG-10")
    @checked
    def get_name(self, i: int) -> str:
        """REG-6, REG-10: the stored name of entry `i`."""
        self._ensure_builtin()
        require(0 <= i < len(self.entries), "REG-6")
        return self.entries[i].name

    @implements("REG-10")
    @checked
    def init_backend(self, i: int, params: str) -> Backend | None:
        """REG-7, REG-10: entry `i`'s init function, called with `params` and its user data."""
        self._ensure_builtin()
        require(0 <= i < len(self.entries), "REG-7")
        entry = self.entries[i]
        return entry.init_fn(params, entry.user_data)

    @implements("REG-10")
    @checked
    def get_default_buffer_type(self, i: int) -> BufferType:
        """REG-8, REG-10: entry `i`'s buffer type."""
        self._ensure_builtin()
        require(0 <= i < len(self.entries), "REG-8")
        return self.entries[i].default_buffer_type

    @implements("REG-10")
    @checked
    def alloc_buffer(self, i: int, size: int) -> Buffer:
        """REG-9, REG-10: a buffer of entry `i`'s buffer type."""
        self._ensure_builtin()
        require(0 <= i < len(self.entries), "REG-9")
        return buft_alloc_buffer(self.entries[i].default_buffer_type, size)


def registry_of(world: World) -> Registry:
    """The world's registry, made at its first use (rc.8's is a static array of ggml-backend.c)."""
    found = world.statics.get("registry")
    if not isinstance(found, Registry):
        found = world.statics["registry"] = Registry(world)
    return found


def registry_reset(world: World) -> Registry:
    """A fresh, empty registry for the world (the test hook `reg_reset_for_tests`)."""
    fresh = world.statics["registry"] = Registry(world)
    return fresh
