"""Which identifiers a SQL text may hold: the schema's names, its own aliases, and words
the lexer cannot rule out (keywords, functions, types).

:class:`NameRules` judges a SQL text that grows: given the text written so far
and what a new token adds, :meth:`NameRules.allows` says whether every
identifier the new characters build or complete can still be one of the
schema's table or column names (case-insensitive, quoted ones too) or an alias
the statement defined before (``AS x``, ``FROM t x``, CTE names, derived-table
aliases, a CTE's column list). Keywords, functions, literals, parameters,
operators and punctuation are never refused, and neither is anything the lexer
is unsure of (the module's rules below); the rules refuse only what cannot be
valid:

- a word is judged when it grows (its prefix must start a name, an alias, a
  keyword or a function) and when the first character after it is written
  (then it must be one of them, or be followed by ``(`` (a call), ``'`` (a
  typed literal such as ``N'x'``) or ``.`` (a qualifier));
- a qualifier (``x.``) must be a name or an alias, except inside a SELECT list
  whose FROM clause is not written yet, where it may be an alias defined
  later (``SELECT T1.a FROM t AS T1``); there a word is only judged once it
  is complete, and only when a name, keyword or alias starts with it (it may
  grow into one): any other word may be a column that a later derived table
  or CTE defines;
- a word right after ``AS``, ``WITH``, ``WINDOW``, ``OVER``, ``::``, after a
  complete operand (``FROM t x``, ``SELECT a b``, ``) d``) or inside the
  column list of a CTE or derived table defines a name: never refused, and
  remembered as an alias;
- ``[...]`` and double-quoted text after a comparison (a string in SQLite
  and MySQL) are literals; statements that do not start with SELECT, WITH,
  INSERT, UPDATE, DELETE, VALUES or ``(`` (DDL, PRAGMA, ...) are not judged.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from acts_sql.sql.safety_rules.functions import generated

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*(?:'|\Z))
  | (?P<qident>"(?:[^"]|"")*(?:"|\Z)|`[^`]*(?:`|\Z))
  | (?P<bracket>\[[^\]]*(?:\]|\Z))
  | (?P<number>0[xX][0-9a-fA-F]*|\d+(?:\.\d*)?(?:[eE][+-]?\d*)?|\.\d+(?:[eE][+-]?\d*)?)
  | (?P<word>[^\W\d]\w*(?:\$\w*)*)
  | (?P<param>[:@$?]\w*)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)

JUDGED_STARTS = frozenset({"select", "with", "insert", "update", "delete", "values", "replace"})
"""First words of the statements whose identifiers are judged."""
DEFINING_KEYWORDS = frozenset({"as", "with", "recursive", "window", "over"})
"""Keywords after which a word defines a name (or may: ``OVER w``)."""
OPERAND_KEYWORDS = frozenset(
    {"end", "null", "true", "false", "current_date", "current_time", "current_timestamp"}
)
"""Keywords that end an operand: a word after them may be an alias (``CASE ... END total``)."""
VALUE_BEFORE = frozenset({"=", "<", ">", "!", "like", "glob", "ilike", "regexp", "in", "then"})
"""After these a double-quoted text may be a string (SQLite, MySQL): not judged."""
EXTRA_WORDS = (
    "rowid oid _rowid_ excluded new old dual main temp public information_schema pg_catalog "
    "sqlite_master sqlite_schema sqlite_sequence sqlite_temp_master"
)
"""Names every database has."""


@functools.cache
def sql_vocabulary() -> tuple[str, ...]:
    """Keywords and function names of every dialect sqlglot knows, and the function names
    of the engines themselves (`engine_functions`), casefolded and sorted."""
    import sqlglot.expressions as exp
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.tokens import Tokenizer

    words: set[str] = set(EXTRA_WORDS.split()) | set(_EXTRA_FUNCTIONS.split())
    words.update(engine_functions())
    keyword_maps = [Tokenizer.KEYWORDS]
    function_maps = []
    for dialect in Dialect.classes.values():
        keyword_maps.append(dialect.tokenizer_class.KEYWORDS)
        function_maps.append(dialect.parser_class.FUNCTIONS)
    for keywords in keyword_maps:
        for key in keywords:
            words.update(w.casefold() for w in re.findall(r"[A-Za-z_]\w*", key))
    for functions in function_maps:
        words.update(name.casefold() for name in functions)
    for func in exp.ALL_FUNCTIONS:
        words.update(name.casefold() for name in func.sql_names())
    return tuple(sorted(words))


def engine_functions() -> set[str]:
    """Function names sqlglot does not model but the engines have (`json_each`,
    `jsonb_array_elements`, ...): the read guard's generated lists for PostgreSQL (with
    PostGIS) and DuckDB, and the SQLite library's own list. Without them a model writing
    `FROM t, json_each(...)` is refused at `json_ea` and left to write garbage."""
    names = set(generated("postgresql")) | set(generated("duckdb"))
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as conn:
            names.update(row[0] for row in conn.execute("PRAGMA function_list"))
    except sqlite3.Error:  # a SQLite without the pragma (before 3.30): sqlglot's names only
        pass
    return {name.casefold() for name in names}


_EXTRA_FUNCTIONS = (
    "julianday strftime printf ifnull group_concat substr instr total likelihood unlikely "
    "iif char unicode zeroblob randomblob last_insert_rowid changes total_changes typeof "
    "date_part date_trunc to_char to_date to_timestamp string_agg array_agg generate_series "
    "year month day hour minute second week quarter epoch dow doy isodow interval "
    "integer int real text blob numeric decimal varchar char double precision float boolean "
    "bigint smallint timestamp timestamptz date time signed unsigned nulls first last"
)


@dataclass(frozen=True)
class Lexeme:
    kind: str
    text: str
    start: int
    end: int


def lex(text: str) -> list[Lexeme]:
    """The tokens of `text`; the last one may be unterminated (a string being written)."""
    return [Lexeme(str(m.lastgroup), m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def unquoted(lexeme: Lexeme) -> str:
    """A quoted identifier's name (its quotes and doubled quotes resolved)."""
    text = lexeme.text
    quote = text[0]
    body = text[1:-1] if len(text) > 1 and text.endswith(quote) else text[1:]
    return body.replace(quote * 2, quote) if quote == '"' else body


class NameSet:
    """The names a statement may use: the schema's, plus the vocabulary, by prefix."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(n.casefold() for n in names if n)
        self.sorted_names = tuple(sorted(self.names))
        self.vocabulary = sql_vocabulary()
        self.words = frozenset(self.vocabulary)

    def is_name(self, word: str) -> bool:
        return word.casefold() in self.names

    def is_word(self, word: str) -> bool:
        """A keyword, a function or a name every database has."""
        return word.casefold() in self.words

    def starts_name(self, prefix: str) -> bool:
        return _starts(self.sorted_names, prefix.casefold())

    def starts_word(self, prefix: str) -> bool:
        return _starts(self.vocabulary, prefix.casefold())


def _starts(sorted_words: Sequence[str], prefix: str) -> bool:
    at = bisect.bisect_left(sorted_words, prefix)
    return at < len(sorted_words) and sorted_words[at].startswith(prefix)


@dataclass
class _Level:
    """One parenthesis level: in a SELECT list before its FROM; a list of new names."""

    select_list: bool = False
    defines: bool = False
    values: bool = False


@dataclass
class _State:
    aliases: set[str] = field(default_factory=set)
    levels: list[_Level] = field(default_factory=lambda: [_Level()])
    previous: Lexeme | None = None
    previous_role: str = "start"
    """``start``, ``keyword``, ``operand``, ``define``, ``dot``, ``punct``, ``value``."""
    qualifier: str | None = None
    """The word or quoted name before the last dot."""
    judged: bool | None = None
    """Whether the statement's identifiers are judged (None: its first word is to come)."""
    in_with: bool = False


class NameRules:
    """Judges the identifiers of a growing SQL text (see the module doc)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = NameSet(names)

    def allows(self, text: str, boundary: int, closed: bool = False) -> bool:
        """Whether `text`, of which the characters from `boundary` on are new, is still
        valid. `closed`: the text ends here (the code block or JSON string closed)."""
        lexemes = lex(text)
        state = _State()
        for index, lexeme in enumerate(lexemes):
            following = _next_significant(lexemes, index)
            if not self._judge(state, lexeme, following, len(text), boundary, closed):
                return False
            self._advance(state, lexeme, following)
        return True

    def _judge(
        self,
        state: _State,
        lexeme: Lexeme,
        following: Lexeme | None,
        length: int,
        boundary: int,
        closed: bool,
    ) -> bool:
        if lexeme.kind not in ("word", "qident") or state.judged is False:
            return True
        at_end = lexeme.end == length and not closed
        if lexeme.kind == "word" and state.judged is None:
            return True  # the statement's first word
        if at_end:
            if lexeme.end <= boundary:
                return True
            return self._prefix_ok(state, lexeme)
        if lexeme.end < boundary:
            return True  # judged when the character after it was written
        return self._complete_ok(state, lexeme, following)

    def _free(self, state: _State, lexeme: Lexeme) -> bool:
        """Whether a word here defines a name or is something the rules do not judge."""
        role = state.previous_role
        if role in ("define", "cast") or state.levels[-1].defines or _defining(state):
            return True
        if role == "dot" and self._forward_qualifier(state):
            return True
        if role == "operand" and lexeme.kind == "word":
            return True
        if lexeme.kind == "qident" and lexeme.text.startswith('"'):
            previous = state.previous
            after_operator = previous is not None and previous.text.casefold() in VALUE_BEFORE
            return after_operator or state.levels[-1].values
        return False

    def _forward_qualifier(self, state: _State) -> bool:
        """Whether the qualifier before the dot is an alias not defined yet."""
        qualifier = state.qualifier
        if qualifier is None:
            return False
        return not (self.names.is_name(qualifier) or qualifier.casefold() in state.aliases)

    def _forward(self, state: _State) -> bool:
        """Whether a qualifier may name an alias the statement defines later."""
        return any(level.select_list for level in state.levels)

    def _prefix_ok(self, state: _State, lexeme: Lexeme) -> bool:
        if self._free(state, lexeme):
            return True
        names = self.names
        if lexeme.kind == "qident":
            prefix = unquoted(lexeme)
            dotted = state.previous_role == "dot"
            return (
                names.starts_name(prefix)
                or any(a.startswith(prefix.casefold()) for a in state.aliases)
                or (not dotted and self._forward(state))
            )
        word = lexeme.text
        if state.previous_role != "dot" and self._forward(state):
            return True
        folded = word.casefold()
        return (
            names.starts_name(word)
            or names.starts_word(word)
            or any(a.startswith(folded) for a in state.aliases)
        )

    def _complete_ok(self, state: _State, lexeme: Lexeme, following: Lexeme | None) -> bool:
        if self._free(state, lexeme):
            return True
        name = unquoted(lexeme) if lexeme.kind == "qident" else lexeme.text
        folded = name.casefold()
        if self.names.is_name(name) or folded in state.aliases:
            return True
        after = following.text if following is not None else ""
        if after == ".":
            return self._forward(state) or self.names.is_word(name)
        if lexeme.kind == "qident":
            return False
        if after == "(" or (following is not None and following.kind == "string"):
            return True
        if self.names.is_word(name):
            return True
        return self._unknowable(state, lexeme)

    def _unknowable(self, state: _State, lexeme: Lexeme) -> bool:
        """A bare word in a SELECT list whose FROM is not written yet, that no name, keyword
        or alias starts with: it may be a column a later derived table or CTE defines
        (``SELECT SUM(total) FROM (SELECT ... AS total ...)``), and refusing its end would
        leave the model only tokens that grow it into nothing valid (``total_costWHERE``);
        so it may end, and the database judges it."""
        if lexeme.kind != "word" or state.previous_role == "dot" or not self._forward(state):
            return False
        word, names = lexeme.text, self.names
        folded = word.casefold()
        return not (
            names.starts_name(word)
            or names.starts_word(word)
            or any(a.startswith(folded) for a in state.aliases)
        )

    def _advance(self, state: _State, lexeme: Lexeme, following: Lexeme | None) -> None:
        kind = lexeme.kind
        if kind in ("ws", "comment"):
            return
        if state.judged is None and kind == "word":
            state.judged = lexeme.text.casefold() in JUDGED_STARTS
        elif state.judged is None and lexeme.text == "(":
            state.judged = True
        role = self._role(state, lexeme, following)
        if role == "define" and kind in ("word", "qident"):
            state.aliases.add((unquoted(lexeme) if kind == "qident" else lexeme.text).casefold())
        if lexeme.text == "." and state.previous is not None:
            previous = state.previous
            state.qualifier = unquoted(previous) if previous.kind == "qident" else previous.text
        if kind == "punct":
            self._punct(state, lexeme)
        elif kind == "word":
            self._keyword(state, lexeme.text.casefold())
        state.previous, state.previous_role = lexeme, role

    def _role(self, state: _State, lexeme: Lexeme, following: Lexeme | None) -> str:
        kind, folded = lexeme.kind, lexeme.text.casefold()
        if kind in ("word", "qident"):
            keyword = kind == "word" and self._is_keyword(folded)
            if self._free(state, lexeme) and state.previous_role != "dot" and not keyword:
                return "define"
            if kind == "word" and self._is_keyword(folded):
                return "operand" if folded in OPERAND_KEYWORDS else "keyword"
            return "operand"
        if kind in ("string", "number", "bracket", "param"):
            return "operand"
        if lexeme.text == ")":
            return "operand"
        if lexeme.text == ".":
            return "dot"
        if lexeme.text == ":" and state.previous is not None and state.previous.text == ":":
            return "cast"
        if lexeme.text in ("=", "<", ">", "!"):
            return "value"
        return "punct"

    def _is_keyword(self, folded: str) -> bool:
        return self.names.is_word(folded) and folded not in self.names.names

    def _punct(self, state: _State, lexeme: Lexeme) -> None:
        text = lexeme.text
        if text == "(":
            defines = state.previous_role == "define" and state.previous is not None
            values = state.previous is not None and state.previous.text.casefold() == "in"
            state.levels.append(_Level(defines=defines, values=values))
        elif text == ")" and len(state.levels) > 1:
            state.levels.pop()
        elif text == ";":
            state.aliases.clear()
            state.levels = [_Level()]
            state.judged = None
            state.in_with = False

    def _keyword(self, state: _State, folded: str) -> None:
        level = state.levels[-1]
        if folded == "select":
            level.select_list = True
            if len(state.levels) == 1:
                state.in_with = False
        elif folded in ("from", "where", "group", "order", "having", "limit", "union"):
            level.select_list = False
        elif folded == "with":
            state.in_with = True


def _defining(state: _State) -> bool:
    """Whether the previous token makes the next word a new name (``AS x``, ``WITH x``,
    ``, x`` between CTEs)."""
    previous = state.previous
    if previous is None:
        return False
    if state.previous_role == "keyword" and previous.text.casefold() in DEFINING_KEYWORDS:
        return True
    return state.in_with and len(state.levels) == 1 and previous.text == ","


def _next_significant(lexemes: Sequence[Lexeme], index: int) -> Lexeme | None:
    for lexeme in lexemes[index + 1 :]:
        if lexeme.kind not in ("ws", "comment"):
            return lexeme
    return None
