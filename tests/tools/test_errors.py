"""Every exception class of conformance/ is defined in conformance/errors.py (one CannotFetch),
and the names it was imported by before keep working."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import ggspec.conformance
from ggspec.conformance import errors

#: old import path -> the name there, as tests, docs and users' scripts import them
OLD_PATHS = {
    "ggspec.conformance.target": ["MissingSymbol", "NeedsPristineProcess"],
    "ggspec.conformance.adapters.external": ["TargetUnavailable"],
    "ggspec.conformance.adapters.rc8": ["CannotFetch"],
    "ggspec.conformance.adapters.ggml_python": ["CannotFetch"],
    "ggspec.conformance.harness": ["Mismatch", "ErratumDifference", "ExampleTimeout", "Unsupported"],
    "ggspec.conformance.engine.differential": ["Mismatch", "ErratumDifference", "ExampleTimeout", "Unsupported"],
    "ggspec.conformance.runner": ["RunInterrupted"],
    "ggspec.conformance.engine.runner": ["RunInterrupted"],
    "ggspec.conformance.engine.isolate": ["WorkersStopped"],
    "ggspec.conformance.replay": ["ReplayFailed"],
    "ggspec.conformance.tools.select": ["SelectionError"],
    "ggspec.conformance.tools.cli": ["UsageError"],
    "ggspec.conformance.reports.merge": ["MergeError"],
    "ggspec.conformance.known": ["KnownFileError"],
    "ggspec.conformance.tools.pytest_plugin": ["CheckFailed"],
}


def all_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(ggspec.conformance.__path__, "ggspec.conformance."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def test_every_exception_class_is_defined_in_errors() -> None:
    elsewhere = []
    for name in all_modules():
        mod = importlib.import_module(name)
        for attr, obj in vars(mod).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__.startswith("ggspec.conformance") \
                    and obj.__module__ != errors.__name__:
                elsewhere.append(f"{obj.__module__}.{attr}")
    assert not elsewhere, sorted(set(elsewhere))


def test_one_cannot_fetch() -> None:
    from ggspec.conformance.adapters import ggml_python, rc8

    assert rc8.CannotFetch is ggml_python.CannotFetch is errors.CannotFetch
    assert issubclass(errors.CannotFetch, errors.TargetUnavailable)


def test_the_old_import_paths_give_the_same_classes() -> None:
    for path, names in OLD_PATHS.items():
        mod = importlib.import_module(path)
        for n in names:
            assert getattr(mod, n) is getattr(errors, n), f"{path}.{n}"
