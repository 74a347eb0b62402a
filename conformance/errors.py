"""Every exception of the conformance suite, in one place (the modules that raise them import
them from here, and keep their old names importable: `from ggspec.conformance.adapters.rc8
import CannotFetch` still works).

A user's mistake on the command line or in a file is a `ValueError` (one line, exit code 2 in
the CLI); a target that cannot be built or fetched here is `TargetUnavailable`; what a target does
wrong is a `Mismatch` (an AssertionError, the way hypothesis wants a failure).
"""

from __future__ import annotations

import signal
from typing import Any

from ggspec.reference.clauses import Profile

# --- targets ---------------------------------------------------------------------------------


class MissingSymbol(Exception):
    """The target has no such function or struct field."""

    def __init__(self, target: str, symbol: str) -> None:
        super().__init__(f"target {target} lacks {symbol}")
        self.symbol = symbol


class MockOnly(MissingSymbol):
    """A reading only the virtual device (the mock) gives, `vdev_pending` or `vdev_counters`,
    asked of a real device (`--device webgpu`). A check that takes such a reading through
    `Recorder.mock_reading` records it as `NotObservable` on both sides and goes on; read
    directly, it is a `MissingSymbol` like any other (the example is `unsupported`)."""


class DeviceRefused(MissingSymbol):
    """The WebGPU device (`--device webgpu`) refused to compute a graph: it holds a node webgpu.c
    has no kernel for, where the mock computes every op. Raised alike on the target and on the
    reference's WebGPU shape; an example that meets it is `unsupported`, unless its check takes
    the refusal as an answer (ops.unimplemented_cases_abort: a device with kernels of its own may
    refuse what the CPU code does not implement)."""


class NeedsPristineProcess(Exception):
    """The target's registry cannot be reset and this process may have used it: the harness
    runs the scenario again in a worker forked from a process that never did."""


class NeedsDeviceWorker(NeedsPristineProcess):
    """The scenario starts a device that never crosses a fork (the WebGPU device), so it cannot
    run in a check's worker, from which later examples are forked: the harness runs it in the
    check's device worker (engine.isolate.LastingWorker, one per check, which keeps the device
    for the check's next such example), else in a worker of its own."""


class Unsendable(Exception):
    """A value that cannot be pickled to a lasting worker (engine.isolate.LastingWorker.call): the
    caller runs that example in a worker of its own instead."""


class TargetUnavailable(Exception):
    """The target cannot be built or loaded here (a tool, the network or a file is missing)."""


class ContextsExhausted(Exception):
    """The target's `ggml_init` returned NULL: every context slot of the library is taken. rc.8's
    ggml.c keeps a fixed table of WSP_GGML_MAX_CONTEXTS (64) contexts for the whole process; each
    C target holds two, and each scheduler that has split a graph one more, until freed."""


class CannotFetch(TargetUnavailable):
    """The tool or the network that fetches an external target is missing (npm and the npm
    registry for rc8, pip and PyPI for the ggml-python builds): the one reason tests may skip
    those targets."""


class CompileFailed(Exception):
    """cffi could not compile a probe of an external target's headers (adapters/external.py)."""


# --- judging an example ----------------------------------------------------------------------


class Mismatch(AssertionError):
    """A target disagreed with the reference on one example (`example`, when differential
    raised it, with the target's name and the profile: creproducer writes C from them)."""

    example: Any = None  # engine.differential.Example
    target_name: str | None = None
    profile: Profile | None = None
    #: the target died (a signal other than SIGABRT, or an abort where the reference lives):
    #: the check's verdict is `crash`, whatever the kind of its clauses
    crashed: bool = False


class ErratumDifference(Mismatch):
    """A disagreement that one erratum explains: the reference under the other profile agrees
    with the target, and the reference under one of the two profiles stopped at the erratum
    clause `clause_id` (its rc.8 assert or undefined behaviour). The runner blames that clause,
    not the check's own clauses. `crashed`: the target died where the profile expects it to live."""

    def __init__(self, text: str, clause_id: str, crashed: bool) -> None:
        super().__init__(text)
        self.clause_id = clause_id
        self.crashed = crashed


class Unsupported(Exception):
    """The target lacks a function or hook the check needs (`MissingSymbol`), and agreed with
    the reference up to there: the check's verdict is `unsupported`, not a failure."""


class ExampleTimeout(BaseException):
    """An example did not finish within its time on the target. A BaseException, so that
    hypothesis does not catch it: a hang is not shrunk (every try would cost the timeout); the
    runner makes it the check's `timeout` verdict at once."""


class ReplayFailed(AssertionError):
    """The replayed example still disagrees, or the target crashed or hung on it."""


class CheckFailed(Exception):
    """A check's clause failed (pytest --ggspec): the message is its differences and reproducers."""


# --- running ---------------------------------------------------------------------------------


class RunInterrupted(Exception):
    """SIGINT or SIGTERM stopped `run_all`: `results` holds the checks that finished."""

    def __init__(self, signum: int, results: list[Any]) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name} after {len(results)} check(s)")
        self.signum, self.results = signum, results


class HarnessFailed(Exception):
    """ggspec itself could not go on (it ran out of memory, or runs under an address-space limit
    below what it needs): no verdict on the target. `results` holds the checks that finished;
    `ggspec check` says so in one line and exits 3."""

    def __init__(self, why: str, results: list[Any] | None = None) -> None:
        super().__init__(why)
        self.results = list(results or [])


class Terminated(BaseException):
    """SIGTERM, raised in the runner's main thread like KeyboardInterrupt is for SIGINT."""


class WorkersStopped(BaseException):
    """`isolate.stop_all` was called: run_forked starts no worker and reports none that it killed."""


# --- a user's mistake: one line, exit code 2 ---------------------------------------------------


class UsageError(ValueError):
    """A mistake in the command line or its files: one line, exit code 2."""


class SelectionError(ValueError):
    """A --select / --deselect pattern matches nothing, or nothing is left to run."""


class MergeError(ValueError):
    """Reports that cannot be merged into one run's (one line, exit code 2)."""


class KnownFileError(ValueError):
    """The known-failures file is missing, not TOML, or has a wrong entry."""


class AnchorError(ValueError):
    """An rc8 head line of a clause that does not parse, or an anchor that names nothing in rc.8
    (tools/rc8lines.py)."""


class SourcesMissing(FileNotFoundError):
    """The rc.8 package is not in the cache (tools/rc8lines.py)."""


class ChangedError(ValueError):
    """`--changed` cannot work here: not a git repository, or an unknown revision (run/changed.py)."""


class MovedModuleWarning(FutureWarning):
    """An old module path was imported (conformance/_moved.py's table): it works, and the warning
    names the new path."""
