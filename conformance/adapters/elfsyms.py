"""The dynamic symbols a shared library exports, read from its ELF `.dynsym` table (no
binutils needed): used to say which symbol prefixes a library has when `--prefix` is wrong."""

from __future__ import annotations

import struct
from pathlib import Path


def exported_symbols(path: Path) -> set[str]:
    """Names of the defined (exported) dynamic symbols of an ELF shared library; an empty set for
    a file that is not ELF or has no dynamic symbol table."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        return set()
    is64, little = data[4] == 2, data[5] == 1
    end = "<" if little else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
    sections = []
    for i in range(shnum):
        off = shoff + i * shentsize
        if is64:
            _, type_, _, _, s_off, s_size, link, _, _, entsize = struct.unpack_from(end + "IIQQQQIIQQ", data, off)
        else:
            _, type_, _, _, s_off, s_size, link, _, _, entsize = struct.unpack_from(end + "IIIIIIIIII", data, off)
        sections.append((type_, s_off, s_size, link, entsize))
    names: set[str] = set()
    for type_, s_off, s_size, link, entsize in sections:
        if type_ != 11 or not entsize:  # SHT_DYNSYM
            continue
        _, str_off, str_size, _, _ = sections[link]
        strtab = data[str_off:str_off + str_size]
        for k in range(s_size // entsize):
            e = s_off + k * entsize
            if is64:
                name_off, _, _, shndx = struct.unpack_from(end + "IBBH", data, e)
            else:
                name_off, = struct.unpack_from(end + "I", data, e)
                shndx, = struct.unpack_from(end + "H", data, e + 14)
            if shndx == 0 or name_off == 0:  # undefined: imported, not exported
                continue
            stop = strtab.find(b"\0", name_off)
            names.add(strtab[name_off:stop].decode("ascii", "replace"))
    return names


def prefixes_of(path: Path, suffix: str = "backend_cpu_init") -> list[str]:
    """The prefixes P for which the library exports `P + suffix` (ggml_, wsp_ggml_, ...)."""
    return sorted(name[: -len(suffix)] for name in exported_symbols(path) if name.endswith(suffix))
