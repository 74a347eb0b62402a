"""The one alias table of old module paths (conformance/_moved.py): an old path imports the new
module itself, warns once, naming the new path, and `python -m OLD` still runs; the printed
reproducers use the new, public paths."""

from __future__ import annotations

import subprocess
import sys

from ggspec.conformance import _moved


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-W", "default", *args, "-c", code] if code else [sys.executable, *args],
                          capture_output=True, text=True, timeout=300, check=False)


def test_an_old_path_is_the_new_module_and_warns_once_naming_it() -> None:
    proc = _python("import ggspec.conformance.strategies as a\n"
                   "import ggspec.conformance.strategies as b\n"
                   "from ggspec.conformance.tools.cache import key\n"
                   "from ggspec.conformance.inputs import strategies\n"
                   "from ggspec.conformance.run import cache\n"
                   "assert a is b is strategies and key is cache.key\n")
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "MovedModuleWarning" in ln]
    assert len(lines) == 2, proc.stderr  # one per old path, not one per import
    assert "ggspec.conformance.strategies moved to ggspec.conformance.inputs.strategies" in lines[0]
    assert "ggspec.conformance.tools.cache moved to ggspec.conformance.run.cache" in lines[1]


def test_every_old_path_imports() -> None:
    code = "import importlib, warnings\nwarnings.simplefilter('ignore')\n" + "".join(
        f"importlib.import_module('ggspec.conformance.{old}')\n" for old in _moved.MOVED)
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr


def test_python_m_an_old_path_runs_the_new_module() -> None:
    proc = _python("", "-m", "ggspec.conformance.trace")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("# Traceability matrix") and "ggspec.conformance.tools.trace" in proc.stderr


def test_the_printed_reproducer_imports_only_public_paths() -> None:
    """The imports of a reproducer line run with every MovedModuleWarning an error."""
    from types import SimpleNamespace

    from ggspec.conformance.engine.differential import reproducer
    from ggspec.reference.clauses import Profile

    ex = SimpleNamespace(check=SimpleNamespace(name="tdata.set_writes_the_range"), args={"n": 1})
    line = reproducer(ex, "native", Profile.FIXED).splitlines()[1]  # type: ignore[arg-type]
    imports = line[: line.index("replay(")]
    assert imports.startswith("from ggspec.conformance.tools.replay import replay; "), line
    proc = _python(imports, "-W", "error::FutureWarning")
    assert proc.returncode == 0, proc.stderr[-2000:]
