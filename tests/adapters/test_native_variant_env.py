"""A variant target (`native:DIR:MODULE`) made in a process leaves the process's plain `native`
target alone: the variant was once put in GGSPEC_NATIVE_MODULE, where it outlived the target, and
every later `native` target of a pytest worker loaded that (defective) build, which segfaulted in
tests/checks/test_sched_machine_pinned.py in two full runs."""

from __future__ import annotations

import os

from ggspec.conformance.adapters import make_target
from ggspec.native import load_lib


def test_a_variant_target_does_not_become_the_plain_native_target(fault_target: str) -> None:
    before = os.environ.get("GGSPEC_NATIVE_MODULE")
    variant = make_target(fault_target)
    plain = make_target("native")
    try:
        assert os.environ.get("GGSPEC_NATIVE_MODULE") == before
        assert variant.lib is not plain.lib  # type: ignore[attr-defined]
        assert plain.lib is load_lib()[1]  # type: ignore[attr-defined]
    finally:
        for t in (variant, plain):
            close = getattr(t, "close", None)
            if close is not None:
                close()
