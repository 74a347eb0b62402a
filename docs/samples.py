"""The sample outputs in README.md and docs/ come from real runs: `python docs/samples.py [--update] [PAGE ...]`.

A page marks the commands a reader runs and the outputs they print with two HTML comments
(invisible on GitHub and on the site):

    <!-- run -->          before a ```sh block: its commands are run, in page order
    <!-- output -->       before a ```text block: what the run block above it printed

A page's run blocks run one after the other in one bash process (so `cd` and variables carry
over, as in the reader's shell), starting in the repository root as the reader does after
installing (a page's first command should be `cd "$(mktemp -d)"`, or write nothing), with the
`ggspec` and `python` of the environment running this script first on PATH; each block's
stdout and stderr, interleaved as a terminal shows them, is that block's output. `TMPDIR` is a
new folder, removed afterwards. `<!-- output: PAGE N -->` instead names the N-th run block (from
1) of another page, so a README can show an excerpt of a guide's run.

An output block is an excerpt: a line `...` stands for any number of lines, `…` inside a line
for any text, and a duration (`9.7s`, `14.5 s`) for any duration; every other line must be one
of the run's lines, each run of lines between two `...` contiguous and in order. Exit status:
0 when every output block of the pages matches, 1 otherwise (each mismatch named), 2 for a
usage error. `--update` rewrites the lines that differ in place where the same line can be found
in the run by its first word (a clause ID), as the summary line (`N pass, ...`) or as a bare
number; what it
cannot place is left for a person.

tests/project/test_docs_samples.py runs this on every page that has samples, so no count can drift.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the pages with samples, relative to the repository root
PAGES = ("docs/guides/verify-your-port.md", "docs/guides/gate-in-ci.md", "docs/guides/read-the-spec.md",
         "docs/guides/your-own-tests.md", "docs/user-guide.md", "README.md")

_FENCE = re.compile(r"^(`{3,})(\S*)")
_MARK = re.compile(r"^<!-- (run|output)(?:: (\S+) (\d+))? -->$")
_TIME = re.compile(r"\b\d+(?:\.\d+)? ?s\b")
_SUMMARY = re.compile(r"^\d+ pass, ")


@dataclass
class Block:
    kind: str  # "run" | "output"
    start: int  # index of the first line inside the fence
    lines: list[str]
    source: tuple[str, int] | None = None  # an output of another page's run block


@dataclass
class Page:
    path: Path
    text: list[str]
    blocks: list[Block] = field(default_factory=list)

    @property
    def runs(self) -> list[Block]:
        return [b for b in self.blocks if b.kind == "run"]


def read(path: Path) -> Page:
    """The marked blocks of a page; a mark not followed by a fenced block is a ValueError."""
    text = path.read_text(encoding="utf-8").splitlines()
    page = Page(path, text)
    i = 0
    while i < len(text):
        m = _MARK.match(text[i].strip())
        if m is None:
            i += 1
            continue
        j = i + 1
        while j < len(text) and not text[j].strip():
            j += 1
        fence = _FENCE.match(text[j]) if j < len(text) else None
        want = "sh" if m.group(1) == "run" else "text"
        if fence is None or fence.group(2) != want:
            raise ValueError(f"{path}:{i + 1}: <!-- {m.group(1)} --> must be followed by a ```{want} block")
        end = next((k for k in range(j + 1, len(text)) if text[k].startswith(fence.group(1))), None)
        if end is None:
            raise ValueError(f"{path}:{j + 1}: the fenced block does not end")
        source = (m.group(2), int(m.group(3))) if m.group(2) else None
        page.blocks.append(Block(m.group(1), j + 1, text[j + 1:end], source))
        i = end + 1
    if page.blocks and page.blocks[0].kind == "output" and page.blocks[0].source is None:
        raise ValueError(f"{path}: an output block before any run block")
    return page


def run(page: Page, timeout: float = 1500) -> list[str]:
    """Each run block's output, running the page's run blocks in order (from the repository root)."""
    marker = "@@ggspec-sample-block-end@@"
    script: list[str] = []
    for b in page.runs:
        script += [*b.lines, f"echo {marker}"]
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("CI", None)  # a sample shows what a reader's shell shows
    with tempfile.TemporaryDirectory(prefix="ggspec-samples-") as work:
        env["TMPDIR"] = work  # `cd "$(mktemp -d)"` and the run's own temporary files stay in here
        proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)
    outputs = proc.stdout.split(marker + "\n")
    if len(outputs) != len(page.runs) + 1:
        raise RuntimeError(f"{page.path}: the run ended early:\n{proc.stdout[-3000:]}")
    return [o.replace(work, ".") for o in outputs[:-1]]


def _norm(line: str) -> str:
    return _TIME.sub("<time>", line.rstrip())


def _fits(doc: str, real: str) -> bool:
    if "…" not in doc:
        return _norm(doc) == _norm(real)
    pattern = ".*".join(re.escape(part) for part in _norm(doc).split("…"))
    return re.fullmatch(pattern, _norm(real)) is not None


def mismatches(doc: list[str], real: list[str]) -> list[str]:
    """Why the excerpt `doc` is not one of the output `real` (empty when it is)."""
    groups: list[list[str]] = [[]]
    for line in doc:
        if line.strip() == "...":
            groups.append([])
        else:
            groups[-1].append(line)
    at = 0
    for group in (g for g in groups if g):
        found = next((k for k in range(at, len(real) - len(group) + 1)
                      if all(_fits(d, r) for d, r in zip(group, real[k:k + len(group)], strict=True))), None)
        if found is None:
            best = next((d for d in group if not any(_fits(d, r) for r in real[at:])), group[0])
            return [f"not in the run (after line {at}): {best!r}"]
        at = found + len(group)
    return []


def _key(line: str) -> str:
    if _SUMMARY.match(line):
        return "summary"
    if line.strip().isdigit():
        return "count"  # a bare number (`... | wc -l`)
    return (line.split() or [""])[0]


def updated(doc: list[str], real: list[str]) -> list[str]:
    """`doc` with each line that is not in the run replaced by the run's line of the same key."""
    out = []
    for line in doc:
        if line.strip() == "..." or any(_fits(line, r) for r in real):
            out.append(line)
            continue
        same = [r for r in real if _key(r) == _key(line) and _key(line)]
        out.append(same[0] if same else line)
    return out


def check(paths: list[str], update: bool = False) -> list[str]:
    """Problems of the pages' samples (after rewriting what `update` can)."""
    pages = {p: read(ROOT / p) for p in paths}
    for p in list(pages.values()):
        for b in p.blocks:
            if b.source and b.source[0] not in pages:
                pages[b.source[0]] = read(ROOT / b.source[0])
    outputs = {name: run(page) if page.runs else [] for name, page in pages.items()}
    problems = []
    for name in paths:
        page = pages[name]
        last = 0
        for b in page.blocks:
            if b.kind == "run":
                last += 1
                continue
            src, n = b.source or (name, last)
            if not 1 <= n <= len(outputs[src]):
                problems.append(f"{name}:{b.start}: no run block {n} in {src}")
                continue
            real = outputs[src][n - 1].splitlines()
            if update and mismatches(b.lines, real):
                new = updated(b.lines, real)
                page.text[b.start:b.start + len(b.lines)] = new
                b.lines = new
            problems += [f"{name}:{b.start}: {why}" for why in mismatches(b.lines, real)]
        if update:
            page.path.write_text("\n".join(page.text) + "\n", encoding="utf-8")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docs/samples.py", description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", default=list(PAGES), help="pages, relative to the repository root")
    parser.add_argument("--update", action="store_true", help="rewrite the lines that differ where they can be placed")
    args = parser.parse_args(argv)
    try:
        problems = check(args.pages, args.update)
    except (ValueError, OSError) as exc:
        print(f"docs/samples.py: {exc}", file=sys.stderr)
        return 2
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
