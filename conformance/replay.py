"""Moved to conformance/tools/replay.py; this path stays for printed commands and imports (see _moved.py)."""

from ._moved import alias

alias(__name__, "tools.replay")
