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

With ``--operators semantic`` (issue 30) the operators are those of a wrong thing of the right
type, found lexically (`semantic_sites`; C, and WGSL for a ``.wgsl`` file):

- ``var``: one use of a variable replaced by the latest-declared other variable of the same declared
  type in scope (parameters and locals of the function; WGSL's ``let``/``var`` take the type of a
  simple initializer);
- ``field``: ``->f`` / ``.f`` replaced by ``->g`` / ``.g``, g the field of the same type declared next
  to f in a struct of the file or its headers, and used in the file (a function-pointer entry for
  another of the same signature; WGSL's vector components x, y, z, w);
- ``index``: a constant index ``a[k]`` replaced by another constant index the file uses with ``a``
  (``ne[0]`` → ``ne[1]``);
- ``reset``: a call that frees, resets or clears (by the called name, ``x->iface.reset(x)`` too) or
  an assignment of NULL / 0 / false to a field, deleted;
- ``order``: two adjacent simple statements of one block swapped (not two declarations);
- ``bound``: a for-loop's bound replaced by a sibling count: another loop's bound in the function,
  or ``x->g`` for ``x->f`` with g a count-like field of the same type (``n_nodes`` → ``n_leafs``).

Their plans (`SEMANTIC_PLANS`) draw per file with `sample_by_kind` (evenly over the kinds) and run
the whole suite (no --select); rc.8's ggml.c only in the functions ggml-backend.c and ggml-alloc.c
call and those they call (`ggml_c_scope`). The target ``webgpu`` is native with the WebGPU device
compiled in, its mutants of webgpu.c and webgpu.wgsl run with ``--device webgpu``; a WGSL mutant is
first validated by wgpu's shader compiler (one that does not validate is ``did not compile``).

Each mutant is one `Mutant` record, named ``FILE#K`` (the K-th mutant of FILE in text order);
`Planner.planned` draws a deterministic subset for a seed, with a quota per file (scheduler,
copies and bounds checks first), and gives each mutant its check selection: native's by file,
rc.8's ggml-backend.c by the function the mutant is in, by its name or else by the names of its
callers (`function_areas`). native's test instrumentation (the ``*_debug_*`` accessors only the
suite calls) is not in the plan.

Commands (``python bench/mutation.py --help``):

``run native|rc8|webgpu [--operators semantic] --out OUT.jsonl`` compiles the unmutated objects once in a temporary directory
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


def _match(toks: Sequence[Tok], i: int, step: int) -> int:
    """Index of the bracket matching the one at `i`, searched forward (`step` 1, from `(` or `[`)
    or back (`step` -1, from `)` or `]`); -1 where there is none."""
    here = toks[i].text
    if step > 0:
        other = ")" if here == "(" else "]"
    else:
        other = "(" if here == ")" else "["
    level = 0
    for j in range(i, len(toks) if step > 0 else -1, step):
        if toks[j].text == here:
            level += 1
        elif toks[j].text == other:
            level -= 1
            if level == 0:
                return j
    return -1


def _match_back(toks: Sequence[Tok], i: int) -> int:
    """Index of the bracket opening the one closing at `i`."""
    return _match(toks, i, -1)


def _match_fwd(toks: Sequence[Tok], i: int) -> int:
    """Index of the bracket closing the one opening at `i`."""
    return _match(toks, i, 1)


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


# -- semantic mutation sites (issue 30) ----------------------------------------------------------
# Lexical approximations of "a wrong thing of the right type": the declared types come from the
# declarations' text (C: `TYPE [*...] NAME`, WGSL: `let|var NAME[: TYPE]` with the type of a simple
# initializer inferred, and parameters), the fields' from the struct definitions of the file and the
# headers given beside it. A site whose swap turns out ill-typed does not compile (C) or does not
# validate (WGSL): it is `did not compile`, outside both rates.

SEMANTIC_KINDS = ("var", "field", "index", "reset", "order", "bound")
_C_TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double", "bool", "_Bool", "unsigned", "signed",
                 "size_t"}
_QUALIFIERS = {"const", "static", "volatile", "register", "restrict", "inline", "extern"}
_CONTROL = {"if", "else", "for", "while", "do", "switch", "case", "default", "break", "continue", "goto", "return"}
_RESET_CALL = re.compile(r"free|reset|clear|release|destroy|memset|deinit|fini|unmap|atomicAnd", re.IGNORECASE)
_COUNT_NAME = re.compile(r"^n_|^n[A-Z]|count|size|len|^num|^ne$")
_WGSL_SCALARS = {"u32", "i32", "f32", "f16", "bool"}


def _type_names(toks: Sequence[Tok]) -> set[str]:
    """Type names a C source (or its headers) declares with typedef, and every ``*_t`` name."""
    out = {t.text for t in toks if t.kind == "id" and t.text.endswith("_t")}
    for i, t in enumerate(toks):
        if t.text == "typedef":
            level, j = 0, i + 1
            while j < len(toks) and not (toks[j].text == ";" and level == 0):
                level += toks[j].text == "{"
                level -= toks[j].text == "}"
                j += 1
            k = j - 1
            while k > i and toks[k].text in (")", "]"):  # typedef void (*name)(...): the id after `(*`
                k = _match_back(toks, k) - 1
            names = [x for x in toks[i:j] if x.kind == "id"]
            if k > i and toks[k].kind == "id":
                out.add(toks[k].text)
            elif names:
                out.add(names[-1].text)
    return out


def _c_decl(toks: Sequence[Tok], i: int, types: set[str]) -> tuple[str, list[int]] | None:
    """A C declaration starting at token i: (its base type's text, the indexes of its declarators'
    names, each with its own stars folded into the type by `_declarators`), or None."""
    j = i
    while j < len(toks) and toks[j].text in _QUALIFIERS:
        j += 1
    if j >= len(toks):
        return None
    if toks[j].text in ("struct", "enum", "union") and j + 1 < len(toks) and toks[j + 1].kind == "id":
        base, j = f"{toks[j].text} {toks[j + 1].text}", j + 2
    elif toks[j].text in _C_TYPE_WORDS:
        words = []
        while j < len(toks) and toks[j].text in _C_TYPE_WORDS:
            words.append(toks[j].text)
            j += 1
        base = " ".join(words)
    elif toks[j].kind == "id" and toks[j].text in types:
        base, j = toks[j].text, j + 1
    else:
        return None
    while j < len(toks) and toks[j].text == "const":
        j += 1
    k = j
    while k < len(toks) and toks[k].text in ("*", "const"):
        k += 1
    if k >= len(toks) or toks[k].kind != "id" or toks[k].text in _KEYWORDS or k + 1 >= len(toks) \
            or toks[k + 1].text not in ("=", ";", ",", "[", ")"):
        return None
    return base, [j]


def _declarators(toks: Sequence[Tok], start: int, end: int, base: str) -> list[tuple[str, str, int]]:
    """(name, type, token index) of each declarator of a declaration whose first declarator starts
    at `start` (its stars), up to `end` (the `;` or the `)` closing a parameter)."""
    out = []
    k, depth = start, toks[start].depth
    while k < end:
        stars = 0
        while k < end and toks[k].text in ("*", "const"):
            stars += toks[k].text == "*"
            k += 1
        if k >= end or toks[k].kind != "id":
            break
        name_i = k
        k += 1
        array = ""
        while k < end and toks[k].text == "[":
            k = _match_fwd(toks, k) + 1
            array += "[]"
        out.append((toks[name_i].text, base + "*" * stars + array, name_i))
        while k < end and not (toks[k].text == "," and toks[k].depth == depth):
            k += 1
        k += 1
    return out


def _wgsl_type(toks: Sequence[Tok], i: int, end: int) -> str:
    return "".join(t.text for t in toks[i:end])


def _fn_bodies(toks: Sequence[Tok]) -> list[tuple[int, int, int]]:
    """(index of the parameter list's `(`, of the body's `{`, of its `}`) of each function definition
    (C: `name(...) {`; WGSL: `fn name(...) [-> type] {`)."""
    out = []
    level = 0
    for i, t in enumerate(toks):
        if t.text == "{":
            if level == 0:
                k = i - 1
                while k > 0 and toks[k].text != ")":  # WGSL: `-> type` between the parameters and the body
                    if toks[k].text in (";", "}", "=", "{") or i - k > 8:
                        break
                    k -= 1
                if toks[k].text == ")":
                    o = _match_back(toks, k)
                    if o > 0 and toks[o - 1].kind == "id" and toks[o - 1].text not in _KEYWORDS:
                        close = i
                        lv = 0
                        for c in range(i, len(toks)):
                            lv += toks[c].text == "{"
                            lv -= toks[c].text == "}"
                            if lv == 0:
                                close = c
                                break
                        out.append((o, i, close))
            level += 1
        elif t.text == "}":
            level = max(0, level - 1)
    return out


def _wgsl_infer(toks: Sequence[Tok], i: int, end: int, known: dict[str, str], fns: dict[str, str]) -> str | None:
    """The type of a WGSL initializer's first typed token (a suffixed literal, a cast or constructor,
    a known variable or its vector component, a call of a function with a declared result), or None."""
    for k in range(i, end):
        t = toks[k]
        if t.kind == "num":
            if t.text.endswith("u"):
                return "u32"
            if t.text.endswith("i"):
                return "i32"
            if "." in t.text or t.text.endswith("f"):
                return "f32"
            continue
        if t.kind != "id":
            if t.text in ("<", ">", "<=", ">=", "==", "!=", "&&", "||", "!"):
                return None  # a comparison: bool, or too involved
            continue
        if t.text in _WGSL_SCALARS and k + 1 < end and toks[k + 1].text == "(":
            return t.text
        if re.fullmatch(r"vec[234]", t.text) and k + 3 < end and toks[k + 1].text == "<":
            return "".join(x.text for x in toks[k:k + 4])
        if t.text == "bitcast" and k + 2 < end and toks[k + 1].text == "<":
            return toks[k + 2].text
        if t.text in fns and k + 1 < end and toks[k + 1].text == "(":
            return fns[t.text]
        if t.text in known and (k == 0 or toks[k - 1].text != "."):
            ty = known[t.text]
            if k + 2 < end and toks[k + 1].text == "." and toks[k + 2].text in ("x", "y", "z", "w"):
                m = re.fullmatch(r"vec[234]<(\w+)>", ty)
                return m.group(1) if m else None
            return ty if not (k + 1 < end and toks[k + 1].text in ("[", ".")) else None
        return None
    return None


def _var_sites(toks: Sequence[Tok], wgsl: bool, types: set[str]) -> Iterable[tuple[int, str, str, str]]:
    """`var`: one use of a variable replaced by the latest-declared other variable of the same type
    in scope (parameters and locals of the same function)."""
    fns: dict[str, str] = {}
    if wgsl:
        for o, b, _ in _fn_bodies(toks):
            c = _match_fwd(toks, o)
            if c + 1 < b and toks[c + 1].text == "->":
                fns[toks[o - 1].text] = _wgsl_type(toks, c + 2, b)
    for o, b, e in _fn_bodies(toks):
        c = _match_fwd(toks, o)
        scopes: list[dict[str, tuple[str, int]]] = [{}]
        # the parameters
        k = o + 1
        while k < c:
            end = k
            while end < c and not (toks[end].text == "," and toks[end].depth == toks[o].depth + 1):
                end += 1
            if wgsl:
                names = [x for x in range(k, end) if toks[x].kind == "id" and x + 1 < end and toks[x + 1].text == ":"]
                if names:
                    n = names[-1]
                    scopes[0][toks[n].text] = (_wgsl_type(toks, n + 2, end), c)
            else:
                d = _c_decl(toks, k, types)
                if d is not None:
                    for name, ty, _ in _declarators(toks, d[1][0], end, d[0])[:1]:
                        scopes[0][name] = (ty, c)
            k = end + 1
        closers: list[tuple[int, int]] = []  # (token index ending a for-scope, scopes depth it pops to)
        decl_names: set[int] = set()
        for k in range(b + 1, e):
            t = toks[k]
            while closers and closers[-1][0] < k:
                del scopes[closers.pop()[1]:]
            if t.text == "{":
                scopes.append({})
                continue
            if t.text == "}":
                if len(scopes) > 1:
                    scopes.pop()
                continue
            prev = toks[k - 1].text
            if wgsl and t.text in ("let", "var", "const") and k + 2 < e:
                n = k + 1
                if toks[n].kind == "id" and toks[n + 1].text in (":", "="):
                    end = n + 1
                    while end < e and toks[end].text not in (";",) and not (toks[end].text == "=" and toks[n + 1].text == ":"):
                        end += 1
                    if toks[n + 1].text == ":":
                        ty: str | None = _wgsl_type(toks, n + 2, end)
                    else:
                        semi = n + 2
                        while semi < e and toks[semi].text != ";":
                            semi += 1
                        ty = _wgsl_infer(toks, n + 2, semi, {m: v[0] for s in scopes for m, v in s.items()}, fns)
                    if prev == "(" and toks[k - 2].text == "for":
                        semi = _match_fwd(toks, k - 1)
                        body_end = _match_fwd_brace(toks, semi + 1) if semi + 1 < e and toks[semi + 1].text == "{" else semi
                        scopes.append({})
                        closers.append((body_end, len(scopes) - 1))
                    decl_names.add(n)
                    if ty:
                        semi = n
                        while semi < e and toks[semi].text != ";":
                            semi += 1
                        scopes[-1][toks[n].text] = (ty, semi)
                continue
            if not wgsl and (prev in (";", "{", "}") or (prev == "(" and toks[k - 2].text == "for")) and t.kind == "id":
                d = _c_decl(toks, k, types)
                if d is not None:
                    semi = d[1][0]
                    while semi < e and not (toks[semi].text == ";" and toks[semi].depth == t.depth):
                        semi += 1
                    if prev == "(":
                        close = _match_fwd(toks, k - 1)
                        body_end = _match_fwd_brace(toks, close + 1) if toks[close + 1].text == "{" else close
                        scopes.append({})
                        closers.append((body_end, len(scopes) - 1))
                    for name, ty2, n in _declarators(toks, d[1][0], semi, d[0]):
                        scopes[-1][name] = (ty2, semi)
                        decl_names.add(n)
                    continue
            if t.kind != "id" or k in decl_names or prev in (".", "->") or toks[k + 1].text == "(":
                continue
            if wgsl and toks[k + 1].text == ":":
                continue
            visible: dict[str, tuple[str, int]] = {}
            for s in scopes:
                visible.update(s)
            if t.text not in visible:
                continue
            ty = visible[t.text][0]
            sibs = [m for m in visible if m != t.text and visible[m][0] == ty and visible[m][1] < k]
            if not sibs:
                continue
            sib = max(sibs, key=lambda m: visible[m][1])
            yield t.offset, t.text, sib, "var"


def _match_fwd_brace(toks: Sequence[Tok], i: int) -> int:
    level = 0
    for j in range(i, len(toks)):
        level += toks[j].text == "{"
        level -= toks[j].text == "}"
        if level == 0:
            return j
    return len(toks) - 1


def struct_fields(toks: Sequence[Tok], wgsl: bool = False) -> dict[str, list[tuple[str, str]]]:
    """Each struct's fields, (name, type text) in declaration order (a function pointer's type is its
    declaration with the name left out; nested struct or union bodies are skipped)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for i, t in enumerate(toks):
        if t.text != "struct" or i + 2 >= len(toks) or toks[i + 1].kind != "id" or toks[i + 2].text != "{":
            continue
        close = _match_fwd_brace(toks, i + 2)
        fields: list[tuple[str, str]] = []
        k = i + 3
        while k < close:
            end = k
            while end < close and toks[end].text not in (";", "{") and not (wgsl and toks[end].text == ","
                                                                              and toks[end].depth == toks[k].depth):
                end += 1
            if end < close and toks[end].text == "{":
                end = _match_fwd_brace(toks, end) + 1
                while end < close and toks[end].text != ";":
                    end += 1
                k = end + 1
                continue
            decl = toks[k:end]
            if wgsl:
                if len(decl) >= 3 and decl[0].kind == "id" and decl[1].text == ":":
                    fields.append((decl[0].text, "".join(x.text for x in decl[2:])))
            else:
                fp = [x for x in range(len(decl) - 2) if decl[x].text == "(" and decl[x + 1].text == "*"
                      and decl[x + 2].kind == "id"]
                if fp:
                    x = fp[0]
                    fields.append((decl[x + 2].text, " ".join(y.text for y in decl[:x + 2] + decl[x + 3:])))
                else:
                    d = _c_decl(list(decl) + [Tok("op", ";", 0, decl[0].depth if decl else 0)], 0,
                                {y.text for y in decl if y.kind == "id"})
                    if d is not None:
                        for name, ty, _ in _declarators(list(decl) + [Tok("op", ";", 0, 0)], d[1][0], len(decl), d[0]):
                            fields.append((name, ty))
            k = end + 1
        out.setdefault(toks[i + 1].text, fields)
    return out


def _field_sites(toks: Sequence[Tok], structs: dict[str, list[tuple[str, str]]], wgsl: bool
                 ) -> Iterable[tuple[int, str, str, str]]:
    """`field`: `->f` / `.f` read or written as `->g` / `.g`, g a field of the same type next to f
    (before or after it) in a struct that has both, and used in the file; WGSL's vector components
    x, y, z, w are fields of one type."""
    used = {toks[i + 1].text for i in range(len(toks) - 1) if toks[i].text in (".", "->") and toks[i + 1].kind == "id"}
    by_field: dict[str, list[str]] = {}
    for fields in structs.values():
        for n, (name, ty) in enumerate(fields):
            for m in (n - 1, n + 1):
                if 0 <= m < len(fields) and fields[m][1] == ty and fields[m][0] in used:
                    sibs = by_field.setdefault(name, [])
                    if fields[m][0] not in sibs:
                        sibs.append(fields[m][0])
    if wgsl:
        comps = [c for c in "xyzw" if c in used]
        for n, c in enumerate(comps):
            by_field.setdefault(c, [d for d in (comps[n - 1] if n else None, comps[n + 1] if n + 1 < len(comps) else None)
                                    if d])
    for i in range(1, len(toks)):
        t = toks[i]
        if toks[i - 1].text in (".", "->") and t.kind == "id" and t.text in by_field \
                and not (i + 1 < len(toks) and toks[i + 1].text == "("):
            for g in by_field[t.text]:
                yield t.offset, t.text, g, "field"


def _index_sites(toks: Sequence[Tok]) -> Iterable[tuple[int, str, str, str]]:
    """`index`: `a[k]` → `a[j]` (constant indexes), j another constant index the file uses with an
    array of the same name (ne[0] → ne[1], src[1] → src[0])."""
    seen: dict[str, list[str]] = {}
    sites = []
    for i in range(1, len(toks) - 2):
        if toks[i].text == "[" and toks[i - 1].kind == "id" and toks[i + 2].text == "]" and toks[i + 1].kind == "num" \
                and re.fullmatch(r"\d[uU]?", toks[i + 1].text) and not (
                    i >= 2 and toks[i - 2].kind == "id"  # a declaration's size: `TYPE name[4]`
                    and (toks[i - 2].text not in _KEYWORDS or toks[i - 2].text in _C_TYPE_WORDS)):
            name = toks[i - 1].text
            val = toks[i + 1].text
            if val not in seen.setdefault(name, []):
                seen[name].append(val)
            sites.append((toks[i + 1], name))
    for t, name in sites:
        vals = sorted(seen[name], key=lambda v: int(v.rstrip("uU")))
        for v in vals:
            if v != t.text:
                yield t.offset, t.text, v, "index"


def _statements(toks: Sequence[Tok], a: int, b: int) -> list[tuple[int, int]]:
    """(first, last token index) of the simple statements directly in the block between tokens a and
    b (exclusive), in order; a compound statement or a control statement is a break (None-like
    entries are left out, so that two statements are adjacent only when nothing stands between)."""
    out: list[tuple[int, int]] = []
    k = a + 1
    while k < b:
        t = toks[k]
        if t.text == "{":
            out.append((-1, -1))
            k = _match_fwd_brace(toks, k) + 1
            continue
        if t.text in _CONTROL or t.text in ("fn", "loop", "@") or t.text == "}":
            out.append((-1, -1))
            # skip to the end of this statement: its block or its `;`
            j = k
            while j < b and toks[j].text not in (";", "{"):
                if toks[j].text == "(":
                    j = _match_fwd(toks, j)
                j += 1
            k = (_match_fwd_brace(toks, j) + 1) if j < b and toks[j].text == "{" else j + 1
            continue
        j = k
        while j < b and not (toks[j].text == ";" and toks[j].depth == t.depth):
            if toks[j].text == "{":
                break
            j += 1
        if j >= b or toks[j].text != ";":
            out.append((-1, -1))
            k = j
            continue
        out.append((k, j))
        k = j + 1
    return out


def _order_sites(text: str, toks: Sequence[Tok], wgsl: bool, types: set[str]) -> Iterable[tuple[int, str, str, str]]:
    """`order`: two adjacent simple statements of one block swapped (at least one of them not a
    declaration: swapped declarations do nothing or do not compile)."""
    blocks = [i for i, t in enumerate(toks) if t.text == "{"]
    fn_ranges = [(b, e) for _, b, e in _fn_bodies(toks)]
    for open_i in blocks:
        if not any(b <= open_i < e for b, e in fn_ranges):
            continue
        close = _match_fwd_brace(toks, open_i)
        stmts = _statements(toks, open_i, close)
        for (a0, a1), (b0, b1) in zip(stmts, stmts[1:], strict=False):
            if a0 < 0 or b0 < 0:
                continue
            def is_decl(s: int) -> bool:
                if wgsl:
                    return toks[s].text in ("let", "var", "const")
                return _c_decl(toks, s, types) is not None
            if is_decl(a0) and is_decl(b0):
                continue
            first = text[toks[a0].offset:toks[a1].offset + 1]
            second = text[toks[b0].offset:toks[b1].offset + 1]
            if first == second:
                continue
            between = text[toks[a1].offset + 1:toks[b0].offset]
            yield toks[a0].offset, first + between + second, second + between + first, "order"


def _reset_sites(toks: Sequence[Tok], text: str) -> Iterable[tuple[int, str, str, str]]:
    """`reset`: a call that frees, resets or clears (by its name), or an assignment of NULL / 0 /
    false to a field, deleted."""
    for i, t in enumerate(toks):
        prev = toks[i - 1].text if i else ";"
        if prev not in (";", "{", "}") or t.kind != "id" or t.text in _KEYWORDS:
            continue
        j = i
        while j < len(toks) and not (toks[j].text == ";" and toks[j].depth == t.depth):
            if toks[j].text in ("{", "}"):
                break
            j += 1
        if j >= len(toks) or toks[j].text != ";":
            continue
        callee = i  # the name called: `f(...)`, `x->iface.f(...)`
        while callee + 2 < j and toks[callee + 1].text in (".", "->") and toks[callee + 2].kind == "id":
            callee += 2
        is_reset = (toks[callee + 1].text == "(" and _match_fwd(toks, callee + 1) == j - 1
                    and bool(_RESET_CALL.search(toks[callee].text)))
        if not is_reset and j - i >= 4 and toks[j - 2].text == "=" and toks[j - 1].text in ("NULL", "0", "false") \
                and any(x.text in ("->", ".") for x in toks[i:j - 2]):
            is_reset = True
        if is_reset:
            yield t.offset, text[t.offset:toks[j].offset + 1], ";", "reset"


def _bound_sites(text: str, toks: Sequence[Tok], structs: dict[str, list[tuple[str, str]]]
                 ) -> Iterable[tuple[int, str, str, str]]:
    """`bound`: a for-loop's bound (`i < B`, `i <= B`, `i != B`) replaced by a sibling count: the
    bound of another loop of the same function, or, for `x->f` / `x.f`, `x->g` with g a count-like
    field of the same type beside f in a struct (n_nodes → n_leafs)."""
    count_sibs: dict[str, list[str]] = {}
    for fields in structs.values():
        for name, ty in fields:
            if _COUNT_NAME.search(name):
                count_sibs.setdefault(name, [])
                for other, ty2 in fields:
                    if other != name and ty2 == ty and _COUNT_NAME.search(other) and other not in count_sibs[name]:
                        count_sibs[name].append(other)
    for _, b, e in _fn_bodies(toks):
        loops: list[tuple[int, int]] = []  # token range of each bound B
        for k in range(b, e):
            if toks[k].text != "for" or toks[k + 1].text != "(":
                continue
            close = _match_fwd(toks, k + 1)
            semis = [x for x in range(k + 2, close) if toks[x].text == ";" and toks[x].depth == toks[k + 1].depth + 1]
            if len(semis) != 2:
                continue
            cmp_i = [x for x in range(semis[0] + 1, semis[1]) if toks[x].text in ("<", "<=", "!=")
                     and toks[x].depth == toks[k + 1].depth + 1]
            if len(cmp_i) != 1:
                continue
            s0 = cmp_i[0] + 1
            s1 = _operand_fwd(toks, s0)
            if s1 >= s0 and (s1 + 1 == semis[1] or toks[s1 + 1].text in ("&&", "||")):
                loops.append((s0, s1))
        texts = [text[toks[s0].offset:toks[s1].offset + len(toks[s1].text)] for s0, s1 in loops]
        for (s0, s1), bound in zip(loops, texts, strict=True):
            cands = [x for x in dict.fromkeys(texts) if x != bound]
            if toks[s1].kind == "id" and s1 > s0 and toks[s1 - 1].text in ("->", "."):
                prefix = text[toks[s0].offset:toks[s1].offset]
                cands += [prefix + g for g in count_sibs.get(toks[s1].text, []) if prefix + g not in cands]
            for c in cands[:3]:
                yield toks[s0].offset, bound, c, "bound"


def semantic_sites(text: str, wgsl: bool = False, headers: str = "") -> list[tuple[int, str, str, str]]:
    """(offset, original, replacement, kind) of every semantic mutation site of `text` (C, or WGSL
    with `wgsl`), in text order; `headers`: the text of the headers it includes (their typedefs and
    structs, not mutated)."""
    toks = tokens(text)
    head = tokens(headers) if headers else []
    types = _type_names([*head, *toks])
    structs = {**struct_fields(head, wgsl), **struct_fields(toks, wgsl)}
    sites = [*_var_sites(toks, wgsl, types), *_field_sites(toks, structs, wgsl), *_index_sites(toks),
             *_reset_sites(toks, text), *_order_sites(text, toks, wgsl, types), *_bound_sites(text, toks, structs)]
    return sorted(dict.fromkeys(sites), key=lambda s: (s[0], SEMANTIC_KINDS.index(s[3]), s[2]))


def generate_mutants(text: str, file: str, operators: str = "classic", headers: str = "") -> list[Mutant]:
    """Every single-site mutant of C source `text` (named `file` in the records), in text order:
    the classic operators' (`KINDS`), or with ``operators="semantic"`` the semantic ones'
    (`SEMANTIC_KINDS`; a ``.wgsl`` file is read as WGSL; `headers`: the included headers' text)."""
    out: list[Mutant] = []
    sites = _sites(text, tokens(text)) if operators == "classic" else \
        semantic_sites(text, wgsl=file.endswith(".wgsl"), headers=headers)
    for offset, original, replacement, kind in sites:
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


def sample_by_kind(mutants: Sequence[Mutant], n: int, seed: int) -> list[Mutant]:
    """`n` of `mutants` spread evenly over their kinds (each kind's pool in a deterministic order for
    `seed`, taken in turn, kinds in `SEMANTIC_KINDS` order, until `n`), in text order."""
    pools = {k: [m for m in mutants if m.kind == k] for k in (*SEMANTIC_KINDS, *KINDS)}
    for k, pool in pools.items():
        random.Random(f"{seed}:{k}").shuffle(pool)
    picked: list[Mutant] = []
    while len(picked) < min(n, len(mutants)):
        for pool in pools.values():
            if pool and len(picked) < n:
                picked.append(pool.pop())
    return sorted(picked, key=lambda m: m.index)


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
# the semantic operators' plans (issue 30): mutants drawn per file, spread evenly over the kinds
# (`sample_by_kind`); the selection is the whole suite (an empty tuple: no --select). "webgpu" is
# native built with the WebGPU device (webgpu.c, and webgpu.wgsl compiled into it), run with
# --device webgpu.
SEMANTIC_PLANS: dict[str, dict[str, tuple[int, tuple[str, ...]]]] = {
    "native": {"sched.c": (8, ()), "alloc.c": (4, ()), "copy.c": (4, ()), "tdata.c": (4, ()), "tensor.c": (3, ()),
               "buffer.c": (3, ()), "graph_copy.c": (3, ()), "vdev.c": (3, ()), "backend.c": (2, ()),
               "registry.c": (2, ()), "graph.c": (2, ()), "cpu.c": (2, ())},
    "rc8": {"ggml-alloc.c": (20, ()), "ggml-backend.c": (20, ()), "ggml.c": (20, ())},
    "webgpu": {"webgpu.c": (20, ()), "webgpu.wgsl": (20, ())},
}
TARGETS = ("native", "rc8", "webgpu")

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


def in_plan(which: str, text: str, m: Mutant, scope: frozenset[str] | None = None) -> bool:
    """Whether the mutant is drawn from at all: native's test instrumentation is not, nor (with
    `scope`, rc.8's ggml.c) a function outside the scope."""
    if m.file.endswith(".wgsl"):
        return True
    fn = enclosing_function(text, m.offset)
    if scope is not None and fn not in scope:
        return False
    return which not in ("native", "webgpu") or not NATIVE_EXCLUDED_FUNCTIONS.search(fn)


def ggml_c_scope(sources: dict[str, str]) -> frozenset[str]:
    """The functions of rc.8's ggml.c in the semantic plan: those ggml-backend.c and ggml-alloc.c
    call (outside their ``#if 0`` blocks), and the functions of ggml.c those call (one level: wsp_ggml_graph_compute's thread and
    dispatch, not every operation's kernel; the suite reaches the kernels of the operations it
    builds, and ggml.c's others are outside the ggml-backend API)."""
    ggml = sources["ggml.c"]
    defined = {name for name, _, _ in function_spans(ggml)}
    live = [re.sub(r"^#if 0\b.*?^#endif", "", sources[f], flags=re.M | re.S) for f in ("ggml-backend.c", "ggml-alloc.c")]
    called = {t.text for text in live for t in tokens(text) if t.kind == "id"}
    direct = defined & called
    spans = {name: (start, end) for name, start, end in function_spans(ggml)}
    helpers = {t.text for name in direct for t in tokens(ggml[spans[name][0]:spans[name][1]])
               if t.kind == "id" and t.text in defined}
    return frozenset(direct | helpers)


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

    def __init__(self, which: str, sources: dict[str, str], operators: str = "classic", headers: str = "") -> None:
        self.which = which
        self.sources = sources
        self.operators = operators
        if operators == "semantic":
            self.plan = SEMANTIC_PLANS[which]
        else:
            if which == "webgpu":
                raise UsageError("the webgpu target has only the semantic plan: add --operators semantic")
            self.plan = NATIVE_PLAN if which == "native" else RC8_PLAN
        self.all = {f: generate_mutants(sources[f], f, operators, headers) for f in self.plan}
        self._fn_areas = function_areas(sources["ggml-backend.c"]) if which == "rc8" else {}
        self.scope = {"ggml.c": ggml_c_scope(sources)} if which == "rc8" and "ggml.c" in self.plan else {}

    def in_plan(self, m: Mutant) -> bool:
        return in_plan(self.which, self.sources[m.file], m, self.scope.get(m.file))

    def selection(self, m: Mutant) -> tuple[str, ...]:
        if self.operators == "semantic":
            return ()
        if self.which == "rc8" and m.file == "ggml-backend.c":
            return self._fn_areas.get(enclosing_function(self.sources[m.file], m.offset), _RC8_DEFAULT)
        return self.plan[m.file][1]

    def planned(self, seed: int, scale: float) -> list[Mutant]:
        chosen: list[Mutant] = []
        for file, (n, _) in self.plan.items():
            pool = [m for m in self.all[file] if self.in_plan(m)]
            draw = sample_by_kind if self.operators == "semantic" else sample
            chosen += draw(pool, max(1, round(n * scale)), seed)
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
    device = ""  # ggspec check --device (empty: the default, the virtual device)

    def object_key(self, file: str) -> str:
        """The source whose object a mutant of `file` replaces."""
        return file

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
        proc = _run(["gcc", "-shared", *map(str, objs.values()), "-o", str(tmp), "-lm", "-lpthread", "-ldl"])
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


class WebgpuBuild(NativeBuild):
    """native with the WebGPU device compiled in (wgpu-native's headers, GGSPEC_HAVE_WGPU), run with
    ``--device webgpu``. A mutant of webgpu.wgsl is validated first (wgpu's shader compiler, on this
    machine's adapter: one that does not validate is `did not compile`, as the device would refuse
    it at start), then embedded as webgpu_wgsl.h beside a copy of webgpu.c, which is compiled."""

    device = "webgpu"

    def __init__(self, work: Path) -> None:
        from ggspec.native import build as nb

        wgpu = nb.wgpu_include_dir()
        if wgpu is None:
            raise RuntimeError("the webgpu target needs wgpu-native's headers (the wgpu package)")
        self._extra = [f"-I{wgpu}", "-DGGSPEC_HAVE_WGPU"]
        self._validator: object | None = None
        super().__init__(work)

    def _compile_originals(self, extra: Sequence[Path] = ()) -> None:
        self.cflags = [*self.cflags, *self._extra]
        super()._compile_originals(extra)

    def object_key(self, file: str) -> str:
        return "webgpu.c" if file == "webgpu.wgsl" else file

    def validate_wgsl(self, text: str) -> str:
        """'' if WGSL `text` validates, else the first line of the error."""
        if self._validator is None:
            import wgpu

            adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
            self._validator = adapter.request_device_sync()
        try:
            self._validator.create_shader_module(code=text)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - wgpu raises its own error types
            return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return ""

    def compile(self, file: str, text: str, dest: Path) -> tuple[bool, str]:
        if file != "webgpu.wgsl":
            return super().compile(file, text, dest)
        err = self.validate_wgsl(text)
        if err:
            return False, f"WGSL does not validate: {err}"
        (self.work / "mutsrc" / "webgpu.wgsl").write_text(text)
        body = "\n".join('    "' + ln.replace("\\", "\\\\").replace('"', '\\"') + '\\n"' for ln in text.splitlines())
        header = (self.src_dir / "webgpu_wgsl.h").read_text().split("static const char", 1)[0]
        (self.work / "mutsrc" / "webgpu_wgsl.h").write_text(header + "static const char webgpu_wgsl[] =\n" + body + ";\n")
        return super().compile("webgpu.c", (self.src_dir / "webgpu.c").read_text(), dest)


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


def _plan_files(which: str) -> list[str]:
    classic = NATIVE_PLAN if which == "native" else RC8_PLAN if which == "rc8" else {}
    return [*classic, *(f for f in SEMANTIC_PLANS[which] if f not in classic)]


def make_build(which: str, work: Path) -> tuple[Build, dict[str, str]]:
    """The target's build in `work` and its planned sources' texts."""
    build: Build
    if which in ("native", "webgpu"):
        build = NativeBuild(work) if which == "native" else WebgpuBuild(work)
    else:
        from ggspec.conformance.adapters.rc8 import ensure_rc8

        cpp, _ = ensure_rc8()
        build = Rc8Build(work, cpp)
    return build, {f: (build.src_dir / f).read_text() for f in _plan_files(which)}


def _src_dir(which: str) -> Path:
    if which in ("native", "webgpu"):
        from ggspec.native import build as nb

        return Path(nb.SRC_DIR)
    from ggspec.conformance.adapters.rc8 import ensure_rc8

    return ensure_rc8()[0]


def plan_sources(which: str) -> dict[str, str]:
    """The planned sources' texts without building anything."""
    src = _src_dir(which)
    return {f: (src / f).read_text() for f in _plan_files(which)}


def plan_headers(which: str, src: Path | None = None) -> str:
    """The headers' text the semantic operators read typedefs and structs from: rc.8's headers, or
    native/src's and native/include's."""
    src = src or _src_dir(which)
    dirs = [src] if which == "rc8" else [src, src.parent / "include"]
    return "\n".join(p.read_text(errors="replace") for d in dirs for p in sorted(d.glob("*.h")))


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


def check_command(target: str, select: Sequence[str], stage: Stage, deselect: Sequence[str] = (), device: str = ""
                  ) -> list[str]:
    cmd = [sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--seed", str(stage.seed),
           "--timeout", f"{stage.timeout:g}", "--workers", str(stage.workers), "--quiet", "--no-c-reproducers",
           "--no-cache"]  # the verdict cache keys a target by its name and library, not the mutant's build
    cmd += ["--max-examples", str(stage.examples)] if stage.examples is not None else ["--size", stage.size]
    for s in select:
        cmd += ["--select", s]
    for s in deselect:
        cmd += ["--deselect", s]
    if device:
        cmd += ["--device", device]
    return cmd


def run_check(env_extra: dict[str, str], target: str, select: Sequence[str], stage: Stage, out_json: Path,
              deselect: Sequence[str] = (), device: str = "") -> Outcome:
    """Run the suite against a build; stopped at the first failing check when `stage.stop_early`."""
    cmd = ["nice", "-n", str(stage.nice), *check_command(target, select, stage, deselect, device), "--json",
           str(out_json)]
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
            o = run_check(self.build.env(self.base), self.build.target, new, base_stage, self.work / "base.json",
                          device=self.build.device)
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
            ok, err = self.build.link(self.mut, {self.build.object_key(m.file): obj})
        if not ok:
            rec.update(verdict="did not compile", stage="compile", why=(err.strip().splitlines() or [""])[0][:200])
        rec["compile_s"] = round(time.monotonic() - t0, 2)
        return rec

    def run_stage(self, m: Mutant, rec: dict[str, object], stage: Stage) -> Outcome:
        select = self.planner.selection(m)
        o = run_check(self.build.env(self.mut), self.build.target, select, stage, self.work / "report.json",
                      self.deselect[stage.name], self.build.device)
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
        planner = Planner(args.which, sources, args.operators, plan_headers(args.which, build.src_dir))
        old: dict[str, dict[str, object]] = {}
        if args.rerun:
            mutants, old = rerun_mutants(planner, args.rerun, args.which, args.stage1_examples == 0)
            if args.stage1_examples == 0:  # the cheapest selections first, as stage 2 of a whole run takes them
                mutants.sort(key=lambda m: float(str(old[m.ident].get("stage1_s") or 0)))
        else:
            mutants = planner.planned(args.seed, args.scale)
            if args.file:  # only these files' share of the plan (the same draw as the whole plan's)
                unknown = sorted(set(args.file) - set(planner.plan))
                if unknown:
                    raise UsageError(f"--file {', '.join(unknown)}: not in the plan ({', '.join(planner.plan)})")
                mutants = [m for m in mutants if m.file in args.file]
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
    planner = Planner(args.which, plan_sources(args.which), args.operators, plan_headers(args.which))
    mutants = [m for f in planner.all for m in planner.all[f]] if args.all else planner.planned(args.seed, args.scale)
    for m in mutants:
        if args.file and m.file != args.file:
            continue
        excluded = "" if planner.in_plan(m) else "  (not in the plan: test instrumentation, or outside ggml.c's scope)"
        print(f"{m.ident:22} {m.describe()}  [--select {' '.join(planner.selection(m)) or 'all'}]{excluded}")
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
    planner = Planner(args.which, plan_sources(args.which), args.operators, plan_headers(args.which))
    m = planner.find(args.site, args.kind, args.replacement)
    build, sources = make_build(args.which, work / "build")
    obj = work / "build" / "mutsrc" / (Path(m.file).stem + ".o")
    text = m.apply(sources[m.file])
    ok, err = build.compile(m.file, text, obj)
    same = ok and build.same_object(m.file, obj)
    if ok:
        ok, err = build.link(work / "mutant", {build.object_key(m.file): obj})
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
    dev = f" --device {build.device}" if build.device else ""
    print(f"  {build.env_text(work / 'mutant')} {venv} check --target {build.target}{dev} {select} --max-examples 2 --seed 1")
    print("the unmutated build of the same sources (for comparison):")
    print(f"  {build.env_text(work / 'unmutated')} {venv} check --target {build.target}{dev} {select} --max-examples 2 "
          "--seed 1")
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
    by_kind: dict[str, dict[str, int]] = {}
    for r in recs:
        row = by_kind.setdefault(r["kind"], {})
        row[r["verdict"]] = row.get(r["verdict"], 0) + 1
    if len(by_kind) > 1:
        lines += ["", "| operator | mutants | " + " | ".join(cols) + " | killed of those whose object code differs |",
                  "|---" * (len(cols) + 3) + "|"]
        order = [k for k in (*KINDS, *SEMANTIC_KINDS) if k in by_kind]
        for k in order:
            row = by_kind[k]
            distinct = sum(row.values()) - row.get("did not compile", 0) - row.get("equivalent", 0)
            rate = f"{row.get('killed', 0)}/{distinct}" + (f" ({100 * row.get('killed', 0) / distinct:.0f} %)"
                                                             if distinct else "")
            lines.append(f"| {k} | {sum(row.values())} | " + " | ".join(str(row.get(c, 0)) for c in cols)
                         + f" | {rate} |")
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
            lines.append(f"| {site(r)} | {r['verdict']} | {stage} | {' '.join(r['select']) or 'all'} | {notes.get(key, '')} |")
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
  run native|rc8|webgpu --operators semantic --out OUT.jsonl [...]
                                           the same with the semantic operators and their plans
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
    if argv and argv[0] in TARGETS:
        argv = ["run", *argv]  # the older spelling
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=USAGE,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="a mutation run")
    run.add_argument("which", choices=TARGETS)
    run.add_argument("--operators", choices=("classic", "semantic"), default="classic",
                     help="the classic operators (KINDS) or the semantic ones (SEMANTIC_KINDS), each with its plan")
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
    run.add_argument("--file", action="append", help="only this planned file's mutants (repeatable)")
    lst = sub.add_parser("list", help="list mutants")
    lst.add_argument("which", choices=TARGETS)
    lst.add_argument("--operators", choices=("classic", "semantic"), default="classic")
    lst.add_argument("--all", action="store_true", help="every mutant, not only the planned ones")
    lst.add_argument("--file", help="only this source file")
    lst.add_argument("--seed", type=int, default=1)
    lst.add_argument("--scale", type=float, default=1.0)
    one = sub.add_parser("one", help="build one mutant into a folder and print how to run the suite against it",
                         description=cmd_one.__doc__)
    one.add_argument("which", choices=TARGETS)
    one.add_argument("--operators", choices=("classic", "semantic"), default="classic")
    one.add_argument("site", help="FILE#K (see `list --all`) or FILE:LINE[:COL], e.g. sched.c:304 or ggml-backend.c:816")
    one.add_argument("--dir", type=Path, required=True, help="the folder to build into (emptied first)")
    one.add_argument("--kind", choices=(*KINDS, *SEMANTIC_KINDS), help="which mutation at the site")
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
