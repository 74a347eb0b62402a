"""`ggspec compare`: several targets side by side, one row per clause, one column per target.

Each target runs the selected checks (`--select` / `--deselect`, the patterns of select.py;
every check by default) under its own default profile (or the one given with it as
`TARGET@PROFILE`), with the same seed, so the columns differ only by the target. The table
prints on the terminal (`--only-differences`: only the clauses whose statuses differ between
columns), and is also written as an HTML page (`--html FILE`) and as JSON (`--json FILE`: per
column its target, profile, description and summary; per clause each column's status and
detail; per column every check's result with its reproducer).

The exit code is a gate: 1 when a clause fails, crashes or times out in any column, else 0;
`--no-gate` makes it 0 whatever the verdicts (a comparison for reading, not for CI).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile, catalogue

from ..adapters import default_profile, describe_target
from ..engine.results import FAILING, CheckResult, ClauseVerdict, RunConfig
from ..reports import report
from ..reports.html import COLOUR
from ..run.plan import Options, Plan, make_plan
from ..target_names import parse

_MARK: dict[str, str] = {"pass": "pass", "fail": "FAIL", "crash": "CRASH", "uncovered": "-", "unsupported": "unsup",
                            "xfail": "xfail", "xpass": "XPASS", "timeout": "TIME", "interrupted": "INTR", "not run": "-",
                            "partial": "part", "skipped": "skip", "not selected": "-"}


@dataclass
class Column:
    target: str
    profile: Profile
    verdicts: dict[str, ClauseVerdict]
    results: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def label(self) -> str:
        tn = parse(self.target)
        short = "external:" + tn.prefix if tn.kind == "external" else self.target
        return f"{short}@{self.profile.value}"

    @property
    def failing(self) -> list[str]:
        return [cid for cid, v in self.verdicts.items() if v.status in FAILING]


def parse_target(spec: str) -> tuple[str, Profile]:
    """`rc8`, `native@rc8`, `external:ggml_:INC:LIB@fixed` → (target, profile)."""
    from ..adapters import TARGETS
    from ..names import target as resolve_target

    name, sep, prof = spec.rpartition("@")
    if not sep:
        name = resolve_target(spec, TARGETS)  # the rule of check --target: any case, else the nearest
        return name, default_profile(name)
    profiles = [p.value for p in Profile]
    if prof.lower() not in profiles:
        raise ValueError(f"{spec}: no profile {prof!r} (the profiles are {' and '.join(profiles)})")
    name = resolve_target(name, TARGETS)
    return name, Profile(prof.lower())


def plans(args: argparse.Namespace) -> list[Plan]:
    """One plan a column (run/plan.py): the target's own profile or the one given, one seed for
    all, no known failures, no cache, no files (a comparison of what each target does)."""
    import random

    seed = args.seed if args.seed is not None else random.getrandbits(32)
    out = []
    for spec in args.targets:
        target, profile = parse_target(spec)
        out.append(make_plan(Options(target=target, profile=profile.value, size=args.size, max_examples=args.max_examples,
                                     seed=seed, select=tuple(args.select or ()), deselect=tuple(args.deselect or ()),
                                     no_known=True, no_cache=True, c_reproducers=False, files=False)))
    return out


def run_columns(columns: list[Plan], progress: bool = False) -> list[Column]:
    """Run each column's plan (run/execute.py); progress lines name the target."""
    from ..engine.runner import print_progress
    from ..run.execute import execute

    out = []
    for i, plan in enumerate(columns, 1):
        label = Column(plan.cfg.target, plan.cfg.profile, {}).label
        if progress:
            print_progress(f"ggspec compare: column {i}/{len(columns)}: {label}")

        def named(line: str, label: str = label) -> None:
            print_progress(f"{label}: {line}")

        outcome = execute(plan, progress=named if progress else None)
        out.append(Column(plan.cfg.target, plan.cfg.profile, {v.id: v for v in outcome.found}, outcome.results,
                          outcome.seconds))
    return out


def _rows(columns: list[Column], only_differences: bool = False) -> list[tuple[str, str, list[str]]]:
    """(clause, title, status per column) for every clause some column covers."""
    out = []
    for cid, cl in catalogue().items():
        statuses: list[str] = [c.verdicts[cid].status if cid in c.verdicts else "uncovered" for c in columns]
        if all(s == "uncovered" for s in statuses):
            continue
        if only_differences and len(set(statuses)) == 1:
            continue
        out.append((cid, cl.title, statuses))
    return out


def table(columns: list[Column], only_differences: bool = False) -> str:
    widths = [max(len(c.label), 7) for c in columns]
    head = f"{'clause':9s} " + " ".join(f"{c.label:>{w}s}" for c, w in zip(columns, widths, strict=True)) + "  title"
    lines = [head, "-" * len(head)]
    rows = _rows(columns, only_differences)
    for cid, title, statuses in rows:
        cells = [_MARK.get(s, s.upper()) for s in statuses]
        lines.append(f"{cid:9s} " + " ".join(f"{x:>{w}s}" for x, w in zip(cells, widths, strict=True)) + f"  {title}")
    if only_differences and not rows:
        lines.append("(every clause has the same status in every column)")
    lines.append("-" * len(head))
    for c in columns:
        counts = Counter(v.status for v in c.verdicts.values())
        extra = "".join(f", {counts[s]} {s}" for s in ("unsupported", "timeout", "xfail", "xpass") if counts.get(s))
        lines.append(f"{c.label}: {counts['pass']} pass, {counts['fail']} fail, {counts['crash']} crash{extra}, "
                     f"{counts['uncovered']} uncovered")
    return "\n".join(lines)


def to_json(columns: list[Column], cfg: RunConfig, started: datetime | None = None,
            only_differences: bool = False, descriptions: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The comparison as JSON; `descriptions` (label -> adapters.describe_target's dict) for columns
    read back from earlier reports, whose targets need not be at hand now."""
    known = descriptions or {}
    return {
        "format": report.FORMAT,
        "versions": report.versions(),
        "started": (started or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "seconds": round(sum(c.seconds for c in columns), 3),
        "size": cfg.size, "seed": cfg.seed, "examples": cfg.examples,
        "verdict": "fail" if any(c.failing for c in columns) else "pass",
        "columns": [{"label": c.label, "target": c.target, "profile": c.profile.value,
                     "target_description": known.get(c.label) or describe_target(c.target),
                     "summary": report.summary(list(c.verdicts.values())), "seconds": round(c.seconds, 3),
                     "checks": [r.to_json() for r in c.results]}
                    for c in columns],
        "clauses": [{"id": cid, "title": title, "statuses": dict(zip([c.label for c in columns], statuses, strict=True)),
                     "details": {c.label: c.verdicts[cid].detail for c in columns
                                 if cid in c.verdicts and c.verdicts[cid].status not in ("pass", "uncovered")}}
                    for cid, title, statuses in _rows(columns, only_differences)],
    }


def write_html(path: Path, columns: list[Column], seed: int, only_differences: bool = False) -> None:
    colour = COLOUR
    rows = []
    failures = []
    for cid, title, statuses in _rows(columns, only_differences):
        cells = []
        for c, status in zip(columns, statuses, strict=True):
            v = c.verdicts.get(cid)
            tip = html.escape(v.detail if v else "", quote=True)
            mark = html.escape(_MARK.get(status, status))
            if v is not None and status in FAILING:
                anchor = f"fail-{html.escape(c.label, quote=True)}-{cid}"
                mark = f'<a href="#{anchor}">{mark}</a>'
                blocks = [f'<h3 id="{anchor}">{html.escape(status.upper())} {cid} on {html.escape(c.label)}: '
                          f'{html.escape(title)}</h3>']
                for f in report.failures_of(v, c.results):
                    blocks.append(f"<h4>{html.escape(f.check)}</h4><pre>{html.escape(chr(10).join(f.difference))}</pre>"
                                  + (f"<pre>{html.escape(chr(10).join(f.reproducer))}</pre>" if f.reproducer else ""))
                failures.append("\n".join(blocks))
            cells.append(f'<td style="background:{colour.get(status, "#fff")}" title="{tip}">{mark}</td>')
        erratum = " (erratum)" if catalogue()[cid].erratum else ""
        rows.append(f"<tr><th>{cid}</th><td>{html.escape(title)}{erratum}</td>{''.join(cells)}</tr>")
    heads = "".join(f"<th>{html.escape(c.label)}</th>" for c in columns)
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>ggspec compare</title>
<style>body{{font-family:sans-serif}} table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:2px 6px}}
td:nth-child(n+3){{text-align:center;font-family:monospace}}
pre{{background:#f7f7f7;border:1px solid #ddd;padding:.5em;white-space:pre-wrap;word-break:break-all}}</style></head>
<body><h1>ggspec compare</h1><p>seed {seed}; hover a cell for its detail, click a failure for its difference and
reproducer.</p>
<table><tr><th>clause</th><th>title</th>{heads}</tr>
{chr(10).join(rows)}
</table>
<h2>Failures</h2>
{chr(10).join(failures) if failures else "<p>No clause failed in any column.</p>"}
</body></html>
"""
    path.write_text(page, encoding="utf-8")


def _quietly(columns: list[Plan]) -> list[Column]:
    """`--quiet`: the columns run with this process's stdout and stderr (the targets', inherited by
    the workers: rc.8 prints each allocation it cannot make) in a log under $GGSPEC_CACHE/runs/;
    one line says how much the targets printed, and where."""
    import time

    from ..adapters.external import cache_dir, output_to

    log = cache_dir() / "runs" / f"compare-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with output_to(log):
        done = run_columns(columns, progress=False)
    printed = log.read_text(encoding="utf-8", errors="replace").splitlines()
    if printed:
        print(f"ggspec compare: --quiet: the targets printed {len(printed)} line(s), kept in {log}", file=sys.stderr)
    else:
        log.unlink()
    return done


def run_compare(args: argparse.Namespace) -> int:
    """The `compare` command after its options are checked (cli._compare): plan every column, fail
    early (exit 3, one line) on a target that cannot load, run the columns, print and write."""
    from ..engine.runner import load_error
    from ..run.execute import load_failure, prepare

    columns = plans(args)
    for plan in columns:  # fail early, with one line, on a target that cannot load (loaded in a worker)
        prepare(plan)
        failure = load_failure(plan)
        if failure is not None:
            print(f"ggspec compare: {load_error(failure)}", file=sys.stderr)
            return 3
    first = columns[0]
    print(f"ggspec compare: {' '.join(args.targets)}, size {first.cfg.size}, seed {first.cfg.seed}"
          + (f", {len(first.names)} of {len(first.checks)} checks" if first.names is not None else ""),
          file=sys.stderr, flush=True)
    started = datetime.now(timezone.utc)
    done = run_columns(columns, progress=True) if not args.quiet else _quietly(columns)
    print(table(done, args.only_differences))
    if args.html:
        write_html(Path(args.html), done, first.cfg.seed, args.only_differences)
    if args.json:
        data = to_json(done, first.cfg, started, args.only_differences)
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    failing = [c for c in done if c.failing]
    for c in failing:
        print(f"{c.label}: {len(c.failing)} clause(s) failing: {' '.join(c.failing)}", file=sys.stderr)
    if failing and args.no_gate:
        print("--no-gate: exit 0 all the same", file=sys.stderr)
    return 1 if failing and not args.no_gate else 0
