"""The docs site builds with warnings as errors (docs/build.py: Sphinx + MyST), every internal
link and anchor resolves, every clause has its anchor, and the generated pages (matrix, errata,
changes, limits, API) cover what spec/ and reference/ hold. A headless Chromium opens a clause
anchor and finds the clause's heading in view, finds every clause ID in the matrix, and takes a
screenshot of `ggspec explain`'s drawing. The example test of the "own strategies" guide runs.
The sample outputs of the pages (docs/samples.py) are tests/project/test_docs_samples.py's.

Sphinx, MyST, Graphviz and Chromium are skipped where missing, except under CI=true.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from browser import chromium_page  # tests/browser.py (on pytest's pythonpath), shared with the report tests
from ggspec.conformance.tools import sitegen
from ggspec.reference.clauses import catalogue

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"


def need(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        if IN_CI:
            pytest.fail(f"CI=true but {module} is not installed (pip install -e '.[docs]')")
        pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two small report files, as `ggspec check --json` writes them (the clauses' statuses only)."""
    out = tmp_path_factory.mktemp("reports")
    ids = list(catalogue())
    files = []
    for target, profile, status in (("native", "fixed", "pass"), ("rc8", "rc8", "fail")):
        data = {"target": target, "profile": profile, "size": "dev", "seed": 1,
                "clauses": [{"id": cid, "status": status if i % 2 == 0 else "uncovered"} for i, cid in enumerate(ids)],
                "undefined_behaviour": {"TDATA-4": {"status": "confirmed", "detail": "tdata.views: the target crashed"}}}
        f = out / f"{target}.json"
        f.write_text(json.dumps(data), encoding="utf-8")
        files.append(f)
    return files


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, reports: list[Path]) -> Path:
    need("sphinx")
    need("myst_parser")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "build.py"), str(out), "--reports", ",".join(map(str, reports))],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"the site did not build cleanly:\n{proc.stdout}\n{proc.stderr}"
    assert "WARNING" not in proc.stderr, proc.stderr
    assert f"{len(catalogue())} clause anchors checked" in proc.stdout
    return out / "html"


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(v for k, v in attrs if k == "id" and v)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def page(site: Path, rel: str) -> _Text:
    p = _Text()
    p.feed((site / rel).read_text(encoding="utf-8"))
    return p


def test_every_internal_link_and_clause_anchor(site: Path) -> None:
    """docs/build.py checked them; check again here, so the test fails for a reason it names."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from build import check_links  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "docs"))
    assert check_links(site) == []
    for cid, c in catalogue().items():
        assert cid in page(site, f"spec/{Path(c.chapter).stem}.html").ids, cid


def test_spec_chapters_are_pages_with_the_clause_heads(site: Path) -> None:
    for path in sitegen.chapters():
        p = page(site, f"spec/{path.stem}.html")
        text = " ".join(p.text)
        for c in sitegen.read_chapter(path.read_text(encoding="utf-8"), path.name):
            assert f"{c.id}: {c.title}" in " ".join(text.split()), (path.name, c.id)


def test_matrix_has_every_clause_its_source_links_and_the_reports(site: Path) -> None:
    html = (site / "docs" / "traceability.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S)
    by_id = {}
    for row in rows:
        m = re.search(r'href="[^"]*spec/[a-z_]+\.html#([A-Z]+-\d+)"', row)
        if m:
            by_id[m.group(1)] = row
    assert set(by_id) == set(catalogue())
    places = sitegen.places()
    ids = list(catalogue())
    for i, cid in enumerate(ids):
        for p in places[cid]:
            assert f'href="../{p.source_href}"' in by_id[cid], (cid, p)
        cells = re.findall(r"<td[^>]*>(.*?)</td>", by_id[cid], re.S)
        want = ["pass", "fail"] if i % 2 == 0 else ["uncovered", "uncovered"]
        assert [re.sub(r"<[^>]+>", "", c).strip() for c in cells[-2:]] == want, cid
    text = " ".join(page(site, "docs/traceability.html").text)
    assert "native@fixed" in text and "rc8@rc8" in text


def test_errata_changes_limits_cover_the_spec(site: Path) -> None:
    texts = sitegen.clause_texts()
    errata = " ".join(page(site, "docs/errata.html").text)
    for cid, c in texts.items():
        assert (f"{cid}: {c.title}" in errata) == ("erratum" in c.keys), cid
    assert f"{sum('erratum' in c.keys for c in texts.values())} errata." in errata
    flat = " ".join("".join(page(site, "docs/errata.html").text).split())
    assert "undefined behaviour on rc8@rc8: confirmed (tdata.views: the target crashed)" in flat
    changes = " ".join(" ".join(page(site, "docs/changes.html").text).split())
    notes = [(cid, label) for cid, c in texts.items() for label in c.notes if label.startswith("Changed")]
    assert notes and all(cid in changes for cid, _ in notes)
    n_in = sum(label == "Changed in rc.8" for _, label in notes)
    assert f"{n_in} notes." in changes
    limits = " ".join("".join(page(site, "docs/limits.html").text).split())
    values = {lim.name: lim.value for lim in sitegen.limits()}
    for name, value, clause in (("sched.MAX_BACKENDS", 16, "SCHED-2"), ("sched.MAX_SPLITS", 256, "SCHED-15"),
                                ("sched.MAX_SPLIT_INPUTS", 16, "SCHED-18"), ("cpu.TENSOR_ALIGNMENT", 64, "CPU-2"),
                                ("registry.NAME_SIZE", 128, "REG-12"), ("sched.MAX_SPLITS * MAX_SPLIT_INPUTS", 4096, "SCHED-3")):
        assert values[name] == value and clause in next(lim.clauses for lim in sitegen.limits() if lim.name == name)
        assert name in limits


def test_api_pages_render_the_docstrings(site: Path) -> None:
    text = " ".join(page(site, "docs/api/tdata.html").text)
    assert "tensor_set" in text and "ggspec.reference.tdata" in text
    assert (site / "_modules" / "ggspec" / "reference" / "tdata.html").is_file()


def test_the_html_reports_clause_links_land_on_the_site(site: Path) -> None:
    """`ggspec check --html`'s clause IDs, given this site (--docs-url), link to a page of it with
    that clause's anchor: every one of them."""
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    from ggspec.conformance.reports.html import page as report_page

    text = report_page({"clauses": [{"id": cid, "status": "pass", "title": c.title} for cid, c in catalogue().items()]},
                       site.as_uri())
    hrefs = re.findall(r'<a class="clause" href="([^"]+)"', text)
    assert len(hrefs) == len(catalogue())
    for href in hrefs:
        parts = urlsplit(href)
        assert parts.fragment in page(site, str(Path(url2pathname(parts.path)).relative_to(site))).ids, href


def test_clause_anchor_lands_on_the_heading(site: Path) -> None:
    """`spec/tdata.html#TDATA-3` lands on the clause, and it is the one anchor of the clause: the
    heading's permalink, the sidebar's entry and the matrix's link all say `#TDATA-3`."""
    with chromium_page() as (pg, errors):
        pg.goto((site / "spec" / "tdata.html").as_uri() + "#TDATA-3")
        heading = pg.locator(":is(h2, h3)", has_text="TDATA-3: tensor_set stays inside the tensor")
        assert heading.count() == 1
        box = heading.bounding_box()
        # a scroll lands on whole pixels, so the heading may sit a fraction of one above the top
        assert box is not None and -1 < box["y"] < pg.viewport_size["height"], box
        assert pg.evaluate("window.scrollY") > 0  # it scrolled there: TDATA-3 is not the page's top
        assert heading.locator("a.headerlink").get_attribute("href") == "#TDATA-3"
        assert pg.locator("div.sphinxsidebar a", has_text="TDATA-3: tensor_set").get_attribute("href") == "#TDATA-3"
        assert pg.locator("#tdata-3").count() == 0  # no second, lower-case anchor
        pg.goto((site / "docs" / "traceability.html").as_uri())
        assert pg.locator('a[href="../spec/tdata.html#TDATA-3"]').count() >= 1
        body = pg.inner_text("body")
        missing = [cid for cid in catalogue() if not re.search(rf"\b{cid}\b", body)]
        assert missing == []
        assert errors == []


def _box(pg: Any, selector: str) -> dict[str, float]:
    box = pg.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not displayed"
    return box


@pytest.mark.parametrize("width, height", [(1920, 1080), (1280, 800), (1024, 768), (390, 844)],
                         ids=["1920", "1280", "1024", "phone-390"])
def test_navigation_beside_or_above_the_content(site: Path, tmp_path: Path, width: int, height: int) -> None:
    """At desktop widths (1024 px and up) the navigation is a column left of the content, on the
    first screen and still in view after a jump to a clause deep in a chapter; at a phone's width it
    is above the content, and the content starts on the first screen. Nothing is wider than the
    window. Geometry from the DOM; the screenshots are in this test's tmp_path."""
    with chromium_page(width, height) as (pg, errors):
        for name, url in (("index", (site / "docs" / "index.html").as_uri()),
                          ("clause", (site / "spec" / "tdata.html").as_uri() + "#TDATA-20")):
            pg.goto(url)
            pg.screenshot(path=str(tmp_path / f"{name}-{width}.png"))
            nav, body = _box(pg, "div.sphinxsidebar"), _box(pg, "div.body")
            where = f"{name} at {width} px: nav {nav}, content {body}"
            assert pg.evaluate("document.scrollingElement.scrollWidth") <= width, where
            assert pg.locator("div.sphinxsidebar a", has_text="User guide").first.is_visible(), where
            assert 0 <= nav["x"] and nav["x"] + nav["width"] <= width, where
            if width >= 1024:
                assert nav["x"] + nav["width"] <= body["x"], where  # beside, on the left
                assert body["width"] >= 600, where  # the content keeps a readable width
                assert nav["y"] < height and nav["y"] + nav["height"] > 0, where  # in view, also after the jump
                link = _box(pg, "div.sphinxsidebar a:text-is('User guide')")
                assert 0 <= link["y"] < height, where
            elif name == "index":
                assert nav["y"] + nav["height"] <= body["y"] + 1, where  # above
                assert 0 <= nav["y"] and body["y"] < height / 2, where  # the content starts on the first screen
        assert errors == []
    assert all((tmp_path / f"{n}-{width}.png").stat().st_size > 10_000 for n in ("index", "clause"))


def test_explain_drawing_in_the_browser(tmp_path: Path) -> None:
    need("graphviz")
    if shutil.which("dot") is None:
        if IN_CI:
            pytest.fail("CI=true but Graphviz's dot is missing (apt-get install graphviz)")
        pytest.skip("Graphviz's dot is missing")
    from ggspec.conformance.inputs.fixtures import FIXTURES
    from ggspec.conformance.tools.explain import explain, svg

    ex = explain(FIXTURES["encoder"](3), 3)
    drawing = tmp_path / "encoder.svg"
    drawing.write_text(svg(ex, "encoder"), encoding="utf-8")
    shot = tmp_path / "encoder.png"
    with chromium_page(1400, 1000) as (pg, errors):
        pg.goto(drawing.as_uri())
        n_nodes = pg.locator("g.node").count()
        pg.screenshot(path=str(shot), timeout=120_000)
        assert errors == []
    legend = len({r.backend for r in ex.rows} | {x.backend for x in ex.leafs})
    assert n_nodes == len(ex.rows) + len(ex.leafs) + len(ex.copies) + legend
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000


def test_the_strategies_guide_example_runs(tmp_path: Path) -> None:
    """docs/examples/test_my_backend.py, copied into a project of its own, passes under pytest."""
    shutil.copy(ROOT / "docs" / "examples" / "test_my_backend.py", tmp_path)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_backend.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "MY_TARGET": "native"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout


def test_the_user_guide_names_every_status_and_ends_in_content() -> None:
    """One definition of each status (the verdicts table, as conformance/engine/results.py judges), and
    no heading without text under it (such as an empty "Planned")."""
    from ggspec.conformance.engine.results import ALL_STATUSES

    text = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    table = text[text.index("### Verdicts"):text.index("### Known failures")]
    rows = re.findall(r"^\| ([a-z ]+?) \|", table, re.M)
    assert sorted(r for r in rows if r != "status") == sorted(ALL_STATUSES), rows
    sections = re.split(r"^#{2,4} .*$", text, flags=re.M)
    assert all(re.search(r"\w", s) for s in sections[1:]), "a heading with nothing under it"
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:  # a missing function is unsupported
        flat = " ".join(page.read_text(encoding="utf-8").split())
        assert not re.search(r"lacks? (?:fails|[^.]{0,60}\bfail\b)", flat), page


def test_help_and_docs_define_timeout_and_exit_codes_alike() -> None:
    """`--timeout` has one definition (one API call) in `check --help`, the user guide and the
    guides; exit code 2 (nothing of the target ran) and 3 (it was built, loading it failed) do
    not overlap."""
    from ggspec.conformance.tools.cli import EXIT_CODES

    proc = subprocess.run([sys.executable, "-m", "ggspec.conformance.tools.cli", "check", "--help"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    flat = " ".join(proc.stdout.split())
    assert "--timeout SECONDS how long the target may spend in one API call" in flat, flat
    guide = " ".join((ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8").split())
    assert "`--timeout SECONDS` (default 10) is how long the target may spend in one API call" in guide
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert not re.search(r"example[^.]{0,30}(?:hung|hangs) past `--timeout`", text), page
    codes = dict(re.findall(r"^ {2}(\d) {2}(.*(?:\n {5}.*)*)", EXIT_CODES, re.M))
    assert set(codes) == {"0", "1", "2", "3"}
    assert "load" not in codes["2"] and "built" in codes["3"] and "timed out" in codes["1"], codes


def test_the_pictures_are_drawn_and_shown(site: Path, tmp_path: Path) -> None:
    """docs/build.py draws the virtual device (docs/pictures/virtual-device.dot) and, in the
    scheduler chapter, the encoder and decoder fixtures as `ggspec explain` splits them over three
    backends; the kernel plot of bench/ is on the index. In Chromium each picture loads (a
    decoded image, not a broken link) inside the content's width (a device drawing: the paragraph
    it scrolls in); screenshots in tmp_path."""
    if shutil.which("dot") is None:
        if IN_CI:
            pytest.fail("CI=true but Graphviz's dot is missing (apt-get install graphviz)")
        pytest.skip("Graphviz's dot is missing: the site says so instead of drawing")
    from ggspec.conformance.inputs.fixtures import FIXTURES
    from ggspec.conformance.tools.explain import explain

    for name in ("encoder", "decoder"):  # the drawing is of the fixture as the reference splits it
        ex = explain(FIXTURES[name](3), 3)
        drawn = (site / "_images" / f"{name}.svg").read_text(encoding="utf-8")
        assert drawn.count('class="node"') == len(ex.rows) + len(ex.leafs) + len(ex.copies) + len(
            {r.backend for r in ex.rows} | {x.backend for x in ex.leafs}), name
    with chromium_page(1280, 900) as (pg, errors):
        for rel, srcs in (("docs/virtual-device.html", ["virtual-device.svg"]), ("docs/webgpu.html", ["webgpu-device.svg"]),
                          ("docs/versions.html", ["versions.svg"]),
                          ("spec/sched.html", ["encoder.svg", "decoder.svg"]), ("docs/index.html", ["kernels.png"])):
            pg.goto((site / rel).as_uri())
            body = _box(pg, "div.body")
            for src in srcs:
                img = pg.locator(f"div.body img[src$='_images/{src}']")
                assert img.count() == 1, (rel, src)
                img.scroll_into_view_if_needed()
                assert pg.evaluate("(e) => e.complete && e.naturalWidth > 0", img.element_handle()), (rel, src)
                box = img.bounding_box()
                assert box is not None and box["width"] > 300, (rel, src)
                # a device drawing keeps its own size and scrolls sideways inside its paragraph
                # (ggspec.css): that paragraph is what must fit the content
                shown = pg.locator(f"div.body p:has(> img[src$='_images/{src}'])").bounding_box() \
                    if src.endswith("-device.svg") else box
                assert shown is not None and shown["x"] + shown["width"] <= body["x"] + body["width"] + 1, (rel, src)
                img.screenshot(path=str(tmp_path / f"{src}.png"))
        assert errors == []


def test_the_webgpu_device_and_the_version_chart_are_on_their_pages(site: Path) -> None:
    """docs/build.py draws docs/pictures/webgpu-device.dot (every node of it) onto the WebGPU page
    and the committed compare report as a chart onto the version page (without a browser: the
    image tags and the files they name)."""
    import json
    import xml.etree.ElementTree as ET

    from ggspec.conformance.tools.versions import chart_svg

    if shutil.which("dot") is None:
        if IN_CI:
            pytest.fail("CI=true but Graphviz's dot is missing (apt-get install graphviz)")
        pytest.skip("Graphviz's dot is missing: the site says so instead of drawing")
    for rel, name in (("docs/webgpu.html", "webgpu-device.svg"), ("docs/versions.html", "versions.svg")):
        text = (site / rel).read_text(encoding="utf-8")
        srcs = re.findall(r'<img [^>]*src="([^"]+)"', text)
        assert [src for src in srcs if src.endswith(f"_images/{name}")], (rel, srcs)
        ET.fromstring((site / "_images" / name).read_text(encoding="utf-8"))  # a whole SVG
    dot = (ROOT / "docs" / "pictures" / "webgpu-device.dot").read_text(encoding="utf-8")
    nodes = re.findall(r"^\s+(\w+) \[label=", dot, re.M)
    drawn = (site / "_images" / "webgpu-device.svg").read_text(encoding="utf-8")
    assert drawn.count('class="node"') == len(nodes) and all(f"<title>{n}</title>" in drawn for n in nodes)
    data = json.loads((ROOT / "docs" / "data" / "versions-compare.json").read_text(encoding="utf-8"))
    assert (site / "_images" / "versions.svg").read_text(encoding="utf-8") == chart_svg(data)


def test_the_device_drawings_are_shown_at_their_own_size(site: Path) -> None:
    """At 1024 px the virtual and WebGPU device drawings (wider than the content) keep their own
    size, so their 10 pt labels stay readable, and scroll sideways inside the page."""
    with chromium_page(1024, 800) as (pg, errors):
        for page, picture in (("virtual-device.html", "virtual-device.svg"), ("webgpu.html", "webgpu-device.svg")):
            pg.goto((site / "docs" / page).as_uri())
            pg.wait_for_load_state("load")
            shown, natural = pg.evaluate(
                f"(() => {{ const i = document.querySelector('img[src$=\"{picture}\"]');"
                " return [i.getBoundingClientRect().width, i.naturalWidth]; })()")
            assert natural > 700 and shown == pytest.approx(natural, rel=0.01), (page, shown, natural)
            assert pg.evaluate("document.scrollingElement.scrollWidth") <= 1024, page
        assert errors == []


@pytest.mark.parametrize("width", [1024, 390], ids=["1024", "phone-390"])
def test_no_page_is_wider_than_the_window(site: Path, width: int) -> None:
    """Every page of the site (the highlighted sources aside) fits the window: long inline code,
    API signatures and tables wrap or scroll inside the content."""
    pages = sorted(p for p in site.rglob("*.html")
                   if "_modules" not in p.parts and 'http-equiv="refresh"' not in p.read_text(encoding="utf-8"))
    assert len(pages) > 30
    with chromium_page(width, 800) as (pg, errors):
        wide = []
        for p in pages:
            pg.goto(p.as_uri())
            if pg.evaluate("document.scrollingElement.scrollWidth") > width:
                wide.append(str(p.relative_to(site)))
        assert wide == []
        assert errors == []
