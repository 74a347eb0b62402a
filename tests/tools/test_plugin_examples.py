"""The pytest plugin runs a check with the examples `ggspec check` runs at the same seed, the
state machine too (`stateful.lifecycle`: issue 33 saw 12 under the plugin, 11 under check), also
in a project whose own modules (a conftest with constants) hypothesis may draw from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_stateful_lifecycle_runs_the_same_examples(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("LIMITS = (3, 17, 255, 4096, 65535, 123456789)\nNAMES = ('abc', b'xyz')\n")
    common = ("--select", "stateful.lifecycle", "--seed", "7")
    check = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", *common, "--quiet", "--json", "c.json"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert check.returncode == 0, check.stderr[-2000:]
    plugin = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--ggspec",
                             "--ggspec-select", "stateful.lifecycle", "--ggspec-seed", "7", "--ggspec-json", "p.json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert plugin.returncode == 0, plugin.stdout[-2000:]
    ran = [[(c["name"], c["examples"]) for c in json.loads((tmp_path / f).read_text())["checks"]]
           for f in ("c.json", "p.json")]
    assert ran[0] == ran[1] and ran[0][0][1] > 1, ran
