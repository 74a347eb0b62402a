"""Moved to conformance/engine/results.py (RunConfig, CheckResult, ClauseVerdict, verdicts) and
engine/runner.py (run_check, run_all, load_checks, ...); this path stays for imports already
written (see _moved.py)."""

from .engine.results import *  # noqa: F403
from .engine.runner import *  # noqa: F403
