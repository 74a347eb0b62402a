"""What a target name says before any target is built: its default profile (DESIGN.md,
"Semantics profiles").

Target names: `reference`, `native` (or `native:DIR:MODULE`, a variant build), `rc8` (and
`rc8-asserts`, rc.8 built without NDEBUG; `rc8-asan`, with ASan and UBSan), the
ggml-python / llama-cpp-python builds (adapters/ggml_python.py) and
`external:PREFIX:INCLUDE_DIR:LIBRARY`. adapters/__init__.py turns a name into a Target.
"""

from __future__ import annotations

from dataclasses import dataclass

from ggspec.reference.clauses import Profile

#: the builds of the real rc.8: as shipped (NDEBUG), with its assert()s, with ASan and UBSan
RC8_NAMES = ("rc8", "rc8-asserts", "rc8-asan")
#: the targets built with AddressSanitizer (their library needs libasan loaded first)
SANITIZED = ("rc8-asan",)


def default_profile(name: str) -> Profile:
    """Each target's default profile (DESIGN.md): the real rc.8 build claims `rc8`; native, the
    reference and other external builds (ports) claim `fixed`; llama-cpp-python 0.2.30, the same
    code generation as rc.8 (llama.cpp of 2024-01-18), claims `rc8` too."""
    return Profile.RC8 if name in (*RC8_NAMES, "llama-cpp-python-0.2.30") else Profile.FIXED


def asserts_compiled_in(name: str) -> bool:
    """Whether the target is a build without NDEBUG (`rc8-asserts`): its C `assert()`s and its
    `#ifndef NDEBUG` prints are compiled in, which the spec describes beside the release build
    (COPY-7's slow-copy warning, GCOPY-6's asserts)."""
    return name == "rc8-asserts"


@dataclass(frozen=True)
class TargetName:
    """A target name, read: which kind of target, and the parts the name carries."""

    name: str
    #: "reference", "native", "rc8", "sdist" (ggml-python-X / llama-cpp-python-X), "external" or
    #: "other" (no name the suite knows; adapters.make_target says which are)
    kind: str
    #: native: "DIR:MODULE" of a variant build ("" for the bundled one)
    module: str = ""
    #: external: the symbol prefix, the headers' folder and the shared library
    prefix: str = ""
    include_dir: str = ""
    library: str = ""


def parse(name: str) -> TargetName:
    """The one place a target name is taken apart (`native:DIR:MODULE`,
    `external:PREFIX:INCLUDE_DIR:LIBRARY`, ...)."""
    if name == "reference":
        return TargetName(name, name)
    if name in RC8_NAMES:  # rc8-asserts, rc8-asan: the same sources built otherwise
        return TargetName(name, "rc8")
    if name == "native" or name.startswith("native:"):
        return TargetName(name, "native", module=name.partition(":")[2])
    if name.startswith(("ggml-python-", "llama-cpp-python-")):
        return TargetName(name, "sdist")
    if name.startswith("external:") and name.count(":") >= 3:
        _, prefix, include_dir, library = name.split(":", 3)
        return TargetName(name, "external", prefix=prefix, include_dir=include_dir, library=library)
    return TargetName(name, "other")
