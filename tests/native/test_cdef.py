"""The cdef cffi is given is what native/include/*.h declares (issue 18): no hand-written copy
of a prototype, nothing lost on the way, and a built module that is not stale.

The headers are read here on their own, without the generator (native/build.py): comments
stripped, VD(x) spelled out, top-level statements split at ';'. What they declare is compared
with the module that was built (`ggspec.native._native`, or the variant GGSPEC_NATIVE_MODULE
names), function by function (signature through cffi's own type parser), enum by enum, struct
by struct, macro by macro. A header edited without a rebuild, a generator that drops or mangles a line, or a
prototype added to cdef/callbacks.h fails here, by name.
"""

from __future__ import annotations

import re
from pathlib import Path

from ggspec.native import build, load_lib

ffi, lib = load_lib()  # the build under test (GGSPEC_NATIVE_MODULE names a variant)

INCLUDE = Path(build.INCLUDE_DIR)
HEADERS = sorted(INCLUDE.glob("*.h"))

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _clean(text: str) -> str:
    """Header text without comments, preprocessor lines and C++ guards; VD(x) spelled out."""
    text = _COMMENT.sub(" ", text)
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    text = "\n".join(lines).replace('extern "C" {', "")
    return re.sub(r"\bVD\((\w+)\)", r"ggspec_\1", text)


def _statements(text: str) -> list[str]:
    """Top-level statements: text up to ';' outside braces (a stray '}' closes the C++ guard)."""
    out: list[str] = []
    cur = ""
    depth = 0
    for ch in text:
        if ch == "}" and depth == 0:
            continue
        cur += ch
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == ";" and depth == 0:
            out.append(" ".join(cur.split()))
            cur = ""
    assert not cur.strip(), f"text after the last statement: {cur.strip()[:80]!r}"
    return out


def _header_statements() -> list[str]:
    return [s for h in HEADERS for s in _statements(_clean(h.read_text(encoding="utf-8")))]


def _prototypes() -> dict[str, str]:
    """name -> the declaration's text, for every function prototype of the headers."""
    out: dict[str, str] = {}
    for stmt in _header_statements():
        if stmt.startswith("typedef") or ("{" in stmt and ("(" not in stmt or stmt.index("{") < stmt.index("("))):
            continue  # a typedef, or a struct / enum definition
        m = re.match(r"[^(]*?\b(ggspec_\w+)\s*\(", stmt)
        if m is None:
            continue
        assert m.group(1) not in out, f"{m.group(1)} is declared twice in the headers"
        out[m.group(1)] = stmt
    return out


def _callbacks() -> dict[str, str]:
    """name -> declaration of the hand-written part (cdef/callbacks.h)."""
    text = _COMMENT.sub(" ", Path(build.CALLBACKS_CDEF).read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for stmt in _statements(text):
        m = re.search(r"\b(\w+)\s*\(", stmt)
        assert m is not None, stmt
        out[m.group(1)] = stmt
    return out


def _lib_functions() -> set[str]:
    return {n for n in dir(lib) if not n.isupper() and ffi.typeof(getattr(lib, n)).kind == "function"}


def test_the_headers_are_read_here() -> None:
    # the reading above must see the API, or every comparison below is empty
    protos = _prototypes()
    assert len(protos) > 200
    for name in ("ggspec_init", "ggspec_backend_sched_new", "ggspec_vdev_init", "ggspec_gallocr_alloc_graph_n",
                 "ggspec_format_name", "ggspec_backend_register"):
        assert name in protos


def test_every_prototype_is_in_the_module_and_nothing_else() -> None:
    protos = set(_prototypes())
    callbacks = set(_callbacks())
    functions = _lib_functions()
    assert sorted(protos - functions) == [], "declared in native/include but not in the built module (stale build?)"
    assert sorted(functions - protos - callbacks) == [], "in the built module but declared by no header"


def test_the_hand_written_part_is_only_python_callbacks() -> None:
    cdef_dir = Path(build.CALLBACKS_CDEF).parent
    assert sorted(p.name for p in cdef_dir.iterdir()) == ["callbacks.h"], (
        "native/cdef/ holds only callbacks.h: the build reads nothing else there (declare in native/include)")
    callbacks = _callbacks()
    assert callbacks, "cdef/callbacks.h declares nothing"
    for name, stmt in callbacks.items():
        assert stmt.startswith('extern "Python"'), f"cdef/callbacks.h declares {name} by hand: {stmt}"
        assert name not in _prototypes(), f"{name} is both in a header and hand-written"
        assert name in dir(lib)


def test_every_signature_is_the_headers() -> None:
    wrong: list[str] = []
    for name, stmt in _prototypes().items():
        as_pointer = re.sub(rf"\b{name}\s*\(", "(*)(", stmt, count=1).rstrip(";")
        expected = ffi.typeof(as_pointer)
        got = ffi.typeof(getattr(lib, name))
        if expected is not got:
            wrong.append(f"{name}: header {expected.cname}, module {got.cname}")
    assert wrong == []


def _definitions(kind: str) -> dict[str, str]:
    """name -> body of every `enum NAME { ... };` or `struct NAME { ... };` of the headers."""
    found = (re.match(rf"{kind} (\w+) \{{(.*)\}} ?;", stmt) for stmt in _header_statements())
    return {m.group(1): m.group(2) for m in found if m is not None}


def _enum_values(body: str) -> dict[str, int]:
    """The constants of an enum body and their values (implicit ones counted on)."""
    values: dict[str, int] = {}
    nxt = 0
    for item in filter(None, (x.strip() for x in body.split(","))):
        name, _, value = (x.strip() for x in item.partition("="))
        nxt = int(value, 0) if value else nxt
        values[name] = nxt
        nxt += 1
    return values


def _field_names(body: str) -> list[str]:
    """The member names of a struct body, in order (a function pointer's name inside its parens)."""
    names: list[str] = []
    for member in filter(None, (x.strip() for x in body.split(";"))):
        fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", member)
        names.append(fp.group(1) if fp else re.sub(r"\[[^\]]*\]", "", member).split()[-1].lstrip("*"))
    return names


def test_every_enum_has_the_headers_constants() -> None:
    enums = _definitions("enum")
    assert {"ggspec_type", "ggspec_op", "ggspec_unary_op", "ggspec_backend_buffer_usage"} <= set(enums)
    for enum, body in enums.items():
        values = _enum_values(body)
        assert ffi.typeof(f"enum {enum}").relements == values, enum
        assert {name: getattr(lib, name) for name in values} == values, enum


def test_every_struct_has_the_headers_fields() -> None:
    structs = _definitions("struct")
    assert {"ggspec_tensor", "ggspec_cgraph", "ggspec_backend_i", "ggspec_vdev_params"} <= set(structs)
    for struct, body in structs.items():
        assert [name for name, _ in ffi.typeof(f"struct {struct}").fields] == _field_names(body), struct


def test_every_macro_constant_is_the_headers() -> None:
    seen = 0
    for h in HEADERS:
        for m in re.finditer(r"^\s*#\s*define\s+(GGSPEC_\w+)\s+(.+?)\s*$", _COMMENT.sub(" ", h.read_text()), re.M):
            name, value = m.groups()
            seen += 1
            if re.fullmatch(r"\d+", value):
                assert getattr(lib, name) == int(value), name
            else:  # an expression, left to the compiler (`#define NAME ...` in the cdef)
                assert isinstance(getattr(lib, name), int), name
    assert seen >= 10
    assert lib.GGSPEC_HASHTABLE_FULL == int(ffi.cast("size_t", -1))
