"""`ggspec check --html FILE`: one self-contained page, opened in headless Chromium (tests/browser.py):
no console errors, a row for every clause, the area and status filters work, every failure shows
its difference and reproducer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import chromium_page
from ggspec.conformance.engine.results import CheckResult, RunConfig, verdicts
from ggspec.conformance.reports import report
from ggspec.conformance.reports.html import page
from ggspec.reference.clauses import Profile, catalogue

ROOT = Path(__file__).resolve().parents[2]
REPRO = ("reproducer:\npython - <<'EOF'\nfrom ggspec.conformance.tools.replay import replay; "
         "replay('tdata.get_reads_the_range', target='native', profile='fixed', args={'n': 1})\nEOF")


def _data() -> dict[str, object]:
    """A report over the whole catalogue: TDATA-8 fails, TDATA-4 is blamed as an erratum, the rest
    passes or is uncovered."""
    results = [
        CheckResult("tdata.get_reads_the_range", ("TDATA-8",), "fail", 3,
                    "tdata.get_reads_the_range [TDATA-8]: observation 0 'got': 1 of 4 bytes differ <&>\n" + REPRO, 1.0),
        CheckResult("tdata.set_offset_wraps", ("TDATA-3",), "pass", 2, "", 0.5,
                    errata={"TDATA-4": ("crash", "erratum TDATA-4 (fixed profile): killed by SIGSEGV\n" + REPRO)}),
        CheckResult("buf.clear_fills", ("BUF-3",), "pass", 3, "", 0.2),
    ]
    return report.to_json(verdicts(results), results, RunConfig("native", Profile.FIXED, max_examples=3, seed=5))


def test_the_page_is_self_contained() -> None:
    text = page(_data(), "https://docs.example/ggspec")
    assert not re.search(r"""src=["']?(https?:|//)""", text), "an external asset"
    assert "<script src" not in text and "<link" not in text
    assert "&lt;&amp;&gt;" in text  # details are escaped


def test_clause_ids_link_to_their_anchor_on_the_docs_site(monkeypatch: pytest.MonkeyPatch) -> None:
    """One anchor form, the one docs/build.py checks every clause has: spec/CHAPTER.html#ID."""
    from ggspec.conformance.reports import html as html_mod

    text = page(_data(), "https://docs.example/ggspec")
    links = dict(re.findall(r'<tr id="row-([A-Z]+-\d+)".*?<a class="clause" href="([^"]+)"', text))
    assert set(links) == set(catalogue())
    for cid, href in links.items():
        assert href == f"https://docs.example/ggspec/spec/{Path(catalogue()[cid].chapter).stem}.html#{cid}"
    assert links["TDATA-3"] == "https://docs.example/ggspec/spec/tdata.html#TDATA-3"
    assert '<h3 id="fail-TDATA-8">FAIL <a class="clause" href="https://docs.example/ggspec/spec/tdata.html#TDATA-8"' in text
    assert 'class="clause"' not in page(_data(), None)  # no site known: plain IDs
    monkeypatch.setenv("GGSPEC_DOCS_URL", "https://elsewhere.example/")
    assert html_mod.docs_base(None) == "https://elsewhere.example"
    assert html_mod.docs_base("file:///site/html") == "file:///site/html"


def test_the_page_in_a_browser(tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    path.write_text(page(_data()), encoding="utf-8")
    with chromium_page() as (pg, errors):
        pg.goto(path.as_uri())
        ids = pg.eval_on_selector_all("#clauses tbody tr", "rows => rows.map(r => r.id)")
        assert ids == [f"row-{cid}" for cid in catalogue()], "a clause row is missing"
        assert pg.inner_text("#shown") == f"{len(ids)} of {len(ids)} clauses shown"
        pg.select_option("#status", "fail")
        visible = pg.eval_on_selector_all("#clauses tbody tr:not([hidden])", "rows => rows.map(r => r.id)")
        assert visible == ["row-TDATA-8"]
        pg.select_option("#status", "")
        pg.select_option("#area", "BUF")
        visible = pg.eval_on_selector_all("#clauses tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.area)")
        assert visible and set(visible) == {"BUF"} and len(visible) == sum(c.startswith("BUF-") for c in catalogue())
        pg.fill("#text", "BUF-3")
        assert pg.eval_on_selector_all("#clauses tbody tr:not([hidden])", "rows => rows.map(r => r.id)") == ["row-BUF-3"]
        fail = pg.inner_text("#fail-TDATA-8 ~ .failure")
        assert "1 of 4 bytes differ <&>" in fail and "replay('tdata.get_reads_the_range'" in fail
        assert "killed by SIGSEGV" in pg.inner_text("#failures ~ h3#fail-TDATA-4 + .failure")
        pg.fill("#text", "")
        pg.select_option("#area", "")
        pg.click("#row-TDATA-8 a")
        assert pg.evaluate("location.hash") == "#fail-TDATA-8"
        assert errors == []


def test_check_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance", "check", "--select", "tdata.set_writes_the_range",
                           "--max-examples", "2", "--seed", "3", "--quiet", "--html", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    assert 'id="row-TDATA-4"' in text and "seed</dt><dd>3</dd>" in text
