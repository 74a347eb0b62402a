"""The one table of old module paths: every path conformance/ had before its subpackages (or that
a module had before it moved), and the module(s) it is now. Importing an old path still works —
`from ggspec.conformance.replay import replay`, `python -m ggspec.conformance.trace` — and warns
once (`MovedModuleWarning`, a FutureWarning, so that a user sees it) naming the new path.

The old paths have no files: conformance/__init__.py installs `MovedFinder` on `sys.meta_path`,
which answers an import of an old path with the new module itself (the same objects, so that
monkeypatching either name patches both). An old path that held two modules' names (`harness`,
`runner`) is a module of its own holding the public names of both.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import CodeType, ModuleType

from .errors import MovedModuleWarning

#: old path (under ggspec.conformance) -> the new module(s), under ggspec.conformance
MOVED: dict[str, tuple[str, ...]] = {
    "cli": ("tools.cli",),
    "pytest_plugin": ("tools.pytest_plugin",),
    "replay": ("tools.replay",),
    "sitegen": ("tools.sitegen",),
    "trace": ("tools.trace",),
    "versions": ("tools.versions",),
    "graphspec": ("inputs.graphspec",),
    "graph_strategies": ("inputs.graph_strategies",),
    "sched_scope": ("inputs.sched_scope",),
    "strategies": ("inputs.strategies",),
    "stateful": ("checks.stateful",),
    "ubseen": ("engine.after_ub",),
    "harness": ("engine.differential", "engine.registry"),
    # data packages (their files stay) whose module moved
    "vectors": ("tools.vectors",),
    "known": ("reports.known",),
    "runner": ("engine.results", "engine.runner"),
    # the run's own modules, in run/ since the run had a home (issue 31)
    "tools.select": ("run.select",),
    "tools.changed": ("run.changed",),
    "tools.cache": ("run.cache",),
    "tools.reuse": ("run.reuse",),
}

_PACKAGE = __name__.rpartition(".")[0]
_warned: set[str] = set()


def new_paths(old: str) -> tuple[str, ...]:
    """The full new module paths of an old full path (KeyError when it did not move)."""
    return tuple(f"{_PACKAGE}.{m}" for m in MOVED[old.removeprefix(_PACKAGE + ".")])


def _warn(old: str, new: Sequence[str]) -> None:
    if old in _warned:
        return
    _warned.add(old)
    warnings.warn(f"{old} moved to {' and '.join(new)}; import it from there (the old path is an alias)",
                  MovedModuleWarning, stacklevel=4)


def _module(old: str) -> ModuleType:
    new = new_paths(old)
    _warn(old, new)
    modules = [importlib.import_module(n) for n in new]
    if len(modules) == 1:
        return modules[0]
    joined = ModuleType(old, f"Old path of {' and '.join(new)}.")
    for m in modules:
        joined.__dict__.update({k: v for k, v in vars(m).items() if not k.startswith("_")})
    return joined


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return _module(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        pass

    def get_code(self, fullname: str) -> CodeType:
        """`python -m OLD` runs the new module as __main__."""
        new = new_paths(fullname)[0]
        return compile(f"import runpy, warnings\nwarnings.warn({f'{fullname} moved to {new}; run python -m {new}'!r}, "
                       f"FutureWarning)\nrunpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n",
                       f"<{fullname}: moved to {new}>", "exec")


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of MOVED (and nothing else)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PACKAGE + ".") or fullname.removeprefix(_PACKAGE + ".") not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader())


def install() -> None:
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
