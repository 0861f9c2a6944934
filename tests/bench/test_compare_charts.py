"""`acts-sql bench compare` charts: their numbers, the PNG/SVG files, the table fallback."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from acts_sql.bench.charts import (
    ACCURACY_CALLS,
    BY_DIALECT,
    INSTALL_HINT,
    write_charts,
)
from acts_sql.bench.compare import chart_data, compare, load_run
from acts_sql.cli.app import app
from bench.test_compare import write_run

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
IMAGES = [f"{stem}.{fmt}" for stem in (ACCURACY_CALLS, BY_DIALECT) for fmt in ("png", "svg")]


@pytest.fixture
def two_runs(tmp_path):
    """raw: 1 call a task, 2 of 4 pass; acts: 5/7/9/9 calls, 3 of 4 pass.

    Tasks alternate PostgreSQL (T_0, T_2) and SQLite (T_1, T_3); T_4 is scored by
    acts only (raw has it not evaluable), so it is outside the common tasks.
    """
    raw = write_run(
        tmp_path / "raw",
        "raw",
        ["passed", "passed", "failed", "failed", "not_evaluable"],
        [1] * 5,
    )
    acts = write_run(
        tmp_path / "acts",
        "acts",
        ["passed", "failed", "passed", "passed", "passed"],
        [5, 7, 9, 9, 100],
    )
    return raw, acts


def test_chart_data_has_accuracy_mean_calls_and_dialects_of_the_common_tasks(two_runs):
    data = chart_data(compare([load_run(d) for d in two_runs]))
    assert data.tasks == 4
    points = {p.name: (p.accuracy, p.mean_calls) for p in data.points}
    assert points == {
        "raw": (50.0, 1.0),
        "acts": (75.0, 7.5),
    }  # the mean (median 8); T_4's 100 calls left out
    by_dialect = {g.dialect: g.accuracy for g in data.dialects}
    assert by_dialect == {
        "PostgreSQL": {"raw": 50.0, "acts": 100.0},
        "SQLite": {"raw": 50.0, "acts": 50.0},
    }


def test_a_dialect_a_run_has_no_evaluable_task_of_is_none(tmp_path, two_runs):
    comparison = compare([load_run(d) for d in two_runs])
    del comparison.rows[0].by_dialect["SQLite"]
    data = chart_data(comparison)
    assert {g.dialect: g.accuracy["raw"] for g in data.dialects} == {
        "PostgreSQL": 50.0,
        "SQLite": None,
    }
    pytest.importorskip("matplotlib")
    files = write_charts(tmp_path, data)  # drawn without a bar, no error
    assert (tmp_path / f"{BY_DIALECT}.png").exists(), files


def test_charts_are_valid_png_and_svg_with_every_run_label_and_stable_bytes(tmp_path, two_runs):
    pytest.importorskip("matplotlib")
    pyplot_before = "matplotlib.pyplot" in sys.modules
    data = chart_data(compare([load_run(d) for d in two_runs], names=["baseline", "acts-1.5b"]))
    out = tmp_path / "out"
    out.mkdir()
    files = write_charts(out, data)
    assert files.hint is None and files.table == []
    assert sorted(n for names in files.images.values() for n in names) == sorted(IMAGES)
    first = {}
    for name in IMAGES:
        content = (out / name).read_bytes()
        first[name] = content
        if name.endswith(".png"):
            assert content.startswith(PNG_SIGNATURE)
            continue
        root = ET.fromstring(content)
        assert root.tag.endswith("svg")
        texts = " ".join(t for el in root.iter() if el.tag.endswith("text") for t in el.itertext())
        for label in ("baseline", "acts-1.5b"):
            assert label in texts, (name, texts)
        assert "PostgreSQL" in texts or name.startswith(ACCURACY_CALLS)
    write_charts(out, data)
    assert {name: (out / name).read_bytes() for name in IMAGES} == first
    assert pyplot_before or "matplotlib.pyplot" not in sys.modules  # Figure objects only


def test_without_matplotlib_the_numbers_become_a_table_and_one_hint(
    tmp_path, two_runs, monkeypatch
):
    out = tmp_path / "cmp"
    out.mkdir()
    (out / f"{ACCURACY_CALLS}.png").write_bytes(b"stale")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    data = chart_data(compare([load_run(d) for d in two_runs]))
    files = write_charts(out, data)
    assert files.images == {}
    assert files.hint == INSTALL_HINT and "acts-sql[plots]" in files.hint
    assert "| raw | 1 | 50.0 |" in files.table
    assert "| acts | 7.5 | 75.0 |" in files.table
    assert "| PostgreSQL | 50.0 | 100.0 |" in files.table
    assert not any(p.name.startswith("compare-") for p in out.iterdir())  # stale one gone

    result = CliRunner().invoke(app, ["bench", "compare", *map(str, two_runs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.count("acts-sql[plots]") == 1
    page = (out / "comparison.md").read_text()
    assert "### Charts" in page and "| acts | 7.5 | 75.0 |" in page
    assert "| dialect | raw | acts |" in page
    assert ".png" not in page and not any(p.suffix in {".png", ".svg"} for p in out.iterdir())


def test_the_comparison_page_links_the_charts(tmp_path, two_runs):
    pytest.importorskip("matplotlib")
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["bench", "compare", *map(str, two_runs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "acts-sql[plots]" not in result.output
    page = (out / "comparison.md").read_text()
    for name in IMAGES:
        assert f"({name})" in page
        assert (out / name).stat().st_size > 0
    assert f"![Accuracy by dialect]({BY_DIALECT}.svg)" in page


def test_runs_without_common_tasks_get_no_chart(tmp_path):
    first = write_run(tmp_path / "first", "raw", ["passed"], [1])
    second = write_run(tmp_path / "second", "acts", ["not_evaluable"], [1])
    out = tmp_path / "cmp"
    result = CliRunner().invoke(
        app, ["bench", "compare", str(first), str(second), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "### Charts" not in (out / "comparison.md").read_text()
    assert not any(p.name.startswith("compare-") for p in out.iterdir())


def test_runs_on_the_same_spot_share_one_label(tmp_path):
    pytest.importorskip("matplotlib")
    runs = [
        write_run(tmp_path / name, name, ["failed", "failed"], [1, 1]) for name in ("raw", "critic")
    ]
    files = write_charts(tmp_path, chart_data(compare([load_run(d) for d in runs])))
    root = ET.parse(tmp_path / f"{ACCURACY_CALLS}.svg").getroot()
    texts = [" ".join(el.itertext()) for el in root.iter() if el.tag.endswith("text")]
    assert "raw, critic" in texts, texts
    assert files.images
