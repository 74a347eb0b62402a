"""The streaming report: one JSON object a line, written as checks finish, so that a run that is
interrupted or killed keeps every result it reached.

`ggspec check --json OUT.json` streams to `OUT.jsonl` (the name with `.jsonl` for `.json`, or
`.jsonl` appended). The lines, in order:

- `{"event": "start", "target", "profile", "size", "seed", "examples", "timeout", "checks": [...]}`
- `{"event": "check", "name", "clauses", "status", ...}`, one per finished check: the one JSON
  encoding of a check result (results.CheckResult.to_json), as in the JSON report's `checks`;
- `{"event": "hung", "after": [...], "call_timeout"}`, at most once: the target hung in the
  checks `after`, and the checks that start from here limit each API call to
  `call_timeout` seconds (engine/hangs.py);
- `{"event": "end", "checks_done", "interrupted"}` (`interrupted`: "SIGINT", "SIGTERM" or "");
  a file without this line is the report of a run that was killed.

Each line is flushed when written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .results import CheckResult, RunConfig


def stream_path(json_path: str) -> str:
    """Where the stream of `--json json_path` goes."""
    return json_path[: -len(".json")] + ".jsonl" if json_path.endswith(".json") else json_path + ".jsonl"


class Stream:
    def __init__(self, path: Path, cfg: RunConfig, checks: list[str]) -> None:
        self._file = path.open("w", encoding="utf-8")
        self._write({"event": "start", "target": cfg.target, "profile": cfg.profile.value, "size": cfg.size,
                     "seed": cfg.seed, "examples": cfg.examples, "timeout": cfg.timeout, "checks": checks})

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    def result(self, res: CheckResult) -> None:
        self._write({"event": "check", **res.to_json()})

    def hung(self, after: tuple[str, ...], call_timeout: float) -> None:
        self._write({"event": "hung", "after": list(after), "call_timeout": call_timeout})

    def end(self, results: list[CheckResult], interrupted: str) -> None:
        self._write({"event": "end", "checks_done": len(results), "interrupted": interrupted})
        self._file.close()


def write_all(path: Path, cfg: RunConfig, results: list[CheckResult], interrupted: str = "") -> None:
    """A whole stream at once: for a run that never started its checks (a target that could
    not be loaded), so that its stream file says the same as its JSON report."""
    stream = Stream(path, cfg, [r.check for r in results])
    for res in results:
        stream.result(res)
    stream.end(results, interrupted)


def read(path: Path) -> list[dict[str, Any]]:
    """The records of a stream file (a last, partly written line is dropped)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return out
