"""Version adapters (conformance/adapters/versions.py) and the sdist targets' table
(conformance/adapters/ggml_python.py): declarations read from C text, the decision taken for each
drifted function, the type enum translated by name, and one clear line when an sdist is not there.
Synthetic headers only: no download, no compiler."""

from __future__ import annotations

from pathlib import Path

import pytest
from ggspec.conformance.adapters import SDIST_TARGETS, TARGETS, default_profile
from ggspec.conformance.adapters.drift import (
    ADAPTED,
    HeaderReviser,
    TypeMap,
    enum_values,
    our_types,
    prototype,
    revise_declaration,
    spellings,
)
from ggspec.conformance.adapters.ggml_python import SDISTS, CannotFetch, ensure_sdist_target, sdist_of
from ggspec.reference.clauses import Profile

HEADER = """
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
    typedef struct ggml_backend * ggml_backend_t;
    enum ggml_status { GGML_STATUS_ALLOC_FAILED = -2, GGML_STATUS_FAILED = -1, GGML_STATUS_SUCCESS = 0 };
    GGML_API ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts,
                                                         int n_backends, size_t graph_size, bool parallel);
    GGML_API enum ggml_status ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph);
    GGML_API bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph);
    GGML_API ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft);  // the allocator rewrite
    GGML_API bool ggml_get_no_alloc(struct ggml_context * ctx);
    enum ggml_type {
        GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_Q4_0 = 2,
        // GGML_TYPE_Q4_2 = 4, removed
        GGML_TYPE_IQ3_XXS = 18,
        GGML_TYPE_I8,
        GGML_TYPE_COUNT,
    };
#ifdef __cplusplus
}
#endif
"""


def _headers() -> list[Path]:
    """rc.8's header and the oldest and newest built version's, where the cache has them."""
    from ggspec.conformance.adapters.external import cache_dir

    versions = sorted(cache_dir().glob("ggml-python-*/include/ggml-backend.h"))
    return sorted(cache_dir().glob("rc8*/**/ggml-backend.h"))[:1] + versions[:1] + versions[-1:]


def test_a_declaration_is_found_where_the_regex_tried_everywhere_finds_it() -> None:
    """drift._declaration starts its search at the boundary before the name's first use (a
    speed-up); it finds the match that `declaration_pattern(name).search` tried at every position
    finds, for every function of our cdef, a name that is only called, one in a struct, in the
    synthetic header and in the headers the cache holds."""
    import re

    from ggspec.conformance.adapters import drift
    from ggspec.native.build import read_cdef

    names = sorted(set(re.findall(r"\bggspec_(\w+)\s*\(", read_cdef())))
    texts = [HEADER, "struct s { int (*ggml_f)(int x); };\nvoid g(void) { ggml_f(1); }\nint ggml_f(int y);\n"]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in _headers()]
    compared = 0
    for text in texts:
        clean = drift._clean(text)
        for name in ["ggml_" + n for n in names] + ["ggml_f"]:
            got = drift._declaration(clean, name)
            if name not in clean:  # no match is possible: the fast path says so without searching
                assert got is None
                continue
            want = drift.declaration_pattern(name).search(clean)
            assert (got and (got.span(), got.groups())) == (want and (want.span(), want.groups())), name
            compared += 1
    assert compared > 20


def test_prototype_drops_parameter_names_and_expands_typedefs() -> None:
    defs = {"ggml_backend_t": ("struct", "ggml_backend", "*")}
    p = prototype(HEADER, "ggml_backend_graph_compute", defs)
    assert p is not None
    assert p.result == ("enum", "ggml_status")
    assert p.params == (("struct", "ggml_backend", "*"), ("struct", "ggml_cgraph", "*"))
    assert p.text == "enum ggml_status ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph);"
    assert prototype(HEADER, "ggml_no_such_function", defs) is None


def test_enum_values_follow_implicit_increments_and_skip_comments() -> None:
    types = enum_values(HEADER, "ggml_type")
    assert types == {"GGML_TYPE_F32": 0, "GGML_TYPE_F16": 1, "GGML_TYPE_Q4_0": 2, "GGML_TYPE_IQ3_XXS": 18,
                     "GGML_TYPE_I8": 19, "GGML_TYPE_COUNT": 20}
    assert enum_values(HEADER, "ggml_status")["GGML_STATUS_SUCCESS"] == 0


def test_type_map_translates_by_name_both_ways() -> None:
    ours = our_types()
    assert ours["I8"] == 18 and ours["I32"] == 20  # rc.8's numbering
    theirs = {k: v for k, v in ours.items() if k not in ("I8", "I16", "I32", "COUNT")}
    theirs.update(IQ3_XXS=18, I8=19, I16=20, I32=21, COUNT=22)
    tm = TypeMap(ours, theirs)
    assert not tm.identity
    assert tm.to_target(ours["I32"]) == 21 and tm.from_target(21) == ours["I32"]
    assert tm.to_target(ours["Q4_0"]) == theirs["Q4_0"]
    assert tm.from_target(18) == 1018  # IQ3_XXS: no rc.8 number, kept apart from every rc.8 type
    assert tm.to_target(99) == 99  # a bad type stays bad
    assert TypeMap(ours, dict(ours)).identity


def _reviser(tmp_path: Path) -> HeaderReviser:
    (tmp_path / "ggml.h").write_text(HEADER)
    for name in ("ggml-alloc.h", "ggml-backend.h", "ggml-backend-impl.h"):
        (tmp_path / name).write_text("")
    return HeaderReviser(tmp_path, "ggml_")


def test_each_drift_is_adapted_kept_or_dropped(tmp_path: Path) -> None:
    r = _reviser(tmp_path)
    ours_new = ("ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, "
                "ggml_backend_buffer_type_t * bufts, int n_backends, size_t graph_size);")
    assert revise_declaration(r, "ggml_backend_sched_new", ours_new) == prototype(HEADER, "ggml_backend_sched_new",
                                                                                 r.defs).text  # type: ignore[union-attr]
    compute = revise_declaration(r, "ggml_backend_graph_compute",
                                 "bool ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph);")
    assert compute is not None and compute.startswith("int ggml_backend_graph_compute(")
    void_reserve = "void ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * graph);"
    assert revise_declaration(r, "ggml_backend_sched_reserve", void_reserve) == void_reserve  # result ignored
    const_ctx = "bool ggml_get_no_alloc(const struct ggml_context * ctx);"
    assert revise_declaration(r, "ggml_get_no_alloc", const_ctx) == const_ctx  # const pointee: same call
    assert revise_declaration(r, "ggml_gallocr_new", "ggml_gallocr_t ggml_gallocr_new(void);") is None
    assert r.revision.adapted == ["backend_sched_new", "backend_graph_compute"]
    assert r.revision.changed == ["gallocr_new"]
    assert r.revision.protos["backend_sched_init_measure"].result == ("bool",)  # found under its new name


def test_renamed_functions_and_adapted_ones_are_named_once() -> None:
    assert spellings("backend_sched_init_measure") == ["ggml_backend_sched_reserve"]
    assert spellings("backend_sched_set_node_backend") == ["ggml_backend_sched_set_tensor_backend"]
    assert spellings("backend_tensor_set") == []
    assert set(ADAPTED) == {"backend_sched_new", "backend_graph_compute", "soft_max_ext", "backend_tensor_copy_async"}


def test_sdist_table_is_pinned_and_registered() -> None:
    assert list(SDISTS)[0] == "ggml-python-0.0.25" and "ggml-python-0.0.37" in SDISTS
    assert "ggml-python-0.0.38" not in SDISTS  # the device API: another generation
    for name, sd in SDISTS.items():
        assert len(sd.sha256) == 64 and int(sd.sha256, 16) >= 0, name
        assert name in TARGETS and name in SDIST_TARGETS
    assert default_profile("llama-cpp-python-0.2.30") is Profile.RC8
    assert default_profile("ggml-python-0.0.31") is Profile.FIXED
    with pytest.raises(ValueError, match="unknown sdist target"):
        sdist_of("ggml-python-0.0.99")


def test_missing_offline_copy_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GGSPEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GGSPEC_SDIST_DIR", str(tmp_path / "empty"))
    with pytest.raises(CannotFetch) as info:
        ensure_sdist_target("ggml-python-0.0.30")
    message = str(info.value)
    assert "\n" not in message and "ggml_python-0.0.30.tar.gz" in message and "is not a file" in message


def _compare_report() -> dict[str, object]:
    def col(label: str, target: str, profile: str) -> dict[str, object]:
        return {"label": label, "target": target, "profile": profile, "summary": {"pass": 1, "fail": 1},
                "seconds": 1.0, "target_description": {"kind": target}}

    return {
        "seed": 7, "examples": 3, "started": "2026-12-01T12:00:00+00:00", "seconds": 3.0,
        "columns": [col("rc8@rc8", "rc8", "rc8"), col("llama-cpp-python-0.2.30@rc8", "llama-cpp-python-0.2.30", "rc8"),
                    col("ggml-python-0.0.25@fixed", "ggml-python-0.0.25", "fixed"),
                    col("ggml-python-0.0.26@fixed", "ggml-python-0.0.26", "fixed")],
        "clauses": [
            {"id": "BUF-1", "title": "init", "statuses": {"rc8@rc8": "pass", "llama-cpp-python-0.2.30@rc8": "pass",
                                                          "ggml-python-0.0.25@fixed": "pass",
                                                          "ggml-python-0.0.26@fixed": "fail"},
             "details": {"ggml-python-0.0.26@fixed": "expected an abort | finished normally"}},
            {"id": "CORE-1", "title": "types", "statuses": {"rc8@rc8": "pass", "llama-cpp-python-0.2.30@rc8": "pass",
                                                            "ggml-python-0.0.25@fixed": "pass",
                                                            "ggml-python-0.0.26@fixed": "pass"}, "details": {}},
            {"id": "SCHED-27", "title": "eval", "statuses": {"rc8@rc8": "pass", "llama-cpp-python-0.2.30@rc8": "fail",
                                                             "ggml-python-0.0.25@fixed": "unsupported",
                                                             "ggml-python-0.0.26@fixed": "pass"},
             "details": {"llama-cpp-python-0.2.30@rc8": "differs", "ggml-python-0.0.25@fixed": "lacks it"}},
        ],
    }


def test_versions_page_names_the_first_differing_version() -> None:
    from ggspec.conformance.tools.versions import page

    text = page(_compare_report())  # type: ignore[arg-type]
    rows = [ln for ln in text.splitlines() if ln.startswith("| BUF-1 ") or ln.startswith("| SCHED-27 ")]
    assert rows[0].startswith("| BUF-1 | pass | 0.0.26: **FAIL** | pass | **FAIL** |")
    assert rows[1].startswith("| SCHED-27 | pass | 0.0.25: unsup |")
    assert "| CORE-1 " not in text  # the same everywhere: no row
    assert "first in **ggml-python-0.0.26**: expected an abort \\| finished normally" in text
    assert "## llama-cpp-python-0.2.30@rc8 against rc.8" in text and "**SCHED-27** (eval): rc.8 pass" in text
    assert "0.4.0-rc.9" in text and "out of scope" in text


def test_versions_command_is_one_line_on_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ggspec.conformance.tools.versions import main

    bad = tmp_path / "c.json"
    bad.write_text('{"columns": []}')
    assert main(["--json", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no rc8 column" in err


def test_versions_update_refuses_an_unknown_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ggspec.conformance.tools.versions import main

    out = tmp_path / "v.json"
    with pytest.raises(SystemExit) as exc:
        main(["--update", str(out), "--rerun", "ggml-python-9.9.9", "--no-run"])
    assert exc.value.code == 2
    assert "--rerun ggml-python-9.9.9: not a column of the version line" in capsys.readouterr().err
    assert not out.exists()


def test_struct_members_the_target_lacks_or_retypes_are_left_out(tmp_path: Path) -> None:
    from ggspec.conformance.adapters.drift import revise_struct

    (tmp_path / "ggml.h").write_text("""
        struct ggml_tensor { enum ggml_type type; int32_t flags; void * data; char name[64]; };
        struct ggml_backend_i { enum ggml_status (*GGML_CALL graph_compute)(ggml_backend_t backend, struct ggml_cgraph * g);
                                void (*GGML_CALL synchronize)(ggml_backend_t backend); };
    """)
    for name in ("ggml-alloc.h", "ggml-backend.h", "ggml-backend-impl.h"):
        (tmp_path / name).write_text("")
    r = HeaderReviser(tmp_path, "ggml_")
    ours = "struct ggml_tensor {\n    enum ggml_type type;\n    bool is_param;\n    void * data;\n    char name[64];\n};"
    out = revise_struct(r, ours)
    assert "is_param" not in out and "void * data;" in out and "char name[64];" in out and out.rstrip().endswith("...;\n};")
    iface = ("struct ggml_backend_i {\n    bool (*graph_compute)(ggml_backend_t backend, struct ggml_cgraph * cgraph);\n"
             "    void (*synchronize)(ggml_backend_t backend);\n};")
    out = revise_struct(r, iface)
    assert "graph_compute" not in out and "synchronize" in out
    assert r.revision.fields == ["ggml_tensor.is_param", "ggml_backend_i.graph_compute"]
    same = "struct ggml_tensor {\n    enum ggml_type type;\n    int32_t flags;\n    void * data;\n    char name[64];\n};"
    assert revise_struct(r, same) == same


def _check_report(status: str, seed: int = 20261130) -> dict[str, object]:
    return {"seed": seed, "examples": 3, "profile": "rc8", "seconds": 5.0,
            "checks": [{"name": "buf.init_without_get_base", "clauses": ["BUF-1"], "status": status, "examples": 3,
                        "seconds": 1.0, "detail": "" if status == "pass" else "expected an abort", "errata": {}}]}


def test_versions_update_assembles_the_compare_from_check_reports_and_keeps_its_columns(tmp_path: Path) -> None:
    import json

    from ggspec.conformance.tools.versions import page, update

    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "rc8.json").write_text(json.dumps(_check_report("pass")))
    (reports / "ggml-python-0.0.26@rc8.json").write_text(json.dumps(_check_report("fail")))
    out = tmp_path / "compare.json"
    cols = ("rc8", "ggml-python-0.0.26@rc8")
    data = update(out, reports, columns=cols)
    assert [c["label"] for c in data["columns"]] == ["rc8@rc8", "ggml-python-0.0.26@rc8"]
    row = next(r for r in data["clauses"] if r["id"] == "BUF-1")
    assert row["statuses"] == {"rc8@rc8": "pass", "ggml-python-0.0.26@rc8": "fail"}
    assert "| BUF-1 | pass | 0.0.26: **FAIL** |" in page(data)
    # the written report holds the columns: without the per-column reports they are kept, not run again
    for f in reports.iterdir():
        f.unlink()
    again = update(out, reports, columns=cols)
    assert next(r for r in again["clauses"] if r["id"] == "BUF-1")["statuses"] == row["statuses"]
    # --no-run: a column with no report anywhere is left out, not run
    fewer = update(out, reports, columns=(*cols, "ggml-python-0.0.27@rc8"), run=False)
    assert [c["label"] for c in fewer["columns"]] == ["rc8@rc8", "ggml-python-0.0.26@rc8"]


def test_the_version_table_as_a_chart() -> None:
    """docs/build.py draws the committed compare report as a chart: one bar a column, a segment a
    status with its count (in its tooltip), widths in proportion to the counts."""
    import json
    import re
    import xml.etree.ElementTree as ET

    from ggspec.conformance.tools.versions import CHART_STATUSES, chart_svg

    data = json.loads((Path(__file__).resolve().parents[2] / "docs" / "data" / "versions-compare.json")
                      .read_text(encoding="utf-8"))
    root = ET.fromstring(chart_svg(data))
    ns = "{http://www.w3.org/2000/svg}"
    seen: dict[str, dict[str, tuple[int, float]]] = {}
    for rect in root.iter(f"{ns}rect"):
        title = rect.find(f"{ns}title")
        if title is None:
            continue  # a legend swatch
        m = re.fullmatch(r"(.+): (\d+) (.+)", title.text or "")
        assert m is not None, title.text
        seen.setdefault(m.group(1), {})[m.group(3)] = (int(m.group(2)), float(rect.get("width", "0")))
    assert list(seen) == [c["label"] for c in data["columns"]]
    n_big, w_big = max((seg for segs in seen.values() for seg in segs.values()), key=lambda seg: seg[0])
    for segs in seen.values():  # one scale for every segment (widths are written to 0.1 px)
        assert all(abs(w - n * w_big / n_big) <= 0.1 for n, w in segs.values()), segs
    for c in data["columns"]:
        want = {s: c["summary"][s] for s in CHART_STATUSES if c["summary"].get(s)}
        assert {s: n for s, (n, _) in seen[c["label"]].items()} == want, c["label"]
    assert "<!-- picture: versions -->" in page_from_committed()


def page_from_committed() -> str:
    from ggspec.conformance.tools.versions import page_from

    return page_from(Path(__file__).resolve().parents[2] / "docs" / "data" / "versions-compare.json")


def test_a_virtual_devices_ops_reach_the_target_in_its_numbering(monkeypatch: pytest.MonkeyPatch) -> None:
    """The version adapter hands a virtual device its set of ops in the target's enum ggml_op
    numbering, the numbering of the nodes its supports_op entry is asked about (set_op); in rc.8's
    the device answered for other ops on 0.0.30 and later (BACK-7)."""
    from ggspec.conformance.adapters.drift import VersionedTarget
    from ggspec.conformance.adapters.external import ExternalTarget
    from ggspec.reference.types import Op
    from ggspec.reference.vdev import VDevParams

    ours = {o.name: int(o) for o in Op}
    theirs = {name: n + (1 if n >= int(Op.ARGSORT) else 0) for name, n in ours.items()}  # one op inserted before ARGSORT
    seen: list[VDevParams] = []
    monkeypatch.setattr(ExternalTarget, "vdev_init", lambda self, params: seen.append(params))
    target = object.__new__(VersionedTarget)
    target.ops = TypeMap(ours, theirs)
    target.vdev_init(VDevParams(ops=frozenset({Op.ARGSORT, Op.ADD})))
    assert seen[0].ops == {int(Op.ARGSORT) + 1, int(Op.ADD)}
    target.ops = TypeMap(ours, dict(ours))
    target.vdev_init(VDevParams(ops=frozenset({Op.ARGSORT})))
    assert seen[1].ops == {Op.ARGSORT}


def test_a_unary_nodes_unary_op_is_read_in_rc8s_numbering(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.0.37 put SIGMOID before GELU in enum ggml_unary_op: its GELU node says 8 where rc.8 says 7.
    The adapter gives the suite rc.8's number (the oracle recomputes GELU from it), and leaves
    the parameters of other ops alone."""
    from types import SimpleNamespace

    from ggspec.conformance.adapters.drift import VersionedTarget
    from ggspec.conformance.adapters.external import ExternalTarget

    ours = our_types("unary_op")
    theirs = {k: v + (v > ours["RELU"]) for k, v in ours.items()} | {"SIGMOID": ours["RELU"] + 1}
    ops = our_types("op")
    target = object.__new__(VersionedTarget)
    target.unary, target.ops = TypeMap(ours, theirs), TypeMap(ops, ops)
    monkeypatch.setattr(ExternalTarget, "tensor_op_params",
                        lambda self, t: theirs["GELU"].to_bytes(4, "little") + bytes(60))
    unary_node, scale_node = SimpleNamespace(op=ops["UNARY"]), SimpleNamespace(op=ops["SCALE"])
    assert int.from_bytes(target.tensor_op_params(unary_node)[:4], "little") == ours["GELU"] == 7
    assert int.from_bytes(target.tensor_op_params(scale_node)[:4], "little") == theirs["GELU"] == 8
