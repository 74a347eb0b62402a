"""Which checks `ggspec check --changed [REV]` runs: those the changed files can reach.

The changed files are `git diff --name-only REV` (default HEAD: the uncommitted changes) plus the
untracked files git does not ignore. Each one selects checks by one rule, and the run prints one
line per file saying which rule and what it selected:

- native/src/NAME.c or .h, native/NAME.py, native/cdef/NAME*: the API area NAME (the native
  sources are named after reference/'s modules; the shared kernels map through `NATIVE_AREAS`)
  → the clauses reference/NAME.py enforces (the traceability matrix, tools/trace.py) → the
  checks covering those clauses;
- reference/NAME.py: the clauses it enforces → their checks;
- spec/NAME.md: the clauses of that chapter → their checks;
- conformance/checks/NAME.py: the checks it defines, and those of every check module importing it;
- conformance/inputs/NAME.py (what checks draw): the checks of every check module importing it;
- files no check reads (docs/, bench/, tests/, *.md at the top, .ci/): nothing;
- anything else (the engine, the adapters, the build, a shared header, a file it cannot place):
  every check.

Not a git repository, or a REV git does not know: `ChangedError` (one line, exit code 2).
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ggspec.reference.clauses import catalogue

from ..engine.registry import Check
from ..errors import ChangedError

ROOT = Path(__file__).resolve().parents[2]

#: native sources not named after one reference module: the reference modules whose areas they serve
NATIVE_AREAS: dict[str, tuple[str, ...]] = {
    "kernels": ("ops", "quants"),
    "simd": ("ops", "quants"),
    "simd_avx2": ("ops", "quants"),
    "simd_avx512": ("ops", "quants"),
    "executor": ("cpu", "ops"),
    "threads": ("cpu",),
    "alloc_failure": ("alloc", "buffer"),
}
#: folders and files whose changes no check can see
_INERT = ("docs/", "bench/", "tests/", ".ci/", ".github/", "README.md", ".gitignore")

REFERENCE_DIR = ROOT / "reference"
_MARKERS = {"require": 1, "required": 1, "undefined": 0, "implements": None}


def enforcing_places() -> dict[str, list[str]]:
    """Clause ID → ["module.py:line function", ...] in reference/."""
    places: dict[str, list[str]] = {}
    for path in sorted(REFERENCE_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                    continue
                which = node.func.id
                if which not in _MARKERS:
                    continue
                pos = _MARKERS[which]
                args = node.args if pos is None else node.args[pos : pos + 1]
                for arg in args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value in catalogue():
                        where = f"{path.name}:{node.lineno} {fn.name}"
                        if where not in places.setdefault(arg.value, []):
                            places[arg.value].append(where)
    return places



@dataclass(frozen=True)
class Reason:
    path: str
    why: str  # how the file reaches its checks
    checks: frozenset[str] | None  # None: every check

    def line(self, total: int) -> str:
        n = total if self.checks is None else len(self.checks)
        return f"  {self.path}: {self.why} -> {'every check' if self.checks is None else f'{n} check(s)'}"


def changed_files(rev: str, root: Path | None = None) -> list[str]:
    """The changed and untracked files, relative to the project root."""
    root = ROOT if root is None else root

    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            raise ChangedError("--changed needs git, and git is not installed") from None
        if done.returncode != 0:
            msg = (done.stderr.strip().splitlines() or ["git failed"])[-1]
            raise ChangedError(f"--changed {rev}: {msg}")
        return done.stdout

    try:
        git("rev-parse", "--show-toplevel")
    except ChangedError:
        raise ChangedError(f"--changed: {root} is not in a git repository (use --select instead)") from None
    try:
        git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except ChangedError:  # --quiet: git says nothing, only its exit status
        raise ChangedError(f"--changed {rev}: no commit, branch or tag {rev!r} in the repository at {root} "
                           "(the revision to compare the working tree with: HEAD~1, origin/main, a commit)") from None
    names = git("diff", "--name-only", "--relative", rev, "--").splitlines()
    names += git("ls-files", "--others", "--exclude-standard").splitlines()
    return sorted({n for n in names if n})  # (both answer relative to root)


def _imports(path: Path, package: str) -> set[str]:
    """The modules of checks/ and inputs/ (as "checks.NAME", "inputs.NAME") one module imports."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            where = (node.module or "").split(".")
            if node.level == 1:  # from ._graphs import ..., from . import _graphs
                base = [package, *[w for w in where if w]]
            elif node.level == 2 and where[:1] in (["checks"], ["inputs"]):
                base = where
            elif node.level == 0 and where[:2] == ["ggspec", "conformance"] and where[2:3] in (["checks"], ["inputs"]):
                base = where[2:]
            else:
                continue
            if len(base) >= 2:
                out.add(".".join(base[:2]))
            else:
                out.update(f"{base[0]}.{a.name}" for a in node.names)
    return out


def _importers(package: Path) -> dict[str, set[str]]:
    """"checks.NAME" or "inputs.NAME" → the check modules (stems) that import it, directly or
    through other modules of checks/ and inputs/."""
    users: dict[str, set[str]] = {}
    for sub in ("checks", "inputs"):
        for path in sorted((package / sub).glob("*.py")):
            for dep in _imports(path, sub):
                users.setdefault(dep, set()).add(f"{sub}.{path.stem}")
    closed: dict[str, set[str]] = {}
    for mod in users:
        seen: set[str] = set()
        todo = [mod]
        while todo:
            for user in users.get(todo.pop(), ()):
                if user not in seen:
                    seen.add(user)
                    todo.append(user)
        closed[mod] = {m.split(".", 1)[1] for m in seen if m.startswith("checks.")}
    return closed


def _checks_of_modules(stems: set[str], checks: Mapping[str, Check]) -> frozenset[str]:
    return frozenset(n for n, c in checks.items() if c.module.rsplit(".", 1)[-1] in stems)


def _checks_of_clauses(clauses: set[str], checks: Mapping[str, Check]) -> frozenset[str]:
    return frozenset(n for n, c in checks.items() if clauses & set(c.clauses))


def _clauses_enforced_in(modules: tuple[str, ...], places: Mapping[str, list[str]]) -> set[str]:
    files = {f"{m}.py" for m in modules}
    return {cid for cid, where in places.items() if any(p.split(":", 1)[0] in files for p in where)}


def reasons(paths: list[str], checks: Mapping[str, Check], root: Path | None = None) -> list[Reason]:
    """One reason per changed file (see the module's docstring)."""
    root = ROOT if root is None else root
    places = enforcing_places()
    reference = {p.stem for p in (root / "reference").glob("*.py")}
    found: list[dict[str, set[str]]] = []

    def importers() -> dict[str, set[str]]:  # read only for a change in checks/ or inputs/ (0.6 s of parsing)
        if not found:
            found.append(_importers(root / "conformance"))
        return found[0]

    out: list[Reason] = []
    for path in paths:
        p = Path(path)
        parts = p.parts
        stem = p.name.split(".", 1)[0]
        if path.startswith(_INERT) or (len(parts) == 1 and p.suffix == ".md"):
            out.append(Reason(path, "no check reads it", frozenset()))
        elif parts[:1] == ("native",) and (parts[1:2] == ("src",) or parts[1:2] == ("cdef",) or len(parts) == 2) \
                and (stem in reference or stem in NATIVE_AREAS) and stem not in ("__init__", "build", "_lib"):
            modules = NATIVE_AREAS.get(stem, (stem,))
            clauses = _clauses_enforced_in(modules, places)
            out.append(Reason(path, f"area of reference/{', reference/'.join(m + '.py' for m in modules)} "
                              f"({_span(clauses)})", _checks_of_clauses(clauses, checks)))
        elif parts[:1] == ("reference",) and p.suffix == ".py" and stem in reference \
                and stem not in ("__init__", "clauses", "world", "checked"):
            clauses = _clauses_enforced_in((stem,), places)
            out.append(Reason(path, f"enforces {_span(clauses)}", _checks_of_clauses(clauses, checks)))
        elif parts[:1] == ("spec",) and p.suffix == ".md" and p.name != "README.md":
            clauses = {cid for cid, c in catalogue().items() if c.chapter == p.name}
            out.append(Reason(path, f"chapter of {_span(clauses)}", _checks_of_clauses(clauses, checks)))
        elif parts[:2] == ("conformance", "checks") and p.suffix == ".py" and stem != "__init__":
            stems = {stem} | importers().get(f"checks.{stem}", set())
            why = f"check module{', imported by ' + ', '.join(sorted(stems - {stem})) if stems - {stem} else ''}"
            if not _checks_of_modules({stem}, checks):  # it adds examples to the checks of the modules it imports
                stems |= {m.split(".", 1)[1] for m in _imports(root / p, "checks") if m.startswith("checks.")}
                why = f"adds to the checks of {', '.join(sorted(stems - {stem})) or 'no module'}"
            out.append(Reason(path, why, _checks_of_modules(stems, checks)))
        elif parts[:2] == ("conformance", "inputs") and p.suffix == ".py" and stem != "__init__":
            stems = importers().get(f"inputs.{stem}", set())
            out.append(Reason(path, f"strategies imported by {', '.join(sorted(stems)) or 'no check module'}",
                              _checks_of_modules(stems, checks)))
        else:
            out.append(Reason(path, "not traced to an area", None))
    return out


def _span(clauses: set[str]) -> str:
    if not clauses:
        return "no clause"
    areas = sorted({c.split("-")[0] for c in clauses})
    return f"{len(clauses)} clause(s) of {', '.join(areas)}"


def select_changed(rev: str, checks: Mapping[str, Check], root: Path | None = None) -> tuple[list[str], list[str]]:
    """The selected check names (sorted) and the lines saying why."""
    rs = reasons(changed_files(rev, root), checks, ROOT if root is None else root)
    if any(r.checks is None for r in rs):
        chosen: set[str] = set(checks)
    else:
        chosen = set().union(*(r.checks for r in rs if r.checks is not None)) if rs else set()
    head = f"--changed {rev}: {len(rs)} changed file(s) -> {len(chosen)} of {len(checks)} checks"
    return sorted(chosen), [head] + [r.line(len(checks)) for r in rs]
