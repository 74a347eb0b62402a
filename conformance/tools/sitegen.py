"""The generated pages of the docs site: spec chapters with an anchor per clause, the
traceability matrix with statuses, errata, changes, limits and the API pages.

Nothing here is written by hand into docs/: `docs/build.py` stages docs/ and spec/ into the
build directory and writes these pages there, so they follow spec/ and reference/ as they are.

- `anchored_chapter(text)`: a spec chapter with, before each clause head `### ID: title`, a MyST
  target `(ID)=` (so other pages can `{ref}` it; docs/conf.py makes `ID`, as written, the
  section's one anchor, so `spec/tdata.html#TDATA-3` lands on the clause);
- `matrix_page(reports)`: clause → enforcing places in reference/ (linked to the source) →
  covering checks → the status of each report file given (`GGSPEC_DOCS_REPORTS`);
- `errata_page(reports)`, `changes_page()`, `limits_page()`, `api_pages()`.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ggspec.reference.clauses import SPEC_DIR, catalogue

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "reference"

_HEAD = re.compile(r"^### ([A-Z]+-\d+): (.+)$")
_KEY = re.compile(r"^- ([a-z][a-z_ ]*): (.+)$")
_NOTE = re.compile(r"^\*\*(Changed in rc\.8|Changed after rc\.8[^*]*?|Erratum)\.?\*\*\s*")
_MARKERS = {"require": 1, "required": 1, "undefined": 0, "implements": None}

#: the chapters in reading order (the spec's own order, README.md first); others follow by name
CHAPTER_ORDER = ("README.md", "core.md", "buft.md", "buffer.md", "tdata.md", "copy.md", "backend.md", "registry.md",
                 "cpu.md", "alloc.md", "graph_copy.md", "sched.md")


@dataclass
class ClauseText:
    """One clause as written: its head keys and its prose, with the notes split out."""

    id: str
    title: str
    chapter: str
    keys: dict[str, str]
    prose: list[str] = field(default_factory=list)
    #: "Changed in rc.8" / "Changed after rc.8 (upstream …)" / "Erratum" → the note's text
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def area(self) -> str:
        return self.id.split("-")[0]

    @property
    def rule(self) -> str:
        """The prose before the first bold-labelled paragraph (Why., notes)."""
        out: list[str] = []
        for para in _paragraphs(self.prose):
            if para.startswith("**"):
                break
            out.append(para)
        return "\n\n".join(out)


def _paragraphs(lines: list[str]) -> list[str]:
    paras: list[str] = []
    cur: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            cur.append(line)
        elif cur:
            paras.append("\n".join(cur))
            cur = []
    return paras


def _scan(text: str) -> Iterator[tuple[str, re.Match[str] | None, bool]]:
    """Each line of a chapter: the line, its clause head's match (None for any other line and
    inside a ``` fence), and whether it is inside a fence."""
    in_fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        yield line, None if in_fence else _HEAD.match(line), in_fence


def read_chapter(text: str, chapter: str) -> list[ClauseText]:
    """The clauses of one chapter with their keys (any `- key: value` line of the head) and prose."""
    clauses: list[ClauseText] = []
    cur: ClauseText | None = None
    in_head = False
    for line, m, in_fence in _scan(text):
        if m is not None:
            cur = ClauseText(m.group(1), m.group(2).strip(), chapter, {})
            clauses.append(cur)
            in_head = True
            continue
        if not in_fence and line.startswith("## "):
            cur, in_head = None, False
            continue
        if cur is None:
            continue
        if in_head and (k := _KEY.match(line)):
            cur.keys[k.group(1)] = k.group(2).strip()
            continue
        in_head = False
        cur.prose.append(line)
    for c in clauses:
        label: str | None = None
        for para in _paragraphs(c.prose):
            n = _NOTE.match(para)
            if n is not None:
                label = n.group(1).strip()
                c.notes[label] = para[n.end():]
            elif para.startswith("**"):
                label = None
            elif label is not None:  # a note of several paragraphs
                c.notes[label] += "\n\n" + para
    return clauses


def chapters() -> list[Path]:
    """spec/*.md in reading order."""
    paths = {p.name: p for p in SPEC_DIR.glob("*.md")}
    known = [paths[n] for n in CHAPTER_ORDER if n in paths]
    return known + sorted(p for n, p in paths.items() if n not in CHAPTER_ORDER)


def clause_texts() -> dict[str, ClauseText]:
    """Every clause of spec/, by ID, in chapter order."""
    out: dict[str, ClauseText] = {}
    for path in chapters():
        if path.name != "README.md":
            for c in read_chapter(path.read_text(encoding="utf-8"), path.name):
                out[c.id] = c
    return out


def chapter_title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


# --- spec chapters with anchors ------------------------------------------------------------------


def anchored_chapter(text: str) -> str:
    """The chapter with a MyST target `(ID)=` before each clause head."""
    out: list[str] = []
    for line, m, _ in _scan(text):
        if m is not None:
            cid = m.group(1)
            out += [f"({cid})=", ""]
        out.append(line)
    return "\n".join(out) + "\n"


def ref(cid: str) -> str:
    """A MyST cross-reference to a clause's target."""
    return f"{{ref}}`{cid} <{cid}>`"


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


# --- enforcing places, with qualified names ------------------------------------------------------


@dataclass(frozen=True)
class Place:
    module: str  # e.g. "tdata"
    line: int
    qualname: str  # the documented object that holds the line (a top-level function or a class's method)

    @property
    def label(self) -> str:
        return f"{self.module}.py:{self.line} {self.qualname}"

    @property
    def source_href(self) -> str:
        """The line's object in Sphinx viewcode's highlighted source (relative to the site root)."""
        return f"_modules/ggspec/reference/{self.module}.html#{self.qualname}"


def _documented_defs(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(qualname, node) of top-level functions, classes and their methods."""
    out: list[tuple[str, ast.AST]] = []
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((top.name, top))
        elif isinstance(top, ast.ClassDef):
            out.append((top.name, top))
            out += [(f"{top.name}.{m.name}", m) for m in top.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return out


def _clause_args(node: ast.Call) -> list[str]:
    if not isinstance(node.func, ast.Name) or node.func.id not in _MARKERS:
        return []
    pos = _MARKERS[node.func.id]
    args = node.args if pos is None else node.args[pos: pos + 1]
    return [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value in catalogue()]


def places() -> dict[str, list[Place]]:
    """Clause ID → the places in reference/ that enforce it (as `trace.enforcing_places`, with
    the qualified name of the documented object around each)."""
    found: dict[str, list[Place]] = {}
    for path in sorted(REFERENCE_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for qualname, obj in _documented_defs(tree):
            if isinstance(obj, ast.ClassDef):
                continue
            for node in ast.walk(obj):
                if isinstance(node, ast.Call):
                    for cid in _clause_args(node):
                        p = Place(path.stem, node.lineno, qualname)
                        if p not in found.setdefault(cid, []):
                            found[cid].append(p)
    return found


# --- reports -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """A `ggspec check --json` report: its label (`target@profile`) and status per clause."""

    label: str
    status: dict[str, str]
    #: undefined-behaviour point → (confirmed | not observed | not reached, how): what the target
    #: did where the reference stopped at undefined behaviour (conformance/engine/after_ub.py)
    ub: dict[str, tuple[str, str]] = field(default_factory=dict)

    @staticmethod
    def load(path: Path) -> Report:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            status = {str(c["id"]): str(c["status"]) for c in data["clauses"]}
            ub = {str(k): (str(v.get("status", "")), str(v.get("detail", "")))
                  for k, v in (data.get("undefined_behaviour") or {}).items()}
            return Report(f"{data['target']}@{data['profile']}", status, ub)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a ggspec report ({exc})") from None


def load_reports(paths: Iterable[str | Path]) -> list[Report]:
    return [Report.load(Path(p)) for p in paths if str(p).strip()]


def _status_columns(reports: list[Report]) -> tuple[list[str], list[str]]:
    """Heads of the status columns: one per report, or native and rc8 saying "no report"."""
    if reports:
        return [r.label for r in reports], ["---"] * len(reports)
    return ["native", "rc8"], ["---", "---"]


def _status(reports: list[Report], cid: str) -> list[str]:
    if not reports:
        return ["no report", "no report"]
    return [r.status.get(cid, "not in report") for r in reports]


# --- pages ---------------------------------------------------------------------------------------


def _chapter_link(chapter: str) -> str:
    return f"../spec/{chapter}"


def matrix_page(reports: list[Report]) -> str:
    from .trace import covering_checks

    where, cover = places(), covering_checks()
    heads, rules = _status_columns(reports)
    lines = [
        "# Traceability matrix",
        "",
        "Generated when the site is built (`docs/build.py`, from `ggspec.conformance.tools.sitegen`): every clause of",
        "spec/, the place in reference/ that enforces it (linked to the highlighted source), the checks",
        "that cover it, and its status in each report file given to the build",
        "(`GGSPEC_DOCS_REPORTS=report-native.json,report-rc8.json`, from `ggspec check --json`).",
        "Without reports the status columns say *no report*.",
        "",
        f"{len(catalogue())} clauses; reports: {', '.join(r.label for r in reports) or 'none'}.",
        "",
        "| clause | kind | title | reference/ | checks | " + " | ".join(heads) + " |",
        "|---|---|---|---|---|" + "|".join(rules) + "|",
    ]
    for cid, c in catalogue().items():
        enf = "<br>".join(f'<a class="source" href="../{p.source_href}">{p.label}</a>' for p in where.get(cid, [])) or "**none**"
        chk = "<br>".join(f"`{n}`" for n in cover.get(cid, [])) or "**none**"
        lines.append(f"| {ref(cid)} | {c.kind} | {_cell(c.title)} | {enf} | {chk} | " + " | ".join(_status(reports, cid)) + " |")
    return "\n".join(lines) + "\n"


_SEEN_KEYS = ("observed", "confirmed", "rc8 observed", "seen")


def seen_on_rc8(c: ClauseText) -> str:
    """What the spec records about rc.8 actually misbehaving: a head key (`observed: confirmed`
    or `not observed`) where the clause has one, else what the erratum's prose says (a report
    of an rc8 run, where given, says more: `errata_page`)."""
    for key in _SEEN_KEYS:
        if key in c.keys:
            return c.keys[key]
    text = c.notes.get("Erratum", "")
    if re.search(r"not observed|could not be observed|not seen", text):
        return "not observed (see the erratum)"
    if re.search(r"confirmed|on the real build|real build", text):
        return "seen on the real build (see the erratum)"
    return "not recorded"


def errata_page(reports: list[Report]) -> str:
    texts = clause_texts()
    errata = [c for c in texts.values() if "erratum" in c.keys]
    rc8 = [r for r in reports if r.label.startswith("rc8")]
    lines = [
        "# Errata",
        "",
        "Generated from spec/ when the site is built. An erratum is a clause where rc.8 does something",
        "that is likely a defect; profile `rc8` expects what rc.8 does, profile `fixed` the corrected",
        "behaviour (see [Profiles and errata](profiles-and-errata.md)).",
        "",
        f"{len(errata)} errata.",
        "",
    ]
    for c in errata:
        lines += [
            f"## {c.id}: {c.title}",
            "",
            f"Clause {ref(c.id)} ({c.keys.get('kind', '?')}, chapter [{c.chapter}]({_chapter_link(c.chapter)})).",
            "",
            f"- **fixed behaviour** (profile `fixed`): {c.keys['erratum']}",
            f"- **rc.8 seen to misbehave**: {seen_on_rc8(c)}",
        ]
        for r in rc8:
            lines.append(f"- **{r.label} report**: clause {r.status.get(c.id, 'not in report')}")
            if c.id in r.ub:
                verdict, how = r.ub[c.id]
                lines.append(f"- **undefined behaviour on {r.label}**: {verdict}{f' ({_cell(how)})' if how else ''}")
        if not rc8:
            lines.append("- **rc8 report**: no report given to the build")
        lines += ["", "**rc.8's behaviour.** " + (c.notes.get("Erratum") or "(the clause has no Erratum paragraph)"), ""]
    return "\n".join(lines)


def changes_page() -> str:
    texts = clause_texts()
    titles = {p.name: chapter_title(p) for p in chapters()}
    lines = [
        "# Changes",
        "",
        "Generated from spec/ when the site is built: every *Changed in rc.8* note (how rc.8 differs from",
        "rc.6, the seed's `-` side) and every *Changed after rc.8* note (how a later upstream build",
        "differs), by area.",
        "",
    ]
    for kind, title in (("Changed in rc.8", "Changed in rc.8 (since rc.6)"), ("Changed after rc.8", "Changed after rc.8")):
        notes = [(c, label, text) for c in texts.values() for label, text in c.notes.items() if label.startswith(kind)]
        lines += [f"## {title}", "", f"{len(notes)} notes.", ""]
        by_chapter: dict[str, list[tuple[ClauseText, str, str]]] = {}
        for item in notes:
            by_chapter.setdefault(item[0].chapter, []).append(item)
        for chapter, items in by_chapter.items():
            lines += [f"### {titles.get(chapter, chapter)} ({kind.lower()})", ""]
            for c, label, text in items:
                since = label[len(kind):].strip(" ()")
                lines.append(f"- {ref(c.id)} *{_cell(c.title)}*{f' ({since})' if since else ''}: {' '.join(text.split())}")
            lines.append("")
    return "\n".join(lines)


# --- limits --------------------------------------------------------------------------------------


@dataclass
class Limit:
    name: str  # e.g. "sched.MAX_SPLITS" or "sched.MAX_SPLITS * MAX_SPLIT_INPUTS"
    value: int
    comment: str
    clauses: list[str] = field(default_factory=list)


def _int_constants(tree: ast.Module) -> dict[str, tuple[int, str]]:
    """Module-level `NAME = <int literal>` (comment after it kept)."""
    out: dict[str, tuple[int, str]] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if (isinstance(target, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]*", target.id) and isinstance(value, ast.Constant)
                and type(value.value) is int):
            out[target.id] = (value.value, "")
    return out


def _clauses_in(node: ast.AST) -> list[str]:
    found: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            found += [c for c in _clause_args(sub) if c not in found]
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in catalogue() and sub.value not in found:
            found.append(sub.value)
    return found


def _decorator_clauses(fn: ast.AST) -> list[str]:
    out: list[str] = []
    for d in getattr(fn, "decorator_list", []):
        if isinstance(d, ast.Call):
            out += _clause_args(d)
    return out


def _eval_const(node: ast.AST, consts: dict[str, int]) -> int | None:
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub)):
        a, b = _eval_const(node.left, consts), _eval_const(node.right, consts)
        if a is None or b is None:
            return None
        return a * b if isinstance(node.op, ast.Mult) else a + b if isinstance(node.op, ast.Add) else a - b
    return None


def limits() -> list[Limit]:
    """The constants of reference/ that a clause relies on, each with the clauses: those named in
    the statement that uses it, else those its function enforces, else those of the functions of
    the same module that call it. Products of constants (`MAX_SPLITS * MAX_SPLIT_INPUTS`) are
    listed as constants of their own."""
    found: dict[str, Limit] = {}
    for path in sorted(REFERENCE_DIR.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        own = _int_constants(tree)
        consts = {n: v for n, (v, _) in own.items()}
        for imp in (n for n in tree.body if isinstance(n, ast.ImportFrom)):
            for alias in imp.names:
                if re.fullmatch(r"[A-Z][A-Z0-9_]*", alias.name):
                    consts.setdefault(alias.asname or alias.name, -1)
        lines = source.splitlines()
        for name, (value, _) in own.items():
            row = next((ln for ln in lines if re.match(rf"{name}\b.*=", ln)), "")
            comment = row.split("#", 1)[1].strip() if "#" in row else ""
            found[f"{path.stem}.{name}"] = Limit(f"{path.stem}.{name}", value, comment)
        defs = [(q, d) for q, d in _documented_defs(tree) if not isinstance(d, ast.ClassDef)]
        callers: dict[str, list[str]] = {}
        for q, d in defs:
            for sub in ast.walk(d):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                    callers.setdefault(sub.func.id, []).append(q)
        fn_clauses = {q: _decorator_clauses(d) + [c for c in _clauses_in(d) if c not in _decorator_clauses(d)] for q, d in defs}
        for q, d in defs:
            for stmt in ast.walk(d):
                if not isinstance(stmt, ast.stmt) or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For,
                                                                        ast.While, ast.With, ast.Try)):
                    continue
                names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in consts}
                if not names:
                    continue
                here = _clauses_in(stmt) or fn_clauses.get(q, []) or [
                    c for caller in callers.get(q.split(".")[-1], []) for c in fn_clauses.get(caller, [])]
                for n in names:
                    key = f"{path.stem}.{n}" if n in own else None
                    if key is None:  # imported: attribute to the defining module's entry
                        key = next((k for k in found if k.endswith(f".{n}")), None)
                    if key is not None:
                        found[key].clauses += [c for c in here if c not in found[key].clauses]
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mult):
                        parts = [x for x in (sub.left, sub.right) if isinstance(x, ast.Name) and consts.get(x.id, 0) > 0]
                        v = _eval_const(sub, consts)
                        if len(parts) == 2 and v is not None:
                            key = f"{path.stem}.{ast.unparse(sub)}"
                            lim = found.setdefault(key, Limit(key, v, "a product of two limits"))
                            lim.clauses += [c for c in here if c not in lim.clauses]
    return [lim for lim in found.values() if lim.clauses]


def limits_page() -> str:
    texts = clause_texts()
    cat = catalogue()
    lines = [
        "# Limits",
        "",
        "Generated when the site is built: every constant of reference/ that a clause relies on (read",
        "from reference/'s source: the clauses enforced where the constant is used), then the clauses",
        "of kind `limit` and the assert clauses whose message names a `GGML_MAX_…` bound.",
        "",
        "| constant | value | clauses | note |",
        "|---|---|---|---|",
    ]
    for lim in sorted(limits(), key=lambda x: x.name):
        cl = ", ".join(f"{ref(c)} {_cell(cat[c].title)}" for c in lim.clauses)
        lines.append(f"| `{lim.name}` | {lim.value} | {cl} | {_cell(lim.comment)} |")
    lines += ["", "## Clauses of kind `limit`", ""]
    for c in texts.values():
        if c.keys.get("kind") == "limit":
            lines += [f"- {ref(c.id)} *{_cell(c.title)}*: {' '.join(c.rule.split())}"]
    lines += ["", "## Asserts on a fixed bound", ""]
    for c in texts.values():
        msg = c.keys.get("message", "")
        if c.keys.get("kind") == "assert" and re.search(r"GGML_MAX_\w+|\b\d{2,}\b", msg):
            lines.append(f"- {ref(c.id)} *{_cell(c.title)}*: `{msg}`")
    return "\n".join(lines) + "\n"


# --- API pages -----------------------------------------------------------------------------------


def api_modules() -> list[str]:
    """reference/'s modules, in the order of the API's areas (README's list), then the rest."""
    order = ["types", "tensor", "graph", "ops", "quants", "buffer", "tdata", "copy", "backend", "registry", "cpu", "vdev",
             "alloc", "sched", "graph_copy", "world", "clauses"]
    have = sorted(p.stem for p in REFERENCE_DIR.glob("*.py") if p.stem != "__init__")
    return [m for m in order if m in have] + [m for m in have if m not in order]


def api_pages() -> dict[str, str]:
    """file name (under api/) → page: autodoc of one reference module (private members too, so the
    matrix can link every enforcing function's source)."""
    pages = {}
    for mod in api_modules():
        pages[f"{mod}.md"] = "\n".join([
            f"# ggspec.reference.{mod}",
            "",
            "```{eval-rst}",
            f".. automodule:: ggspec.reference.{mod}",
            "   :members:",
            "   :undoc-members:",
            "   :private-members:",
            "   :member-order: bysource",
            "```",
            "",
        ])
    pages["index.md"] = "\n".join([
        "# The reference model's API",
        "",
        "Rendered from the docstrings of `ggspec.reference` (folder reference/), one page per module; each",
        "function's *[source]* link shows its code.",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        "",
        *api_modules(),
        "```",
        "",
    ])
    return pages
