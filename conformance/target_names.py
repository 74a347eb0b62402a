"""What a target name says before any target is built: its default profile (DESIGN.md,
"Semantics profiles").

Target names: `reference`, `native` (or `native:DIR:MODULE`, a variant build), `rc8`, the
ggml-python / llama-cpp-python builds (adapters/ggml_python.py) and
`external:PREFIX:INCLUDE_DIR:LIBRARY`. adapters/__init__.py turns a name into a Target.
"""

from __future__ import annotations

from ggspec.reference.clauses import Profile


def default_profile(name: str) -> Profile:
    """Each target's default profile (DESIGN.md): the real rc.8 build claims `rc8`; native, the
    reference and other external builds (ports) claim `fixed`; llama-cpp-python 0.2.30, the same
    code generation as rc.8 (llama.cpp of 2024-01-18), claims `rc8` too."""
    return Profile.RC8 if name in ("rc8", "llama-cpp-python-0.2.30") else Profile.FIXED
