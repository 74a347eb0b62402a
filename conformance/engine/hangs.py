"""A target that hangs: after it has hung in a few checks, the rest of the run is judged with a
short limit on each API call, and more checks at once, so that a target hanging in a common call
costs seconds a check instead of a whole --timeout.

`HangWatch` (one a run, kept by runner.run_all) counts the checks that end in a hang of the
target. After HUNG_AFTER of them (checks that do not reach the hanging call may pass between
them) the target has shown that it hangs: every remaining check still runs, each API call of its
examples limited to HUNG_CALL_TIMEOUT seconds instead of --timeout (an example as a whole keeps
EXAMPLE_FACTOR times --timeout: the reference's own work is not rushed), HUNG_WIDEN times as many
at once (a hung check sleeps: it costs time, not CPU), and the run says so: one line when it
switches, the stream's `hung` event, and each check judged that way names the limit in its detail.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from .differential import EXAMPLE_FACTOR, RunState
from .results import CheckResult

#: checks that must end in a hang of the target before the run shortens the API calls' limit
HUNG_AFTER = 3
#: seconds each API call of the remaining checks may take, once the target has shown it hangs
HUNG_CALL_TIMEOUT = 0.5
#: how many times --workers checks run at once from then on
HUNG_WIDEN = 3


def _nothing() -> None:
    pass


def is_hang(res: CheckResult) -> bool:
    """Whether `res` ended in a hang of the target: a timeout that is not the check's budget
    running out (a slow check is not a hung target)."""
    return res.status == "timeout" and not res.detail.startswith("the check's budget")


class HangWatch:
    """The target's hangs, check after check, for one run (thread-safe: checks finish in threads)."""

    def __init__(self, timeout: float) -> None:
        self._lock = threading.Lock()
        self._hung: list[str] = []
        #: the API calls' limit once the target has shown it hangs (never longer than --timeout)
        self.short = min(HUNG_CALL_TIMEOUT, timeout)
        #: the checks that showed it: empty until then
        self.after: tuple[str, ...] = ()
        #: called once when the run switches (runner._in_threads: let more checks run at once)
        self.widen: Callable[[], None] = _nothing

    def call_timeout(self) -> float | None:
        """The limit on each API call of a check starting now: None for the run's --timeout."""
        return self.short if self.after else None

    def saw(self, res: CheckResult) -> bool:
        """Count a finished check; True when it is the one that makes the run shorten the limit."""
        with self._lock:
            if self.after:
                return False
            if is_hang(res):
                self._hung.append(res.check)
            if len(self._hung) < HUNG_AFTER:
                return False
            self.after = tuple(self._hung)
        self.widen()
        return True

    def line(self, remaining: int) -> str:
        """What the run says when it switches."""
        return (f"the target hung in {len(self.after)} checks ({', '.join(self.after)}): the {remaining} remaining "
                f"check(s) run with {self.short:g} s for each API call instead of --timeout")

    def note(self) -> str:
        """The first line of the detail of a check judged with the short limit."""
        return (f"judged with {self.short:g} s for each API call: the target had hung in {len(self.after)} checks "
                f"({', '.join(self.after)})")


@dataclass
class ShortCalls(RunState):
    """A check's RunState whose API calls have `example_timeout` seconds each while an example
    keeps `limit` seconds in all (RunState ties the two: EXAMPLE_FACTOR times the call's)."""

    limit: float = EXAMPLE_FACTOR * 10.0

    def example_limit(self) -> float:
        return self.limit
