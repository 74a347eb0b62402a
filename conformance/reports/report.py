"""Reports of a run: the terminal table with each failure's difference and reproducer, JSON
and JUnit XML (the HTML page is reports/html.py).

The JSON report (`to_json`) holds: `format`; `summary` (a count per status and the overall
`verdict`, "pass", "fail" or "interrupted"); `versions` (the tool's, the API it specifies, the commit);
`target` (its name and a description: for a C build its shared library and that file's
sha256); `started` (UTC, ISO 8601) and `seconds` (the whole run); the run's settings (profile,
size, seed, examples a check, shard); per clause its verdict (`clauses`), and per check its
status, examples, `seconds` and full detail with the reproducer (`checks`).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..engine.results import (  # noqa: F401 - progress_line, check_status, FAILING, STATUSES: report's names too
    FAILING,
    STATUSES,
    CheckResult,
    ClauseVerdict,
    RunConfig,
    check_status,
    progress_line,
    run_verdict,
    ub_summary,
)  # noqa: F401 - kept here: report.progress_line
from ..target_names import parse

#: the statuses that fail a run (an xpass fails it only under --strict: the CLI decides)
#: version of the JSON report's layout (bump on an incompatible change)
FORMAT = 2
#: lines of a failure's difference shown on the terminal without --verbose
DETAIL_LINES = 14


# --- the parts of a failure's detail ---------------------------------------------------------


@dataclass
class Failure:
    """One failing check's word on one clause: what differs, and how to replay it."""

    check: str
    status: str
    difference: list[str]
    reproducer: list[str]


def split_detail(detail: str) -> tuple[list[str], list[str]]:
    """(the difference, the reproducer) of a check's detail: the reproducer is the here-document
    after `reproducer:`, a `replay: ggspec check ...` line, and the `C reproducer:` lines."""
    diff: list[str] = []
    repro: list[str] = []
    lines = detail.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line == "reproducer:":
            j = i + 1
            while j < len(lines) and lines[j] != "EOF":
                j += 1
            repro.extend(lines[i + 1:j + 1])
            i = j + 1
            continue
        if line.startswith("replay: "):
            repro.append(line)
        elif line.startswith("C reproducer:"):
            repro.extend(lines[i:i + 2])
            i += 2
            continue
        else:
            diff.append(line)
        i += 1
    while diff and not diff[-1].strip():
        diff.pop()
    return diff, repro


def failures_of(v: ClauseVerdict, results: list[CheckResult]) -> list[Failure]:
    """What made clause `v` fail: the failing checks covering it, and the differences blamed on
    it as an erratum (see results.CheckResult.errata)."""
    out = []
    for r in results:
        if v.id in r.clauses and r.status not in ("pass", "unsupported", "skipped"):
            out.append(Failure(r.check, r.status, *split_detail(r.detail)))
        if v.id in r.errata:
            status, detail = r.errata[v.id]
            out.append(Failure(r.check, status, *split_detail(detail)))
    return out


# --- the terminal ----------------------------------------------------------------------------


def table(verdicts: list[ClauseVerdict], cfg: RunConfig, results: list[CheckResult] | None = None,
          verbose: bool = False, seconds: float | None = None, device: str | None = None) -> str:
    """The clause table, then each failing clause's differences and reproducers (the first
    DETAIL_LINES lines of each difference unless `verbose`), then the counts and the time.
    `device`: the device the run gave the target beside the CPU (`--device`), named in the head."""
    width = max((len(v.title) for v in verdicts), default=10)
    rule = "-" * (42 + min(width, 60))
    lines = [
        f"ggspec check — target {cfg.target}, profile {cfg.profile.value}, size {cfg.size}, seed {cfg.seed}"
        + (f", device {device}" if device else ""),
        f"{'clause':9s} {'kind':9s} {'status':11s} {'examples':>8s}  title",
        rule,
    ]
    for v in verdicts:
        lines.append(f"{v.id:9s} {v.kind:9s} {v.status.upper() if v.status != 'pass' else 'pass':11s} {v.examples:8d}  {v.title}")
        if v.status not in ("pass", *FAILING) and v.detail:
            lines.append(f"{'':31s}  ↳ {v.detail[:300]}")
        elif v.status in FAILING and results is None and v.detail:
            lines.append(f"{'':31s}  ↳ {v.detail[:300]}")
    lines.append(rule)
    if results is not None:
        lines.extend(failure_lines(verdicts, results, verbose))
    counts = Counter(v.status for v in verdicts)
    order = [s for s in STATUSES if s in counts or s in ("pass", "fail", "crash")] + sorted(set(counts) - set(STATUSES))
    tail = ", ".join(f"{counts.get(s, 0)} {s}" for s in order) + f" — {len(verdicts)} clauses"
    if seconds is not None:
        tail += f", {len(results or [])} checks in {seconds:.1f}s"
    lines.append(tail)
    return "\n".join(lines)


def flaky_line(results: list[CheckResult]) -> str:
    """One line naming the clauses whose failing example did not fail again when replayed (a
    flaky target), with the replays' count; "" when none."""
    flaky = [r for r in results if r.flaky is not None]
    if not flaky:
        return ""
    each = [f"{', '.join(r.clauses)} ({r.check}: failed again in {r.flaky[0]} of {r.flaky[1]} replays)"
            for r in flaky if r.flaky is not None]
    return f"flaky target: {len(flaky)} check(s) failed on an example that did not fail again: " + "; ".join(each)


def verdict_line(verdicts: list[ClauseVerdict], interrupted: str = "") -> str:
    """The last line of a run's output: its verdict (run_verdict), and why when `interrupted` (by
    that signal, "SIGINT" or "SIGTERM")."""
    verdict = run_verdict(verdicts, interrupted)
    why = f" by {interrupted}: clauses whose checks did not run are 'not run'" if interrupted else ""
    return f"verdict: {verdict.upper()}{why}"


def failure_lines(verdicts: list[ClauseVerdict], results: list[CheckResult], verbose: bool = False) -> list[str]:
    """Per failing clause: each failing check's difference (bounded unless `verbose`) and its
    reproducer (always whole). A check failing several clauses is shown in full once.

    Failing checks that share their first difference (reports/groups.py: the same assert, the
    same repeated device calls, ...) are one defect seen many times: such a group is printed
    once, first, naming the clause most likely at fault (its block follows) and the others as
    consequences, whose blocks (and their differences an erratum explains, when they are the
    same) are left out unless `verbose` (the JSON report keeps them)."""
    from .groups import first_difference, group_failures

    failing = [v for v in verdicts if v.status in FAILING]
    if not failing:
        return []
    by_id = {v.id: v for v in failing}
    groups = [g for g in group_failures(results, set(by_id)) if len(g.results) > 1]
    differences = {g.difference for g in groups}
    head = f"{len(failing)} failing clause(s)"
    if groups:
        head += f", {len(groups)} group(s) of checks that fail with one first difference"
    out = [head + ":"]
    shown: dict[tuple[str, str], str] = {}
    printed: set[str] = set()
    for g in groups:
        culprit = by_id[g.culprit]
        out += ["", f"GROUP: {len(g.results)} failing checks, {len(g.clauses)} clauses, one first difference: {g.difference}",
                f"  most likely at fault: {g.culprit} ({culprit.title}): {g.why}",
                f"  consequences: {' '.join(g.clauses[1:])}"
                + ("" if verbose else " (their blocks: -v; every check's difference: --json)")]
        _clause_block(out, culprit, failures_of(culprit, results), shown, verbose)
        printed.add(g.culprit)
    for v in failing:
        if v.id in printed:
            continue
        found = failures_of(v, results)
        if not verbose:
            found = [f for f in found if first_difference("\n".join(f.difference)) not in differences]
            if not found and any(v.id in g.clauses for g in groups):
                continue
        _clause_block(out, v, found, shown, verbose)
    out.append("")
    return out


def _clause_block(out: list[str], v: ClauseVerdict, found: list[Failure], shown: dict[tuple[str, str], str],
                  verbose: bool) -> None:
    """One failing clause: its failures' differences (each check's once) and reproducers."""
    out.append("")
    out.append(f"{v.status.upper()} {v.id}: {v.title}")
    for f in found:
        key = (f.check, "\n".join(f.difference))
        if key in shown:
            out.append(f"  {f.check}: the same difference as under {shown[key]} above")
            continue
        shown[key] = v.id
        diff = f.difference if verbose or len(f.difference) <= DETAIL_LINES else f.difference[:DETAIL_LINES]
        out.extend("  " + line for line in diff)
        if len(diff) < len(f.difference):
            out.append(f"  ... {len(f.difference) - len(diff)} more lines (-v shows all; --json keeps them)")
        if f.reproducer:
            out.append("  reproducer:")
            out.extend("    " + line for line in f.reproducer)


# --- JSON ------------------------------------------------------------------------------------


def summary(verdicts: list[ClauseVerdict], interrupted: str = "") -> dict[str, Any]:
    counts = Counter(v.status for v in verdicts)
    out: dict[str, Any] = {s: counts.get(s, 0) for s in STATUSES}
    out.update({s: n for s, n in counts.items() if s not in out})
    out["clauses"] = len(verdicts)
    out["verdict"] = run_verdict(verdicts, interrupted)
    return out


def versions() -> dict[str, Any]:
    """The tool's version, the API it specifies and the commit (conformance/version.py)."""
    try:
        from .. import version
    except ImportError:  # pragma: no cover - an install without version.py
        from importlib import metadata

        return {"tool": metadata.version("ggspec"), "specifies": "ggml-backend as in whisper.rn 0.4.0-rc.8", "commit": None}
    return {"tool": version.tool_version(), "specifies": version.SPECIFIES, "commit": version.commit()}


def to_json(verdicts: list[ClauseVerdict], results: list[CheckResult], cfg: RunConfig,
            started: datetime | None = None, seconds: float | None = None,
            target: dict[str, Any] | None = None, shard: str | None = None,
            baseline: dict[str, Any] | None = None, selection: dict[str, list[str]] | None = None,
            keys: dict[str, str] | None = None, reused: dict[str, list[str]] | None = None,
            interrupted: str = "", load_error: str = "") -> dict[str, object]:
    """The JSON report. `keys`: each check's verdict key (run/cache.py), for a later run's
    `--reuse-from`; `reused`: where the verdicts this run did not compute came from (the verdict
    cache, a `--reuse-from` report), check names by source; `interrupted`: the signal that stopped
    the run; `load_error`: how the target's loading ended, when it could not be loaded."""
    keys = keys or {}
    out: dict[str, object] = {
        "format": FORMAT,
        "summary": summary(verdicts, interrupted),
        "versions": versions(),
        "target": cfg.target,
        "target_description": target if target is not None else {"name": cfg.target},
        "started": (started or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "seconds": round(seconds if seconds is not None else sum(r.seconds for r in results), 3),
        "profile": cfg.profile.value,
        "size": cfg.size,
        "seed": cfg.seed,
        "examples": cfg.examples,
        "shard": shard,
        "selection": selection,
        "interrupted": interrupted or None,  # "SIGINT" / "SIGTERM": the checks below are those that finished
        "load_error": load_error or None,  # the target could not be loaded: every check has that verdict
        "clauses": [
            {"id": v.id, "title": v.title, "kind": v.kind, "status": v.status, "examples": v.examples,
             "detail": v.detail, "checks": v.checks, **({"left_out": v.left_out} if v.left_out else {}),
             **({"failing": v.failing} if v.failing else {})}
            for v in verdicts
        ],
        "checks": [{**r.to_json(), **({"verdict_key": keys[r.check]} if r.check in keys else {})} for r in results],
        # per undefined-behaviour clause: did the target misbehave where the spec says (engine/after_ub.py)
        "undefined_behaviour": ub_summary(results),
        "reused": reused or {},
    }
    if baseline is not None:
        out["baseline"] = baseline
    return out


def from_json(data: dict[str, Any]) -> tuple[list[ClauseVerdict], list[CheckResult]]:
    """The clause verdicts and check results of a JSON report (to_json's inverse)."""
    verdicts = [ClauseVerdict(c["id"], c.get("title", ""), c.get("kind", ""), c["status"], int(c.get("examples", 0)),
                              c.get("detail", ""), list(c.get("checks", [])), list(c.get("left_out", [])),
                              list(c.get("failing", [])))
                for c in data.get("clauses", [])]
    results = [CheckResult.from_json(r) for r in data.get("checks", [])]
    return verdicts, results


def load_json(path: Path) -> dict[str, Any]:
    """A JSON report read back; ValueError (one line) when the file is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("clauses"), list) or not isinstance(data.get("checks"), list):
        raise ValueError(f"{path}: not a ggspec JSON report (no 'clauses' and 'checks' lists)")
    try:
        from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path}: a malformed ggspec JSON report ({type(exc).__name__}: {exc})") from None
    return data


def write_json(path: Path, verdicts: list[ClauseVerdict], results: list[CheckResult], cfg: RunConfig,
               **run: Any) -> None:
    path.write_text(json.dumps(to_json(verdicts, results, cfg, **run), indent=2) + "\n", encoding="utf-8")


# --- JUnit -----------------------------------------------------------------------------------


def suite_name(target: str, profile: str) -> str:
    """A short suite name: `ggspec.rc8.fixed`; an external build by its prefix and library file."""
    tn = parse(target)
    if tn.kind == "external":
        target = f"external.{tn.prefix.rstrip('_')}.{Path(tn.library).name}"
    elif tn.kind == "native" and tn.module:
        target = "native." + tn.module.rsplit(":", 1)[-1]
    return f"ggspec.{target}.{profile}"


def failure_text(v: ClauseVerdict, results: list[CheckResult]) -> str:
    """Every failing check's whole difference and reproducer for clause `v`."""
    parts = []
    for f in failures_of(v, results):
        repro = ["reproducer:", *f.reproducer] if f.reproducer else []
        parts.append("\n".join([f"{f.check} ({f.status}):", *f.difference, *repro]))
    return "\n\n".join(parts) or v.detail


def write_junit(path: Path, verdicts: list[ClauseVerdict], cfg: RunConfig, results: list[CheckResult] | None = None,
                seconds: float | None = None, interrupted: str = "") -> None:
    """One test case per clause; fail and crash are failures (with each failing check's whole
    difference and reproducer), uncovered and unsupported are skipped; `time` is the seconds of
    the checks behind the clause (each check's time counts once per clause it covers)."""
    results = results or []
    check_seconds = {r.check: r.seconds for r in results}
    failing = [v for v in verdicts if v.status in FAILING]
    total = seconds if seconds is not None else sum(check_seconds.values())
    suite = ET.Element(
        "testsuite",
        name=suite_name(cfg.target, cfg.profile.value),
        tests=str(len(verdicts)),
        failures=str(len(failing)),
        errors="1" if interrupted else "0",
        skipped=str(sum(v.status in ("uncovered", "unsupported", "skipped", "xfail", "not run", "partial")
                        for v in verdicts)),
        time=f"{total:.3f}",
    )
    for v in verdicts:
        t = sum(check_seconds.get(c, 0.0) for c in v.checks)
        case = ET.SubElement(suite, "testcase", classname=f"ggspec.{v.id.split('-')[0]}", name=f"{v.id} {v.title}",
                             time=f"{t:.3f}")
        if v.status in FAILING:
            first = v.detail.split("; ")[0] if v.detail else v.status
            ET.SubElement(case, "failure", message=first[:500], type=v.status).text = failure_text(v, results)
        elif v.status == "uncovered":
            ET.SubElement(case, "skipped", message="no check covers this clause")
        elif v.status in ("unsupported", "skipped", "xfail", "not run", "partial"):
            ET.SubElement(case, "skipped", message=f"{v.status}: {v.detail[:500]}")
    if interrupted:  # never a green suite: the run did not finish
        case = ET.SubElement(suite, "testcase", classname="ggspec.run", name="the run", time=f"{total:.3f}")
        not_run = [v.id for v in verdicts if v.status == "not run"]
        ET.SubElement(case, "error", type="interrupted", message=f"interrupted by {interrupted}").text = (
            f"the run was interrupted by {interrupted} after {len(results)} check(s); "
            f"{len(not_run)} clause(s) not run: {' '.join(not_run)}")
        suite.set("tests", str(len(verdicts) + 1))
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
