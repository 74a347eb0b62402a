"""ggspec's own limits, told apart from the target's (issue 32): a MemoryError in ggspec's own
code (the reference, hypothesis, the harness) is ggspec's failure, never a verdict on the target,
and an address-space limit (`ulimit -v`) below what a run needs is refused before anything runs.

A dev run of every check passes under 1 GiB of address space; at 512 MiB the reference's
scheduler checks run out of memory, and at 256 MiB a worker's own allocations fail too, which
read as the target's crashes (bench/RESULTS.md, "ggspec's own limits").
"""

from __future__ import annotations

from ..errors import HarnessFailed

#: the least address space (RLIMIT_AS) a run needs, in bytes
MIN_ADDRESS_SPACE = 1 << 30


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def address_space_limit() -> int | None:
    """This process's address-space limit in bytes (`ulimit -v`), None when unlimited."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, ValueError, OSError):
        return None
    return None if soft == resource.RLIM_INFINITY else int(soft)


def address_space_problem() -> str | None:
    """Why this process's address space is too small for a run, or None."""
    limit = address_space_limit()
    if limit is None or limit >= MIN_ADDRESS_SPACE:
        return None
    return (f"ggspec needs at least {_mib(MIN_ADDRESS_SPACE)} of address space and this process is limited to "
            f"{_mib(limit)} (ulimit -v {limit // 1024}): raise the limit; under it an allocation failure would be "
            "ggspec's own, not the target's")


def out_of_memory(where: str, exc: BaseException) -> HarnessFailed:
    """The harness failure for a MemoryError of ggspec's own code `where`."""
    limit = address_space_limit()
    under = f" under an address-space limit of {_mib(limit)} (ulimit -v)" if limit is not None else ""
    text = str(exc).strip() or type(exc).__name__
    return HarnessFailed(f"ggspec itself ran out of memory {where}{under} ({type(exc).__name__}: {text[:200]}): "
                         "not a verdict on the target")
