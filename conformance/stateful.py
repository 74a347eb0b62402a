"""Moved to conformance/checks/stateful.py; this path stays for printed commands and imports (see _moved.py)."""

from ._moved import alias

alias(__name__, "checks.stateful")
