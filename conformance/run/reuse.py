"""`ggspec check --reuse-from REPORT`: take from another run's JSON report the verdicts that do not
depend on the device, and run only the rest.

A check none of whose examples asked for a plain virtual device (engine/reach.py) ran the same
code as it would on any `--device`: under the report's seed, it draws the same examples and gets
the same verdict. `.ci/run` runs the suite on the mock (the main job, the rc8 job) and then on
WebGPU with the same seed; the WebGPU runs take from the mock's report the checks that never
asked for a device, and run the ones that did. A verdict is reused only when the report's entry
has the key this run computes for the check (run/cache.py `key`: target build, check and
reference sources, seed, examples, shrinking, profile) and is a pass, fail or unsupported; a
check that changed since, or crashed or hung there, runs again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..engine.results import CheckResult, RunConfig
from ..errors import UsageError
from ..reports import report
from .cache import STORED, reusable


def read(path: Path) -> dict[str, Any]:
    """The report, checked to be one `--reuse-from` can use (one line, UsageError, otherwise)."""
    try:
        data = report.load_json(path)
    except ValueError as exc:
        raise UsageError(f"--reuse-from: {exc}") from None
    if data.get("shard") or data.get("interrupted"):
        why = "an interrupted run" if data.get("interrupted") else f"shard {data['shard']}"
        raise UsageError(f"--reuse-from {path}: the report is of {why}; give a whole run's report")
    if not any("verdict_key" in c for c in data.get("checks", [])):
        raise UsageError(f"--reuse-from {path}: the report has no verdict keys (a merged report, or one written "
                         "by an older ggspec); give the report a whole `ggspec check --json` run wrote")
    return data


def agree(path: Path, data: dict[str, Any], cfg: RunConfig) -> None:
    """The run and the report must be of the same target, profile, size and seed (UsageError)."""
    for what, ours, theirs in (("target", cfg.target, data.get("target")), ("profile", cfg.profile.value, data.get("profile")),
                               ("examples a check", cfg.examples, data.get("examples")), ("seed", cfg.seed, data.get("seed"))):
        if ours != theirs:
            raise UsageError(f"--reuse-from {path}: its {what} is {theirs!r}, this run's is {ours!r}; "
                             "a verdict is reused only from a run of the same target, profile, size and seed")


def reused(data: dict[str, Any], keys: dict[str, str], device: str) -> list[CheckResult]:
    """The report's results this run may take as its own (module doc), for the checks in `keys`."""
    ran_on = str((data.get("target_description") or {}).get("device", "vdev"))
    _, results = report.from_json(data)
    entries = {c["name"]: c for c in data.get("checks", [])}
    return [r for r in results if r.check in keys and entries[r.check].get("verdict_key") == keys[r.check]
            and r.status in STORED and reusable(ran_on, r.reached_device, device)]
