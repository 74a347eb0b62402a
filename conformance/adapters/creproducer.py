"""C reproducers: a failing example of a C target (native or external) as a standalone C file.

The example runs once more, in a forked worker, on a C-API target whose calls are traced: every
function the adapter calls through `fn()` becomes a C statement (handles named as variables,
byte payloads as arrays, pointers into host blocks or buffers as offsets from them), and so do
the few struct fields the adapter reads or writes itself (`t->buffer`, `t->op`, `buf->usage`,
a tensor's fields for `tensor_info`). Each observation the scenario records is tied to the call
result or output bytes it came from, and the C file checks it against the value the reference
expects, printing "differs" where they disagree. A target that aborts or crashes does so in C
at the same call.

`write_reproducer(exc, repro_dir)` writes `<check>-<hash>.c` for a `differential.Mismatch` and
returns a note with the path and the gcc command line (compiled against the target's own
headers and linked with its library; for native/, against its sources).
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile, SpecViolation, UndefinedBehaviour

from ..engine import isolate
from ..errors import MissingSymbol, NeedsPristineProcess
from ..target import TensorInfo, selected_device
from ..target_names import parse
from . import make_target
from .capi import CApiTarget, enter_pristine_worker

NATIVE_DIR = Path(__file__).resolve().parents[2] / "native"
_TAG = "__ctrace__"

Event = tuple[Any, ...]


def _c_string(data: bytes) -> str:
    out = []
    for b in data:
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= b < 127 and ch != "?":
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def _c_bytes(data: bytes) -> str:
    if not any(data):
        return "{0}"
    rows = [", ".join(f"0x{b:02x}" for b in data[i:i + 16]) for i in range(0, len(data), 16)]
    return "{\n        " + ",\n        ".join(rows) + "}"


def _c_int(v: int) -> str:
    if v < 0:
        return f"({v}LL)" if v < -(2**31) else str(v)
    return f"{v}ULL" if v >= 2**31 else str(v)


class CTracer:
    """Turns a CApiTarget's calls into C statements, sent to `sink` as they happen (so a crash
    keeps everything up to the crashing call)."""

    def __init__(self, target: CApiTarget, sink: Callable[[Event], None]) -> None:
        self.t = target
        self.ffi = target.ffi
        self.sink = sink
        self.paused = False
        self.n = 0
        self.handles: dict[int, tuple[str, str]] = {}  # address -> (var, cname)
        self.blocks: list[tuple[int, int, str]] = []  # host blocks: (address, size, var)
        self.buffers: dict[str, Any] = {}  # var -> buffer handle (for addresses inside buffers)
        try:
            self.py_init_fn = int(self.ffi.cast("uintptr_t", target.lib.ggspec_py_init_fn))
        except AttributeError:
            self.py_init_fn = -1

    # plumbing --------------------------------------------------------------------------------

    def var(self, stem: str) -> str:
        self.n += 1
        return f"{stem}_{self.n}"

    def emit(self, *event: Any) -> None:
        self.sink(event)

    def stmt(self, code: str) -> None:
        self.emit("stmt", code)

    def addr(self, p: Any) -> int:
        return int(self.ffi.cast("uintptr_t", p))

    def register(self, p: Any, var: str) -> None:
        cname = self.ffi.typeof(p).cname
        self.handles[self.addr(p)] = (var, cname)
        if "backend_buffer *" in cname and "type" not in cname:
            self.buffers[var] = p

    def forget_buffer(self, p: Any) -> None:
        a = self.addr(p)
        for var, h in list(self.buffers.items()):
            if self.addr(h) == a:
                del self.buffers[var]

    def _raw_base(self, buf: Any) -> int:
        return self.t._raw_base(buf)

    # values ----------------------------------------------------------------------------------

    def block(self, arr: Any, stem: str = "mem") -> str:
        """Declare a host block holding `arr`'s current bytes; return its variable."""
        size = self.ffi.sizeof(arr)
        data = bytes(self.ffi.buffer(arr, size))
        var = self.var(stem)
        self.stmt(f"static uint8_t {var}[{size}] = {_c_bytes(data)};")
        self.blocks.append((self.addr(arr), size, var))
        return var

    def value(self, v: Any, ctype: Any | None = None) -> str:
        """A C expression for an argument or field value."""
        ffi = self.ffi
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return _c_int(v)
        if isinstance(v, bytes):
            return _c_string(v)
        if isinstance(v, str):
            return _c_string(v.encode())
        if not isinstance(v, ffi.CData):
            return f"/* unrepresentable {v!r} */ 0"
        t = ffi.typeof(v)
        if t.kind == "struct":
            addr = self.addr(ffi.addressof(v))
            if addr in self.handles:
                return f"(*{self.handles[addr][0]})"
            return self.compound(v)
        if t.kind == "array":
            return self.block(v)
        if t.kind in ("pointer", "function"):
            return self.pointer(v)
        if t.kind == "primitive":
            return _c_int(int(v)) if t.cname not in ("float", "double") else repr(float(v))
        if t.kind == "enum":
            return str(int(ffi.cast("int", v)))
        return f"/* unrepresentable {t.cname} */ 0"

    def compound(self, v: Any) -> str:
        t = self.ffi.typeof(v)
        fields = []
        for name, field in t.fields:
            fv = getattr(v, name)
            if field.type.kind == "array":
                items = ", ".join(self.value(fv[i]) for i in range(field.type.length))
                fields.append(f".{name} = {{{items}}}")
            else:
                fields.append(f".{name} = {self.value(fv)}")
        return f"({t.cname}){{ {', '.join(fields)} }}"

    def pointer(self, p: Any) -> str:
        ffi = self.ffi
        t = ffi.typeof(p)
        a = self.addr(p)
        cname = t.cname
        if a == 0:
            return "NULL"
        if a in self.handles:
            var, have = self.handles[a]
            return var if have == cname or cname == "void *" else f"({cname}){var}"
        if a == self.py_init_fn:
            return "py_init_fn"
        for start, size, var in reversed(self.blocks):
            if start <= a <= start + size:
                return f"({cname})({var} + {a - start})"
        for var, buf in self.buffers.items():
            base, size = self._raw_base(buf), int(buf.size)
            if base <= a <= base + size:
                return f"({cname})((char *)raw_base({var}) + {a - base})"
        if t.kind == "pointer" and t.item.kind == "struct":
            return f"&{self.compound(p[0])}"
        if t.kind == "pointer" and t.item.cname == "char":
            return _c_string(ffi.string(p))
        return f"({cname})(uintptr_t){a:#x} /* an address the trace cannot name */"

    # calls -----------------------------------------------------------------------------------

    def wrap(self, cname: str, fn: Any) -> Callable[..., Any]:
        ffi = self.ffi

        fn = getattr(fn, "__wrapped__", fn)  # the C function, not isolate's call marker

        def traced(*args: Any) -> Any:
            if self.paused:
                return fn(*args)
            arrays = [a for a in args if isinstance(a, ffi.CData) and ffi.typeof(a).kind == "array"]
            exprs = [self.value(a) for a in args]
            result_t = ffi.typeof(fn).result
            call = f"{cname}({', '.join(exprs)})"
            if cname.endswith("backend_buffer_free") and args and args[0] is not None:
                self.forget_buffer(args[0])
            var = None
            if result_t.kind == "void":
                self.stmt(f"{call};")
            else:
                decl = "const char *" if result_t.cname == "char *" else ("bool" if result_t.cname == "_Bool" else result_t.cname)
                stem = "s" if result_t.cname == "char *" else ("r" if result_t.kind != "pointer" else _stem(result_t.cname))
                var = self.var(stem)
                self.stmt(f"{decl} {var} = {call};")
            result = fn(*args)
            for arr in arrays:  # output buffers: what the call left in them
                a = self.addr(arr)
                for start, size, bvar in self.blocks:
                    if start == a:
                        self.emit("producer", "bytes", f"{bvar}", bytes(ffi.buffer(arr, size)))
            if var is not None:
                if result_t.cname == "char *":
                    text = "" if result == ffi.NULL else ffi.string(result).decode(errors="replace")
                    self.stmt(f'printf("{cname}(...) = \\"%s\\"\\n", {var} ? {var} : "(NULL)");')
                    self.emit("producer", "str", var, text)
                elif result_t.kind == "pointer":
                    if result != ffi.NULL:
                        self.register(result, var)
                elif result_t.kind in ("primitive", "enum"):
                    value = int(ffi.cast("long long", result)) if result_t.kind == "enum" else int(result)
                    self.stmt(f'printf("{cname}(...) = %lld\\n", (long long){var});')
                    self.emit("producer", "bool" if result_t.cname == "_Bool" else "int", var, value)
            return result

        return traced


def _stem(cname: str) -> str:
    for key, stem in (("buffer_type", "buft"), ("backend_buffer", "buf"), ("tensor", "t"), ("context", "ctx"),
                      ("backend", "backend")):
        if key in cname:
            return stem
    return "p"


def _traced_class(base: type[CApiTarget]) -> type[CApiTarget]:
    """`base` with tracing of the few things its methods do without fn()."""

    class Traced(base):  # type: ignore[valid-type,misc]
        tracer: CTracer

        def fn(self, name: str) -> Any:
            f = super().fn(name)
            f = getattr(f, "__wrapped__", f)  # the C function, not isolate's call marker
            return self.tracer.wrap(getattr(f, "__name__", self.p + name), f)

        def fn_vdev(self, name: str) -> Any:
            f = super().fn_vdev(name)
            return self.tracer.wrap("ggspec_vdev_" + name, f)

        def host_alloc(self, size: int) -> Any:
            block = super().host_alloc(size)
            self.tracer.block(block, "host")
            return block

        def host_write(self, h: Any, offset: int, payload: bytes) -> None:
            tr = self.tracer
            tr.stmt(f"memcpy({tr.pointer(h + offset)}, (const uint8_t[]){_c_bytes(payload)}, {len(payload)});"
                    if payload else "/* host_write of 0 bytes */")
            super().host_write(h, offset, payload)

        def host_read(self, h: Any, offset: int, size: int) -> bytes:
            data: bytes = super().host_read(h, offset, size)
            self.tracer.emit("producer", "bytes", f"(const uint8_t *){self.tracer.pointer(h + offset)}", data)
            return data

        def poke_buffer(self, t: Any, buf: Any | None) -> None:
            self.tracer.stmt(f"{self.tracer.pointer(t)}->buffer = {self.tracer.pointer(self._ptr(buf))};")
            super().poke_buffer(t, buf)

        def set_op(self, t: Any, op: int, srcs: Any) -> None:
            tr = self.tracer
            tr.stmt(f"{tr.pointer(t)}->op = {int(op)};")
            for i, s in enumerate(srcs):
                tr.stmt(f"{tr.pointer(t)}->src[{i}] = {tr.pointer(self._ptr(s))};")
            super().set_op(t, op, srcs)

        def tensor_info(self, t: Any) -> TensorInfo:
            info: TensorInfo = super().tensor_info(t)
            self.tracer.emit("producer", "info", self.tracer.pointer(t), info)
            return info

        def buffer_usage(self, buf: Any) -> int:
            usage: int = super().buffer_usage(buf)
            self.tracer.emit("producer", "int", f"{self.tracer.pointer(buf)}->usage", usage)
            return usage

        def buffer_bytes(self, buf: Any) -> bytes:
            self.tracer.paused = True
            try:
                host = self.buffer_is_host(buf)
            finally:
                self.tracer.paused = False
            data: bytes = super().buffer_bytes(buf)
            if host:
                self.tracer.emit("producer", "bytes", f"(const uint8_t *)raw_base({self.tracer.pointer(buf)})", data)
            return data

        def buffer_init_without_get_base(self, size: int) -> Any:
            tr = self.tracer
            tr.paused = True
            try:
                buf = super().buffer_init_without_get_base(size)
            finally:
                tr.paused = False
            iface, var, p = tr.var("iface"), tr.var("buf"), self.p
            tr.stmt(f"struct {p}backend_buffer_i {iface};")
            tr.stmt(f"{{ {p}backend_buffer_t probe = {p}backend_buft_alloc_buffer({p}backend_cpu_buffer_type(), 0); "
                    f"{iface} = probe->iface; {p}backend_buffer_free(probe); }}")
            tr.stmt(f"{iface}.get_base = NULL;")
            tr.stmt(f"{p}backend_buffer_t {var} = {p}backend_buffer_init({p}backend_cpu_buffer_type(), {iface}, "
                    f"NULL, {_c_int(size)});")
            if buf != self.ffi.NULL:
                tr.register(buf, var)
            return buf

    Traced.__name__ = f"Traced{base.__name__}"
    return Traced


def attach(target: CApiTarget, sink: Callable[[Event], None]) -> CTracer:
    """Trace `target` from now on: its contexts are declared first."""
    tracer = CTracer(target, sink)
    target.__class__ = _traced_class(type(target))
    target.tracer = tracer  # type: ignore[attr-defined]
    p = target.p
    for ctx, no_alloc in ((target.ctx, True), (target.host_ctx, False)):
        var = tracer.var("ctx")
        tracer.stmt(f"struct {p}context * {var} = {p}init((struct {p}init_params){{ .mem_size = "
                    f"{int(_context_bytes())}, .mem_buffer = NULL, .no_alloc = {'true' if no_alloc else 'false'} }});")
        tracer.register(ctx, var)
    return tracer


def _context_bytes() -> int:
    from .capi import CONTEXT_BYTES

    return CONTEXT_BYTES


# --- running the example traced -----------------------------------------------------------------


class _TracingRecorder:
    def __init__(self, tracer: CTracer) -> None:
        self.tracer = tracer
        self.items: list[tuple[str, Any]] = []

    def __call__(self, label: str, value: Any) -> None:
        self.tracer.emit("obs", len(self.items), label, value)
        self.items.append((label, value))


def _traced_run(check: Any, args: dict[str, Any], target_name: str, profile: Profile) -> str:
    enter_pristine_worker()
    target = make_target(target_name, profile)
    assert isinstance(target, CApiTarget)

    def sink(event: Event) -> None:
        isolate.report((_TAG, event))

    tracer = attach(target, sink)
    rec = _TracingRecorder(tracer)
    try:
        check.scenario(target, rec, **args)
    except (SpecViolation, UndefinedBehaviour, MissingSymbol, NeedsPristineProcess) as exc:
        return f"the adapter stopped: {exc}"
    return "finished"


def trace_example(check: Any, args: dict[str, Any], target_name: str, profile: Profile) -> tuple[list[Event], str]:
    """The C trace of one example on a C target, and how the traced run ended."""
    forked = isolate.run_forked(lambda: _traced_run(check, args, target_name, profile), timeout=60)
    events = [r[1] for r in forked.reports if isinstance(r, tuple) and len(r) == 2 and r[0] == _TAG]
    ending = str(forked.value) if forked.status == "ok" else forked.describe()
    return events, ending


# --- writing the C file ---------------------------------------------------------------------------


def _helpers(p: str) -> str:
    return f"""
static int differences = 0;

static inline void * raw_base({p}backend_buffer_t buf) {{
    return buf->iface.get_base ? buf->iface.get_base(buf) : NULL;
}}

static inline {p}backend_t py_init_fn(const char * params, void * user_data) {{
    printf("init_fn(\\"%s\\", %llu)\\n", params, (unsigned long long)(uintptr_t)user_data);
    return {p}backend_cpu_init();
}}

static inline void verdict(const char * label, bool same) {{
    printf("%-40s %s\\n", label, same ? "same as the reference" : "DIFFERS from the reference");
    differences += !same;
}}

static inline void check_bytes(const char * label, const uint8_t * got, const uint8_t * want, size_t n) {{
    bool same = memcmp(got, want, n) == 0;
    verdict(label, same);
    if (!same) {{
        for (size_t i = 0; i < n; i++) {{
            if (got[i] != want[i]) {{
                printf("    first difference at byte %zu: 0x%02x, the reference 0x%02x\\n", i, got[i], want[i]);
                break;
            }}
        }}
    }}
}}

static inline void check_int(const char * label, long long got, long long want) {{
    verdict(label, got == want);
    if (got != want) printf("    got %lld, the reference %lld\\n", got, want);
}}

static inline void check_str(const char * label, const char * got, const char * want) {{
    bool same = got != NULL && strcmp(got, want) == 0;
    verdict(label, same);
    if (!same) printf("    got \\"%s\\", the reference \\"%s\\"\\n", got ? got : "(NULL)", want);
}}

static inline void check_info(const char * label, const struct {p}tensor * t, int type, const int64_t ne[4],
                       const size_t nb[4], int op, const char * name, size_t view_offs, bool has_view_src,
                       bool has_buffer, bool has_data, long long data_offset) {{
    {p}backend_buffer_t buf = t->view_src ? t->view_src->buffer : t->buffer;
    long long offset = -1;
    if (t->data && buf) {{
        char * base = raw_base(buf);
        offset = base ? (long long)((char *)t->data - base) : -1;
    }}
    bool same = (int)t->type == type && (int)t->op == op && strcmp(t->name, name) == 0 &&
                t->view_offs == view_offs && (t->view_src != NULL) == has_view_src &&
                (t->buffer != NULL) == has_buffer && (t->data != NULL) == has_data && offset == data_offset;
    for (int i = 0; i < 4; i++) same = same && t->ne[i] == ne[i] && t->nb[i] == nb[i];
    verdict(label, same);
    if (!same) {{
        printf("    got type %d op %d view_offs %zu view_src %d buffer %d data %d data offset %lld\\n",
               (int)t->type, (int)t->op, t->view_offs, t->view_src != NULL, t->buffer != NULL, t->data != NULL, offset);
        printf("    the reference: type %d op %d view_offs %zu view_src %d buffer %d data %d data offset %lld\\n",
               type, op, view_offs, has_view_src, has_buffer, has_data, data_offset);
    }}
}}
"""


def _comment(text: str) -> str:
    return text.replace("*/", "* /")


def _check_stmt(label: str, index: int, kind: str, expr: str, want: Any) -> list[str]:
    tag = _c_string(f"[{index}] {label}".encode())
    if kind == "bytes" and isinstance(want, bytes):
        name = f"want_{index}"
        return [f"static const uint8_t {name}[{max(len(want), 1)}] = {_c_bytes(want)};",
                f"check_bytes({tag}, {expr}, {name}, {len(want)});"]
    if kind in ("int", "bool") and isinstance(want, int):
        return [f"check_int({tag}, (long long){expr}, {_c_int(int(want))});"]
    if kind == "str" and isinstance(want, str):
        return [f"check_str({tag}, {expr}, {_c_string(want.encode())});"]
    if kind == "info" and isinstance(want, TensorInfo):
        w = want
        return [
            f"check_info({tag}, {expr}, {w.type}, (const int64_t[4]){{{', '.join(map(str, w.ne))}}}, "
            f"(const size_t[4]){{{', '.join(map(str, w.nb))}}}, {w.op}, {_c_string(w.name.encode())}, {w.view_offs}, "
            f"{int(w.has_view_src)}, {int(w.has_buffer)}, {int(w.has_data)}, "
            f"{w.data_offset if w.data_offset is not None else -1});"
        ]
    return [f'printf("%-40s the reference expects {_comment(repr(want))[:60].replace(chr(34), chr(39))}'
            f' (not checked in C)\\n", {tag});']


def render(events: list[Event], ex: Any, target: CApiTarget, profile: Profile, ending: str, build: list[str]) -> str:
    """The C file for a traced example; `ex` is the differential.Example (expected = the reference)."""
    p = target.p
    exp = ex.expected
    want = exp.observations
    body: list[str] = []
    producers: list[tuple[str, str, Any]] = []
    for ev in events:
        if ev[0] == "stmt":
            body.append(ev[1])
        elif ev[0] == "producer":
            producers.append((ev[1], ev[2], ev[3]))
        elif ev[0] == "obs":
            _, index, label, value = ev
            if index >= len(want):
                body.append(f"/* observation {index} {label!r}: the reference had already ended ({exp.ending}) */")
                body.append(f'printf("[{index}] past the end of the reference\'s run ({exp.ending})\\n");')
                continue
            wlabel, wvalue = want[index]
            source = next((pr for pr in reversed(producers) if pr[2] == value and type(pr[2]) is type(value)), None)
            body.append(f"/* observation {index} {label!r}: the target saw {_comment(repr(value))[:200]} */")
            if source is None:
                body.append(f"/*   the reference expects {_comment(repr(wvalue))[:200]} */")
                same = (wlabel, wvalue) == (label, value)
                tag = f"[{index}] {label} (compared by the suite, not in C)"
                body.append(f'verdict({_c_string(tag.encode())}, {"true" if same else "false"});')
            else:
                body.extend(_check_stmt(label, index, source[0], source[1], wvalue))
    expected_end = {"ok": "finish normally", "violation": f"abort with GGML_ASSERT '{_violation_message(exp)}'",
                    "ub": f"reach undefined behaviour ({exp.clause_id})"}.get(exp.ending, exp.ending)
    if exp.ending == "violation":
        body.append(f'printf("the reference expects an abort with GGML_ASSERT \\"%s\\" by now\\n", '
                    f'{_c_string(_violation_message(exp).encode())});')
        body.append("differences++;")
    headers = _headers(target)
    lines = [
        "/*",
        f" * ggspec C reproducer: {ex.check.name} [{', '.join(ex.check.clauses)}]",
        f" * target {target.name} (prefix {p}), profile {profile.value}",
        f" * arguments: {_comment(repr(ex.args))}",
        f" * the reference: {len(want)} observation(s), then it should {expected_end}",
        f" * the target in the suite: {ex.actual.ending} {_comment(ex.actual.detail)}; traced run: {_comment(ending)}",
        *([f" * a native variant: the command below carries the flags it was built with "
           f"({_comment(' '.join(sum(_variant_flags(target.name), [])) or 'none recorded')})"]
          if parse(target.name).module else []),
        *([f" * run it with GGSPEC_FAULT={_comment(os.environ['GGSPEC_FAULT'])} in the environment, as the suite did"]
          if os.environ.get("GGSPEC_FAULT") else []),
        " *",
        " * build and run:",
        f" *   {_comment(' '.join(shlex.quote(a) for a in build))} && ./repro",
        " */",
        "#include <stdbool.h>",
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        *[f'#include "{h}"' for h in headers],
        _helpers(p),
        "int main(void) {",
        "    setvbuf(stdout, NULL, _IONBF, 0);",
        *("    " + ln for b in body for ln in b.splitlines()),
        '    printf("end of the scenario: %d difference(s) from the reference\\n", differences);',
        "    return differences != 0;",
        "}",
        "",
    ]
    return "\n".join(lines)


def _violation_message(exp: Any) -> str:
    from ggspec.reference.clauses import clause

    return str(clause(exp.clause_id).message) if exp.clause_id else ""


def _headers(target: CApiTarget) -> list[str]:
    build = getattr(target, "build", None)
    if build is not None:
        return [*build.headers, "ggspec-vdev.h"]
    return ["ggspec.h", "ggspec-backend.h", "ggspec-backend-impl.h", "ggspec-vdev.h"]


def build_command(target: CApiTarget, c_file: Path, exe: Path) -> list[str]:
    """gcc command line compiling `c_file` against the target (headers, shim, library)."""
    build = getattr(target, "build", None)
    if build is not None:
        from ..engine.sanitizer import LINK_FLAGS
        from .elfsyms import needs_libasan

        sanitize = list(LINK_FLAGS) if needs_libasan(build.lib_path) else []  # rc8-asan: else it does not link
        return ["gcc", "-std=c11", "-O0", "-g", *sanitize, *build.c_flags(), str(c_file),
                str(NATIVE_DIR / "src" / "vdev.c"), "-o", str(exe), *build.link_flags(), "-lm"]
    replaced = _replaced_sources(target.name)  # a defect variant's patched copies (native/testing/defects.py)
    sources = sorted(replaced.get(s.name, str(s)) for s in (NATIVE_DIR / "src").glob("*.c"))
    defines, cflags, ldflags = _variant_flags(target.name)
    return ["gcc", "-std=c11", "-O0", "-g", *cflags, *defines, f"-I{NATIVE_DIR / 'include'}", "-iquote", str(NATIVE_DIR / "src"),
            str(c_file), *sources, "-o", str(exe), "-lm", "-lpthread", *ldflags]


def _replaced_sources(target_name: str) -> dict[str, str]:
    """A native variant's sources compiled from patched copies: file name -> the copy's path."""
    from ggspec.native.build import variant_flags

    directory, _, module = parse(target_name).module.rpartition(":")
    flags = variant_flags(directory, module) if directory else None
    return {Path(p).name: p for p in (flags or {}).get("replaced", [])}


def _variant_flags(target_name: str) -> tuple[list[str], list[str], list[str]]:
    """For a native variant (`native:DIR:MODULE`): the -D defines, compile flags and link flags it
    was built with, as build_variant recorded them (after the reproducer's -O0 -g, so they win)."""
    from ggspec.native.build import variant_flags

    directory, _, module = parse(target_name).module.rpartition(":")
    flags = variant_flags(directory, module) if directory else None
    if flags is None:
        return [], [], []
    return [f"-D{d}" for d in flags["defines"]], flags["cflags"], flags["ldflags"]


def default_dir() -> Path:
    """Where C reproducers go when the run names no folder of its own: $GGSPEC_REPRO_DIR, else the
    cache's repro/ folder (never the temporary folder; `ggspec check` gives every run its own)."""
    from .external import cache_dir

    return Path(os.environ.get("GGSPEC_REPRO_DIR") or cache_dir() / "repro")


def write_reproducer(ex: Any, target_name: str, profile: Profile, directory: Path | None = None) -> tuple[Path, list[str]]:
    """Trace `ex` on its target and write the C file; return its path and the gcc command."""
    events, ending = trace_example(ex.check, ex.args, target_name, profile)
    target = make_target(target_name, profile)
    assert isinstance(target, CApiTarget)
    try:
        directory = directory or default_dir()
        directory.mkdir(parents=True, exist_ok=True)
        key = hashlib.sha256(f"{target_name}|{profile.value}|{ex.check.name}|{ex.args!r}".encode()).hexdigest()[:12]
        stem = f"{ex.check.name.replace('.', '-')}-{key}"
        c_file = directory / f"{stem}.c"
        exe = directory / stem
        cmd = build_command(target, c_file, exe)
        c_file.write_text(render(events, ex, target, profile, ending, cmd).replace("./repro", str(exe)))
        return c_file, cmd
    finally:
        target.close()


def note_for(exc: BaseException, directory: Path | None = None) -> str:
    """For a differential.Mismatch on a C target: write its C reproducer, return the lines to print
    (empty for other failures)."""
    ex = getattr(exc, "example", None)
    target_name = getattr(exc, "target_name", None)
    profile = getattr(exc, "profile", None)
    if ex is None or target_name is None or profile is None or target_name == "reference" or ex.actual.ending == "error":
        return ""  # nothing for C to show when the adapter could not even run the scenario
    if selected_device() != "vdev":
        # the C trace is replayed against vdev.c, the mock: it would not run where the example ran
        return (f"\nno C reproducer: it would replay on the mock, not on --device {selected_device()} "
                "(the Python reproducer above does)")
    try:
        probe = make_target(target_name, profile)
        is_c = isinstance(probe, CApiTarget)
        close = getattr(probe, "close", None)
        if close is not None:
            close()
        if not is_c:
            return ""
        path, cmd = write_reproducer(ex, target_name, profile, directory)
    except Exception as err:  # noqa: BLE001 - a reproducer that cannot be written must not hide the failure
        return f"\nC reproducer: could not be written ({type(err).__name__}: {err})"
    return f"\nC reproducer: {path}\n  {' '.join(shlex.quote(a) for a in cmd)} && {shlex.quote(str(cmd[cmd.index('-o') + 1]))}"
