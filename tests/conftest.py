"""Shared pytest configuration: hypothesis run-size profiles (dev, ci, thorough), the seed
printed in the header, one object cache for the run's native builds, under pytest-xdist the
longest test files first (below), the `rc8_or_skip` fixture (rc.8 fetched, or the test
skipped, or failed under CI=true) and the `fault_target` fixture (native with its fault-injection points)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("thorough", max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("GGSPEC_HYPOTHESIS_PROFILE", "dev"))
#: the suite's `ggspec check` runs neither read nor write the verdict cache (tests write only under
#: tmp_path); tests/run/test_cache.py turns it back on in a cache of its own
os.environ["GGSPEC_VERDICT_CACHE"] = "off"


#: the test files that take longest (bench/RESULTS.md, "Tests in minutes"), longest first: under
#: pytest-xdist (`-n N`, pyproject's --dist loadfile) they are handed out first, so that no worker
#: starts one of them while the others are running out of work. (A file is one unit of work: a
#: file that ran minutes longer than the others was split, as test_sched_defect_*.py and
#: test_docs_samples.py were.) Order from `.ci/run`'s tests step, `--durations`, 2026-12-02.
LONGEST_FILES = (
    "tests/checks/test_sched_defect_pass2.py",
    "tests/checks/test_sched_defect_dedup.py",
    "tests/project/test_docs.py",
    "tests/project/test_docs_samples.py",
    "tests/checks/test_sched_defect_eval_batch.py",
    "tests/checks/test_defect_variant.py",
    "tests/adapters/test_rc8_seeds.py",
    "tests/tools/test_known_files.py",
    "tests/checks/test_sched_defects.py",
    "tests/engine/test_faults.py",
    "tests/project/test_packaging.py",
    "tests/checks/test_seed_independence.py",
    "tests/inputs/test_sched_exhaustive.py",
    "tests/tools/test_plugin.py",
    "tests/reports/test_report_gate.py",
    "tests/adapters/test_ggml_python.py",
    "tests/run/test_same_seed.py",
    "tests/adapters/test_external.py",
    "tests/inputs/test_vectors.py",
    "tests/native/test_alloc_failure.py",
    "tests/native/test_sched_native.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the files of LONGEST_FILES first (a stable sort: the order within a file and of
    the other files is kept). Every worker sorts the same way, as xdist requires; a run without
    xdist keeps pytest's order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_report_header(config: pytest.Config) -> str:
    return f"ggspec: hypothesis profile {os.environ.get('GGSPEC_HYPOTHESIS_PROFILE', 'dev')}"


@pytest.fixture(scope="session", autouse=True)
def _one_build_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The native variants the tests build (native.build.build_variant, in this process or in a
    `ggspec` / docs sample it starts) share one object cache, $GGSPEC_BUILD_CACHE, for the whole
    test run: under pytest's temporary folder of the run, the same one for every xdist worker (a
    worker's base folder is in the run's). A variant that differs from another in one define
    recompiles only the files that define reaches, and a variant built twice is compiled once.
    A cache the caller set is kept (its keys are the compiler commands and preprocessed sources)."""
    if os.environ.get("GGSPEC_BUILD_CACHE"):
        yield
        return
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, which holds each worker's popen-gwN
    cache = base / "build-cache"
    cache.mkdir(exist_ok=True)
    os.environ["GGSPEC_BUILD_CACHE"] = str(cache)
    try:
        yield
    finally:
        os.environ.pop("GGSPEC_BUILD_CACHE", None)


@pytest.fixture(autouse=True)
def _native_module_put_back() -> Iterator[None]:
    """$GGSPEC_NATIVE_MODULE after each test as it was before: making a `native:DIR:MODULE`
    target sets it in the process that makes it (conformance/adapters/native.py), so a test that
    makes a variant's target in the test process itself (tests/inputs/test_sched_exhaustive.py's PASS2
    variant) handed that variant, as `native`, to every later test of its xdist worker (seen when
    the order of the files changed: tests/checks/test_checks_sched.py's native checks failed as PASS2)."""
    before = os.environ.get("GGSPEC_NATIVE_MODULE")
    yield
    if before is None:
        os.environ.pop("GGSPEC_NATIVE_MODULE", None)
    else:
        os.environ["GGSPEC_NATIVE_MODULE"] = before


class Rc8OrSkip:
    """rc.8 for a test (the `rc8_or_skip` fixture): fetched with npm and built in the user's cache
    as needed (conformance/adapters/rc8.py). Where it cannot be fetched or built here
    (`CannotFetch`: no npm, no network to the npm registry) the test is skipped, except under
    CI=true, where CI installs npm, and the test fails instead. Any other problem (a checksum, a
    compile error, a drifted declaration) is raised as it is."""

    @staticmethod
    def _unavailable(exc: Exception) -> None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but rc.8 cannot be fetched: {exc}")
        pytest.skip(f"rc.8 cannot be fetched here: {exc}")

    def target(self, name: str = "rc8") -> Any:
        """A fresh target `name` (make_target: rc8, rc8-asserts, or any other, which never needs
        the fetch)."""
        from ggspec.conformance.adapters import make_target
        from ggspec.conformance.errors import CannotFetch

        try:
            return make_target(name)
        except CannotFetch as exc:
            self._unavailable(exc)
            raise  # not reached: skip and fail raise

    def sources(self) -> tuple[Path, Path]:
        """(rc.8's include folder, its shared library), fetched and built as needed (ensure_rc8)."""
        from ggspec.conformance.adapters.rc8 import ensure_rc8
        from ggspec.conformance.errors import CannotFetch

        try:
            return ensure_rc8()
        except CannotFetch as exc:
            self._unavailable(exc)
            raise


@pytest.fixture(scope="session")
def rc8_or_skip() -> Rc8OrSkip:
    """The one place where the tests fetch rc.8 or skip (or fail under CI=true): see Rc8OrSkip."""
    return Rc8OrSkip()


@pytest.fixture(scope="module")
def fault_target(tmp_path_factory: pytest.TempPathFactory) -> str:
    """native built with its fault-injection points (GGSPEC_FAULT=…, native/src/fault.h), as a target name."""
    from ggspec.native.build import build_variant

    out = tmp_path_factory.mktemp("fault")
    build_variant("ggspec_native_fault", str(out), defines=["GGSPEC_FAULT_INJECTION"], extra_cflags=["-O0"])
    return f"native:{out}:ggspec_native_fault"
