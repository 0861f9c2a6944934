"""Where one statement ends and the next begins.

Statements end at semicolons outside literals and comments, except inside
procedural code: BEGIN ... END blocks (not the BEGIN of a transaction),
CASE ... END, and what the dialect declares about routine bodies (a T-SQL
procedure without BEGIN takes the rest of the batch; a PL/SQL routine or
DECLARE block has `;`-terminated declarations before its BEGIN).
"""

from __future__ import annotations

from sqlglot import Token, TokenType

from acts_sql.sql._scan import Span, scan
from acts_sql.sql.dialects import Dialect

_TRANSACTION_WORDS = frozenset(
    {"TRANSACTION", "TRAN", "WORK", "DEFERRED", "IMMEDIATE", "EXCLUSIVE", "DISTRIBUTED"}
    | {"ISOLATION", "READ"}
)
_ROUTINE_WORDS = frozenset({"PROCEDURE", "PROC", "FUNCTION", "TRIGGER", "PACKAGE"})
_UNCOUNTED_END_WORDS = frozenset({"IF", "LOOP", "WHILE", "REPEAT", "FOR"})
"""END IF, END LOOP, ... close blocks whose openers are not counted."""


def statement_chunks(sql: str, tokens: list[Token], dialect: Dialect) -> list[list[Token]]:
    """`tokens` (of `sql`) grouped per statement, separators and empty statements dropped."""
    return _Chunker(sql, tokens, dialect).run()


class _Chunker:
    def __init__(self, sql: str, tokens: list[Token], dialect: Dialect) -> None:
        self.sql = sql
        self.tokens = tokens
        self.dialect = dialect
        self.depth = 0  # open BEGIN/CASE blocks
        self.pending_begin = False  # a block opened by a header awaits its BEGIN
        self.to_end = False  # the current statement takes the rest of the text
        self.body_as_pending = False  # a T-SQL routine header awaits its AS

    def word(self, index: int) -> str:
        if not 0 <= index < len(self.tokens):
            return ""
        token = self.tokens[index]
        # The raw text, so that a string literal 'END' never reads as END.
        return self.sql[token.start : token.end + 1].upper()

    def run(self) -> list[list[Token]]:
        chunks: list[list[Token]] = [[]]
        for index, token in enumerate(self.tokens):
            at_top = self.depth == 0 and not self.to_end and not self.pending_begin
            if token.token_type == TokenType.SEMICOLON and at_top:
                chunks.append([])
                self.body_as_pending = False
                continue
            chunks[-1].append(token)
            self.track(index, chunks[-1])
        return [chunk for chunk in chunks if chunk]

    def track(self, index: int, chunk: list[Token]) -> None:
        word, next_word = self.word(index), self.word(index + 1)
        if word in _ROUTINE_WORDS and self.word_at_start(chunk) in ("CREATE", "ALTER"):
            if self.dialect.routine_body_runs_to_end:
                self.body_as_pending = True
            elif self.dialect.declarations_before_begin and not self.pending_begin:
                self.pending_begin = True
        elif word == "DECLARE" and len(chunk) == 1 and self.dialect.declarations_before_begin:
            self.pending_begin = True
        elif word == "AS" and self.body_as_pending and self.depth == 0:
            previous, before = self.word(index - 1), self.word(index - 2)
            is_parameter_type = previous.startswith("@") or before == "@"  # @a AS INT
            if not is_parameter_type and previous != "EXECUTE":
                self.body_as_pending = False
                self.to_end = next_word != "BEGIN"
        elif word == "BEGIN":
            if self.pending_begin:
                self.pending_begin = False
                self.depth += 1
            elif next_word not in ("", ";") and next_word not in _TRANSACTION_WORDS:
                self.depth += 1
        elif word == "CASE":
            self.depth += 1
        elif word == "END" and next_word not in _UNCOUNTED_END_WORDS:
            if self.depth == 0 and self.pending_begin:  # a PL/SQL package spec: IS ... END
                self.pending_begin = False
            self.depth = max(0, self.depth - 1)

    def word_at_start(self, chunk: list[Token]) -> str:
        return self.sql[chunk[0].start : chunk[0].end + 1].upper() if len(chunk) <= 8 else ""


def split_by_scan(sql: str, dialect: Dialect) -> list[str]:
    """Split on semicolons outside literals and comments (for untokenizable text);
    comments before and after each statement are dropped."""
    pieces: list[list[Span]] = [[]]
    for span in scan(sql, dialect):
        if span.kind != "code":
            pieces[-1].append(span)
            continue
        start = span.start
        for offset, ch in enumerate(sql[span.start : span.end], span.start):
            if ch == ";":
                pieces[-1].append(Span("code", start, offset))
                pieces.append([])
                start = offset + 1
        pieces[-1].append(Span("code", start, span.end))
    statements = []
    for piece in pieces:
        body = [s for s in piece if s.kind != "comment" and sql[s.start : s.end].strip()]
        if body:
            statements.append(sql[body[0].start : body[-1].end].strip())
    return statements
