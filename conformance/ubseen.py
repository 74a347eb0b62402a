"""Moved to conformance/engine/after_ub.py; this path stays for printed commands and imports (see _moved.py)."""

from ._moved import alias

alias(__name__, "engine.after_ub")
