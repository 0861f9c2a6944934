"""`dac` and `maplerepair` in `bench bird-critic` and `bench compare` (three SQLite dev tasks).

Scripted LLM with replies that fit any task (nothing from the benchmark is
stored): the point is that both methods run through the harness, stay within
their LLM-call bounds, and appear as columns of the paper-shaped tables.
"""

from __future__ import annotations

import json

from acts_sql.bench.compare import compare, load_run, render_comparison
from acts_sql.bench.runner import BenchRequest, MethodSpec, run_bench
from acts_sql.bench.selection import TaskFilter
from acts_sql.engine.options import CorrectionOptions, Method
from support import scripted

IDS = ["SQLite_4", "SQLite_7", "SQLite_20"]
ANY_SQL = "```sql\nSELECT 1\n```"


def _run(root, out, method: Method, script):
    backend = scripted(script)
    request = BenchRequest(
        tasks=root / "tasks" / "sqlite500.jsonl",
        gt=root / "dev",
        out=out,
        method=MethodSpec(llm="scripted", options=CorrectionOptions(method=method)),
        filter=TaskFilter(ids=IDS),
    )
    return run_bench(request, backend=backend), backend


def _records(out):
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_dac_and_maplerepair_run_in_the_harness_and_in_the_comparison(bird_critic_dir, tmp_path):
    root = bird_critic_dir
    _run(root, tmp_path / "raw", Method.RAW, {"correct": [ANY_SQL] * 3})
    dac, dac_llm = _run(
        root,
        tmp_path / "dac",
        Method.DAC,
        {
            "link_entities": [{"links": []}] * 3,
            "sketch": [ANY_SQL] * 3,
            "correct": [ANY_SQL] * 6,
        },
    )
    maple, _ = _run(root, tmp_path / "maplerepair", Method.MAPLEREPAIR, {"correct": [ANY_SQL] * 6})

    for report, name in ((dac, "dac"), (maple, "maplerepair")):
        assert report.method == name and report.overall.tasks == 3
    dac_records = _records(tmp_path / "dac")
    assert all(1 <= r["llm_calls"] <= 4 for r in dac_records)
    purposes = [r.purpose for r in dac_llm.requests]
    assert purposes.count("link_entities") == 3 and purposes.count("sketch") == 3
    maple_records = _records(tmp_path / "maplerepair")
    assert all(r["llm_calls"] <= 2 for r in maple_records)
    assert all((tmp_path / "maplerepair" / r["trace_file"]).exists() for r in maple_records)

    runs = [load_run(tmp_path / name) for name in ("raw", "dac", "maplerepair")]
    comparison = compare(runs, baseline="raw", names=["raw", "dac", "maplerepair"])
    assert [row.method for row in comparison.rows] == ["raw", "dac", "maplerepair"]
    text = render_comparison(comparison)
    cost = text.split("### Table 3")[1].split("###")[0]
    assert "| dac |" in cost and "| maplerepair |" in cost
