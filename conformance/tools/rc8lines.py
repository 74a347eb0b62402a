"""Which lines of rc.8's C each clause describes: the `- rc8:` head line, resolved.

Every clause head carries `- rc8:` with anchors into the rc.8 sources, by name, never by line
number (the spec is in our words and holds no rc.8 code)::

    - rc8: ggml-alloc.c ggml_tallocr_alloc; ggml.h `define GGML_MAX_DIMS`
    - rc8: none — <why rc.8 has no code for this clause>

An anchor is a file of `package/cpp/` followed by one or more items: a name (a function, struct,
enum, union or macro, written without whisper.rn's `wsp_` prefix) resolves to its whole
definition, first line to closing brace; a `fragment` in backticks resolves to every line that
contains it (whisper.rn's `wsp_`/`WSP_` prefixes removed before matching, runs of spaces as one);
a span `` `first`..`last` `` resolves to the lines from each line containing `first` to the next
line (at or after it) containing `last` (a part of a long function: one pass of
sched_split_graph, say).

A clause whose anchors a person has read against rc.8's lines carries `- rc8-reviewed: DATE`
(reference/clauses.py reads it); the others were proposed by a script and wait for review.
The lines are read at run time from the rc.8 package in the cache (`ensure_rc8` fetches it); no
line number and no line of rc.8 is kept in the repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..adapters.rc8 import PACKAGE, rc8_dir
from ..errors import AnchorError, SourcesMissing

#: the files anchors may name (ggml's own sources in whisper.rn's package/cpp/)
FILES = ("ggml.c", "ggml.h", "ggml-alloc.c", "ggml-alloc.h", "ggml-backend.c", "ggml-backend.h",
         "ggml-backend-impl.h", "ggml-impl.h", "ggml-quants.c", "ggml-quants.h")

_NONE = re.compile(r"^none\s+(?:—|--)\s*(\S.*)$")
_ITEM = re.compile(r"`([^`]+)`|([A-Za-z_]\w*)")
_PREFIX = re.compile(r"\b(?:wsp_|WSP_)")


@dataclass(frozen=True)
class Anchor:
    file: str
    item: str  # a name, or a fragment
    fragment: bool
    #: a span's last fragment (`item`..`until`)
    until: str | None = None

    def __str__(self) -> str:
        if self.until is not None:
            return f"{self.file} `{self.item}`..`{self.until}`"
        return f"{self.file} `{self.item}`" if self.fragment else f"{self.file} {self.item}"


@dataclass(frozen=True)
class Rc8Head:
    anchors: tuple[Anchor, ...]
    gap: str | None  # the reason, for `none — reason`


def parse_head(value: str) -> Rc8Head:
    """Parse the value of a `- rc8:` line. AnchorError when it is malformed."""
    value = value.strip()
    if value.startswith("none"):
        m = _NONE.match(value)
        if m is None:
            raise AnchorError(f"rc8: {value!r}: a gap is written `none — <reason>`")
        return Rc8Head((), m.group(1).strip())
    anchors: list[Anchor] = []
    for part in value.split(";"):
        part = part.strip()
        file, _, rest = part.partition(" ")
        if file not in FILES:
            raise AnchorError(f"rc8: {part!r}: {file!r} is not one of {', '.join(FILES)}")
        pos = 0
        rest = rest.strip()
        while pos < len(rest):
            m = _ITEM.match(rest, pos)
            if m is None:
                raise AnchorError(f"rc8: {part!r}: expected a name or a `fragment` at {rest[pos:]!r}")
            if m.group(1) is not None and rest.startswith("..", m.end()):
                end = _ITEM.match(rest, m.end() + 2)
                if end is None or end.group(1) is None:
                    raise AnchorError(f"rc8: {part!r}: a span is written `first`..`last`")
                anchors.append(Anchor(file, m.group(1), True, end.group(1)))
                m = end
            elif m.group(1) is not None:
                anchors.append(Anchor(file, m.group(1), True))
            else:
                anchors.append(Anchor(file, m.group(2), False))
            pos = m.end()
            while pos < len(rest) and rest[pos] in " ,":
                pos += 1
        if not rest:
            raise AnchorError(f"rc8: {part!r}: a file needs at least one name or fragment")
    return Rc8Head(tuple(anchors), None)


def sources_dir() -> Path:
    """`package/cpp/` of the cached rc.8 package; SourcesMissing (saying how to get it) if absent."""
    cpp = rc8_dir() / "package" / "cpp"
    if not (cpp / "ggml-backend.c").is_file():
        raise SourcesMissing(
            f"the rc.8 sources are not in {cpp}: run `ggspec check --target rc8` once (it fetches "
            f"{PACKAGE} with npm), or set GGSPEC_RC8_TARBALL to a copy of the tarball")
    return cpp


@dataclass(frozen=True)
class Definition:
    name: str  # without the wsp_ prefix
    kind: str  # function | struct | enum | union | macro
    start: int  # 1-based, inclusive
    end: int


def _strip(name: str) -> str:
    """Our name for an rc.8 name: without `wsp_` (and `dewsp_quantize` is `dequantize`)."""
    return _PREFIX.sub("", name).replace("dewsp_quantize", "dequantize")


def definitions(text: str) -> list[Definition]:
    """The top-level definitions of a C file: functions with a body, tagged struct/enum/union
    bodies and #defines, with their line ranges."""
    out: list[Definition] = []
    lines = text.split("\n")
    # macros
    i = 0
    while i < len(lines):
        m = re.match(r"\s*#\s*define\s+(\w+)", lines[i])
        if m:
            j = i
            while lines[j].rstrip().endswith("\\") and j + 1 < len(lines):
                j += 1
            out.append(Definition(_strip(m.group(1)), "macro", i + 1, j + 1))
            i = j
        i += 1
    # braces at top level: blank out comments, strings, chars and preprocessor lines first
    clean = _blank(text)
    depth = 0
    header_start = 0  # offset where the current top-level declaration begins
    open_at: tuple[int, str, str] | None = None  # (offset, kind, name)
    line_of = _line_index(clean)
    for pos, ch in enumerate(clean):
        if ch == "{":
            if depth == 0:
                header = clean[header_start:pos]
                if re.search(r'extern\s*$', header) or re.search(r'extern\s+"C"\s*$', text[header_start:pos]):
                    header_start = pos + 1
                    continue
                open_at = (header_start + len(header) - len(header.lstrip()), *_classify(header))
            depth += 1
        elif ch == "}":
            if depth == 0:  # the closing brace of an extern "C" block
                header_start = pos + 1
                continue
            depth -= 1
            if depth == 0:
                if open_at is not None and open_at[1]:
                    out.append(Definition(_strip(open_at[2]), open_at[1], line_of(open_at[0]), line_of(pos)))
                open_at = None
                header_start = pos + 1
        elif ch == ";" and depth == 0:
            header_start = pos + 1
    return out


def _classify(header: str) -> tuple[str, str]:
    """What a top-level `{` opens: (kind, name), or ("", "") for initialisers and the like."""
    h = " ".join(header.split())
    m = re.search(r"\b(struct|enum|union)\s+(\w+)\s*$", h)
    if m:
        return m.group(1), m.group(2)
    if "=" in h:
        return "", ""
    m = re.match(r"[^(]*?(\w+)\s*\(", h)
    if m and re.search(r"\)[\s\w]*$", h):
        return "function", m.group(1)
    return "", ""


def _blank(text: str) -> str:
    """`text` with comments, string and char literals and preprocessor lines replaced by spaces
    (newlines kept, so offsets and line numbers stay)."""
    out = list(text)
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            i += 1
            continue
        if at_line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 1
                j += 1
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        at_line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def _line_index(text: str):  # type: ignore[no-untyped-def]
    import bisect
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return lambda offset: bisect.bisect_right(starts, offset)


@cache
def _file(cpp: Path, name: str) -> tuple[list[str], dict[str, list[Definition]]]:
    text = (cpp / name).read_text(encoding="utf-8", errors="replace")
    index: dict[str, list[Definition]] = {}
    for d in definitions(text):
        index.setdefault(d.name, []).append(d)
    return text.split("\n"), index


def normalise(line: str) -> str:
    """A source line as anchors and messages are matched against it: no `wsp_`/`WSP_`
    prefixes, runs of white space as one space."""
    return " ".join(_PREFIX.sub("", line).split())


@dataclass(frozen=True)
class Lines:
    anchor: Anchor
    ranges: tuple[tuple[int, int], ...]  # 1-based inclusive

    def __str__(self) -> str:
        spans = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in self.ranges)
        return f"{self.anchor.file}:{spans}"


def resolve(anchor: Anchor, cpp: Path | None = None) -> Lines:
    """The line ranges of `anchor` in the cached rc.8 sources. AnchorError if it names nothing."""
    cpp = sources_dir() if cpp is None else cpp
    lines, index = _file(cpp, anchor.file)
    if anchor.fragment:
        want = normalise(anchor.item)
        hits = [i + 1 for i, line in enumerate(lines) if want in normalise(line)]
        if not hits:
            raise AnchorError(f"{anchor}: no line of rc.8's {anchor.file} contains this fragment")
        if anchor.until is None:
            return Lines(anchor, tuple((h, h) for h in hits))
        last = normalise(anchor.until)
        spans = []
        for h in hits:
            end = next((i + 1 for i in range(h - 1, len(lines)) if last in normalise(lines[i])), None)
            if end is None:
                raise AnchorError(f"{anchor}: no line at or after {anchor.file}:{h} contains `{anchor.until}`")
            spans.append((h, end))
        return Lines(anchor, tuple(spans))
    found = index.get(anchor.item)
    if not found:
        raise AnchorError(f"{anchor}: rc.8's {anchor.file} defines no function, type or macro named so")
    return Lines(anchor, tuple((d.start, d.end) for d in found))


def clause_lines(head: Rc8Head, cpp: Path | None = None) -> list[Lines]:
    return [resolve(a, cpp) for a in head.anchors]


def text_of(lines: Lines, cpp: Path | None = None) -> list[str]:
    """The source lines of a resolved anchor, as `file:N: text` (read from the cache, printed,
    never stored)."""
    cpp = sources_dir() if cpp is None else cpp
    src, _ = _file(cpp, lines.anchor.file)
    return [f"{lines.anchor.file}:{n}: {src[n - 1]}" for a, b in lines.ranges for n in range(a, b + 1)]


def enclosing(file: str, line: int, cpp: Path | None = None) -> list[Definition]:
    """The definitions of `file` whose range holds `line` (for proposing anchors)."""
    cpp = sources_dir() if cpp is None else cpp
    _, index = _file(cpp, file)
    return [d for ds in index.values() for d in ds if d.start <= line <= d.end and d.kind != "macro"]


def rc8_listing(clause_id: str) -> list[str]:
    """`ggspec clause ID`'s rc.8 part: each anchor with its file:line ranges in the cached
    sources (or where to get them), or the gap's reason."""
    from ggspec.reference.clauses import clause

    value = clause(clause_id).rc8
    if value is None:
        return ["rc.8 lines: none given (the clause has no `- rc8:` head line)"]
    head = parse_head(value)
    if head.gap is not None:
        return [f"rc.8 lines: none — {head.gap}"]
    try:
        cpp = sources_dir()
    except SourcesMissing as exc:
        return [f"rc.8 lines: {exc}"]
    out = [f"rc.8 lines (in {cpp}):"]
    for a in head.anchors:
        try:
            out.append(f"  {a}: {resolve(a, cpp)}")
        except AnchorError as exc:
            out.append(f"  {exc}")
    return out
