"""Moved to conformance/engine/registry.py (Check, check, example, Recorder, CHECKS) and
engine/differential.py (differential, judge, Mismatch, ...); this path stays for imports already
written (see _moved.py)."""

from .engine.differential import *  # noqa: F403
from .engine.registry import *  # noqa: F403
