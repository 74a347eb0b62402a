"""Moved to conformance/inputs/sched_scope.py; this path stays for printed commands and imports (see _moved.py)."""

from ._moved import alias

alias(__name__, "inputs.sched_scope")
