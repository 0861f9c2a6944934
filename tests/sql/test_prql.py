"""The bundled PRQL plugin: compiling per target, the compiler's errors, the canonical form."""

from __future__ import annotations

import pytest

from acts_sql.errors import QueryCompileError
from acts_sql.sql.languages import get_language
from acts_sql.sql.languages.prql import PRQL, parse_errors
from acts_sql.sql.query_text import normalize_sql
from acts_sql.sql.repairs import has_top_level_order_by

prql = get_language("prql")


def test_prql_is_a_bundled_plugin_without_split_fix_syntax():
    assert isinstance(prql, PRQL)
    assert not prql.is_sql
    assert prql.targets == ("duckdb", "sqlite", "postgresql")
    assert set(prql.unavailable_tools) == {"split_fix_syntax"}
    assert "group {k1, k2} (aggregate" in prql.reference  # reference.md next to the plugin


@pytest.mark.parametrize(
    ("dialect", "fragment"),
    [
        ("duckdb", "quantile_cont(latency_ms, 0.5)"),
        ("sqlite", "quantile_cont(latency_ms, 0.5)"),
        ("postgresql", "quantile_cont(latency_ms, 0.5)"),
    ],
)
def test_compiles_to_each_target(dialect, fragment):
    sql = prql.compile(
        'from requests\nfilter status >= 500\ngroup {service_id} (aggregate {p50 = s"quantile_cont'
        '({latency_ms}, 0.5)"})\nsort {-p50}\ntake 3',
        dialect,
    )
    assert fragment in sql and "WHERE" in sql and "GROUP BY" in sql
    assert "LIMIT" in sql and "ORDER BY" in sql


def test_dialect_specific_sql_differs_by_target():
    text = 'from requests | derive {d = (ts | date.to_text "%Y")} | select {d}'
    assert "strftime(ts, '%Y')" in prql.compile(text, "duckdb")
    assert "TO_CHAR(ts, 'YYYY')" in prql.compile(text, "postgresql")


def test_an_unknown_transform_is_reported_with_line_column_and_message():
    with pytest.raises(QueryCompileError) as caught:
        prql.compile("from requests\nfiltr status >= 500\ntake 5", "duckdb")
    [finding] = caught.value.diagnostics
    assert (finding.line, finding.column) == (2, 1)
    assert finding.message == "Unknown name `filtr`"
    assert finding.near == "filtr"
    assert (
        str(caught.value)
        == "PRQL compile error: line 2, column 1: Unknown name `filtr` (near 'filtr')"
    )


def test_help_lines_and_error_codes_are_kept():
    [finding] = prql.check("from requests\nselect {path}\nfilter status > 1")
    assert finding.line == 3 and "Unknown name `status`" in finding.message
    assert "available columns: requests.path" in finding.message
    [empty] = prql.check("# only a comment")
    assert empty.message == "[E0001] No PRQL query entered" and empty.line is None


def test_parse_errors_of_a_report_without_a_box():
    [finding] = parse_errors("Error: s-strings must start with `SELECT `\n↳ Hint: a limit\n", "")
    assert finding.message == "s-strings must start with `SELECT ` (a limit)"
    assert parse_errors("garbled", "")[0].message == "garbled"


def test_a_target_prql_does_not_run_on_is_a_compile_error():
    with pytest.raises(QueryCompileError, match="not run on mysql databases"):
        prql.compile("from t", "mysql")


def test_canonical_form_ignores_layout_comments_and_merged_filters():
    one = prql.canonical("from requests\nfilter status >= 500\nfilter region == 'eu'\ntake 10")
    two = prql.canonical(
        'from requests   # the log\n  filter (status >= 500 && region == "eu") | take 10'
    )
    assert one == two
    assert one == normalize_sql(
        "from requests | filter status>=500 && region=='eu' | take 10", "prql"
    )
    assert one != prql.canonical("from requests | filter status >= 500 | take 10")
    assert prql.canonical("from requests | filtr x") == "prql-text: from requests | filtr x"


def test_order_is_read_from_the_compiled_sql():
    assert has_top_level_order_by("from r | sort {-n} | take 3", "prql")
    assert not has_top_level_order_by("from r | group {k} (sort {-n} | take 3)", "prql")
    assert not has_top_level_order_by("from r | filtr x", "prql")


@pytest.mark.parametrize(
    "sql",
    [
        "select count(*) from requests where status = 404",
        "  WITH t AS (SELECT 1 AS x) SELECT x FROM t",
    ],
)
def test_sql_written_where_prql_is_expected_says_so(sql):
    with pytest.raises(QueryCompileError) as caught:
        prql.compile(sql, "duckdb")
    first = caught.value.diagnostics[0]
    assert "this is SQL, not PRQL: a PRQL query starts with `from <table>`" in first.message
    assert "this is SQL, not PRQL" in str(caught.value)


def test_a_prql_error_is_not_called_sql():
    with pytest.raises(QueryCompileError) as caught:
        prql.compile("from requests\nselect_all", "duckdb")
    assert "not PRQL" not in str(caught.value)


# prqlc 0.13 panics drawing an error near the end of a text with a non-ASCII character
# (it measures the span in bytes, the source in characters): the first three took the
# process down; the others put the error a byte per non-ASCII character too far.
@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ('from requests\nfilter path == "é" +', 1, 1, "didn't find anything before the end"),
        ('from requests\nderive {x = "héllo" ++ }', 2, 24, "but found }"),
        ("from requests\nselect {path} # ünïcode\n|", 3, 1, "but found |"),
        ("# ü\nfrom requests\nfiltr status", 3, 1, "Unknown name `filtr`"),
        ("from requests\nfilter status ≥ 500", 2, 15, "unexpected '≥'"),
        ("from réquêtes\nselect {nâme}\nfilter status > 1", 3, 8, "columns: `réquêtes`.`nâme`"),
    ],
)
def test_a_failing_text_with_non_ascii_characters_is_placed_in_characters(
    text, line, column, message
):
    with pytest.raises(QueryCompileError) as caught:
        prql.compile(text, "duckdb")
    first = caught.value.diagnostics[0]
    assert (first.line, first.column) == (line, column)
    assert message in first.message


def test_a_text_with_non_ascii_characters_compiles_with_them():
    sql = prql.compile('from requests\nfilter path == "/café"\nselect {path}', "duckdb")
    assert "'/café'" in sql


class PanicException(BaseException):
    """Named as pyo3 names a Rust panic, which derives from BaseException."""


def test_a_compiler_panic_is_a_compile_error_not_a_crash(monkeypatch):
    import acts_sql.sql.languages.prql as plugin

    def panicking(text, options):
        raise PanicException("span Some(1:0-28) is out of bounds of the source (len = 27)")

    monkeypatch.setattr(plugin.prqlc, "compile", panicking)
    with pytest.raises(QueryCompileError) as caught:
        prql.compile("from requests", "duckdb")
    assert "the PRQL compiler failed: span Some(1:0-28)" in str(caught.value)

    def interrupted(text, options):
        raise KeyboardInterrupt

    monkeypatch.setattr(plugin.prqlc, "compile", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prql.compile("from requests", "duckdb")
