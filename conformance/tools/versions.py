"""The page "What changed in ggml-backend, version by version", made from a `ggspec compare --json`
report over rc.8 and later builds of the same API generation:

    python -m ggspec.conformance.tools.versions --update docs/data/versions-compare.json --reports DIR

runs `ggspec check --target T --profile rc8 --max-examples 3 --seed 20261130 --no-known --json
DIR/<T>.json` for each column of the version line (COLUMNS) that neither the existing compare
report (same seed and examples) nor DIR holds yet (`--rerun T` runs T again), and writes the
compare report from them, in `ggspec compare --json`'s format: the same as

    ggspec compare rc8 llama-cpp-python-0.2.30@rc8 ggml-python-0.0.25@rc8 ... ggml-python-0.0.37@rc8 \\
        --max-examples 3 --seed 20261130 --no-gate --json docs/data/versions-compare.json

but one target at a time, so that a column already run is not run again.

    python -m ggspec.conformance.tools.versions --json docs/data/versions-compare.json > versions.md

The docs build (docs/build.py) writes the page from the committed `docs/data/versions-compare.json`,
so regenerating the page is re-running the compare. For each clause whose status differs from
rc.8's in some ggml-python column, the page names the first version (in the order of the
columns, oldest first) whose verdict differs and how, with the check's detail, and the statuses
of all columns; llama-cpp-python 0.2.30 (the same days as rc.8) is compared with rc.8 apart.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile

BASE = "rc8"
#: the version line's columns, in the page's order (rc.8, llama.cpp of its days, then ggml-python oldest first)
COLUMNS = ("rc8", "llama-cpp-python-0.2.30@rc8", *(f"ggml-python-0.0.{n}@rc8" for n in range(25, 38)))
SEED = 20261130
EXAMPLES = 3
#: the verdicts that count as "the same behaviour" as a pass on rc.8 (a function the version lacks
#: is a change of API, reported, but no change of behaviour of what is there)
_SAME_AS_PASS = ("pass",)
_DETAIL = 600

INTRO = """# What changed in ggml-backend, version by version

ggspec specifies ggml-backend as in whisper.rn 0.4.0-rc.8 (ggml of mid-January 2024). This page
runs the same checks, with the same seed, over later builds of the same API generation and shows,
for each clause, the first version whose behaviour differs from rc.8 and how.

**Range.** PyPI's ggml-python vendors a ggml snapshot in each sdist: 0.0.25 (ggml of 2024-01-16,
before the scheduler's eval callback), 0.0.26 (2024-01-30), and onwards to 0.0.37, the last with
this generation (`ggml-backend.c`, no devices). ggml-python 0.0.38 and later vendor the backend
"device" API (`ggml_backend_dev_t`, `ggml-backend.cpp`), and so do whisper.rn's own releases from
0.4.0-rc.9 on: another API generation, out of scope here. llama-cpp-python 0.2.30 vendors
llama.cpp of 2024-01-18, the same days as rc.8. Targets: `--target ggml-python-X` for X in
0.0.25 ... 0.0.37 and `--target llama-cpp-python-0.2.30` (see the user guide).

**How the API drift is bridged.** Renamed or re-typed entry points are adapted in one place per
function from each build's own headers (conformance/adapters/versions.py): the type enum by name,
`sched_new`'s `parallel`, `graph_compute`'s status, `init_measure` -> `reserve`,
`set/get_node_backend` -> `set/get_tensor_backend`, `soft_max_ext`'s extra arguments,
`tensor_copy_async`'s second backend; the suite's virtual device is compiled against each build's
own backend interface (compute status, two-backend async copy, a backend guid from 0.0.30). A
function a version no longer has with rc.8's signature (the allocators rewritten in 0.0.27, the
scheduler's `get_tallocr`/`get_buffer`) makes the
checks that need it `unsupported`: an API change, listed, not a behaviour change.

Every column is held to profile `rc8` (`TARGET@rc8`), so an erratum a version still has counts as
rc.8's behaviour and one it fixed shows as a difference. Each difference is explained in its
clause as a **Changed after rc.8** note (spec/*.md) and in the target's known-failures file
(conformance/known/<target>.toml), so each target's own
`ggspec check` exits 0.

Regenerate with one command (it runs `ggspec check --no-known --json` for each column it does not
hold yet, a few minutes a column on two cores, and keeps the columns it has; `--rerun TARGET`
runs one again); the docs build writes this page from the report:

```sh
python -m ggspec.conformance.tools.versions --update docs/data/versions-compare.json --reports build/versions
```

which is `ggspec compare {columns} --max-examples {examples} --seed {seed} --no-gate --json
docs/data/versions-compare.json`, one column at a time.
"""


#: a status in the version table's cells
MARK: dict[str, str] = {"pass": "pass", "fail": "**FAIL**", "crash": "**CRASH**", "unsupported": "unsup", "uncovered": "-",
                           "timeout": "**TIME**", "xfail": "xfail", "xpass": "xpass", "interrupted": "**INTR**",
                           "not run": "-", "partial": "part", "skipped": "skip", "not selected": "-"}


def _mark(status: str) -> str:
    return MARK.get(status, status)


def _short(label: str) -> str:
    return label.split("@")[0].replace("ggml-python-", "").replace("llama-cpp-python-", "lcp-")


def _detail(text: str) -> str:
    one = " ".join(text.split())
    one = one if len(one) <= _DETAIL else one[:_DETAIL] + " ..."
    return one.replace("|", "\\|").replace("<", "&lt;")


def _differs(base: str, other: str) -> bool:
    if other == "uncovered" or base == "uncovered":
        return False
    return other != base and not (base in _SAME_AS_PASS and other in _SAME_AS_PASS)


def page(data: dict[str, Any]) -> str:
    """The markdown page for a compare report (see the module doc)."""
    cols = [c["label"] for c in data["columns"]]
    base = next((c for c in cols if c.split("@")[0] == BASE), None)
    if base is None:
        raise ValueError(f"the compare report has no {BASE} column (columns: {', '.join(cols)})")
    versions = [c for c in cols if c.startswith("ggml-python-")]
    others = [c for c in cols if c != base and c not in versions]
    out = [INTRO.format(columns=" ".join(c["target"] if c["profile"] == _default(c["target"]) else c["label"]
                                         for c in data["columns"]),
                        examples=data.get("examples", "?"), seed=data.get("seed", "?"))]
    out += ["## The runs", "", "<!-- picture: versions -->", "",
            f"Seed {data.get('seed')}, {data.get('examples')} examples a check, "
            f"started {data.get('started')}, {data.get('seconds', 0):.0f} s in all.", "",
            "| column | what | pass | fail | crash | unsupported | uncovered | seconds |", "|---|---|---|---|---|---|---|---|"]
    for c in data["columns"]:
        s = c["summary"]
        what = c.get("target_description", {}).get("kind", "")
        out.append(f"| {c['label']} | {what} | {s.get('pass', 0)} | {s.get('fail', 0)} | {s.get('crash', 0)} | "
                   f"{s.get('unsupported', 0)} | {s.get('uncovered', 0)} | {c.get('seconds', 0):.0f} |")
    rows = data["clauses"]
    out += ["", "## Clause by clause", "",
            "Each clause whose verdict on some ggml-python version differs from rc.8's: the first such "
            "version, what it did, and every column's status (" + ", ".join(f"`{_short(v)}`" for v in versions) + ").",
            "", "| clause | rc.8 | first differing | " + " | ".join(_short(v) for v in versions) + " |",
            "|---|---|---|" + "---|" * len(versions)]
    firsts: list[tuple[str, str, str, str]] = []
    for row in rows:
        st = row["statuses"]
        b = st.get(base, "uncovered")
        first = next((v for v in versions if _differs(b, st.get(v, "uncovered"))), None)
        if first is None:
            continue
        firsts.append((row["id"], row["title"], first, row.get("details", {}).get(first, "")))
        cells = " | ".join(_mark(st.get(v, "uncovered")) for v in versions)
        out.append(f"| {row['id']} | {_mark(b)} | {_short(first)}: {_mark(st.get(first, ''))} | {cells} |")
    if not firsts:
        out.append("| (none) | | | " + " | ".join("" for _ in versions) + " |")
    out += ["", "## How each differs, at the first version", ""]
    for cid, title, first, detail in firsts:
        out.append(f"- **{cid}** ({title}), first in **{first.split('@')[0]}**: {_detail(detail) or '(no detail)'}")
    for other in others:
        diff = [r for r in rows if _differs(r["statuses"].get(base, "uncovered"), r["statuses"].get(other, "uncovered"))]
        out += ["", f"## {other} against rc.8", ""]
        if not diff:
            out.append(f"{other} has rc.8's verdict on every clause both cover.")
            continue
        out.append(f"{len(diff)} clause(s) differ from rc.8:")
        out.append("")
        for r in diff:
            out.append(f"- **{r['id']}** ({r['title']}): rc.8 {r['statuses'].get(base)}, {other.split('@')[0]} "
                       f"{r['statuses'].get(other)}: {_detail(r.get('details', {}).get(other, '')) or '(no detail)'}")
    return "\n".join(out) + "\n"


def _default(target: str) -> str:
    from ..adapters import default_profile

    return default_profile(target).value


#: the statuses a column's bar shows, left to right (failures last, where the eye ends)
CHART_STATUSES = ("pass", "xfail", "unsupported", "uncovered", "fail", "crash", "timeout")
#: a darker edge per status, so that pale segments stay visible
_EDGE = {"pass": "#6aa85a", "xfail": "#c9a640", "unsupported": "#7d8fc0", "uncovered": "#aaaaaa", "fail": "#c0573d",
         "crash": "#a0302a", "timeout": "#a0302a"}


def chart_svg(data: dict[str, Any]) -> str:
    """The version table as a chart: one horizontal bar a column (rc.8, each ggml-python version,
    ...), split into its clauses' statuses (CHART_STATUSES, the colours of the HTML report), each
    segment with its count as a tooltip and, when wide enough, as text. Plain SVG, no library."""
    from html import escape

    from ..reports.html import COLOUR

    cols = data["columns"]
    label_w, bar_w, row_h, top = 190, 560, 22, 28
    total = max((sum(c["summary"].get(s, 0) for s in CHART_STATUSES) for c in cols), default=1) or 1
    height = top + row_h * len(cols) + 46
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 150}" height="{height}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="11" role="img">',
           f"<title>Clause statuses per version (seed {escape(str(data.get('seed')))}, "
           f"{escape(str(data.get('examples')))} examples a check)</title>",
           f'<text x="0" y="16" font-size="12" font-weight="bold">Clause statuses, version by version '
           f"(seed {escape(str(data.get('seed')))}, {escape(str(data.get('examples')))} examples a check)</text>"]
    for i, c in enumerate(cols):
        y = top + i * row_h
        out.append(f'<text x="{label_w - 8}" y="{y + 14}" text-anchor="end">{escape(c["label"])}</text>')
        x = float(label_w)
        for status in CHART_STATUSES:
            n = int(c["summary"].get(status, 0))
            if not n:
                continue
            w = bar_w * n / total
            out.append(f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{row_h - 6}" fill="{COLOUR[status]}" '
                       f'stroke="{_EDGE[status]}" stroke-width="0.6"><title>{escape(c["label"])}: {n} {status}</title></rect>')
            if w >= 22:
                out.append(f'<text x="{x + w / 2:.1f}" y="{y + 14}" text-anchor="middle" font-size="10">{n}</text>')
            x += w
        bad = [f"{c['summary'].get(s, 0)} {s}" for s in ("fail", "crash", "timeout") if c["summary"].get(s, 0)]
        out.append(f'<text x="{x + 6:.1f}" y="{y + 14}" font-size="10">{escape(", ".join(bad))}</text>')
    y = top + row_h * len(cols) + 16
    x = float(label_w)
    for status in CHART_STATUSES:
        out.append(f'<rect x="{x:.1f}" y="{y}" width="12" height="12" fill="{COLOUR[status]}" stroke="{_EDGE[status]}"/>')
        out.append(f'<text x="{x + 16:.1f}" y="{y + 10}">{status}</text>')
        x += 24 + 7 * len(status)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def page_from(path: Path) -> str:
    """The page for a committed compare report; a short page saying how to make one if it is missing."""
    if not path.is_file():
        return ("# What changed in ggml-backend, version by version\n\nNo compare report at "
                f"`{path.name}`; make one with `ggspec compare ... --json` (see conformance/tools/versions.py).\n")
    return page(json.loads(path.read_text(encoding="utf-8")))


def _column(label: str, checks: list[dict[str, Any]], seconds: float) -> Any:
    """A compare column (compare.Column) from a report's check results; verdicts recomputed, no known failures."""
    from ..engine.results import verdicts
    from ..reports import report
    from .compare import Column, parse_target

    target, profile = parse_target(label)
    _, results = report.from_json({"checks": checks})
    return Column(target, profile, {v.id: v for v in verdicts(results)}, results, float(seconds))


def _matches(data: dict[str, Any], seed: int, examples: int) -> bool:
    return data.get("seed") == seed and data.get("examples") == examples


def _check(label: str, path: Path, seed: int, examples: int) -> None:
    """Run one column as its own `ggspec check` (the target fetched and built as for check), JSON to `path`."""
    target, _, profile = label.partition("@")
    cmd = [sys.executable, "-m", "ggspec.conformance", "check", "--target", target, "--max-examples", str(examples),
           "--seed", str(seed), "--no-known", "--json", str(path)] + (["--profile", profile] if profile else [])
    print(f"python -m ggspec.conformance.tools.versions: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, check=False)
    if done.returncode not in (0, 1) or not path.is_file():
        raise ValueError(f"{label}: `ggspec check` ended with exit code {done.returncode} and no report")


def update(out: Path, reports: Path, rerun: set[str] | None = None, columns: tuple[str, ...] = COLUMNS,
           seed: int = SEED, examples: int = EXAMPLES, run: bool = True) -> dict[str, Any]:
    """The version line's compare report (`ggspec compare --json`'s format) written to `out`: each column
    taken from `out` itself or from `reports/<label>.json` when either has it with this seed and
    examples (and it is not in `rerun`), else run by `ggspec check` into `reports/` (with `run`
    false: left out, named on stderr)."""
    from ..engine.results import RunConfig
    from .compare import to_json

    rerun = rerun or set()
    old: dict[str, dict[str, Any]] = {}
    if out.is_file():
        data = json.loads(out.read_text(encoding="utf-8"))
        if _matches(data, seed, examples):
            old = {c["label"]: c for c in data.get("columns", [])}
    reports.mkdir(parents=True, exist_ok=True)
    cols = []
    described: dict[str, dict[str, Any]] = {}
    for label in columns:
        path = reports / f"{label}.json"
        mine = label in rerun or label.split("@")[0] in rerun
        if not mine and (label in old or f"{label}@{cols_profile(label)}" in old):
            col = old.get(label) or old[f"{label}@{cols_profile(label)}"]
            cols.append(_column(col["label"], col["checks"], col.get("seconds", 0.0)))
            described[cols[-1].label] = col.get("target_description", {})
            continue
        if mine or not path.is_file() or not _matches(json.loads(path.read_text(encoding="utf-8")), seed, examples):
            if not run:
                print(f"python -m ggspec.conformance.tools.versions: {label}: no report in {reports}; left out (--no-run)",
                      file=sys.stderr)
                continue
            _check(label, path, seed, examples)
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("profile") != cols_profile(label):
            raise ValueError(f"{path}: a report of profile {data.get('profile')}, not {label}'s")
        cols.append(_column(label, data["checks"], data.get("seconds", 0.0)))
        described[cols[-1].label] = data.get("target_description") or {"name": cols[-1].target}
    cfg = RunConfig("native", Profile.FIXED, size="dev", max_examples=examples, seed=seed)
    result = to_json(cols, cfg, datetime.now(timezone.utc), descriptions=described)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def cols_profile(label: str) -> str:
    """The profile a column label names (`T@P`), or the target's default."""
    target, sep, profile = label.partition("@")
    return profile if sep else _default(target)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ggspec.conformance.tools.versions", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="FILE", help="a `ggspec compare --json` report with an rc8 column: print its page")
    ap.add_argument("--update", metavar="FILE", help="write the version line's compare report here (see the module doc)")
    ap.add_argument("--reports", metavar="DIR", default="build/versions",
                    help="with --update: the per-column `ggspec check --json` reports (default: build/versions)")
    ap.add_argument("--rerun", action="append", default=[], metavar="TARGET", help="with --update: run this column again")
    ap.add_argument("--no-run", action="store_true", help="with --update: run nothing; leave out the columns without a report")
    args = ap.parse_args(argv)
    known = {c for col in COLUMNS for c in (col, col.split("@")[0])}
    for target in args.rerun:
        if target not in known:
            ap.error(f"--rerun {target}: not a column of the version line (columns: {', '.join(COLUMNS)})")
    if (args.rerun or args.no_run) and not args.update:
        ap.error("--rerun and --no-run go with --update")
    if args.update:
        try:
            data = update(Path(args.update), Path(args.reports), set(args.rerun), run=not args.no_run)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"python -m ggspec.conformance.tools.versions: {exc}", file=sys.stderr)
            return 2
        for c in data["columns"]:
            s = c["summary"]
            print(f"{c['label']}: {s.get('pass', 0)} pass, {s.get('fail', 0)} fail, {s.get('crash', 0)} crash, "
                  f"{s.get('unsupported', 0)} unsupported ({c.get('seconds', 0):.0f} s)")
        return 0
    if not args.json:
        ap.error("one of --json or --update is needed")
    try:
        data = json.loads(Path(args.json).read_text(encoding="utf-8"))
        text = page(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"python -m ggspec.conformance.tools.versions: {args.json}: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
