"""The verdict cache of `ggspec check`: an unchanged check on an unchanged target is not run again.

A check's verdict is stored under a key made of everything it depends on:

- the target: its name, the sha256 of its library (C targets) and the GGSPEC_NATIVE_* variables
  that choose native's module and kernels;
- the check's source: its module, the private helpers of conformance/checks and what checks draw
  (conformance/inputs), and the engine that runs and judges it (conformance/engine);
- the reference's source (reference/*.py) and the spec (spec/*.md);
- the seed (or --derandomize), the examples per check (--size, --max-examples), whether a
  failing example is shrunk (RunConfig.shrink) and the profile.

A verdict is stored with the device it ran on (`--device`). It is reused on that device, and on
another only when none of the check's examples asked for a plain virtual device, the one
`--device` replaces (engine/reach.py): such a verdict is the same on every device.

Only a run with a fixed seed (`--seed N` or `--derandomize`) uses the cache: without one each run
draws new examples, and a stored verdict would not be the verdict of this run. Only pass, fail,
unsupported and skipped verdicts are stored (a crash or a timeout is run again). The cache lives in
`cache_dir()/verdicts` (GGSPEC_CACHE, else ~/.cache/ggspec), never in the repository; `--no-cache`
turns it off, and so do CI=true (CI runs every check) and GGSPEC_VERDICT_CACHE=off (the test suite
sets it: its runs neither read nor write the user's cache).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from ..adapters.external import cache_dir
from ..engine.registry import Check
from ..engine.results import CheckResult, RunConfig
from ..target import DEVICES

ROOT = Path(__file__).resolve().parents[2]
STORED = ("pass", "fail", "unsupported", "skipped")
_ENV = ("GGSPEC_NATIVE_PORTABLE", "GGSPEC_NATIVE_MODULE", "GGSPEC_NATIVE_ISA", "GGSPEC_NATIVE_KERNELS")


def verdict_dir() -> Path:
    return cache_dir() / "verdicts"


def off_reason(no_cache: bool, derandomize: bool, seed_given: bool) -> str | None:
    """Why this run does not use the cache, or None when it does."""
    if no_cache:
        return "--no-cache"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return "CI=true"
    if os.environ.get("GGSPEC_VERDICT_CACHE", "") == "off":  # the test suite's runs (tests/conftest.py)
        return "GGSPEC_VERDICT_CACHE=off"
    if not seed_given and not derandomize:
        return "no --seed (each run draws new examples)"
    return None


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


@cache
def _shared_sources() -> tuple[str, str]:
    """(the digest of what every check shares: helpers, inputs, engine; of reference/ and spec/)."""
    conf = ROOT / "conformance"
    shared = [*conf.glob("checks/_*.py"), *conf.glob("inputs/*.py"), *conf.glob("engine/*.py")]
    return _digest(shared), _digest([*(ROOT / "reference").glob("*.py"), *(ROOT / "spec").glob("*.md")])


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def target_key(target: str) -> dict[str, Any]:
    """What identifies the target: its name, its library's sha256, the variables native reads."""
    from ..adapters import describe_target

    described = describe_target(target)
    lib = described.get("library")
    return {"name": target, "sha256": _file_sha256(Path(lib)) if lib else None,
            "env": {k: os.environ[k] for k in _ENV if k in os.environ}}


def key(chk: Check, cfg: RunConfig, target: dict[str, Any]) -> str:
    shared, reference = _shared_sources()
    module = ROOT.joinpath(*chk.module.split(".")[1:]).with_suffix(".py")  # ggspec.conformance.checks.x
    parts = {"check": chk.name, "check_source": _digest([module]) if module.is_file() else chk.module,
             "shared_source": shared, "reference_source": reference, "target": target, "seed": cfg.seed,
             "derandomize": cfg.derandomize, "examples": cfg.examples, "shrink": cfg.shrink,
             "profile": cfg.profile.value}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def reusable(ran_on: str, reached_device: bool, device: str) -> bool:
    """May a verdict that ran on device `ran_on` stand for a run on `device`? On the same device,
    yes; on another, only when no example of the check asked for a plain virtual device (then
    it ran the same code as it would on any device: engine/reach.py)."""
    return ran_on == device or not reached_device


def _read(path: Path) -> CheckResult | None:
    try:
        return CheckResult.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):  # absent or unreadable: run the check
        return None


def load(k: str, device: str) -> CheckResult | None:
    """The stored verdict of key `k` for a run on `device`: its own, else one of another device
    that `reusable` allows."""
    for ran_on in (device, *(d for d in DEVICES if d != device)):
        res = _read(verdict_dir() / f"{k}.{ran_on}.json")
        if res is not None and reusable(ran_on, res.reached_device, device):
            return res
    return None


def store(k: str, res: CheckResult, device: str) -> None:
    if res.status not in STORED:
        return
    where = verdict_dir()
    try:
        where.mkdir(parents=True, exist_ok=True)
        tmp = where / f".{k}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(res.to_json()), encoding="utf-8")
        tmp.replace(where / f"{k}.{device}.json")
    except OSError:  # a cache that cannot be written costs speed, not verdicts
        pass
