"""`ggspec clause ID` and `ggspec list`: what the spec says and what the suite checks.

The text comes from the installed spec/*.md (package data `ggspec.spec`), the same files the
reference model reads its clause catalogue from.
"""

from __future__ import annotations

import textwrap

from ggspec.reference.clauses import SPEC_DIR, catalogue

from ..engine.registry import Check


def clause_text(clause_id: str) -> str:
    """The clause's section of its chapter: the head (ID, title, kind, message, erratum) and its
    prose, up to the next heading. KeyError for an unknown ID."""
    c = catalogue().get(clause_id)
    if c is None:
        raise KeyError(clause_id)
    lines = (SPEC_DIR / c.chapter).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"### {clause_id}:"))
    out = [lines[start]]
    in_fence = False
    for line in lines[start + 1:]:
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith(("# ", "## ", "### ")):
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + f"\n\n(spec/{c.chapter})"


def clause_lines(checks: dict[str, Check]) -> list[str]:
    """One line a clause: ID, kind, title, and the checks that cover it."""
    covering: dict[str, list[str]] = {}
    for name in sorted(checks):
        for cid in checks[name].clauses:
            covering.setdefault(cid, []).append(name)
    cat = catalogue()
    width = max(len(cid) for cid in cat)
    lines = []
    for cid, c in cat.items():
        names = covering.get(cid, [])
        lines.append(f"{cid:{width}s}  {c.kind:9s}  {c.title}  [{', '.join(names) if names else 'no check'}]")
    return lines


def check_lines(checks: dict[str, Check]) -> list[str]:
    """One line a check: its name and the clauses it covers."""
    width = max(len(n) for n in checks)
    return [f"{name:{width}s}  {' '.join(checks[name].clauses)}" for name in sorted(checks)]


#: what each non-sdist target is, for `ggspec list --targets`
_WHAT = {
    "reference": "the Python model, against itself (a self-test)",
    "native": "our clean-room C build (native/), the default",
    "rc8": "whisper.rn 0.4.0-rc.8, built as shipped (NDEBUG); npm",
    "rc8-asserts": "whisper.rn 0.4.0-rc.8 with its assert()s compiled in; npm",
    "rc8-asan": "whisper.rn 0.4.0-rc.8 as shipped, with ASan and UBSan (libasan preloaded); npm",
}

#: the two target forms that take parts, and what the parts are
FORMS = (
    ("native:DIR:MODULE", "a variant build of native/: the cffi module MODULE in folder DIR "
                  "(ggspec.native.build.build_variant makes one)", "fixed"),
    ("external:PREFIX:INCLUDE_DIR:LIBRARY", "any build of this API: its symbol prefix, its headers' folder, its "
                                            "shared library (or --target external --include DIR --lib FILE "
                                            "--prefix PREFIX)", "fixed"),
)


def target_lines() -> list[str]:
    """`ggspec list --targets`: one line a target (name, what it is, default profile, the shipped
    known-failures file it reads by default), then the two forms that take parts."""
    from ..adapters import TARGETS
    from ..adapters.ggml_python import SDISTS
    from ..reports.known import DEFAULTS
    from ..target_names import default_profile

    rows = []
    for name in TARGETS:
        if name == "external":
            continue
        what = _WHAT.get(name) or f"{SDISTS[name].what}; pip"
        known = DEFAULTS.get(name, "-")
        rows.append((name, what, default_profile(name).value, known))
    forms = [(form, what, profile, "-") for form, what, profile in FORMS]
    width = max(len(r[0]) for r in rows)
    what_width = max(len(r[1]) for r in rows)
    out = ["targets (name; what it is, and what fetches it; default profile; the known-failures file",
           "of conformance/known/ that --known defaults to):"]
    out += [f"  {n:{width}s}  {w:{what_width}s}  {p:5s}  {k}" for n, w, p, k in rows]
    out += ["", "target forms with parts (default profile fixed, no known-failures file):"]
    for form, what, _, _ in forms:
        out += [f"  {form}", *textwrap.wrap(what, 96, initial_indent="      ", subsequent_indent="      ")]
    from ..adapters.vulkan_device import SHIPPED

    out += ["", "devices (check --device): vdev (the mock, every target), webgpu (ours, docs/webgpu.md),"]
    out += [f"  {d.name} (the target's own: {', '.join(d.shapes)})" for d in SHIPPED.values()]
    out += ["", "rc8 and the pip builds are fetched and built once, under $GGSPEC_CACHE (default "
                "~/.cache/ggspec).", "compare takes NAME@PROFILE (rc8@fixed); check takes --profile."]
    return out
