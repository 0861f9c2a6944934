"""Syntax diagnostics, parsing and statement splitting, as data.

A parse error is data here: a `SqlDiagnostic` with a message, the 1-based
line and column where the offending text starts, and that text. sqlglot's
messages are cleaned of Python reprs so they can be shown to a user or an
LLM. Functions that must have a tree raise `SqlParseError` instead, whose
details carry the first diagnostic's line, column and near text and the
dialect.

Beyond what sqlglot rejects, a statement that sqlglot only accepts as a bare
expression (`SELEC name`, which it reads as `SELEC AS name`) is reported: it
is never a statement in any dialect.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict
from sqlglot import Token, TokenType, exp
from sqlglot.errors import ParseError, SqlglotError

from acts_sql.errors import SqlParseError
from acts_sql.sql._scan import line_col, scan
from acts_sql.sql._split import split_by_scan, statement_chunks
from acts_sql.sql.dialects import Dialect, get_dialect


class SqlDiagnostic(BaseModel):
    """One syntax problem: what, where (1-based line and column), near which text."""

    model_config = ConfigDict(frozen=True)

    message: str
    line: int | None = None
    column: int | None = None
    near: str = ""

    def describe(self) -> str:
        """One line for a person or an LLM: `line 2, column 8: ... (near 'WHERE')`."""
        where = f"line {self.line}, column {self.column}: " if self.line is not None else ""
        near = f" (near {self.near!r})" if self.near else ""
        return f"{where}{self.message}{near}"


# ------------------------------------------------------------------ public API


def syntax_diagnostics(sql: str, dialect: str | Dialect) -> list[SqlDiagnostic]:
    """Syntax problems of `sql` (one or more statements); empty when it parses."""
    return _parse(sql, get_dialect(dialect))[1]


def parse_statements(sql: str, dialect: str | Dialect) -> list[exp.Expr]:
    """The sqlglot trees of the statements of `sql` (empty statements dropped).

    Raises `SqlParseError` (details: line, column, near, dialect, diagnostics)
    when any statement does not parse.
    """
    d = get_dialect(dialect)
    statements, diagnostics = _parse(sql, d)
    if diagnostics:
        raise parse_error(diagnostics, d)
    return statements


def split_sql(sql: str, dialect: str | Dialect) -> list[str]:
    """The texts of the statements of `sql`, without separators and empty statements.

    Splits at the semicolons sqlglot's tokenizer sees, so semicolons in
    strings, quoted identifiers, comments and dollar-quoted bodies do not
    split, nor do those inside BEGIN ... END and CASE ... END blocks (see
    `_split`). Each text is the original text from its first token to its
    last (comments before and after a statement are dropped). When the text
    cannot be tokenized (an unterminated quote), falls back to splitting on
    semicolons outside quotes and comments.

    SQL only: `acts_sql.sql.query_text.split_statements` also splits a query language's text.
    """
    d = get_dialect(dialect)
    try:
        tokens = d.sqlglot_dialect.tokenize(sql)
    except SqlglotError:
        return split_by_scan(sql, d)
    return [sql[chunk[0].start : chunk[-1].end + 1] for chunk in statement_chunks(sql, tokens, d)]


def parse_error(diagnostics: list[SqlDiagnostic], dialect: Dialect) -> SqlParseError:
    """A `SqlParseError` for the first of `diagnostics` (all of them in its details)."""
    first = diagnostics[0]
    return SqlParseError(
        f"{dialect.display_name} syntax error: {first.describe()}",
        line=first.line,
        column=first.column,
        near=first.near,
        dialect=dialect.name,
        diagnostics=[diag.model_dump() for diag in diagnostics],
    )


# ---------------------------------------------------------------- parsing


def _parse(sql: str, d: Dialect) -> tuple[list[exp.Expr], list[SqlDiagnostic]]:
    """Trees and diagnostics. Parses the whole text first, like sqlglot does;
    only when that fails (or yields a bare expression) is each statement
    parsed alone, so that every broken statement gets its diagnostics."""
    try:
        tokens = d.sqlglot_dialect.tokenize(sql)
    except SqlglotError as error:
        return [], [_token_error_diagnostic(sql, d, error)]
    whole: list[SqlDiagnostic] = []
    try:
        trees = d.sqlglot_dialect.parser().parse(tokens, sql)
    except ParseError as error:
        trees, whole = None, [_diagnostic_from_sqlglot(info) for info in error.errors]
    except SqlglotError as error:  # pragma: no cover - defensive
        trees, whole = None, [SqlDiagnostic(message=_clean_message(str(error)))]
    # A comment after the last semicolon comes back as a bare `Semicolon` node.
    statements = [
        tree for tree in trees or [] if tree is not None and not isinstance(tree, exp.Semicolon)
    ]
    if trees is not None and not any(_is_bare_expression(tree) for tree in statements):
        return statements, []
    diagnostics: list[SqlDiagnostic] = []
    for chunk in statement_chunks(sql, tokens, d):
        diagnostics.extend(_chunk_diagnostics(sql, d, chunk))
    return [], diagnostics or whole or [SqlDiagnostic(message="syntax error")]


def _chunk_diagnostics(sql: str, d: Dialect, chunk: list[Token]) -> list[SqlDiagnostic]:
    try:
        trees = d.sqlglot_dialect.parser().parse(chunk, sql)
    except ParseError as error:
        found = [_diagnostic_from_sqlglot(info) for info in error.errors]
        if chunk[0].token_type == TokenType.VAR:
            found.insert(0, _not_a_statement(chunk[0]))
        return _dedupe(found)
    except SqlglotError as error:  # pragma: no cover - defensive
        return [SqlDiagnostic(message=_clean_message(str(error)))]
    if any(tree is not None and _is_bare_expression(tree) for tree in trees):
        return [_not_a_statement(chunk[0])]
    return []


def _is_bare_expression(tree: exp.Expr) -> bool:
    """A column, literal, function call or alias where a statement should be."""
    return isinstance(tree, exp.Condition | exp.Alias) and not isinstance(tree, exp.Query)


def _not_a_statement(first: Token) -> SqlDiagnostic:
    line, column = _token_start(first)
    if first.token_type == TokenType.VAR:
        message = f"{first.text!r} is not a statement keyword"
    else:
        message = "not a SQL statement"
    return SqlDiagnostic(message=message, line=line, column=column, near=first.text)


def _token_start(token: Token) -> tuple[int, int]:
    """sqlglot positions a token by its last character; we want its first."""
    width = token.end - token.start + 1
    return token.line, max(1, token.col - width + 1)


_CLASS_REPR = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")
_TOKEN_REPR = re.compile(
    r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+.*?>"
)


def _clean_message(message: str) -> str:
    """Replace Python reprs in sqlglot's messages with SQL words."""

    def token(match: re.Match[str]) -> str:
        return "end of input" if match.group(1) == "SENTINEL" else repr(match.group(2))

    return _CLASS_REPR.sub(r"\1", _TOKEN_REPR.sub(token, message)).strip()


def _diagnostic_from_sqlglot(info: dict[str, object]) -> SqlDiagnostic:
    line = info.get("line")
    col = info.get("col")
    near = str(info.get("highlight") or "")
    column: int | None = None
    if isinstance(col, int):
        column = col - len(near) + 1 if near and "\n" not in near else col
        column = max(1, column)
    message = _clean_message(str(info.get("description") or "syntax error"))
    return SqlDiagnostic(
        message=message,
        line=line if isinstance(line, int) else None,
        column=column,
        near=near,
    )


def _token_error_diagnostic(sql: str, d: Dialect, error: SqlglotError) -> SqlDiagnostic:
    """Locate what the tokenizer choked on: the first unterminated quote or comment."""
    for span in scan(sql, d):
        if not span.terminated:
            line, column = line_col(sql, span.start)
            what = {
                "string": "unterminated string literal",
                "identifier": "unterminated quoted identifier",
                "comment": "unterminated comment",
            }.get(span.kind, "unterminated text")
            return SqlDiagnostic(
                message=what, line=line, column=column, near=sql[span.start : span.start + 20]
            )
    end = getattr(error, "end", None)
    offset = end if isinstance(end, int) else 0
    line, column = line_col(sql, offset)
    return SqlDiagnostic(message="cannot tokenize the statement", line=line, column=column)


def _dedupe(diagnostics: list[SqlDiagnostic]) -> list[SqlDiagnostic]:
    first: dict[tuple[str, int | None, int | None], SqlDiagnostic] = {}
    for diag in diagnostics:
        first.setdefault((diag.message, diag.line, diag.column), diag)
    return list(first.values())
