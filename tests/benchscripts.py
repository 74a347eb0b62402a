"""The scripts of bench/ as modules, for the tests that drive them (bench/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(script: str) -> ModuleType:
    """bench/`script` (e.g. "mutation.py") imported as module `ggspec_bench_<stem>`."""
    name = f"ggspec_bench_{Path(script).stem}"
    spec = importlib.util.spec_from_file_location(name, BENCH / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
