"""Moved to conformance/tools/pytest_plugin.py; this path stays for printed commands and imports (see _moved.py)."""

from ._moved import alias

alias(__name__, "tools.pytest_plugin")
