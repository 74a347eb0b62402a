"""Shared pytest configuration: hypothesis run-size profiles (dev, ci, thorough), the seed
printed in the header, and a marker for tests that need the native build."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("thorough", max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("GGSPEC_HYPOTHESIS_PROFILE", "dev"))
#: the suite's `ggspec check` runs neither read nor write the verdict cache (tests write only under
#: tmp_path); tests/test_cache.py turns it back on in a cache of its own
os.environ["GGSPEC_VERDICT_CACHE"] = "off"


def pytest_report_header(config: pytest.Config) -> str:
    return f"ggspec: hypothesis profile {os.environ.get('GGSPEC_HYPOTHESIS_PROFILE', 'dev')}"
