"""Build the docs site: `python docs/build.py OUT [--reports A.json,B.json]`.

1. Stage the sources in OUT/_source: docs/ and spec/ in the repository's layout (so every
   relative link between them keeps working), each spec chapter with an anchor per clause, and
   the generated pages (traceability matrix, errata, changes, limits, API), written there and
   never into docs/ (conformance/tools/sitegen.py makes them), and the pictures (`pictures`).
2. Run Sphinx (configuration: docs/conf.py) with warnings as errors into OUT/html.
3. Check the built site: every internal href and src reaches a file and, with a fragment, an
   element with that id; every clause ID has its anchor in its chapter's page.

Report files (`ggspec check --json`) for the matrix's status columns come from `--reports` or
`$GGSPEC_DOCS_REPORTS` (comma-separated). Exit status: 0 built and checked, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ggspec.conformance.tools import sitegen, versions
from ggspec.reference.clauses import catalogue

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

#: pages every build writes (under docs/ of the staged tree)
GENERATED = ("traceability.md", "errata.md", "changes.md", "limits.md", "versions.md")


def stage(source: Path, reports: list[sitegen.Report]) -> None:
    """Lay out the Sphinx source tree in `source` (emptied first)."""
    if source.exists():
        shutil.rmtree(source)
    docs = source / "docs"
    for path in DOCS.rglob("*"):
        rel = path.relative_to(DOCS)
        if path.is_file() and rel.parts[0] not in ("_static", "__pycache__") and path.suffix in (".md", ".py", ".yml", ".json"):
            if path.name in ("conf.py", "build.py"):
                continue
            (docs / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, docs / rel)
    spec = source / "spec"
    spec.mkdir(parents=True)
    for path in sitegen.chapters():
        (spec / path.name).write_text(sitegen.anchored_chapter(path.read_text(encoding="utf-8")), encoding="utf-8")
    pages = {
        "traceability.md": sitegen.matrix_page(reports),
        "errata.md": sitegen.errata_page(reports),
        "changes.md": sitegen.changes_page(),
        "limits.md": sitegen.limits_page(),
        "versions.md": versions.page_from(DOCS / "data" / "versions-compare.json"),  # conformance/tools/versions.py
    }
    for name, text in pages.items():
        (docs / name).write_text(text, encoding="utf-8")
    (docs / "api").mkdir(exist_ok=True)
    for name, text in sitegen.api_pages().items():
        (docs / "api" / name).write_text(text, encoding="utf-8")
    pictures(source)
    guides = sorted(p.stem for p in (docs / "guides").glob("*.md")) if (docs / "guides").exists() else []
    hand = [p.stem for p in sorted(DOCS.glob("*.md")) if p.stem != "index" and p.name not in GENERATED]
    hand.sort(key=lambda stem: stem != "user-guide")  # the user guide first in the navigation
    toc = ["", "```{toctree}", ":hidden:", ":maxdepth: 2", "",
           *hand, *(f"guides/{g}" for g in guides), *(Path(g).stem for g in GENERATED), "api/index",
           *(f"../spec/{p.stem}" for p in sitegen.chapters()), "```", ""]
    index = docs / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\n".join(toc), encoding="utf-8")


#: `<!-- picture: NAME -->` in a page of docs/ becomes this picture on the site (the comment is
#: invisible on GitHub): NAME -> (file under the staged docs/pictures/, alt text)
PICTURES = {
    "virtual-device": ("virtual-device.svg", "The virtual device backend: its queue, its entries, the inaccessible "
                                             "reservation and the separate byte store, beside the CPU backend"),
    "kernels": ("kernels.png", "native's CPU kernels against rc.8 and numpy: time relative to rc.8 -O3 -march=native, "
                               "1 and 2 threads (bench/RESULTS.md)"),
    "webgpu-device": ("webgpu-device.svg", "The WebGPU device backend: one device a process, its one queue, the GPU "
                                           "storage buffer behind an inaccessible reservation, the staging and scratch "
                                           "buffers, one compute pass a graph, over wgpu-native"),
    "versions": ("versions.svg", "Clause statuses per column of the version table: rc.8, llama-cpp-python and each "
                                 "ggml-python version, from docs/data/versions-compare.json"),
}
_PICTURE = re.compile(r"^<!-- picture: ([a-z-]+) -->$", re.M)
NO_DOT = "*(A drawing goes here when the site is built with Graphviz's `dot` installed: apt-get install graphviz.)*"


def _dot(source: str) -> str | None:
    """SVG text of a Graphviz source, or None without `dot`."""
    if shutil.which("dot") is None:
        return None
    proc = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise ValueError(f"dot failed: {proc.stderr.strip()}")
    return proc.stdout


def pictures(source: Path) -> None:
    """Draw the site's pictures into the staged tree, made at each build so they follow the code:
    the virtual and WebGPU devices (docs/pictures/*.dot), the version table as a chart
    (versions.chart_svg of docs/data/versions-compare.json), the kernel plot of bench/
    (bench/kernels.png, from bench/run_all.py), and in the scheduler chapter the two fixtures as
    the reference scheduler splits them over three backends (`ggspec explain encoder|decoder`).
    Without Graphviz's `dot` each drawing is a sentence saying so."""
    out = source / "docs" / "pictures"
    out.mkdir(parents=True, exist_ok=True)
    for device in ("virtual-device", "webgpu-device"):
        drawn = _dot((DOCS / "pictures" / f"{device}.dot").read_text(encoding="utf-8"))
        if drawn is not None:
            (out / f"{device}.svg").write_text(drawn, encoding="utf-8")
    compare = DOCS / "data" / "versions-compare.json"
    if compare.is_file():  # the version table as a chart (plain SVG, no Graphviz needed)
        import json

        (out / "versions.svg").write_text(versions.chart_svg(json.loads(compare.read_text(encoding="utf-8"))),
                                          encoding="utf-8")
    shutil.copyfile(ROOT / "bench" / "kernels.png", out / "kernels.png")
    for page in (source / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        if not _PICTURE.search(text):
            continue

        def image(m: re.Match[str], page: Path = page) -> str:
            if m.group(1) not in PICTURES:
                raise ValueError(f"{page.name}: no picture named {m.group(1)!r} (docs/build.py PICTURES)")
            name, alt = PICTURES[m.group(1)]
            if not (out / name).is_file():
                return NO_DOT
            return f"![{alt}]({os.path.relpath(out / name, page.parent)})"

        page.write_text(_PICTURE.sub(image, text), encoding="utf-8")
    sched = source / "spec" / "sched.md"
    lines = ["", "## Drawings: the two fixtures, split by the reference scheduler", "",
             "`ggspec explain encoder --backends 3` and `ggspec explain decoder --backends 3`, drawn when this site was "
             "built: a cluster per split, coloured by backend (GPU0 and GPU1 are virtual devices, the CPU is the "
             "fallback), the scheduler's copies (`GPU0#name`) as nodes on the edges they replace.", ""]
    if shutil.which("dot") is None:
        lines.append(NO_DOT)
    else:
        from ggspec.conformance.inputs.fixtures import FIXTURES
        from ggspec.conformance.tools.explain import explain, svg

        (source / "spec" / "pictures").mkdir(exist_ok=True)
        for name in ("encoder", "decoder"):
            ex = explain(FIXTURES[name](3), 3)
            title = f"{name}: {len(ex.splits)} split(s) over {', '.join(ex.backends)}"
            (source / "spec" / "pictures" / f"{name}.svg").write_text(svg(ex, title), encoding="utf-8")
            lines += [f"![The {name} fixture: {title}](pictures/{name}.svg)", ""]
    sched.write_text(sched.read_text(encoding="utf-8") + "\n".join(lines) + "\n", encoding="utf-8")


def sphinx(source: Path, out: Path) -> int:
    from sphinx.cmd.build import build_main

    return build_main(["-W", "--keep-going", "-q", "-b", "html", "-c", str(DOCS), "-d", str(out / "_doctrees"),
                       str(source), str(out / "html")])


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)
            if v is not None and ((k == "href" and tag in ("a", "link")) or (k == "src" and tag in ("img", "script"))):
                self.refs.append(v)


def check_links(html: Path) -> list[str]:
    """Broken internal links and missing clause anchors of the built site at `html`."""
    pages: dict[Path, _Links] = {}
    for path in html.rglob("*.html"):
        p = _Links()
        p.feed(path.read_text(encoding="utf-8", errors="replace"))
        pages[path.resolve()] = p
    problems = []
    for path, p in sorted(pages.items()):
        for href in p.refs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{path.relative_to(html.resolve())}: broken link {href}")
                continue
            if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in pages[target].ids:
                problems.append(f"{path.relative_to(html.resolve())}: no anchor #{parts.fragment} in {target.name} ({href})")
    for cid, c in catalogue().items():
        page = (html / "spec" / c.chapter).with_suffix(".html").resolve()
        if page not in pages or cid not in pages[page].ids:
            problems.append(f"clause {cid}: no anchor #{cid} in spec/{page.name}")
    return problems


def build(out: Path, report_files: list[str]) -> int:
    reports = sitegen.load_reports(report_files)
    source = out / "_source"
    stage(source, reports)
    status = sphinx(source, out)
    if status != 0:
        print(f"docs: sphinx failed (exit {status})", file=sys.stderr)
        return 1
    (out / "html" / "index.html").write_text(
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>ggspec</title>'
        '<meta http-equiv="refresh" content="0; url=docs/index.html"></head>'
        '<body><a href="docs/index.html">ggspec documentation</a></body></html>\n', encoding="utf-8")
    problems = check_links(out / "html")
    for line in problems:
        print(f"docs: {line}", file=sys.stderr)
    if problems:
        return 1
    print(f"docs: built {out / 'html' / 'docs' / 'index.html'}; links and {len(catalogue())} clause anchors checked")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docs/build.py", description="Build and check the ggspec docs site.")
    parser.add_argument("out", type=Path, help="output folder (OUT/html is the site)")
    parser.add_argument("--reports", default=os.environ.get("GGSPEC_DOCS_REPORTS", ""),
                        help="comma-separated ggspec check --json reports for the matrix (default $GGSPEC_DOCS_REPORTS)")
    args = parser.parse_args(argv)
    try:
        return build(args.out, [p for p in args.reports.split(",") if p.strip()])
    except ValueError as exc:
        print(f"docs: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
