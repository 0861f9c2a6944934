"""Decompose one statement into flat single-SELECT units with dependencies.

This is the deterministic half of the `split_fix_syntax` tool. Every CTE
becomes a unit named after the CTE; every derived table in a FROM or JOIN
becomes a unit named after its alias (nested ones first) and is replaced in
its parent by a plain reference to that name; the statement itself is the
last unit, `main`. Each unit's SQL refers to the units it depends on by plain
name, so it can be checked alone in a session where every dependency is an
empty stand-in table with the dependency's output columns.

Rules that keep every unit runnable on its own:

- A recursive CTE stays one self-contained unit,
  `WITH RECURSIVE r AS (...) SELECT * FROM r`; nothing inside it is split off.
- A set operation (UNION, ...) is never split into its branches.
- A derived table that refers to columns of an enclosing query (correlated,
  or LATERAL) stays where it is.
- Unit names are unique (case-insensitively) and never shadow a real table
  the statement reads: a clash gets a suffix (`t_2`), and the reference keeps
  the original name as its alias (`FROM t_2 AS t`) so qualified columns work.
- Units come in dependency order; `depends_on` lists unit names in the order
  the unit's SQL first refers to them.

    >>> [u.name for u in decompose("WITH a AS (SELECT 1 AS x) SELECT x FROM a", "sqlite")]
    ['a', 'main']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from acts_sql.errors import SqlParseError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, get_dialect

MAIN = "main"
"""Name of the unit that is the statement itself (always the last unit)."""

_UNIT = "acts_sql.unit"
"""Meta key on a `Table` node that refers to a unit: the unit's name."""

Env = dict[str, str | None]
"""Relation names visible at a point (lower case) -> unit name, or None for a
name that is local (a CTE kept inline) and shadows any unit of that name."""


class Unit(BaseModel):
    """One flat query of a decomposed statement."""

    model_config = ConfigDict(frozen=True)

    name: str
    sql: str
    depends_on: list[str] = Field(default_factory=list)
    output_columns: list[str] | None = None
    """Names of the unit's output columns, or None when they cannot be told
    (`SELECT *` from a table whose columns are not known)."""


def decompose(
    sql: str,
    dialect: str | Dialect,
    *,
    tables: Mapping[str, Sequence[str]] | None = None,
) -> list[Unit]:
    """Units of the one statement in `sql`, dependencies first, `main` last.

    `tables` optionally gives the columns of real tables (by name, any case),
    so that `SELECT *` from them resolves. Raises `SqlParseError` when `sql`
    does not parse or is not exactly one statement.
    """
    d = get_dialect(dialect)
    statement = _one_statement(sql, d)
    try:
        return _Decomposer(d, tables or {}, statement).run(statement)
    except SqlglotError as error:  # pragma: no cover - sqlglot failing on its own tree
        raise SqlParseError(f"cannot decompose the statement: {error}", dialect=d.name) from error


def output_columns(
    sql: str,
    dialect: str | Dialect,
    *,
    tables: Mapping[str, Sequence[str]] | None = None,
) -> list[str] | None:
    """Output column names of one query (None when not determinable).

    An alias names its column, a column reference its column name; any other
    expression is named by its SQL text (what SQLite does). `SELECT *`
    resolves through CTEs, derived tables and `tables`. Raises
    `SqlParseError` when `sql` is not exactly one parseable statement.
    """
    return decompose(sql, dialect, tables=tables)[-1].output_columns


def _one_statement(sql: str, d: Dialect) -> exp.Expr:
    statements = parse_statements(sql, d)
    if len(statements) != 1:
        raise SqlParseError(
            f"expected exactly one statement to decompose, found {len(statements)}",
            dialect=d.name,
            statements=len(statements),
        )
    return statements[0].copy()


class _Decomposer:
    """Walks one statement, moving CTEs and derived tables out into units."""

    def __init__(
        self, dialect: Dialect, tables: Mapping[str, Sequence[str]], statement: exp.Expr
    ) -> None:
        self.dialect = dialect
        self.tables = {name.lower(): list(columns) for name, columns in tables.items()}
        self.units: list[Unit] = []
        self.columns: dict[str, list[str] | None] = {}
        # Unit names must not clash with each other, with `main`, or with a real
        # table the statement reads (a stand-in would hide it).
        cte_names = {cte.alias.lower() for cte in statement.find_all(exp.CTE)}
        real = {
            table.name.lower()
            for table in statement.find_all(exp.Table)
            if table.name and table.name.lower() not in cte_names
        }
        self.taken: set[str] = {MAIN, *real}

    def run(self, statement: exp.Expr) -> list[Unit]:
        self._build(MAIN, statement, {}, explicit_columns=None)
        return _dependency_order(self.units)

    # ------------------------------------------------------------ units

    def _fresh(self, base: str) -> str:
        name, suffix = base, 2
        while name.lower() in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.taken.add(name.lower())
        return name

    def _build(
        self,
        name: str,
        query: exp.Expr,
        env: Env,
        explicit_columns: list[str] | None,
        *,
        recursive: exp.CTE | None = None,
    ) -> None:
        """Rewrite `query` and append it as unit `name` (after the units it needs)."""
        deps: list[str] = []
        self._rewrite(query, env, deps, extract=recursive is None)
        columns = explicit_columns or self._query_columns(query)
        sql_tree = query
        if recursive is not None:
            deps = [dep for dep in deps if dep != name]
            sql_tree = self._self_contained(name, query, recursive)
        self.columns[name] = columns
        self.units.append(
            Unit(
                name=name,
                sql=self.dialect.generate(
                    sql_tree, comments=False, unsupported_level=ErrorLevel.RAISE
                ),
                depends_on=deps,
                output_columns=columns,
            )
        )

    def _self_contained(self, name: str, body: exp.Expr, cte: exp.CTE) -> exp.Expr:
        """`WITH [RECURSIVE] name(cols) AS (body) SELECT * FROM name`."""
        original = cte.args["alias"]
        alias = exp.TableAlias(
            this=_identifier(name, like=original.this),
            columns=[column.copy() for column in original.columns],
        )
        recursive = bool(cte.parent and cte.parent.args.get("recursive"))
        return exp.Select(
            expressions=[exp.Star()],
            from_=exp.From(this=exp.Table(this=_identifier(name, like=original.this))),
            with_=exp.With(
                expressions=[exp.CTE(this=body.copy(), alias=alias)], recursive=recursive
            ),
        )

    # ------------------------------------------------------------ rewriting

    def _rewrite(self, node: exp.Expr, env: Env, deps: list[str], *, extract: bool) -> None:
        """Move CTEs and derived tables below `node` into units (when `extract`),
        point references at units, and record the units referred to in `deps`."""
        with_ = node.args.get("with_")
        if isinstance(with_, exp.With):
            if extract:
                env = self._extract_ctes(with_, env)
                node.set("with_", None)
            else:
                env = {**env, **{cte.alias.lower(): None for cte in with_.expressions}}
                self._rewrite(with_, env, deps, extract=False)
        for key in type(node).arg_types:  # declaration order is (about) text order
            if key == "with_":
                continue
            value = node.args.get(key)
            for child in list(value) if isinstance(value, list) else [value]:
                if isinstance(child, exp.Expr):
                    self._visit(child, env, deps, extract=extract)

    def _visit(self, node: exp.Expr, env: Env, deps: list[str], *, extract: bool) -> None:
        if extract and isinstance(node, exp.Subquery) and _extractable(node):
            name = self._extract_derived(node, env)
            _append_once(deps, name)
            return
        if isinstance(node, exp.Table):
            unit = self._resolve(node, env)
            if unit is not None:
                _point_at(node, unit)
                _append_once(deps, unit)
        self._rewrite(node, env, deps, extract=extract)

    def _resolve(self, table: exp.Table, env: Env) -> str | None:
        if table.args.get("db") or table.args.get("catalog"):
            return None
        if not isinstance(table.this, exp.Identifier):
            return None
        return env.get(table.name.lower())

    def _extract_ctes(self, with_: exp.With, env: Env) -> Env:
        env = dict(env)
        ctes = list(with_.expressions)
        names = [self._fresh(cte.alias or "cte") for cte in ctes]
        if with_.args.get("recursive"):  # WITH RECURSIVE: every CTE sees all of them
            env.update({cte.alias.lower(): name for cte, name in zip(ctes, names, strict=True)})
        for cte, name in zip(ctes, names, strict=True):
            key = cte.alias.lower()
            is_recursive = _refers_to(cte.this, key)
            body_env = {**env, key: name} if is_recursive else env
            self._build(
                name,
                cte.this,
                body_env,
                _alias_columns(cte.args.get("alias")),
                recursive=cte if is_recursive else None,
            )
            env[key] = name
        return env

    def _extract_derived(self, subquery: exp.Subquery, env: Env) -> str:
        alias = subquery.args.get("alias")
        alias_ident = alias.this if isinstance(alias, exp.TableAlias) else None
        alias_name = alias_ident.name if isinstance(alias_ident, exp.Identifier) else ""
        name = self._fresh(alias_name or "subquery")
        self._build(name, subquery.this, env, _alias_columns(alias))
        reference = exp.Table(this=_identifier(name, like=alias_ident))
        if alias_ident is not None and alias_name and alias_name != name:
            reference.set("alias", exp.TableAlias(this=alias_ident.copy()))
        if subquery.args.get("pivots"):
            reference.set("pivots", subquery.args["pivots"])
        reference.meta[_UNIT] = name
        subquery.replace(reference)
        return name

    # ------------------------------------------------------------ columns

    def _query_columns(self, query: exp.Expr) -> list[str] | None:
        if isinstance(query, exp.Subquery):
            return _alias_columns(query.args.get("alias")) or self._query_columns(query.this)
        if isinstance(query, exp.SetOperation):
            return self._query_columns(query.this)
        if isinstance(query, exp.Select):
            return self._select_columns(query)
        return None

    def _select_columns(self, select: exp.Select) -> list[str] | None:
        columns: list[str] = []
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or (
                isinstance(projection, exp.Column) and projection.is_star
            ):
                expanded = self._expand_star(select, projection)
                if expanded is None:
                    return None
                columns.extend(expanded)
            elif isinstance(projection, exp.Alias | exp.Column):
                columns.append(projection.output_name)
            else:
                name = self.dialect.generate(
                    projection, comments=False, unsupported_level=ErrorLevel.IGNORE
                )
                columns.append(name)
        return columns

    def _expand_star(self, select: exp.Select, star: exp.Expr) -> list[str] | None:
        star_node = star if isinstance(star, exp.Star) else star.this
        if any(star_node.args.get(key) for key in ("except_", "replace", "rename")):
            return None
        sources = self._sources(select)
        if sources is None:
            return None
        qualifier = star.table if isinstance(star, exp.Column) else ""
        if qualifier:
            for name, columns, _ in sources:
                if name.lower() == qualifier.lower():
                    return columns
            return None
        expanded: list[str] = []
        for _name, columns, merged in sources:
            if columns is None:
                return None
            expanded.extend(column for column in columns if column.lower() not in merged)
        return expanded

    def _sources(self, select: exp.Select) -> list[tuple[str, list[str] | None, set[str]]] | None:
        """(name, columns, columns merged away by USING/NATURAL) per FROM/JOIN item."""
        from_ = select.args.get("from_")
        if not isinstance(from_, exp.From):
            return None
        no_merge: set[str] = set()
        sources = [(from_.this.alias_or_name, self._source_columns(from_.this), no_merge)]
        for join in select.args.get("joins") or []:
            columns = self._source_columns(join.this)
            merged = {ident.name.lower() for ident in join.args.get("using") or []}
            if join.method == "NATURAL" and columns is not None:
                seen = {c.lower() for _, cols, _ in sources for c in cols or []}
                merged = {c.lower() for c in columns if c.lower() in seen}
            sources.append((join.this.alias_or_name, columns, merged))
        return sources

    def _source_columns(self, source: exp.Expr) -> list[str] | None:
        explicit = _alias_columns(source.args.get("alias"))
        if explicit:
            return explicit
        if isinstance(source, exp.Table):
            unit = source.meta.get(_UNIT)
            if unit is not None:
                return self.columns.get(unit)
            return self.tables.get(source.name.lower())
        if isinstance(source, exp.Subquery):
            return self._query_columns(source.this)
        if isinstance(source, exp.Lateral) and isinstance(source.this, exp.Subquery):
            return self._query_columns(source.this.this)
        return None


# ------------------------------------------------------------------ helpers


def _append_once(names: list[str], name: str) -> None:
    if name not in names:
        names.append(name)


def _identifier(name: str, *, like: object) -> exp.Identifier:
    """An identifier for `name`, quoted if `like` was (or if `name` needs it)."""
    quoted = isinstance(like, exp.Identifier) and bool(like.args.get("quoted"))
    return exp.to_identifier(name, quoted=True if quoted else None)


def _dependency_order(units: list[Unit]) -> list[Unit]:
    """Units with every dependency before its dependents, otherwise in build order.

    Build order already is one, except under WITH RECURSIVE, where a CTE may
    refer to a later one. `main` stays last; a cycle keeps its build order.
    """
    main, rest = units[-1], units[:-1]
    done: set[str] = set()
    ordered: list[Unit] = []
    while rest:
        ready = next(
            (unit for unit in rest if all(dep in done for dep in unit.depends_on)), rest[0]
        )
        rest.remove(ready)
        ordered.append(ready)
        done.add(ready.name)
    return [*ordered, main]


def _alias_columns(alias: object) -> list[str] | None:
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return [column.name for column in alias.columns]
    return None


def _point_at(table: exp.Table, unit: str) -> None:
    """Make `table` refer to unit `unit`, keeping the name it was known by as alias."""
    table.meta[_UNIT] = unit
    if table.name == unit:
        return
    if not table.args.get("alias"):
        table.set("alias", exp.TableAlias(this=table.this.copy()))
    table.set("this", _identifier(unit, like=table.this))


def _refers_to(query: exp.Expr, name: str) -> bool:
    """Whether `query` reads a table called `name` (unqualified, any case)."""
    return any(
        table.name.lower() == name and not table.args.get("db")
        for table in query.find_all(exp.Table)
    )


def _extractable(subquery: exp.Subquery) -> bool:
    """A derived table in FROM/JOIN that does not look outside itself."""
    parent = subquery.parent
    if not isinstance(parent, exp.From | exp.Join) or subquery.arg_key != "this":
        return False  # LATERAL, a scalar subquery, IN (...), ...
    if not isinstance(subquery.this, exp.Query):
        return False
    extra = {"this", "alias", "pivots"}
    if any(value is not None and key not in extra for key, value in subquery.args.items()):
        return False  # modifiers on the parenthesis itself: leave the shape alone
    return not _is_correlated(subquery.this)


def _is_correlated(query: exp.Expr) -> bool:
    """Whether `query` qualifies a column by a name it does not define itself.

    Unqualified outer references cannot be told apart without a schema; they
    are taken as local.
    """
    defined = {
        node.alias_or_name.lower()
        for node in query.find_all(exp.Table, exp.Subquery, exp.Lateral, exp.Unnest, exp.Values)
        if node.alias_or_name
    }
    defined |= {cte.alias.lower() for cte in query.find_all(exp.CTE)}
    return any(
        column.table and column.table.lower() not in defined
        for column in query.find_all(exp.Column)
    )
