"""`ggspec --version`: the tool's version, the API version it specifies, and the commit.

The commit comes from `git rev-parse` when the package runs from a checkout (an editable
install), else from `_build_commit.txt`, which setup.py writes into a built wheel when it is
built from a checkout; otherwise it is "commit unknown".
"""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

#: the API this specification describes (DESIGN.md)
SPECIFIES = "ggml-backend as in whisper.rn 0.4.0-rc.8"

_HERE = Path(__file__).resolve().parent


def tool_version() -> str:
    try:
        return metadata.version("ggspec")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def commit() -> str | None:
    """The git commit of this code, when known (a checkout, or recorded at build time)."""
    root = _HERE.parent
    if (root / ".git").exists() and (root / "pyproject.toml").is_file():
        try:
            out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                 text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            out = None
        if out is not None and out.returncode == 0 and out.stdout.strip():
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10, check=False).stdout.strip()
            return out.stdout.strip() + ("+dirty" if dirty else "")
    recorded = _HERE / "_build_commit.txt"
    if recorded.is_file():
        text = recorded.read_text(encoding="utf-8").strip()
        return text or None
    return None


def version_line() -> str:
    """What `ggspec --version` prints."""
    return f"ggspec {tool_version()} — specifies {SPECIFIES} — {('commit ' + c) if (c := commit()) else 'commit unknown'}"
