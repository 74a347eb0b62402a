"""The verdict cache of `ggspec check`: an unchanged check on an unchanged target is not run again.

A check's verdict is stored under a key made of everything it depends on:

- the target: its name, the sha256 of the library it loads (C targets: `loaded_library`, which
  follows GGSPEC_NATIVE_MODULE and LD_LIBRARY_PATH) and the environment that can change
  what it does (`verdict_env`: every GGSPEC_ variable but those naming where files go, so
  GGSPEC_FAULT and GGSPEC_NATIVE_* among them, and a preloaded sanitizer's variables);
- the check's source: its module, the private helpers of conformance/checks and what checks draw
  (conformance/inputs), and the engine that runs and judges it (conformance/engine);
- the reference's source (reference/*.py) and the spec (spec/*.md);
- the seed (or --derandomize), the examples per check (--size, --max-examples), whether a
  failing example is shrunk (RunConfig.shrink), the profile, --timeout and --check-budget.

A verdict is stored with the device it ran on (`--device`). It is reused on that device, and on
another only when none of the check's examples asked for a plain virtual device, the one
`--device` replaces (engine/reach.py): such a verdict is the same on every device.

Only a run with a fixed seed (`--seed N` or `--derandomize`) uses the cache: without one each run
draws new examples, and a stored verdict would not be the verdict of this run. Only pass, fail,
unsupported and skipped verdicts are stored (a crash or a timeout is run again), and none of a run
that saw a flaky check (a failing example that did not fail again: its passes may be lucky). The cache lives in
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
#: GGSPEC_ variables that say only where files go or whether this cache is used, and the device
#: (a verdict is stored with its device: `reusable`): every other one (GGSPEC_FAULT,
#: GGSPEC_NATIVE_*, GGSPEC_WEBGPU_*, ...) may change a verdict and is in the key
_NOT_VERDICTS = frozenset({"GGSPEC_CACHE", "GGSPEC_REPRO_DIR", "GGSPEC_DOCS_URL", "GGSPEC_VERDICT_CACHE",
                           "GGSPEC_FUZZ_CALLS", "GGSPEC_DEVICE"})
#: other variables that change what a target does: a preloaded sanitizer runtime and its options
_OTHER_ENV = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "MSAN_OPTIONS")


def verdict_env() -> dict[str, str]:
    """The environment that can change a verdict: part of every key."""
    return {k: v for k, v in sorted(os.environ.items())
            if (k.startswith("GGSPEC_") and k not in _NOT_VERDICTS) or k in _OTHER_ENV}


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


def loaded_library(target: str) -> Path | None:
    """The library file the target's process will load: the one its name describes, but for the
    two ways the environment swaps it at the same name, as a rebuilt port or bench/mutation.py's
    mutants do. GGSPEC_NATIVE_MODULE names the module the `native` target imports; and a library
    of the same file name in a folder of LD_LIBRARY_PATH comes before the target's own, as ld.so
    searches it before a RUNPATH. Without this a rebuilt library at an unchanged path would reuse
    the old build's verdicts."""
    from ..adapters import describe_target

    module = os.environ.get("GGSPEC_NATIVE_MODULE", "")
    if target == "native" and ":" in module:
        target = f"native:{module}"
    lib = describe_target(target).get("library")
    if not lib:
        return None
    path = Path(lib)
    for folder in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        if (Path(folder) / path.name).is_file():
            return Path(folder) / path.name
    return path


def target_key(target: str) -> dict[str, Any]:
    """What identifies the target: its name, the sha256 of the library it loads, the variables
    native reads."""
    lib = loaded_library(target)
    return {"name": target, "sha256": _file_sha256(lib) if lib else None, "env": verdict_env()}


def key(chk: Check, cfg: RunConfig, target: dict[str, Any]) -> str:
    shared, reference = _shared_sources()
    module = ROOT.joinpath(*chk.module.split(".")[1:]).with_suffix(".py")  # ggspec.conformance.checks.x
    parts = {"check": chk.name, "check_source": _digest([module]) if module.is_file() else chk.module,
             "shared_source": shared, "reference_source": reference, "target": target, "seed": cfg.seed,
             "derandomize": cfg.derandomize, "examples": cfg.examples, "shrink": cfg.shrink,
             "profile": cfg.profile.value, "timeout": cfg.timeout, "check_budget": cfg.check_budget}
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


def store(k: str, res: CheckResult, device: str) -> str | None:
    """Keep `res` under key `k`; None when written (or not to be stored), else why it could not
    be (a cache that cannot be written costs speed, not verdicts: the caller says so once)."""
    if res.status not in STORED or res.flaky is not None:
        return None
    where = verdict_dir()
    try:
        where.mkdir(parents=True, exist_ok=True)
        tmp = where / f".{k}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(res.to_json()), encoding="utf-8")
        tmp.replace(where / f"{k}.{device}.json")
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return None
