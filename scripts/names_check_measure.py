#!/usr/bin/env python
"""How often the names check (`acts_sql.engine.named_names`) would block a right answer, and
how often it blocks a wrong acceptance. No model, no database server.

    .venv/bin/python scripts/names_check_measure.py [--data ../shared/data/bird-critic]

Prints, for the development split, how many questions name one of their issue SQL's names and
how many solutions drop one, and how many solutions read a table that neither the question nor
the issue SQL names (the evidence rule's "tables named", `NamedNames.added`); for every kept
development run (`results/bird-critic-dev/*`), answers other than the user's SQL by (evaluator
status, accepted, dropped); and for the everyday suite, gold answers and kept acceptances (gate
or judge) that drop one or read such a table. The BIRD-CRITIC databases are not here: a task's
schema names are read from its `preprocess_sql` and issue SQL (CREATE TABLE columns, tables and
columns referenced), a close stand-in; for the tables, the tables the solution reads too.
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from acts_sql.bench import loader
from acts_sql.bench.everyday.cases import fixture_statements, load_cases
from acts_sql.engine.named_names import NamedNames

ROOT = Path(__file__).resolve().parent.parent
SETS = ("flash", "open570", "pg530", "sqlite500")
DIALECTS = {"PostgreSQL": "postgres", "SQLite": "sqlite", "MySQL": "mysql"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [row for _, row in loader.read_jsonl(path)]


def parsed(sqls: list[str], dialect: str) -> Iterator[exp.Expression]:
    """The statements of `sqls` that sqlglot parses."""
    for sql in sqls:
        try:
            statements = sqlglot.parse(sql, read=dialect)
        except sqlglot.errors.SqlglotError:
            continue
        yield from (s for s in statements if s is not None)


def stand_in_schema(task: dict[str, Any]) -> dict[str, list[str]]:
    names: set[str] = set()
    dialect = DIALECTS.get(task["dialect"], "postgres")
    for statement in parsed(task.get("preprocess_sql", []) + task["issue_sql"], dialect):
        for node in statement.find_all(exp.Column, exp.Table, exp.ColumnDef):
            if node.name:
                names.add(node.name)
    return {"": sorted(names)}


def named(task: dict[str, Any]) -> NamedNames:
    return NamedNames.of(task["query"], "\n".join(task["issue_sql"]), stand_in_schema(task))


def development(data: Path) -> None:
    tasks = {
        (s, str(t["instance_id"])): t for s in SETS for t in read_jsonl(data / f"tasks/{s}.jsonl")
    }
    applicable = dropped = total = 0
    for s in SETS:
        for solution in read_jsonl(data / f"dev/{s}_solutions.jsonl"):
            total += 1
            names = named(tasks[(s, str(solution["instance_id"]))])
            applicable += bool(names.names or names.aggregates)
            if names.check(["\n".join(solution["sol_sql"])]).verdict == "fail":
                dropped += 1
                print(f"  solution drops a name: {s}/{solution['instance_id']}")
    print(
        f"development split: {total} tasks, {applicable} name one of the issue SQL's names "
        f"or aggregates, {dropped} solution(s) drop one"
    )
    tally: Counter[tuple[str, bool, bool]] = Counter()
    for records in sorted((ROOT / "results/bird-critic-dev").glob("*/records.jsonl")):
        for record in read_jsonl(records):
            task = tasks[(record["set"], str(record["instance_id"]))]
            answer = "\n".join(record["pred_sqls"] or [])
            if answer.strip() == "\n".join(task["issue_sql"]).strip():
                continue
            drops = named(task).check([answer]).verdict == "fail"
            tally[(record["status"], bool(record["accepted"]), drops)] += 1
    print("kept development runs, answers other than the user's SQL:")
    for (status, accepted, drops), n in sorted(tally.items()):
        print(f"  {status:7} accepted={accepted!s:5} drops a name={drops!s:5} {n}")


def tables_read(sqls: list[str], dialect: str) -> set[str]:
    """Tables the statements read (lower case), less their CTEs and the tables they create."""
    out: set[str] = set()
    for statement in parsed(sqls, dialect):
        own = {c.alias.lower() for c in statement.find_all(exp.CTE)}
        created = statement.find(exp.Table) if isinstance(statement, exp.Create) else None
        if created is not None:
            own.add(created.name.lower())
        out |= {t.name.lower() for t in statement.find_all(exp.Table) if t.name} - own
    return out


def development_tables(data: Path) -> None:
    """Solutions that read a table neither the question nor the issue SQL names. The schema's
    tables stand in as those the task's SQL and the solution read (the databases are not
    here)."""
    tasks = {
        (s, str(t["instance_id"])): t for s in SETS for t in read_jsonl(data / f"tasks/{s}.jsonl")
    }
    total = 0
    adding: list[str] = []
    for s in SETS:
        for solution in read_jsonl(data / f"dev/{s}_solutions.jsonl"):
            total += 1
            task = tasks[(s, str(solution["instance_id"]))]
            dialect = DIALECTS.get(task["dialect"], "postgres")
            read = tables_read(solution["sol_sql"], dialect)
            known = tables_read(task.get("preprocess_sql", []) + task["issue_sql"], dialect)
            schema = {t: [] for t in read | known}
            names = NamedNames.of(task["query"], "\n".join(task["issue_sql"]), schema)
            added = set(names.added("\n".join(solution["sol_sql"]))) & read
            if added:
                adding.append(f"{s}/{solution['instance_id']} ({', '.join(sorted(added))})")
    print(
        f"development split: {len(adding)} of {total} solutions read a table neither the "
        f"question nor the issue SQL names: {'; '.join(adding)}"
    )


def everyday_schema(schema: str) -> dict[str, list[str]]:
    conn = sqlite3.connect(":memory:")
    for statement in fixture_statements(schema, "sqlite"):
        conn.execute(statement)
    tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')] for t in tables}


def everyday() -> None:
    cases = {c.id: c for c in load_cases()}
    names = {
        c.id: NamedNames.of(c.question, c.wrong_sql, everyday_schema(c.schema_name))
        for c in cases.values()
    }
    gold = [i for i, c in cases.items() if names[i].check([c.gold_sql]).verdict == "fail"]
    checked = blocked = unvoted = 0
    for path in sorted((ROOT / "results/everyday-local").glob("*/traces/*/*.json.gz")):
        trace = loader.read_trace(path)
        case = path.name.split(".")[0]
        if not trace["accepted"]:
            continue
        checked += 1
        gate = [e for e in trace["trace"] if e["kind"] == "evidence" and e["data"]["accepted"]]
        sqls = (
            [
                c["sql"]
                for c in gate[0]["data"]["candidates"]
                if c["group"] == gate[0]["data"]["group"]
            ]
            if gate
            else [trace["sql"]]
        )
        if names[case].check(sqls).verdict == "fail":
            blocked += 1
            print(f"  would block: {path.relative_to(ROOT)}")
        if all(names[case].added(sql) for sql in sqls):
            unvoted += 1
            print(f"  reads a table nobody named: {path.relative_to(ROOT)}")
    added = [i for i, c in cases.items() if names[i].added(c.gold_sql)]
    print(
        f"everyday: {len(cases)} cases, {sum(bool(n.names) for n in names.values())} name one "
        f"of the wrong SQL's names, {len(gold)} gold answer(s) drop one, {len(added)} read a "
        f"table nobody named; {checked} kept acceptances, {blocked} would be blocked by the "
        f"names check, {unvoted} read a table nobody named"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/bird-critic")
    args = parser.parse_args()
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its fallback-parse warnings
    development(args.data)
    development_tables(args.data)
    everyday()


if __name__ == "__main__":
    main()
