"""The dynamic symbols a shared library exports, read from its ELF `.dynsym` table (no
binutils needed, and nothing of the library runs: its constructors may abort, crash or hang).

Used to say which symbol prefixes a library has when `--prefix` is wrong, and which of our
functions a target build exports (`resolvable_symbols`: the library's own and those of the
libraries it needs from its own folder or run path, as the dynamic loader would find them)."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

SHT_DYNAMIC, SHT_DYNSYM = 6, 11
DT_NEEDED, DT_RPATH, DT_RUNPATH = 1, 15, 29
STB_LOCAL, STV_HIDDEN, STV_INTERNAL = 0, 2, 1


@dataclass(frozen=True)
class _Section:
    type: int
    offset: int
    size: int
    link: int
    entsize: int


def _sections(data: bytes) -> tuple[list[_Section], bool, str] | None:
    """The section headers of an ELF file, whether it is 64-bit, and its struct byte order."""
    if data[:4] != b"\x7fELF" or len(data) < 64:
        return None
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
    out = []
    for i in range(shnum):
        off = shoff + i * shentsize
        fields = "IIQQQQIIQQ" if is64 else "IIIIIIIIII"
        _, type_, _, _, s_off, s_size, link, _, _, entsize = struct.unpack_from(end + fields, data, off)
        out.append(_Section(type_, s_off, s_size, link, entsize))
    return out, is64, end


def _string(strtab: bytes, offset: int) -> str:
    stop = strtab.find(b"\0", offset)
    return strtab[offset:stop if stop >= 0 else None].decode("utf-8", "replace")


def _strtab(data: bytes, sections: list[_Section], sec: _Section) -> bytes:
    linked = sections[sec.link]
    return data[linked.offset:linked.offset + linked.size]


def is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def exported_symbols(path: Path) -> set[str]:
    """Names of the defined, visible dynamic symbols of an ELF shared library (what `dlsym` on it
    finds); an empty set for a file that is not ELF or has no dynamic symbol table."""
    data = path.read_bytes()
    parsed = _sections(data)
    if parsed is None:
        return set()
    sections, is64, end = parsed
    names: set[str] = set()
    for sec in sections:
        if sec.type != SHT_DYNSYM or not sec.entsize:
            continue
        strtab = _strtab(data, sections, sec)
        for k in range(sec.size // sec.entsize):
            e = sec.offset + k * sec.entsize
            if is64:
                name_off, info, other, shndx = struct.unpack_from(end + "IBBH", data, e)
            else:
                name_off, = struct.unpack_from(end + "I", data, e)
                info, other, shndx = struct.unpack_from(end + "BBH", data, e + 12)
            if shndx == 0 or name_off == 0:  # undefined: imported, not exported
                continue
            if info >> 4 == STB_LOCAL or other & 3 in (STV_HIDDEN, STV_INTERNAL):
                continue
            names.add(_string(strtab, name_off))
    return names


def dynamic_needs(path: Path) -> tuple[list[str], list[str]]:
    """The libraries an ELF shared library needs (DT_NEEDED) and the folders its run path names
    (DT_RUNPATH, else DT_RPATH), `$ORIGIN` resolved."""
    data = path.read_bytes()
    parsed = _sections(data)
    if parsed is None:
        return [], []
    sections, is64, end = parsed
    needed: list[str] = []
    runpath: list[str] = []
    rpath: list[str] = []
    for sec in sections:
        if sec.type != SHT_DYNAMIC or not sec.entsize:
            continue
        strtab = _strtab(data, sections, sec)
        for k in range(sec.size // sec.entsize):
            tag, val = struct.unpack_from(end + ("qQ" if is64 else "iI"), data, sec.offset + k * sec.entsize)
            if tag == DT_NEEDED:
                needed.append(_string(strtab, val))
            elif tag in (DT_RUNPATH, DT_RPATH):
                dirs = [d.replace("$ORIGIN", str(path.parent)).replace("${ORIGIN}", str(path.parent))
                        for d in _string(strtab, val).split(":") if d]
                (runpath if tag == DT_RUNPATH else rpath).extend(dirs)
    return needed, runpath or rpath


def needs_libasan(path: str | Path) -> bool:
    """Whether a shared library was built with AddressSanitizer (libasan among its DT_NEEDED):
    it loads only into a process that has libasan already (engine/sanitizer.py)."""
    try:
        if not is_elf(Path(path)):
            return False
        needed, _ = dynamic_needs(Path(path))
    except OSError:
        return False
    return any(n.startswith("libasan.so") for n in needed)


def resolvable_symbols(path: Path) -> set[str]:
    """The symbols `dlsym` on a handle of `path` may find: its own exports and those of the
    libraries it needs, found in its run path, `LD_LIBRARY_PATH` or its own folder (system
    libraries, where no API function lives, are not read)."""
    env = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    seen: set[Path] = set()
    names: set[str] = set()
    todo = [path.resolve()]
    while todo:
        lib = todo.pop()
        if lib in seen:
            continue
        seen.add(lib)
        names |= exported_symbols(lib)
        needed, runpath = dynamic_needs(lib)
        for name in needed:
            found = next((Path(d) / name for d in (*runpath, *env, str(lib.parent)) if (Path(d) / name).is_file()), None)
            if found is not None:
                todo.append(found.resolve())
    return names


def prefixes_of(path: Path, suffix: str = "backend_cpu_init") -> list[str]:
    """The prefixes P for which the library exports `P + suffix` (ggml_, wsp_ggml_, ...)."""
    return sorted(name[: -len(suffix)] for name in resolvable_symbols(path) if name.endswith(suffix))
