"""PostgreSQL's Unicode escapes, decoded before the guard reads a text.

PostgreSQL reads `U&"pg_terminate_backen\\0064"` as the identifier
`pg_terminate_backend` and `U&'d\\0061t'` as the string `'dat'` (optionally
with `UESCAPE '!'` choosing another escape character). sqlglot reads the first
as `U & "..."` (a bitwise AND of a column `U` and a call of a function with a
garbled name), so a rule that looks at names would see the wrong one.
`decode_unicode_escapes` rewrites every such token into the ordinary quoted
identifier or string PostgreSQL would read, exactly as its lexer decodes them;
the guard parses that text (the original is still what is sent). An escape
PostgreSQL would reject, or one this module cannot decode, makes the text
`EscapeError` (the guard then blocks it).

    >>> from acts_sql.sql.dialects import get_dialect
    >>> decode_unicode_escapes('SELECT U&"lowe\\\\0072"(x)', get_dialect("postgresql"))
    'SELECT "lower"(x)'
    >>> decode_unicode_escapes("SELECT U&'d!0061t' UESCAPE '!'", get_dialect("postgresql"))
    "SELECT 'dat'"
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from acts_sql.sql.dialects import Dialect

ESCAPING_DIALECTS = frozenset({"postgresql"})
"""Dialects whose lexer has `U&` escapes (DuckDB, SQLite and MySQL do not)."""

NAMEDATALEN = 64
"""PostgreSQL truncates identifiers to NAMEDATALEN - 1 bytes."""

_HEX = frozenset("0123456789abcdefABCDEF")
_BAD_ESCAPE_CHARS = frozenset("0123456789abcdefABCDEF+'\" \t\n\r\f\v")


class EscapeError(ValueError):
    """A `U&` token PostgreSQL would reject (or that cannot be decoded safely)."""


def decode_unicode_escapes(sql: str, dialect: Dialect) -> str:
    """`sql` with every `U&"..."` identifier and `U&'...'` string decoded into an
    ordinary quoted one (and its `UESCAPE` clause dropped); unchanged for other
    dialects or when there is none. Raises EscapeError for an invalid escape."""
    if dialect.name not in ESCAPING_DIALECTS or "&" not in sql:
        return sql
    try:
        tokens = dialect.sqlglot_dialect.tokenize(sql)
    except Exception:  # the guard's own parse reports it
        return sql
    pieces: list[str] = []
    cursor = 0
    index = 0
    while index < len(tokens):
        found = _escaped_token(sql, tokens, index)
        if found is None:
            index += 1
            continue
        start, body, quote, after = found
        escape, end, index = _uescape(sql, tokens, after)
        decoded = decode_body(body.replace(quote * 2, quote), escape)
        if quote == '"':
            decoded = _truncated_identifier(decoded)
        pieces.append(sql[cursor:start] + quote + decoded.replace(quote, quote * 2) + quote)
        cursor = end
    return "".join(pieces) + sql[cursor:] if pieces else sql


def _escaped_token(sql: str, tokens: list[Token], index: int) -> tuple[int, str, str, int] | None:
    """When a `U&` token starts at `tokens[index]`: (start offset, raw body, quote
    character, index of the token after it), else None."""
    token = tokens[index]
    if token.token_type == TokenType.UNICODE_STRING:
        return token.start, sql[token.start + 3 : token.end], "'", index + 1
    if (
        token.token_type == TokenType.VAR
        and token.text in ("U", "u")
        and index + 2 < len(tokens)
        and tokens[index + 1].token_type == TokenType.AMP
        and tokens[index + 1].start == token.end + 1
        and tokens[index + 2].token_type == TokenType.IDENTIFIER
        and tokens[index + 2].start == token.end + 2
        and sql[token.end + 2] == '"'
    ):
        ident = tokens[index + 2]
        return token.start, sql[ident.start + 1 : ident.end], '"', index + 3
    return None


def _uescape(sql: str, tokens: list[Token], index: int) -> tuple[str, int, int]:
    """(escape character, end offset of the escaped token with its UESCAPE clause,
    index of the next token) for the token just before `tokens[index]`."""
    previous_end = tokens[index - 1].end + 1
    if index >= len(tokens) or tokens[index].text.upper() != "UESCAPE":
        return "\\", previous_end, index
    if index + 1 >= len(tokens) or tokens[index + 1].token_type != TokenType.STRING:
        raise EscapeError("UESCAPE must be followed by a simple string literal")
    escape = tokens[index + 1].text
    if len(escape) != 1 or escape in _BAD_ESCAPE_CHARS:
        raise EscapeError(f"invalid Unicode escape character {escape!r}")
    return escape, tokens[index + 1].end + 1, index + 2


def decode_body(body: str, escape: str = "\\") -> str:
    """The text of a `U&` literal's body (quotes already undoubled), decoded as
    PostgreSQL does: `<e>XXXX`, `<e>+XXXXXX`, `<e><e>`, UTF-16 surrogate pairs.

    >>> decode_body("\\\\0041\\\\+000042\\\\\\\\")
    'AB\\\\'
    """
    out: list[str] = []
    pending: int | None = None  # a first UTF-16 surrogate waiting for its pair
    i = 0
    while i < len(body):
        if body[i] != escape:
            if pending is not None:
                raise EscapeError("invalid Unicode surrogate pair")
            out.append(body[i])
            i += 1
            continue
        if body[i + 1 : i + 2] == escape and pending is None:
            out.append(escape)
            i += 2
            continue
        code, i = _code_point(body, i + 1)
        if 0xD800 <= code <= 0xDBFF:
            if pending is not None:
                raise EscapeError("invalid Unicode surrogate pair")
            pending = code
            continue
        if 0xDC00 <= code <= 0xDFFF:
            if pending is None:
                raise EscapeError("invalid Unicode surrogate pair")
            code = 0x10000 + ((pending - 0xD800) << 10) + (code - 0xDC00)
            pending = None
        elif pending is not None:
            raise EscapeError("invalid Unicode surrogate pair")
        out.append(chr(code))
    if pending is not None:
        raise EscapeError("invalid Unicode surrogate pair")
    return "".join(out)


def _code_point(body: str, i: int) -> tuple[int, int]:
    """The code point of the escape whose digits start at `body[i]`, and the offset after it."""
    plus = body[i : i + 1] == "+"
    start, width = (i + 1, 6) if plus else (i, 4)
    digits, end = body[start : start + width], start + width
    if len(digits) != width or not set(digits) <= _HEX:
        raise EscapeError("invalid Unicode escape: must be \\XXXX or \\+XXXXXX")
    code = int(digits, 16)
    if code == 0 or code > 0x10FFFF:
        raise EscapeError(f"invalid Unicode escape value U+{code:04X}")
    return code, end


def _truncated_identifier(name: str) -> str:
    """`name` cut to the bytes PostgreSQL keeps of an identifier (NAMEDATALEN - 1)."""
    raw = name.encode("utf-8")
    if len(raw) < NAMEDATALEN:
        return name
    return raw[: NAMEDATALEN - 1].decode("utf-8", "ignore")
