"""Shared pytest configuration: hypothesis run-size profiles (dev, ci, thorough), the seed
printed in the header, one object cache for the run's native builds, and under pytest-xdist the
longest test files first (below)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("thorough", max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("GGSPEC_HYPOTHESIS_PROFILE", "dev"))
#: the suite's `ggspec check` runs neither read nor write the verdict cache (tests write only under
#: tmp_path); tests/test_cache.py turns it back on in a cache of its own
os.environ["GGSPEC_VERDICT_CACHE"] = "off"


#: the test files that take longest (bench/RESULTS.md, "Tests in minutes"), longest first: under
#: pytest-xdist (`-n N`, pyproject's --dist loadfile) they are handed out first, so that no worker
#: starts one of them while the others are running out of work
LONGEST_FILES = (
    "tests/test_docs.py",
    "tests/test_sched_defects.py",
    "tests/test_faults.py",
    "tests/test_packaging.py",
    "tests/test_vectors.py",
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
