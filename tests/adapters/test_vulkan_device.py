"""`--device vulkan` (conformance/adapters/vulkan_device.py): a device the target ships, upstream's
Vulkan backend of the llama-cpp-python sdists, and the reference's shape of it.

The shape tests run everywhere (the reference only). The last test builds llama-cpp-python 0.2.38
with its Vulkan backend and runs one check on the real device; it skips where the sdist cannot
be fetched, Vulkan's headers are missing or no Vulkan device is found (lavapipe: Debian's
mesa-vulkan-drivers), and fails on anything else.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from ggspec.conformance.adapters import make_target
from ggspec.conformance.adapters import vulkan_device as vd
from ggspec.conformance.adapters.ggml_python import SDISTS, CannotFetch, vulkan_buildable
from ggspec.conformance.errors import MissingSymbol
from ggspec.conformance.target import DEVICE_ENV
from ggspec.reference.clauses import Profile
from ggspec.reference.types import GGMLType
from ggspec.reference.vdev import VDevParams

F32, F16, I32, Q4_0 = (int(t) for t in (GGMLType.F32, GGMLType.F16, GGMLType.I32, GGMLType.Q4_0))


def test_every_vulkan_sdist_has_a_shape_and_only_those() -> None:
    with_vulkan = {name for name, sd in SDISTS.items() if sd.vulkan}
    assert with_vulkan == set(vd.VULKAN.shapes) and len(with_vulkan) >= 3
    assert vd.shipped_by("llama-cpp-python-0.2.38") == ["vulkan"] and vd.shipped_by("ggml-python-0.0.30") == []
    assert not SDISTS["llama-cpp-python-0.2.30"].vulkan  # llama.cpp of 2024-01-18: before the Vulkan backend


def test_a_target_without_the_device_gets_one_line() -> None:
    line = vd.unavailable("vulkan", "native")
    assert line is not None and "does not ship a vulkan device" in line and "\n" not in line
    assert vd.unavailable("vulkan", "llama-cpp-python-0.2.56") is None
    assert vd.unavailable("webgpu", "native") is None  # a device we build: not this table's


def _reference(monkeypatch: pytest.MonkeyPatch, of: str | None) -> object:
    monkeypatch.setenv(DEVICE_ENV, "vulkan")
    if of is None:
        monkeypatch.delenv(vd.DEVICE_OF_ENV, raising=False)
    else:
        monkeypatch.setenv(vd.DEVICE_OF_ENV, of)
    return make_target("reference", Profile.FIXED)


def test_the_reference_without_a_vulkan_target_is_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    t: object = _reference(monkeypatch, "ggml-python-0.0.30")
    with pytest.raises(MissingSymbol, match="does not ship one"):
        t.vdev_init(VDevParams())  # type: ignore[attr-defined]
    t = _reference(monkeypatch, None)
    with pytest.raises(MissingSymbol, match="GGSPEC_DEVICE_OF"):
        t.vdev_init(VDevParams())  # type: ignore[attr-defined]


def _node(t: object, kind: str, a_type: int, b_type: int | None = None, ne: tuple[int, ...] = (32, 2)) -> object:
    a = t.new_tensor(a_type, ne, "a")  # type: ignore[attr-defined]
    srcs = [a] if b_type is None else [a, t.new_tensor(b_type, ne, "b")]  # type: ignore[attr-defined]
    return t.op(kind, srcs, [])  # type: ignore[attr-defined]


@pytest.mark.parametrize(("version", "name"), [("0.2.38", "Vulkan"), ("0.2.56", "Vulkan0"), ("0.2.78", "Vulkan0")])
def test_the_reference_is_shaped_like_each_versions_device(monkeypatch: pytest.MonkeyPatch, version: str,
                                                          name: str) -> None:
    t: object = _reference(monkeypatch, f"llama-cpp-python-{version}")
    dev = t.vdev_init(VDevParams())  # type: ignore[attr-defined]
    assert t.backend_name(dev) == name  # type: ignore[attr-defined]
    # the device's own alignment where its build is here and a driver answers, else lavapipe's
    want = vd.device_alignment(f"llama-cpp-python-{version}") or vd.VULKAN_ALIGNMENT
    assert t.backend_get_alignment(dev) == want  # type: ignore[attr-defined]
    second = t.vdev_init(VDevParams(name="B"))  # type: ignore[attr-defined]
    assert t.backend_name(second) == "B"  # only the first plain device is the shipped one
    supports = t.backend_supports_op  # type: ignore[attr-defined]
    # upstream's supports_op, version by version (ggml-vulkan.cpp): DUP from 0.2.56 (a case that
    # falls through), GET_ROWS from 0.2.78 (of float and Q4_0/Q8_0 tables), CPY F32->F16 always
    assert supports(dev, _node(t, "dup", F32)) is (version != "0.2.38")
    assert supports(dev, _node(t, "cpy", F32, F16)) is True
    assert supports(dev, _node(t, "cpy", F16, F32)) is False
    rows = t.op("get_rows", [t.new_tensor(F32, (32, 4), "tbl"), t.new_tensor(I32, (2,), "idx")], [])  # type: ignore[attr-defined]
    assert supports(dev, rows) is (version == "0.2.78")
    assert supports(dev, _node(t, "add", F16, F32)) is True


def test_supports_op_transcriptions_differ_where_upstream_did() -> None:
    assert vd.VULKAN.shapes["llama-cpp-python-0.2.38"].kernels is vd.supports_op_0_2_38
    assert vd.VULKAN.shapes["llama-cpp-python-0.2.78"].kernels is vd.supports_op_0_2_78
    assert all(s.alignment == vd.VULKAN_ALIGNMENT and not s.async_entries and not s.cpy_tensor_async
               for s in vd.VULKAN.shapes.values())


@pytest.mark.parametrize("probed", [64, None])
def test_the_reference_takes_the_alignment_the_device_reports(monkeypatch: pytest.MonkeyPatch,
                                                             probed: int | None) -> None:
    """The reference's device is run at whatever alignment the build's device reports here (a
    driver other than lavapipe's may say 64 or 256), lavapipe's 16 where it cannot be asked."""
    monkeypatch.setitem(vd.SHIPPED, "vulkan", replace(vd.VULKAN, alignment=lambda name: probed))
    t: object = _reference(monkeypatch, "llama-cpp-python-0.2.56")
    dev = t.vdev_init(VDevParams())  # type: ignore[attr-defined]
    assert t.backend_get_alignment(dev) == (probed or vd.VULKAN_ALIGNMENT)  # type: ignore[attr-defined]
    assert vd.shape_of("vulkan", "llama-cpp-python-0.2.56").alignment == (probed or 16)  # type: ignore[union-attr]


def test_no_alignment_is_probed_without_a_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path))  # nothing is built there
    assert vd.device_alignment("llama-cpp-python-0.2.38") is None
    assert vd.device_alignment("native") is None
    assert not (tmp_path / vd.ALIGNMENT_FILE).exists()


def _vulkaninfo_alignment() -> int | None:
    exe = shutil.which("vulkaninfo")
    if exe is None:
        return None
    out = subprocess.run([exe], capture_output=True, text=True, timeout=120, check=False).stdout
    m = re.search(r"minStorageBufferOffsetAlignment\s*=\s*(0x[0-9a-fA-F]+|\d+)", out)
    return int(m.group(1), 0) if m else None


def _built_for_the_device(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Select the Vulkan device and build sdist `name` with its Vulkan backend; skip where the
    backend cannot be built, there is no Vulkan device or the sdist cannot be fetched."""
    if vulkan_buildable() is not None:
        pytest.skip(f"the Vulkan backend cannot be built here: {vulkan_buildable()}")
    if vd.vulkan_probe() is not None:
        pytest.skip(f"no Vulkan device here: {vd.vulkan_probe()}")
    monkeypatch.setenv(DEVICE_ENV, "vulkan")
    try:
        from ggspec.conformance.adapters import prepare_target

        prepare_target(name)
    except CannotFetch as exc:
        pytest.skip(f"{name} cannot be fetched here: {exc}")


def test_the_probe_asks_the_built_device(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The probe starts the build's own device in a child process and asks its buffer type:
    ggml-vulkan.cpp answers the driver's minStorageBufferOffsetAlignment, which vulkaninfo
    reports independently (where it is installed); the answer is kept in the cache file."""
    name = "llama-cpp-python-0.2.38"
    _built_for_the_device(monkeypatch, name)
    cache = tmp_path / "alignment.json"
    monkeypatch.setattr(vd, "alignment_cache", lambda: cache)
    monkeypatch.setattr(vd, "_ALIGNMENTS", {})
    got = vd.device_alignment(name)
    assert got is not None and got > 0 and got & (got - 1) == 0, got
    info = _vulkaninfo_alignment()
    if info is not None:
        assert got == info
    assert list(json.loads(cache.read_text(encoding="utf-8")).values()) == [got]


def test_the_ci_selection_names_checks_that_exist() -> None:
    """.ci/run's Vulkan step selects bench/vulkan_ci_checks.txt: every line a check of the suite
    (a renamed check would leave CI's selection short without this)."""
    from benchscripts import load_bench
    from ggspec.conformance.engine.runner import load_checks

    names = load_bench("vulkan_ci_select.py").read_list()
    checks = load_checks()
    assert len(names) >= 20 and [n for n in names if n not in checks] == []


def test_the_real_device_on_lavapipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """llama-cpp-python 0.2.38 built with its Vulkan backend: a plain device is upstream's Vulkan
    backend on the machine's driver. Its buffer `clear(0xA5)` fills words of 0x000000A5
    (ggml_vk_buffer_memset hands the byte to vkCmdFillBuffer, which repeats a 32-bit word), so
    tdata.set_writes_the_range, which clears the buffer before writing a tensor, sees
    `a5 00 00 00` past the written range where the reference has `a5 a5 a5 a5` (BUF-9, pinned
    in the known-failures file): the device really ran the example."""
    from ggspec.conformance.engine.results import RunConfig
    from ggspec.conformance.engine.runner import load_checks, run_check

    name = "llama-cpp-python-0.2.38"
    _built_for_the_device(monkeypatch, name)
    checks = load_checks()
    cfg = RunConfig(name, Profile.FIXED, max_examples=3, seed=1, c_reproducers=False)
    res = run_check(checks["tdata.set_writes_the_range"], cfg)
    assert res.status == "fail" and "target    a5 00 00 00 a5 00 00 00" in res.detail, res.detail
