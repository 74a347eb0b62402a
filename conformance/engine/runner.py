"""Running checks: hypothesis drives each check's scenario through `differential`, inside a
forked worker per check, and the verdicts are gathered per clause."""

from __future__ import annotations

import importlib
import pkgutil
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ggspec.reference.clauses import Profile
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from ..errors import ErratumDifference, ExampleTimeout, HarnessFailed, MissingSymbol, RunInterrupted, Unsupported
from ..errors import Terminated as _Terminated
from . import after_ub, isolate, reach, sanitizer
from .differential import EXAMPLE_FACTOR, GRACE, RunState, differential
from .hangs import HUNG_WIDEN, HangWatch, ShortCalls
from .limits import out_of_memory
from .plugins import PLUGINS, make_target
from .registry import CHECKS, SIZE_REASONS, Check
from .results import CheckResult, RunConfig, Status, merge, progress_line


def load_checks() -> dict[str, Check]:
    """Import every module of the plugged-in check packages (conformance/checks: each module
    registers its checks, the state machines included)."""
    for name in PLUGINS.check_packages:
        pkg = importlib.import_module(name)
        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{name}.{mod.name}")
    return CHECKS


def _settings(cfg: RunConfig, **extra: Any) -> settings:
    """Hypothesis' settings for one check of the run: the run's size, seed mode, no database,
    shrinking unless the run turns it off (RunConfig.shrink)."""
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if cfg.shrink else [])
    return settings(max_examples=cfg.examples, deadline=None, derandomize=cfg.derandomize, database=None,
                    suppress_health_check=list(HealthCheck), phases=phases, print_blob=False, **extra)


#: how many times a failing example that did not fail again under hypothesis is replayed
FLAKY_REPLAYS = 10


def _hypothesis_test(chk: Check, cfg: RunConfig, counter: list[int], state: RunState,
                     failed: list[dict[str, Any]] | None = None) -> Callable[[], None]:
    """The check as a hypothesis test; `failed` gets the arguments of the last example that failed."""
    @_settings(cfg, report_multiple_bugs=False)  # one shrunk failure with its reproducer, not an ExceptionGroup
    @given(args=st.fixed_dictionaries(chk.strategies))
    def test(args: dict[str, Any]) -> None:
        counter[0] += 1
        isolate.beat(state.example_limit(), f"example {counter[0]}")
        try:
            seen = after_ub.observe(differential(chk, args, cfg.target, cfg.profile, state))
            if seen is not None:  # what the target did after an undefined-behaviour point
                merge(state.ub_seen, *seen)
        except ErratumDifference as exc:  # explained: blamed on the erratum, the run goes on
            if exc.clause_id not in state.errata_seen:
                state.errata_seen[exc.clause_id] = ("crash" if exc.crashed else "fail",
                                                str(exc) + _c_reproducer(exc, cfg) + _vector(exc, cfg))
        except BaseException:
            if failed is not None:
                failed[:] = [args]
            raise

    for args in reversed(chk.examples):  # the check's deterministic examples, run under every seed
        test = example(args=args)(test)
    # hypothesis keys its (unused: database=None) example database by a digest of the test's
    # source, tokenized anew in every worker: the check's name is key enough
    test._hypothesis_internal_database_key = chk.name.encode()  # type: ignore[attr-defined]
    return seed(cfg.seed)(test)


def _machine_test(chk: Check, cfg: RunConfig, counter: list[int], state: RunState) -> Callable[[], None]:
    """The check's state machine under the run's settings, each example counted. Hypothesis
    attaches the steps of the shrunk failing example to the exception as notes."""
    assert chk.machine is not None
    machine = chk.machine(cfg.target, cfg.profile)

    def factory() -> Any:
        counter[0] += 1
        isolate.beat(state.example_limit(), f"example {counter[0]}")
        return machine()

    seed(cfg.seed)(factory)
    machine_settings = _settings(cfg)

    # typed loosely on purpose: hypothesis' own annotation of this function changed across releases
    run_machine: Any = run_state_machine_as_test

    def test() -> None:
        run_machine(factory, settings=machine_settings)

    return test


def run_check_here(chk: Check, cfg: RunConfig, state: RunState | None = None) -> CheckResult:
    """Run one check in this process; a target crash here ends this process. `state`: what its
    examples share (a fresh one from `cfg` by default, closed when the check is over)."""
    if state is None:
        state = RunState(example_timeout=cfg.timeout)
        try:
            return run_check_here(chk, cfg, state)
        finally:
            state.close()
    with reach.watching() as reached:
        result = _verdict(chk, cfg, state)
    result.reached_device = reached()
    return result


def _verdict(chk: Check, cfg: RunConfig, state: RunState) -> CheckResult:
    """run_check_here's body: the check's examples, and its verdict."""
    counter = [0]
    failed: list[dict[str, Any]] = []
    start = time.monotonic()
    if chk.sizes is not None and cfg.size not in chk.sizes:  # registry.only_at: not run, and said so
        return CheckResult(chk.name, chk.clauses, "skipped", 0,
                           f"runs only at --size {' or '.join(chk.sizes)}: {SIZE_REASONS.get(chk.name, '')}".rstrip(": "))
    try:
        if chk.machine is not None:
            try:
                _machine_test(chk, cfg, counter, state)()
            except AssertionError as exc:
                steps = "\n".join(getattr(exc, "__notes__", []))
                replay = (f"replay: ggspec check --target {cfg.target} --profile {cfg.profile.value} "
                          f"--select {chk.name} --seed {cfg.seed} --max-examples {cfg.examples}")
                raise AssertionError(f"{chk.name} [{', '.join(chk.clauses)}]: {exc}\n{steps}\n{replay}") from None
        else:
            _hypothesis_test(chk, cfg, counter, state, failed)()
    except AssertionError as exc:
        detail = str(exc) + _c_reproducer(exc, cfg) + _vector(exc, cfg)
        status: Status = "crash" if getattr(exc, "crashed", False) else "fail"
        return CheckResult(chk.name, chk.clauses, status, counter[0], detail, time.monotonic() - start)
    except ExampleTimeout as exc:  # a hang is not shrunk: the first one is the verdict
        return CheckResult(chk.name, chk.clauses, "timeout", counter[0], str(exc), time.monotonic() - start)
    except (Unsupported, MissingSymbol) as exc:  # the target lacks what this check needs: not a failure
        return CheckResult(chk.name, chk.clauses, "unsupported", counter[0], str(exc), time.monotonic() - start)
    except MemoryError:  # ggspec's own memory (the reference's, the harness's): never the target's verdict
        raise
    except Flaky as exc:  # a failure that did not fail again: a flaky target, said so, never cached
        fails, replays = _replay(chk, cfg, state, failed[0]) if failed else (0, 0)
        how = (f"failed again in {fails} of {replays} replays" if replays
               else "could not be replayed (a state machine's steps)")
        detail = (f"flaky: the failing example did not fail again when hypothesis replayed it; it {how}\n"
                  + "".join(traceback.format_exception_only(type(exc), exc)).strip())
        return CheckResult(chk.name, chk.clauses, "fail", counter[0], detail, time.monotonic() - start,
                           flaky=(fails, replays))
    except Exception as exc:  # noqa: BLE001 - any other error is a failure of this check, reported
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return CheckResult(chk.name, chk.clauses, "fail", counter[0], detail, time.monotonic() - start)
    return CheckResult(chk.name, chk.clauses, "pass", counter[0], "", time.monotonic() - start)


def _replay(chk: Check, cfg: RunConfig, state: RunState, args: dict[str, Any]) -> tuple[int, int]:
    """Run a flaky check's failing example FLAKY_REPLAYS times: (how many failed, how many ran)."""
    fails = 0
    for i in range(FLAKY_REPLAYS):
        isolate.beat(state.example_limit(), f"replay {i + 1} of a flaky example")
        try:
            differential(chk, args, cfg.target, cfg.profile, state)
        except (Exception, ExampleTimeout):  # noqa: BLE001 - any failure counts
            fails += 1
    return fails, FLAKY_REPLAYS


def _c_reproducer(exc: BaseException, cfg: RunConfig) -> str:
    """For a failing example of a C target: the path of its C reproducer and the gcc line."""
    if not cfg.c_reproducers or PLUGINS.c_reproducer is None:
        return ""
    isolate.beat(3 * EXAMPLE_FACTOR * cfg.timeout + GRACE, "writing a C reproducer")  # it runs the example again, traced

    return PLUGINS.c_reproducer(exc, Path(cfg.repro_dir) if cfg.repro_dir else None)


def _vector(exc: BaseException, cfg: RunConfig) -> str:
    """For a failing example that fits a graph vector: the path it was saved to (conformance/vectors.py),
    when the run writes reproducer files."""
    if not (cfg.c_reproducers or cfg.repro_dir) or PLUGINS.vector is None:
        return ""
    return PLUGINS.vector(exc, cfg.repro_dir, cfg.seed)




def _run_and_collect(chk: Check, cfg: RunConfig, fork_each: bool = False, calls: float | None = None) -> CheckResult:
    """In the check's worker: its verdict, with what its examples blamed on errata and saw after
    undefined behaviour. `calls`: each API call's limit where it is not cfg.timeout (hangs.py)."""
    _preload(cfg)
    state = (RunState(example_timeout=cfg.timeout, fork_every_example=fork_each) if calls is None
             else ShortCalls(example_timeout=calls, fork_every_example=fork_each, limit=EXAMPLE_FACTOR * cfg.timeout))
    try:
        result = run_check_here(chk, cfg, state)
    finally:
        state.close()
    result.errata = dict(state.errata_seen)
    result.ub = dict(state.ub_seen)
    return result


def _preload(cfg: RunConfig) -> None:
    """In a check's worker: load the target once, so that the workers forked for its examples
    inherit it instead of loading it each (its loading ran fine in load_target's worker)."""
    if cfg.target == "reference":
        return
    try:
        target = make_target(cfg.target, cfg.profile)
    except Exception:  # noqa: BLE001 - the check's own examples report what goes wrong
        return
    close = getattr(target, "close", None)
    if close is not None:
        close()


def _in_worker(chk: Check, cfg: RunConfig, fork_each: bool, budget: float, calls: float) -> isolate.Forked:
    """The check in a forked worker, watched: no API call may take `calls` seconds (the
    worker's own watchdog on a forked example fires first), no example EXAMPLE_FACTOR times
    cfg.timeout."""
    short = calls if calls != cfg.timeout else None
    return isolate.run_forked(lambda: _run_and_collect(chk, cfg, fork_each, short),
                              timeout=EXAMPLE_FACTOR * cfg.timeout + GRACE, budget=max(budget, 1.0), reports=False,
                              call_timeout=1.25 * calls + min(calls, 1.0))


def _tail(text: str, lines: int = 12) -> str:
    """The last lines of a worker's stderr, or the head of the sanitizer report it holds."""
    return sanitizer.tail(text, lines)


def _ended(chk: Check, cfg: RunConfig, forked: isolate.Forked, seconds: float, calls: float) -> CheckResult:
    """The verdict of a check whose worker did not return: `timeout` or `crash`, with the API
    call it was in and its stderr (`calls`: the API calls' limit it ran with)."""
    done = re.match(r"example (\d+)", forked.beat)
    examples = int(done.group(1)) - 1 if done else 0
    if forked.status == "timeout":
        why = (f"the check's budget of {cfg.check_budget:g} s ran out" if forked.budget_spent
               else f"{forked.beat or 'the worker'} hung for {calls:g} s" if forked.call_stuck
               else f"{forked.beat or 'the worker'} did not finish within {EXAMPLE_FACTOR * cfg.timeout:g} s")
        where = forked.where() or "(in no API call: in the suite's own code)"
        return CheckResult(chk.name, chk.clauses, "timeout", examples, f"{why}, {where}\n{_tail(forked.stderr)}", seconds)
    during = f" during {forked.beat}" if forked.beat else ""
    how = sanitizer.ending(forked.stderr, ("was " if forked.status == "signal" else "") + forked.describe())
    frames = [ln.strip() for ln in forked.traceback.splitlines() if ln.strip().startswith("File ")][:6]
    python = "\nPython stack (innermost first):\n  " + "\n  ".join(frames) if frames else ""
    detail = (f"the target {how} while running {chk.name} [{', '.join(chk.clauses)}]{during}\n"
              f"{_tail(forked.stderr)}{python}")
    return CheckResult(chk.name, chk.clauses, "crash", examples, detail, seconds)


def _prepare(target: str) -> None:
    """In this process, before a check's worker forks: the target's build step (once a process:
    the adapters keep it), which runs none of the target's code. Each worker inherits it instead
    of doing it again: on rc.8 hashing the library and parsing our cdef, ~100 CPU-ms a worker for a
    caller that did not prepare the target itself (`ggspec check` does; tests calling run_check did
    not). A failure here is left to the worker, whose verdict says what went wrong."""
    if PLUGINS.prepare_target is not None:
        try:
            PLUGINS.prepare_target(target)
        except Exception:  # noqa: BLE001 - the check's worker meets it again and reports it
            pass


def run_check(chk: Check, cfg: RunConfig, call_timeout: float | None = None) -> CheckResult:
    """Run one check in a forked worker; a crash or a hang of the target is this check's verdict.

    No API call of the target may take `cfg.timeout` seconds (`call_timeout` where given: a
    target that has shown it hangs, hangs.py), no example EXAMPLE_FACTOR times cfg.timeout,
    and the check no more than
    `cfg.check_budget`; a hang is the verdict `timeout`, naming the API call it is in. After a
    crash the check runs again with every example forked, so the crash is shrunk to an example
    with a reproducer (and blamed on an erratum where one explains it)."""
    calls = cfg.timeout if call_timeout is None else call_timeout
    _prepare(cfg.target)
    with reach.watching() as reached:  # open before the worker forks: it survives the worker's crash
        result = _forked_verdict(chk, cfg, calls)
    result.reached_device = result.reached_device or reached()
    return result


def _forked_verdict(chk: Check, cfg: RunConfig, calls: float) -> CheckResult:
    """run_check's body: the check in a worker, and again with every example forked after a crash."""
    start = time.monotonic()
    forked = _in_worker(chk, cfg, False, cfg.check_budget, calls)
    if forked.status == "ok":
        result: CheckResult = forked.value
        return result
    if forked.status == "timeout":
        return _ended(chk, cfg, forked, time.monotonic() - start, calls)
    if forked.status == "exception" and isinstance(forked.value, MemoryError):  # ggspec's own memory
        raise out_of_memory(f"while running {chk.name}", forked.value)
    again = _in_worker(chk, cfg, True, cfg.check_budget - (time.monotonic() - start), calls)
    if again.status == "ok":
        result = again.value
        if result.status in ("pass", "fail"):  # it crashed in process: never a pass, never a mere fail
            first = _ended(chk, cfg, forked, 0.0, calls).detail
            result.detail = result.detail or f"{first}\n(with every example forked, no example crashed again)"
            result.status = "crash"
        result.seconds = time.monotonic() - start
        return result
    return _ended(chk, cfg, again if again.status == "timeout" else forked, time.monotonic() - start, calls)


def run_check_kept(chk: Check, cfg: RunConfig, hangs: HangWatch | None = None) -> CheckResult:
    """`run_check`, where an error of the harness itself (not the target's: those are verdicts
    already) becomes this check's verdict, `crash` with the traceback, instead of ending the
    run: the other checks' verdicts and the run's reports are kept. With `hangs` (the run's),
    a check that starts after the target has shown it hangs runs with the short limit on each
    API call, and a timeout then says so."""
    short = hangs.call_timeout() if hangs is not None else None
    try:
        res = run_check(chk, cfg) if short is None else run_check(chk, cfg, short)
        if short is not None and hangs is not None and res.status == "timeout":
            res.detail = f"{hangs.note()}\n{res.detail}"
        return res
    except HarnessFailed:  # no verdict of anyone's: the run stops
        raise
    except MemoryError as exc:
        raise out_of_memory(f"while running {chk.name}", exc) from None
    except Exception as exc:  # noqa: BLE001 - reported as the check's verdict, traceback included
        tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:]).rstrip()
        return CheckResult(chk.name, chk.clauses, "crash", 0,
                           f"the harness itself failed while running {chk.name} (not the target): "
                           f"{type(exc).__name__}: {exc}\n{tail}")


def _first_call(target: str, profile: Profile) -> list[str]:
    """Load the target and call it once; the Python modules (source files) that took (see
    `_import_here`)."""
    before = set(sys.modules)
    t = make_target(target, profile)
    try:
        t.buft_name(t.cpu_buffer_type())
    finally:
        close = getattr(t, "close", None)
        if close is not None:
            close()
    return sorted(m for m in set(sys.modules) - before if str(getattr(sys.modules[m], "__file__", "")).endswith(".py"))


def _import_here(modules: list[str]) -> None:
    """Import the Python modules that loading the target imports (its adapter's code; never the
    compiled target, which is no source file), so that every check's worker inherits them, and
    hypothesis' scan of them for constants, instead of importing and scanning them again."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - each worker imports what it needs anyway
            pass


def load_target(cfg: RunConfig) -> CheckResult | None:
    """Load the target and make its first call in a forked worker, within `cfg.timeout` (nothing
    of a target runs in the runner's own process). None when it loaded; else how it ended, as
    the result every check gets (status crash, timeout or fail), its detail's first line saying so
    (`load_error`)."""
    forked = isolate.run_forked(lambda: _first_call(cfg.target, cfg.profile), timeout=2 * cfg.timeout, reports=False,
                                call_timeout=cfg.timeout, full_args=True)
    if forked.status == "ok":
        _import_here(forked.value)
        return None
    if forked.status == "exception":
        status: Status = "fail"
        how = f"it raised {type(forked.value).__name__}: {forked.value}"
    elif forked.status == "timeout":
        status, how = "timeout", (f"it hung for {cfg.timeout:g} s {forked.where()}" if forked.call_stuck
                                  else f"it did not load within {2 * cfg.timeout:g} s {forked.where()}".strip())
    else:
        status, how = "crash", sanitizer.ending(forked.stderr, forked.describe())
    return CheckResult("(loading the target)", (), status, 0,
                       f"the target {cfg.target} could not be loaded: {how}\n{_tail(forked.stderr)}")


def load_error(failure: CheckResult) -> str:
    """How the target's loading ended, in one line (load_target's failure)."""
    return failure.detail.splitlines()[0]


def unloaded_results(failure: CheckResult, checks: Iterable[Check]) -> list[CheckResult]:
    """What every check gets when the target could not be loaded: the loading's verdict."""
    return [CheckResult(c.name, c.clauses, failure.status, 0, failure.detail) for c in checks]


def _raise_terminated(signum: int, frame: Any) -> None:
    raise _Terminated()


def warm_up(cfg: RunConfig, selected: Iterable[Check] = ()) -> None:
    """Do once, in this process, the set-up that every forked worker would otherwise repeat:
    hypothesis' scan of the loaded modules for constants, its PRNG registration, the validation
    of the `selected` checks' strategies, the lazy imports and caches of the reference (every
    @checked function's plan) and the harness. One small check runs on the reference (no code of
    the target under test runs here); its result is dropped."""
    import concurrent.futures  # noqa: F401 - _in_threads' pool: imported before the scan below

    from ggspec.reference.checked import compile_all

    for name in PLUGINS.preload:  # the adapters' Python code, not the targets
        importlib.import_module(name)

    chk = CHECKS.get("tdata.get_reads_the_range") or next(c for c in CHECKS.values() if c.strategies and not c.machine)
    run_check_here(chk, RunConfig("reference", cfg.profile, max_examples=3, seed=0, c_reproducers=False))
    compile_all()
    for c in selected:
        try:
            st.fixed_dictionaries(c.strategies).validate()
        except Exception:  # noqa: BLE001 - an invalid strategy is that check's failure, in its worker
            pass
    # hypothesis scans the loaded modules for constants lazily, at the first draw that wants
    # one: in every worker, unless it is done here (a private function: skipped if it goes)
    from hypothesis.internal.conjecture import providers

    scan = getattr(providers, "_get_local_constants", None)
    if callable(scan):
        scan()


def _in_threads(cfg: RunConfig, selected: list[Check], done: Callable[[CheckResult], None], hangs: HangWatch) -> None:
    """Run the checks `cfg.workers` at a time (HUNG_WIDEN times that once the target has shown
    it hangs): each thread waits on the worker of one check (the target runs only in the forked
    workers), so the verdicts are those of one process."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    gate = threading.Semaphore(cfg.workers)
    hangs.widen = lambda: gate.release(cfg.workers * (HUNG_WIDEN - 1))

    def one(chk: Check) -> CheckResult:
        with gate:
            return run_check_kept(chk, cfg, hangs)

    with ThreadPoolExecutor(max_workers=cfg.workers * HUNG_WIDEN, thread_name_prefix="ggspec-check") as pool:
        futures = [pool.submit(one, chk) for chk in selected]
        try:
            for fut in as_completed(futures):
                done(fut.result())
        except BaseException:  # an interrupt: kill the workers, start no more, then go on up
            isolate.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def run_all(
    cfg: RunConfig, names: Iterable[str] | None = None, progress: Callable[[str], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> list[CheckResult]:
    """Run the checks, each in its own worker, `cfg.workers` at a time, after warming this
    process up (warm_up); stream each result to `cfg.stream` as it finishes. The results come
    in the order of the selection. SIGINT or SIGTERM kills the running workers and raises
    RunInterrupted with the results so far and the signal. After the target has hung in a few
    checks, the rest run with a short limit on each API call (hangs.py): `note` gets
    the line that says so, the stream its `hung` event."""
    from .stream import Stream

    load_checks()
    selected = [CHECKS[n] for n in (names if names is not None else sorted(CHECKS))]
    order = {c.name: i for i, c in enumerate(selected)}
    results: list[CheckResult] = []
    stream = Stream(Path(cfg.stream), cfg, [c.name for c in selected]) if cfg.stream else None

    hangs = HangWatch(cfg.timeout)

    def done(res: CheckResult) -> None:
        results.append(res)
        if stream is not None:
            stream.result(res)
        if progress is not None:
            progress(progress_line(len(results), len(selected), res))
        if hangs.saw(res):
            if stream is not None:
                stream.hung(hangs.after, hangs.short)
            if note is not None:
                note(hangs.line(len(selected) - len(results)))

    main_thread = threading.current_thread() is threading.main_thread()
    old_term = signal.signal(signal.SIGTERM, _raise_terminated) if main_thread else None
    isolate.resume()
    try:  # (signal handlers can only be set from the main thread: elsewhere SIGTERM stays as it was)
        if len(selected) > 1:
            warm_up(cfg, selected)
        if cfg.workers > 1 and len(selected) > 1:
            _in_threads(cfg, selected, done, hangs)
        else:
            for chk in selected:
                done(run_check_kept(chk, cfg, hangs))
    except (KeyboardInterrupt, _Terminated) as exc:
        signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        if stream is not None:
            stream.end(results, signal.Signals(signum).name)
        raise RunInterrupted(signum, sorted(results, key=lambda r: order[r.check])) from None
    except (HarnessFailed, MemoryError) as exc:  # ggspec's own failure: the run stops, what finished kept
        failed = exc if isinstance(exc, HarnessFailed) else out_of_memory("in the run's own process", exc)
        if stream is not None:
            stream.end(results, "")
        raise HarnessFailed(str(failed), sorted(results, key=lambda r: order[r.check])) from None
    finally:
        isolate.resume()
        if main_thread:
            signal.signal(signal.SIGTERM, old_term if old_term is not None else signal.SIG_DFL)
    if stream is not None:
        stream.end(results, "")
    return sorted(results, key=lambda r: order[r.check])


def print_progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
