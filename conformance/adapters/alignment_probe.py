"""The alignment a real device reports on this machine, asked once (vulkan_device.py and
webgpu_device.py shape the reference's device after it).

A device never starts in a process that forks examples, so the question is put to a child
process; its answer is kept in the process and in a JSON file of the cache folder, keyed by what
the answer depends on (the library and its build), so a run's workers do not start the device to
ask again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def probed_alignment(key: str, cache: Path, memo: dict[str, int | None], code: str, args: Sequence[str] = (),
                     *, timeout: float, env: Mapping[str, str] | None = None) -> int | None:
    """What `python -c code *args` prints last, run in a child process (environment `env`, this
    one's where None) the first time `key` is asked: a positive whole number, or None where it
    prints anything else (`none`: no device), fails or runs past `timeout` seconds. The answer is
    kept under `key` in `memo` (the caller's, for this process) and in the file `cache`."""
    if key in memo:
        return memo[key]
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if key not in known:
        try:
            out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                                 timeout=timeout, env=env, check=False).stdout.split()
        except (OSError, subprocess.SubprocessError):
            out = []
        known[key] = int(out[-1]) if out and out[-1].isdigit() and int(out[-1]) > 0 else None
        try:  # a whole file or none: workers may write it at once
            cache.parent.mkdir(parents=True, exist_ok=True)
            partial = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps(known), encoding="utf-8")
            os.replace(partial, cache)
        except OSError:
            pass
    memo[key] = known[key]
    return memo[key]
