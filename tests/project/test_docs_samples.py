"""The sample outputs in README.md and the guides come from real runs (docs/samples.py): every
page that marks an output block is checked, a stale count is found, and a real run of every
page's commands shows every output the pages print. Apart from tests/project/test_docs.py (the site), so
that pytest-xdist (`--dist loadfile`) runs the real run, minutes long, beside the site's build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _samples() -> Any:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import samples  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "docs"))
    return samples


def test_every_page_with_samples_is_checked() -> None:
    """A page that marks an output block is one docs/samples.py checks (and the test below runs)."""
    samples = _samples()
    marked = {str(p.relative_to(ROOT)) for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
              if "<!-- output" in p.read_text(encoding="utf-8")}
    assert marked == set(samples.PAGES)
    for name in samples.PAGES:
        page = samples.read(ROOT / name)
        assert any(b.kind == "output" for b in page.blocks), name


def test_a_sample_with_a_stale_count_is_found() -> None:
    """The comparison itself: a count that differs from the run is named; elisions, `…` and
    durations are not differences."""
    samples = _samples()
    real = ["ggspec check: target native", "TDATA-1   assert    pass   6  tensor_set needs data",
            "TDATA-2   assert    pass   7  tensor_set needs a buffer", "",
            "29 pass, 0 fail, 0 crash — 29 clauses, 34 checks in 1.4s"]
    assert samples.mismatches(["...", "TDATA-2   assert    pass   7  tensor_set …", "...",
                               "29 pass, 0 fail, 0 crash — 29 clauses, 34 checks in 16.6s"], real) == []
    stale = ["...", "29 pass, 0 fail, 0 crash — 29 clauses, 33 checks in 12.7s"]
    assert samples.mismatches(stale, real) != []
    assert samples.updated(stale, real) == ["...", real[-1]]
    # lines between two elisions are contiguous and in order
    assert samples.mismatches([real[2], real[1]], real) != []


def test_samples_come_from_a_real_run(rc8_or_skip: Any) -> None:
    """Every command marked `<!-- run -->` in README.md and the guides runs as written, and every
    output they show (counts, table rows, summary lines, exit statuses) is in that run's output
    (docs/samples.py; the verify-your-port guide builds rc.8's sources as its port, so it needs
    npm and the network, or the cached package, like tests/adapters/test_external.py)."""
    rc8_or_skip.sources()
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "samples.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, ("a sample output differs from a real run (python docs/samples.py --update "
                                  f"rewrites the counts):\n{proc.stderr[-4000:]}")
