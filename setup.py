"""setuptools shim: pyproject.toml carries the metadata; this file only hands cffi its
out-of-line build script, which pyproject.toml has no key for, and records the git commit in a
built package (`ggspec --version`, conformance/version.py) when it is built from a checkout."""

import subprocess
from pathlib import Path

from setuptools import setup
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


setup(cffi_modules=["native/build.py:ffibuilder"], cmdclass={"build_py": BuildPyWithCommit})
