"""The `ggspec` command."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

from ggspec.reference.clauses import Profile

from ..adapters import TARGETS, default_profile, external_target_name
from ..adapters.vulkan_device import unavailable as shipped_device_missing
from ..engine.results import (
    DEFAULT_CHECK_BUDGET,
    DEFAULT_TIMEOUT,
    PROFILES,
    CheckResult,
)
from ..engine.runner import load_checks, print_progress
from ..engine.sanitizer import KINDS as SANITIZE_KINDS
from ..errors import RunInterrupted, TargetUnavailable, UsageError
from ..names import clause_id, unknown_clause
from ..names import target as resolve_target
from ..reports import report
from ..run.plan import Options, Plan, check_counts, make_plan, writable
from ..target import DEVICE_ENV, DEVICES
from ..target_names import SANITIZED
from ..target_names import parse as parse_target

EXIT_CODES = """exit codes:
  0  no clause failed, crashed or timed out (unsupported, xfail and uncovered
     clauses do not fail a run)
  1  a clause failed, crashed or timed out; with --strict also an xpass or an
     uncovered clause
  2  a usage error, in one line, before anything of the target runs: a bad
     option, file or selection, a report path that cannot be written, a
     target that cannot be fetched or built
  3  the target was built, but crashed, hung or raised as it was opened and
     first called; or ggspec itself ran out of memory, or runs under an
     address-space limit below 1 GiB (one line 'verdict: none: ...')
  130, 143  interrupted (SIGINT, SIGTERM): the reports hold what finished
"""

SANITIZE_HELP = "ASan+UBSan: rc8-asan, or an external build made so"

DOCS_URL_HELP = ("the docs site the HTML page's clause IDs link to, as URL/spec/tdata.html#TDATA-3 (default: "
                 "$GGSPEC_DOCS_URL, else this checkout's build/site/html if built)")

#: the most backends a scheduler takes (SCHED-2): the range of `explain --backends`
MAX_BACKENDS = 16


def _counts(args: argparse.Namespace) -> None:
    """--max-examples and --seed, checked as run/plan.py checks them (before anything else)."""
    check_counts(getattr(args, "max_examples", None), getattr(args, "seed", None))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _target_name(target: str, include: str | None, lib: str | None, prefix: str | None,
                 sanitize: str | None = None) -> str:
    """`--target external --include DIR --lib FILE --prefix P` names an external build;
    `--sanitize address` turns rc8 into rc8-asan (an external build must have been built so)."""
    given = [o for o, v in (("include", include), ("lib", lib), ("prefix", prefix)) if v]
    if target == "external":
        if include is None or lib is None or prefix is None:
            raise ValueError("--target external needs --include DIR, --lib FILE and --prefix PREFIX")
        return external_target_name(include, lib, prefix)
    if given:
        raise ValueError(f"--{given[0]} is for --target external only")
    name = resolve_target(str(target), TARGETS)
    if sanitize is not None:
        if name in ("rc8", "rc8-asan"):
            return "rc8-asan"
        if parse_target(name).kind != "external":
            raise ValueError(f"--sanitize {sanitize} is for rc8 (the target rc8-asan) and external builds "
                             f"built with -fsanitize=address,undefined, not {name}")
    return name


def _needs_sanitizer(args: argparse.Namespace) -> bool:
    """Whether the command's target is built with ASan (rc8-asan, or a build given with --sanitize)."""
    target = getattr(args, "target", None)
    if target is None or args.command not in ("check", "replay"):
        return False
    try:
        name = _target_name(target, args.include, args.lib, args.prefix, getattr(args, "sanitize", None))
    except ValueError:  # the command itself says so, in its one line
        return False
    if name in SANITIZED or getattr(args, "sanitize", None) is not None:
        return True
    from ..adapters.elfsyms import needs_libasan

    tn = parse_target(name)  # an external build that needs libasan: the same, without --sanitize
    return tn.kind == "external" and needs_libasan(tn.library)


def _with_sanitizer_runtime(args: argparse.Namespace, argv: list[str] | None) -> None:
    """A target built with ASan loads only where libasan was loaded first: the ggspec command
    (argv None: the command line) runs itself again with it in LD_PRELOAD, once; an in-process
    caller (argv given) gets the one line of sanitizer.require_runtime."""
    from ..engine import sanitizer

    if not _needs_sanitizer(args) or sanitizer.runtime_loaded():
        return
    if argv is not None or os.environ.get(sanitizer.REEXEC_ENV):
        sanitizer.require_runtime(str(args.target))
    env = sanitizer.reexec_environment(dict(os.environ))
    print(f"ggspec {args.command}: the target is built with AddressSanitizer, whose runtime must be loaded first: "
          f"running again with LD_PRELOAD={env['LD_PRELOAD'].split()[0]}", file=sys.stderr, flush=True)
    os.execve(sys.executable, [sys.executable, "-m", "ggspec.conformance.tools.cli", *sys.argv[1:]], env)


@contextlib.contextmanager
def _device_for_the_run(device: str) -> Iterator[None]:
    """`--device` reaches every worker through `$GGSPEC_DEVICE` (adapters/webgpu_device.py), set
    for the run only, so an in-process caller's later targets are not changed by it."""
    saved = os.environ.get(DEVICE_ENV)
    if device != "vdev":
        os.environ[DEVICE_ENV] = device
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(DEVICE_ENV, None)
        else:
            os.environ[DEVICE_ENV] = saved


def _note(line: str) -> None:
    print(f"ggspec check: {line}", file=sys.stderr, flush=True)


_PROGRESS = re.compile(r"^(\[\s*\d+/\d+\]) (FAIL|CRASH|TIMEOUT)\s+(\S+)")


def _progress(plan: Plan) -> Callable[[str], None]:
    """Each check's progress line; one whose failure the known-failures file expects (every
    clause it fails becomes xfail, as the table will say) reads `xfail`, not FAIL."""
    from ..engine.results import FAILING, CheckResult, Status
    from ..run.execute import judge_one

    def line(text: str) -> None:
        m = _PROGRESS.match(text)
        if plan.known and m is not None and m.group(3) in plan.checks:
            chk = plan.checks[m.group(3)]
            status: Status = "fail" if m.group(2) == "FAIL" else "crash" if m.group(2) == "CRASH" else "timeout"
            judged = judge_one(plan, CheckResult(chk.name, chk.clauses, status, 0))
            if judged and not any(v.status in FAILING for v in judged):
                text = f"{m.group(1)} {'xfail':5s} {m.group(3)}{text[m.end(3):]}"
        print_progress(text)

    return line


def _check(args: argparse.Namespace) -> int:
    """`ggspec check`: parse (here), plan and run (run/), print and write (reports/)."""
    from ..run.execute import execute, report_json

    with _device_for_the_run(args.device):
        missing = shipped_device_missing(args.device, str(args.target))
        if missing:
            _note(missing)
        plan = make_plan(Options(  # the options, as run/plan.py takes them
            target=_target_name(args.target, args.include, args.lib, args.prefix, args.sanitize), profile=args.profile,
            size=args.size,
            max_examples=args.max_examples, seed=args.seed,
            derandomize=args.derandomize, select=tuple(args.select or ()), deselect=tuple(args.deselect or ()),
            changed=args.changed, shard=args.shard, known=args.known, no_known=args.no_known, baseline=args.baseline,
            reuse_from=args.reuse_from, no_cache=args.no_cache, device=args.device, timeout=args.timeout,
            check_budget=args.check_budget, workers=args.workers, json=args.json, junit=args.junit, html=args.html,
            repro_dir=args.repro_dir, c_reproducers=not args.no_c_reproducers, strict=args.strict))
        if plan.changed_lines:  # --changed: which checks the changes reach, and why
            print("ggspec check " + "\n".join(plan.changed_lines), file=sys.stderr, flush=True)
        if plan.nothing_to_run:
            print(f"ggspec check: nothing to run: no check can see the changes since {args.changed}", file=sys.stderr)
            return 0
        outcome = execute(plan, progress=None if args.quiet else _progress(plan),
                          note=_note if not args.quiet else _quiet_note)
        found, results, cfg = outcome.found, outcome.results, plan.cfg
        data = report_json(plan, outcome) if args.json or args.html else None
        if results or not outcome.harness:  # (ggspec's own failure before any check ran: its one line only)
            print(report.table(found, cfg, results, verbose=args.verbose, seconds=outcome.seconds,
                               device=plan.options.device))
        if outcome.changes is not None:
            from ..reports import baseline

            print("\n".join(baseline.lines(outcome.changes, args.baseline)))
        if args.json:
            Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        if args.junit:
            report.write_junit(Path(args.junit), found, cfg, results, seconds=outcome.seconds,
                               interrupted=outcome.interrupted)
        if args.html and data is not None:
            from ..reports.html import docs_base, write_html

            write_html(Path(args.html), data, docs_base(args.docs_url))
        status = outcome.status
        if outcome.harness:  # ggspec's own failure: one line, no verdict (exit 3)
            print(f"verdict: none: {outcome.harness}", flush=True)
            return status
        if outcome.interrupted:
            print(f"INTERRUPTED by {outcome.interrupted}: {len(results)} check(s) finished", flush=True)
            print(report.verdict_line(found, outcome.interrupted), flush=True)
            return status
        if outcome.load_error:
            return status
        xpass = [v for v in found if v.status == "xpass"]
        if xpass and outcome.changes is None:
            print(f"\n{len(xpass)} known failure(s) passed (xpass{', an error under --strict' if args.strict else ''}): "
                  f"{' '.join(v.id for v in xpass)}", file=sys.stderr)
        if outcome.failing and outcome.changes is None:
            print(f"\n{len(outcome.failing)} clause(s) failing: {' '.join(v.id for v in outcome.failing)}", file=sys.stderr)
            print(f"replay a check with the reproducer in its detail (--json FILE keeps them); seed {cfg.seed}",
                  file=sys.stderr)
        flaky = report.flaky_line(results)
        if flaky:
            print(flaky, file=sys.stderr)
        repro = _c_reproducer_lines(results) if outcome.changes is None else []
        if repro and cfg.repro_dir:  # listed in the run's folder, not scrolled over the verdict
            listing = Path(cfg.repro_dir) / "c-reproducers.txt"
            try:
                listing.parent.mkdir(parents=True, exist_ok=True)
                listing.write_text("\n".join(repro) + "\n", encoding="utf-8")
                print(f"{sum(ln.split(': ', 1)[-1].startswith('C reproducer:') for ln in repro)} C reproducer(s) "
                      f"with their gcc lines: {listing}", file=sys.stderr)
            except OSError as exc:  # the verdict still stands, and is printed
                print(f"ggspec check: could not write the list of C reproducers to {listing}: "
                      f"{exc.strerror or exc} (the details above hold them)", file=sys.stderr)
        sys.stderr.flush()
        if outcome.changes is None:
            print(f"verdict: {outcome.gave_up}" if outcome.gave_up else report.verdict_line(found), flush=True)
        return status


def _quiet_note(line: str) -> None:
    """Under --quiet: every note but why the verdict cache is off."""
    if not line.startswith("verdict cache off"):
        _note(line)


def _compare(args: argparse.Namespace) -> int:
    from .compare import run_compare

    _counts(args)
    writable("--html", args.html)
    writable("--json", args.json)
    return run_compare(args)


def _merge(args: argparse.Namespace) -> int:
    from ..reports.merge import run_merge

    for option in ("json", "junit", "html"):
        writable(f"--{option}", getattr(args, option, None))
    return run_merge(args)


def _c_reproducer_lines(results: list[CheckResult]) -> list[str]:
    """The C reproducers written for failing examples: path and gcc command, per check."""
    out = []
    for r in results:
        details = [r.detail, *(d for _, d in r.errata.values())]
        for detail in details:
            lines = detail.splitlines()
            for i, line in enumerate(lines):
                if line.startswith("C reproducer:"):
                    out.append(f"{r.check}: {line}")
                    out.extend(lines[i + 1:i + 2])
    return out


def _explain(args: argparse.Namespace) -> int:
    from .explain import explain_vector, load_vector, render, table

    if not 1 <= args.backends <= MAX_BACKENDS:
        raise UsageError(f"--backends must be between 1 and {MAX_BACKENDS} (a scheduler takes at most "
                         f"{MAX_BACKENDS} backends, the last one the CPU), got {args.backends}")
    outputs = [(o, p, o[2:]) for o, p in (("--svg", args.svg), ("--png", args.png)) if p]
    if not outputs:  # not into the current folder: the cache's explain/ (the line below says where)
        from ..adapters.external import cache_dir

        default = cache_dir() / "explain" / f"{Path(args.source).stem}.svg"
        default.parent.mkdir(parents=True, exist_ok=True)
        outputs = [("--svg", str(default), "svg")]
    for option, path, _ in outputs:
        writable(option, path)
    vector = load_vector(args.source, args.backends)
    n = vector.n_backends
    if not 1 <= n <= MAX_BACKENDS:
        raise UsageError(f"{args.source}: N_BACKENDS must be between 1 and {MAX_BACKENDS}, got {n}")
    try:
        ex = explain_vector(vector)
    except Exception as exc:  # noqa: BLE001 - a graph the model cannot build is the input's fault: one line
        raise UsageError(f"{args.source}: cannot build this graph: {type(exc).__name__}: {exc}") from None
    print(table(ex))
    for _, path, fmt in outputs:
        Path(path).write_bytes(render(ex, fmt, f"{Path(args.source).stem}: {len(ex.splits)} split(s)"))
        print(f"wrote {path}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from .vectors import Vector
    from .vectors import main as replay_main

    target = _target_name(args.target, args.include, args.lib, args.prefix, args.sanitize)
    profile = Profile(args.profile) if args.profile else default_profile(target)
    Vector.load(args.vector)  # a bad file: one line, before a target is built
    return replay_main(args.vector, target, profile)


def _clause(args: argparse.Namespace) -> int:
    from .listing import clause_text

    cid = clause_id(args.id)  # any case: tdata-3 is TDATA-3
    if cid is None:
        raise UsageError(unknown_clause(args.id))
    print(clause_text(cid))
    from .rc8lines import rc8_listing

    print("\n" + "\n".join(rc8_listing(cid)))
    return 0


def _list(args: argparse.Namespace) -> int:
    from .listing import check_lines, clause_lines, target_lines

    if args.targets:
        if args.clauses or args.checks:
            raise UsageError("list --targets lists the targets only: leave out --clauses and --checks")
        print("\n".join(target_lines()))
        return 0
    checks = load_checks()
    both = args.clauses == args.checks
    out: list[str] = []
    if args.clauses or both:
        out += (["clauses (ID, kind, title, [checks]):"] if both else []) + clause_lines(checks)
    if args.checks or both:
        out += (["", "checks (name, clauses):"] if both else []) + check_lines(checks)
    print("\n".join(out))
    return 0


def _settle_folders() -> dict[str, str | None]:
    """Resolve a relative GGSPEC_CACHE once, against the folder ggspec started in (every later
    step, worker and child process then names the same folder), and keep hypothesis' files
    (its constants cache) under the cache, not in a `.hypothesis/` of the current folder.
    Returns the variables' values before, for main to put back (an in-process caller keeps its own)."""
    from ..adapters.external import cache_dir

    before = {k: os.environ.get(k) for k in ("GGSPEC_CACHE", "HYPOTHESIS_STORAGE_DIRECTORY")}
    if os.environ.get("GGSPEC_CACHE"):
        os.environ["GGSPEC_CACHE"] = str(cache_dir())
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(cache_dir() / "hypothesis")
    return before


class _Help(argparse.RawDescriptionHelpFormatter):
    """Help text wrapped at spaces only: a name such as ggml-python-0.0.26 is never cut at a hyphen."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line usage errors the docs promise (no usage block), and help that
    wraps at spaces only (_Help)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


class _Version(argparse.Action):
    """`--version`, computed only when asked (it may run git)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the tool's version, the API it specifies and the commit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from ..version import version_line

        print(version_line())
        parser.exit(0)


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="ggspec", description="Check a ggml-backend build against the rc.8 spec.",
                                     epilog=EXIT_CODES)
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="run the conformance suite against one target", epilog=EXIT_CODES,
                         usage="%(prog)s [--target NAME] [--select PATTERN] [--json FILE] [options]")
    chk.add_argument("--target", default="native",
                     help="what to check (default native): rc8, reference, ggml-python-0.0.26, native:DIR:MODULE, "
                          "external:PREFIX:INCLUDE_DIR:LIBRARY, ...; ggspec list --targets lists them")
    chk.add_argument("--profile", choices=[p.value for p in Profile], help="semantics to expect (default: the target's)")
    chk.add_argument("--size", choices=sorted(PROFILES), default="dev", help="run size: examples per check")
    chk.add_argument("--device", choices=list(DEVICES), default="vdev",
                     help="the device behind a check's plain virtual device: vdev (the mock), webgpu (ours, "
                          "docs/webgpu.md) or vulkan (the target's own Vulkan backend, docs/vulkan-port.md)")
    chk.add_argument("--max-examples", metavar="N", type=int, help="examples per check, instead of --size's")
    chk.add_argument("--seed", metavar="N", type=int, help="hypothesis seed (printed when not given)")
    chk.add_argument("--reuse-from", metavar="REPORT",
                     help="take from that run's JSON report (same target, profile, size; its seed) the verdicts "
                          "that do not depend on the device, and run the rest")
    chk.add_argument("--derandomize", action="store_true", help="derive examples from the check, not a seed")
    chk.add_argument("--select", action="append", metavar="PATTERN",
                     help="only these checks: a clause ID (TDATA-3), an area (SCHED), a check name or a glob "
                          "('copy.*'); repeatable or comma-separated, see ggspec list")
    chk.add_argument("--deselect", action="append", metavar="PATTERN", help="leave these checks out (same patterns; repeatable)")
    chk.add_argument("--known", metavar="FILE",
                     help="known failures (TOML [[known]] entries): failing ones are xfail, passing ones xpass "
                          "(default: the target's shipped file, see ggspec list --targets)")
    chk.add_argument("--no-known", action="store_true", help="ignore the target's shipped known-failures file")
    chk.add_argument("--json", metavar="FILE",
                     help="write the JSON report here (results also stream to FILE.jsonl as checks finish)")
    chk.add_argument("--timeout", metavar="SECONDS", type=float, default=DEFAULT_TIMEOUT,
                     help=f"how long the target may spend in one API call: past it the check's verdict is timeout, "
                          f"naming the call (default {DEFAULT_TIMEOUT:g})")
    chk.add_argument("--check-budget", metavar="SECONDS", type=float, default=DEFAULT_CHECK_BUDGET,
                     help=f"how long one check may take in all (default {DEFAULT_CHECK_BUDGET:g})")
    chk.add_argument("--workers", metavar="N", type=int, default=_cores(),
                     help=f"checks run at once, each in its own worker (default: the cores, here {_cores()})")
    chk.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here")
    chk.add_argument("--html", metavar="FILE", help="write the report as one HTML page here")
    chk.add_argument("--docs-url", metavar="URL", help=DOCS_URL_HELP)
    chk.add_argument("--shard", metavar="K/N",
                     help="run the K-th of N parts of the selection (ggspec merge joins their JSON reports)")
    chk.add_argument("--baseline", metavar="OLD.json",
                     help="list what changed since an earlier JSON report; exit 1 only on a newly failing clause")
    chk.add_argument("--changed", nargs="?", const="HEAD", metavar="REV",
                     help="only the checks that the files changed since REV (default HEAD) can reach")
    chk.add_argument("--no-cache", action="store_true",
                     help="run every check (with --seed, unchanged checks reuse their cached verdicts)")
    chk.add_argument("--strict", action="store_true", help="also fail on an uncovered clause or an xpass")
    chk.add_argument("--quiet", action="store_true", help="no progress lines")
    chk.add_argument("-v", "--verbose", action="store_true", help="show each failure's whole difference")
    ext = chk.add_argument_group("an external build (--target external)")
    ext.add_argument("--include", metavar="DIR", help="its headers: ggml.h, ggml-alloc.h, ggml-backend.h, ggml-backend-impl.h")
    ext.add_argument("--lib", metavar="FILE", help="its shared library")
    ext.add_argument("--prefix", metavar="PREFIX", help="its symbol prefix, e.g. ggml_ or wsp_ggml_")
    chk.add_argument("--sanitize", choices=SANITIZE_KINDS, help=SANITIZE_HELP)
    chk.add_argument("--repro-dir", metavar="DIR",
                     help="where the run's files (C reproducers, vectors) go (default: $GGSPEC_REPRO_DIR, else "
                          "REPORT.files next to --json REPORT.json, else $GGSPEC_CACHE/runs/RUN)")
    chk.add_argument("--no-c-reproducers", action="store_true", help="do not write C reproducers")
    chk.set_defaults(func=_check)
    cl = sub.add_parser("clause", help="print a clause of the spec (head and prose)")
    cl.add_argument("id", metavar="ID", help="a clause ID such as TDATA-3")
    cl.set_defaults(func=_clause)
    ls = sub.add_parser("list", help="list the clauses (ID, kind, title, checks) and the checks (name, clauses)")
    ls.add_argument("--clauses", action="store_true", help="only the clauses")
    ls.add_argument("--checks", action="store_true", help="only the checks")
    ls.add_argument("--targets", action="store_true",
                    help="the targets instead: name, what it is, default profile, known-failures file, and the "
                         "forms native:DIR:MODULE and external:PREFIX:INCLUDE_DIR:LIBRARY")
    ls.set_defaults(func=_list)
    exp = sub.add_parser("explain", help="draw what the scheduler decides for a graph (table + SVG)")
    exp.add_argument("source", help="a fixture (encoder, decoder), a .py file defining SPEC, or a .json vector")
    exp.add_argument("--backends", type=int, default=2,
                     help=f"number of backends, 1 to {MAX_BACKENDS}: N-1 virtual devices and the CPU")
    exp.add_argument("--svg", metavar="FILE",
                     help="where to write the drawing as SVG (default: $GGSPEC_CACHE/explain/SOURCE.svg, printed)")
    exp.add_argument("--png", metavar="FILE", help="where to write the drawing as PNG")
    exp.set_defaults(func=_explain)
    rep = sub.add_parser("replay", help="run a saved graph vector (JSON) on a target against the reference")
    rep.add_argument("vector", metavar="VECTOR.json", help="a vector file (conformance/vectors/, or one a failing run saved)")
    rep.add_argument("--target", default="native", help="the target (default native; ggspec list --targets)")
    rep.add_argument("--profile", choices=[p.value for p in Profile], help="semantics to expect (default: the target's)")
    for option, meta in (("--include", "DIR"), ("--lib", "FILE"), ("--prefix", "PREFIX")):
        rep.add_argument(option, metavar=meta, help="an external build, as for check --target external")
    rep.add_argument("--sanitize", choices=SANITIZE_KINDS, help=SANITIZE_HELP)
    rep.set_defaults(func=_replay)
    mrg = sub.add_parser("merge", help="join the JSON reports of the shards of one run (check --shard K/N) into one")
    mrg.add_argument("reports", nargs="+", metavar="REPORT.json", help="the shards' JSON reports")
    mrg.add_argument("--json", metavar="FILE", help="write the merged JSON report here")
    mrg.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here")
    mrg.add_argument("--html", metavar="FILE", help="write the HTML page here")
    mrg.add_argument("--docs-url", metavar="URL", help=DOCS_URL_HELP)
    mrg.add_argument("-v", "--verbose", action="store_true", help="show each failure's whole difference")
    mrg.set_defaults(func=_merge)
    cmp = sub.add_parser("compare", help="several targets side by side: one clause x target table")
    cmp.add_argument("targets", nargs="+", metavar="TARGET[@PROFILE]",
                     help="e.g. native rc8 rc8@fixed external:ggml_:INCLUDE_DIR:LIBRARY (default profile: the target's)")
    cmp.add_argument("--size", choices=sorted(PROFILES), default="dev", help="run size: examples per check")
    cmp.add_argument("--max-examples", type=int, help="override the examples per check")
    cmp.add_argument("--seed", type=int, help="hypothesis seed, the same for every target (printed when not given)")
    cmp.add_argument("--html", metavar="FILE", help="also write the table as an HTML page")
    cmp.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    cmp.add_argument("--select", action="append", metavar="PATTERN", help="only these checks (as for check; repeatable)")
    cmp.add_argument("--deselect", action="append", metavar="PATTERN", help="leave these checks out (repeatable)")
    cmp.add_argument("--only-differences", action="store_true", help="only the clauses whose statuses differ")
    cmp.add_argument("--no-gate", action="store_true", help="exit 0 even when a column fails (default: exit 1)")
    cmp.add_argument("--quiet", action="store_true", help="no progress lines")
    cmp.set_defaults(func=_compare)
    args = parser.parse_args(argv)
    before = _settle_folders()
    try:
        _with_sanitizer_runtime(args, argv)
        return int(args.func(args))
    except (ValueError, ImportError, TargetUnavailable) as exc:
        print(f"ggspec {args.command}: {str(exc).strip() or type(exc).__name__}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, RunInterrupted) as exc:  # before or outside a run's report: one line, no traceback
        signum = exc.signum if isinstance(exc, RunInterrupted) else signal.SIGINT
        print(f"ggspec {args.command}: interrupted by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + int(signum)
    except BrokenPipeError:  # `ggspec list | head`: the reader left; stop quietly, as other filters do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value



if __name__ == "__main__":
    sys.exit(main())
