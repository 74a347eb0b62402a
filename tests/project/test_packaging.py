"""The built wheel installs a working `ggspec` into a fresh venv, run from outside the repository.

The wheel is built from a copy of the working tree's files (git's tracked and untracked, not
ignored ones: what a fresh clone plus local work holds), so the test writes nothing into the
repository and no stale build/ folder slips into the wheel. Offline-capable: the wheel is
built without build isolation when the dev venv has `wheel` (else pip builds it in isolation
from its configured index), the new venv sees the dev venv's numpy, hypothesis and cffi
through a .pth line (so nothing is downloaded), and the wheel goes in with --no-deps. Takes a
minute or two (the wheel compiles native/ with cffi).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(cmd: list[str], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def source_copy(dest: Path) -> Path:
    """The project's files (tracked and untracked, not ignored) copied to `dest`."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                                check=True).stdout.decode().split("\0")
        for name in filter(None, listed):
            src = ROOT / name
            if src.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
    else:  # an unpacked sdist
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns("build", "*.egg-info", ".venv", "*.so", "__pycache__"),
                        dirs_exist_ok=True)
    return dest


def test_wheel_installs_a_working_ggspec(tmp_path: Path) -> None:
    src = source_copy(tmp_path / "src")
    dist = tmp_path / "dist"
    isolation = [] if importlib.util.find_spec("wheel") is None else ["--no-build-isolation"]
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "--disable-pip-version-check", "-q", "-w", str(dist),
         str(src)], cwd=tmp_path)
    (wheel,) = dist.glob("ggspec-*.whl")

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    py = venv / "bin" / "python"
    purelib = Path(run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path)
                   .stdout.strip())
    # the dev venv's dependencies (not its editable ggspec: .pth files of an added path are not run)
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    (purelib / "ggspec-test-deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--disable-pip-version-check", "-q",
         str(wheel)], cwd=tmp_path)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ggspec = str(venv / "bin" / "ggspec")
    where = run([str(py), "-c", "import ggspec.conformance, ggspec.spec; print(ggspec.conformance.__file__)"], cwd=outside)
    assert where.stdout.strip().startswith(str(purelib)), where.stdout  # the installed copy, not the checkout
    for bare in ("reference", "native", "conformance"):  # no generic top-level names squatted
        assert not (purelib / bare).exists()

    version = run([ggspec, "--version"], cwd=outside).stdout
    assert version.startswith("ggspec 0.") and "whisper.rn 0.4.0-rc.8" in version and "commit" in version
    clause = run([ggspec, "clause", "TDATA-3"], cwd=outside).stdout
    assert clause.startswith("### TDATA-3: tensor_set stays inside the tensor") and "tensor write out of bounds" in clause
    check = run([ggspec, "check", "--select", "TDATA-3", "--max-examples", "3", "--seed", "1", "--quiet"], cwd=outside)
    assert "TDATA-3" in check.stdout and "target native" in check.stderr
    assert not (outside / "ggspec").exists()
