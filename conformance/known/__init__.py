"""The shipped known-failures files (one TOML file per target). The code that reads them is
conformance/reports/known.py; this package keeps the files; its old import
path is an alias (conformance/_moved.py)."""
