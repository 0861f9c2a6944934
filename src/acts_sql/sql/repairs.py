"""Deterministic SQL repairs: candidate statements offered next to the LLM's.

Each function is pure (no I/O) and cheap, never raises on bad SQL, and only
offers a candidate that differs from the input after `normalize_sql`
(otherwise None or an empty list), because the engine treats two texts with
the same canonical form as one candidate.

- `reparse_in_dialect`: sqlglot reads the statement leniently in the target
  dialect and writes it back there. This closes a missing parenthesis, drops
  a stray one or a dangling comma, and lets sqlglot's generator rewrite what
  it maps for the dialect (NVL becomes COALESCE on PostgreSQL, `LIMIT 1, 2`
  becomes `LIMIT 2 OFFSET 1`). A lenient reading that lost any name, literal
  or clause keyword of the input is discarded. Limit: a defect that
  `normalize_sql` itself reads past (`==` on PostgreSQL, at the time of
  writing) normalises to the same text as its fix, so no candidate is
  offered for it alone.
- `transpile_from_detected`: the statement may be written in another
  dialect (MySQL backticks and IFNULL, T-SQL TOP and ISNULL, PostgreSQL `::`
  and ILIKE, Oracle NVL and SYSDATE, SQLite strftime, ...). Dialects whose
  characteristic tokens occur in the text, or that parse a text the target
  cannot, are tried; each is transpiled to the target by sqlglot. Limits:
  sqlglot does not translate everything (ROWNUM, SQLite's date('now', ...));
  a translation that keeps such a token is dropped. It may also write a
  function the target lacks (PostgreSQL DATE_TRUNC comes out as
  TIMESTAMP_TRUNC on SQLite): candidates are executed before anyone trusts them.
- `unknown_identifiers` / `repair_identifiers` / `describe_unknown`: tables
  and columns that the schema (table -> columns, as the database reports
  them) does not have, resolved through sqlglot's scopes, so CTEs, derived
  tables, their output columns and SELECT-list aliases are known names. Each
  unknown name gets the nearest schema names (spelling, singular/plural,
  snake_case/camelCase, and the same column in another table). A repair
  replaces a name only when one in-scope name is clearly nearest, in the
  user's own text (only the identifier changes). A database error naming the
  identifier (SQLite, PostgreSQL, MySQL/MariaDB, DuckDB, SQL Server, Oracle
  message shapes) makes that name count as unknown even where the scope
  cannot tell, and accepts a narrower lead of its best match. Text that only
  parses leniently is re-read first (the repair then comes as sqlglot
  writes it). Limits: the columns of table functions (json_each,
  generate_series) and of a `SELECT *` over them are not known, so names
  that may come from them are not reported unless the error names them; a
  name found in several joined tables is only suggested qualified; DML is
  checked for its target table, INSERT's column list and the columns
  outside subqueries; unquoted names match case-insensitively (PostgreSQL and
  Oracle quoted names match exactly, a case-only difference being a near
  match); a SQLite double-quoted name that matches no column is a string
  there, not an error.
- `has_top_level_order_by`: whether the last statement's outermost query
  orders its rows (ORDER BY in subqueries and window functions does not count).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from sqlglot import Token, TokenType, exp
from sqlglot.errors import ErrorLevel, SqlglotError

from acts_sql.sql._identifiers import (
    PSEUDO_COLUMNS,
    Analyzer,
    ErrorName,
    Finding,
    Near,
    SchemaIndex,
    UnknownName,
    inside,
)
from acts_sql.sql._rewrite import BAD_SQL_ERRORS, differs, guarded, parses, render
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, all_dialects, get_dialect
from acts_sql.sql.languages.registry import plugin_for
from acts_sql.sql.query_text import normalize_sql

MAX_TRANSPILED = 3
"""At most this many transpiled candidates."""

_AUTO_MIN = 0.8
"""A name is replaced only by a candidate at least this similar..."""
_AUTO_MARGIN = 0.08
"""...that leads the runner-up by at least this much."""
_CONFIRMED_MIN = 0.75
_CONFIRMED_MARGIN = 0.02
"""The same for the name a database error complained about."""
_MAX_ROUNDS = 3
"""Repair rounds: a repaired table name lets the next round check its columns."""

# ------------------------------------------------------------------ public API


def reparse_in_dialect(sql: str, dialect: str | Dialect) -> str | None:
    """`sql` read leniently by sqlglot in `dialect` and written back in it.

    None when sqlglot cannot read it without losing something, or when the
    rendering is the same statement (same `normalize_sql` text).
    """
    d = get_dialect(dialect)
    return guarded(None, lambda: _reparse(sql, d))


def transpile_from_detected(sql: str, dialect: str | Dialect) -> list[tuple[str, str]]:
    """(source dialect, `sql` transpiled from it to `dialect`), at most `MAX_TRANSPILED`.

    Sources are the dialects whose characteristic tokens `sql` contains, or
    that parse it when `dialect` does not, most telling first. Outputs that
    normalise like the input, like `reparse_in_dialect`'s candidate or like an
    earlier output are left out.
    """
    d = get_dialect(dialect)
    return guarded([], lambda: _transpile_all(sql, d))


def unknown_identifiers(
    sql: str, dialect: str | Dialect, schema: dict[str, list[str]]
) -> list[UnknownName]:
    """Tables and columns of `sql` that `schema` lacks, each once, in text order.

    Empty when everything resolves, or when `sql` cannot be read at all.
    """
    d = get_dialect(dialect)
    return guarded([], lambda: _unknown(sql, d, schema))


def repair_identifiers(
    sql: str,
    dialect: str | Dialect,
    schema: dict[str, list[str]],
    error: str | None = None,
) -> str | None:
    """`sql` with each unknown table or column replaced by its clearly nearest name.

    `error` is the database's message, if any; the identifier it names is
    repaired even where the query alone cannot show it is unknown. None when
    nothing could be repaired.
    """
    d = get_dialect(dialect)
    return guarded(None, lambda: _repair(sql, d, schema, error))


def describe_unknown(names: list[UnknownName]) -> str:
    """One line per name, for a prompt:
    `column "usr_id" (table users) does not exist; nearest: user_id, orders.usr_id`."""
    return "\n".join(_describe_one(name) for name in names)


def has_top_level_order_by(sql: str, dialect: str | Dialect) -> bool:
    """Whether the last statement's outermost query has an ORDER BY (False if unparseable).

    For a query language plugin: whether the SQL it compiles to has one."""
    language = plugin_for(dialect)
    if language is not None:
        compiled = language.compiled_or_none(sql)
        return compiled is not None and has_top_level_order_by(*compiled)
    d = get_dialect(dialect)
    return guarded(False, lambda: _ordered(sql, d))


# ---------------------------------------------------------------- reparsing


def _reparse(sql: str, d: Dialect) -> str | None:
    """The lenient rendering of `sql` when it is another statement."""
    rendered = _lenient_render(sql, d)
    if rendered is None or not differs(rendered, sql, d):
        return None
    return rendered


def _lenient_render(sql: str, d: Dialect) -> str | None:
    """sqlglot's lenient reading of `sql`, written back; None when lossy or unparseable."""
    try:
        tokens = d.sqlglot_dialect.tokenize(sql)
    except SqlglotError:
        return None
    parser = d.sqlglot_dialect.parser(error_level=ErrorLevel.IGNORE)
    trees = parser.parse(tokens, sql)
    statements = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
    if not statements:
        return None
    rendered = render(statements, d, sql, d)
    broken = bool(parser.errors)  # read past errors: it may not make up what is missing
    if not parses(rendered, d) or not _keeps_content(tokens, rendered, d, adds=not broken):
        return None
    return rendered


_CLAUSE_TOKEN_NAMES = (
    "SELECT FROM WHERE GROUP_BY HAVING ORDER_BY JOIN UNION INTERSECT EXCEPT WITH ON DISTINCT"
    " AND OR NOT INSERT UPDATE DELETE SET VALUES"
)
_CLAUSE_TOKENS = frozenset(TokenType[name] for name in _CLAUSE_TOKEN_NAMES.split())
"""Keywords a faithful rewrite keeps (at least as often as the input has them)."""


def _keeps_content(tokens: list[Token], rendered: str, d: Dialect, *, adds: bool = True) -> bool:
    """Whether `rendered` has every name, literal and clause keyword of `tokens`; with
    `adds` False, also no literal or `CURRENT_...` value they lack (a statement cut off
    in the middle, `strftime('%Y',`, must not be completed with an invented argument; a
    function mapped from another dialect, which `adds` allows, may bring literals).

    Function names may change (sqlglot maps them between dialects).
    """
    try:
        new_tokens = d.sqlglot_dialect.tokenize(rendered)
    except SqlglotError:
        return False
    old_atoms, old_clauses = _inventory(tokens)
    new_atoms, new_clauses = _inventory(new_tokens)
    if old_atoms - new_atoms:
        return False
    # names may come new either way: keywords such as Oracle's ONLY read as names
    if not adds and any(not atom.startswith("name:") for atom in set(new_atoms) - set(old_atoms)):
        return False
    return all(new_clauses[kind] >= count for kind, count in old_clauses.items())


def _inventory(tokens: list[Token]) -> tuple[Counter[str], Counter[TokenType]]:
    """Names, strings, numbers and `CURRENT_...` values (multiset), and clause keywords
    (multiset)."""
    atoms: Counter[str] = Counter()
    clauses: Counter[TokenType] = Counter()
    for index, token in enumerate(tokens):
        kind = token.token_type
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        is_call = following is not None and following.token_type == TokenType.L_PAREN
        if kind in (TokenType.VAR, TokenType.IDENTIFIER) and not is_call:
            atoms[f"name:{token.text.lower()}"] += 1
        elif kind == TokenType.NUMBER or kind.name.endswith("STRING"):
            atoms[f"{kind.name}:{token.text}"] += 1
        elif kind.name.startswith("CURRENT_"):
            atoms[kind.name] += 1
        elif kind in _CLAUSE_TOKENS:
            clauses[kind] += 1
    return atoms, clauses


# -------------------------------------------------------------- transpiling

_PG_CAST = r"::"
_ILIKE = r"\bILIKE\b"
_DATE_TRUNC = r"\bDATE_TRUNC\s*\("
_IFNULL = r"\bIFNULL\s*\("
_GROUP_CONCAT = r"\bGROUP_CONCAT\s*\("
_TO_CHAR = r"\bTO_CHAR\s*\("
_NOW = r"\bNOW\s*\(\s*\)"
_DATEDIFF = r"\bDATEDIFF\s*\("

_MARKERS: dict[str, tuple[str, ...]] = {
    "mysql": (
        r"`",
        _IFNULL,
        r"\bLIMIT\s+\d+\s*,\s*\d+",
        r"\bDATE_FORMAT\s*\(",
        r"\bSTR_TO_DATE\s*\(",
        r"\bCURDATE\s*\(",
        _GROUP_CONCAT,
        r"\bDATE_(?:ADD|SUB)\s*\(",
        r"\bTIMESTAMPDIFF\s*\(",
        r"\bIF\s*\(",
        r"\bUNIX_TIMESTAMP\s*\(",
        _NOW,
        _DATEDIFF,
    ),
    "sqlserver": (
        r"\bTOP\s*\(?\s*\d+",
        r"\bISNULL\s*\(",
        r"\bGETDATE\s*\(",
        r"(?<![\w\]\)])\[[A-Za-z_][^\]\[]*\]",
        r"\bDATEADD\s*\(",
        r"\bDATEPART\s*\(",
        r"\bLEN\s*\(",
        r"\bCHARINDEX\s*\(",
        r"\bCONVERT\s*\(\s*\w+\s*,",
        r"\bSYSDATETIME\s*\(",
        _DATEDIFF,
    ),
    "postgresql": (
        _PG_CAST,
        _ILIKE,
        _DATE_TRUNC,
        r"\bSTRING_AGG\s*\(",
        r"\bDISTINCT\s+ON\b",
        r"\bGENERATE_SERIES\s*\(",
        r"\bINTERVAL\s+'",
        r"\bEXTRACT\s*\(\s*EPOCH\b",
        _TO_CHAR,
        _NOW,
    ),
    "oracle": (
        r"\bNVL2?\s*\(",
        r"\bROWNUM\b",
        r"\bSYSDATE\b",
        r"\bSYSTIMESTAMP\b",
        r"\bFROM\s+DUAL\b",
        r"\bTO_DATE\s*\(",
        r"\bDECODE\s*\(",
        r"\bLISTAGG\s*\(",
        r"\bADD_MONTHS\s*\(",
        r"\bMONTHS_BETWEEN\s*\(",
        _TO_CHAR,
    ),
    "sqlite": (
        r"\bSTRFTIME\s*\(\s*'",
        r"\bJULIANDAY\s*\(",
        r"\b(?:DATE|DATETIME|TIME)\s*\(\s*'now'",
        _IFNULL,
        _GROUP_CONCAT,
    ),
    "duckdb": (
        _PG_CAST,
        _ILIKE,
        _DATE_TRUNC,
        r"\bLIST_\w+\s*\(",
        r"\bEPOCH\s*\(",
        r"\bSTRUCT_PACK\s*\(",
    ),
}
"""Tokens and functions characteristic of each dialect (regular expressions)."""

_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)


def _markers_in(sql: str, dialect_names: Iterable[str]) -> set[str]:
    """The markers of the named dialects that occur in `sql` outside comments."""
    code = _COMMENTS.sub(" ", sql)
    patterns = {p for name in dialect_names for p in _MARKERS.get(name, ())}
    return {p for p in patterns if re.search(p, code, re.IGNORECASE)}


def _transpile_all(sql: str, d: Dialect) -> list[tuple[str, str]]:
    """Distinct transpilations from the plausible sources, new to the engine."""
    seen = {normalize_sql(sql, d)}
    reparsed = _reparse(sql, d)
    if reparsed is not None:
        seen.add(normalize_sql(reparsed, d))
    found: list[tuple[str, str]] = []
    for source in _plausible_sources(sql, d):
        text = _transpile(sql, source, d)
        if text is None:
            continue
        key = normalize_sql(text, d)
        if key in seen:
            continue
        seen.add(key)
        found.append((source.name, text))
        if len(found) >= MAX_TRANSPILED:
            break
    return found


def _plausible_sources(sql: str, d: Dialect) -> list[Dialect]:
    """Other dialects that parse `sql` and show signs of being its source, likeliest first."""
    target_parses = parses(sql, d)
    ranked: list[tuple[int, int, Dialect]] = []
    for order, other in enumerate(all_dialects()):
        if other.name == d.name:
            continue
        hits = len(_markers_in(sql, [other.name]))
        if (hits or not target_parses) and parses(sql, other):
            ranked.append((-hits, order, other))
    return [other for _, _, other in sorted(ranked, key=lambda item: item[:2])]


def _transpile(sql: str, source: Dialect, d: Dialect) -> str | None:
    """`sql` read in `source`, written in `d`; None when a foreign token survives
    (sqlglot left ROWNUM or GETDATE() as it was: the candidate would fail)."""
    text = render(parse_statements(sql, source), d, sql, source)
    if not parses(text, d):
        return None
    foreign = [name for name in _MARKERS if name != d.name]
    survivors = _markers_in(sql, foreign) & _markers_in(text, foreign)
    return None if survivors - set(_MARKERS.get(d.name, ())) else text


# --------------------------------------------------------- unknown and repair


@dataclass(frozen=True)
class _Rename:
    """An identifier to rewrite: its new name, and a qualifier to put before it."""

    ident: exp.Identifier
    name: str
    qualifier: exp.Identifier | None = None


def _clear_choice(ranked: list[Near], confirmed: bool) -> Near | None:
    """The best near name when it fits in place and clearly beats the runner-up."""
    minimum, margin = (
        (_CONFIRMED_MIN, _CONFIRMED_MARGIN) if confirmed else (_AUTO_MIN, _AUTO_MARGIN)
    )
    if not ranked or not ranked[0].local or ranked[0].score < minimum:
        return None
    if len(ranked) > 1 and ranked[0].score - ranked[1].score < margin:
        return None
    return ranked[0]


_RESERVED_WORDS = (
    "all alter and any as asc between by case check column constraint create cross current"
    " default delete desc distinct drop else end except exists false fetch for foreign from"
    " full grant group having in inner insert intersect into is join key leading left like"
    " limit natural not null of offset on only or order outer primary references right row"
    " rows select session set some table then to trailing true union unique update using"
    " values when where window with"
)
_RESERVED = frozenset(_RESERVED_WORDS.split())
"""Words reserved in most engines even where sqlglot reads them as names: a
replacement name that is one of them (or a pseudo-column) is quoted."""


def _readable(sql: str, d: Dialect) -> tuple[str, list[exp.Expr]] | None:
    """The text to work on and its trees: `sql` itself, or its lenient rendering."""
    try:
        return sql, parse_statements(sql, d)
    except BAD_SQL_ERRORS:
        pass
    rendered = _lenient_render(sql, d)
    if rendered is None:
        return None
    return rendered, parse_statements(rendered, d)


def _unknown(sql: str, d: Dialect, schema: dict[str, list[str]]) -> list[UnknownName]:
    readable = _readable(sql, d) if schema else None  # an empty schema knows nothing
    if readable is None:
        return []
    text, statements = readable
    findings = Analyzer(SchemaIndex(schema, d), d, text).run(statements)
    first: dict[tuple[str, str, str], UnknownName] = {}
    for finding in sorted(findings, key=_position):
        u = finding.unknown
        first.setdefault((u.kind, u.name.lower(), (u.table or "").lower()), u)
    return list(first.values())


def _position(finding: Finding) -> int:
    """Where the finding is written (0 when unknown), to report in text order."""
    start = finding.ident.meta.get("start")
    return start if isinstance(start, int) else 0


def _repair(sql: str, d: Dialect, schema: dict[str, list[str]], error: str | None) -> str | None:
    readable = _readable(sql, d) if schema else None
    if readable is None:
        return None
    text, statements = readable
    index = SchemaIndex(schema, d)
    confirmed = _error_identifier(error) if error else None
    changed = False
    for _ in range(_MAX_ROUNDS):
        findings = Analyzer(index, d, text, confirmed).run(statements)
        renames = _renames(findings, statements)
        if not renames:
            break
        text = _apply(text, renames, statements, d)
        statements = parse_statements(text, d)
        changed = True
    if not changed or not differs(text, sql, d):
        return None
    return text


def _renames(findings: list[Finding], statements: list[exp.Expr]) -> dict[int, _Rename]:
    """id(identifier) -> its rename, for every clearly repairable finding that is a
    misspelling (`_spelling_slips`), not a name the statement defines elsewhere."""
    renames: dict[int, _Rename] = {}
    chosen = []
    for finding in findings:
        choice = _clear_choice(finding.ranked, finding.confirmed)
        if choice is not None:
            chosen.append((finding, choice))
    for finding, choice in _spelling_slips(chosen, statements):
        renames[id(finding.ident)] = _Rename(finding.ident, choice.name, choice.qualifier)
        if finding.unknown.kind == "table":
            _rename_qualifiers(finding.ident, choice.name, statements, renames)
    return renames


def _spelling_slips(
    chosen: list[tuple[Finding, Near]], statements: list[exp.Expr]
) -> list[tuple[Finding, Near]]:
    """The renames that fix a misspelling. Left out: a name the statement defines elsewhere
    (a column alias or a CTE's or derived table's column list, other than the one the name
    stands in: written in the wrong scope, not misspelt; `SET seqnr = new_seqnr` with
    `new_seqnr` a CTE's column must not become `seqnr = seqnr`), and distinct names that
    would all become one (`uuid1, uuid2, uuid3` are three things, not three misspellings of
    `uuid`)."""
    written_for: dict[tuple[int, str, str], set[str]] = {}
    for finding, choice in chosen:
        key = (_statement_index(finding.ident, statements), finding.unknown.kind, choice.name)
        written_for.setdefault(key, set()).add(str(finding.ident.this).lower())
    kept = []
    for finding, choice in chosen:
        index = _statement_index(finding.ident, statements)
        key = (index, finding.unknown.kind, choice.name)
        if len(written_for[key]) > 1:
            continue
        if index >= 0 and _defined_elsewhere(finding.ident, statements[index]):
            continue
        kept.append((finding, choice))
    return kept


def _defined_elsewhere(ident: exp.Identifier, statement: exp.Expr) -> bool:
    """Whether `statement` defines the name `ident` writes, as a column alias or in a column
    list, somewhere other than around `ident` itself (`avg(CL) AS cl` defines `cl` around
    the `CL` it averages: that is no other definition)."""
    written = str(ident.this).lower()
    for alias in statement.find_all(exp.Alias):
        if alias.alias.lower() == written and not inside(ident, alias):
            return True
    return any(
        column.name.lower() == written
        for table_alias in statement.find_all(exp.TableAlias)
        for column in table_alias.columns
    )


def _statement_index(ident: exp.Identifier, statements: list[exp.Expr]) -> int:
    return next((i for i, s in enumerate(statements) if ident is s or inside(ident, s)), -1)


def _rename_qualifiers(
    ident: exp.Identifier,
    new: str,
    statements: list[exp.Expr],
    renames: dict[int, _Rename],
) -> None:
    """An unaliased table renamed: columns qualified by its old name follow it."""
    table = ident.parent
    if not isinstance(table, exp.Table) or table.alias or table.this is not ident:
        return
    old = str(ident.this).lower()
    statement = next((s for s in statements if inside(ident, s) or s is table), None)
    if statement is None:
        return
    named_alike = [
        t
        for t in statement.find_all(exp.Table, exp.TableAlias)
        if t is not table
        and (t.alias_or_name if isinstance(t, exp.Table) else t.name).lower() == old
    ]
    if named_alike:
        return
    for column in statement.find_all(exp.Column):
        qualifier = column.args.get("table")
        if isinstance(qualifier, exp.Identifier) and str(qualifier.this).lower() == old:
            renames.setdefault(id(qualifier), _Rename(qualifier, new))


def _apply(
    text: str,
    renames: dict[int, _Rename],
    statements: list[exp.Expr],
    d: Dialect,
) -> str:
    """`text` with the renamed identifiers rewritten in place, the rest untouched.

    When an identifier cannot be located in the text, the statements are
    regenerated by sqlglot instead.
    """
    edits: list[tuple[int, int, str]] = []
    for rename in renames.values():
        span = _span(text, rename.ident)
        if span is None:
            return _regenerate(renames, statements, d, text)
        start, end = span
        written = _written(rename.name, rename.ident, text[start : end + 1], d)
        if rename.qualifier is not None:
            written = f"{d.generate(rename.qualifier)}.{written}"
        edits.append((start, end, written))
    edits.sort()
    if any(a[1] >= b[0] for a, b in pairwise(edits)):
        return _regenerate(renames, statements, d, text)
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end + 1 :]
    return text


def _span(text: str, ident: exp.Identifier) -> tuple[int, int] | None:
    """Where `ident` is written in `text` (inclusive), if its position checks out."""
    start, end = ident.meta.get("start"), ident.meta.get("end")
    if not isinstance(start, int) or not isinstance(end, int) or end < start:
        return None
    raw = text[start : end + 1]
    name = str(ident.this)
    if ident.quoted:
        if len(raw) < 2:
            return None
        close = raw[-1]
        return (start, end) if raw[1:-1].replace(close * 2, close) == name else None
    return (start, end) if raw.lower() == name.lower() else None


def _written(new: str, ident: exp.Identifier, raw: str, d: Dialect) -> str:
    """`new` written where `raw` was: with the same quotes, or bare where that is safe."""
    if ident.quoted:
        open_quote, close_quote = raw[0], raw[-1]
        return open_quote + new.replace(close_quote, close_quote * 2) + close_quote
    if not _bare_safe(new, d):
        return d.quote_identifier(new)
    if d.name == "oracle" and raw.islower():
        return new.lower()  # Oracle folds bare names to upper case: keep the user's style
    return new


def _bare_safe(name: str, d: Dialect) -> bool:
    """Whether `name` may be written without quotes in `d` and still mean `name`."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return False
    if d.name == "postgresql" and name != name.lower():
        return False
    if d.name == "oracle" and name != name.upper():
        return False
    lowered = name.lower()
    if lowered in _RESERVED or lowered in PSEUDO_COLUMNS:
        return False
    return _reads_as_column(name, d.name)


@lru_cache(maxsize=4096)
def _reads_as_column(name: str, dialect: str) -> bool:
    """Whether `SELECT name FROM t` reads `name` as a plain column (not a keyword)."""
    try:
        statements = parse_statements(f"SELECT {name} FROM t", dialect)
    except BAD_SQL_ERRORS:
        return False
    select = statements[0] if len(statements) == 1 else None
    if not isinstance(select, exp.Select) or len(select.expressions) != 1:
        return False
    column = select.expressions[0]
    return isinstance(column, exp.Column) and column.name == name and not column.table


def _regenerate(
    renames: dict[int, _Rename],
    statements: list[exp.Expr],
    d: Dialect,
    text: str,
) -> str:
    """The statements written by sqlglot after renaming the identifiers in the trees."""
    for rename in renames.values():
        ident = rename.ident
        ident.set("this", rename.name)
        if not ident.quoted and not _bare_safe(rename.name, d):
            ident.set("quoted", True)
        if rename.qualifier is not None and isinstance(ident.parent, exp.Column):
            ident.parent.set("table", rename.qualifier.copy())
    return render(statements, d, text, d)


# ----------------------------------------------------------- database errors

_ERROR_PATTERNS: tuple[tuple[Literal["table", "column"], str], ...] = (
    # SQLite
    ("column", r"no such column:\s*(?P<name>[^\s,;]+)"),
    ("table", r"no such table:\s*(?P<name>[^\s,;]+)"),
    # PostgreSQL
    (
        "column",
        r"column\s+(?P<name>\"[^\"]+\"|[\w.$]+)(?:\s+of relation\s+\S+)?\s+does not exist",
    ),
    ("table", r"relation\s+(?P<name>\"[^\"]+\"|[\w.$]+)\s+does not exist"),
    ("table", r"missing FROM-clause entry for table\s+(?P<name>\"[^\"]+\"|[\w$]+)"),
    # MySQL / MariaDB
    ("column", r"Unknown column\s+'(?P<name>[^']+)'"),
    ("table", r"Table\s+'(?P<name>[^']+)'\s+doesn't exist"),
    # DuckDB
    ("column", r"Referenced column\s+\"(?P<name>[^\"]+)\"\s+not found"),
    ("column", r"does not have a column named\s+\"(?P<name>[^\"]+)\""),
    ("table", r"Table with name\s+(?P<name>[^\s!]+)\s+does not exist"),
    # SQL Server
    ("column", r"Invalid column name\s+'(?P<name>[^']+)'"),
    ("table", r"Invalid object name\s+'(?P<name>[^']+)'"),
    # Oracle
    ("column", r"ORA-00904:\s*(?P<name>[^:\s]+):\s*invalid identifier"),
)
"""(kind, pattern with a `name` group) of the usual "no such table/column" messages."""

_ERROR_SHAPES = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _ERROR_PATTERNS
)


def _error_identifier(error: str) -> ErrorName | None:
    """The table or column a database error message says does not exist, if any.

    `no such column: u.usr_id` gives column `usr_id` with qualifier `u`;
    a table's schema prefix (`public.foo`, `shop.foo`) is dropped.
    """
    for kind, pattern in _ERROR_SHAPES:
        match = pattern.search(error)
        parts = _name_parts(match["name"]) if match else []
        if not parts:
            continue
        if kind == "table":  # PostgreSQL quotes a schema-qualified name whole
            return ErrorName("table", parts[-1].rsplit(".", 1)[-1])
        qualifier = parts[-2] if len(parts) > 1 else None
        return ErrorName("column", parts[-1], qualifier)
    return None


_NAME_PART = re.compile(r'"([^"]+)"|`([^`]+)`|\[([^\]]+)\]|([^."`\[\]]+)')


def _name_parts(written: str) -> list[str]:
    """`u.usr_id`, `"U"."USR_ID"` or `[dbo].[t]` as its dot-separated names, unquoted."""
    return ["".join(groups) for groups in _NAME_PART.findall(written) if "".join(groups).strip()]


# ------------------------------------------------------------------ prompts


def _describe_one(name: UnknownName) -> str:
    """One prompt line for one unknown name."""
    where = f" (table {name.table})" if name.kind == "column" and name.table else ""
    nearest = f"nearest: {', '.join(name.nearest)}" if name.nearest else "no similar name"
    return f'{name.kind} "{name.name}"{where} does not exist; {nearest}'


# ----------------------------------------------------------------- ordering


def _ordered(sql: str, d: Dialect) -> bool:
    """See `has_top_level_order_by`; raises on unparseable text."""
    statements = parse_statements(sql, d)
    if not statements:
        return False
    node: exp.Expr | None = statements[-1]
    while isinstance(node, exp.Subquery):
        if node.args.get("order") is not None:
            return True
        node = node.this
    if isinstance(node, exp.Select | exp.SetOperation):
        return node.args.get("order") is not None
    return False
