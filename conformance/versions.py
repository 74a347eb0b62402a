"""The page "What changed in ggml-backend, version by version", made from a `ggspec compare --json`
report over rc.8 and later builds of the same API generation:

    ggspec compare rc8 llama-cpp-python-0.2.30@rc8 ggml-python-0.0.25@rc8 ggml-python-0.0.26@rc8 ... \\
        --max-examples 3 --seed 20261130 --no-gate --json docs/data/versions-compare.json
    python -m ggspec.conformance.versions --json docs/data/versions-compare.json > versions.md

The docs build (docs/build.py) writes the page from the committed `docs/data/versions-compare.json`,
so regenerating the page is re-running the compare. For each clause whose status differs from
rc.8's in some ggml-python column, the page names the first version (in the order of the
columns, oldest first) whose verdict differs and how, with the check's detail, and the statuses
of all columns; llama-cpp-python 0.2.30 (the same days as rc.8) is compared with rc.8 apart.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

BASE = "rc8"
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
`tensor_copy_async`'s second backend. A function a version no longer has with rc.8's signature
(the allocators rewritten in 0.0.27, the scheduler's `get_tallocr`/`get_buffer`) makes the
checks that need it `unsupported`: an API change, listed, not a behaviour change.

Every column is held to profile `rc8` (`TARGET@rc8`), so an erratum a version still has counts as
rc.8's behaviour and one it fixed shows as a difference. Each difference is explained in its
clause as a **Changed after rc.8** note (spec/*.md) and in the target's known-failures file
(conformance/known/<target>.toml), so each target's own
`ggspec check` exits 0.

Regenerate (the compare takes a few minutes a column on two cores):

```sh
ggspec compare {columns} --max-examples {examples} --seed {seed} --no-gate --json docs/data/versions-compare.json
python -m ggspec.conformance.versions --json docs/data/versions-compare.json > versions.md
```
"""


def _mark(status: str) -> str:
    return {"pass": "pass", "fail": "**FAIL**", "crash": "**CRASH**", "unsupported": "unsup", "uncovered": "-",
            "timeout": "**TIME**", "xfail": "xfail", "xpass": "xpass"}.get(status, status)


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
    out += ["## The runs", "", f"Seed {data.get('seed')}, {data.get('examples')} examples a check, "
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
    from .adapters import default_profile

    return default_profile(target).value


def page_from(path: Path) -> str:
    """The page for a committed compare report; a short page saying how to make one if it is missing."""
    if not path.is_file():
        return ("# What changed in ggml-backend, version by version\n\nNo compare report at "
                f"`{path.name}`; make one with `ggspec compare ... --json` (see conformance/versions.py).\n")
    return page(json.loads(path.read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ggspec.conformance.versions", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", required=True, metavar="FILE", help="a `ggspec compare --json` report with an rc8 column")
    args = ap.parse_args(argv)
    try:
        data = json.loads(Path(args.json).read_text(encoding="utf-8"))
        text = page(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"python -m ggspec.conformance.versions: {args.json}: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
