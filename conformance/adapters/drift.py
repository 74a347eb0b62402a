"""Version adapters: the C API adapter over later builds of ggml-backend's API generation
(ggml-python 0.0.25 to 0.0.37, llama-cpp-python 0.2.30 to 0.2.78), whose entry points drifted from
rc.8's. Each drift is handled here, in one place per function, and chosen from the target's own
headers when its adapter module is compiled:

- **the type enum** (`enum ggml_type`): upstream inserted IQ types (IQ3_XXS = 18 from 0.0.26,
  then IQ1_S, IQ4_NL, IQ3_S, IQ2_S, IQ4_XS, IQ1_M, BF16 ...) and so moved I8/I16/I32. The suite
  speaks rc.8's numbering; every argument and result of type `enum ggml_type` (found in our
  cdef) and a tensor's `type` field are translated by name (`TypeMap`); so are a tensor's `op`
  (`enum ggml_op`) and a UNARY node's unary op in its op_params (`enum ggml_unary_op`: SIGMOID
  came before GELU in 0.0.37);
- `backend_sched_new` gaining `bool parallel` (0.0.31): called with `parallel = false`;
- `backend_graph_compute` returning `enum ggml_status` instead of bool (0.0.30): true exactly
  when the status is GGML_STATUS_SUCCESS;
- `backend_sched_init_measure` becoming `backend_sched_reserve` (0.0.27), `backend_sched_set_node_backend`
  / `get_node_backend` becoming `set_tensor_backend` / `get_tensor_backend` (0.0.31): other
  spellings of the same call (`spellings`);
- `backend_tensor_copy_async(backend, src, dst)` gaining a second backend (0.0.31): called with
  the one backend as both;
- a function whose result alone changed from void (sched_graph_compute, graph_plan_compute,
  sched_reserve) keeps our void declaration (C lets a caller ignore a result).

Any other function whose declaration in the target's headers differs from ours (the allocator
rewrite of 0.0.27: tallocr/gallocr/allocr) is dropped from the module, so the checks that need it
report `unsupported` (MissingSymbol), not a failure. `revision()` says, for a build, which
functions were adapted and which dropped because their signature changed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from ggspec.reference.clauses import Profile

from ..errors import MissingSymbol
from ..target import TensorInfo, VDevParams
from .external import (
    HEADERS,
    OPTIONAL_HEADERS,
    ExternalBuild,
    ExternalTarget,
    build_module,
    declared_function,
    install_quiet_gdb,
    rename,
    statements,
)

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
#: words that qualify a declaration but are no part of its C type
_NOISE = {"GGML_API", "GGML_CALL", "extern", "static", "inline", "WSP_GGML_API", "WSP_GGML_CALL"}
_TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double", "bool", "signed", "unsigned", "const",
               "struct", "enum", "size_t", "int64_t", "int32_t", "uint64_t", "uint32_t", "uint8_t", "int8_t"}

#: our function (without prefix) -> the names later versions gave the same call, in order
RENAMED: dict[str, tuple[str, ...]] = {
    "backend_sched_init_measure": ("backend_sched_reserve",),
    "backend_sched_set_node_backend": ("backend_sched_set_tensor_backend",),
    "backend_sched_get_node_backend": ("backend_sched_get_tensor_backend",),
}


def spellings(name: str) -> list[str]:
    """Other names of our function `name` (without prefix) in later versions (RENAMED)."""
    return ["ggml_" + alt for alt in RENAMED.get(name, ())]


# --- reading declarations ----------------------------------------------------------------------


@dataclass(frozen=True)
class Proto:
    """A function declaration, normalised: its result and parameter types as token tuples
    (parameter names dropped, typedefs of pointers expanded)."""

    result: tuple[str, ...]
    params: tuple[tuple[str, ...], ...]
    text: str  # the declaration as written (without GGML_API/GGML_CALL), ending in ';'


@functools.lru_cache(maxsize=64)
def _clean(text: str) -> str:
    """`text` without comments and preprocessor lines (kept: one header's text is cleaned once,
    not once for each of the ~1,000 declarations looked up in it)."""
    text = _COMMENT.sub(" ", text)
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))


def typedefs(text: str) -> dict[str, tuple[str, ...]]:
    """`typedef <type> NAME;` (not function pointers, not struct bodies) -> the type's tokens."""
    out: dict[str, tuple[str, ...]] = {}
    for m in re.finditer(r"\btypedef\s+([\w\s\*]+?)\s*\b(\w+)\s*;", _clean(text)):
        out[m.group(2)] = tuple(re.findall(r"\w+|\*", m.group(1)))
    return out


def _tokens(text: str, defs: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    out: list[str] = []
    for tok in re.findall(r"\w+|\*|\[\]|\.\.\.", text):
        if tok in _NOISE:
            continue
        out.extend(defs.get(tok, (tok,)))
    return tuple(out)


def _param(text: str, defs: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    raw = [t for t in re.findall(r"\w+|\*|\[\]|\.\.\.", text) if t not in _NOISE]
    # drop the parameter's name: a last identifier after a complete type
    named = len(raw) > 1 and re.fullmatch(r"[A-Za-z_]\w*", raw[-1]) is not None
    if named and raw[-1] not in _TYPE_WORDS and raw[-2] not in ("struct", "enum"):
        raw = raw[:-1]
    return _tokens(" ".join(raw), defs)


def _split_params(text: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p for p in (x.strip() for x in out) if p]


def declaration_pattern(name: str) -> re.Pattern[str]:
    """A declaration of function `name`: what precedes it back to a `;`, `{`, `}` or the start
    (group 1: the result type and qualifiers), its parameters (group 2), then `;`."""
    return re.compile(rf"(?:^|[;{{}}])\s*([\w\s\*]*?)\b{re.escape(name)}\s*\(((?:[^()]|\([^()]*\))*)\)\s*;", re.S)


def _declaration(clean: str, name: str) -> re.Match[str] | None:
    """The leftmost match of `declaration_pattern(name)` in `clean`. Every match starts at the
    last `;`, `{` or `}` before its name (the text between holds none of them), so the search
    starts at the one before the name's first use instead of trying every position before it:
    a version's ~1,000 lookups took 9.5 s of regex searching that way (bench/RESULTS.md)."""
    first = re.search(rf"\b{re.escape(name)}\s*\(", clean) if name in clean else None
    if first is None:
        return None
    return declaration_pattern(name).search(clean, max(0, *(clean.rfind(c, 0, first.start()) for c in ";{}")))


def prototype(text: str, name: str, defs: dict[str, tuple[str, ...]]) -> Proto | None:
    """The declaration of function `name` in C text, or None when there is none."""
    m = _declaration(_clean(text), name)
    if m is None:
        return None
    result = _tokens(m.group(1), defs)
    if not result:
        return None
    params = tuple(_param(p, defs) for p in _split_params(m.group(2)))
    if params == (("void",),):
        params = ()
    words = [w for w in re.findall(r"\S+", m.group(1)) if w not in _NOISE]
    decl = " ".join(words) + f" {name}(" + ", ".join(" ".join(p.split()) for p in _split_params(m.group(2))) + ");"
    return Proto(result, params, decl)


def enum_values(text: str, enum: str) -> dict[str, int]:
    """The constants of `enum <enum> { ... }` in C text and their values."""
    m = re.search(rf"\benum\s+{re.escape(enum)}\s*\{{(.*?)\}}", _clean(text), re.S)
    if m is None:
        return {}
    out: dict[str, int] = {}
    nxt = 0
    for item in m.group(1).split(","):
        item = item.strip()
        if not item:
            continue
        name, _, value = (x.strip() for x in item.partition("="))
        if value:
            try:
                nxt = int(value, 0)
            except ValueError:
                nxt = out.get(value, nxt)
        out[name] = nxt
        nxt += 1
    return out


# --- the type enum -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TypeMap:
    """rc.8's `enum ggml_type` numbering (ours) <-> the target's, by constant name."""

    ours: dict[str, int]
    theirs: dict[str, int]
    _to: dict[int, int] = field(init=False)
    _from: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        to = {v: self.theirs[k] for k, v in self.ours.items() if k in self.theirs}
        back = {v: self.ours[k] for k, v in self.theirs.items() if k in self.ours}
        object.__setattr__(self, "_to", to)
        object.__setattr__(self, "_from", back)

    @property
    def identity(self) -> bool:
        return all(self._to.get(v) == v for v in self.ours.values())

    def to_target(self, value: int) -> int:
        """Our value -> the target's (a value we do not number passes unchanged: bad input stays bad)."""
        return self._to.get(value, value)

    def from_target(self, value: int) -> int:
        """The target's value -> ours; a type rc.8 lacks gets a number above all of rc.8's."""
        if value in self._from:
            return self._from[value]
        return 1000 + value


def our_types(enum: str = "type") -> dict[str, int]:
    """rc.8's `enum ggml_<enum>` (type, op) as our cdef numbers it: constant name without prefix -> value."""
    from ggspec.native.build import read_cdef

    upper = f"GGSPEC_{enum.upper()}_"
    return {k.removeprefix(upper): v for k, v in enum_values(read_cdef(), f"ggspec_{enum}").items()}


def their_types(include_dir: Path, prefix: str, enum: str = "type") -> dict[str, int]:
    upper = f"{prefix.upper()}{enum.upper()}_"
    text = (include_dir / "ggml.h").read_text(encoding="utf-8", errors="replace")
    return {k.removeprefix(upper): v for k, v in enum_values(text, prefix + enum).items()}


# --- the one place per function ----------------------------------------------------------------


@dataclass(frozen=True)
class Adapted:
    """How one drifted function is declared and called: `declare(ours, theirs)` gives the
    declaration to compile (None: drop it), `call(target, f)` wraps the compiled function so it
    takes and gives what rc.8's did."""

    first: str  # the first version that has the drift, for docs
    why: str
    declare: Callable[[Proto, Proto], str | None]
    call: Callable[[VersionedTarget, Any], Any]


def _theirs(ours: Proto, theirs: Proto) -> str:
    return theirs.text


def _status_as_int(ours: Proto, theirs: Proto) -> str | None:
    if theirs.params != ours.params or theirs.result[:1] != ("enum",):
        return None
    return re.sub(r"^\s*enum\s+\w+\s+", "int ", theirs.text)


def _extra_bools(ours: Proto, theirs: Proto) -> str | None:
    n = len(ours.params)
    if theirs.params[:n] != ours.params or any(p != ("bool",) for p in theirs.params[n:]):
        return None
    return theirs.text


def _second_backend(ours: Proto, theirs: Proto) -> str | None:
    return theirs.text if len(theirs.params) == len(ours.params) + 1 and theirs.params[1] == ours.params[0] else None


def _soft_max_extras(ours: Proto, theirs: Proto) -> str | None:
    ok = (theirs.params[:3] == ours.params[:3] and ("float",) in theirs.params[3:]
          and all(p in (("float",), ours.params[2]) for p in theirs.params[3:]))
    return theirs.text if ok else None


def _call_soft_max_ext(t: VersionedTarget, f: Any) -> Any:
    rest = t.proto("soft_max_ext").params[3:]
    scale_at = rest.index(("float",))

    def soft_max_ext(ctx: Any, a: Any, mask: Any, scale: float) -> Any:
        extra = [t.ffi.NULL if "*" in p else 0.0 for p in rest]
        extra[scale_at] = scale
        return f(ctx, a, mask, *extra)

    return soft_max_ext


def _call_sched_new(t: VersionedTarget, f: Any) -> Any:
    extra = len(t.proto("backend_sched_new").params) - 4

    def sched_new(*args: Any) -> Any:
        return f(*args, *([False] * extra))

    return sched_new


def _call_graph_compute(t: VersionedTarget, f: Any) -> Any:
    if t.proto("backend_graph_compute").result[:1] != ("enum",):
        return f
    success = t.status_success

    def graph_compute(backend: Any, g: Any) -> bool:
        return bool(f(backend, g) == success)

    return graph_compute


def _call_copy_async(t: VersionedTarget, f: Any) -> Any:
    def copy_async(backend: Any, src: Any, dst: Any) -> Any:
        return f(backend, backend, src, dst)

    return copy_async


ADAPTED: dict[str, Adapted] = {
    "backend_sched_new": Adapted("ggml-python-0.0.31", "gained `bool parallel` (pipeline parallelism); called with false",
                                 _extra_bools, _call_sched_new),
    "backend_graph_compute": Adapted("ggml-python-0.0.30", "returns enum ggml_status; true is GGML_STATUS_SUCCESS",
                                     _status_as_int, _call_graph_compute),
    "soft_max_ext": Adapted("ggml-python-0.0.31", "gained ALiBi's `pos` tensor and `max_bias`; called with NULL and 0",
                            _soft_max_extras, _call_soft_max_ext),
    "backend_tensor_copy_async": Adapted("ggml-python-0.0.31", "takes the source's and the destination's backend; "
                                         "called with the one backend as both", _second_backend, _call_copy_async),
}


@dataclass
class Revision:
    """What the version adapter did to our declarations for one build."""

    protos: dict[str, Proto] = field(default_factory=dict)  # the target's, by name without prefix
    adapted: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # dropped: the signature changed and no adapter knows it
    fields: list[str] = field(default_factory=list)  # struct members the target lacks or declares otherwise


class HeaderReviser:
    """The `revise` hook of external.make_cdef for one target's headers."""

    def __init__(self, include_dir: Path, prefix: str) -> None:
        names = HEADERS + tuple(h for h in OPTIONAL_HEADERS if (include_dir / h).is_file())
        self.text = "\n".join((include_dir / h).read_text(encoding="utf-8", errors="replace") for h in names)
        from ggspec.native.build import read_cdef

        ours_text = rename(read_cdef(), prefix, set())
        self.defs = {**typedefs(ours_text), **typedefs(self.text)}
        self.prefix = prefix
        self.revision = Revision()

    def __call__(self, fn: str, stmt: str) -> str | None:
        return revise_declaration(self, fn, stmt)

    @property
    def shim_macros(self) -> list[tuple[str, str | None]]:
        """What the virtual device shim (native/src/vdev.c) needs to know of this build's backend
        interface: VDEV_STATUS_API (compute entries return enum ggml_status, 0.0.30 on),
        VDEV_COPY_TWO_BACKENDS (cpy_tensor_async takes both backends, 0.0.31 on) and
        VDEV_BACKEND_GUID (a backend carries a guid that ggml_backend_is_cpu compares, 0.0.30 on)."""
        body = _struct_body(self.text, self.prefix + "backend_i") or ""
        iface = _members(body, self.defs)
        out: list[tuple[str, str | None]] = []
        compute = iface.get("graph_compute")
        if compute is not None and compute[1][:1] == ("enum",):
            out.append(("VDEV_STATUS_API", None))
        copy = iface.get("cpy_tensor_async")
        if copy is not None and len(copy[2]) == 4:
            out.append(("VDEV_COPY_TWO_BACKENDS", None))
        backend = _struct_body(self.text, self.prefix + "backend") or ""
        if re.search(r"\bguid\s*;", backend):
            out.append(("VDEV_BACKEND_GUID", None))
        return out


def _same(a: tuple[tuple[str, ...], ...], b: tuple[tuple[str, ...], ...]) -> bool:
    """Parameter lists that take the same arguments (`const` on a pointee makes no difference to a caller)."""
    def strip(ps: tuple[tuple[str, ...], ...]) -> list[tuple[str, ...]]:
        return [tuple(t for t in p if t != "const") for p in ps]

    return strip(a) == strip(b)


def _result_compatible(ours: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Our result type reads theirs: the same, ours void (the result is ignored), or int for an enum."""
    return ours == theirs or ours == ("void",) or (ours == ("int",) and theirs[:1] == ("enum",))


def _members(body: str, defs: dict[str, tuple[str, ...]]) -> dict[str, tuple[Any, ...]]:
    """A struct body's members: name -> its normalised type (function pointers by prototype)."""
    out: dict[str, tuple[Any, ...]] = {}
    for member in _clean(body).split(";"):
        member = " ".join(w for w in re.sub(r"(\w+)", r" \1 ", member).split() if w not in _NOISE)
        if not member or member == "...":
            continue
        fp = re.match(r"(.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", member)
        if fp is not None:
            p = prototype(f"{fp.group(1)} {fp.group(2)}({fp.group(3)});", fp.group(2), defs)
            if p is not None:
                out[fp.group(2)] = ("fn", p.result, tuple(tuple(t for t in q if t != "const") for q in p.params))
            continue
        m = re.match(r"(.*?)\b(\w+)\s*((?:\[[^\]]*\])*)$", member)
        if m is not None:
            out[m.group(2)] = ("var", _tokens(m.group(1), defs), bool(m.group(3)))
    return out


def _struct_body(text: str, name: str) -> str | None:
    m = re.search(rf"\bstruct\s+{re.escape(name)}\s*\{{", _clean(text))
    if m is None:
        return None
    clean = _clean(text)
    depth, i = 1, m.end()
    while i < len(clean) and depth:
        depth += {"{": 1, "}": -1}.get(clean[i], 0)
        i += 1
    return clean[m.end():i - 1]


def revise_enum(r: HeaderReviser, stmt: str) -> str:
    """Our definition of an enum the target also defines, with the target's values, without the
    constants it lacks (0.0.37 renamed GGML_BACKEND_CPU to GGML_BACKEND_TYPE_CPU, dropped OP_ALIBI).
    The suite keeps speaking rc.8's numbers: VersionedTarget translates types and ops by name."""
    m = re.match(r"\s*enum\s+(\w+)\s*\{(.*)\}\s*;?\s*$", stmt, re.S)
    if m is None:
        return stmt
    theirs = enum_values(r.text, m.group(1))
    if not theirs:
        return stmt
    ours = enum_values(stmt, m.group(1))
    if all(theirs.get(k) == v for k, v in ours.items()):
        return stmt
    gone = [k for k in ours if k not in theirs]
    r.revision.fields.extend(f"{m.group(1)}.{k}" for k in gone)
    body = ",\n    ".join(f"{k} = {theirs[k]}" for k in ours if k in theirs) or "..."
    return f"enum {m.group(1)} {{\n    {body}\n}};"


def revise_struct(r: HeaderReviser, stmt: str) -> str:
    """Our definition of a struct the target also defines, without the members it lacks or
    declares otherwise, and open (`...;`) so that the target's layout is the one used."""
    m = re.match(r"\s*struct\s+(\w+)\s*\{(.*)\}\s*;?\s*$", stmt, re.S)
    if m is None:
        return stmt
    theirs_body = _struct_body(r.text, m.group(1))
    if theirs_body is None:
        return stmt
    ours, theirs = _members(m.group(2), r.defs), _members(theirs_body, r.defs)
    if ours == theirs:
        return stmt
    keep = []
    for member in _clean(m.group(2)).split(";"):
        one = " ".join(member.split())
        if not one or one == "...":
            continue
        name = next(iter(_members(one + ";", r.defs)), None)
        if name is not None and theirs.get(name) == ours.get(name):
            keep.append(one + ";")
        elif name is not None:
            r.revision.fields.append(f"{m.group(1)}.{name}")
    return f"struct {m.group(1)} {{\n    " + "\n    ".join(keep) + "\n    ...;\n};"


def revise_declaration(r: HeaderReviser, fn: str, stmt: str) -> str | None:
    """Keep our declaration of `fn`, take an adapted one, or drop it (see the module doc)."""
    if not fn:
        return revise_enum(r, stmt) if re.match(r"\s*enum\s+\w+\s*\{", stmt) else revise_struct(r, stmt)
    ours = prototype(stmt + ";" if not stmt.rstrip().endswith(";") else stmt, fn, r.defs)
    theirs = prototype(r.text, fn, r.defs)
    if ours is None or theirs is None:
        return stmt  # not a plain declaration in their headers (a macro, ...): keep ours
    short = fn.removeprefix(r.prefix)
    r.revision.protos[short] = theirs
    for name, alts in RENAMED.items():
        if short in alts:
            r.revision.protos[name] = theirs
    if _same(ours.params, theirs.params) and _result_compatible(ours.result, theirs.result):
        return stmt
    adapted = ADAPTED.get(short)
    decl = adapted.declare(ours, theirs) if adapted is not None else None
    if decl is None:
        r.revision.changed.append(short)
        return None
    r.revision.adapted.append(short)
    return decl


# --- the target --------------------------------------------------------------------------------


class VersionedTarget(ExternalTarget):
    """An external target whose calls go through the version adapter."""

    def __init__(self, build: ExternalBuild, name: str, default_profile: Profile, types: TypeMap, ops: TypeMap,
                 rev: Revision, status_success: int, typed: dict[str, tuple[tuple[int, ...], bool]],
                 unary: TypeMap) -> None:
        self.types = types
        self.ops = ops
        self.unary = unary
        self._protos = rev.protos
        self._adapted = frozenset(rev.adapted)
        self.status_success = status_success
        self._typed = typed  # _typed_positions(build.prefix), read once per build
        super().__init__(build, name, default_profile)

    def proto(self, name: str) -> Proto:
        try:
            return self._protos[name]
        except KeyError:
            raise MissingSymbol(self.name, self.p + name) from None

    def fn(self, name: str) -> Any:
        f = super().fn(name)
        if name in self._adapted:
            f = ADAPTED[name].call(self, f)
        typed = self._typed.get(name)
        if typed is not None and not self.types.identity:
            f = _translate_types(self.types, f, *typed)
        return f

    def vec_dot_type(self, type_: int) -> int:
        """Both ways in rc.8's numbering: the traits call comes from EXTERNAL_CDEF, outside our cdef's
        typed positions, and its result is a struct member."""
        return self.types.from_target(super().vec_dot_type(self.types.to_target(type_)))

    def tensor_info(self, t: Any) -> TensorInfo:
        info = super().tensor_info(t)
        return replace(info, type=self.types.from_target(info.type), op=self.ops.from_target(info.op))

    def tensor_op_params(self, t: Any) -> bytes:
        """A UNARY node's unary op (op_params[0]) in rc.8's numbering: later builds inserted
        constants in enum ggml_unary_op (SIGMOID before GELU, so GELU is 8 in 0.0.37, 7 in rc.8),
        and a node the target made says its own number."""
        params = super().tensor_op_params(t)
        if self.unary.identity or int(t.op) != self.ops.to_target(self.ops.ours["UNARY"]):
            return params
        theirs = int.from_bytes(params[:4], "little", signed=True)
        return self.unary.from_target(theirs).to_bytes(4, "little", signed=True) + params[4:]

    def set_op(self, t: Any, op: int, srcs: Sequence[Any | None]) -> None:
        super().set_op(t, op, srcs)
        t.op = self.ops.to_target(op)

    def vdev_init(self, params: VDevParams) -> Any:
        """The virtual device's set of ops in the target's numbering: its supports_op entry is
        handed the target's nodes, whose op numbers are the target's (set_op above), so a mask
        in rc.8's numbering would answer for other ops (BACK-7 on 0.0.30 and later, whose
        enum ggml_op differs from rc.8's, failed so: the adapter's fault, not the target's)."""
        if not self.ops.identity:
            theirs = frozenset(self.ops.to_target(int(op)) for op in params.ops)  # ints: capi builds the mask with int()
            params = replace(params, ops=cast(Any, theirs))
        return super().vdev_init(params)


def _typed_positions(prefix: str) -> dict[str, tuple[tuple[int, ...], bool]]:
    """Our functions (without prefix) -> (positions of `enum ggml_type` parameters, whether the
    result is one), read from our cdef."""
    from ggspec.native.build import read_cdef

    cdef = rename(read_cdef(), prefix, set())
    enum = ("enum", prefix + "type")
    out: dict[str, tuple[tuple[int, ...], bool]] = {}
    for stmt in statements(cdef):
        fn = declared_function(stmt)
        if fn is None or not fn.startswith(prefix):
            continue
        p = prototype(stmt if stmt.endswith(";") else stmt + ";", fn, {})
        if p is None:
            continue
        where = tuple(i for i, q in enumerate(p.params) if q[-2:] == enum and "*" not in q)
        if where or p.result[-2:] == enum:
            out[fn.removeprefix(prefix)] = (where, p.result[-2:] == enum)
    return out


def _translate_types(types: TypeMap, f: Any, where: Sequence[int], result: bool) -> Any:
    def call(*args: Any) -> Any:
        args2 = [types.to_target(int(a)) if i in where else a for i, a in enumerate(args)]
        out = f(*args2)
        return types.from_target(int(out)) if result else out

    return call


def build_versioned(include_dir: Path, lib_path: Path, prefix: str, name: str,
                    default_profile: Profile = Profile.FIXED) -> Callable[[], VersionedTarget]:
    """Build (or reuse) the adapter module through the version adapter; a factory of targets."""
    build = build_module(include_dir, lib_path, prefix, spellings, HeaderReviser(include_dir, prefix))
    rev = revision(include_dir, prefix)  # the same decisions, also when the module came from the cache
    types = TypeMap(our_types(), their_types(include_dir, prefix))
    ops = TypeMap(our_types("op"), their_types(include_dir, prefix, "op"))
    unary = TypeMap(our_types("unary_op"), their_types(include_dir, prefix, "unary_op"))
    text = (include_dir / "ggml-backend.h").read_text(encoding="utf-8", errors="replace")
    status = enum_values(text, prefix + "status").get(prefix.upper() + "STATUS_SUCCESS", 0)
    # read here, not per target: the factory makes a target for every example, and reading our
    # cdef's typed positions took ~60 CPU-ms each time
    typed = _typed_positions(prefix)
    install_quiet_gdb()

    def factory() -> VersionedTarget:
        return VersionedTarget(build, name, default_profile, types, ops, rev, status, typed, unary)

    return factory


def revision(include_dir: Path, prefix: str = "ggml_") -> Revision:
    """Which of our functions a target's headers adapt and which they changed (docs, tests)."""
    from ggspec.native.build import read_cdef

    reviser = HeaderReviser(include_dir, prefix)
    for stmt in statements(rename(read_cdef(), prefix, set())):
        fn = declared_function(stmt)
        if fn is None:
            revise_declaration(reviser, "", stmt)
            continue
        if not fn.startswith(prefix):
            continue
        short = fn.removeprefix(prefix)
        alt = next((a for a in spellings(short) if re.search(rf"\b{a}\s*\(", reviser.text)), None)
        if prototype(reviser.text, fn, reviser.defs) is None and alt is not None:
            revise_declaration(reviser, alt, stmt.replace(fn, alt, 1))
        else:
            revise_declaration(reviser, fn, stmt)
    return reviser.revision
