"""setuptools shim: pyproject.toml carries the metadata; this file only hands cffi its
out-of-line build script, which pyproject.toml has no key for, records the git commit in a
built package (`ggspec --version`, conformance/version.py) when it is built from a checkout,
and compiles native/'s C files in parallel (distutils compiles one after the other)."""

import importlib.util
import subprocess
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py


class BuildPyWithCommit(build_py):
    """build_py that also writes ggspec/conformance/_build_commit.txt (the commit, or nothing
    when git or the checkout is missing, as in an sdist)."""

    def run(self) -> None:
        super().run()
        here = Path(__file__).resolve().parent
        if not (here / ".git").exists():  # an sdist, or a copy of the tree: the commit is unknown
            return
        try:
            out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, timeout=10,
                                 cwd=here, check=False)
        except (OSError, subprocess.SubprocessError):
            return
        if out.returncode == 0 and out.stdout.strip():
            target = Path(self.build_lib) / "ggspec" / "conformance" / "_build_commit.txt"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(out.stdout.strip() + "\n", encoding="utf-8")


class BuildExtParallel(build_ext):
    """build_ext whose compiler runs the same commands for the same objects, several at a time
    (native/build.py `_parallel_compile`, which `build_variant` uses too); cffi's own build_ext
    step is made on top of this class."""

    def build_extension(self, ext: Any) -> None:
        cc = self.compiler
        if all(hasattr(cc, a) for a in ("_compile", "_setup_compile", "_get_cc_args")):
            script = Path(__file__).resolve().parent / "native" / "build.py"
            spec = importlib.util.spec_from_file_location("ggspec_native_build", script)
            if spec is not None and spec.loader is not None:
                build = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(build)
                cc.compile = build._parallel_compile(cc)
        super().build_extension(ext)


setup(cffi_modules=["native/build.py:ffibuilder"], cmdclass={"build_py": BuildPyWithCommit, "build_ext": BuildExtParallel})
