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

Each mutant is one `Mutant` record, named ``FILE#K`` (the K-th mutant of FILE in text order);
`Planner.planned` draws a deterministic subset for a seed, with a quota per file (scheduler,
copies and bounds checks first), and gives each mutant its check selection: native's by file,
rc.8's ggml-backend.c by the function the mutant is in, by its name or else by the names of its
callers (`function_areas`). native's test instrumentation (the ``*_debug_*`` accessors only the
suite calls) is not in the plan.

Commands (``python bench/mutation.py --help``):

``run native|rc8 --out OUT.jsonl`` compiles the unmutated objects once in a temporary directory
(sources and suite from a snapshot of ``--tree``, default HEAD); per mutant only the mutated
``.c`` is recompiled and the library relinked. **Trivial compiler equivalence** first: a mutant
whose object is byte-identical to the unmutated source's (same path, same flags, no debug info)
is ``equivalent`` without running anything, and is left out of the second kill rate. The others
go through **two stages**: stage 1 runs the mutant's selection at ``--stage1-examples`` (2) a
check, stopped at the first failing check; only its survivors get stage 2, ``--stage2-size``
(``ci``: 40 examples a check), also stopped at the first failure, within ``--budget2`` seconds.
At the end of each stage the checks that killed mutants run against the unmutated build with
the same settings (in one run); one that fails there too is deselected and its mutants run again. Verdicts: ``killed`` (in either
stage: a check failed, crashed or timed out, or the target did not load), ``survived``,
``timeout`` (the mutant's budget ran out before the selection finished), ``did not compile``,
``equivalent`` (same object code). ``run … --rerun OLD.jsonl`` reruns only OLD's survivors on the
tree given (a newer commit), writing OLD's records with those replaced (each keeps
``first_commit``, ``first_verdict`` and every earlier run in ``history``); with
``--stage1-examples 0`` the rerun is stage 2 alone, for the survivors OLD took through stage 1 only.

``one native|rc8 SITE --dir DIR`` builds ONE mutant of the working tree's sources (SITE:
``FILE#K`` from ``list --all``, or ``FILE:LINE[:COL]`` with ``--kind``/``--replacement`` where
several are there) and the unmutated build into DIR, and prints the command that runs the suite
against each: ``GGSPEC_NATIVE_MODULE=DIR/mutant:_ggspec_mutant ggspec check --target native …``,
or ``LD_LIBRARY_PATH=DIR/mutant ggspec check --target rc8 …`` (the rc8 adapter's module links
``libwsp_ggml_rc8.so`` by name with a RUNPATH, which LD_LIBRARY_PATH overrides). ``list`` names
the mutants; ``markdown OUT.jsonl [--notes NOTES.json]`` prints the counts, both kill rates and
the survivors' table for bench/RESULTS.md. Mutants and rc.8's sources live only in temporary
directories (or DIR), never in the repository.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
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
    """One mutation: `original` at (line, column) of `file` (both 1-based) becomes `replacement`;
    `index` is its place among all the mutants of `file` in text order (its name is `file#index`)."""

    file: str
    line: int
    column: int
    original: str
    replacement: str
    kind: str
    offset: int  # character offset of `original` in the file's text
    index: int = -1

    @property
    def ident(self) -> str:
        return f"{self.file}#{self.index}"

    def apply(self, text: str) -> str:
        """The mutated text (raises ValueError if `original` is not at `offset`). A deleted statement
        that spans lines leaves its line breaks, so that every later line keeps its number (and
        ``__LINE__`` its value: trivial compiler equivalence compares object code)."""
        if text[self.offset:self.offset + len(self.original)] != self.original:
            raise ValueError(f"{self.file}:{self.line}:{self.column}: {self.original!r} is not there")
        pad = "\n" * (self.original.count("\n") - self.replacement.count("\n"))
        return text[:self.offset] + self.replacement + pad + text[self.offset + len(self.original):]

    def describe(self) -> str:
        orig, repl = " ".join(self.original.split()), " ".join(self.replacement.split())
        return f"{self.file}:{self.line}:{self.column} {self.kind}: `{orig}` → `{repl}`"


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
        out.append(Mutant(file, line, col, original, replacement, kind, offset, len(out)))
    return out


def sample(mutants: Sequence[Mutant], n: int, seed: int) -> list[Mutant]:
    """`n` of `mutants` (all if fewer), drawn deterministically for `seed`, in text order."""
    if n >= len(mutants):
        return list(mutants)
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(len(mutants)), n))
    return [mutants[i] for i in picked]


# -- the plan -----------------------------------------------------------------------------------

NATIVE_MODULE = "_ggspec_mutant"

# native source → (mutants drawn, the areas whose checks exercise it: --select)
NATIVE_PLAN: dict[str, tuple[int, tuple[str, ...]]] = {
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
    "vdev.c": (6, ("SCHED", "TDATA", "COPY", "BACK", "BUF")),  # the suite's device: every area that uses one
    "cpu.c": (6, ("CPU",)),
}
RC8_PLAN: dict[str, tuple[int, tuple[str, ...]]] = {
    "ggml-backend.c": (110, ()),  # selection: by the function the mutant is in, see rc8_selection
    "ggml-alloc.c": (40, ("ALLOC", "SCHED")),
}
# native's test instrumentation, left out of the plan: the accessors only the suite calls to read the
# scheduler's private state (the rc8 adapter reads the same state from rc.8's structs in Python, and
# adapter code is not mutated either). Code under #ifdef (fault injection, planted defects) stays in
# the plan: it compiles to the same object code, so trivial compiler equivalence reports it.
NATIVE_EXCLUDED_FUNCTIONS = re.compile(r"_debug_")


@functools.lru_cache(maxsize=32)
def function_spans(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each top-level function definition of C source `text`: `end` is the
    offset after its closing brace (cached: the planner asks for every mutant)."""
    toks = tokens(text)
    spans: list[tuple[str, int, int]] = []
    level = 0
    for i, t in enumerate(toks):
        if t.text == "{":
            if level == 0 and i > 0 and toks[i - 1].text == ")":
                j = _match_back(toks, i - 1)
                if j > 0 and toks[j - 1].kind == "id" and toks[j - 1].text not in _KEYWORDS:
                    spans.append((toks[j - 1].text, toks[j - 1].offset, -1))
            level += 1
        elif t.text == "}":
            level -= 1
            if level == 0 and spans and spans[-1][2] < 0:
                name, start, _ = spans[-1]
                spans[-1] = (name, start, t.offset + 1)
    return [s for s in spans if s[2] > 0]


def enclosing_function(text: str, offset: int) -> str:
    """The name of the function definition the offset is in ('' outside any)."""
    for name, start, end in function_spans(text):
        if start <= offset < end:
            return name
    return ""


def in_plan(which: str, text: str, m: Mutant) -> bool:
    """Whether the mutant is drawn from at all (native's test instrumentation is not)."""
    return which != "native" or not NATIVE_EXCLUDED_FUNCTIONS.search(enclosing_function(text, m.offset))


# rc.8's ggml-backend.c: which checks exercise the function a line is in, by the function's name
_RC8_FN_AREAS = (
    (re.compile(r"sched|split|hash|node_backend|tensor_backend|sched_"), ("SCHED",)),
    (re.compile(r"graph_copy|copy_graph|graph_copy_|compare_graph"), ("GCOPY",)),
    (re.compile(r"tensor_copy|cpy_tensor|copy_tensor"), ("COPY",)),  # also the buffers' hooks tensor_copy calls
    (re.compile(r"tensor_set|tensor_get|tensor_memset|set_tensor|get_tensor"), ("TDATA",)),
    (re.compile(r"buffer_type|buft"), ("BUFT", "BUF")),
    (re.compile(r"buffer"), ("BUF",)),
    (re.compile(r"cpu"), ("CPU",)),
    (re.compile(r"registry|reg_"), ("REG",)),
    (re.compile(r"view_init|tensor_alloc|alloc_ctx"), ("TDATA", "ALLOC")),
)
_RC8_DEFAULT = ("BACK", "BUF", "TDATA")


def _areas_by_name(fn: str) -> tuple[str, ...]:
    """The areas of every pattern the name matches (wsp_ggml_backend_cpu_buffer_cpy_tensor: BUF and CPU)."""
    out: list[str] = []
    for pattern, areas in _RC8_FN_AREAS:
        if pattern.search(fn):
            out += [a for a in areas if a not in out]
    return tuple(out)


def function_areas(text: str) -> dict[str, tuple[str, ...]]:
    """Each function of rc.8's ggml-backend.c → the areas whose checks reach it: by its name, else
    by the names of the functions that call it (transitively: a helper such as is_view_op, called
    from the scheduler's passes and graph_copy, gets SCHED and GCOPY), and a public
    ``wsp_ggml_backend_*`` function also BACK+BUF+TDATA (the default when nothing else maps)."""
    spans = function_spans(text)
    callers: dict[str, set[str]] = {name: set() for name, _, _ in spans}
    for name, start, end in spans:
        body_ids = {t.text for t in tokens(text[start:end]) if t.kind == "id"}
        for callee in callers:
            if callee != name and callee in body_ids:
                callers[callee].add(name)
    out: dict[str, tuple[str, ...]] = {}
    for name in callers:
        areas: set[str] = set(_areas_by_name(name))
        seen, frontier = {name}, [name]
        while not areas and frontier:  # breadth-first up the callers until one maps to an area
            nxt = []
            for f in frontier:
                for c in sorted(callers.get(f, ())):
                    if c not in seen:
                        seen.add(c)
                        nxt.append(c)
            for c in nxt:
                areas |= set(_areas_by_name(c))
            frontier = nxt
        if not _areas_by_name(name) and name.startswith("wsp_ggml_backend_"):
            areas |= set(_RC8_DEFAULT)
        out[name] = tuple(sorted(areas)) if areas else _RC8_DEFAULT
    return out


class Planner:
    """The mutants of one target's sources and each one's check selection."""

    def __init__(self, which: str, sources: dict[str, str]) -> None:
        self.which = which
        self.sources = sources
        self.plan = NATIVE_PLAN if which == "native" else RC8_PLAN
        self.all = {f: generate_mutants(sources[f], f) for f in self.plan}
        self._fn_areas = function_areas(sources["ggml-backend.c"]) if which == "rc8" else {}

    def selection(self, m: Mutant) -> tuple[str, ...]:
        if self.which == "rc8" and m.file == "ggml-backend.c":
            return self._fn_areas.get(enclosing_function(self.sources[m.file], m.offset), _RC8_DEFAULT)
        return self.plan[m.file][1]

    def planned(self, seed: int, scale: float) -> list[Mutant]:
        chosen: list[Mutant] = []
        for file, (n, _) in self.plan.items():
            pool = [m for m in self.all[file] if in_plan(self.which, self.sources[file], m)]
            chosen += sample(pool, max(1, round(n * scale)), seed)
        rng = random.Random(seed)
        rng.shuffle(chosen)  # so that a run cut short by its total budget still spreads over the files
        return chosen

    def find(self, site: str, kind: str | None = None, replacement: str | None = None) -> Mutant:
        """The mutant named `FILE#K` (the K-th of FILE, as `list` numbers them) or `FILE:LINE[:COL]`
        (with `kind` / `replacement` to choose among several there)."""
        if "#" in site:
            file, k = site.split("#", 1)
            if file not in self.all or not k.isdigit() or int(k) >= len(self.all[file]):
                raise UsageError(f"no mutant {site} (files: {', '.join(self.all)}; see `list --all`)")
            return self.all[file][int(k)]
        parts = site.split(":")
        if len(parts) not in (2, 3) or parts[0] not in self.all or not all(p.isdigit() for p in parts[1:]):
            raise UsageError(f"bad site {site!r}: FILE#K or FILE:LINE[:COL], FILE one of {', '.join(self.all)}")
        line, col = int(parts[1]), int(parts[2]) if len(parts) == 3 else None
        hits = [m for m in self.all[parts[0]] if m.line == line and (col is None or m.column == col)
                and (kind is None or m.kind == kind) and (replacement is None or m.replacement.strip() == replacement.strip())]
        if len(hits) != 1:
            listing = "\n".join(f"  {m.ident}  {m.describe()}" for m in hits) or "  (none)"
            raise UsageError(f"{len(hits)} mutants match {site} kind={kind} replacement={replacement}:\n{listing}\n"
                             "name one as FILE#K, or add --kind / --replacement / the column")
        return hits[0]


# -- building -----------------------------------------------------------------------------------

def _run(cmd: Sequence[str], cwd: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout)


class Build:
    """The unmutated objects of a target, compiled once into `work/obj`; `compile` builds one
    mutated source (in `work/mutsrc`, with the original's flags), `same_object` compares its object
    with the unmutated source compiled the same way (trivial compiler equivalence), `link` makes
    the library or module with some objects replaced into a folder, `env` says how to run it."""

    src_dir: Path
    cflags: list[str]
    sources: tuple[str, ...]
    target: str

    def __init__(self, work: Path) -> None:
        self.work = work
        self.objs: dict[str, Path] = {}
        self._tce: dict[str, bytes] = {}
        (work / "obj").mkdir(parents=True, exist_ok=True)
        (work / "mutsrc").mkdir(exist_ok=True)
        (work / "tce").mkdir(exist_ok=True)

    def _compile_originals(self, extra: Sequence[Path] = ()) -> None:
        for src in [*extra, *(self.src_dir / s for s in self.sources)]:
            obj = self.work / "obj" / (src.stem + ".o")
            proc = _run(["gcc", *self.cflags, "-c", str(src), "-o", str(obj)])
            if proc.returncode != 0:
                raise RuntimeError(f"the unmutated {src} does not compile:\n{proc.stderr}")
            self.objs[src.name] = obj

    def _mutflags(self) -> list[str]:
        # the object of a source in work/mutsrc: its own directory's headers from src_dir; its
        # __FILE__ as the original's (assert messages name the original path)
        return [*self.cflags, f"-ffile-prefix-map={self.work / 'mutsrc'}={self.src_dir}"]

    def compile(self, file: str, text: str, dest: Path) -> tuple[bool, str]:
        src = self.work / "mutsrc" / file
        src.write_text(text)
        proc = _run(["gcc", *self._mutflags(), "-c", str(src), "-o", str(dest)])
        return proc.returncode == 0, proc.stderr

    def same_object(self, file: str, obj: Path) -> bool:
        """Whether `obj` (a mutant of `file` from `compile`) is byte-identical to the unmutated
        `file` compiled from the same path with the same flags (no -g: there is no debug info to
        differ)."""
        if file not in self._tce:
            ref = self.work / "tce" / (Path(file).stem + ".o")
            ok, err = self.compile(file, (self.src_dir / file).read_text(), ref)
            if not ok:
                raise RuntimeError(f"the unmutated {file} does not compile from {self.work / 'mutsrc'}:\n{err}")
            self._tce[file] = ref.read_bytes()
        return obj.read_bytes() == self._tce[file]

    def link(self, dest: Path, replaced: dict[str, Path]) -> tuple[bool, str]:
        raise NotImplementedError

    def env(self, dest: Path) -> dict[str, str]:
        raise NotImplementedError

    def env_text(self, dest: Path) -> str:
        return " ".join(f"{k}={v}" for k, v in self.env(dest).items())

    def check_loaded(self, dest: Path) -> None:
        """Fail unless the target, run with `env(dest)`, uses the build in `dest`."""


class NativeBuild(Build):
    """native/src/*.c and the cffi wrapper, linked as the module `_ggspec_mutant`, run as
    ``--target native`` with ``GGSPEC_NATIVE_MODULE=<dir>:_ggspec_mutant``."""

    target = "native"

    def __init__(self, work: Path) -> None:
        super().__init__(work)
        from ggspec.native import build as nb

        self.nb = nb
        self.src_dir = Path(nb.SRC_DIR)
        self.sources = tuple(nb.SOURCES)
        ffi = nb.make_ffibuilder(NATIVE_MODULE)
        wrapper = work / f"{NATIVE_MODULE}.c"
        ffi.emit_c_code(str(wrapper))
        # -iquote: a mutated source finds its neighbours' headers, and native/src/assert.h does not
        # shadow the system's <assert.h>
        self.cflags = ["-fPIC", *nb.DEFAULT_CFLAGS, "-w", f"-I{nb.INCLUDE_DIR}", f"-I{sysconfig.get_paths()['include']}",
                       "-iquote", str(self.src_dir)]
        self.suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        self._compile_originals([wrapper])

    def link(self, dest: Path, replaced: dict[str, Path]) -> tuple[bool, str]:
        dest.mkdir(parents=True, exist_ok=True)
        objs = {**self.objs, **replaced}
        tmp = dest / ".tmp.so"
        proc = _run(["gcc", "-shared", *map(str, objs.values()), "-o", str(tmp), "-lm", "-lpthread"])
        if proc.returncode != 0:
            return False, proc.stderr
        os.replace(tmp, dest / f"{NATIVE_MODULE}{self.suffix}")
        return True, ""

    def env(self, dest: Path) -> dict[str, str]:
        return {"GGSPEC_NATIVE_MODULE": f"{dest}:{NATIVE_MODULE}"}

    def check_loaded(self, dest: Path) -> None:
        code = f"import sys; from ggspec.native import load_lib; load_lib(); print(sys.modules['{NATIVE_MODULE}'].__file__)"
        proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **self.env(dest)}, capture_output=True,
                              text=True, timeout=600)
        if not proc.stdout.strip().startswith(str(dest)):
            raise RuntimeError(f"the native target did not load the module in {dest}: {proc.stdout} {proc.stderr[-2000:]}")


class Rc8Build(Build):
    """rc.8's four sources, linked as `libwsp_ggml_rc8.so`, run as ``--target rc8`` with that
    folder first on ``LD_LIBRARY_PATH`` (the rc8 adapter's module links the library by name with a
    RUNPATH, which LD_LIBRARY_PATH overrides), so the adapter module is built once."""

    target = "rc8"

    def __init__(self, work: Path, cpp: Path) -> None:
        super().__init__(work)
        from ggspec.conformance.adapters import rc8

        self.rc8 = rc8
        self.src_dir = cpp
        self.sources = tuple(rc8.SOURCES)
        self.cflags = [f for f in rc8.CFLAGS if f != "-shared"] + ["-w", f"-I{cpp}"]
        self._compile_originals()

    def link(self, dest: Path, replaced: dict[str, Path]) -> tuple[bool, str]:
        dest.mkdir(parents=True, exist_ok=True)
        objs = {**self.objs, **replaced}
        tmp = dest / ".tmp.so"
        proc = _run(["gcc", "-shared", *map(str, objs.values()), "-o", str(tmp), *self.rc8.LIBS])
        if proc.returncode != 0:
            return False, proc.stderr
        os.replace(tmp, dest / self.rc8.LIBNAME)
        return True, ""

    def env(self, dest: Path) -> dict[str, str]:
        return {"LD_LIBRARY_PATH": f"{dest}:{os.environ.get('LD_LIBRARY_PATH', '')}".rstrip(":")}

    def env_text(self, dest: Path) -> str:
        return f"LD_LIBRARY_PATH={dest}"

    def check_loaded(self, dest: Path) -> None:
        code = ("from ggspec.conformance.adapters import make_target, prepare_target; prepare_target('rc8'); "
                "make_target('rc8'); print(open('/proc/self/maps').read())")
        proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, **self.env(dest)}, capture_output=True,
                              text=True, timeout=600)
        if str(dest / self.rc8.LIBNAME) not in proc.stdout:
            raise RuntimeError(f"the rc8 target did not load {dest / self.rc8.LIBNAME}:\n{proc.stderr[-2000:]}")


def make_build(which: str, work: Path) -> tuple[Build, dict[str, str]]:
    """The target's build in `work` and its planned sources' texts."""
    build: Build
    if which == "native":
        build = NativeBuild(work)
        files = NATIVE_PLAN
    else:
        from ggspec.conformance.adapters.rc8 import ensure_rc8

        cpp, _ = ensure_rc8()
        build = Rc8Build(work, cpp)
        files = RC8_PLAN
    return build, {f: (build.src_dir / f).read_text() for f in files}


def plan_sources(which: str) -> dict[str, str]:
    """The planned sources' texts without building anything."""
    if which == "native":
        from ggspec.native import build as nb

        return {f: Path(nb.SRC_DIR, f).read_text() for f in NATIVE_PLAN}
    from ggspec.conformance.adapters.rc8 import ensure_rc8

    cpp, _ = ensure_rc8()
    return {f: (cpp / f).read_text() for f in RC8_PLAN}


# -- running ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Stage:
    """The settings of one `ggspec check` run against a mutant."""

    name: str
    examples: int | None  # --max-examples, or None for `size`
    size: str
    budget: float  # seconds the whole run may take
    timeout: float  # --timeout, per example
    stop_early: bool
    seed: int
    workers: int
    nice: int

    def describe(self) -> str:
        n = f"--max-examples {self.examples}" if self.examples is not None else f"--size {self.size}"
        return f"{n} --seed {self.seed} --timeout {self.timeout:g}"


@dataclasses.dataclass
class Outcome:
    verdict: str  # killed | survived | timeout | error
    seconds: float
    why: str = ""
    killer: str = ""  # the check that failed first
    failing: list[str] = dataclasses.field(default_factory=list)  # every check that failed (without stop_early)


def check_command(target: str, select: Sequence[str], stage: Stage, deselect: Sequence[str] = ()) -> list[str]:
    cmd = [sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--seed", str(stage.seed),
           "--timeout", f"{stage.timeout:g}", "--workers", str(stage.workers), "--quiet", "--no-c-reproducers"]
    cmd += ["--max-examples", str(stage.examples)] if stage.examples is not None else ["--size", stage.size]
    for s in select:
        cmd += ["--select", s]
    for s in deselect:
        cmd += ["--deselect", s]
    return cmd


def run_check(env_extra: dict[str, str], target: str, select: Sequence[str], stage: Stage, out_json: Path,
              deselect: Sequence[str] = ()) -> Outcome:
    """Run the suite against a build; stopped at the first failing check when `stage.stop_early`."""
    cmd = ["nice", "-n", str(stage.nice), *check_command(target, select, stage, deselect), "--json", str(out_json)]
    env = {**os.environ, **env_extra, "GGSPEC_REPRO_DIR": str(out_json.parent / "repro")}
    stream = out_json.with_suffix(".jsonl")
    for stale in (out_json, stream):
        stale.unlink(missing_ok=True)
    t0 = time.monotonic()
    log = out_json.with_suffix(".log")
    with open(log, "w", encoding="utf-8") as logf:
        proc = subprocess.Popen(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while proc.poll() is None:
                if time.monotonic() - t0 > stage.budget:
                    done = _finished(stream)
                    return Outcome("timeout", time.monotonic() - t0, f"budget {stage.budget:g}s ({done} checks finished)")
                first = _first_failure(stream) if stage.stop_early else None
                if first is not None:
                    return Outcome("killed", time.monotonic() - t0, f"{first[0]} ({first[1]})", first[0])
                time.sleep(0.3)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    dt = time.monotonic() - t0
    out = log.read_text(errors="replace")
    if proc.returncode == 0:
        return Outcome("survived", dt)
    if proc.returncode in (1, 3):
        # killed only with a report that says so: an exit 1 of a broken harness is an error
        try:
            report = json.loads(out_json.read_text())
        except (OSError, ValueError):
            return Outcome("error", dt, f"exit {proc.returncode} without a report: {out[-300:]}")
        bad = [str(c.get("name")) for c in report.get("checks", [])
               if isinstance(c, dict) and c.get("status") not in ("pass", "unsupported", "xfail", "skip")]
        if bad:
            return Outcome("killed", dt, ",".join(bad[:5]), bad[0], bad)
        if proc.returncode == 3 or report.get("load_error"):
            return Outcome("killed", dt, f"did not load: {str(report.get('load_error'))[:200]}", "(load)")
        return Outcome("error", dt, f"exit {proc.returncode}, no failing check in the report")
    return Outcome("error", dt, f"exit {proc.returncode}: {out[-300:]}")


def _stream_records(stream: Path) -> list[dict[str, object]]:
    try:
        lines = stream.read_text(errors="replace").splitlines()
    except OSError:
        return []
    recs = []
    for ln in lines:
        try:
            recs.append(json.loads(ln))
        except ValueError:
            continue  # a line being written
    return recs


def _finished(stream: Path) -> int:
    return sum(1 for r in _stream_records(stream) if r.get("event") == "check")


def _first_failure(stream: Path) -> tuple[str, str] | None:
    """(check, status) of the first failed, crashed or timed-out check in a streamed report."""
    for rec in _stream_records(stream):
        if rec.get("event") == "check" and rec.get("status") in ("fail", "crash", "timeout"):
            return str(rec.get("name", rec.get("check"))), str(rec.get("status"))
    return None


class Runner:
    """Runs mutants through the stages against one build; a check that kills a mutant is first run
    against the unmutated build with the same settings (once per check and stage): if the unmutated
    build fails it too, the check is deselected for that stage and the mutant run again."""

    def __init__(self, build: Build, planner: Planner, commit: str, stages: Sequence[Stage]) -> None:
        self.build = build
        self.planner = planner
        self.commit = commit
        self.stages = stages
        self.work = build.work
        self.base = build.work / "base"
        self.mut = build.work / "mut"
        self.deselect: dict[str, list[str]] = {s.name: [] for s in stages}
        self._confirmed: dict[tuple[str, str], bool] = {}
        ok, err = build.link(self.base, {})
        if not ok:
            raise RuntimeError(err)
        build.check_loaded(self.base)

    def confirm(self, stage: Stage, checks: Iterable[str]) -> set[str]:
        """Run the unmutated build, in one run, on those of `checks` (killers of mutants) not run so
        yet at `stage`; deselect for the stage those it fails too. Returns which of `checks` the
        unmutated build fails (those killed nothing)."""
        new = sorted({c for c in checks if c and c != "(load)" and (c, stage.name) not in self._confirmed})
        if new:
            base_stage = dataclasses.replace(stage, budget=max(stage.budget * 3, 900), stop_early=False)
            o = run_check(self.build.env(self.base), self.build.target, new, base_stage, self.work / "base.json")
            if o.verdict not in ("survived", "killed"):
                raise RuntimeError(f"the unmutated build did not finish the killers' checks at {stage.name}: {o.verdict} "
                                   f"{o.why}")
            for c in new:
                self._confirmed[(c, stage.name)] = c in o.failing
                if c in o.failing:
                    self.deselect[stage.name].append(c)
                    print(f"  the unmutated build fails {c} too at {stage.name}: deselected", flush=True)
        return {c for c in checks if self._confirmed.get((c, stage.name))}

    def prepare(self, m: Mutant) -> dict[str, object]:
        """Compile and link the mutant into `self.mut`; the record so far (verdict set if it did not
        compile or is the same object code)."""
        rec: dict[str, object] = {**dataclasses.asdict(m), "id": m.ident, "commit": self.commit,
                                  "select": list(self.planner.selection(m))}
        t0 = time.monotonic()
        obj = self.work / "mutsrc" / (Path(m.file).stem + ".o")
        ok, err = self.build.compile(m.file, m.apply(self.planner.sources[m.file]), obj)
        if ok and self.build.same_object(m.file, obj):
            rec.update(verdict="equivalent", stage="tce", why="same object code")
        elif ok:
            ok, err = self.build.link(self.mut, {m.file: obj})
        if not ok:
            rec.update(verdict="did not compile", stage="compile", why=(err.strip().splitlines() or [""])[0][:200])
        rec["compile_s"] = round(time.monotonic() - t0, 2)
        return rec

    def run_stage(self, m: Mutant, rec: dict[str, object], stage: Stage) -> Outcome:
        select = self.planner.selection(m)
        o = run_check(self.build.env(self.mut), self.build.target, select, stage, self.work / "report.json",
                      self.deselect[stage.name])
        rec[f"{stage.name}_s"] = round(o.seconds, 1)
        rec.update(verdict=o.verdict, stage=stage.name, why=o.why, killer=o.killer)
        return o


def run_mutants(runner: Runner, mutants: Sequence[Mutant], out_path: Path, total: float, extra: dict[str, object],
                log_prefix: str = "") -> None:
    """Stage 1 for every mutant (until `total` seconds), then the later stages for those that
    survived; one JSON record per mutant in `out_path` (written as verdicts become final). At the
    end of each stage the checks that killed mutants are run against the unmutated build (one run);
    a mutant killed by one that the unmutated build fails too runs that stage again without it."""
    t_start = time.monotonic()
    pending: list[tuple[Mutant, dict[str, object]]] = []  # survived so far
    held: list[tuple[Mutant, dict[str, object]]] = []  # killed, the killer not yet confirmed
    waiting: list[tuple[Mutant, dict[str, object]]] = []  # survivors of a stage before, not yet run in this one
    with open(out_path, "w", encoding="utf-8") as out:
        def emit(rec: dict[str, object]) -> None:
            out.write(json.dumps({**rec, **extra}) + "\n")
            out.flush()

        def one(stage: Stage, m: Mutant, rec: dict[str, object], label: str) -> None:
            prev = rec.get("verdict")
            if stage is not runner.stages[0] or prev is None:
                runner.prepare(m)  # (re)build it: the record keeps its verdict so far
                runner.run_stage(m, rec, stage)
                if prev is not None and stage is not runner.stages[0]:
                    rec[f"{stage.name}_from"] = prev
            print(f"{log_prefix}{label} {stage.name} {rec['verdict']:15} "
                  f"{float(str(rec.get(stage.name + '_s', 0))):5.1f}s {m.ident} {m.describe()}", flush=True)
            if rec["verdict"] in ("survived", "timeout"):
                pending.append((m, rec))
            elif rec["verdict"] == "killed":
                held.append((m, rec))
            else:
                emit(rec)

        def settle(stage: Stage) -> None:
            for _ in range(3):
                bad = runner.confirm(stage, [str(rec.get("killer", "")) for _, rec in held])
                redo = [(m, rec) for m, rec in held if rec.get("killer") in bad]
                if not redo:
                    break
                held[:] = [(m, rec) for m, rec in held if rec.get("killer") not in bad]
                for m, rec in redo:
                    rec.pop("verdict")
                    one(stage, m, rec, "[again]")
            for _, rec in held:
                emit(rec)
            held.clear()

        try:
            first = runner.stages[0]
            for k, m in enumerate(mutants):
                if time.monotonic() - t_start > total:
                    print(f"{log_prefix}total budget reached in stage 1 after {k} mutants", flush=True)
                    break
                rec = runner.prepare(m)
                if "verdict" not in rec:
                    runner.run_stage(m, rec, first)
                one(first, m, rec, f"[{k + 1}/{len(mutants)}]")
            settle(first)
            for stage in runner.stages[1:]:
                # the cheapest selections first (by their time in the stage before), so that a total
                # budget reached in this stage leaves out the fewest mutants
                queue = sorted(pending, key=lambda mr: float(str(mr[1].get(f"{first.name}_s", 0))))
                pending.clear()
                waiting[:] = queue
                for k, (m, rec) in enumerate(queue):
                    if time.monotonic() - t_start > total:
                        print(f"{log_prefix}total budget reached in {stage.name}: {len(queue) - k} mutants not run "
                              "there", flush=True)
                        break
                    one(stage, m, rec, f"[{k + 1}/{len(queue)}]")
                    waiting.pop(0)
                pending += waiting
                waiting.clear()
                settle(stage)
        finally:
            done: set[object] = set()
            for (_, rec), flag in [*((x, True) for x in held), *((x, False) for x in [*pending, *waiting])]:
                if rec.get("id") not in done:
                    done.add(rec.get("id"))
                    emit({**rec, "unconfirmed": True} if flag else rec)
            print(f"{log_prefix}total {time.monotonic() - t_start:.0f}s", flush=True)


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


def _stages(args: argparse.Namespace) -> list[Stage]:
    common = {"timeout": args.timeout, "seed": args.seed, "workers": args.workers, "nice": args.nice}
    stages = [Stage("stage1", args.stage1_examples, "dev", args.budget1, stop_early=True, **common)]
    if args.stage1_examples == 0:  # stage 2 alone (a rerun of those an earlier run took through stage 1 only)
        stages = []
    if args.stage2_size != "none":
        stages.append(Stage("stage2", None, args.stage2_size, args.budget2, stop_early=True, **common))
    return stages


def _lscpu() -> str:
    try:
        out = _run(["lscpu"]).stdout
    except OSError:
        return ""
    keep = ("Model name", "CPU(s)")
    return "; ".join(" ".join(ln.split()) for ln in out.splitlines() if ln.split(":")[0].strip() in keep)


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" 1/")[0].rsplit(" ", 1)[0]
    except OSError:
        return ""


def cmd_run(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix=f"ggspec-mut-{args.which}-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `finally` below writes what is pending
    try:
        commit = _snapshot(args.tree, work / "snap")
        t0 = time.monotonic()
        build, sources = make_build(args.which, work / "build")
        planner = Planner(args.which, sources)
        old: dict[str, dict[str, object]] = {}
        if args.rerun:
            mutants, old = rerun_mutants(planner, args.rerun, args.which, args.stage1_examples == 0)
            if args.stage1_examples == 0:  # the cheapest selections first, as stage 2 of a whole run takes them
                mutants.sort(key=lambda m: float(str(old[m.ident].get("stage1_s") or 0)))
        else:
            mutants = planner.planned(args.seed, args.scale)
        print(f"tree {commit}; objects compiled in {time.monotonic() - t0:.0f}s; {len(mutants)} mutants; "
              f"load {_loadavg()}", flush=True)
        stages = _stages(args)
        runner = Runner(build, planner, commit, stages)
        info: dict[str, object] = {"stages": {s.name: s.describe() for s in stages}}
        out = args.out if not args.rerun else args.out.with_suffix(".rerun.jsonl")
        run_mutants(runner, mutants, out, args.total - (time.monotonic() - t0), info)
        if args.rerun:
            merge_rerun(args.rerun, out, old, args.out)
        print(f"load at the end {_loadavg()}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def rerun_mutants(planner: Planner, old_path: Path, which: str, pending_only: bool = False
                  ) -> tuple[list[Mutant], dict[str, dict[str, object]]]:
    """The survivors (and timeouts, errors) of an earlier results file, found again in the sources
    of the new tree: the same kind, original and replacement on a line of the same text, the one
    nearest the old line. Returns them and the old records by the new mutants' ident."""
    recs = [json.loads(ln) for ln in old_path.read_text().splitlines() if ln.strip()]
    old_texts: dict[tuple[str, str], str] = {}
    mutants: list[Mutant] = []
    by_ident: dict[str, dict[str, object]] = {}
    for r in recs:
        if r["verdict"] not in ("survived", "timeout", "error") or (pending_only and r.get("stage") != "stage1"):
            continue
        key = (str(r.get("commit", "")), r["file"])
        if key not in old_texts:
            old_texts[key] = _old_source(which, key[0], r["file"], planner.sources[r["file"]])
        old_text = old_texts[key]
        old_line = old_text.splitlines()[r["line"] - 1] if r["line"] <= len(old_text.splitlines()) else ""
        new_lines = planner.sources[r["file"]].splitlines()
        cands = [m for m in planner.all[r["file"]] if m.kind == r["kind"] and m.original == r["original"]
                 and m.replacement == r["replacement"] and new_lines[m.line - 1] == old_line]
        if not cands:
            print(f"rerun: {r['file']}:{r['line']} {r['kind']} {r['original']!r} is not in the new tree (its line "
                  "changed): left out", flush=True)
            continue
        m = min(cands, key=lambda c: (abs(c.line - r["line"]), abs(c.column - r["column"])))
        mutants.append(m)
        by_ident[m.ident] = r
    return mutants, by_ident


def _old_source(which: str, commit: str, file: str, current: str) -> str:
    if which != "native" or not commit:
        return current  # rc.8's sources do not change
    proc = _run(["git", "-C", str(ROOT), "show", f"{commit}:native/src/{file}"])
    return proc.stdout if proc.returncode == 0 else current


def merge_rerun(old_path: Path, rerun_path: Path, old: dict[str, dict[str, object]], out_path: Path) -> None:
    """`out_path`: the earlier file's records, those rerun replaced by the rerun's (which keep the
    first run's commit and verdict as first_commit / first_verdict, and every earlier run's commit,
    verdict and stage in `history`)."""
    rerun = {}
    for ln in rerun_path.read_text().splitlines():
        if ln.strip():
            r = json.loads(ln)
            o = old.get(r["id"], {})
            r["first_commit"] = o.get("first_commit", o.get("commit"))
            r["first_verdict"] = o.get("first_verdict", o.get("verdict"))
            if r.get("verdict") == "survived" and r.get("stage") == "stage1" and o.get("stage") == "stage2" \
                    and "stage2" not in r.get("stages", {}):
                # a rerun of stage 1 alone keeps what the earlier stage 2 found (survived, or its timeout)
                r["verdict"], r["stage"] = o.get("verdict"), "stage2"
                r["stage2_s"], r["stage2_commit"], r["why"] = o.get("stage2_s"), o.get("commit"), o.get("why")
            hist = o.get("history", [])
            r["history"] = [*(hist if isinstance(hist, list) else []),
                            {k: o.get(k) for k in ("commit", "verdict", "stage", "stage1_s", "stage2_s", "why")}]
            rerun[(o.get("file"), o.get("line"), o.get("column"), o.get("kind"), o.get("replacement"))] = r
    merged = []
    for ln in old_path.read_text().splitlines():
        if ln.strip():
            r = json.loads(ln)
            merged.append(rerun.get((r["file"], r["line"], r["column"], r["kind"], r["replacement"]), r))
    out_path.write_text("".join(json.dumps(r) + "\n" for r in merged))


def cmd_list(args: argparse.Namespace) -> int:
    planner = Planner(args.which, plan_sources(args.which))
    mutants = [m for f in planner.all for m in planner.all[f]] if args.all else planner.planned(args.seed, args.scale)
    for m in mutants:
        if args.file and m.file != args.file:
            continue
        excluded = "" if in_plan(args.which, planner.sources[m.file], m) else "  (not in the plan: test instrumentation)"
        print(f"{m.ident:22} {m.describe()}  [--select {' '.join(planner.selection(m))}]{excluded}")
    return 0


def cmd_one(args: argparse.Namespace) -> int:
    """Build one mutant (of the working tree's sources) and the unmutated build into --dir."""
    work = args.dir.resolve()
    if work.exists() and any(work.iterdir()):
        if not (work / ".mutation-one").exists():
            raise UsageError(f"{work} is not empty and not a folder of `one`: choose another --dir")
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    (work / ".mutation-one").write_text("a folder of `bench/mutation.py one`: emptied by the next one\n")
    planner = Planner(args.which, plan_sources(args.which))
    m = planner.find(args.site, args.kind, args.replacement)
    build, sources = make_build(args.which, work / "build")
    obj = work / "build" / "mutsrc" / (Path(m.file).stem + ".o")
    text = m.apply(sources[m.file])
    ok, err = build.compile(m.file, text, obj)
    same = ok and build.same_object(m.file, obj)
    if ok:
        ok, err = build.link(work / "mutant", {m.file: obj})
    okb, errb = build.link(work / "unmutated", {})
    if not okb:
        raise RuntimeError(errb)
    build.check_loaded(work / "unmutated")
    (work / m.file).write_text(text)
    diff = _run(["diff", "-u", str(build.src_dir / m.file), str(work / m.file)]).stdout
    (work / "mutant.diff").write_text(diff)
    select = " ".join(f"--select {s}" for s in planner.selection(m))
    venv = ROOT / ".venv" / "bin" / "ggspec"
    rec = {**dataclasses.asdict(m), "id": m.ident, "select": list(planner.selection(m)), "compiled": ok,
           "same_object": same}
    (work / "mutant.json").write_text(json.dumps(rec, indent=1) + "\n")
    print(f"mutant {m.ident}: {m.describe()}")
    print(f"  in {enclosing_function(sources[m.file], m.offset) or '(no function)'}(); diff: {work / 'mutant.diff'}")
    if not ok:
        print(f"it does not compile:\n{err}")
        return 1
    if same:
        print("  its object code is the same as the unmutated source's: equivalent (no check can kill it)")
    print("run the suite against it (exit 1 and a failing check: killed):")
    print(f"  {build.env_text(work / 'mutant')} {venv} check --target {build.target} {select} --max-examples 2 --seed 1")
    print("the unmutated build of the same sources (for comparison):")
    print(f"  {build.env_text(work / 'unmutated')} {venv} check --target {build.target} {select} --max-examples 2 --seed 1")
    return 0


def markdown(path: Path, notes: dict[str, str] | None = None) -> str:
    """Counts, both kill rates and a table of the survivors and timeouts of a results file."""
    recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    s = summarize(path)
    notes = notes or {}
    cols = ("killed", "survived", "timeout", "did not compile", "equivalent", "error")
    by_file: dict[str, dict[str, int]] = {}
    for r in recs:
        row = by_file.setdefault(r["file"], {})
        row[r["verdict"]] = row.get(r["verdict"], 0) + 1
    lines = [f"{s['mutants']} mutants: " + ", ".join(f"{k} {s.get(k, 0)}" for k in cols), "",
             f"kill rate {100 * float(str(s['kill_rate'])):.1f}% of the compiled mutants ({s.get('killed', 0)}/"
             f"{s['compiled']}); {100 * float(str(s['kill_rate_tce'])):.1f}% of those whose object code differs "
             f"({s.get('killed', 0)}/{s['compiled_distinct']})", "",
             "| file | mutants | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]
    for f, row in sorted(by_file.items()):
        lines.append(f"| {f} | {sum(row.values())} | " + " | ".join(str(row.get(k, 0)) for k in cols) + " |")
    def site(r: dict[str, object]) -> str:
        orig = " ".join(str(r["original"]).split()).replace("|", "\\|")
        repl = " ".join(str(r["replacement"]).split()).replace("|", "\\|")
        return f"{r['file']}:{r['line']} | {r['kind']}: `{orig}` → `{repl}`"

    rerun_kills = [r for r in recs if r["verdict"] == "killed" and r.get("first_verdict") not in (None, "killed")]
    if rerun_kills:
        lines += ["", "Killed in a rerun on a newer commit (they had survived the first run):", "",
                  "| site | mutation | first run | killed by | at commit |", "|---|---|---|---|---|"]
        for r in rerun_kills:
            lines.append(f"| {site(r)} | {r['first_verdict']} ({str(r.get('first_commit', ''))[:7]}) | "
                         f"`{r.get('killer', '')}` ({str(r.get('stage', '')).replace('stage', 'stage ')}) | "
                         f"{str(r.get('commit', ''))[:7]} |")
    lines += ["", "| site | mutation | verdict | stage | selection | equivalent because / what check is missing |",
              "|---|---|---|---|---|---|"]
    for r in recs:
        if r["verdict"] in ("survived", "timeout", "error"):
            key = f"{r['file']}:{r['line']}:{r['column']}:{r['kind']}:{str(r['replacement']).strip()}"
            hist = r.get("history") if isinstance(r.get("history"), list) else []
            stages = {str(r.get("stage"))} | {str(h.get("stage")) for h in hist if isinstance(h, dict)}
            stage = "1 and 2" if "stage2" in stages else "1 only" if "stage1" in stages else str(r.get("stage"))
            if r["verdict"] == "timeout":
                stage += f" ({r.get('why', '')})"
            lines.append(f"| {site(r)} | {r['verdict']} | {stage} | {' '.join(r['select'])} | {notes.get(key, '')} |")
    return "\n".join(lines)


def summarize(path: Path) -> dict[str, object]:
    """Counts and kill rates of a results file: of the compiled mutants, and of those whose object
    code differs from the original's (trivial compiler equivalence left out)."""
    recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    counts: dict[str, int] = {}
    for r in recs:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    compiled = len(recs) - counts.get("did not compile", 0)
    distinct = compiled - counts.get("equivalent", 0)
    killed = counts.get("killed", 0)
    return {"mutants": len(recs), **counts, "compiled": compiled, "compiled_distinct": distinct,
            "kill_rate": killed / compiled if compiled else 0.0, "kill_rate_tce": killed / distinct if distinct else 0.0}


USAGE = """\
commands:
  run native|rc8 --out OUT.jsonl [...]     the mutation run (stage 1, then stage 2 for the survivors)
  run native|rc8 --rerun OLD.jsonl --out NEW.jsonl [--tree COMMIT]
                                           rerun the survivors of OLD on a newer tree; NEW = OLD with them replaced
                                           (--stage1-examples 0: stage 2 alone, for those OLD ran through stage 1 only)
  list native|rc8 [--all] [--file F]       the planned mutants (or all), each named FILE#K
  one native|rc8 SITE --dir DIR            build ONE mutant of the working tree's sources into DIR and print
                                           the command that runs the suite against it; SITE is FILE#K (from
                                           `list --all`) or FILE:LINE[:COL] (with --kind / --replacement if several)
  markdown OUT.jsonl [--notes NOTES.json]  counts, kill rates and the survivors' table for bench/RESULTS.md
  summarize OUT.jsonl                      the counts as JSON
"""


class UsageError(Exception):
    """A mistake in the command line (an unknown site, a --dir that is not ours): one message, exit 2."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except UsageError as exc:
        print(f"bench/mutation.py: {exc}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("native", "rc8"):
        argv = ["run", *argv]  # the older spelling
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=USAGE,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="a mutation run")
    run.add_argument("which", choices=("native", "rc8"))
    run.add_argument("--out", type=Path, required=True, help="JSON lines of results (one per mutant)")
    run.add_argument("--seed", type=int, default=1, help="mutant choice and hypothesis seed")
    run.add_argument("--scale", type=float, default=1.0, help="multiply each file's mutant count")
    run.add_argument("--stage1-examples", type=int, default=2, help="stage 1: examples a check (stops at the first failure); "
                     "0 with --rerun: stage 2 alone, for the survivors the earlier run took through stage 1 only")
    run.add_argument("--stage2-size", default="ci", help="stage 2 for stage 1's survivors: a run size (ci = 40 examples a "
                     "check), or none")
    run.add_argument("--budget1", type=float, default=90, help="seconds one mutant's stage-1 run may take")
    run.add_argument("--budget2", type=float, default=240, help="seconds one mutant's stage-2 run may take")
    run.add_argument("--timeout", type=float, default=10, help="ggspec check --timeout (per example)")
    run.add_argument("--total", type=float, default=3600, help="stop starting mutants after this many seconds")
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--nice", type=int, default=19)
    run.add_argument("--tree", default="HEAD", help="the commit whose sources and suite to use (a snapshot of it in "
                     "the temporary directory, so that work in progress in the checkout does not count)")
    run.add_argument("--rerun", type=Path, help="rerun only the survivors, timeouts and errors of this earlier results file")
    lst = sub.add_parser("list", help="list mutants")
    lst.add_argument("which", choices=("native", "rc8"))
    lst.add_argument("--all", action="store_true", help="every mutant, not only the planned ones")
    lst.add_argument("--file", help="only this source file")
    lst.add_argument("--seed", type=int, default=1)
    lst.add_argument("--scale", type=float, default=1.0)
    one = sub.add_parser("one", help="build one mutant into a folder and print how to run the suite against it",
                         description=cmd_one.__doc__)
    one.add_argument("which", choices=("native", "rc8"))
    one.add_argument("site", help="FILE#K (see `list --all`) or FILE:LINE[:COL], e.g. sched.c:304 or ggml-backend.c:816")
    one.add_argument("--dir", type=Path, required=True, help="the folder to build into (emptied first)")
    one.add_argument("--kind", choices=KINDS, help="which mutation at the site")
    one.add_argument("--replacement", help="which replacement at the site (e.g. '<=' or '1')")
    md = sub.add_parser("markdown", help="the tables for bench/RESULTS.md")
    md.add_argument("results", type=Path)
    md.add_argument("--notes", type=Path, help="JSON: 'FILE:LINE:COL:KIND:REPLACEMENT' → the survivor's one-line argument")
    sm = sub.add_parser("summarize", help="counts as JSON")
    sm.add_argument("results", type=Path)
    args = ap.parse_args(argv)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "list":
        return cmd_list(args)
    if args.command == "one":
        return cmd_one(args)
    if args.command == "markdown":
        notes = json.loads(args.notes.read_text()) if args.notes else None
        print(markdown(args.results, notes))
        return 0
    print(json.dumps(summarize(args.results), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
