"""Moved to conformance/inputs/graph_strategies.py; this path stays for printed commands and imports (see _moved.py)."""

from ._moved import alias

alias(__name__, "inputs.graph_strategies")
