"""The external adapter and the rc8 target: the real whisper.rn 0.4.0-rc.8 code, fetched with npm
and built at test time outside the repository, runs the suite; C reproducers compile and show a
known difference.

Tests that need the rc.8 build skip only when npm or the network to the npm registry is missing
(`CannotFetch`); any other problem (a checksum, a compile error, a drifted declaration) fails.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ggspec.conformance.adapters import default_profile, make_target
from ggspec.conformance.adapters.capi import CApiTarget
from ggspec.conformance.adapters.creproducer import write_reproducer
from ggspec.conformance.adapters.external import ExternalTarget, TargetUnavailable, make_cdef
from ggspec.conformance.adapters.rc8 import CannotFetch
from ggspec.conformance.engine.differential import Example, Outcome, run_on_reference
from ggspec.conformance.engine.registry import CHECKS
from ggspec.conformance.engine.results import RunConfig, verdicts
from ggspec.conformance.engine.runner import load_checks, run_check
from ggspec.conformance.inputs.strategies import Placement, TensorSpec, ViewSpec
from ggspec.conformance.target import NeedsPristineProcess
from ggspec.reference.clauses import Profile
from ggspec.reference.types import GGMLType
from nativeport import NATIVE_INCLUDE, ggml_named_include, native_sources

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rc8(rc8_or_skip: Any) -> ExternalTarget:
    target = rc8_or_skip.target()
    assert isinstance(target, ExternalTarget)
    return target


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root)


def test_rc8_is_built_outside_the_repository(rc8: ExternalTarget) -> None:
    build = rc8.build
    for path in (build.include_dir, build.lib_path, build.module_path):
        assert path.exists() and not _inside(path, ROOT), path
    assert rc8.p == "wsp_ggml_" and rc8.default_profile is Profile.RC8 and default_profile("rc8") is Profile.RC8
    # our own additions are not in rc.8: their checks fail by name, nothing else
    assert "wsp_ggml_backend_reg_reset_for_tests" in build.dropped
    assert not rc8.resettable_registry
    assert rc8.buft_name(rc8.cpu_buffer_type()) == "CPU"


def test_registry_needs_a_pristine_worker_in_process(rc8: ExternalTarget) -> None:
    """rc.8 cannot reset its registry, so this (shared) process must never use it."""
    with pytest.raises(NeedsPristineProcess):
        rc8.reg_reset()
    with pytest.raises(NeedsPristineProcess):
        rc8.reg_get_count()


CHECKS_TO_RUN = (
    "tdata.set_writes_the_range",      # behaviour, CPU and virtual device through the shim
    "tdata.set_out_of_bounds",         # a death test: rc.8's GGML_ASSERT message
    "copy.host_source_is_set",
    "registry.cpu_registers_itself",   # the registry, each example in a pristine worker
)


@pytest.mark.parametrize("name", CHECKS_TO_RUN)
def test_rc8_passes_under_its_profile(rc8: ExternalTarget, name: str) -> None:
    load_checks()
    cfg = RunConfig("rc8", Profile.RC8, max_examples=8, seed=20261130, c_reproducers=False)
    result = run_check(CHECKS[name], cfg)
    assert result.status == "pass", result.detail
    assert result.examples > 0


def test_rc8_under_fixed_fails_the_erratum_clause_only(rc8: ExternalTarget) -> None:
    """A view not given to view_init cannot be read back in rc.8 (erratum TDATA-6): under profile
    fixed the difference is blamed on TDATA-6, not on the other clause the check covers."""
    load_checks()
    cfg = RunConfig("rc8", Profile.FIXED, max_examples=8, seed=20261130, c_reproducers=False)
    result = run_check(CHECKS["tdata.get_view_without_own_buffer"], cfg)
    assert result.errata.keys() == {"TDATA-6"}, result
    assert result.errata["TDATA-6"][0] == "crash"
    by_id = {v.id: v.status for v in verdicts([result])}
    assert by_id["TDATA-6"] == "crash" and by_id["TDATA-8"] == "pass"


def _compile_and_run(cmd: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=tmp)
    exe = cmd[cmd.index("-o") + 1]
    return subprocess.run([exe], capture_output=True, text=True, cwd=tmp, timeout=60)


def _example(name: str, args: dict[str, object], profile: Profile) -> Example:
    load_checks()
    chk = CHECKS[name]
    return Example(chk, args, run_on_reference(chk, args, profile), Outcome([], "abort", detail="(for the test)"))


VIEW_ARGS: dict[str, object] = {
    "placement": Placement("cpu"),
    "rv": (TensorSpec(int(GGMLType.F32), (8,)), ViewSpec((4,), (), 16)),
}


def test_c_reproducer_of_an_rc8_erratum_aborts(rc8: ExternalTarget, tmp_path: Path) -> None:
    """rc.8 under profile fixed: tensor_get of a view without its own buffer aborts. The C file
    makes the same calls against rc.8's headers and library, and aborts with the message."""
    ex = _example("tdata.get_view_without_own_buffer", VIEW_ARGS, Profile.FIXED)
    c_file, cmd = write_reproducer(ex, "rc8", Profile.FIXED, tmp_path)
    text = c_file.read_text()
    assert '#include "ggml-backend.h"' in text and "wsp_ggml_backend_tensor_get(" in text
    proc = _compile_and_run(cmd, tmp_path)
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stdout, proc.stderr)
    assert "GGML_ASSERT" in proc.stderr and "tensor buffer not set" in proc.stderr
    assert "(gdb)" not in proc.stderr and "#0 " not in proc.stderr  # the quiet gdb stand-in


def test_c_reproducer_of_native_shows_the_difference(tmp_path: Path) -> None:
    """No network needed: native (which implements fixed) held to profile rc8 reads the view
    where rc.8 aborts; the C file, built from native/'s sources, says so and exits 1."""
    ex = _example("tdata.get_view_without_own_buffer", VIEW_ARGS, Profile.RC8)
    _, cmd = write_reproducer(ex, "native", Profile.RC8, tmp_path)
    proc = _compile_and_run(cmd, tmp_path)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "the reference expects an abort" in proc.stdout and "tensor buffer not set" in proc.stdout


def test_cdef_is_renamed_and_trimmed_to_the_target() -> None:
    headers = "void foo_backend_tensor_set(void); void foo_backend_tensor_get(void);\n#define FOO_MAX_DIMS 4\n"
    plan = make_cdef(headers, lambda name: name != "foo_backend_tensor_get", "foo_")
    assert "foo_backend_tensor_set" in plan.cdef
    assert "foo_backend_tensor_get" in plan.dropped  # declared, but the library lacks it
    assert "foo_backend_reg_reset_for_tests" in plan.dropped
    assert "ggspec_vdev_init" in plan.cdef and "struct ggspec_vdev_params" in plan.cdef
    assert 'extern "Python" foo_backend_t ggspec_py_init_fn' in plan.cdef
    assert "ggspec_backend_" not in plan.cdef.replace("ggspec_backend_is_vdev", "").replace("ggspec_backend_is_webgpu", "")
    assert "#define FOO_MAX_DIMS 4" in plan.cdef and "FOO_MAX_SRC" in plan.dropped


def test_without_npm_rc8_fails_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ggspec.conformance.adapters import rc8 as rc8_mod

    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path))
    monkeypatch.delenv("GGSPEC_RC8_TARBALL", raising=False)
    monkeypatch.setattr(rc8_mod.shutil, "which", lambda name: None)
    with pytest.raises(CannotFetch) as info:
        rc8_mod.ensure_rc8()
    assert "npm" in str(info.value) and "\n" not in str(info.value)
    assert issubclass(CannotFetch, TargetUnavailable)


def test_quiet_gdb_is_first_on_path(rc8: ExternalTarget) -> None:
    first = os.environ["PATH"].split(os.pathsep)[0]
    assert (Path(first) / "gdb").is_file()
    assert isinstance(rc8, CApiTarget)


@pytest.fixture(scope="module")
def native_as_external(tmp_path_factory: pytest.TempPathFactory) -> str:
    """ggspec's own sources built as a plain shared library, its headers under ggml's file names:
    the generic external path, without the network."""
    from ggspec.conformance.adapters import external_target_name

    root = tmp_path_factory.mktemp("native-as-external")
    inc = ggml_named_include(root)
    lib = root / "libggspec.so"
    subprocess.run(["gcc", "-O1", "-fPIC", "-shared", "-std=c11", f"-I{NATIVE_INCLUDE}", *native_sources(),
                    "-o", str(lib), "-lm", "-lpthread"], check=True, capture_output=True)
    name = external_target_name(str(inc), str(lib), "ggspec_")
    saved = os.environ.get("GGSPEC_CACHE")
    os.environ["GGSPEC_CACHE"] = str(root / "cache")  # a throwaway build: keep it out of the user's cache
    try:
        make_target(name).close()
    finally:
        if saved is None:
            del os.environ["GGSPEC_CACHE"]
        else:
            os.environ["GGSPEC_CACHE"] = saved
    return name


def test_external_target_over_a_plain_library(native_as_external: str) -> None:
    target = make_target(native_as_external)
    assert isinstance(target, ExternalTarget) and target.default_profile is Profile.FIXED
    assert not target.resettable_registry  # the test hook is never used on external builds
    load_checks()
    cfg = RunConfig(native_as_external, Profile.FIXED, max_examples=6, seed=7, c_reproducers=False)
    for name in ("tdata.views_use_the_roots_buffer", "registry.cpu_registers_itself", "tdata.set_unallocated"):
        result = run_check(CHECKS[name], cfg)
        assert result.status == "pass" and not result.errata, (name, result.detail)
