#!/usr/bin/env python
"""A mutation corpus from gold SQL: how many mechanical errors the repair rules fix alone.

    .venv/bin/python scripts/rule_mutants.py --out runs/mutants [--data DIR]
        [--dialects sqlite,postgresql] [--per-kind 2] [--seed 15] [--no-sqlfluff]
        [--sample tests/fixtures/mutants/sample.jsonl] [--pg-url URL]

Reads the BIRD-CRITIC development split at run time (the tasks and their
``*_solutions.jsonl``; or ``--sample``, a JSONL of synthetic tasks
``{"id", "dialect", "preprocess_sql", "sol_sql"}``) and keeps the tasks whose
solution is one query that runs on a fresh database built from the task's
``preprocess_sql`` (the bench harness builds it, as the evaluator would).
Each gold query is mutated the way models err (`MUTATORS`): a misspelt
column or table, a function swapped in from another dialect, `IS NULL`
written `= NULL`, a column dropped from GROUP BY, a string or a name in the
wrong quotes. A mutant counts only when it breaks the query (it fails, or
returns other rows than the gold query); it is then repaired

- by the rule chain alone (`acts_sql.tools.rule_chain`, every stage, no
  LLM), and
- by ``sqlfluff fix`` (its default rules and the dialect's grammar, except the
  layout and capitalisation groups: they change only whitespace and letter
  case, so they cannot repair a query, and they take ten times as long;
  ``--sqlfluff-all-rules`` keeps them),

and "repaired" means: the result executes on that database and returns the
gold query's rows (in order when the gold query orders its rows; numbers
compared to 6 decimals). The gold queries themselves go through both too,
to count what each changes in correct SQL.

Writes ``--out/corpus.jsonl`` (one mutant a line, with both repairs) and
``--out/summary.md`` / ``summary.json``. Nothing is written into the
repository: the corpus is derived from the solutions, which stay outside it.
PostgreSQL needs a server (``--pg-url`` or ACTS_SQL_BENCH_PG_URL / ACTS_SQL_TEST_PG_URL).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from acts_sql.bench.evaluability import check_task
from acts_sql.bench.loader import join, load_dev_ids, load_solutions, load_tasks
from acts_sql.bench.models import Task
from acts_sql.bench.prepare import prepare_database
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.servers import ServerURLs
from acts_sql.db.connect import open_database
from acts_sql.db.result import ExecResult
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.query_text import normalize_sql
from acts_sql.sql.repairs import has_top_level_order_by
from acts_sql.sql.schema_facts import SchemaFacts
from acts_sql.tools.rule_chain import RuleChain, schema_facts

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "bird-critic"
SETS = {"sqlite": "sqlite500", "postgresql": "pg530"}
BENCH_DIALECT = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
SQLFLUFF_DIALECT = {"sqlite": "sqlite", "postgresql": "postgres"}
TIMEOUT_S = 10.0


@dataclass
class Subject:
    """One gold query and the task whose database it runs on."""

    id: str
    dialect: str
    task: Task
    gold: str


@dataclass(frozen=True)
class Fluff:
    """Whether mutants also go through `sqlfluff fix`, and with which rules."""

    enabled: bool
    all_rules: bool = False


@dataclass
class Mutant:
    subject: str
    dialect: str
    kind: str
    sql: str
    detail: str
    record: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ subjects


def dev_subjects(data: Path, dialects: list[str]) -> list[Subject]:
    """Development tasks whose solution is one query (read at run time, never stored)."""
    solutions = load_solutions(data / "dev")
    dev = {e.key for e in load_dev_ids(data / "dev")}
    found = []
    for dialect in dialects:
        tasks = load_tasks(data / "tasks" / f"{SETS[dialect]}.jsonl")
        for item in join(tasks, solutions):
            if item.key not in dev or item.solution is None or not check_task(item).evaluable:
                continue
            gold = _one_query(item.solution.sol_sql, dialect)
            if gold is not None:
                found.append(Subject(item.task.label, dialect, item.task, gold))
    return found


def sample_subjects(path: Path, dialects: list[str]) -> list[Subject]:
    """Synthetic tasks from a JSONL file (the test sample)."""
    found = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        if raw["dialect"] not in dialects:
            continue
        task = Task(
            set="sample",
            instance_id=raw["id"],
            dialect=BENCH_DIALECT[raw["dialect"]],
            db_id="sample",
            preprocess_sql=raw["preprocess_sql"],
        )
        found.append(Subject(f"sample/{raw['id']}", raw["dialect"], task, raw["sol_sql"]))
    return found


def _one_query(statements: list[str], dialect: str) -> str | None:
    if len(statements) != 1:
        return None
    try:
        trees = [t for t in sqlglot.parse(statements[0], read=_sg(dialect)) if t is not None]
    except sqlglot.errors.SqlglotError:
        return None
    ok = len(trees) == 1 and isinstance(trees[0], exp.Query)
    return statements[0].strip().rstrip(";") if ok else None


def _sg(dialect: str) -> str:
    return get_dialect(dialect).sqlglot_name


# ------------------------------------------------------------------ mutators


def _misspell(name: str, rng: random.Random) -> str:
    """`name` with one slip: a letter dropped, two swapped, or one doubled (never the first)."""
    i = rng.randrange(1, len(name) - 1)
    choice = rng.choice(("drop", "swap", "double"))
    if choice == "drop":
        return name[:i] + name[i + 1 :]
    if choice == "swap":
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    return name[:i] + name[i] + name[i:]


def _columns(tree: exp.Expr, facts: SchemaFacts) -> list[exp.Column]:
    known = {c.name.lower() for t in facts.tables for c in t.columns}
    return [
        c
        for c in tree.find_all(exp.Column)
        if isinstance(c.this, exp.Identifier) and len(c.name) >= 4 and c.name.lower() in known
    ]


def misspelled_column(tree: exp.Expr, d: str, facts: SchemaFacts, rng: random.Random):
    names = list(dict.fromkeys(c.name for c in _columns(tree, facts)))
    for name in rng.sample(names, len(names)):
        copy = tree.copy()
        target = next(c for c in _columns(copy, facts) if c.name == name)
        wrong = _misspell(name, rng)
        target.this.set("this", wrong)
        yield copy, f"{name} -> {wrong}"


def misspelled_table(tree: exp.Expr, d: str, facts: SchemaFacts, rng: random.Random):
    names = list(
        dict.fromkeys(
            t.name for t in tree.find_all(exp.Table) if len(t.name) >= 4 and facts.table(t.name)
        )
    )
    for name in rng.sample(names, len(names)):
        copy = tree.copy()
        wrong = _misspell(name, rng)
        for table in copy.find_all(exp.Table):
            if table.name == name:
                table.this.set("this", wrong)
        yield copy, f"{name} -> {wrong}"


_FOREIGN_NAMES: dict[str, dict[type[exp.Expr], str]] = {
    "sqlite": {exp.Coalesce: "NVL", exp.Length: "LEN", exp.CurrentDate: "CURDATE"},
    "postgresql": {exp.Coalesce: "IFNULL", exp.Length: "LEN", exp.CurrentDate: "CURDATE"},
}
_FOREIGN_WRITERS = {"sqlite": "mysql", "postgresql": "sqlite"}
"""A dialect whose way of writing date formatting and string aggregation is swapped in."""


def foreign_function(tree: exp.Expr, d: str, facts: SchemaFacts, rng: random.Random):
    """One function call at a time written as another dialect writes it."""
    names = _FOREIGN_NAMES.get(d, {})
    writer = _FOREIGN_WRITERS.get(d)
    count = sum(1 for _ in tree.find_all(exp.Func))
    for index in rng.sample(range(count), count):
        copy = tree.copy()
        node = list(copy.find_all(exp.Func))[index]
        swapped = _swap(node, names, writer, d)
        if swapped is not None:
            before = node.sql(dialect=_sg(d))
            node.replace(swapped)
            yield copy, f"{before} -> {swapped.sql(dialect=_sg(d))}"


def _swap(node: exp.Func, names: dict[type[exp.Expr], str], writer: str | None, d: str):
    args = [a.copy() for a in (node.this, *node.expressions) if isinstance(a, exp.Expr)]
    for kind, name in names.items():
        if type(node) is kind and (kind is not exp.Coalesce or len(args) == 2):
            return exp.Anonymous(this=name, expressions=args)
    if isinstance(node, exp.Extract) and d == "postgresql":
        part = node.this.name.upper() if isinstance(node.this, exp.Expr) else ""
        if part in ("YEAR", "MONTH", "DAY") and isinstance(node.expression, exp.Expr):
            return exp.Anonymous(this=part, expressions=[node.expression.copy()])
    if isinstance(node, exp.TimeToStr | exp.GroupConcat) and writer is not None:
        return exp.Var(this=node.sql(dialect=writer))
    if isinstance(node, exp.CurrentTimestamp) and d == "sqlite":
        return exp.Anonymous(this="NOW", expressions=[])
    return None


def equals_null(tree: exp.Expr, d: str, facts: SchemaFacts, rng: random.Random):
    count = sum(1 for n in tree.find_all(exp.Is) if isinstance(n.expression, exp.Null))
    for index in range(count):
        copy = tree.copy()
        node = [n for n in copy.find_all(exp.Is) if isinstance(n.expression, exp.Null)][index]
        wrapped = isinstance(node.parent, exp.Not)
        negated = wrapped or bool(node.args.get("negate"))
        comparison = exp.NEQ if negated else exp.EQ
        new = comparison(this=node.this.copy(), expression=exp.Null())
        (node.parent if wrapped else node).replace(new)
        yield copy, "IS NOT NULL -> <> NULL" if negated else "IS NULL -> = NULL"


def missing_group_by(tree: exp.Expr, d: str, facts: SchemaFacts, rng: random.Random):
    selects = [s for s in tree.find_all(exp.Select) if _droppable(s)]
    for index in range(len(selects)):
        copy = tree.copy()
        select = [s for s in copy.find_all(exp.Select) if _droppable(s)][index]
        group = select.args["group"]
        dropped = group.expressions[-1]
        dropped.pop()
        yield copy, f"GROUP BY without {dropped.sql(dialect=_sg(d))}"


def _droppable(select: exp.Select) -> bool:
    group = select.args.get("group")
    if not isinstance(group, exp.Group) or len(group.expressions) < 2:
        return False
    last = group.expressions[-1].sql().lower()
    projected = {
        (p.this if isinstance(p, exp.Alias) else p).sql().lower() for p in select.expressions
    }
    return isinstance(group.expressions[-1], exp.Column) and last in projected


_STRING = re.compile(r"'([A-Za-z][A-Za-z0-9 _-]{0,30})'")
_NAME = re.compile(r"(?<![\w.'\"`])([a-z_][a-z0-9_]{3,})(?=\s*(?:,|\s+FROM|\s*=|\s*>|\s*<))", re.I)


def wrong_quoting(
    text: str, d: str, facts: SchemaFacts, rng: random.Random
) -> Iterator[tuple[str, str]]:
    """A string in identifier quotes, or a name in another dialect's quotes (text edits)."""
    quote = "`" if d == "sqlite" else '"'
    for match in list(_STRING.finditer(text))[:3]:
        yield (
            text[: match.start()] + f"{quote}{match.group(1)}{quote}" + text[match.end() :],
            (f"'{match.group(1)}' -> {quote}{match.group(1)}{quote}"),
        )
    if d == "postgresql":
        known = {c.name.lower() for t in facts.tables for c in t.columns}
        for match in _NAME.finditer(text):
            if match.group(1).lower() in known:
                yield (
                    text[: match.start()] + f"`{match.group(1)}`" + text[match.end() :],
                    (f"{match.group(1)} -> `{match.group(1)}`"),
                )
                break


TreeMutator = Callable[[exp.Expr, str, SchemaFacts, random.Random], Iterator[tuple[exp.Expr, str]]]
MUTATORS: dict[str, TreeMutator] = {
    "misspelled_column": misspelled_column,
    "misspelled_table": misspelled_table,
    "foreign_function": foreign_function,
    "equals_null": equals_null,
    "missing_group_by": missing_group_by,
}
"""Mutations of the gold query's tree; `wrong_quoting` edits its text."""


def mutants_of(subject: Subject, facts: SchemaFacts, per_kind: int, seed: int) -> list[Mutant]:
    """Up to `per_kind` distinct mutants of each kind (their text is sqlglot's writing)."""
    d = subject.dialect
    tree = sqlglot.parse_one(subject.gold, read=_sg(d))
    rendered = tree.sql(dialect=_sg(d))
    seen = {normalize_sql(rendered, d)}
    found: list[Mutant] = []

    def keep(kind: str, sql: str, detail: str) -> bool:
        key = normalize_sql(sql, d)
        if key in seen:
            return False
        seen.add(key)
        found.append(Mutant(subject.id, d, kind, sql, detail))
        return True

    for kind, mutate in MUTATORS.items():
        rng = random.Random(f"{seed}:{subject.id}:{kind}")
        made = 0
        for mutated, detail in mutate(tree, d, facts, rng):
            made += keep(kind, mutated.sql(dialect=_sg(d)), detail)
            if made >= per_kind:
                break
    rng = random.Random(f"{seed}:{subject.id}:quoting")
    made = 0
    for text, detail in wrong_quoting(rendered, d, facts, rng):
        made += keep("wrong_quoting", text, detail)
        if made >= per_kind:
            break
    return found


# ------------------------------------------------------------------ running


class Bounded:
    """An executor whose statements get `TIMEOUT_S` at most; counts what it runs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dialect = inner.dialect
        self.statements = 0

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout: float | None = None, **_: Any
    ) -> ExecResult:
        self.statements += 1
        limit = min(timeout or TIMEOUT_S, TIMEOUT_S)
        return self.inner.execute(sql, max_rows=max_rows, timeout=limit)

    def reflect(self, sample_rows: int = 3):  # type: ignore[no-untyped-def]
        return self.inner.reflect(sample_rows)


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float) or type(value).__name__ == "Decimal":
        return f"{float(value):.6f}"
    return repr(value)


def same_rows(gold: ExecResult, other: ExecResult, ordered: bool) -> bool:
    """Whether `other` runs and returns `gold`'s rows (in order when `ordered`)."""
    if not other.ok or len(other.columns) != len(gold.columns):
        return False
    a = [tuple(_cell(v) for v in row) for row in gold.rows]
    b = [tuple(_cell(v) for v in row) for row in other.rows]
    return a == b if ordered else sorted(a) == sorted(b)


FORMAT_ONLY = ["layout", "capitalisation"]
"""sqlfluff rule groups that change only whitespace and case (left out unless asked)."""


def sqlfluff_fix(sql: str, dialect: str, all_rules: bool = False) -> tuple[str | None, str]:
    """`sqlfluff fix` of `sql` (None and the reason when sqlfluff fails on it)."""
    import sqlfluff  # optional: the dev extra installs it

    excluded = None if all_rules else FORMAT_ONLY
    try:
        return sqlfluff.fix(sql, dialect=SQLFLUFF_DIALECT[dialect], exclude_rules=excluded), ""
    except Exception as exc:  # sqlfluff raises several kinds on text it cannot parse
        return None, f"{type(exc).__name__}: {str(exc)[:200]}"


def _verdict(
    gold: ExecResult,
    before: str,
    after: str | None,
    result: ExecResult | None,
    d: str,
    ordered: bool,
) -> str:
    """repaired (the gold rows), other rows (it runs, wrongly), fails, or unchanged."""
    if after is None:
        return "fails"
    if normalize_sql(after, d) == normalize_sql(before, d):
        return "unchanged"
    if result is None or not result.ok:
        return "fails"
    return "repaired" if same_rows(gold, result, ordered) else "other rows"


def repair_one(
    mutant: Mutant,
    gold: ExecResult,
    executor: Bounded,
    facts: SchemaFacts,
    ordered: bool,
    fluff: Fluff,
) -> None:
    d = mutant.dialect
    broken = executor.execute(mutant.sql)
    breaks = not same_rows(gold, broken, ordered)
    record: dict[str, Any] = {
        "subject": mutant.subject,
        "dialect": d,
        "kind": mutant.kind,
        "detail": mutant.detail,
        "sql": mutant.sql,
        "status": broken.status,
        "error": broken.error,
        "breaks": breaks,
    }
    if breaks:
        before = executor.statements
        state = RuleChain(executor, facts, d).run(mutant.sql, broken)
        record["rules"] = {
            "verdict": _verdict(gold, mutant.sql, state.sql, state.result, d, ordered),
            "sql": state.sql,
            "fired": state.repaired_by,
            "hints": [r for r, _ in state.hints],
            "statements": executor.statements - before,
            "llm_calls": 0,
        }
        if fluff.enabled:
            fixed, why = sqlfluff_fix(mutant.sql, d, fluff.all_rules)
            result = executor.execute(fixed) if fixed else None
            record["sqlfluff"] = {
                "verdict": _verdict(gold, mutant.sql, fixed, result, d, ordered),
                "sql": fixed,
                "error": why or None,
            }
    mutant.record = record


def control(
    subject: Subject,
    gold: ExecResult,
    executor: Bounded,
    facts: SchemaFacts,
    ordered: bool,
    fluff: Fluff,
) -> dict[str, Any]:
    """What the rules and sqlfluff do to the correct query itself."""
    d = subject.dialect
    state = RuleChain(executor, facts, d).run(subject.gold, gold)
    changed = state.changed(subject.gold, d)
    found = {
        "rules_changed": changed,
        "rules_broke": changed and not same_rows(gold, state.result, ordered),
        "rules_fired": state.repaired_by,
    }
    if fluff.enabled:
        fixed, _ = sqlfluff_fix(subject.gold, d, fluff.all_rules)
        result = executor.execute(fixed) if fixed else None
        found["sqlfluff_broke"] = (
            fixed is None or result is None or not same_rows(gold, result, ordered)
        )
    return found


def run_subject(
    subject: Subject, evaluator: Evaluator, args: argparse.Namespace
) -> tuple[list[Mutant], dict[str, Any] | None]:
    fluff = Fluff(not args.no_sqlfluff, args.sqlfluff_all_rules)
    factory = evaluator.factory(subject.task.dialect)
    if factory is None:
        return [], None
    prepared = prepare_database(factory, subject.task)
    try:
        with open_database(prepared.url) as raw:
            executor = Bounded(raw)
            gold = executor.execute(subject.gold)
            if not gold.ok:
                return [], None
            facts = schema_facts(raw.reflect(sample_rows=0), subject.dialect)
            ordered = has_top_level_order_by(subject.gold, subject.dialect)
            rendered = sqlglot.parse_one(subject.gold, read=_sg(subject.dialect)).sql(
                dialect=_sg(subject.dialect)
            )
            if not same_rows(gold, executor.execute(rendered), ordered):
                return (
                    [],
                    None,
                )  # sqlglot's writing of the gold query changes it: no mutants from it
            mutants = mutants_of(subject, facts, args.per_kind, args.seed)
            for mutant in mutants:
                repair_one(mutant, gold, executor, facts, ordered, fluff)
            return mutants, control(subject, gold, executor, facts, ordered, fluff)
    finally:
        prepared.drop()


# ------------------------------------------------------------------ reporting


def summarise(
    mutants: list[Mutant], controls: list[dict[str, Any]], use_sqlfluff: bool
) -> dict[str, Any]:
    breaking = [m.record for m in mutants if m.record.get("breaks")]
    by: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in breaking:
        for key in (
            (r["kind"], r["dialect"]),
            (r["kind"], "all"),
            ("all", r["dialect"]),
            ("all", "all"),
        ):
            c = by[key]
            c["mutants"] += 1
            c["rules"] += r["rules"]["verdict"] == "repaired"
            c["rules_wrong"] += r["rules"]["verdict"] == "other rows"
            if use_sqlfluff:
                c["sqlfluff"] += r["sqlfluff"]["verdict"] == "repaired"
                c["sqlfluff_wrong"] += r["sqlfluff"]["verdict"] == "other rows"
    fired: Counter[str] = Counter(
        rule
        for r in breaking
        if r["rules"]["verdict"] == "repaired"
        for rule in r["rules"]["fired"]
    )
    return {
        "mutants_generated": len(mutants),
        "mutants_breaking": len(breaking),
        "equivalent": len(mutants) - len(breaking),
        "subjects": len(controls),
        "table": {f"{k}|{d}": dict(c) for (k, d), c in sorted(by.items())},
        "rules_fired_in_repairs": dict(fired.most_common()),
        "gold_changed_by_rules": sum(c["rules_changed"] for c in controls),
        "gold_broken_by_rules": sum(c["rules_broke"] for c in controls),
        "gold_broken_by_sqlfluff": sum(c.get("sqlfluff_broke", False) for c in controls)
        if use_sqlfluff
        else None,
        "statements_per_rule_repair": round(
            sum(r["rules"]["statements"] for r in breaking) / max(1, len(breaking)), 2
        ),
    }


def _pct(n: int, total: int) -> str:
    return f"{n} ({100.0 * n / total:.1f} %)" if total else "-"


def render(summary: dict[str, Any], use_sqlfluff: bool) -> str:
    lines = [
        "| mutation | dialect | breaking mutants | rules alone repair | rules: other rows | "
        + ("sqlfluff fix repairs | sqlfluff: other rows | " if use_sqlfluff else "")
        + "LLM calls saved |",
        "|---|---|---:|---:|---:|" + ("---:|---:|" if use_sqlfluff else "") + "---:|",
    ]
    for key, c in summary["table"].items():
        kind, dialect = key.split("|")
        n = c["mutants"]
        row = f"| {kind} | {dialect} | {n} | {_pct(c['rules'], n)} | {c['rules_wrong']} | "
        if use_sqlfluff:
            row += f"{_pct(c['sqlfluff'], n)} | {c['sqlfluff_wrong']} | "
        lines.append(row + f"{c['rules']} |")
    lines += [
        "",
        f"{summary['mutants_generated']} mutants of {summary['subjects']} gold queries, "
        f"{summary['mutants_breaking']} breaking ({summary['equivalent']} equivalent, left out). "
        f"Gold queries the rules change: {summary['gold_changed_by_rules']}, of which "
        f"{summary['gold_broken_by_rules']} return other rows"
        + (
            f"; gold queries sqlfluff fix breaks: {summary['gold_broken_by_sqlfluff']}."
            if use_sqlfluff
            else "."
        ),
        f"Statements the rules run per breaking mutant (probes and tries): "
        f"{summary['statements_per_rule_repair']}. Rules in the repairs: "
        + ", ".join(f"{k} {v}" for k, v in summary["rules_fired_in_repairs"].items()),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sample", type=Path, help="synthetic tasks instead of the dev split")
    parser.add_argument("--dialects", default="sqlite,postgresql")
    parser.add_argument("--per-kind", type=int, default=2)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--limit", type=int, default=0, help="at most this many gold queries")
    parser.add_argument("--no-sqlfluff", action="store_true")
    parser.add_argument("--sqlfluff-all-rules", action="store_true")
    parser.add_argument("--pg-url")
    args = parser.parse_args(argv)
    dialects = [d.strip() for d in args.dialects.split(",") if d.strip()]
    subjects = (
        sample_subjects(args.sample, dialects) if args.sample else dev_subjects(args.data, dialects)
    )
    if args.limit:
        subjects = subjects[: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    mutants: list[Mutant] = []
    controls: list[dict[str, Any]] = []
    started = time.perf_counter()
    with Evaluator(EvalOptions(servers=ServerURLs.resolve(args.pg_url, None))) as evaluator:
        for subject in subjects:
            made, checked = run_subject(subject, evaluator, args)
            mutants += made
            if checked is not None:
                controls.append(checked)
            print(f"{subject.id}: {len(made)} mutants", file=sys.stderr, flush=True)
    with (args.out / "corpus.jsonl").open("w") as out:
        for mutant in mutants:
            out.write(json.dumps(mutant.record, default=str) + "\n")
    summary = summarise(mutants, controls, not args.no_sqlfluff)
    summary["seconds"] = round(time.perf_counter() - started, 1)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    text = render(summary, not args.no_sqlfluff)
    (args.out / "summary.md").write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
