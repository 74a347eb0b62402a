"""The shipped graph vectors (JSON files, format `ggspec-vector/1`, docs/vectors.md). The code
that reads, saves and replays them is conformance/tools/vectors.py; this package keeps the files;
its old import path is an alias (conformance/_moved.py)."""
