"""The verdict cache of `ggspec check` (run/cache.py): a hit, invalidation on each part of the
key, --no-cache and CI=true."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ggspec.conformance.engine.results import CheckResult, RunConfig
from ggspec.conformance.engine.runner import load_checks
from ggspec.conformance.run import cache
from ggspec.reference.clauses import Profile

ROOT = Path(__file__).resolve().parents[2]
CHECK = "tdata.set_writes_the_range"
RUN = ["check", "--select", CHECK, "--max-examples", "3", "--seed", "11", "--no-c-reproducers"]


def ggspec(tmp_path: Path, *args: str, **more_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GGSPEC_VERDICT_CACHE")}
    env["GGSPEC_CACHE"] = str(tmp_path / "cache")
    env.update(more_env)
    return subprocess.run([sys.executable, "-m", "ggspec.conformance", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


def _table(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("TDATA-")]


def test_a_rerun_reuses_the_verdict_and_says_so_and_no_cache_runs_it(tmp_path: Path) -> None:
    first = ggspec(tmp_path, *RUN)
    assert first.returncode == 0, first.stderr
    assert "verdict cache: 0 of 1 check(s) reused" in first.stderr
    assert list((tmp_path / "cache" / "verdicts").glob("*.json")), "nothing stored"
    again = ggspec(tmp_path, *RUN)
    assert again.returncode == 0 and "verdict cache: 1 of 1 check(s) reused" in again.stderr
    assert _table(again.stdout) == _table(first.stdout) and _table(first.stdout)
    off = ggspec(tmp_path, *RUN, "--no-cache")
    assert off.returncode == 0 and "reused" not in off.stderr and _table(off.stdout) == _table(first.stdout)
    ci = ggspec(tmp_path, *RUN, CI="true")
    assert "verdict cache off (CI=true)" in ci.stderr and "reused" not in ci.stderr
    suite = ggspec(tmp_path, *RUN, GGSPEC_VERDICT_CACHE="off")  # what tests/conftest.py sets for the suite
    assert "verdict cache off (GGSPEC_VERDICT_CACHE=off)" in suite.stderr and "reused" not in suite.stderr
    other_seed = ggspec(tmp_path, *RUN[:-3], "--seed", "12", "--no-c-reproducers")
    assert "verdict cache: 0 of 1 check(s) reused" in other_seed.stderr
    no_seed = ggspec(tmp_path, *RUN[:-3], "--no-c-reproducers")
    assert "verdict cache off (no --seed" in no_seed.stderr


def test_the_key_changes_with_each_of_its_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for sub in ("reference", "spec", "conformance"):
        shutil.copytree(ROOT / sub, tmp_path / sub, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    monkeypatch.setattr(cache, "ROOT", tmp_path)
    cache._shared_sources.cache_clear()
    lib = tmp_path / "libx.so"
    lib.write_bytes(b"one")
    name = f"external:ggml_:{tmp_path}:{lib}"
    chk = load_checks()[CHECK]
    cfg = RunConfig(name, Profile.FIXED, max_examples=3, seed=11)
    target = cache.target_key(name)
    assert target["sha256"] == hashlib.sha256(b"one").hexdigest()
    base = cache.key(chk, cfg, target)
    assert cache.key(chk, cfg, cache.target_key(name)) == base  # nothing changed: the same key

    def differs(edit: Path | None = None, **changes: object) -> bool:
        if edit is not None:
            edit.write_text(edit.read_text() + "\n# changed\n")
        cache._shared_sources.cache_clear()
        c = RunConfig(name, changes.get("profile", Profile.FIXED), max_examples=changes.get("examples", 3),  # type: ignore[arg-type]
                      seed=changes.get("seed", 11))  # type: ignore[arg-type]
        return cache.key(chk, c, cache.target_key(name)) != base

    assert differs(seed=12) and differs(examples=4) and differs(profile=Profile.RC8)
    lib.write_bytes(b"two")
    assert differs()  # the target's library
    lib.write_bytes(b"one")
    assert not differs()
    assert differs(tmp_path / "conformance" / "checks" / "tdata.py")  # the check's source
    (tmp_path / "conformance" / "checks" / "tdata.py").write_text((ROOT / "conformance/checks/tdata.py").read_text())
    assert not differs()
    assert differs(tmp_path / "conformance" / "inputs" / "strategies.py")  # what it draws
    shutil.copy(ROOT / "conformance/inputs/strategies.py", tmp_path / "conformance/inputs/strategies.py")
    assert not differs()
    assert differs(tmp_path / "reference" / "tdata.py")  # the reference's source
    monkeypatch.setenv("GGSPEC_NATIVE_PORTABLE", "1")
    assert cache.target_key(name) != target


def test_the_key_follows_the_library_the_environment_swaps_in(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A library rebuilt at the same path, named through GGSPEC_NATIVE_MODULE or found first in
    LD_LIBRARY_PATH (how bench/mutation.py runs its mutants), is another target."""
    module = tmp_path / "mutant"
    module.mkdir()
    so = module / "_ggspec_mutant.cpython-311-x86_64-linux-gnu.so"
    so.write_bytes(b"one")
    monkeypatch.setenv("GGSPEC_NATIVE_MODULE", f"{module}:_ggspec_mutant")
    first = cache.target_key("native")
    assert first["sha256"] == hashlib.sha256(b"one").hexdigest()
    so.write_bytes(b"two")
    assert cache.target_key("native")["sha256"] == hashlib.sha256(b"two").hexdigest()

    lib = tmp_path / "libx.so"
    lib.write_bytes(b"own")
    name = f"external:ggml_:{tmp_path}:{lib}"
    assert cache.target_key(name)["sha256"] == hashlib.sha256(b"own").hexdigest()
    swapped = tmp_path / "swapped"
    swapped.mkdir()
    (swapped / "libx.so").write_bytes(b"swapped in")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nonexistent:{swapped}")
    assert cache.target_key(name)["sha256"] == hashlib.sha256(b"swapped in").hexdigest()


def test_only_settled_verdicts_are_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path))
    cache.store("a", CheckResult("x.a", ("TDATA-4",), "crash", 2, "boom"), "vdev")
    cache.store("b", CheckResult("x.b", ("TDATA-4",), "fail", 2, "why", errata={"TDATA-3": ("fail", "d")}), "vdev")
    assert cache.load("a", "vdev") is None
    assert cache.load("b", "vdev") == CheckResult("x.b", ("TDATA-4",), "fail", 2, "why", errata={"TDATA-3": ("fail", "d")})


def test_a_verdict_crosses_devices_only_when_no_example_asked_for_one(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A verdict of the mock is the WebGPU run's only when the check asked for no plain device
    (engine/reach.py), and the other way round; the device's own verdict comes first."""
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path))
    free = CheckResult("x.free", ("TDATA-4",), "pass", 3)
    used = CheckResult("x.used", ("BACK-9",), "pass", 3, reached_device=True)
    cache.store("free", free, "vdev")
    cache.store("used", used, "vdev")
    assert cache.load("free", "webgpu") == free and cache.load("free", "vdev") == free
    assert cache.load("used", "webgpu") is None and cache.load("used", "vdev") == used
    on_webgpu = CheckResult("x.used", ("BACK-9",), "fail", 3, "on WebGPU", reached_device=True)
    cache.store("used", on_webgpu, "webgpu")
    assert cache.load("used", "webgpu") == on_webgpu and cache.load("used", "vdev") == used


def test_the_webgpu_run_does_not_reuse_the_mocks_verdict_of_a_check_that_uses_a_device(tmp_path: Path) -> None:
    """The defect this fixed: the key had no device, so a run with `--device webgpu` reused the
    mock's verdicts of every check, those that put tensors on the device among them. The
    reference stands in for a C target (its plain device becomes WebGPU's shape, no GPU needed)."""
    run = ["check", "--target", "reference", "--select", "core.new_tensors_are_contiguous", "--select",
           "copy.copy_needs_every_field_equal", "--max-examples", "3", "--seed", "11"]
    first = ggspec(tmp_path, *run)
    assert first.returncode == 0, first.stderr
    assert "verdict cache: 0 of 2 check(s) reused" in first.stderr
    on_webgpu = ggspec(tmp_path, *run, "--device", "webgpu")
    assert on_webgpu.returncode == 0, on_webgpu.stderr
    assert "verdict cache: 1 of 2 check(s) reused" in on_webgpu.stderr  # the core check, which makes no device (the copy
    # check's explicit examples put tensors on a plain one)
