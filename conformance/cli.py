"""The `ggspec` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ggspec.reference.clauses import Profile

from . import report
from .adapters import TARGETS, default_profile, external_target_name, make_target
from .adapters.external import TargetUnavailable
from .runner import PROFILES, CheckResult, RunConfig, print_progress, run_all, verdicts


def _target_name(args: argparse.Namespace) -> str:
    """`--target external --include DIR --lib FILE --prefix P` names an external build."""
    given = [o for o in ("include", "lib", "prefix") if getattr(args, o)]
    if args.target == "external":
        if len(given) != 3:
            raise ValueError("--target external needs --include DIR, --lib FILE and --prefix PREFIX")
        return external_target_name(args.include, args.lib, args.prefix)
    if given:
        raise ValueError(f"--{given[0]} is for --target external only")
    return str(args.target)


def _check(args: argparse.Namespace) -> int:
    args.target = _target_name(args)
    profile = Profile(args.profile) if args.profile else default_profile(args.target)
    cfg = RunConfig(args.target, profile, size=args.size, max_examples=args.max_examples, derandomize=args.derandomize)
    cfg.c_reproducers, cfg.repro_dir = not args.no_c_reproducers, args.repro_dir
    if args.seed is not None:
        cfg.seed = args.seed
    probe = make_target(cfg.target, profile)  # fail early, with one line, on a target that cannot load
    close = getattr(probe, "close", None)
    if close is not None:
        close()
    print(f"ggspec check: target {cfg.target}, profile {profile.value}, size {cfg.size} "
          f"({cfg.examples} examples a check), seed {cfg.seed}", file=sys.stderr, flush=True)
    names = None
    if args.select:
        from .runner import load_checks

        names = [n for n in sorted(load_checks()) if any(s in n for s in args.select)]
    results = run_all(cfg, names, progress=None if args.quiet else print_progress)
    found = verdicts(results)
    if names is not None:
        found = [v for v in found if v.status != "uncovered"]
    print(report.table(found, cfg))
    if args.json:
        report.write_json(Path(args.json), found, results, cfg)
    if args.junit:
        report.write_junit(Path(args.junit), found, cfg)
    failing = [v for v in found if v.status in ("fail", "crash")]
    uncovered = [v for v in found if v.status == "uncovered"]
    if failing:
        print(f"\n{len(failing)} clause(s) failing: {' '.join(v.id for v in failing)}", file=sys.stderr)
        print(f"replay a check with the reproducer in its detail (--json FILE keeps them); seed {cfg.seed}",
              file=sys.stderr)
        for line in _c_reproducer_lines(results):
            print(line, file=sys.stderr)
    return 1 if failing or (uncovered and args.strict) else 0


def _compare(args: argparse.Namespace) -> int:
    from .compare import parse_target, run_columns, table, write_html

    for spec in args.targets:  # fail early, with one line, on a target that cannot load
        target, profile = parse_target(spec)
        probe = make_target(target, profile)
        close = getattr(probe, "close", None)
        if close is not None:
            close()
    cfg = RunConfig("native", Profile.FIXED, size=args.size, max_examples=args.max_examples, c_reproducers=False)
    if args.seed is not None:
        cfg.seed = args.seed
    print(f"ggspec compare: {' '.join(args.targets)}, size {cfg.size}, seed {cfg.seed}", file=sys.stderr, flush=True)
    columns = run_columns(args.targets, cfg, progress=not args.quiet)
    print(table(columns))
    if args.html:
        write_html(Path(args.html), columns, cfg.seed)
    return 0


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
    from .explain import main as explain_main

    return explain_main(args.source, args.backends, args.svg)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ggspec", description="Check a ggml-backend build against the rc.8 spec.")
    sub = parser.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="run the conformance suite against one target")
    chk.add_argument("--target", default="native", help=f"{' | '.join(TARGETS)} (default native)")
    chk.add_argument("--profile", choices=[p.value for p in Profile], help="semantics to expect (default: the target's)")
    chk.add_argument("--size", choices=sorted(PROFILES), default="dev", help="run size: examples per check")
    chk.add_argument("--max-examples", type=int, help="override the examples per check")
    chk.add_argument("--seed", type=int, help="hypothesis seed (printed when not given)")
    chk.add_argument("--derandomize", action="store_true", help="derive examples from the check, not a seed")
    chk.add_argument("--select", action="append", help="only checks whose name contains this (repeatable)")
    chk.add_argument("--json", metavar="FILE", help="write the JSON report here")
    chk.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here")
    chk.add_argument("--strict", action="store_true", help="also fail when a clause is uncovered")
    chk.add_argument("--quiet", action="store_true", help="no progress lines")
    ext = chk.add_argument_group("an external build (--target external)")
    ext.add_argument("--include", metavar="DIR", help="its headers: ggml.h, ggml-alloc.h, ggml-backend.h, ggml-backend-impl.h")
    ext.add_argument("--lib", metavar="FILE", help="its shared library")
    ext.add_argument("--prefix", metavar="PREFIX", help="its symbol prefix, e.g. ggml_ or wsp_ggml_")
    chk.add_argument("--repro-dir", metavar="DIR",
                     help="where C reproducers of failing examples go (default $GGSPEC_REPRO_DIR or <tmp>/ggspec-repro)")
    chk.add_argument("--no-c-reproducers", action="store_true", help="do not write C reproducers")
    chk.set_defaults(func=_check)
    exp = sub.add_parser("explain", help="draw what the scheduler decides for a graph (table + SVG)")
    exp.add_argument("source", help="a fixture (encoder, decoder), a .py file defining SPEC, or a .json vector")
    exp.add_argument("--backends", type=int, default=2, help="number of backends: N-1 virtual devices and the CPU")
    exp.add_argument("--svg", metavar="FILE", help="where to write the drawing (default <source>.svg)")
    exp.set_defaults(func=_explain)
    cmp = sub.add_parser("compare", help="several targets side by side: one clause x target table")
    cmp.add_argument("targets", nargs="+", metavar="TARGET[@PROFILE]",
                     help="e.g. native rc8 rc8@fixed external:ggml_:INCLUDE_DIR:LIBRARY (default profile: the target's)")
    cmp.add_argument("--size", choices=sorted(PROFILES), default="dev", help="run size: examples per check")
    cmp.add_argument("--max-examples", type=int, help="override the examples per check")
    cmp.add_argument("--seed", type=int, help="hypothesis seed, the same for every target (printed when not given)")
    cmp.add_argument("--html", metavar="FILE", help="also write the table as an HTML page")
    cmp.add_argument("--quiet", action="store_true", help="no progress lines")
    cmp.set_defaults(func=_compare)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, ImportError, TargetUnavailable) as exc:
        print(f"ggspec: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
