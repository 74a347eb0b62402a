"""The known-failures files (conformance/known/*.toml), written in one form: the generator.

    python -m ggspec.conformance.tools.known_files            # rewrite the shipped files in place
    python -m ggspec.conformance.tools.known_files --check    # exit 1 unless they are in that form
    python -m ggspec.conformance.tools.known_files --missing REPORT.json --target T
                                                  # [[known]] stubs for the failing clauses of a
                                                  # `ggspec check --no-known --json` report that no
                                                  # entry of T's file covers

The form: each file keeps its header comment and its entries in their order; a reason that more
than one entry gives (in any shipped file) is written once, in the shared `_reasons.toml` of the
folder under a key, and the entries give the key (`reason = "alloc-rewritten"`); a reason given
once stays where it is. Loading a file gives the same entries as before the rewrite
(reports/known.load resolves the keys; tests/tools/test_known_files.py holds that).

The entries themselves come from the version line's runs (tools/versions.py, `--update`) and
from default-profile runs of each target: `--missing` lists what such a run found that no entry
explains, for a person to write the reason of.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ..reports import known as known_mod
from ..reports.known import KNOWN_DIR, REASONS_FILE, Known, raw_entries

_STOP = {"the", "a", "an", "of", "and", "or", "to", "in", "on", "is", "are", "its", "it", "so", "as", "at", "by", "for",
         "with", "not", "be", "that", "this", "from", "ggml", "python", "ggml-python", "rc", "rc.8", "8", "s"}


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _key_of(reason: str, taken: set[str]) -> str:
    """A short key for a reason: its version (when it starts with one) and its first words."""
    text = re.sub(r"\([^)]*\)", " ", reason)
    version = re.match(r"\s*(?:ggml-python|llama-cpp-python)\s+(\d+\.\d+\.\d+)", text)
    words = [w for w in re.findall(r"[a-z][a-z0-9_]*", text.lower()) if w not in _STOP]
    base = "-".join(([version.group(1)] if version else []) + words[:4]) or "reason"
    key, n = base, 2
    while key in taken:
        key, n = f"{base}-{n}", n + 1
    taken.add(key)
    return key


def header_of(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


def render(header: list[str], entries: list[dict[str, Any]], keys: dict[str, str]) -> str:
    out = [*header, ""] if header else []
    for e in entries:
        out.append("[[known]]")
        for k in ("clause", "check", "area"):
            if k in e:
                out.append(f"{k} = {_toml_string(e[k])}")
        reason = e["reason"]
        out.append(f"reason = {_toml_string(keys.get(reason, reason))}")
        if "targets" in e:
            out.append("targets = [" + ", ".join(_toml_string(t) for t in e["targets"]) + "]")
        if "flaky" in e:
            out.append(f"flaky = {'true' if e['flaky'] else 'false'}")
        out.append("")
    return "\n".join(out)


def render_reasons(keys: dict[str, str]) -> str:
    lines = ["# The reasons that several entries of the known-failures files give, each written once; an",
             "# entry gives the key (reason = \"KEY\"). Written by tools/known_files.py (see its docstring).", "",
             "[reasons]"]
    lines += [f"{_toml_string(k)} = {_toml_string(text)}" for text, k in sorted(keys.items(), key=lambda kv: kv[1])]
    return "\n".join(lines) + "\n"


def rewrite(directory: Path = KNOWN_DIR) -> dict[Path, str]:
    """The files of `directory` (and its _reasons.toml) in the generator's form: path -> text."""
    files = sorted(p for p in directory.glob("*.toml") if p.name != REASONS_FILE)
    parsed = {p: raw_entries(p) for p in files}  # reasons resolved
    counts = Counter(e["reason"] for entries in parsed.values() for e in entries)
    taken: set[str] = set()
    keys = {text: _key_of(text, taken) for text, n in sorted(counts.items()) if n > 1}
    out = {p: render(header_of(p.read_text(encoding="utf-8")), parsed[p], keys) for p in files}
    out[directory / REASONS_FILE] = render_reasons(keys)
    return out


def missing(report: dict[str, Any], entries: list[Known], target: str) -> str:
    """[[known]] stubs for the failing clauses of a JSON report that no entry covers."""
    from ..engine.results import FAILING, ClauseVerdict

    stubs = []
    for c in report["clauses"]:
        v = ClauseVerdict(c["id"], c.get("title", ""), c.get("kind", ""), c["status"], 0, c.get("detail", ""),
                          list(c.get("checks", [])), failing=list(c.get("failing", [])))
        if v.status in FAILING and not known_mod.explained(v, [k for k in entries if k.for_target(target)]):
            first = (v.detail.splitlines() or [""])[0][:200]
            stubs.append(f'[[known]]\nclause = "{v.id}"\nreason = "TODO: why ({v.status}: {first})"\n'
                         f'targets = ["{target}"]\n')
    return "\n".join(stubs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ggspec.conformance.tools.known_files", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 unless the shipped files are in the generator's form")
    ap.add_argument("--missing", metavar="REPORT.json", help="print stubs for what the report found that no entry explains")
    ap.add_argument("--target", help="with --missing: the target whose shipped file to read")
    args = ap.parse_args(argv)
    if args.missing:
        if not args.target:
            ap.error("--missing needs --target")
        path = known_mod.default_for(args.target)
        entries = known_mod.load(path, _AnyCheck()) if path else []
        try:
            report = json.loads(Path(args.missing).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            ap.error(f"{args.missing}: {exc}")
        print(missing(report, entries, args.target))
        return 0
    stale = []
    for path, text in rewrite().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"not in the generator's form: {' '.join(stale)} (run python -m ggspec.conformance.tools.known_files)",
              file=sys.stderr)
        return 1
    return 0


class _AnyCheck(dict[str, object]):
    """Every check name is known (--missing does not validate the file's check names)."""

    def __contains__(self, key: object) -> bool:
        return True


if __name__ == "__main__":
    raise SystemExit(main())
