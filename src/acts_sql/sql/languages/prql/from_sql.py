"""A SELECT written in SQL, rewritten as PRQL: the deterministic translation the PRQL plugin
offers for a query a model wrote in SQL when PRQL was asked for.

Small models write SQL whatever the prompt says: the 0.5B wrote SQL for all 60
questions of the log benchmark, each one a compile error in PRQL. Where the SQL is
a plain SELECT, its PRQL is mechanical:

    SELECT status, COUNT(*) AS n FROM requests r WHERE r.latency_ms > 100
    GROUP BY status HAVING COUNT(*) > 3 ORDER BY n DESC LIMIT 5

    from r = requests
    filter r.latency_ms > 100
    group {status} (aggregate {n = count this})
    filter n > 3
    sort {-n}
    take 5

Covered: CTEs (as ``let``), a subquery in FROM (as a ``let`` of its own), joins
(inner, left, right, full; ON or USING), WHERE, GROUP BY (columns, expressions,
positions), aggregates (with expressions around them), HAVING, DISTINCT,
ORDER BY (names, positions, expressions), LIMIT and OFFSET. Comparisons, arithmetic,
AND/OR/NOT, IS NULL, IN lists, BETWEEN, CASE and the aggregates PRQL has a name for
are written in PRQL; any other expression (LIKE, CAST, date functions, COUNT of a
column, which skips NULLs where PRQL's ``count`` does not) becomes an s-string of the
target's SQL with its columns interpolated (``s"date_trunc('hour', {ts})"``).

Not covered (`translate` returns None): UNION and the other set operations, window
functions, subqueries in expressions, and anything sqlglot cannot parse. The result
is a draft, as any transpilation is: the caller compiles it and compares its rows
with the SQL's before trusting it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED = frozenset(
    [
        "from",
        "let",
        "func",
        "prql",
        "case",
        "into",
        "true",
        "false",
        "null",
        "this",
        "that",
        "module",
        "type",
        "internal",
        "select",
        "filter",
        "derive",
        "group",
        "aggregate",
        "sort",
        "take",
        "join",
        "window",
        "loop",
        "append",
    ]
)
_STD_NAMES = frozenset(
    [
        "count",
        "count_distinct",
        "sum",
        "average",
        "min",
        "max",
        "stddev",
        "first",
        "last",
        "all",
        "any",
        "concat_array",
        "round",
        "lag",
        "lead",
        "rank",
        "rank_dense",
        "row_number",
        "cume_dist",
    ]
)
"""Names of PRQL's standard library: a column so named is referred to as ``this.<name>``
(a bare ``count`` is ambiguous)."""
_BINARY: dict[type, str] = {
    exp.EQ: "==",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.And: "&&",
    exp.Or: "||",
}
_AGGREGATES: dict[type, str] = {exp.Sum: "sum", exp.Avg: "average", exp.Min: "min", exp.Max: "max"}


class Untranslatable(Exception):
    """The SQL uses something this translation does not cover."""


def translate(sql: str, dialect: str) -> str | None:
    """PRQL for one SELECT of `dialect` (a sqlglot dialect name); None when the SQL is not
    one SELECT or uses something not covered (see the module doc)."""
    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    except SqlglotError:
        return None
    if len(trees) != 1 or not isinstance(trees[0], exp.Select):
        return None
    writer = _Writer(dialect)
    try:
        main = writer.pipeline(trees[0])
    except Untranslatable:
        return None
    return "\n".join([*writer.lets, *main])


@dataclass
class _Writer:
    dialect: str
    lets: list[str] = field(default_factory=list)
    """The ``let`` blocks (CTEs, subqueries in FROM) the main pipeline reads, in order."""

    # ------------------------------------------------------------------ relations
    def pipeline(self, select: exp.Select) -> list[str]:
        if select.find(exp.Window):
            raise Untranslatable("window function")
        with_ = select.args.get("with_") or select.args.get("with")
        for cte in with_.expressions if with_ is not None else []:
            self._let(cte.alias_or_name, cte.this)
        source = select.args.get("from_") or select.args.get("from")
        lines = [f"from {self._relation(source.this if source is not None else None)}"]
        for join in select.args.get("joins") or []:
            lines.append(self._join(join))
        where = select.args.get("where")
        if where is not None:
            lines.append(f"filter {self.expr(where.this)}")
        if select.args.get("group") or any(_has_aggregate(e) for e in select.expressions):
            lines += _Grouping(self, select).lines()
        else:
            lines += _Projection(self, select).lines()
        return lines

    def _let(self, name: str, body: exp.Expr) -> None:
        if not isinstance(body, exp.Select):
            raise Untranslatable("a set operation")
        lines = _Writer(self.dialect, self.lets).pipeline(body)
        self.lets.append(f"let {_name(name)} = (\n" + "\n".join(f"  {x}" for x in lines) + "\n)")

    def _relation(self, source: exp.Expr | None) -> str:
        if isinstance(source, exp.Table) and not source.args.get("db"):
            alias, name = source.alias, source.name
            if not name:
                raise Untranslatable("a table function")
            return f"{_name(alias)} = {_name(name)}" if alias and alias != name else _name(name)
        if isinstance(source, exp.Subquery):
            alias = source.alias or f"_sub{len(self.lets) + 1}"
            self._let(alias, source.this)
            return _name(alias)
        raise Untranslatable("no plain table in FROM")

    def _join(self, join: exp.Join) -> str:
        side = (join.side or "").lower() or "inner"
        if join.kind and join.kind.upper() not in ("INNER", "OUTER"):
            raise Untranslatable(f"{join.kind} join")
        relation = self._relation(join.this)
        side_text = "" if side == "inner" else f"side:{side} "
        using = join.args.get("using")
        if using:
            condition = ", ".join(f"=={_name(c.name)}" for c in using)
        elif join.args.get("on") is not None:
            condition = self.expr(join.args["on"])
        else:
            raise Untranslatable("a join without a condition")
        return f"join {side_text}{relation} ({condition})"

    # ------------------------------------------------------------------ expressions
    def expr(self, node: exp.Expr, names: dict[str, str] | None = None) -> str:
        """`node` as a PRQL expression; `names` maps an expression's SQL to the name of the
        column that already holds it (an aggregate computed by `aggregate`)."""
        if names:
            known = names.get(node.sql(self.dialect))
            if known is not None:
                return known
        sub = lambda child: self.operand(child, names)  # noqa: E731
        if isinstance(node, exp.Paren):
            return f"({self.expr(node.this, names)})"
        atom = _atom(node)
        if atom is not None:
            return atom
        if isinstance(node, exp.Neg):
            return f"-{sub(node.this)}"
        if isinstance(node, exp.Not):
            inner = node.this
            if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
                return f"{sub(inner.this)} != null"
            return f"!{sub(inner)}"
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return f"{sub(node.this)} == null"
        if type(node) in _BINARY:
            return f"{sub(node.this)} {_BINARY[type(node)]} {sub(node.expression)}"
        if isinstance(node, exp.In) and not node.args.get("query"):
            items = ", ".join(self.expr(e, names) for e in node.expressions)
            return f"({self.expr(node.this, names)} | in [{items}])"
        if isinstance(node, exp.Between):
            low, high = self.expr(node.args["low"], names), self.expr(node.args["high"], names)
            return f"({self.expr(node.this, names)} | in {_bound(low)}..{_bound(high)})"
        if isinstance(node, exp.Case) and node.this is None:
            arms = [
                f"{self.expr(i.this, names)} => {self.expr(i.args['true'], names)}"
                for i in node.args.get("ifs") or []
            ]
            if node.args.get("default") is not None:
                arms.append(f"true => {self.expr(node.args['default'], names)}")
            return f"case [{', '.join(arms)}]"
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Star):
            return "count this"
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
            distinct = node.this.expressions
            if len(distinct) == 1:
                return f"count_distinct {sub(distinct[0])}"
        if type(node) in _AGGREGATES and not node.expressions:
            return f"{_AGGREGATES[type(node)]} {sub(node.this)}"
        if isinstance(node, exp.Select | exp.Subquery | exp.Exists) or node.find(exp.Select):
            raise Untranslatable("a subquery in an expression")
        return self._s_string(node, names)

    def operand(self, node: exp.Expr, names: dict[str, str] | None) -> str:
        """An operand of an operator or a function: parenthesised unless it is atomic."""
        text = self.expr(node, names)
        atomic = isinstance(node, exp.Column | exp.Literal | exp.Null | exp.Boolean | exp.Paren)
        known = bool(names) and node.sql(self.dialect) in (names or {})
        wrapped = isinstance(node, exp.In | exp.Between)  # written "(x | in ...)" already
        unit = text.startswith(('s"', "@", "!(")) and "\n" not in text  # an s-string, a date, !(..)
        return text if atomic or known or wrapped or unit else f"({text})"

    def _s_string(self, node: exp.Expr, names: dict[str, str] | None) -> str:
        """`node` as an s-string of the target's SQL, its column-bearing parts interpolated."""
        copy = node.copy()
        holes: dict[str, str] = {}
        for child in list(_direct_children(copy)):
            if not child.find(exp.Column) and not _has_aggregate(child):
                continue
            key = f"__prql_hole_{len(holes)}__"
            holes[key] = self.operand(_original(node, child), names)
            child.replace(exp.Var(this=key))
        if not holes and copy.find(exp.Column):
            raise Untranslatable("a column inside an unsupported expression")
        text = copy.sql(self.dialect)
        if '"' in text or "\\" in text:
            raise Untranslatable("quotes in an s-string")
        text = text.replace("{", "{{").replace("}", "}}")
        for key, value in holes.items():
            if key not in text:
                raise Untranslatable("an expression sqlglot rewrote")
            text = text.replace(key, "{" + value + "}")
        return f's"{text}"'


class _Projection:
    """A SELECT without aggregates: sort, take, then select (the sort may name columns the
    select drops); with DISTINCT: select, one row per distinct row, sort, take."""

    def __init__(self, writer: _Writer, select: exp.Select) -> None:
        self.w, self.select = writer, select

    def lines(self) -> list[str]:
        items = self.select.expressions
        star = len(items) == 1 and isinstance(items[0], exp.Star)
        if not star and any(isinstance(i, exp.Star) or i.find(exp.Star) for i in items):
            raise Untranslatable("a star next to other columns")
        outputs = [] if star else [_output(self.w, i, n) for n, i in enumerate(items, 1)]
        distinct_clause = self.select.args.get("distinct")
        if distinct_clause is not None and distinct_clause.args.get("on") is not None:
            raise Untranslatable("DISTINCT ON")
        distinct = distinct_clause is not None
        lines: list[str] = []
        sort = self._sort_keys(outputs, distinct)
        if distinct:
            lines.append(_select_line(self.w, outputs) if outputs else "")
            names = ", ".join(o.name for o in outputs)
            if not names:
                raise Untranslatable("SELECT DISTINCT *")
            lines.append(f"group {{{names}}} (take 1)")
            lines += [f"sort {{{sort}}}"] if sort else []
            lines += _take(self.select)
        else:
            lines += [f"sort {{{sort}}}"] if sort else []
            lines += _take(self.select)
            lines += [_select_line(self.w, outputs)] if outputs else []
        return [line for line in lines if line]

    def _sort_keys(self, outputs: list[_Output], distinct: bool) -> str:
        order = self.select.args.get("order")
        if order is None:
            return ""
        keys = []
        for ordered in order.expressions:
            target = _ordinal(ordered.this, outputs) or _by_alias(ordered.this, outputs)
            if distinct:
                if target is None:
                    text = ordered.this.sql(self.w.dialect)
                    target = next((o for o in outputs if o.sql == text), None)
                if target is None:
                    raise Untranslatable("ORDER BY outside a DISTINCT's columns")
                text = _ref(target.name)
            else:
                # sorted before `select`: the expression itself, in the source's terms
                node = target.node if target is not None else ordered.this
                text = self.w.operand(node, None)
            keys.append(f"-{text}" if ordered.args.get("desc") else text)
        return ", ".join(keys)


class _Grouping:
    """A SELECT with GROUP BY or aggregates: group/aggregate, having, sort, take, select."""

    def __init__(self, writer: _Writer, select: exp.Select) -> None:
        self.w, self.select = writer, select
        self.outputs = [_output(writer, i, n) for n, i in enumerate(select.expressions, 1)]
        if any(isinstance(o.node, exp.Star) for o in self.outputs):
            raise Untranslatable("a star in an aggregate query")
        self.names: dict[str, str] = {}  # SQL of an aggregate or key -> its column's name
        self.columns: list[str] = []  # the columns `group`/`aggregate` make, in order
        self.hidden = 0

    def lines(self) -> list[str]:
        derived = self._derive_arguments()
        keys = self._keys()
        items = []
        for out in self.outputs:
            if out.sql in self.names:
                continue
            if not _has_aggregate(out.node):
                raise Untranslatable("a column neither grouped nor aggregated")
            items.append(f"{out.name} = {self.w.expr(out.node, self.names)}")
            self.names[out.sql] = _ref(out.name)
            self.columns.append(_ref(out.name))
        having = self.select.args.get("having")
        having_text = self._after(having.this, items) if having is not None else ""
        sort = self._sort(items)
        body = f"aggregate {{{', '.join(items)}}}" if items else "take 1"
        if not keys and not items:
            raise Untranslatable("nothing to aggregate")
        lines = [f"derive {{{', '.join(derived)}}}"] if derived else []
        lines.append(
            f"group {{{', '.join(keys)}}} ({body})" if keys else f"aggregate {{{', '.join(items)}}}"
        )
        lines += [f"filter {having_text}"] if having_text else []
        lines += [f"sort {{{sort}}}"] if sort else []
        lines += _take(self.select)
        wanted = [_ref(o.name) for o in self.outputs]
        if wanted != self.columns:
            lines.append(f"select {{{', '.join(wanted)}}}")
        return lines

    def _derive_arguments(self) -> list[str]:
        """Columns `derive`d for aggregates over an expression (``SUM(CASE ...)``): prqlc
        compiles such an argument inside ``aggregate`` into invalid SQL when other terms
        surround the aggregate, and reads a derived column right."""
        nodes = [o.node for o in self.outputs]
        having = self.select.args.get("having")
        nodes += [having.this] if having is not None else []
        derived: list[str] = []
        for node in nodes:
            for agg in node.find_all(exp.AggFunc):
                arg = agg.this
                if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1:
                    arg = arg.expressions[0]
                if not isinstance(arg, exp.Expr) or isinstance(arg, exp.Column | exp.Star):
                    continue
                key = arg.sql(self.w.dialect)
                if key in self.names or not arg.find(exp.Column):
                    continue
                name = f"_arg{len(derived) + 1}"
                derived.append(f"{name} = {self.w.expr(arg)}")
                self.names[key] = name
        return derived

    def _keys(self) -> list[str]:
        group = self.select.args.get("group")
        keys = []
        for node in group.expressions if group is not None else []:
            out = _ordinal(node, self.outputs) or _by_alias(node, self.outputs)
            if out is None:
                out = next((o for o in self.outputs if o.sql == node.sql(self.w.dialect)), None)
            source = out.node if out is not None else node
            if isinstance(source, exp.Column) and (out is None or out.name == source.name):
                keys.append(self.w.expr(source))
                name = source.name
            else:
                self.hidden += 1
                name = out.name if out is not None else f"_key{self.hidden}"
                keys.append(f"{name} = {self.w.expr(source)}")
            self.names[source.sql(self.w.dialect)] = _ref(name)
            self.columns.append(_ref(name))
            if out is not None:
                self.names[out.sql] = _ref(name)
        return keys

    def _after(self, node: exp.Expr, items: list[str]) -> str:
        """An expression evaluated after `aggregate` (HAVING, ORDER BY): its aggregates by
        the names they have, aggregates not selected added to `items` under a hidden name."""
        aggregates = list(node.find_all(exp.AggFunc))
        for agg in [a for a in aggregates if not _inside_agg(a)]:
            key = agg.sql(self.w.dialect)
            if key not in self.names:
                self.hidden += 1
                name = f"_agg{self.hidden}"
                items.append(f"{name} = {self.w.expr(agg, self.names)}")
                self.names[key] = name
                self.columns.append(name)
        return self.w.expr(node, self.names)

    def _sort(self, items: list[str]) -> str:
        order = self.select.args.get("order")
        keys = []
        for ordered in order.expressions if order is not None else []:
            out = _ordinal(ordered.this, self.outputs) or _by_alias(ordered.this, self.outputs)
            text = _ref(out.name) if out is not None else self._after(ordered.this, items)
            if not re.match(r"^[\w.`]+$", text):
                raise Untranslatable("ORDER BY an expression after aggregation")
            keys.append(f"-{text}" if ordered.args.get("desc") else text)
        return ", ".join(keys)


@dataclass
class _Output:
    name: str
    node: exp.Expr
    sql: str
    assigned: bool


def _output(writer: _Writer, item: exp.Expr, position: int) -> _Output:
    node = item.this if isinstance(item, exp.Alias) else item
    if isinstance(item, exp.Alias):
        name, assigned = item.alias, True
    elif isinstance(node, exp.Column):
        name, assigned = node.name, False
    elif isinstance(node, exp.Star):
        name, assigned = "*", False
    else:
        name, assigned = _made_name(node, position), True
    return _Output(_name(name), node, node.sql(writer.dialect), assigned)


def _select_line(writer: _Writer, outputs: list[_Output]) -> str:
    parts = [
        f"{o.name} = {writer.expr(o.node)}" if o.assigned else writer.expr(o.node) for o in outputs
    ]
    return f"select {{{', '.join(parts)}}}"


def _made_name(node: exp.Expr, position: int) -> str:
    if isinstance(node, exp.Count) and isinstance(node.this, exp.Star):
        return "row_count"
    if isinstance(node, exp.Func) and isinstance(node.this, exp.Column):
        return f"{node.key}_{node.this.name}".lower()
    return f"value_{position}"


def _ordinal(node: exp.Expr, outputs: list[_Output]) -> _Output | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        index = int(node.this) - 1
        if 0 <= index < len(outputs):
            return outputs[index]
        raise Untranslatable("a position past the SELECT list")
    return None


def _by_alias(node: exp.Expr, outputs: list[_Output]) -> _Output | None:
    if isinstance(node, exp.Column) and not node.table:
        return next((o for o in outputs if o.assigned and o.name == _name(node.name)), None)
    return None


def _take(select: exp.Select) -> list[str]:
    limit, offset = select.args.get("limit"), select.args.get("offset")
    count = _number(limit.expression) if limit is not None else None
    skip = _number(offset.expression) if offset is not None else None
    if (limit is not None and count is None) or (offset is not None and skip is None):
        raise Untranslatable("LIMIT or OFFSET that is not a number")
    if skip:
        end = f"{skip + count}" if count is not None else ""
        return [f"take {skip + 1}..{end}"]
    return [f"take {count}"] if count is not None else []


def _number(node: exp.Expr | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def _has_aggregate(node: exp.Expr) -> bool:
    return node.find(exp.AggFunc) is not None


def _inside_agg(node: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.AggFunc):
            return True
        parent = parent.parent
    return False


def _direct_children(node: exp.Expr) -> list[exp.Expr]:
    children = []
    for value in node.args.values():
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, exp.Expr):
                children.append(child)
    return children


def _original(node: exp.Expr, copied_child: exp.Expr) -> exp.Expr:
    """The child of `node` at the place `copied_child` has in node's copy (the copy is
    what gets placeholders; the original keeps the columns to translate)."""
    value = node.args[copied_child.arg_key or ""]
    return value[copied_child.index or 0] if isinstance(value, list) else value


_DATE_TEXT = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP_TEXT = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$")


def _moment_literal(text: str, to: exp.DataType) -> str | None:
    """``CAST('2025-03-01' AS DATE)`` (``DATE '2025-03-01'``) as PRQL's ``@2025-03-01``."""
    if to.is_type(exp.DataType.Type.DATE) and _DATE_TEXT.match(text):
        return f"@{text}"
    found = _TIMESTAMP_TEXT.match(text)
    if to.is_type(exp.DataType.Type.TIMESTAMP) and found:
        return f"@{found.group(1)}T{found.group(2)}"
    return None


def _bound(text: str) -> str:
    return text if re.match(r"^-?[\w.@:\"']+$", text) else f"({text})"


def _string(value: str) -> str:
    if "\\" in value or ('"' in value and "'" in value):
        raise Untranslatable("a string literal PRQL would escape differently")
    return f"'{value}'" if '"' in value else f'"{value}"'


def _ref(name: str) -> str:
    """A reference to the column `name` (see `_STD_NAMES`)."""
    return f"this.{_name(name)}" if name.lower() in _STD_NAMES else _name(name)


def _atom(node: exp.Expr) -> str | None:
    """A column, a literal or a typed date/time literal as PRQL; None for anything else."""
    if isinstance(node, exp.Column):
        if not node.name:
            raise Untranslatable("a column without a name")
        table = node.table
        return f"{_name(table)}.{_name(node.name)}" if table else _ref(node.name)
    if isinstance(node, exp.Literal):
        return node.this if not node.is_string else _string(node.this)
    if isinstance(node, exp.Null):
        return "null"
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, exp.Cast) and node.this.is_string:
        return _moment_literal(node.this.this, node.to)
    return None


def _name(name: str) -> str:
    if _PLAIN_NAME.match(name) and name.lower() not in _RESERVED:
        return name
    if "`" in name:
        raise Untranslatable("a backtick in a name")
    return f"`{name}`"
