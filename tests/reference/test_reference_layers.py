"""reference/'s imports run one way: no module imports another that imports it back, directly or
through others (issue 31: world.py closed a circle of eight modules with a deferred import of the
registry; the registry is now one of the world's statics, `registry.registry_of`).

The imports are read from the source (ast): at the top and inside functions (deferred). Those
under `if TYPE_CHECKING:` are left out: they name a class for the type checker and run nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "reference"


def _runtime_nodes(tree: ast.Module) -> list[ast.AST]:
    """Every node of `tree` outside `if TYPE_CHECKING:` blocks."""
    out: list[ast.AST] = []

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                walk(child)
            return
        out.append(node)
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return out


def imports() -> dict[str, set[str]]:
    """Module -> the reference modules it imports at run time."""
    names = {p.stem for p in ROOT.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(ROOT.glob("*.py")):
        found: set[str] = set()
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    found.add(node.module.split(".")[0])
                elif node.level == 1:  # from . import x
                    found.update(a.name for a in node.names)
                elif node.module and node.module.startswith("ggspec.reference."):
                    found.add(node.module.split(".")[2])
                elif node.module == "ggspec.reference":
                    found.update(a.name for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("ggspec.reference."))
        graph[path.stem] = (found & names) - {path.stem}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of `graph` (its modules in order, the first again at the end), or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return [*stack[stack.index(n):], n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return []

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return []


def test_reference_has_no_import_circle() -> None:
    graph = imports()
    assert {"world", "registry", "backend", "buffer", "tensor"} <= set(graph)
    assert cycle(graph) == [], " -> ".join(cycle(graph))


def test_the_finder_sees_a_deferred_import_circle() -> None:
    """The check itself: a circle closed by an import inside a function is found."""
    graph = {"world": {"checked"}, "registry": {"backend", "world"}, "backend": {"world"}, "checked": set()}
    assert cycle(graph) == []
    graph["world"].add("registry")  # world.py's old deferred `from .registry import Registry`
    found = cycle(graph)
    assert found[0] == found[-1] and {"world", "registry"} <= set(found), found
    tree = ast.parse("def f():\n    from .registry import Registry\nif TYPE_CHECKING:\n    from .backend import B\n")
    kinds = [type(n).__name__ for n in _runtime_nodes(tree)]
    assert kinds.count("ImportFrom") == 1  # the deferred one counts, the TYPE_CHECKING one does not


def test_the_registry_is_one_of_the_worlds_statics() -> None:
    from ggspec.reference.registry import registry_of, registry_reset
    from ggspec.reference.world import World

    w = World()
    reg = registry_of(w)
    assert registry_of(w) is reg and w.statics["registry"] is reg
    assert reg.get_count() == 1 and reg.get_name(0) == "CPU"  # REG-1: the CPU backend, at the first query
    assert registry_reset(w) is registry_of(w) is not reg
    assert registry_of(World()) is not registry_of(w)
