"""`ggspec check --html FILE`: the run as one self-contained HTML page.

The page holds everything inline (style and a few lines of vanilla JavaScript, no external
asset): a summary (target and its library, profile, seed, counts, verdict, versions, times);
the clause table, filterable by area and by status (and by text); and every failing clause
with each failing check's whole difference and its reproducer. It is written from the JSON
report (report.to_json), so a merged or saved report renders the same way.
"""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import catalogue

from ..engine.results import FAILING
from . import report

#: a status's colour on the HTML pages (this one and `ggspec compare --html`'s)
COLOUR: dict[str, str] = {"pass": "#d8f5d0", "fail": "#f9d0c4", "crash": "#f3a59a", "timeout": "#f3a59a",
                             "uncovered": "#eeeeee", "unsupported": "#e4e9f7", "xfail": "#fbeec2", "xpass": "#f7d98b",
                             "interrupted": "#f3a59a", "not run": "#eeeeee", "partial": "#fbeec2",
                             "skipped": "#eeeeee", "not selected": "#eeeeee"}
#: the order of the clauses on the page: failures first
ORDER: tuple[str, ...] = ("fail", "crash", "timeout", "interrupted", "xpass", "unsupported", "xfail", "partial",
                             "skipped", "uncovered", "not run", "not selected", "pass")

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin-bottom:.2em} h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}
th{background:#f4f4f4;text-align:left} td:first-child{white-space:nowrap} td.n{text-align:right;font-variant-numeric:tabular-nums}
td.status{font-family:monospace;text-align:center}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:bold}
.filters{margin:1em 0} .filters label{margin-right:1em}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 1em;margin:.5em 0}
dl.meta dt{font-weight:bold} dl.meta dd{margin:0;font-family:monospace;word-break:break-all}
.failure{margin:.6em 0 1.2em 0} .failure h4{margin:.3em 0;font-size:1em}
"""

_SCRIPT = """
(function () {
  var area = document.getElementById('area'), status = document.getElementById('status');
  var text = document.getElementById('text'), shown = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#clauses tbody tr'));
  function apply() {
    var a = area.value, s = status.value, t = text.value.trim().toLowerCase(), n = 0;
    rows.forEach(function (row) {
      var ok = (!a || row.dataset.area === a) && (!s || row.dataset.status === s) &&
               (!t || row.textContent.toLowerCase().indexOf(t) >= 0);
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + ' of ' + rows.length + ' clauses shown';
  }
  [area, status].forEach(function (el) { el.addEventListener('change', apply); });
  text.addEventListener('input', apply);
  apply();
})();
"""


#: the docs site that `python docs/build.py build/site` builds in a checkout, if it was built
_LOCAL_SITE = Path(__file__).resolve().parents[2] / "build" / "site" / "html"


def docs_base(given: str | None = None) -> str | None:
    """The docs site the clause IDs link to: `given` (--docs-url), else $GGSPEC_DOCS_URL, else the
    site built in this checkout (build/site/html, as a file: URL) when there is one, else None
    (the IDs are not links)."""
    import os

    base = given or os.environ.get("GGSPEC_DOCS_URL")
    if base:
        return base.rstrip("/")
    if (_LOCAL_SITE / "spec").is_dir():
        return _LOCAL_SITE.as_uri()
    return None


def clause_url(clause_id: str, base: str) -> str:
    """A clause's place on the docs site, in the one anchor form the site has: its chapter's
    page and the ID as written, `BASE/spec/tdata.html#TDATA-3` (docs/conf.py, docs/build.py)."""
    chapter = catalogue()[clause_id].chapter
    return f"{base}/spec/{Path(chapter).with_suffix('.html').as_posix()}#{clause_id}"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _options(values: list[str]) -> str:
    return '<option value="">all</option>' + "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)


def page(data: dict[str, Any], docs_url: str | None = None) -> str:
    """The HTML text of the JSON report `data`; with `docs_url`, each clause ID links to its
    clause on that docs site (clause_url)."""
    known = catalogue()
    clauses: list[dict[str, Any]] = list(data.get("clauses", []))
    verdicts, results = report.from_json(data)
    summary = data.get("summary") or report.summary(verdicts)
    desc = data.get("target_description") or {"name": data.get("target", "?")}
    versions = data.get("versions") or {}
    counts = Counter(c["status"] for c in clauses)
    title = f"ggspec check — {desc.get('name', data.get('target'))}, profile {data.get('profile')}"
    meta = [("target", desc.get("name")), ("what", desc.get("kind")), ("library", desc.get("library")),
            ("sha256", desc.get("sha256")), ("profile", data.get("profile")), ("size", data.get("size")),
            ("examples a check", data.get("examples")), ("seed", data.get("seed")), ("shard", data.get("shard")),
            ("started", data.get("started")), ("seconds", data.get("seconds")), ("tool", versions.get("tool")),
            ("specifies", versions.get("specifies")), ("commit", versions.get("commit"))]
    meta_html = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in meta if v not in (None, ""))
    verdict = str(summary.get("verdict", "?"))
    badge = f'<span class="verdict" style="background:{COLOUR.get(verdict, "#eee")}">{_e(verdict.upper())}</span>'
    count_text = ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: _order(kv[0])))

    rows = []
    for c in clauses:
        status = c["status"]
        area = c["id"].split("-")[0]
        shown = status if status == "pass" else status.upper()
        cell = (f'<a href="#fail-{_e(c["id"])}">{_e(shown)}</a>' if status in FAILING else _e(shown))
        rows.append(
            f'<tr id="row-{_e(c["id"])}" data-area="{_e(area)}" data-status="{_e(status)}">'
            f'<td>{_clause_cell(c["id"], docs_url if c["id"] in known else None)}</td><td>{_e(c.get("kind", ""))}</td>'
            f'<td class="status" style="background:{COLOUR.get(status, "#fff")}">{cell}</td>'
            f'<td class="n">{_e(c.get("examples", ""))}</td><td>{_e(c.get("title", ""))}</td>'
            f'<td>{_e(", ".join(c.get("checks", [])))}</td></tr>')
    areas = sorted({c["id"].split("-")[0] for c in clauses})
    statuses = sorted(counts, key=_order)

    failures = _failures(verdicts, results, known, docs_url)
    failures_html = "\n".join(failures) if failures else "<p>No clause failed.</p>"

    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_STYLE}</style></head>
<body>
<h1>{_e(title)}</h1>
<p>{badge} {_e(count_text)} — {len(clauses)} clauses</p>
<dl class="meta">{meta_html}</dl>
<h2 id="failures">Failures</h2>
{failures_html}
<h2>Clauses</h2>
<div class="filters">
<label>area <select id="area">{_options(areas)}</select></label>
<label>status <select id="status">{_options(statuses)}</select></label>
<label>text <input id="text" type="search" placeholder="ID, title or check"></label>
<span id="shown"></span>
</div>
<table id="clauses"><thead><tr>
<th>clause</th><th>kind</th><th>status</th><th>examples</th><th>title</th><th>checks</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
<script>{_SCRIPT}</script>
</body></html>
"""


def _failures(verdicts: list[Any], results: list[Any], known: dict[str, Any], docs_url: str | None) -> list[str]:
    """The failing clauses' sections: a group of checks that fail with one first difference
    (reports/groups.py) under a heading naming the clause most likely at fault; each check's
    difference once, under the first of its clauses, the others linking to it."""
    from .groups import group_failures

    failing = {v.id: v for v in verdicts if v.status in FAILING}
    groups = [g for g in group_failures(results, set(failing)) if len(g.results) > 1]
    order = [*(c for g in groups for c in g.clauses), *failing]
    first: dict[tuple[str, str], str] = {}
    out = []
    for g in groups:
        links = " ".join(f'<a href="#fail-{_e(c)}">{_e(c)}</a>' for c in g.clauses[1:])
        out.append(f'<div class="group"><h3>{len(g.results)} failing checks, one first difference: {_e(g.difference)}</h3>'
                   f'<p>most likely at fault: <a href="#fail-{_e(g.culprit)}">{_e(g.culprit)}</a> ({_e(g.why)}); '
                   f'consequences: {links}</p></div>')
    for cid in dict.fromkeys(order):
        v = failing.get(cid)
        if v is None:
            continue
        shown_id = _clause_cell(v.id, docs_url if v.id in known else None)
        parts = [f'<h3 id="fail-{_e(v.id)}">{_e(v.status.upper())} {shown_id}: {_e(v.title)}</h3>']
        for f in report.failures_of(v, results) or [report.Failure("", v.status, v.detail.splitlines(), [])]:
            key = (f.check, "\n".join(f.difference))
            if key in first:
                parts.append(f'<p class="failure">{_e(f.check)} ({_e(f.status)}): the same difference as under '
                             f'<a href="#fail-{_e(first[key])}">{_e(first[key])}</a></p>')
                continue
            first[key] = v.id
            parts.append(f'<div class="failure"><h4>{_e(f.check)} ({_e(f.status)})</h4>'
                         f'<pre class="difference">{_e(chr(10).join(f.difference))}</pre>'
                         + (f'<p>reproducer:</p><pre class="reproducer">{_e(chr(10).join(f.reproducer))}</pre>'
                            if f.reproducer else "") + "</div>")
        out.append("\n".join(parts))
    return out


def _order(status: str) -> int:
    return ORDER.index(status) if status in ORDER else len(ORDER)


def _clause_cell(clause_id: str, docs_url: str | None) -> str:
    code = f"<code>{_e(clause_id)}</code>"
    if docs_url is None:
        return code
    return f'<a class="clause" href="{_e(clause_url(clause_id, docs_url))}" title="the clause on the docs site">{code}</a>'


def write_html(path: Path, data: dict[str, Any], docs_url: str | None = None) -> None:
    path.write_text(page(data, docs_url), encoding="utf-8")
