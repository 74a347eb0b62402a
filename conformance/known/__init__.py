"""The shipped known-failures files (one TOML file per target). The code that reads them is
conformance/reports/known.py; this package keeps the files and the old import path."""

from .._moved import alias

alias(__name__, "reports.known")
