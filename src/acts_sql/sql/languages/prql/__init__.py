"""PRQL (https://prql-lang.org) as a query language: the worked example of a plugin.

PRQL is a pipeline of transforms (`from`, `filter`, `derive`, `group`,
`aggregate`, `sort`, `take`, `join`, `window`, ...) that the `prqlc` compiler
turns into SQL of a target database. This plugin uses only the public plugin
API (`acts_sql.sql.languages.QueryLanguage`), as a plugin of another package
would:

- `compile`: ``prqlc.compile`` for the database's dialect (DuckDB, SQLite,
  PostgreSQL); the compiler's errors become diagnostics with the line, the
  column and the message (`parse_errors`). A text past the limits of
  ``limits.py`` (size, bracket nesting, expression depth, dotted names: where
  prqlc overflows its stack and kills the process, or takes gigabytes) is a
  compile error before prqlc sees it, and prqlc runs on a thread with a large
  stack (``stack.py``);
- `canonical` (the default): the SQL the text compiles to, so whitespace,
  comments and pipelines the compiler merges (two `filter`s, one `&&`) are the
  same query; a text that does not compile is compared by its words;
- ``split_fix_syntax`` does not apply (sqlglot cannot read PRQL): failing
  candidates are repaired by a `generate_sql` step told the compiler's error;
- the prompts' reference text is ``reference.md`` next to this file;
- `from_sql`: a plain SELECT rewritten as PRQL (``from_sql.py``), for the SQL a
  small model writes when asked for PRQL.

Needs the `prqlc` package: ``pip install 'acts-sql[prql]'``.
"""

from __future__ import annotations

import re
from functools import cache
from types import MappingProxyType

import prqlc

from acts_sql.sql.diagnostics import SqlDiagnostic
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.languages.base import QueryLanguage
from acts_sql.sql.languages.prql.from_sql import translate
from acts_sql.sql.languages.prql.limits import check_limits
from acts_sql.sql.languages.prql.stack import on_large_stack

PRQLC_TARGETS = {"duckdb": "sql.duckdb", "sqlite": "sql.sqlite", "postgresql": "sql.postgres"}
"""acts-sql dialect -> prqlc target. prqlc knows more (MySQL, SQL Server, ...); these are
the ones acts-sql's tests run PRQL on."""

_ERROR_START = re.compile(r"^(?:\[(E\d+)\]\s*)?Error:", re.MULTILINE)
_LOCATION = re.compile(r"╭─\[[^\]\n]*?:(\d+):(\d+)\s*\]")
_LABEL = re.compile(r"╰─+\s*(\S.*)$", re.MULTILINE)
_HELP = re.compile(r"(?:Help|↳ Hint):\s*(\S.*)$", re.MULTILINE)


@cache
def _options(target: str) -> prqlc.CompileOptions:
    return prqlc.CompileOptions(target=target, signature_comment=False, format=True)


class PRQL(QueryLanguage):
    name = "prql"
    display_name = "PRQL"
    code_fence = "prql"
    file_suffixes = (".prql",)
    targets = tuple(PRQLC_TARGETS)
    unavailable_tools = MappingProxyType(
        {
            "split_fix_syntax": (
                "it splits SQL into SELECT units with sqlglot, which cannot read PRQL; a query "
                "that does not compile is repaired from the compiler's error (line, column, "
                "message) instead"
            )
        }
    )
    reference_file = "reference.md"

    def compile(self, text: str, dialect: str) -> str:
        target = PRQLC_TARGETS.get(dialect)
        if target is None:
            raise self.compile_error(
                [SqlDiagnostic(message=f"PRQL is not run on {dialect} databases here")]
            )
        report = compile_report(text, _options(target))
        if isinstance(report, str):
            return report.strip()
        raise self.compile_error(with_sql_hint(report, text))

    def from_sql(self, sql: str, dialect: str) -> str | None:
        return translate(sql, get_dialect(dialect).sqlglot_name)


def compile_report(text: str, options: prqlc.CompileOptions) -> str | list[SqlDiagnostic]:
    """The SQL `text` compiles to, or the compiler's errors as diagnostics.

    prqlc 0.13 measures an error's span in bytes and draws it on the source counted
    in characters: an error near the end of a text with non-ASCII characters made it
    panic (a ``PanicException``, which is not an ``Exception``), taking the process
    down. So the text is compiled with one trailing space per extra byte (no span can
    pass its end) and each error's place, which the compiler reads as a character
    index although it is a byte offset, is moved back to the right line and column.
    A panic that still happens is reported as a compile error, never raised.

    A text past a limit of `check_limits` is never compiled: its one diagnostic says
    which limit, where. prqlc runs on a thread with a large stack (`on_large_stack`)."""
    beyond = check_limits(text)
    if beyond is not None:
        return [beyond]
    extra = len(text.encode()) - len(text)
    padded = text + " " * extra
    try:
        return on_large_stack(lambda: prqlc.compile(padded, options))
    except ValueError as exc:  # prqlc reports every compile error as ValueError
        found = parse_errors(str(exc), text)
        return [_at_characters(d, padded, text) for d in found] if extra else found
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        return [SqlDiagnostic(message=f"does not compile (the PRQL compiler failed: {exc})")]


def _at_characters(found: SqlDiagnostic, padded: str, text: str) -> SqlDiagnostic:
    if found.line is None or found.column is None:
        return found
    lines = padded.split("\n")
    byte_offset = sum(len(line) + 1 for line in lines[: found.line - 1]) + found.column - 1
    index = len(text.encode()[:byte_offset].decode(errors="ignore"))
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return found.model_copy(
        update={"line": line, "column": column, "near": _near(text, line, column)}
    )


_SQL_START = re.compile(r"^\s*(?:select|with)\b", re.IGNORECASE)
SQL_HINT = (
    "this is SQL, not PRQL: a PRQL query starts with `from <table>` and pipes transforms "
    "(`filter`, `derive`, `group {k} (aggregate {...})`, `sort`, `take`)"
)


def with_sql_hint(found: list[SqlDiagnostic], text: str) -> list[SqlDiagnostic]:
    """The compiler's findings, the first one saying so when `text` is SQL (it starts with
    SELECT or WITH, which no PRQL query does): prqlc's own message for it ("Too many
    arguments to function `select`") does not tell a writer, or a model, what is wrong."""
    if not found or not _SQL_START.match(text):
        return found
    first = found[0]
    return [first.model_copy(update={"message": f"{first.message} ({SQL_HINT})"}), *found[1:]]


def parse_errors(report: str, text: str) -> list[SqlDiagnostic]:
    """prqlc's error report (one or more boxed errors) as diagnostics."""
    chunks = [m.start() for m in _ERROR_START.finditer(report)] or [0]
    found = []
    for start, end in zip(chunks, [*chunks[1:], len(report)], strict=True):
        diagnostic = _one_error(report[start:end], text)
        if diagnostic is not None:
            found.append(diagnostic)
    return found or [SqlDiagnostic(message=" ".join(report.split()) or "does not compile")]


def _one_error(chunk: str, text: str) -> SqlDiagnostic | None:
    head = _ERROR_START.match(chunk)
    rest = chunk[head.end() :] if head else chunk
    labels = _LABEL.findall(rest)
    first_line = rest.split("\n", 1)[0].strip()
    message = "; ".join(label.strip() for label in labels) or first_line
    if not message:
        return None
    helps = [h.strip() for h in _HELP.findall(rest)]
    if helps:
        message += " (" + "; ".join(helps) + ")"
    if head and head.group(1):
        message = f"[{head.group(1)}] {message}"
    where = _LOCATION.search(rest)
    if where is None:
        return SqlDiagnostic(message=message)
    line, column = int(where.group(1)), int(where.group(2))
    return SqlDiagnostic(message=message, line=line, column=column, near=_near(text, line, column))


def _near(text: str, line: int, column: int) -> str:
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    word = re.match(r"\S{1,30}", lines[line - 1][column - 1 :])
    return word.group(0) if word else ""
