"""The walk of a run's settings from `ggspec check` to the report writers (issue 31's measure).

Runs `ggspec check --target reference --select TDATA-3 --max-examples 2 --json --junit --html`
in this process under `sys.setprofile` and records, in call order, every call of a function of
conformance/ that is handed the run's settings: an argument (or `self`) that is the parsed
options (argparse.Namespace), run/'s Options or Plan, or engine's RunConfig (the settings' own
properties and methods are not counted: reading a field is not a step of the walk). engine/ is counted
by the functions the walk enters it by, and as one file (its own walk is not this one). Printed:

- functions: the distinct functions the settings pass through;
- stays: the walk's files with consecutive calls in one file joined (A A B A -> A B A: 3 stays);
- returns: the stays in a file the walk had left before (A B A: 1).

By default only calls are steps (the settings handed down); with --returns, control coming back
into a recorded caller is a step too (the settings' walk as the control flows).

    python bench/settings_walk.py            # this checkout
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

SETTINGS_TYPES = ("Namespace", "Options", "Plan", "RunConfig")


def _is_settings(value: Any) -> bool:
    return type(value).__name__ in SETTINGS_TYPES


def walk(argv: list[str], returns_too: bool = False) -> list[tuple[str, str]]:
    import ggspec.conformance as conf
    from ggspec.conformance.tools import cli

    root = Path(conf.__file__).resolve().parent
    calls: list[tuple[str, str]] = []

    recorded: set[int] = set()  # the frames of the calls recorded (by id), for the returns into them

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "return":
            back = frame.f_back
            if returns_too and id(frame) in recorded and back is not None and id(back) in recorded:
                rel = Path(back.f_code.co_filename).resolve().relative_to(root).as_posix()
                calls.append(("engine/" if rel.startswith("engine/") else rel, "(return)"))
            recorded.discard(id(frame))
            return
        if event != "call":
            return
        path = Path(frame.f_code.co_filename).resolve()
        if root not in path.parents:
            return
        code = frame.f_code
        args = [frame.f_locals.get(n) for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
        if not any(_is_settings(a) for a in args):
            return
        if code.co_varnames[:1] == ("self",) and _is_settings(args[0]):
            return  # the settings object's own accessors (Plan.selected, RunConfig.examples)
        rel = path.relative_to(root).as_posix()
        if rel.startswith("engine/"):  # only where the walk enters engine/ from outside it
            back = frame.f_back
            if back is not None and str(Path(back.f_code.co_filename).resolve()).startswith(str(root / "engine")):
                return
            rel = "engine/"
        calls.append((rel, code.co_name))
        recorded.add(id(frame))

    sys.setprofile(profile)
    try:
        cli.main(argv)
    finally:
        sys.setprofile(None)
    return calls


def measure(calls: list[tuple[str, str]]) -> tuple[int, list[str], int]:
    functions = {c for c in calls if c[1] != "(return)"}
    stays: list[str] = []
    for f, _ in calls:
        if not stays or stays[-1] != f:
            stays.append(f)
    returns = sum(1 for i, f in enumerate(stays) if f in stays[:i])
    return len(functions), stays, returns


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="list every call")
    ap.add_argument("--returns", action="store_true",
                    help="count a return into a recorded caller as a step too (the walk as the control flows)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        argv = ["check", "--target", "reference", "--select", "TDATA-3", "--max-examples", "2", "--seed", "1",
                "--quiet", "--workers", "1", "--json", str(t / "r.json"), "--junit", str(t / "r.xml"),
                "--html", str(t / "r.html"), "--repro-dir", str(t / "files")]
        calls = walk(argv, args.returns)
    n, stays, returns = measure(calls)
    if args.verbose:
        for f, fn in calls:
            print(f"  {f} {fn}", file=sys.stderr)
    print(f"functions: {n}; stays: {len(stays)} ({' -> '.join(stays)}); returns to a file already left: {returns}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
