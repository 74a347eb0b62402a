"""`ggspec compare`: several targets side by side, one row per clause, one column per target.

Each target runs the whole suite under its own default profile (or the one given with it as
`TARGET@PROFILE`), with the same seed, so the columns differ only by the target. The table
prints on the terminal and, with `--html FILE`, as one HTML page.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ggspec.reference.clauses import Profile, catalogue

from .adapters import default_profile
from .runner import ClauseVerdict, RunConfig, run_all, verdicts

_MARK = {"pass": "pass", "fail": "FAIL", "crash": "CRASH", "uncovered": "-"}


@dataclass
class Column:
    target: str
    profile: Profile
    verdicts: dict[str, ClauseVerdict]

    @property
    def label(self) -> str:
        short = self.target if not self.target.startswith("external:") else "external:" + self.target.split(":")[1]
        return f"{short}@{self.profile.value}"


def parse_target(spec: str) -> tuple[str, Profile]:
    """`rc8`, `native@rc8`, `external:ggml_:INC:LIB@fixed` → (target, profile)."""
    name, sep, prof = spec.rpartition("@")
    if not sep:
        return spec, default_profile(spec)
    return name, Profile(prof)


def run_columns(specs: list[str], cfg: RunConfig, progress: bool = False) -> list[Column]:
    from .runner import print_progress

    columns = []
    for spec in specs:
        target, profile = parse_target(spec)
        run = RunConfig(target, profile, size=cfg.size, max_examples=cfg.max_examples, seed=cfg.seed,
                        derandomize=cfg.derandomize, c_reproducers=cfg.c_reproducers, repro_dir=cfg.repro_dir)
        found = verdicts(run_all(run, progress=print_progress if progress else None))
        columns.append(Column(target, profile, {v.id: v for v in found}))
    return columns


def table(columns: list[Column]) -> str:
    widths = [max(len(c.label), 7) for c in columns]
    head = f"{'clause':9s} " + " ".join(f"{c.label:>{w}s}" for c, w in zip(columns, widths, strict=True)) + "  title"
    lines = [head, "-" * len(head)]
    for cid, cl in catalogue().items():
        cells = [_MARK[c.verdicts[cid].status] if cid in c.verdicts else "?" for c in columns]
        if all(x == "-" for x in cells):
            continue
        lines.append(f"{cid:9s} " + " ".join(f"{x:>{w}s}" for x, w in zip(cells, widths, strict=True)) + f"  {cl.title}")
    lines.append("-" * len(head))
    for c in columns:
        counts = Counter(v.status for v in c.verdicts.values())
        lines.append(f"{c.label}: {counts['pass']} pass, {counts['fail']} fail, {counts['crash']} crash, "
                     f"{counts['uncovered']} uncovered")
    return "\n".join(lines)


def write_html(path: Path, columns: list[Column], seed: int) -> None:
    colour = {"pass": "#d8f5d0", "fail": "#f9d0c4", "crash": "#f3a59a", "uncovered": "#eeeeee"}
    rows = []
    for cid, cl in catalogue().items():
        cells = []
        for c in columns:
            v = c.verdicts.get(cid)
            status = v.status if v else "uncovered"
            tip = html.escape(v.detail if v else "", quote=True)
            cells.append(f'<td style="background:{colour[status]}" title="{tip}">{_MARK[status]}</td>')
        erratum = " (erratum)" if cl.erratum else ""
        rows.append(f"<tr><th>{cid}</th><td>{html.escape(cl.title)}{erratum}</td>{''.join(cells)}</tr>")
    heads = "".join(f"<th>{html.escape(c.label)}</th>" for c in columns)
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>ggspec compare</title>
<style>body{{font-family:sans-serif}} table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:2px 6px}}
td:nth-child(n+3){{text-align:center;font-family:monospace}}</style></head>
<body><h1>ggspec compare</h1><p>seed {seed}; hover a cell for its detail.</p>
<table><tr><th>clause</th><th>title</th>{heads}</tr>
{chr(10).join(rows)}
</table></body></html>
"""
    path.write_text(page, encoding="utf-8")
