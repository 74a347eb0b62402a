"""Replaying one example of a check, as printed in a failure's reproducer.

The example runs in a forked worker, as in the suite, so a target that crashes or hangs ends the
worker and not the replay: it prints how the example ended — both outcomes when they agree, the
difference when they do not, or how the target died (the signal, the API call it was in and its
stderr) — and raises `ReplayFailed` unless they agree.
"""

from __future__ import annotations

import os
from typing import Any

from ggspec.reference.clauses import Profile

from ..adapters.vulkan_device import note_target
from ..engine import isolate
from ..engine.differential import RunState, differential
from ..engine.registry import CHECKS
from ..engine.runner import load_checks
from ..errors import ExampleTimeout, Mismatch, ReplayFailed
from ..target import DEVICE_ENV, DEVICES


def _here(check_name: str, target: str, profile: str, args: dict[str, Any], state: RunState) -> tuple[str, str]:
    """In the worker: ("agree", the outcomes) or ("disagree" | "timeout", what differs)."""
    try:
        ex = differential(CHECKS[check_name], args, target, Profile(profile), state)
    except Mismatch as exc:
        return "disagree", str(exc)
    except ExampleTimeout as exc:
        return "timeout", str(exc)
    ex_text = [f"{check_name}: reference {ex.expected.ending}, {target} {ex.actual.ending}: agree"]
    ex_text.extend(f"  {label} = {value!r}" for label, value in ex.expected.observations)
    ex_text.extend(f"  note: {n}" for n in ex.notes)
    return "agree", "\n".join(ex_text)


def replay(check_name: str, target: str, profile: str, args: dict[str, Any], timeout: float = 60.0,
           device: str = "vdev") -> None:
    """Run the example again in a forked worker, print how it ended, and raise ReplayFailed
    unless the reference and the target agree. `timeout`: seconds the example may take;
    `device`: the device behind a plain virtual device, as `ggspec check --device` (a
    reproducer of a `--device webgpu` run names it)."""
    load_checks()
    if check_name not in CHECKS:
        raise ValueError(f"no check named {check_name!r}")
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; known: {', '.join(DEVICES)}")
    state = RunState(example_timeout=timeout)

    def worker() -> tuple[str, str]:
        os.environ[DEVICE_ENV] = device  # in the worker only: the caller's environment is untouched
        note_target(target)  # a device the target ships: the reference takes its shape (vulkan_device.py)
        return _here(check_name, target, profile, args, state)

    forked = isolate.run_forked(worker, timeout=timeout + 5, reports=False, full_args=True)
    if forked.status == "ok":
        verdict, text = forked.value
        print(text)
        if verdict != "agree":
            raise ReplayFailed(f"{check_name} on {target}: {verdict}")
        return
    how = "did not finish within {timeout:g} s" if forked.status == "timeout" else forked.describe()
    where = forked.where() if forked.status == "timeout" else ""
    stderr = "\n  ".join(forked.stderr.strip().splitlines()[-12:]) or "(empty)"
    print(f"{check_name}: the replay's worker {how.format(timeout=timeout)} {where}".rstrip() + f"\nstderr:\n  {stderr}")
    raise ReplayFailed(f"{check_name} on {target}: the worker {forked.describe()}")
