"""conformance/'s imports run one way (conformance/__init__.py's docstring): no module imports
another that imports it back, directly or through others, and no folder imports one above it.

The imports are read from the source (ast), every one of them: at the top, inside functions
(deferred) and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "conformance"
PKG = "ggspec.conformance"

#: the foundation: what every folder may import
BASE = {"errors", "names", "target", "target_names", "version"}
#: folder -> the folders (and top-level modules) its modules may import, besides their own folder
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "target": {"errors"},
    "target_names": set(),
    "version": set(),
    "names": set(),
    "engine": set(BASE),
    "adapters": BASE | {"engine"},
    "inputs": BASE | {"engine", "adapters"},  # sched_scope: the reference adapter as the model
    "checks": BASE | {"engine", "adapters", "inputs"},
    "reports": BASE | {"engine.results"},
    # a run's home: plans and runs with engine/ and adapters/, writes with reports/ (never a tool)
    "run": BASE | {"engine", "adapters", "reports"},
    "tools": BASE | {"engine", "adapters", "inputs", "checks", "reports", "run"},
}
#: modules that may import anything: the package (it plugs the defaults into engine.plugins), the
#: one alias table of old paths (_moved.py) and `python -m ggspec.conformance`
ANYTHING = {"", "_moved", "__main__"}
#: the front ends: they parse and print, and leave planning, running and judging to run/
FRONT_ENDS = ("tools.cli", "tools.pytest_plugin", "tools.compare")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The conformance modules (names relative to the package) that `name` imports."""
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if name else []
    package = here if is_pkg else here[:-1]
    found: set[str] = set()

    def add(target: str) -> None:
        if target in known:
            found.add(target)
        elif "." in target and target.rsplit(".", 1)[0] in known:  # `from x import name`: x
            found.add(target.rsplit(".", 1)[0])

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PKG + "."):
                    add(a.name[len(PKG) + 1:])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] if node.level > 1 else package
                if node.level - 1 > len(package):
                    continue  # above conformance: ggspec.reference and the like
                mod = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and (node.module == PKG or node.module.startswith(PKG + ".")):
                mod = node.module[len(PKG) + 1:]
            else:
                continue
            for a in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{mod}.{a.name}" if mod else a.name
                if sub in known:
                    found.add(sub)
                elif mod or a.name == "*":
                    add(mod)
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def folder(name: str) -> str:
    return name.split(".")[0]


def allowed(importer: str, imported: str) -> bool:
    if importer in ANYTHING or folder(importer) == "tools":
        return True
    if folder(imported) == folder(importer):
        return True
    rules = ALLOWED.get(folder(importer), set())
    return folder(imported) in rules or imported in rules


def test_the_walk_sees_deferred_and_relative_imports() -> None:
    g = graph()
    assert "engine.registry" in g["checks.copy"]  # top-level, relative
    assert "checks._leaks" in g["checks.copy"]  # deferred, inside a function
    assert "adapters.reference" in g["inputs.sched_scope"]  # deferred, two dots
    assert "engine.results" in g["reports.report"]


def test_no_folder_imports_one_above_it() -> None:
    g = graph()
    bad = sorted(f"{a} -> {b}" for a, deps in g.items() for b in deps if not allowed(a, b))
    assert not bad, "imports against conformance/__init__.py's order:\n" + "\n".join(bad)


def test_no_import_cycle() -> None:
    g = graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for d in sorted(g[m]):
            if d in ANYTHING:
                continue  # the package and the aliases import everything and are imported by none
            if state.get(d) == 1:
                cycles.append([*path[path.index(d):], d])
            elif d not in state:
                visit(d)
        path.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state and m not in ANYTHING:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_run_is_the_one_home_of_a_run() -> None:
    """run/ exists and sits where the docstring puts it; the three front ends plan and execute
    through it, and none of them runs or judges checks itself (engine.runner's run_all and
    load_target, engine.results' verdicts, reports.known's apply are run/'s to call)."""
    g = graph()
    assert {"run.plan", "run.execute", "run.select", "run.changed", "run.cache", "run.reuse"} <= set(g)
    assert not {"tools.select", "tools.changed", "tools.cache", "tools.reuse"} & set(g)  # moved to run/
    for front in FRONT_ENDS:
        assert "run.plan" in g[front] and "run.execute" in g[front], front
        source = (ROOT / (front.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        for name in ("run_all(", "load_target(", "verdicts(", "known_mod.apply(", "RunConfig("):
            assert name not in source, f"{front} calls {name} itself: a run's steps are run/'s"
    for importer, deps in g.items():
        if folder(importer) in ("engine", "adapters", "inputs", "checks", "reports"):
            assert not any(folder(d) == "run" for d in deps), f"{importer} imports run/, which is above it"


def test_the_top_level_holds_only_real_modules_and_the_alias_table() -> None:
    """At most 8 real modules at conformance/'s top, plus _moved.py (the one alias table)."""
    top = sorted(p.stem for p in ROOT.glob("*.py"))
    assert "_moved" in top and len(top) - 1 <= 8, top
    for stem in top:
        text = (ROOT / f"{stem}.py").read_text(encoding="utf-8")
        assert "alias(__name__" not in text, f"{stem}.py is an alias module: old paths belong in _moved.py's table"
