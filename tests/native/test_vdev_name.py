"""A virtual device's name (issue 32): at most 63 bytes in UTF-8 (reference/vdev.py MAX_NAME, the
longest name the entry log is formatted for); a longer one is refused at init with the same
ValueError in native/ and the reference, and native/src/vdev.c itself returns NULL with one line
instead of aborting at the first logged call."""

from __future__ import annotations

import pytest
from ggspec.native import backend as nb
from ggspec.native import vdev as nv
from ggspec.native._lib import ffi, lib
from ggspec.reference import backend as rb
from ggspec.reference import vdev as rv
from ggspec.reference.clauses import Profile
from ggspec.reference.world import World

from .forked import run_forked


@pytest.mark.parametrize("name", ["d" * 63, "é" * 31 + "x"])  # 63 bytes: ASCII, two-byte text
def test_a_name_at_the_limit_is_kept_and_logged(name: str) -> None:
    assert len(name.encode()) == rv.MAX_NAME
    native = nv.vdev_init(rv.VDevParams(name=name))
    assert nb.backend_name(native) == name
    reference = rv.vdev_init(World(Profile.FIXED), rv.VDevParams(name=name))
    assert rb.backend_name(reference) == name


@pytest.mark.parametrize("name", ["d" * 64, "é" * 32, "x" * 500])
def test_a_longer_name_is_refused_the_same_way(name: str) -> None:
    with pytest.raises(ValueError, match="at most 63 bytes") as native:
        nv.vdev_init(rv.VDevParams(name=name))
    with pytest.raises(ValueError, match="at most 63 bytes") as reference:
        rv.vdev_init(World(Profile.FIXED), rv.VDevParams(name=name))
    assert str(native.value) == str(reference.value)


def test_the_c_init_returns_null_for_a_long_name() -> None:
    """Below the wrapper: ggspec_vdev_init refuses (NULL, one line on stderr), no abort; then a
    device of a 63-byte name logs its entries."""
    def init() -> None:
        name = ffi.new("char[]", b"x" * 500)  # kept alive: the struct holds only its address
        p = ffi.new("struct ggspec_vdev_params *", {"name": name, "alignment": 32})
        if lib.ggspec_vdev_init(p) != ffi.NULL:
            raise SystemExit(3)
        backend = nv.vdev_init(rv.VDevParams(name="y" * 63))
        nb.backend_synchronize(backend)
        nb.backend_free(backend)

    status, err = run_forked(init)
    assert status == 0, err
    assert "a device name of 500 bytes (at most 63): no device" in err
