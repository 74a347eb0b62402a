"""native.build's object cache (`build_variant(..., cache_dir=)`, $GGSPEC_BUILD_CACHE): a variant
that differs from a cached one in a define recompiles only the files the define reaches (and the
cffi module file, which names the module), a variant built again compiles nothing, and what comes
out is the variant asked for. Each build here is -O0 (quick), in a cache of the test's own."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import cffi
import pytest
from ggspec.native.build import SOURCES, build_variant

FLAGS = ["-O0"]


def _objects(cache: Path) -> set[str]:
    return {p.name for p in (cache / "objects").glob("*.o")}


def _load(so: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, so)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(bool(os.environ.get("GGSPEC_NATIVE_MODULE")), reason="builds its own variants")
def test_a_define_recompiles_only_the_files_it_reaches(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    so_a = build_variant("ggspec_cache_a", str(tmp_path / "a"), defines=["GGSPEC_DEFECT_SCHED_PASS2"],
                         extra_cflags=FLAGS, cache_dir=str(cache))
    first = _objects(cache)
    assert len(first) == len(SOURCES) + 1  # every C file and the module's own

    # another define, another module name: sched.c (where the define is read) and the module file
    so_b = build_variant("ggspec_cache_b", str(tmp_path / "b"), defines=["GGSPEC_DEFECT_SCHED_DEDUP"],
                         extra_cflags=FLAGS, cache_dir=str(cache))
    assert len(_objects(cache) - first) == 2
    assert Path(so_a).read_bytes() != Path(so_b).read_bytes()

    # the first again, elsewhere: nothing new is compiled, and it is a working module
    again = build_variant("ggspec_cache_a", str(tmp_path / "a2"), defines=["GGSPEC_DEFECT_SCHED_PASS2"],
                          extra_cflags=FLAGS, cache_dir=str(cache))
    assert len(_objects(cache)) == len(first) + 2
    mod = _load(again, "ggspec_cache_a")
    params = mod.ffi.new("struct ggspec_init_params *", {"mem_size": 1 << 16, "no_alloc": True})
    ctx = mod.lib.ggspec_init(params[0])
    assert mod.lib.ggspec_new_tensor_1d(ctx, mod.lib.GGSPEC_TYPE_F32, 4).ne[0] == 4
    mod.lib.ggspec_free(ctx)
    assert (tmp_path / "a2" / "ggspec_cache_a.build.json").is_file()


def test_a_compile_error_is_reported_as_ffi_compile_reports_it(tmp_path: Path) -> None:
    with pytest.raises(cffi.VerificationError, match="CompileError"):
        build_variant("ggspec_cache_broken", str(tmp_path / "v"), extra_cflags=["-O0", "-include", "no-such-header.h"],
                      cache_dir=str(tmp_path / "cache"))
