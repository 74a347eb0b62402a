"""Checks and the differential comparison at their heart.

A *check* is a scenario — a function `scenario(t: Target, rec: Recorder, **args)` that calls the
API and records what it sees — plus the clauses it covers and a hypothesis strategy per argument.
`differential()` runs one example of a check: first on the reference model under the chosen
profile, then on the target, and compares:

- the reference finished: the target must finish too, with the same observations;
- the reference raised `SpecViolation` (an assert-kind clause): the target, run in a forked
  worker, must record the same observations up to that point and then abort with rc.8's message
  (the reference target must raise the same clause);
- the reference raised `UndefinedBehaviour` (rc.8 crashes there without an assert): the target
  must record the same observations up to that point; what it does next is not judged.

The virtual devices' entry logs are compared too: whole for a finished example
(`judge_entry_logs`), up to the reference's last observation for one the reference did not
finish (`judge_entry_logs_before_the_stop`).

A target killed by a signal other than SIGABRT (or aborting where the reference finishes) makes
the Mismatch `crashed`: the check's verdict is `crash`. An example that does not finish within
`RunState.example_timeout` seconds in one API call of the target (or `EXAMPLE_FACTOR` times that in all)
raises `ExampleTimeout` (except after undefined behaviour: a hang before the reference's
undefined-behaviour point is one).
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from typing import Any

from ggspec.reference.clauses import NotBinding, Profile, SpecViolation, UndefinedBehaviour, clause

from ..errors import (
    ErratumDifference,
    ExampleTimeout,
    Mismatch,
    MissingSymbol,
    NeedsDeviceWorker,
    NeedsPristineProcess,
    Unsendable,
    Unsupported,
)
from ..target import IN_SHARED_WORKER, selected_device
from ..target_names import asserts_compiled_in, default_profile
from . import isolate, sanitizer
from .difference import describe
from .plugins import enter_pristine_worker, make_target
from .registry import CHECKS, Check, Recorder


@dataclass
class Outcome:
    """How one run of a scenario ended, and what it recorded."""

    observations: list[tuple[str, Any]]
    ending: str  # "ok" | "violation" | "ub" | "abort" | "crash" | "timeout" | "error" | "unsupported"
    clause_id: str | None = None
    detail: str = ""
    stderr: str = ""
    #: (the reference only) behaviour errata whose branch the run reached (World.errata_taken)
    errata: frozenset[str] = frozenset()
    #: (the reference only) errata whose correction made calls rc.8 never makes (World.errata_calls)
    errata_calls: frozenset[str] = frozenset()
    #: the virtual devices' entry log (Target.vdev_log) when the scenario finished; None where
    #: it did not or the target keeps no log
    entry_log: tuple[str, ...] | None = None
    #: (the reference only) the profile it ran under
    profile: Profile | None = None
    #: (the reference only) the "ub" was a CPU-code assert on a device with kernels of its own
    #: (NotBinding): the assert clause does not bind that device
    not_binding: bool = False
    #: the entry log right after the k-th observation, for a run that did not finish (the
    #: reference's at its last observation; a forked target's at each, see LogTap)
    logs_at: dict[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LogSnapshot:
    """What a forked target run sends its parent after each observation: the entry log then
    (sent at once, so it survives the abort that ends the run)."""

    observations: int
    entries: tuple[str, ...]


class LogTap:
    """A Recorder's tap: the target's entry log after each observation. `send`: report each
    snapshot to the parent (a forked run, which may die); else keep only the last one."""

    def __init__(self, target: Any, rec: Recorder, send: bool) -> None:
        self.target, self.rec, self.send = target, rec, send
        self.last: tuple[int, tuple[str, ...]] | None = None

    def __call__(self) -> None:
        log = entry_log(self.target)
        if log is None:
            self.rec.tap = None  # the target keeps no log
            return
        self.last = (len(self.rec.items), log)
        if self.send:
            isolate.report(LogSnapshot(len(self.rec.items), log))

    def logs(self) -> dict[int, tuple[str, ...]]:
        return {} if self.last is None else {self.last[0]: self.last[1]}


@dataclass
class Example:
    """One differential example: its arguments and both outcomes."""

    check: Check
    args: dict[str, Any]
    expected: Outcome
    actual: Outcome
    notes: list[str] = field(default_factory=list)
    #: the target is a build without NDEBUG (target_names.asserts_compiled_in): its debug prints
    #: call entries a release build does not (see `debug_prints_removed`)
    debug_build: bool = False


def run_on_reference(chk: Check, args: dict[str, Any], profile: Profile) -> Outcome:
    rec = Recorder()
    target = make_target("reference", profile)
    tap = LogTap(target, rec, send=False)
    rec.tap = tap
    try:
        chk.scenario(target, rec, **args)
    except SpecViolation as exc:
        outcome = Outcome(rec.items, "violation", exc.clause_id, str(exc), logs_at=tap.logs())
    except UndefinedBehaviour as exc:
        outcome = Outcome(rec.items, "ub", exc.clause_id, str(exc), not_binding=isinstance(exc, NotBinding),
                          logs_at=tap.logs())
    else:
        outcome = Outcome(rec.items, "ok", entry_log=entry_log(target))
    world = getattr(target, "world", None)
    outcome.errata = frozenset(getattr(world, "errata_taken", ()))
    outcome.errata_calls = frozenset(getattr(world, "errata_calls", ()))
    outcome.profile = profile
    return outcome


def entry_log(target: Any) -> tuple[str, ...] | None:
    """The target's virtual-device entry log, or None where it keeps none."""
    try:
        return tuple(target.vdev_log())
    except (MissingSymbol, AttributeError):
        return None


def _run_in_process(chk: Check, args: dict[str, Any], target_name: str, profile: Profile,
                    tap_log: bool = False) -> Outcome:
    rec = Recorder()
    target = make_target(target_name, profile)
    if tap_log:  # a forked run: its entry log after each observation goes to the parent at once
        rec.tap = LogTap(target, rec, send=True)
    try:
        chk.scenario(target, rec, **args)
    except SpecViolation as exc:
        return Outcome(rec.items, "violation", exc.clause_id, str(exc))
    except UndefinedBehaviour as exc:
        return Outcome(rec.items, "ub", exc.clause_id, str(exc))
    except MissingSymbol as exc:  # judged as Unsupported: the target lacks what the check needs
        return Outcome(rec.items, "unsupported", detail=str(exc))
    else:
        log = entry_log(target)
    finally:
        close = getattr(target, "close", None)
        if close is not None:
            close()
    return Outcome(rec.items, "ok", entry_log=log)


#: an example as a whole (the reference's Python work included) may take this many times the
#: time of one API call
EXAMPLE_FACTOR = 10
#: what a worker that waits on a forked example adds to its own watchdog's deadlines
GRACE = 5.0


@dataclass
class RunState:
    """What the examples of one check share while they run: made by the runner for each check's
    worker (from the run's RunConfig) and handed down to `differential` and `run_on_target`;
    there is no module-level setting. The defaults are those of a plain call."""

    #: seconds the target may spend in one API call (--timeout): past it, the call hangs
    example_timeout: float = 10.0
    #: run every example on the target in a forked worker (after a check crashed in process,
    #: so that the crash becomes an outcome hypothesis can shrink and report)
    fork_every_example: bool = False
    #: what ErratumDifference blamed on erratum clauses while the check ran
    errata_seen: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: what the target did after undefined-behaviour points while the check ran
    ub_seen: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the worker that runs this check's examples on a device that never crosses a fork (started
    #: by the first such example, ended by `close`)
    device_worker: isolate.LastingWorker | None = None

    def example_limit(self) -> float:
        """Seconds one example may take in all."""
        return EXAMPLE_FACTOR * self.example_timeout

    def close(self) -> None:
        """The check is over: end its device worker."""
        if self.device_worker is not None:
            self.device_worker.close()
            self.device_worker = None


def _run_in_pristine_worker(chk: Check, args: dict[str, Any], target_name: str, profile: Profile) -> Outcome:
    enter_pristine_worker()
    return _run_in_process(chk, args, target_name, profile, tap_log=True)


def run_on_target(chk: Check, args: dict[str, Any], target_name: str, profile: Profile, expect_death: bool,
                  state: RunState | None = None) -> Outcome:
    """Run the scenario on the target; in a forked worker when it is expected to die, or when
    it uses the registry of a target that cannot reset it (NeedsPristineProcess: the worker is
    forked from this process, whose registry the guard kept untouched)."""
    state = state if state is not None else RunState()
    if target_name == "reference" or not (expect_death or state.fork_every_example):
        shared = IN_SHARED_WORKER.set(True)
        try:
            return _run_in_process(chk, args, target_name, profile)
        except NeedsDeviceWorker:
            device = True
        except NeedsPristineProcess:
            device = False
        finally:
            IN_SHARED_WORKER.reset(shared)
        if device:
            out = _run_in_device_worker(chk, args, target_name, profile, state)
            if out is not None:
                return out
    limit = state.example_timeout
    isolate.beat(state.example_limit() + GRACE, f"{chk.name}: an example in a forked worker")  # its own watchdog fires first
    forked = isolate.run_forked(lambda: _run_in_pristine_worker(chk, args, target_name, profile), timeout=state.example_limit(),
                                call_timeout=limit, full_args=True, python_traceback=False)
    return _forked_outcome(forked, limit, state)


def _device_example(payload: tuple[str, dict[str, Any], str, Profile]) -> Outcome:
    """In the device worker: one example, its entry log sent after each observation. The worker
    is not a pristine one: an example that uses a registry that cannot be reset raises
    NeedsPristineProcess there, and runs again in a worker of its own."""
    name, args, target_name, profile = payload
    return _run_in_process(CHECKS[name], args, target_name, profile, tap_log=True)


def _run_in_device_worker(chk: Check, args: dict[str, Any], target_name: str, profile: Profile,
                          state: RunState) -> Outcome | None:
    """The example in the check's device worker (started here by the check's first such
    example); None where it must run in a worker of its own instead (it needs a pristine
    registry, or its arguments cannot be sent)."""
    if state.device_worker is None:
        state.device_worker = isolate.LastingWorker(_device_example, full_args=True)
    limit = state.example_timeout
    isolate.beat(state.example_limit() + GRACE, f"{chk.name}: an example in the device worker")
    try:
        forked = state.device_worker.call((chk.name, args, target_name, profile), timeout=state.example_limit(),
                                          call_timeout=limit)
    except Unsendable:
        return None
    if forked.status == "exception" and isinstance(forked.value, NeedsPristineProcess):
        return None
    return _forked_outcome(forked, limit, state)


def _forked_outcome(forked: isolate.Forked, limit: float, state: RunState) -> Outcome:
    """How an example in a worker ended, with the entry logs it sent after each observation."""
    logs_at = {r.observations: r.entries for r in forked.reports if isinstance(r, LogSnapshot)}
    forked.reports = [r for r in forked.reports if not isinstance(r, LogSnapshot)]
    out = _ending_of(forked, limit, state)
    out.logs_at = logs_at
    return out


def _ending_of(forked: isolate.Forked, limit: float, state: RunState) -> Outcome:
    if forked.status == "timeout":
        how = (f"hung for {limit:g} s {forked.where()}" if forked.call_stuck
               else f"did not finish within {state.example_limit():g} s {forked.where()}".strip())
        return Outcome(forked.reports, "timeout", detail=how, stderr=forked.stderr)
    if forked.status == "ok":
        out: Outcome = forked.value
        out.stderr = forked.stderr
        return out
    if forked.status == "signal" and forked.signum == signal.SIGABRT:
        return Outcome(forked.reports, "abort", detail=forked.describe(), stderr=forked.stderr)
    if forked.status in ("signal", "exit"):
        how = ("was " if forked.status == "signal" else "") + forked.describe()
        return Outcome(forked.reports, "crash", detail=sanitizer.ending(forked.stderr, how), stderr=forked.stderr)
    return Outcome(forked.reports, "error", detail=forked.describe(), stderr=forked.stderr)


_PREFIX = re.compile(r"\b(wsp_|WSP_|ggspec_|GGSPEC_)")


def normalise_message(text: str) -> str:
    """rc.8's assert text without a prefix (`wsp_ggml_x` → `ggml_x`), whitespace collapsed."""
    return " ".join(_PREFIX.sub("", text).split())


def assert_message_seen(stderr: str, message: str) -> bool:
    """Whether a `GGML_ASSERT` line carrying `message` is in `stderr`."""
    want = normalise_message(message)
    return any("GGML_ASSERT" in line and want in normalise_message(line) for line in stderr.splitlines())


def erratum_behind(ex: Example, profile: Profile, target_name: str | None = None,
                   state: RunState | None = None) -> str | None:
    """The erratum clause that explains why `ex` disagrees under `profile`, or None: the target
    agrees with the reference under the other profile, and the reference reached an erratum.
    A scenario may itself read the profile (sched._pass_check records the tensors its passes
    decide under the run's profile), so where the target's run under `profile` disagrees with
    the other profile's reference, the target (`target_name`) is run once more under the other
    profile, in a worker of its own, and that run is judged."""
    other = Profile.RC8 if profile is Profile.FIXED else Profile.FIXED
    alt = run_on_reference(ex.check, ex.args, other)
    try:
        judge(Example(ex.check, ex.args, alt, ex.actual, debug_build=ex.debug_build))
    except Mismatch:
        if target_name is None:
            return None
        again = run_on_target(ex.check, ex.args, target_name, other, expect_death=True, state=state)
        try:
            judge(Example(ex.check, ex.args, alt, again, debug_build=ex.debug_build))
        except Mismatch:
            return None
    for outcome in (ex.expected, alt):
        if outcome.ending in ("violation", "ub") and outcome.clause_id and clause(outcome.clause_id).erratum:
            return outcome.clause_id
    for outcome in (ex.expected, alt):  # a behaviour erratum whose branch the model took (SCHED-33)
        for cid in sorted(outcome.errata):
            if clause(cid).erratum:
                return cid
    return None


def judge(ex: Example) -> None:
    """Raise Mismatch when the target's outcome is not what the reference's outcome requires."""
    exp, act = ex.expected, ex.actual
    n = len(exp.observations)
    if act.ending == "unsupported":
        if act.observations != exp.observations[:len(act.observations)]:
            raise Mismatch("before it stopped on a missing symbol: " + describe(exp.observations, act.observations, ex.args))
        if exp.ending == "ub" and len(act.observations) >= n:
            # the target lacked something only past the reference's undefined-behaviour point (or
            # past a CPU-code assert that does not bind a device, NotBinding), where nothing is judged
            ex.notes.append(f"undefined behaviour expected ({exp.detail}); target: unsupported {act.detail}")
            return
        raise Unsupported(act.detail)
    if act.ending == "error":
        raise Mismatch(f"the target could not run the scenario: {act.detail}")
    if exp.ending == "ok":
        if act.ending != "ok":
            raise Mismatch(f"the reference finished, the target ended with {act.ending}: {act.detail}\n{_tail(act.stderr)}")
        if act.observations != exp.observations:
            raise Mismatch(describe(exp.observations, act.observations, ex.args))
        judge_entry_logs(ex)
        return
    if act.observations[:n] != exp.observations:
        raise Mismatch("before the expected " + exp.ending + ": " + describe(exp.observations, act.observations[:n], ex.args))
    judge_entry_logs_before_the_stop(ex)
    if exp.ending == "ub":
        ex.notes.append(f"undefined behaviour expected ({exp.detail}); target: {act.ending} {act.detail}")
        return
    assert exp.clause_id is not None
    c = clause(exp.clause_id)
    if act.ending == "violation":  # the reference model as target
        if act.clause_id != exp.clause_id:
            raise Mismatch(f"expected a violation of {exp.clause_id}, got one of {act.clause_id}")
        return
    if act.ending != "abort":
        raise Mismatch(
            f"{exp.clause_id} requires an abort with GGML_ASSERT '{c.message}'; the target "
            f"{'finished normally' if act.ending == 'ok' else act.detail}\n{_tail(act.stderr)}"
        )
    assert c.message is not None
    if not assert_message_seen(act.stderr, c.message):
        raise Mismatch(f"{exp.clause_id}: the target aborted without 'GGML_ASSERT ... {c.message}'\n{_tail(act.stderr)}")


def _entry(line: str) -> str:
    """The entry a log line names (its second word, after the device)."""
    words = line.split()
    return words[1] if len(words) > 1 else line


def _named_by_errata(ex: Example) -> set[str]:
    """The entries the text of an erratum names: the errata whose branch the reference took in
    this example or whose correction made calls rc.8 does not (SCHED-33's supports_op, asked
    whatever it answers), and those of the check's own clauses."""
    named: set[str] = set()
    for cid in sorted(ex.expected.errata | ex.expected.errata_calls | set(ex.check.clauses)):
        text = clause(cid).erratum or ""
        named |= set(re.findall(r"[a-z_]+", text))
    return named


def judge_entry_logs(ex: Example) -> None:
    """The virtual devices' entry logs of two finished runs (DESIGN.md, "Every device keeps an
    ordered log"): under profile rc8 the same, entry for entry; under profile fixed an extra or a
    missing entry only where an erratum's text names that entry. Raise Mismatch showing the
    first entry where the logs part."""
    _compare_entry_logs(ex, ex.expected.entry_log, ex.actual.entry_log)


def judge_entry_logs_before_the_stop(ex: Example) -> None:
    """The entry logs of an example the reference did not finish (an assert, undefined
    behaviour), compared as `judge_entry_logs` compares finished ones, up to the reference's
    last observation: the reference's log right after it against the target's right after the
    same observation (the observations up to there agree). The calls after it are not compared:
    the target's log after that point dies with it when it aborts, and a run that stops inside
    an API call stops at another entry on each side (the model raises where rc.8 would assert,
    before or after the entries the call makes first). With no observation before the stop, or
    a target run in process (the reference as target), there is nothing to compare."""
    n = len(ex.expected.observations)
    _compare_entry_logs(ex, ex.expected.logs_at.get(n), ex.actual.logs_at.get(n),
                        f" (up to observation {n}, the reference's last before its {ex.expected.ending})")


def _compare_entry_logs(ex: Example, exp: tuple[str, ...] | None, act: tuple[str, ...] | None, when: str = "") -> None:
    if exp is not None and act is not None and ex.debug_build:
        act = debug_prints_removed(act)
    if exp is None or act is None or exp == act:
        return
    if ex.expected.profile is Profile.FIXED:
        # the logs without the entries an erratum names agree entry for entry (not a diff of the
        # two: between runs of alike entries, supports_backend after supports_backend, a diff
        # pairs them arbitrarily and reports an extra named entry as an unnamed one)
        named = _named_by_errata(ex)
        if [line for line in exp if _entry(line) not in named] == [line for line in act if _entry(line) not in named]:
            return
    raise Mismatch(describe_entry_logs(exp, act) + when)


def _object(line: str) -> str:
    """The device and the object a log line names (`VDEV buffer#0`)."""
    words = line.split()
    return f"{words[0]} {words[2]}" if len(words) > 2 else line


def debug_prints_removed(log: tuple[str, ...]) -> tuple[str, ...]:
    """A debug build's entry log without the calls its `#ifndef NDEBUG` prints make, so that it
    compares with the model's, which describes the release build (the rc8 target).

    The only such print the suite's scenarios reach is COPY-7's slow-copy warning: before the
    staged copy, the debug build asks both buffers for their names to print them. So the entries
    removed are exactly two buffer `get_name` calls, one of them on the destination's buffer (in
    either order: C leaves the order of a call's arguments open; gcc asks the destination
    first), directly followed by the copy's `get_tensor` on the source and `set_tensor` on the
    destination. (The source's name is its own `buffer` field's, which for a view need not be the
    buffer its bytes are read from, its view_src's, TDATA-8.) Anything else a debug build calls
    (the pass-4 sanity check's backend names, say, which no scenario reaches today) stays in the
    log and fails the comparison, to be described here when it is met.

    Why not a known-failures file: that would mark the whole of each affected check (22 under
    profile rc8) as a known failure, hiding any other difference in it, while these calls are a
    documented, predictable property of the build (spec/copy.md, COPY-7)."""
    out: list[str] = []
    i = 0
    while i < len(log):
        names = [_object(line) for line in log[i:i + 2] if _entry(line) == "get_name" and " buffer#" in line]
        if (i + 3 < len(log) and len(names) == 2 and _entry(log[i + 2]) == "get_tensor"
                and _entry(log[i + 3]) == "set_tensor" and _object(log[i + 3]) in names):
            i += 2  # the warning's two names: the copy itself is kept
            continue
        out.append(log[i])
        i += 1
    return tuple(out)


def describe_entry_logs(exp: tuple[str, ...], act: tuple[str, ...], context: int = 3) -> str:
    """Where two entry logs part: the index of the first differing entry, both entries, and a
    few entries on either side."""
    k = next((i for i, (a, b) in enumerate(zip(exp, act, strict=False)) if a != b), min(len(exp), len(act)))
    lines = [f"the virtual devices' entry logs part at entry {k} (reference {len(exp)} entries, target {len(act)}):"]
    lines.append(f"  reference: {exp[k] if k < len(exp) else '(end of log)'}")
    lines.append(f"  target:    {act[k] if k < len(act) else '(end of log)'}")
    lo = max(0, k - context)
    if lo < k:
        lines.append("  before, in both: " + " | ".join(exp[lo:k]))
    lines.append("  reference next: " + " | ".join(exp[k:k + context]))
    lines.append("  target next:    " + " | ".join(act[k:k + context]))
    return "\n".join(lines)


def _tail(text: str, lines: int = 8) -> str:
    """The last lines of a worker's stderr, or the head of the sanitizer report it holds."""
    return sanitizer.tail(text, lines)


def reproducer(ex: Example, target_name: str, profile: Profile) -> str:
    """A copy-pastable snippet that replays this example: one line of Python (paste it into
    `python`), wrapped in a shell here-document. It names the run's device where that is not the
    mock (`--device webgpu`), so the replay runs where the example ran."""
    device = selected_device()
    line = ("from ggspec.conformance.tools.replay import replay; from ggspec.conformance.inputs.strategies import *; "
            "from ggspec.reference.vdev import *; "
            f"replay({ex.check.name!r}, target={target_name!r}, profile={profile.value!r}, args={ex.args!r}"
            + (f", device={device!r})" if device != "vdev" else ")"))
    return f"python - <<'EOF'\n{line}\nEOF"


def _erratum_lets_it_through(chk: Check, args: dict[str, Any] | None, profile: Profile | None) -> bool:
    """An assert check of an erratum clause that rc.8's defect lets pass (TDATA-3's wrapping
    sum): the reference under the other profile must break that erratum clause."""
    if args is None or profile is None or not any(clause(c).erratum for c in chk.clauses):
        return False
    other = run_on_reference(chk, args, Profile.FIXED if profile is Profile.RC8 else Profile.RC8)
    return other.ending == "violation" and other.clause_id in chk.clauses and clause(other.clause_id).erratum is not None


def _check_reaches_its_clauses(chk: Check, expected: Outcome, args: dict[str, Any] | None = None,
                               profile: Profile | None = None) -> None:
    """Keep checks honest: an assert check must break one of its own clauses on the reference
    (under one of the profiles, for an erratum clause), and a behaviour check must draw only
    calls the reference accepts."""
    kinds = {clause(c).kind for c in chk.clauses}
    if kinds == {"assert"}:
        # an assert of the CPU code reached on a device with kernels of its own reaches the
        # clause, which does not bind that device (NotBinding): the example is not judged there
        reached = expected.ending == "violation" or (expected.ending == "ub" and expected.not_binding)
        if (not reached or expected.clause_id not in chk.clauses) and \
                not _erratum_lets_it_through(chk, args, profile):
            raise Mismatch(
                f"{chk.name}: this assert check did not reach its clause(s) {', '.join(chk.clauses)} on the "
                f"reference (it ended with {expected.ending} {expected.clause_id or ''}): the scenario is wrong"
            )
    elif "assert" not in kinds and expected.ending == "violation":
        raise Mismatch(
            f"{chk.name}: this behaviour check drew a call the reference rejects ({expected.detail}): the "
            "scenario or its strategy is wrong"
        )


def differential(chk: Check, args: dict[str, Any], target_name: str, profile: Profile,
                 state: RunState | None = None) -> Example:
    """Run one example on the reference and the target and judge it; raise Mismatch on disagreement."""
    expected = run_on_reference(chk, args, profile)
    _check_reaches_its_clauses(chk, expected, args, profile)
    # a target may also die where the other profile stops (an rc.8 build held to profile fixed
    # crashes at an erratum): run such an example forked too, so the crash stays one example's.
    # Only for a target that claims rc8 (the second reference run is half the reference's cost;
    # a target claiming fixed that crashes anyway is caught by the runner's forked rerun)
    die = expected.ending != "ok" or (profile is Profile.FIXED and target_name != "reference"
                                      and default_profile(target_name) is Profile.RC8
                                      and run_on_reference(chk, args, Profile.RC8).ending != "ok")
    actual = run_on_target(chk, args, target_name, profile, expect_death=die, state=state)
    ex = Example(chk, args, expected, actual, debug_build=asserts_compiled_in(target_name))
    # after undefined behaviour a hang is allowed, before it not: a target that hung before making
    # every observation the reference made up to the undefined-behaviour point hung where the
    # behaviour is defined (a timeout, naming the call, not a difference of observations)
    if actual.ending == "timeout" and (expected.ending != "ub" or len(actual.observations) < len(expected.observations)):
        raise ExampleTimeout(f"{chk.name} [{', '.join(chk.clauses)}]: the target {actual.detail}\n{_tail(actual.stderr)}\n"
                             f"reproducer:\n{reproducer(ex, target_name, profile)}")
    try:
        judge(ex)
    except Mismatch as exc:
        where = f"{chk.name} [{', '.join(chk.clauses)}]"
        text = f"{where}: {exc}\nreproducer:\n{reproducer(ex, target_name, profile)}"
        erratum = erratum_behind(ex, profile, target_name, state)
        err = Mismatch(text) if erratum is None else ErratumDifference(
            f"erratum {erratum} ({profile.value} profile): {text}", erratum,
            actual.ending in ("abort", "crash") and expected.ending == "ok")
        err.example, err.target_name, err.profile = ex, target_name, profile  # for a C reproducer
        err.crashed = actual.ending == "crash" or (actual.ending == "abort" and expected.ending == "ok")
        raise err from None
    return ex


