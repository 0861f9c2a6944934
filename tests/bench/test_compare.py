"""`acts-sql bench compare`: methods side by side on their common tasks."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from acts_sql.bench.runner import BenchRecord
from acts_sql.cli.app import app


def write_run(directory, method, statuses, calls, machines=None):
    directory.mkdir(parents=True)
    lines = []
    for index, (status, n) in enumerate(zip(statuses, calls, strict=True)):
        record = BenchRecord(
            instance_id=f"T_{index}",
            set="s",
            dialect="SQLite" if index % 2 else "PostgreSQL",
            category="Query",
            method=method,
            llm="scripted",
            ran=status != "not_evaluable",
            status=status,
            llm_calls=n,
            prompt_tokens=100 * n,
            completion_tokens=10 * n,
            seconds=float(n),
            machine=machines[index] if machines else "",
        )
        lines.append(record.model_dump_json())
    (directory / "records.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def test_compare_counts_correct_to_broken_against_raw(tmp_path):
    raw = write_run(
        tmp_path / "raw", "raw", ["passed", "passed", "failed", "not_evaluable"], [1] * 4
    )
    acts = write_run(
        tmp_path / "acts", "acts", ["passed", "failed", "passed", "passed"], [5, 7, 9, 3]
    )
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["bench", "compare", str(raw), str(acts), "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "comparison.json").read_text())
    assert data["tasks"] == 3  # T_3 was not scored by raw
    rows = {r["method"]: r for r in data["rows"]}
    assert rows["raw"]["overall"]["accuracy"] == 66.67
    assert rows["acts"]["overall"]["accuracy"] == 66.67
    assert (rows["acts"]["correct_to_broken"], rows["acts"]["broken_to_correct"]) == (1, 1)
    assert rows["raw"]["correct_to_broken"] is None
    assert rows["acts"]["usage"]["llm_calls"]["median"] == 7
    markdown = (out / "comparison.md").read_text()
    assert "| acts | scripted | 100.0 | 0.0 | 66.7 | 1 | 1 |" in markdown
    assert "### Table 3: cost per task" in markdown


def test_compare_rejects_a_directory_without_records(tmp_path):
    result = CliRunner().invoke(app, ["bench", "compare", str(tmp_path), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "not an `acts-sql bench` output" in result.output


def test_compare_warns_when_the_seconds_come_from_different_machines(tmp_path):
    amd, intel = "AMD EPYC, 2 cores", "Intel Xeon, 2 cores"
    raw = write_run(tmp_path / "raw", "raw", ["passed", "failed"], [1, 1], [amd, amd])
    acts = write_run(tmp_path / "acts", "acts", ["passed", "failed"], [5, 7], [amd, intel])
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["bench", "compare", str(raw), str(acts), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = {r["method"]: r for r in json.loads((out / "comparison.json").read_text())["rows"]}
    assert rows["acts"]["machines"] == {amd: 1, intel: 1}
    markdown = (out / "comparison.md").read_text()
    assert "**The seconds come from 2 machine(s)**" in markdown
    assert f"acts: {amd} (1), {intel} (1)" in markdown
    same = tmp_path / "same"
    CliRunner().invoke(app, ["bench", "compare", str(raw), "--out", str(same)])
    assert "machine(s)" not in (same / "comparison.md").read_text()


def test_the_machine_label_reads_the_cpu_model(tmp_path):
    from acts_sql.bench.machine import cpu_model, machine_label

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n")
    assert cpu_model(cpuinfo) == "AMD EPYC 7B13"
    assert cpu_model(tmp_path / "missing") != ""  # platform's answer, or "unknown"
    assert machine_label().endswith(" cores")


def _tables(markdown):
    """Each markdown table of ``markdown`` as its lines' cell counts."""
    tables, current = [], []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line.strip().strip("|").count("|") + 1)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_every_table_has_as_many_cells_per_line_as_its_head(tmp_path):
    raw = write_run(tmp_path / "raw", "raw", ["passed", "failed"], [1, 1])
    acts = write_run(tmp_path / "acts", "acts", ["passed", "passed"], [5, 7])
    out = tmp_path / "cmp"
    CliRunner().invoke(app, ["bench", "compare", str(raw), str(acts), "--out", str(out)])
    tables = _tables((out / "comparison.md").read_text())
    assert len(tables) == 5
    for counts in tables:
        assert len(set(counts)) == 1, counts


def test_runs_without_a_common_task_say_so_instead_of_empty_tables(tmp_path):
    first = write_run(tmp_path / "first", "acts", ["passed", "failed"], [1, 1])
    second = tmp_path / "second"
    write_run(second, "acts", ["failed", "failed", "failed"], [2, 2, 2])
    records = (second / "records.jsonl").read_text().replace('"T_', '"U_')
    (second / "records.jsonl").write_text(records)
    out = tmp_path / "cmp"
    result = CliRunner().invoke(
        app, ["bench", "compare", str(first), str(second), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    markdown = (out / "comparison.md").read_text()
    assert "No task was scored by every run" in markdown
    assert "### Table 1" not in markdown
    assert "| first | acts | scripted | 2 |" in markdown
    assert "| second | acts | scripted | 3 |" in markdown
    assert [set(counts) for counts in _tables(markdown)] == [{5}]
