"""scripts/rule_mutants.py on the committed synthetic sample (the real corpus is made from the
development split at run time and never stored)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import load_script

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "fixtures" / "mutants" / "sample.jsonl"


def _script():
    return load_script("rule_mutants")


def _corpus(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]


def test_the_rules_alone_repair_the_mechanical_mutants_of_the_sample(tmp_path):
    script = _script()
    out = tmp_path / "mutants"
    assert (
        script.main(
            ["--out", str(out), "--sample", str(SAMPLE), "--dialects", "sqlite", "--no-sqlfluff"]
        )
        == 0
    )
    corpus = _corpus(out)
    kinds = {r["kind"] for r in corpus}
    assert kinds == {*script.MUTATORS, "wrong_quoting"}
    breaking = [r for r in corpus if r["breaks"]]
    assert len(breaking) >= 20
    for record in breaking:
        assert record["rules"]["llm_calls"] == 0
        assert record["rules"]["verdict"] != "other rows", record  # never a wrong "repair"
    for kind in ("misspelled_column", "misspelled_table", "equals_null", "wrong_quoting"):
        verdicts = [r["rules"]["verdict"] for r in breaking if r["kind"] == kind]
        assert verdicts and set(verdicts) == {"repaired"}, (kind, verdicts)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["gold_changed_by_rules"] == 0  # correct SQL left alone
    assert summary["mutants_breaking"] == len(breaking)
    assert "| misspelled_column | sqlite |" in (out / "summary.md").read_text()


def test_sqlfluff_fix_is_measured_on_the_same_mutants(tmp_path):
    pytest.importorskip("sqlfluff")
    script = _script()
    out = tmp_path / "mutants"
    assert (
        script.main(
            ["--out", str(out), "--sample", str(SAMPLE), "--dialects", "sqlite", "--limit", "1"]
        )
        == 0
    )
    breaking = [r for r in _corpus(out) if r["breaks"]]
    assert breaking and all("sqlfluff" in r for r in breaking)
    # sqlfluff's CV05 rewrites "= NULL" as "IS NULL": the one mutation both repair
    null = [r for r in breaking if r["kind"] == "equals_null"]
    assert null and all(r["sqlfluff"]["verdict"] == "repaired" for r in null)
    spelled = [r for r in breaking if r["kind"] == "misspelled_column"]
    assert spelled and all(r["sqlfluff"]["verdict"] != "repaired" for r in spelled)
