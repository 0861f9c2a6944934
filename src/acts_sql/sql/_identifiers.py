"""Tables and columns a statement names that the schema lacks, and the nearest names.

The machinery behind `acts_sql.sql.repairs.unknown_identifiers` and
`repair_identifiers` (see there for what it covers and its limits): sqlglot's
scopes say which tables, CTEs, derived tables and aliases each part of a
query sees; `Analyzer` checks every table and column against them and the
schema, and ranks the schema's names by similarity for each unknown one.
Pure: no I/O.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from acts_sql.sql.dialects import Dialect

MAX_NEAREST = 3
"""At most this many nearest names per unknown name."""
_NEAR_CUTOFF = 0.7
"""Similarity (0..1) below which a schema name is not offered as near."""
_OTHER_TABLE_WEIGHT = 0.9
"""A column of a table not in the query ranks below an equally close one in it."""
_PREFIX_WEIGHT = 0.92
"""A match found by ignoring the table's name as a prefix (`room_name`, `name`)."""


class UnknownName(BaseModel):
    """A table or column the schema does not have, with the nearest schema names."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The name as written (without quotes)."""
    kind: Literal["table", "column"]
    """"table" also covers a qualifier that names no table or alias in scope."""
    table: str | None = None
    """For a column: the table it was looked up in (aliases resolved), when one."""
    nearest: list[str] = Field(default_factory=list)
    """Nearest names, best first: `name`; `alias.name` for a name in several of
    the query's tables; `table.name` for a column of a table the query does not use."""


# ------------------------------------------------------------ nearest names


@lru_cache(maxsize=65536)
def _compact(name: str) -> str:
    """Lower case without separators: `userId`, `user_id` and `USER_ID` are alike."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _singular(word: str) -> str:
    """A crude English singular of the last word: `categories` -> `category`."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 2:
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def _similarity(written: str, candidate: str, table: str | None = None) -> float:
    """How close a schema name is to what was written, 0..1 (1: identical).

    With the candidate's `table`, the table's name (or its singular) as a
    prefix of either side is also ignored: `room_name` is near `name` in rooms.
    """
    score = _plain_similarity(written, candidate)
    if table is None:
        return score
    for a, b in (
        (_strip_prefix(written, table), candidate),
        (written, _strip_prefix(candidate, table)),
    ):
        if (a, b) != (written, candidate):
            score = max(score, _PREFIX_WEIGHT * _plain_similarity(a, b))
    return score


def _strip_prefix(name: str, table: str) -> str:
    """`name` without a leading `table_`, `tables_` or `tableName` part."""
    low = name.lower()
    for prefix in sorted({table.lower(), _singular(table.lower())}, key=len, reverse=True):
        rest = len(prefix)
        if low.startswith(prefix + "_") and len(name) > rest + 1:
            return name[rest + 1 :]
        if low.startswith(prefix) and len(name) > rest and name[rest].isupper():
            return name[rest:]
    return name


@lru_cache(maxsize=65536)
def _plain_similarity(written: str, candidate: str) -> float:
    """`_similarity` without table prefixes."""
    if written == candidate:
        return 1.0
    low_a, low_b = written.lower(), candidate.lower()
    if low_a == low_b:
        return 0.99
    a, b = _compact(written), _compact(candidate)
    if a == b:
        return 0.97
    if a and _singular(a) == _singular(b):
        return 0.95
    return max(_ratio(low_a, low_b), _ratio(a, b))


def _ratio(a: str, b: str) -> float:
    """difflib's ratio, 0.0 early when it cannot reach the cutoff."""
    if 2 * min(len(a), len(b)) < _NEAR_CUTOFF * (len(a) + len(b)):
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < _NEAR_CUTOFF or matcher.quick_ratio() < _NEAR_CUTOFF:
        return 0.0
    return matcher.ratio()


@dataclass(frozen=True)
class _Option:
    """A schema name that may be meant."""

    text: str
    """How it is shown: `name`, or `table.name` when it cannot replace the name in place."""
    name: str
    table: str | None = None
    """The table it belongs to, whose name may prefix what was written."""
    weight: float = 1.0
    local: bool = True
    """Whether it can replace the written name (with `qualifier`, if any)."""
    qualifier: exp.Identifier | None = None
    """Written before the name when used in place: the name is in several sources."""


@dataclass(frozen=True)
class Near:
    """A ranked option: display text, score, and how it replaces the name in place."""

    text: str
    score: float
    local: bool
    name: str
    qualifier: exp.Identifier | None = None


def _rank(written: str, options: Iterable[_Option], *, folded: bool = False) -> list[Near]:
    """The options near `written`, best first (each text once, at its best score).

    `folded`: the dialect folds `written` to another case, so a name spelt exactly as
    written is an option too (PostgreSQL reads a bare `CL` as `cl`; it means `"CL"`)."""
    found: dict[str, Near] = {}
    for option in options:
        if option.local and option.name == written and not folded:
            continue
        score = _similarity(written, option.name, option.table) * option.weight
        best = found.get(option.text)
        if score >= _NEAR_CUTOFF and (best is None or score > best.score):
            found[option.text] = Near(
                option.text, score, option.local, option.name, option.qualifier
            )
    return sorted(found.values(), key=lambda near: (-near.score, near.text))


def _in_place(names: Iterable[str], table: str | None = None) -> list[_Option]:
    """Options that can replace the written name as they are."""
    return [_Option(name, name, table) for name in names]


def _prefixed(pairs: Iterable[tuple[str, str, str]], weight: float = 1.0) -> list[_Option]:
    """(prefix, name, table) options shown as `prefix.name`, never used in place."""
    return [
        _Option(f"{prefix}.{name}", name, table, weight, False) for prefix, name, table in pairs
    ]


# --------------------------------------------------------------- the schema


_SYSTEM_TABLES = frozenset(
    {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_sequence", "dual"}
)
_SYSTEM_SCHEMAS = frozenset(
    {"information_schema", "pg_catalog", "sys", "mysql", "performance_schema", "temp"}
)
_PSEUDO_COLUMN_WORDS = (
    "rowid _rowid_ oid ctid xmin xmax cmin cmax tableoid rownum level sysdate systimestamp"
    " current_date current_time current_timestamp current_user session_user user localtimestamp"
)
PSEUDO_COLUMNS = frozenset(_PSEUDO_COLUMN_WORDS.split())
"""Names that parse as columns but are provided by the database."""
_SEQUENCE_CALLS = frozenset({"nextval", "currval"})
_FOLDED = {"postgresql": str.lower, "oracle": str.upper}
"""Dialects whose names match with the same case: a quoted name as written, a bare one
folded (PostgreSQL to lower case, Oracle to upper case)."""


def _same_name(written: exp.Identifier, actual: str, d: Dialect, *, stored: bool = True) -> bool:
    """Whether the identifier as written names `actual`: a schema name as the database
    stores it (in PostgreSQL a bare `experiment` does not name the table `"Experiment"`),
    or with `stored` False a name as the query's text writes it (a CTE's column), which a
    bare reference matches in any case."""
    fold = _FOLDED.get(d.name)
    if fold is None:
        return str(written.this).lower() == actual.lower()
    if written.quoted:
        return written.this == actual
    if stored:
        return fold(str(written.this)) == actual
    return str(written.this).lower() == actual.lower()


class SchemaIndex:
    """The schema's tables and columns, looked up as the dialect would."""

    def __init__(self, schema: dict[str, list[str]], d: Dialect) -> None:
        self.schema = schema
        self.d = d

    def table(self, table: exp.Table) -> str | None:
        """The schema key `table` names; None when none does."""
        ident = table.this
        if not isinstance(ident, exp.Identifier):
            return None
        qualified = f"{table.db}.{table.name}".lower() if table.db else None
        matches = [
            key
            for key in self.schema
            if _same_name(ident, key.rsplit(".", 1)[-1], self.d)
            and (qualified is None or "." not in key or key.lower() == qualified)
        ]
        return matches[0] if matches else None

    def display(self, key: str) -> str:
        """A table's name without its schema."""
        return key.rsplit(".", 1)[-1]

    def other_columns(self, exclude: set[str]) -> list[_Option]:
        """Every column of the tables not in `exclude`, as `table.column` options."""
        pairs = (
            (self.display(key), column, self.display(key))
            for key, columns in self.schema.items()
            if key not in exclude
            for column in columns
        )
        return _prefixed(pairs, _OTHER_TABLE_WEIGHT)


def _is_system_table(table: exp.Table) -> bool:
    """A catalog table the schema does not list (sqlite_master, pg_*, ...)."""
    name, db = table.name.lower(), table.db.lower()
    return name in _SYSTEM_TABLES or db in _SYSTEM_SCHEMAS or name.startswith("pg_")


# ----------------------------------------------------- resolving identifiers


@dataclass(frozen=True)
class _Source:
    """What a name in FROM stands for: a schema table, a derived relation, or
    something opaque (columns None: a table function, a `SELECT *` subquery,
    an unknown table)."""

    ref: str
    """How the query refers to it: its alias, or its name when it has none."""
    ref_ident: exp.Identifier | None
    label: str
    """What it is: the schema table's name, or the CTE's or derived table's name."""
    columns: tuple[str, ...] | None
    table_key: str | None = None

    @property
    def stored(self) -> bool:
        """Whether its columns are named as the database stores them (a schema table), not
        as the query's text writes them."""
        return self.table_key is not None


@dataclass
class _Frame:
    """The names visible in one query scope."""

    sources: dict[str, _Source]
    """Lower-cased alias or table name -> source."""
    aliases: dict[str, exp.Alias]
    """Lower-cased SELECT-list alias -> its projection."""
    parent: _Frame | None


@dataclass
class Finding:
    """One unknown name where it is written, with its ranked replacements."""

    ident: exp.Identifier
    unknown: UnknownName
    ranked: list[Near]
    confirmed: bool = False


@dataclass(frozen=True)
class ErrorName:
    """The identifier a database error names."""

    kind: Literal["table", "column"]
    name: str
    qualifier: str | None = None


@dataclass
class Analyzer:
    """Walks statements scope by scope and records unknown names."""

    index: SchemaIndex
    d: Dialect
    sql: str
    confirmed: ErrorName | None = None
    findings: list[Finding] = field(default_factory=list)
    _seen: set[int] = field(default_factory=set)
    _frames: dict[int, _Frame] = field(default_factory=dict)

    def run(self, statements: list[exp.Expr]) -> list[Finding]:
        """Findings of every statement, innermost scopes first."""
        for statement in statements:
            self._statement(statement)
        return self.findings

    def _statement(self, statement: exp.Expr) -> None:
        """Frames first (inner scopes before outer ones), then every column once."""
        self._frames.clear()  # keyed by id(): a freed scope's id may come back
        dml = self._dml_frame(statement)
        scopes = list(traverse_scope(statement))
        for scope in scopes:
            self._frames[id(scope)] = self._frame(scope)
        for scope in scopes:
            self._frames[id(scope)].parent = self._outer(scope, dml)
        for scope in scopes:
            for column in scope.columns:
                self._column_once(column, self._frames[id(scope)])
        if dml is not None:
            for column in statement.find_all(exp.Column):
                if column.find_ancestor(exp.Select) is None:
                    self._column_once(column, dml)

    def _column_once(self, column: exp.Column, frame: _Frame) -> None:
        """Check a column unless done: a correlated one shows in several scopes."""
        if id(column) not in self._seen:
            self._seen.add(id(column))
            self._column(column, frame)

    # ---- frames

    def _frame(self, scope: Scope) -> _Frame:
        """The names `scope` sees (its correlated parent is linked afterwards)."""
        sources = {
            name.lower(): self._source(name, node, source)
            for name, (node, source) in scope.selected_sources.items()
        }
        aliases: dict[str, exp.Alias] = {}
        if isinstance(scope.expression, exp.Select):
            for projection in scope.expression.expressions:
                if isinstance(projection, exp.Alias):
                    aliases.setdefault(projection.alias.lower(), projection)
        return _Frame(sources, aliases, None)

    def _outer(self, scope: Scope, dml: _Frame | None) -> _Frame | None:
        """The frame a correlated reference of `scope` may reach."""
        parent = scope.parent
        correlated = (
            scope.is_subquery
            or scope.is_udtf
            or scope.is_set_operation
            or (scope.is_derived_table and bool(getattr(scope, "can_be_correlated", False)))
        )
        if parent is None or not correlated:
            return None
        if not isinstance(parent.expression, exp.Query):
            return dml
        return self._frames.get(id(parent))

    def _source(self, name: str, node: object, source: object) -> _Source:
        """What a selected name stands for; a CTE is labelled by its own name."""
        if isinstance(source, Scope):
            label = node.name if isinstance(node, exp.Table) else name
            return _Source(name, ref_ident(node), label, self._outputs(source))
        if isinstance(source, exp.Table):
            return self._table_source(source)
        return _Source(name, None, name, None)

    def _outputs(self, scope: Scope) -> tuple[str, ...] | None:
        """The columns a CTE, derived table or VALUES list provides; None if unknown.

        A `*` is expanded over the scope's sources when all of them are known.
        """
        expression = scope.expression
        holder = expression.parent
        while isinstance(holder, exp.SetOperation):  # a recursive CTE's anchor
            holder = holder.parent
        if not isinstance(holder, exp.Subquery | exp.CTE):
            holder = expression
        alias = holder.args.get("alias")
        if isinstance(alias, exp.TableAlias) and alias.columns:
            return tuple(column.name for column in alias.columns)
        if isinstance(expression, exp.Select):
            return self._select_outputs(expression, self._frames.get(id(scope)))
        if isinstance(expression, exp.Query) and "*" not in expression.named_selects:
            return tuple(name for name in expression.named_selects if name)
        return None

    def _select_outputs(self, select: exp.Select, frame: _Frame | None) -> tuple[str, ...] | None:
        """A SELECT's output names, stars expanded through `frame`; None if unknown."""
        names: list[str] = []
        for projection in select.expressions:
            star_table: str | None = None
            if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
                star_table = projection.table.lower()
            elif not isinstance(projection, exp.Star):
                if projection.output_name:
                    names.append(projection.output_name)
                continue
            if frame is None:
                return None
            for key, source in frame.sources.items():
                if star_table is not None and key != star_table:
                    continue
                if source.columns is None:
                    return None
                names.extend(source.columns)
        return tuple(names)

    def _table_source(self, table: exp.Table) -> _Source:
        """A FROM table as a source; reports it when the schema lacks it."""
        ref = table.alias_or_name
        if not isinstance(table.this, exp.Identifier) or _is_system_table(table):
            return _Source(ref, None, ref, None)
        key = self.index.table(table)
        if key is not None:
            columns = tuple(self.index.schema[key])
            return _Source(ref, ref_ident(table), self.index.display(key), columns, key)
        if id(table) not in self._seen:
            self._seen.add(id(table))
            names = _in_place(self.index.display(k) for k in self.index.schema)
            ranked = _rank(table.name, names, folded=self._folded(table.this))
            self._report(table.this, "table", None, ranked)
        return _Source(ref, None, ref, None)

    def _dml_frame(self, statement: exp.Expr) -> _Frame | None:
        """Sources of an UPDATE or DELETE outside its subqueries; checks an INSERT target."""
        if isinstance(statement, exp.Insert):
            self._insert_target(statement)
            return None
        if not isinstance(statement, exp.Update | exp.Delete):
            return None
        sources: dict[str, _Source] = {}
        for table in statement.find_all(exp.Table):
            if table.find_ancestor(exp.Select) is None:
                sources[table.alias_or_name.lower()] = self._table_source(table)
        return _Frame(sources, {}, None)

    def _insert_target(self, statement: exp.Insert) -> None:
        """Check an INSERT's target table and its column list."""
        target = statement.this
        names: list[exp.Identifier] = []
        if isinstance(target, exp.Schema):
            names = [e for e in target.expressions if isinstance(e, exp.Identifier)]
            target = target.this
        if not isinstance(target, exp.Table):
            return
        source = self._table_source(target)
        for ident in names:
            self._in_source(ident, source)

    # ---- columns

    def _column(self, column: exp.Column, frame: _Frame) -> None:
        """Check one column reference seen from `frame`."""
        ident = column.this
        if not isinstance(ident, exp.Identifier):
            return  # t.* and the like
        qualifier = column.args.get("table")
        if isinstance(qualifier, exp.Identifier):
            self._qualified(ident, qualifier, frame)
        else:
            self._unqualified(column, ident, frame)

    def _qualified(self, ident: exp.Identifier, qualifier: exp.Identifier, frame: _Frame) -> None:
        """Check `qualifier.ident`: the qualifier must be visible, the column in it."""
        found: _Frame | None = frame
        while found is not None:
            source = found.sources.get(str(qualifier.this).lower())
            if source is not None:
                self._in_source(ident, source)
                return
            found = found.parent
        if ident.this.lower() in _SEQUENCE_CALLS:
            return  # Oracle's seq.NEXTVAL
        visible = _in_place(s.ref for f in _chain(frame) for s in f.sources.values())
        self._report(qualifier, "table", None, _rank(qualifier.this, visible))

    def _in_source(self, ident: exp.Identifier, source: _Source) -> None:
        """Report `ident` unless `source` has it (or its columns are unknown)."""
        if source.columns is None:
            return
        if any(_same_name(ident, n, self.d, stored=source.stored) for n in source.columns):
            return
        exclude = {source.table_key} if source.table_key else set()
        options = _in_place(source.columns, source.label) + self.index.other_columns(exclude)
        ranked = _rank(ident.this, options, folded=self._folded(ident))
        self._report(ident, "column", source.label, ranked)

    def _unqualified(self, column: exp.Column, ident: exp.Identifier, frame: _Frame) -> None:
        """Check a bare column against every source in scope (and correlated ones)."""
        name = str(ident.this)
        if name.lower() in PSEUDO_COLUMNS and not ident.quoted:
            return
        verdict = self._resolve(column, ident, frame)
        confirmed = self._is_confirmed("column", name)
        if verdict == "known" or (verdict == "opaque" and not confirmed):
            return
        if self._sqlite_string(ident) and not confirmed:
            return  # SQLite reads a double-quoted non-column as a string
        known = [s for s in frame.sources.values() if s.columns is not None]
        counts = Counter(c.lower() for s in known for c in set(s.columns or ()))
        options = [
            _Option(c, c, s.label)
            if counts[c.lower()] == 1
            else _Option(
                f"{s.ref}.{c}", c, s.label, local=s.ref_ident is not None, qualifier=s.ref_ident
            )
            for s in known
            for c in s.columns or ()
        ]
        exclude = {s.table_key for s in known if s.table_key}
        table = known[0].label if len(frame.sources) == 1 and known else None
        ranked = _rank(
            name, options + self.index.other_columns(exclude), folded=self._folded(ident)
        )
        self._report(ident, "column", table, ranked)

    def _resolve(
        self, column: exp.Column, ident: exp.Identifier, frame: _Frame
    ) -> Literal["known", "unknown", "opaque"]:
        """Whether an unqualified column names something visible from `frame`."""
        alias = frame.aliases.get(str(ident.this).lower())
        if alias is not None and not inside(column, alias):
            return "known"
        for current in _chain(frame):
            for source in current.sources.values():
                if source.columns is None:
                    return "opaque"
                if any(_same_name(ident, n, self.d, stored=source.stored) for n in source.columns):
                    return "known"
        return "unknown"

    def _sqlite_string(self, ident: exp.Identifier) -> bool:
        """A "double-quoted" name in SQLite (a string when no column has that name)."""
        start = ident.meta.get("start")
        return (
            self.d.name == "sqlite"
            and ident.quoted
            and isinstance(start, int)
            and self.sql[start : start + 1] == '"'
        )

    def _folded(self, ident: exp.Identifier) -> bool:
        """Whether the dialect reads the bare `ident` as another name than it is written."""
        fold = _FOLDED.get(self.d.name)
        name = str(ident.this)
        return fold is not None and not ident.quoted and fold(name) != name

    def _is_confirmed(self, kind: str, name: str) -> bool:
        """Whether the database error named this table or column."""
        c = self.confirmed
        return c is not None and c.kind == kind and c.name.lower() == name.lower()

    def _report(
        self,
        ident: exp.Identifier,
        kind: Literal["table", "column"],
        table: str | None,
        ranked: list[Near],
    ) -> None:
        name = str(ident.this)
        unknown = UnknownName(
            name=name,
            kind=kind,
            table=table,
            nearest=[near.text for near in ranked[:MAX_NEAREST]],
        )
        confirmed = self._is_confirmed(kind, name)
        self.findings.append(Finding(ident, unknown, ranked, confirmed))


def ref_ident(node: object) -> exp.Identifier | None:
    """The identifier a FROM item is referred to by: its alias, or a table's name."""
    if not isinstance(node, exp.Expr):
        return None
    alias = node.args.get("alias")
    ident = alias.this if isinstance(alias, exp.TableAlias) else None
    if ident is None and isinstance(node, exp.Table):
        ident = node.this
    return ident if isinstance(ident, exp.Identifier) else None


def _chain(frame: _Frame | None) -> Iterator[_Frame]:
    """`frame` and the outer frames its correlated references reach."""
    while frame is not None:
        yield frame
        frame = frame.parent


def inside(node: exp.Expr, ancestor: exp.Expr) -> bool:
    """Whether `ancestor` encloses `node`."""
    current = node.parent
    while current is not None:
        if current is ancestor:
            return True
        current = current.parent
    return False
