"""What native/'s wrapper promises for a host allocation that cannot succeed (issue 21): a typed
error before the call, never rc.8's abort. A context's pool raises ValueError, a CPU buffer the
SpecViolation of CPU-5, whenever the C code would ask malloc for more than `host_alloc_limit()`:
the reference's host limit (2**40), or this machine's memory (or address-space limit) where
less. A size at the limit still reaches the C code.

The sizes of the issue (`tensor.init(2**40)`, `buft_alloc_buffer(cpu, 2**36)`) run in a forked
child, so an abort fails the test instead of ending pytest; the boundary is tested in this
process under a small limit, where nothing refused reaches C.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from forked import run_forked
from ggspec.native import _lib, backend, buffer, cpu, registry, tensor
from ggspec.reference.clauses import SpecViolation


def _mem_total() -> int | None:
    """MemTotal of /proc/meminfo in bytes (None off Linux): the machine's memory, read apart
    from the wrapper's own sysconf."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def test_the_limit_is_the_reference_s_or_the_machine_s() -> None:
    limit = _lib.host_alloc_limit()
    assert 0 < limit <= _lib.HOST_LIMIT == 2**40
    total = _mem_total()
    if total is not None:
        assert limit <= total


def _refused(call: Callable[[], object], error: type[Exception], clause: str | None) -> None:
    """`call()`, in a forked child, must raise `error` (with `clause`), not return or abort."""

    def child() -> None:
        try:
            call()
        except error as e:
            if clause is None or getattr(e, "clause_id", None) == clause:
                os.write(2, f"refused: {e}\n".encode())
                return
            raise
        raise AssertionError("the allocation reached the C code and succeeded")

    status, err = run_forked(child)
    assert status == 0 and "refused: " in err, f"status {status}\n{err}"


def _cpu_index() -> int:
    return registry.reg_find_by_name("CPU")


@pytest.mark.parametrize("size", [2**40, 2**40 - 15, 2**40 + 1, 2**36])
def test_a_pool_that_cannot_be_allocated_is_a_value_error(size: int) -> None:
    if size <= _lib.host_alloc_limit():
        pytest.skip(f"this machine can allocate {size} bytes")
    _refused(lambda: tensor.init(size), ValueError, None)


@pytest.mark.parametrize("size", [2**40 - 64, 2**40, 2**36])
@pytest.mark.parametrize("how", ["buft_alloc_buffer", "backend_alloc_buffer", "reg_alloc_buffer"])
def test_a_cpu_buffer_that_cannot_be_allocated_is_cpu_5(how: str, size: int) -> None:
    if size + buffer.CPU_PAD <= _lib.host_alloc_limit():
        pytest.skip(f"this machine can allocate {size} + 64 bytes")
    calls: dict[str, Callable[[], object]] = {
        "buft_alloc_buffer": lambda: buffer.buft_alloc_buffer(cpu.cpu_buffer_type(), size),
        "backend_alloc_buffer": lambda: backend.backend_alloc_buffer(cpu.cpu_init(), size),
        "reg_alloc_buffer": lambda: registry.reg_alloc_buffer(_cpu_index(), size),
    }
    _refused(calls[how], SpecViolation, "CPU-5")


def test_the_limit_itself_reaches_the_c_code(monkeypatch: pytest.MonkeyPatch) -> None:
    small = 1 << 20
    monkeypatch.setattr(buffer, "host_alloc_limit", lambda: small)
    monkeypatch.setattr(tensor, "host_alloc_limit", lambda: small)

    ctx = tensor.init(small)  # padded to 16: exactly the limit
    tensor.free(ctx)
    with pytest.raises(ValueError, match="more than the host can allocate"):
        tensor.init(small + 1)  # padded: 16 bytes over

    buft = cpu.cpu_buffer_type()
    buf = buffer.buft_alloc_buffer(buft, small - buffer.CPU_PAD)  # malloc'd: size + 64, the limit
    assert buf is not None and buffer.buffer_get_size(buf) >= small - buffer.CPU_PAD
    buffer.buffer_free(buf)
    with pytest.raises(SpecViolation) as err:
        buffer.buft_alloc_buffer(buft, small - buffer.CPU_PAD + 1)
    assert err.value.clause_id == "CPU-5"
