"""Mutation score: how many deliberately broken builds does the conformance suite notice?

`generate_mutants` lexes a C source (comments, strings, character literals and preprocessor
lines are skipped) and lists every single-site mutation of these kinds:

- ``cmp``: a comparison flipped at its boundary or sense (``<``↔``<=``, ``>``↔``>=``, ``==``↔``!=``);
- ``const``: an integer constant off by one (``n`` → ``n+1`` and ``n-1``);
- ``swap``: the operands of a binary ``-`` or ``/`` swapped (only where both operands are postfix
  expressions standing alone between delimiters, so the swap changes the value);
- ``delete``: an expression statement (a call, an assignment, ``++``/``--``) deleted, or
  ``return x;`` made ``return 0;``;
- ``negate``: an if-condition inverted (``if (c)`` → ``if (!(c))``).

Each mutant is one `Mutant` record (file, line, column, original, replacement, kind);
`sample` draws a deterministic subset for a seed, with weights per file, so the scheduler,
copies and bounds checks get most of the mutants.

Running (``python bench/mutation.py native …`` / ``… rc8 …``) compiles the unmutated objects
once in a temporary directory; per mutant only the mutated ``.c`` is recompiled and the shared
module relinked. A native mutant runs as ``ggspec check --target native`` through
``GGSPEC_NATIVE_MODULE=<dir>:<module>``; an rc.8 mutant as ``ggspec check --target rc8`` with the
mutated ``libwsp_ggml_rc8.so`` found first through ``LD_LIBRARY_PATH`` (the adapter module is the
rc8 target's own, linked with ``-l:libwsp_ggml_rc8.so`` and a RUNPATH, which ``LD_LIBRARY_PATH``
overrides), so the adapter is built once. Mutants and rc.8 sources live only in the temporary
directory, never in the repository.

Verdicts: ``killed`` (the check run exits 1 or 3: a clause failed, crashed or timed out, or the
target did not load), ``survived`` (exit 0), ``timeout`` (the per-mutant budget ran out),
``did not compile``. Kill rate = killed / compiled.

After a run: ``python bench/mutation.py equivalents OUT.jsonl native|rc8 COMMIT`` marks the survivors
whose object code is identical to the original's (dead or folded code: equivalent), and
``python bench/mutation.py markdown OUT.jsonl`` prints the counts and the survivors' table for
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("cmp", "const", "swap", "delete", "negate")


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutation: `original` at (line, column) of `file` (both 1-based) becomes `replacement`."""

    file: str
    line: int
    column: int
    original: str
    replacement: str
    kind: str
    offset: int  # character offset of `original` in the file's text

    def apply(self, text: str) -> str:
        """The mutated text (raises ValueError if `original` is not at `offset`)."""
        if text[self.offset:self.offset + len(self.original)] != self.original:
            raise ValueError(f"{self.file}:{self.line}:{self.column}: {self.original!r} is not there")
        return text[:self.offset] + self.replacement + text[self.offset + len(self.original):]

    def describe(self) -> str:
        return f"{self.file}:{self.line}:{self.column} {self.kind}: `{self.original}` → `{self.replacement}`"


# -- lexing -------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<skip>/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[ \t\r\n]+)
  | (?P<num>0[xX][0-9a-fA-F]+[uUlL]*|\d+\.\d*(?:[eE][-+]?\d+)?[fFlL]?|\d+[eE][-+]?\d+[fFlL]?|\d+[uUlL]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|[-+*/%<>=!~&|^?:;,.(){}\[\]#])
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)


@dataclasses.dataclass(frozen=True)
class Tok:
    kind: str  # num | id | op | other
    text: str
    offset: int
    depth: int  # parenthesis depth before the token


def tokens(text: str) -> list[Tok]:
    """The tokens of C source `text`, without comments, whitespace, literals' insides and
    preprocessor lines (a string literal stays as one ``other`` token)."""
    out: list[Tok] = []
    depth = 0
    pos = 0
    line_start = True
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None
        kind = m.lastgroup or "other"
        s = m.group()
        if kind == "skip":
            if s.startswith(('"', "'")):
                out.append(Tok("other", s, pos, depth))
                line_start = False
            elif "\n" in s:
                line_start = True
            pos = m.end()
            continue
        if line_start and s == "#":  # a preprocessor line, with its backslash continuations
            end = pos
            while True:
                nl = text.find("\n", end)
                if nl < 0:
                    end = len(text)
                    break
                if text[nl - 1] != "\\":
                    end = nl
                    break
                end = nl + 1
            pos = end
            continue
        line_start = False
        if s in ")]" and depth > 0:
            depth -= 1
        out.append(Tok(kind if kind != "op" else "op", s, pos, depth))
        if s in "([":
            depth += 1
        pos = m.end()
    return out


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


# -- mutation sites -----------------------------------------------------------------------------

_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_KEYWORDS = {"if", "else", "for", "while", "do", "switch", "case", "default", "break", "continue", "goto", "return",
             "sizeof", "struct", "union", "enum", "typedef", "static", "const", "volatile", "extern", "inline",
             "unsigned", "signed", "void", "char", "short", "int", "long", "float", "double", "bool", "_Bool",
             "size_t", "register", "restrict", "_Static_assert", "static_assert", "__attribute__"}
# what may stand before / after a stand-alone operand of a swapped `-` or `/`
_SWAP_BEFORE = {"(", ",", "=", "[", "?", ":", ";", "{", "return", "<", "<=", ">", ">=", "==", "!=", "&&", "||",
                "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_SWAP_AFTER = {")", ",", ";", "]", "?", ":", "<", "<=", ">", ">=", "==", "!=", "&&", "||"}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


def _match_back(toks: Sequence[Tok], i: int) -> int:
    """Index of the bracket opening the one closing at `i`."""
    close = toks[i].text
    opening = "(" if close == ")" else "["
    level = 0
    for j in range(i, -1, -1):
        if toks[j].text == close:
            level += 1
        elif toks[j].text == opening:
            level -= 1
            if level == 0:
                return j
    return -1


def _match_fwd(toks: Sequence[Tok], i: int) -> int:
    opening = toks[i].text
    close = ")" if opening == "(" else "]"
    level = 0
    for j in range(i, len(toks)):
        if toks[j].text == opening:
            level += 1
        elif toks[j].text == close:
            level -= 1
            if level == 0:
                return j
    return -1


def _operand_back(toks: Sequence[Tok], end: int) -> int:
    """Start index of the postfix expression ending at token `end` (inclusive), or -1."""
    i = end
    while True:
        t = toks[i]
        if t.text in ")]":
            j = _match_back(toks, i)
            if j < 0:
                return -1
            if t.text == ")" and (j == 0 or toks[j - 1].kind != "id" or toks[j - 1].text in _KEYWORDS):
                if toks[j - 1].text == "sizeof":
                    return j - 1
                return j  # a parenthesised expression
            i = j - 1
            continue
        if t.kind in ("id", "num"):
            if t.kind == "id" and t.text in _KEYWORDS:
                return -1
            if i >= 2 and toks[i - 1].text in (".", "->"):
                i -= 2
                continue
            return i
        return -1


def _operand_fwd(toks: Sequence[Tok], start: int) -> int:
    """End index (inclusive) of the postfix expression starting at `start`, or -1."""
    t = toks[start]
    if t.text == "(":
        i = _match_fwd(toks, start)
    elif t.kind in ("id", "num") and t.text not in _KEYWORDS:
        i = start
    else:
        return -1
    while i >= 0 and i + 1 < len(toks):
        n = toks[i + 1]
        if n.text in ("(", "["):
            i = _match_fwd(toks, i + 1)
        elif n.text in (".", "->") and i + 2 < len(toks) and toks[i + 2].kind == "id":
            i += 2
        else:
            break
    return i


def _sites(text: str, toks: Sequence[Tok]) -> Iterable[tuple[int, str, str, str]]:
    """(offset, original, replacement, kind) of every mutation site, in text order."""
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i > 0 else None
        if t.text in _FLIP:
            yield t.offset, t.text, _FLIP[t.text], "cmp"
        elif t.kind == "num" and re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", t.text):
            digits = re.match(r"0[xX][0-9a-fA-F]+|\d+", t.text)
            assert digits is not None
            suffix = t.text[digits.end():]
            value = int(digits.group(), 0)
            if prev is not None and prev.text == "[" and toks[i + 1].text == "]" and toks[i - 2].kind == "id" \
                    and i >= 3 and toks[i - 3].kind == "id":
                continue  # an array declaration's size: not behaviour
            yield t.offset, t.text, f"{value + 1}{suffix}", "const"
            if value > 0:
                yield t.offset, t.text, f"{value - 1}{suffix}", "const"
        elif t.text in ("-", "/") and prev is not None and (prev.kind in ("id", "num") or prev.text in (")", "]")) \
                and not (prev.kind == "id" and prev.text in _KEYWORDS):
            a0 = _operand_back(toks, i - 1)
            b1 = _operand_fwd(toks, i + 1) if i + 1 < len(toks) else -1
            if a0 <= 0 or b1 < 0 or b1 + 1 >= len(toks):
                continue
            if toks[a0 - 1].text not in _SWAP_BEFORE or toks[b1 + 1].text not in _SWAP_AFTER:
                continue
            if toks[a0 - 1].text == ")" or toks[a0 - 1].text == ":":  # a cast or a label: not a delimiter
                continue
            start, end = toks[a0].offset, toks[b1].offset + len(toks[b1].text)
            left = text[toks[a0].offset:toks[i - 1].offset + len(toks[i - 1].text)]
            right = text[toks[i + 1].offset:end]
            if left.strip() == right.strip():
                continue
            yield start, text[start:end], f"{right} {t.text} {left}", "swap"
        elif t.text == "if" and i + 1 < len(toks) and toks[i + 1].text == "(":
            j = _match_fwd(toks, i + 1)
            if j > 0:
                start, end = toks[i + 1].offset, toks[j].offset + 1
                inner = text[start + 1:end - 1]
                yield start, text[start:end], f"(!({inner}))", "negate"
        elif t.depth == 0 and (prev is None or prev.text in (";", "{", "}") or prev.text == "else"):
            if t.text == "return":
                j = i + 1
                while j < len(toks) and not (toks[j].text == ";" and toks[j].depth == t.depth):
                    j += 1
                if j >= len(toks) or j == i + 1:
                    continue
                expr = text[toks[i + 1].offset:toks[j].offset].strip()
                if expr in ("0", "NULL", "false", "0u", "0.0f"):
                    continue
                start, end = t.offset, toks[j].offset + 1
                yield start, text[start:end], "return 0;", "delete"
                continue
            if t.kind == "id" and t.text in _KEYWORDS:
                continue
            if t.kind not in ("id",) and t.text not in ("*", "++", "--", "("):
                continue
            j = i
            while j < len(toks) and not (toks[j].text == ";" and toks[j].depth == 0):
                if toks[j].text in ("{", "}"):
                    break
                j += 1
            if j >= len(toks) or toks[j].text != ";":
                continue
            body = [x for x in toks[i:j] if x.depth == 0]
            if t.kind == "id" and i + 1 < len(toks) and toks[i + 1].kind == "id":
                continue  # a declaration: `type name ...`
            if t.kind == "id" and i + 1 < len(toks) and toks[i + 1].text == "*" and i + 2 < j \
                    and toks[i + 2].kind == "id" and (i + 3 >= j or toks[i + 3].text in ("=", ";", ",", "[")):
                continue  # a pointer declaration: `type * name ...`
            is_call = t.kind == "id" and toks[i + 1].text == "(" and _match_fwd(toks, i + 1) == j - 1
            is_assign = any(x.text in _ASSIGN for x in body)
            is_step = any(x.text in ("++", "--") for x in body)
            if not (is_call or is_assign or is_step):
                continue
            start, end = t.offset, toks[j].offset + 1
            yield start, text[start:end], ";", "delete"


def generate_mutants(text: str, file: str) -> list[Mutant]:
    """Every single-site mutant of C source `text` (named `file` in the records), in text order."""
    out: list[Mutant] = []
    for offset, original, replacement, kind in _sites(text, tokens(text)):
        line, col = _line_col(text, offset)
        out.append(Mutant(file, line, col, original, replacement, kind, offset))
    return out


def sample(mutants: Sequence[Mutant], n: int, seed: int) -> list[Mutant]:
    """`n` of `mutants` (all if fewer), drawn deterministically for `seed`, in text order."""
    if n >= len(mutants):
        return list(mutants)
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(len(mutants)), n))
    return [mutants[i] for i in picked]


# -- building -----------------------------------------------------------------------------------

NATIVE_MODULE = "_ggspec_mutant"

# native source → the areas whose checks exercise it (--select)
NATIVE_PLAN: dict[str, tuple[int, tuple[str, ...]]] = {
    # file: (mutants, selection)
    "sched.c": (60, ("SCHED",)),
    "copy.c": (25, ("COPY",)),
    "tdata.c": (25, ("TDATA",)),
    "tensor.c": (25, ("CORE", "TDATA")),
    "alloc.c": (15, ("ALLOC",)),
    "graph_copy.c": (10, ("GCOPY",)),
    "buffer.c": (10, ("BUF", "BUFT")),
    "backend.c": (6, ("BACK",)),
    "registry.c": (6, ("REG",)),
    "graph.c": (6, ("CORE",)),
    "vdev.c": (6, ("SCHED",)),
    "cpu.c": (6, ("CPU",)),
}
RC8_PLAN: dict[str, tuple[int, tuple[str, ...]]] = {
    "ggml-backend.c": (110, ()),  # selection: by the function the mutant is in, see rc8_selection
    "ggml-alloc.c": (40, ("ALLOC", "SCHED")),
}


def _run(cmd: Sequence[str], cwd: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout)


class NativeBuild:
    """The native module's objects, compiled once; `relink` swaps in one mutated source."""

    def __init__(self, work: Path) -> None:
        from ggspec.native import build as nb

        self.nb = nb
        self.work = work
        self.objdir = work / "obj"
        self.moddir = work / "mod"
        self.objdir.mkdir(parents=True)
        self.moddir.mkdir(parents=True)
        ffi = nb.make_ffibuilder(NATIVE_MODULE)
        wrapper = work / f"{NATIVE_MODULE}.c"
        ffi.emit_c_code(str(wrapper))
        self.cflags = ["-fPIC", *nb.DEFAULT_CFLAGS, "-w", f"-I{nb.INCLUDE_DIR}", f"-I{sysconfig.get_paths()['include']}"]
        self.objs: dict[str, Path] = {}
        for src in [str(wrapper), *(os.path.join(nb.SRC_DIR, s) for s in nb.SOURCES)]:
            obj = self.objdir / (Path(src).stem + ".o")
            proc = _run(["gcc", *self.cflags, "-c", src, "-o", str(obj)])
            if proc.returncode != 0:
                raise RuntimeError(f"the unmutated {src} does not compile:\n{proc.stderr}")
            self.objs[Path(src).name] = obj
        self.suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"

    def relink(self, file: str, text: str | None) -> tuple[bool, str]:
        """Build the module with `file` replaced by `text` (None: unmutated); (ok, compiler errors)."""
        objs = dict(self.objs)
        if text is not None:
            src = self.work / "mutsrc" / file
            src.parent.mkdir(exist_ok=True)
            src.write_text(text)
            obj = self.work / "mutsrc" / (Path(file).stem + ".o")
            # its neighbours' "headers" from the original directory (-iquote: native/src/assert.h must
            # not shadow the system's <assert.h>)
            proc = _run(["gcc", *self.cflags, "-iquote", self.nb.SRC_DIR, "-c", str(src), "-o", str(obj)])
            if proc.returncode != 0:
                return False, proc.stderr
            objs[file] = obj
        out = self.moddir / f"{NATIVE_MODULE}{self.suffix}"
        tmp = self.moddir / ".tmp.so"
        proc = _run(["gcc", "-shared", *map(str, objs.values()), "-o", str(tmp), "-lm", "-lpthread"])
        if proc.returncode != 0:
            return False, proc.stderr
        os.replace(tmp, out)
        return True, ""

    def env(self) -> dict[str, str]:
        return {"GGSPEC_NATIVE_MODULE": f"{self.moddir}:{NATIVE_MODULE}"}


class Rc8Build:
    """rc.8's four objects, compiled once; `relink` swaps in one mutated source."""

    def __init__(self, work: Path, cpp: Path) -> None:
        from ggspec.conformance.adapters import rc8

        self.rc8 = rc8
        self.cpp = cpp
        self.work = work
        self.objdir = work / "obj"
        self.libdir = work / "lib"
        self.objdir.mkdir(parents=True)
        self.libdir.mkdir(parents=True)
        self.cflags = [f for f in rc8.CFLAGS if f != "-shared"] + ["-w", f"-I{cpp}"]
        self.objs: dict[str, Path] = {}
        for s in rc8.SOURCES:
            obj = self.objdir / (Path(s).stem + ".o")
            proc = _run(["gcc", *self.cflags, "-c", str(cpp / s), "-o", str(obj)])
            if proc.returncode != 0:
                raise RuntimeError(f"rc.8's {s} does not compile:\n{proc.stderr}")
            self.objs[s] = obj

    def relink(self, file: str, text: str | None) -> tuple[bool, str]:
        objs = dict(self.objs)
        if text is not None:
            src = self.work / "mutsrc" / file
            src.parent.mkdir(exist_ok=True)
            src.write_text(text)
            obj = self.work / "mutsrc" / (Path(file).stem + ".o")
            proc = _run(["gcc", *self.cflags, "-c", str(src), "-o", str(obj)])
            if proc.returncode != 0:
                return False, proc.stderr
            objs[file] = obj
        tmp = self.libdir / ".tmp.so"
        proc = _run(["gcc", "-shared", *map(str, objs.values()), "-o", str(tmp), *self.rc8.LIBS])
        if proc.returncode != 0:
            return False, proc.stderr
        os.replace(tmp, self.libdir / self.rc8.LIBNAME)
        return True, ""

    def assert_loaded(self) -> None:
        """The rc8 target, made with `env()`, maps the library of `libdir`, not the cache's."""
        code = ("from ggspec.conformance.adapters import make_target, prepare_target; prepare_target('rc8'); "
                "make_target('rc8'); print(open('/proc/self/maps').read())")
        proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **self.env()}, capture_output=True,
                              text=True, timeout=600)
        if str(self.libdir / self.rc8.LIBNAME) not in proc.stdout:
            raise RuntimeError(f"the rc8 target did not load {self.libdir / self.rc8.LIBNAME}:\n{proc.stderr[-2000:]}")

    def env(self) -> dict[str, str]:
        return {"LD_LIBRARY_PATH": f"{self.libdir}:{os.environ.get('LD_LIBRARY_PATH', '')}".rstrip(":")}


# rc.8's ggml-backend.c: which checks exercise the function a line is in
_RC8_FN_AREAS = (
    (re.compile(r"sched|split|hash|node_backend|tensor_backend|sched_"), ("SCHED",)),
    (re.compile(r"graph_copy|copy_graph|graph_copy_"), ("GCOPY",)),
    (re.compile(r"tensor_copy"), ("COPY",)),
    (re.compile(r"tensor_set|tensor_get|tensor_memset"), ("TDATA",)),
    (re.compile(r"buffer_type|buft"), ("BUFT", "BUF")),
    (re.compile(r"buffer"), ("BUF",)),
    (re.compile(r"cpu"), ("CPU",)),
    (re.compile(r"registry|reg_"), ("REG",)),
    (re.compile(r"view_init|tensor_alloc|alloc_ctx"), ("TDATA", "ALLOC")),
)


def enclosing_function(text: str, offset: int) -> str:
    """The name of the function definition the offset is in (a top-level `name(...) {` before it)."""
    best = ""
    for m in re.finditer(r"^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{]*\)\s*\{", text[:offset], re.MULTILINE):
        best = m.group(1)
    return best


def rc8_selection(file: str, text: str, m: Mutant) -> tuple[str, ...]:
    if file != "ggml-backend.c":
        return RC8_PLAN[file][1]
    fn = enclosing_function(text, m.offset)
    for pattern, areas in _RC8_FN_AREAS:
        if pattern.search(fn):
            return areas
    return ("BACK", "BUF", "TDATA")


# -- running ------------------------------------------------------------------------------------

def run_check(env_extra: dict[str, str], target: str, select: Sequence[str], args: argparse.Namespace,
              out_json: Path, deselect: Sequence[str] = ()) -> tuple[str, float, str]:
    """Run the suite against the mutant; (verdict, seconds, why)."""
    cmd = ["nice", "-n", str(args.nice), sys.executable, "-m", "ggspec.conformance", "check", "--target", target,
           "--max-examples", str(args.max_examples), "--seed", str(args.seed), "--timeout", str(args.timeout),
           "--workers", str(args.workers), "--quiet", "--no-c-reproducers", "--json", str(out_json)]
    for s in select:
        cmd += ["--select", s]
    for s in deselect:
        cmd += ["--deselect", s]
    env = {**os.environ, **env_extra, "GGSPEC_REPRO_DIR": str(out_json.parent / "repro")}
    stream = out_json.with_suffix(".jsonl")
    for stale in (out_json, stream):
        stale.unlink(missing_ok=True)
    t0 = time.monotonic()
    log = out_json.with_suffix(".log")
    with open(log, "w", encoding="utf-8") as logf:
        proc = subprocess.Popen(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        # stop at the first failing check (the streamed report has it as soon as it finishes)
        while proc.poll() is None:
            if time.monotonic() - t0 > args.budget:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return "timeout", time.monotonic() - t0, f"budget {args.budget}s"
            first = _first_failure(stream) if args.stop_early else None
            if first is not None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return "killed", time.monotonic() - t0, first
            time.sleep(0.3)
    dt = time.monotonic() - t0
    out = log.read_text(errors="replace")
    if proc.returncode == 0:
        return "survived", dt, ""
    if proc.returncode in (1, 3):
        # killed only with a report that says so: an exit 1 of a broken harness is an error
        try:
            report = json.loads(out_json.read_text())
        except (OSError, ValueError):
            return "error", dt, f"exit {proc.returncode} without a report: {out[-300:]}"
        bad = [c.get("name") for c in report.get("checks", [])
               if isinstance(c, dict) and c.get("status") not in ("pass", "unsupported", "xfail", "skip")]
        if proc.returncode == 3 or report.get("load_error") or bad:
            return "killed", dt, ",".join(str(b) for b in bad[:5]) or str(report.get("load_error"))[:200]
        return "error", dt, f"exit {proc.returncode}, no failing check in the report"
    return "error", dt, f"exit {proc.returncode}: {out[-300:]}"


def _first_failure(stream: Path) -> str | None:
    """`check (status)` of the first failed, crashed or timed-out check in a streamed report, or None."""
    try:
        lines = stream.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for ln in lines:
        try:
            rec = json.loads(ln)
        except ValueError:
            continue  # a line being written
        if rec.get("event") == "check" and rec.get("status") in ("fail", "crash", "timeout"):
            return f"{rec.get('check')} ({rec.get('status')})"
    return None


def plan_mutants(sources: dict[str, str], plan: dict[str, tuple[int, tuple[str, ...]]], seed: int,
                 scale: float) -> list[Mutant]:
    chosen: list[Mutant] = []
    for file, (n, _) in plan.items():
        chosen += sample(generate_mutants(sources[file], file), max(1, round(n * scale)), seed)
    rng = random.Random(seed)
    rng.shuffle(chosen)  # so that a run cut short by its total budget still spreads over the files
    return chosen


def _snapshot(rev: str, dest: Path) -> str:
    """Unpack commit `rev` of the project into `dest/tree` and make `dest/py/ggspec/...` point at it,
    first on sys.path and PYTHONPATH (ahead of the editable install's finder); returns the commit."""
    commit = _run(["git", "-C", str(ROOT), "rev-parse", rev]).stdout.strip()
    (dest / "tree").mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest / "tree")], input=archive.stdout, check=True)
    (dest / "py" / "ggspec").mkdir(parents=True)
    for d in ("reference", "conformance", "native", "spec"):
        (dest / "py" / "ggspec" / d).symlink_to(dest / "tree" / d)
    for so in (ROOT / "native").glob("_native.*.so"):  # `ggspec.native._native` must import (not used)
        shutil.copy2(so, dest / "tree" / "native" / so.name)
    sys.path.insert(0, str(dest / "py"))
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(dest / "py"), os.environ.get("PYTHONPATH")) if x)
    return commit


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", choices=("native", "rc8"))
    ap.add_argument("--seed", type=int, default=1, help="mutant choice and hypothesis seed")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply each file's mutant count")
    ap.add_argument("--max-examples", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10, help="ggspec check --timeout (per example)")
    ap.add_argument("--budget", type=float, default=60, help="seconds one mutant's check run may take")
    ap.add_argument("--total", type=float, default=1800, help="stop starting mutants after this many seconds")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True, help="JSON lines of results (one per mutant)")
    ap.add_argument("--list", action="store_true", help="only list the chosen mutants")
    ap.add_argument("--nice", type=int, default=19)
    ap.add_argument("--skip-baseline", action="store_true",
                    help="do not first run the unmutated build (only when an earlier run did, on the same --tree)")
    ap.add_argument("--no-stop-early", dest="stop_early", action="store_false",
                    help="run every selected check even after one failed")
    ap.add_argument("--tree", default="HEAD", help="the commit whose sources and suite to use (a snapshot of it in "
                    "the temporary directory, so that work in progress in the checkout does not count)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix=f"ggspec-mut-{args.which}-"))
    commit = _snapshot(args.tree, work / "snap")

    if args.which == "native":
        from ggspec.native import build as nb

        sources = {f: Path(nb.SRC_DIR, f).read_text() for f in NATIVE_PLAN}
        plan = NATIVE_PLAN
    else:
        from ggspec.conformance.adapters.rc8 import ensure_rc8

        cpp, _ = ensure_rc8()
        sources = {f: (cpp / f).read_text() for f in RC8_PLAN}
        plan = RC8_PLAN
    mutants = plan_mutants(sources, plan, args.seed, args.scale)
    if args.list:
        for m in mutants:
            print(m.describe())
        shutil.rmtree(work, ignore_errors=True)
        return 0

    t_start = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `finally` below removes the temporary directory
    try:
        builder: NativeBuild | Rc8Build
        builder = NativeBuild(work) if args.which == "native" else Rc8Build(work, cpp)
        target = "native" if args.which == "native" else "rc8"
        t_built = time.monotonic()
        print(f"objects compiled in {t_built - t_start:.1f}s; {len(mutants)} mutants", flush=True)
        ok, err = builder.relink("", None)
        if not ok:
            raise RuntimeError(err)
        if isinstance(builder, Rc8Build):
            builder.assert_loaded()
        # the unmutated build against each selection a mutant will use: what it fails (under these small
        # settings) cannot kill a mutant, so it is left out
        selections = sorted({plan[m.file][1] if args.which == "native" else rc8_selection(m.file, sources[m.file], m)
                             for m in mutants})
        deselect: list[str] = []
        base_budget = argparse.Namespace(**{**vars(args), "budget": max(4 * args.budget, 300), "stop_early": False})
        for sel in selections if not args.skip_baseline else ():
            verdict, dt, why = run_check(builder.env(), target, sel, base_budget, work / "report.json")
            print(f"unmutated build, --select {' '.join(sel)}: {verdict} in {dt:.0f}s {why}", flush=True)
            if verdict == "killed":
                report = json.loads((work / "report.json").read_text())
                deselect += [str(c["name"]) for c in report.get("checks", [])
                             if c.get("status") not in ("pass", "unsupported", "xfail", "skip")]
            elif verdict != "survived":
                raise RuntimeError(f"the unmutated build does not pass --select {' '.join(sel)}: {verdict} {why}")
        if deselect:
            print(f"deselected (the unmutated build fails them): {' '.join(deselect)}", flush=True)
        with open(args.out, "w", encoding="utf-8") as out:
            for k, m in enumerate(mutants):
                if time.monotonic() - t_start > args.total:
                    print(f"total budget reached after {k} mutants", flush=True)
                    break
                t0 = time.monotonic()
                ok, err = builder.relink(m.file, m.apply(sources[m.file]))
                t_compile = time.monotonic() - t0
                select = plan[m.file][1] if args.which == "native" else rc8_selection(m.file, sources[m.file], m)
                if not ok:
                    verdict, dt, why = "did not compile", 0.0, (err.strip().splitlines() or [""])[0][:200]
                else:
                    verdict, dt, why = run_check(builder.env(), target, select, args, work / "report.json", deselect)
                rec = {**dataclasses.asdict(m), "commit": commit, "verdict": verdict, "select": list(select),
                       "compile_s": round(t_compile, 2), "check_s": round(dt, 1), "why": why}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print(f"[{k + 1}/{len(mutants)}] {verdict:15} {dt:5.1f}s {m.describe()}", flush=True)
        print(f"total {time.monotonic() - t_start:.0f}s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def summarize(path: Path) -> dict[str, object]:
    """Counts and kill rate of a results file."""
    recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    counts: dict[str, int] = {}
    for r in recs:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    compiled = len(recs) - counts.get("did not compile", 0)
    return {"mutants": len(recs), **counts, "kill_rate": counts.get("killed", 0) / compiled if compiled else 0.0}


def same_object(cflags: Sequence[str], file: str, original: str, mutated: str, work: Path) -> bool:
    """Whether the mutated source compiles to the same object code as the original (dead code such as
    an ``#if 0`` block, or a change the optimiser folds away): such a mutant is equivalent. Both are
    compiled from the same path, so the object's file symbol is the same."""
    objs = []
    for k, text in enumerate((original, mutated)):
        src = work / file
        src.write_text(text)
        obj = work / f"{k}.o"
        if _run(["gcc", *cflags, "-c", str(src), "-o", str(obj)]).returncode != 0:
            return False
        objs.append(obj.read_bytes())
    return objs[0] == objs[1]


def mark_equivalents(path: Path, which: str, tree: str) -> None:
    """Add ``"same_object": true/false`` to each survivor and timeout of a results file."""
    recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    with tempfile.TemporaryDirectory(prefix="ggspec-mut-eq-") as tmp:
        work = Path(tmp)
        commit = _snapshot(tree, work / "snap")
        if which == "native":
            from ggspec.native import build as nb

            src_dir = Path(nb.SRC_DIR)
            cflags = ["-fPIC", *nb.DEFAULT_CFLAGS, "-w", f"-I{nb.INCLUDE_DIR}", "-iquote", str(src_dir)]
        else:
            from ggspec.conformance.adapters import rc8

            src_dir, _ = rc8.ensure_rc8()
            cflags = [f for f in rc8.CFLAGS if f != "-shared"] + ["-w", f"-I{src_dir}"]
        for r in recs:
            if r["verdict"] in ("survived", "timeout") and r.get("commit", commit) == commit:
                text = (src_dir / r["file"]).read_text()
                m = Mutant(r["file"], r["line"], r["column"], r["original"], r["replacement"], r["kind"], r["offset"])
                r["same_object"] = same_object(cflags, r["file"], text, m.apply(text), work)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def markdown(path: Path) -> str:
    """Counts, kill rate and a table of the survivors and timeouts of a results file (for RESULTS.md)."""
    recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    summary = summarize(path)
    by_file: dict[str, dict[str, int]] = {}
    for r in recs:
        row = by_file.setdefault(r["file"], {})
        row[r["verdict"]] = row.get(r["verdict"], 0) + 1
    lines = [f"{summary['mutants']} mutants: " + ", ".join(f"{k} {v}" for k, v in summary.items()
                                                          if k not in ("mutants", "kill_rate")),
             f"kill rate {100 * float(str(summary['kill_rate'])):.1f}% (killed / compiled)", "",
             "| file | mutants | killed | survived | timeout | did not compile | error |", "|---|---|---|---|---|---|---|"]
    for f, row in sorted(by_file.items()):
        lines.append(f"| {f} | {sum(row.values())} | " + " | ".join(
            str(row.get(k, 0)) for k in ("killed", "survived", "timeout", "did not compile", "error")) + " |")
    lines += ["", "| site | mutation | verdict | selection | why equivalent / what check is missing |", "|---|---|---|---|---|"]
    for r in recs:
        if r["verdict"] in ("survived", "timeout", "error"):
            orig = r["original"].replace("|", "\\|").replace("\n", " ")
            repl = r["replacement"].replace("|", "\\|")
            same = "equivalent: the same object code" if r.get("same_object") else ""
            lines.append(f"| {r['file']}:{r['line']} | {r['kind']}: `{orig}` → `{repl}` | {r['verdict']} | "
                         f"{' '.join(r['select'])} | {same} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "summarize":
        print(json.dumps(summarize(Path(sys.argv[2])), indent=1))
        sys.exit(0)
    if len(sys.argv) > 4 and sys.argv[1] == "equivalents":  # equivalents RESULTS.jsonl native|rc8 COMMIT
        mark_equivalents(Path(sys.argv[2]), sys.argv[3], sys.argv[4])
        sys.exit(0)
    if len(sys.argv) > 2 and sys.argv[1] == "markdown":
        print(markdown(Path(sys.argv[2])))
        sys.exit(0)
    sys.exit(main())
