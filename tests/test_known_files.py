"""Known-failures files with shared reasons (`[reasons]`, conformance/known/_reasons.toml) and
their generator (tools/known_files.py): the keys load as the text they stand for, the shipped
files are in the generator's form, and the generator's rewrite keeps what a file means."""

from __future__ import annotations

from pathlib import Path

import pytest
from ggspec.conformance.engine.runner import load_checks
from ggspec.conformance.errors import KnownFileError
from ggspec.conformance.reports import known
from ggspec.conformance.tools import known_files

ALIGN = "ggml-python 0.0.28: the CPU buffer type's TENSOR_ALIGNMENT is 32, not 64"


def test_the_shipped_files_are_in_the_generators_form() -> None:
    assert known_files.main(["--check"]) == 0


def test_a_key_loads_as_its_text_and_an_inline_reason_as_itself(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f'[reasons]\nalign = "{ALIGN}"\n\n[[known]]\nclause = "BACK-5"\nreason = "align"\n\n'
                    '[[known]]\nclause = "BACK-6"\nreason = "a reason of its own"\n', encoding="utf-8")
    got = known.load(path, load_checks())
    assert [(k.name, k.reason) for k in got] == [("BACK-5", ALIGN), ("BACK-6", "a reason of its own")]


@pytest.mark.parametrize("text, error", [
    ('[[known]]\nclause = "BACK-5"\nreason = "no-such-key"\n', "no reason named 'no-such-key'"),
    ('[reasons]\nalign = "x y"\n\n[[known]]\nclause = "BACK-5"\nreason = "some text"\n', "[reasons] no entry gives: align"),
    ('[reasons]\nAlign = "x y"\n\n[[known]]\nclause = "BACK-5"\nreason = "Align"\n', "[reasons] must map keys"),
])
def test_a_wrong_reason_table_is_one_clear_error(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(KnownFileError, match=error.replace("[", r"\[").replace("(", r"\(")):
        known.load(path, load_checks())


def test_the_rewrite_keeps_what_each_file_means(tmp_path: Path) -> None:
    """Two files giving one reason three times: the reason goes to _reasons.toml under a key,
    and every entry loads as before; the shipped files likewise."""
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(f'# file a\n\n[[known]]\nclause = "BACK-5"\nreason = "{ALIGN}"\ntargets = ["t-a"]\n\n'
                 f'[[known]]\narea = "SCHED"\nreason = "once only"\n', encoding="utf-8")
    b.write_text(f'[[known]]\nclause = "BACK-6"\nreason = "{ALIGN}"\n\n[[known]]\ncheck = "buf.clear_sets_every_byte"\n'
                 f'reason = "{ALIGN}"\n', encoding="utf-8")
    checks = load_checks()
    before = {p.name: known.load(p, checks) for p in (a, b)}
    for path, text in known_files.rewrite(tmp_path).items():
        path.write_text(text, encoding="utf-8")
    assert {p.name: known.load(p, checks) for p in (a, b)} == before
    assert a.read_text(encoding="utf-8").startswith("# file a\n") and ALIGN not in a.read_text(encoding="utf-8")
    assert ALIGN in (tmp_path / known.REASONS_FILE).read_text(encoding="utf-8") and "once only" in a.read_text(encoding="utf-8")
    shipped = {p: known.load(p, checks) for p in sorted(known.KNOWN_DIR.glob("ggml-python-*.toml"))}
    for path, text in known_files.rewrite(known.KNOWN_DIR).items():
        assert path.read_text(encoding="utf-8") == text  # the shipped files: rewritten already, so unchanged
    assert sum(map(len, shipped.values())) > 1000


def test_missing_lists_the_failing_clauses_no_entry_explains() -> None:
    report = {"clauses": [{"id": "BACK-5", "status": "fail", "detail": "alignment 32", "checks": []},
                          {"id": "CPU-8", "status": "fail", "detail": "memory after set differs", "checks": []},
                          {"id": "TDATA-1", "status": "pass", "detail": "", "checks": []}]}
    entries = [known.Known("clause", "BACK-5", "explained", ("t",))]
    stubs = known_files.missing(report, entries, "t")
    assert 'clause = "CPU-8"' in stubs and "BACK-5" not in stubs and "TDATA-1" not in stubs
