#!/usr/bin/env python
"""The names check as a fallback-ranking key: which answers change, and are they right?

Would it change what runs that accept nothing return, and would the changed answers be
right more often? No model, no database server.

    .venv/bin/python scripts/fallback_names_rank.py [--data ../shared/data/bird-critic]
        [--rule all|any]

The proposal: in `CandidateBook.rank` (`acts_sql.engine.candidates`), a new key right after
"not a checked rejection" and before support: a result group whose members fail the names
check (`acts_sql.engine.named_names`) ranks below groups that pass it. ``--rule all`` (the
default, the proposal): a group fails when every member, on its own, drops a name;
``--rule any``: when the group's SQL texts together fail `NamedNames.check` (one member
dropping a name is enough, as the acceptance gate reads it).

For every kept run whose final answer was not accepted, the ranking is rebuilt from the
trace's ``candidates`` and ``groups`` (the book as it stood when the run ended) with the
current key and with the proposed one, and `final_choice` is applied
(`acts_sql.engine.selection`). Approximations, both of which leave the comparison alone:

- the trace does not say whether the user's SQL ran, so when the best candidate does not run
  the answer is "the user's SQL or that candidate" (the proposed key orders only groups, so
  the pick is the same under both keys);
- groups written before ``checked`` existed count as not checked (the field's default).

Runs: every ``acts*``/``linear*`` directory of ``results/bird-critic-dev`` with traces and
``candidates.jsonl`` (verdicts: the record's status for the final answer, the scored
candidate in ``candidates.jsonl`` for another one; schema names: the stand-in of
``scripts/names_check_measure.py``); and every ``results/everyday-local/*/traces/acts``
with ``records-acts.jsonl``. Everyday answers are scored as the bench does
(`acts_sql.bench.everyday.scoring.returns_gold`, gold and answer run on the case's
database) for the SQLite cases only: the DuckDB and PostgreSQL cases would need their own
databases (PostgreSQL a server), so their changed picks are listed unscored.

Prints, per run and in total: tasks not accepted; how the recorded final answer is
reproduced (``no_book``: the trace holds no candidates; ``same_now``: today's ranking gives
it, the answer compared as normalised SQL; ``earlier_rank``: only an earlier ranking from
the git history gives it, `EARLIER_KEYS`, so the run predates today's ranking;
``unexplained``); picks that change (today's ranking vs the proposed one) and of those old
right -> new wrong, old wrong -> new right, both wrong, both right, unscored. The "old"
verdict is that of today's pick: the record's when it is the recorded answer, else the
scored candidate's. Then one line per changed task (run, task, old -> new pick and verdict,
the names the old pick's group drops) and every task whose recorded answer is not today's
pick. For the everyday SQLite cases it also rescores every recorded final SQL, as a check
of the scoring.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acts_sql.bench import loader
from acts_sql.bench.candidates import canonical, project_dialect, read_candidates
from acts_sql.bench.everyday.cases import EverydayCase, fixture_statements, load_cases
from acts_sql.bench.everyday.scoring import gold_result, returns_gold
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.engine.named_names import NamedNames
from acts_sql.engine.trust import SAME_SQL

sys.path.insert(0, str(Path(__file__).resolve().parent))
from names_check_measure import SETS, everyday_schema, named, read_jsonl

ROOT = Path(__file__).resolve().parent.parent
JUDGE_SCORE = {"accept": 2, None: 1, "reject": 0}
PREFERRED_ORIGINS = ("raw", "rule")
ORIGINAL = "<the user's SQL>"


# ---------------------------------------------------------------- the ranking, rebuilt


@dataclass
class Book:
    """The candidates and groups of one trace, with the lookups `CandidateBook.rank` uses."""

    candidates: list[dict[str, Any]]
    groups: dict[str, dict[str, Any]]
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, trace: dict[str, Any]) -> Book:
        candidates = list(trace.get("candidates") or [])
        groups = {g["id"]: g for g in trace.get("groups") or []}
        return cls(candidates, groups, {c["id"]: c for c in candidates})

    def members(self, group_id: str) -> list[dict[str, Any]]:
        return [self.by_id[m] for m in self.groups[group_id]["members"] if m in self.by_id]

    def support(self, group_id: str | None) -> int:
        if group_id is None or group_id not in self.groups:
            return 0
        return sum(c.get("votes", 1) for c in self.members(group_id) if c["verdict"] != "refused")

    def judge_view(self, c: dict[str, Any]) -> str | None:
        group = self.groups.get(c.get("group") or "")
        if c.get("judge") is None and group is not None and group.get("rejected_reason"):
            return "reject"
        return c.get("judge")


def runs(c: dict[str, Any]) -> bool:
    return (c.get("result") or {}).get("status") == "ok"


def current_key(book: Book, c: dict[str, Any]) -> tuple[Any, ...]:
    """`CandidateBook.rank` on the stored book."""
    group = book.groups.get(c.get("group") or "")
    return (
        c["verdict"] == "accepted",
        runs(c),
        c["verdict"] != "refused",
        not (group is not None and group.get("checked")),
        book.support(c.get("group")) if group is not None else 0,
        JUDGE_SCORE[book.judge_view(c)],
        c.get("origin", "greedy").split(":")[0] in PREFERRED_ORIGINS,
        -c.get("order", 0),
    )


def key_91c0ec2(book: Book, c: dict[str, Any]) -> tuple[Any, ...]:
    """The ranking from commit 91c0ec2 until f415ce8: the judge's view of the rows before the
    group's votes (refused members counted), no checked rejections, no preferred origins."""
    group = book.groups.get(c.get("group") or "")
    return (
        c["verdict"] == "accepted",
        runs(c),
        c["verdict"] != "refused",
        JUDGE_SCORE[book.judge_view(c)],
        group["votes"] if group is not None else c.get("votes", 1),
        -c.get("order", 0),
    )


def key_a841f45(book: Book, c: dict[str, Any]) -> tuple[Any, ...]:
    """The ranking from commit a841f45 until 91c0ec2: as `key_91c0ec2`, but the judge's verdict
    on this candidate only (not on a group with the same rows)."""
    key = key_91c0ec2(book, c)
    return (*key[:3], JUDGE_SCORE[c.get("judge")], *key[4:])


EARLIER_KEYS = {"91c0ec2": key_91c0ec2, "a841f45": key_a841f45}
"""Earlier rankings of `CandidateBook.rank` (git history), to tell a ranking change since the
run from a book the trace does not hold faithfully."""

GroupFails = Callable[[str], bool]


def group_fails(book: Book, names: NamedNames, rule: str) -> GroupFails:
    """Whether a group fails the names check under `rule` (see the module doc)."""

    def fails(group_id: str) -> bool:
        sqls = [c["sql"] for c in book.members(group_id)]
        if not sqls:
            return False
        if rule == "any":
            return names.check(sqls).verdict == "fail"
        return all(names.check([s]).verdict == "fail" for s in sqls)

    return fails


def proposed_key(book: Book, fails: GroupFails, c: dict[str, Any]) -> tuple[Any, ...]:
    key = current_key(book, c)
    group_id = c.get("group")
    names_ok = not (group_id in book.groups and fails(group_id))
    return (*key[:4], names_ok, *key[4:])


def best(book: Book, key: Callable[[dict[str, Any]], tuple[Any, ...]]) -> dict[str, Any] | None:
    """`CandidateBook.best`: the highest key (`sorted` is stable, so the first on a tie)."""
    ranked = sorted(book.candidates, key=key, reverse=True)
    return ranked[0] if ranked else None


def answer(pick: dict[str, Any] | None) -> tuple[str, str]:
    """`final_choice` without an acceptance: (candidate id or ORIGINAL, SQL or "")."""
    if pick is None:
        return ORIGINAL, ""
    if pick["verdict"] == "refused" and pick.get("reason") == SAME_SQL:
        return ORIGINAL, ""
    return pick["id"], pick["sql"]


# ---------------------------------------------------------------- one task


@dataclass
class Outcome:
    run: str
    task: str
    reproduced: str
    """How the recorded answer is reproduced: "now" (today's ranking), an earlier ranking's
    commit, "no book" (the trace has no candidates), or "" (not reproduced)."""
    old: str = ""
    new: str = ""
    old_verdict: str = ""
    new_verdict: str = ""
    dropped: str = ""
    old_sql: str = ""
    new_sql: str = ""
    rescored: str = ""
    """Everyday SQLite cases: whether scoring the recorded final SQL here gives the record's
    `right` ("agrees"/"disagrees"), a check of the scoring."""

    @property
    def changed(self) -> bool:
        return self.old != self.new


def same_sql(a: str, b: str, dialect: str) -> bool:
    return canonical(a or "", dialect) == canonical(b or "", dialect)


def reproduces(
    book: Book,
    key: Callable[[dict[str, Any]], tuple[Any, ...]],
    trace: dict[str, Any],
    dialect: str,
) -> bool:
    """Whether `final_choice` with this ranking gives the trace's final SQL."""
    pick = best(book, key)
    pick_id, pick_sql = answer(pick)
    final, original = trace.get("sql") or "", trace.get("original_sql") or ""
    if pick is not None and not runs(pick):  # the user's SQL or this one: the trace cannot tell
        return same_sql(final, pick_sql, dialect) or same_sql(final, original, dialect)
    return same_sql(final, original if pick_id == ORIGINAL else pick_sql, dialect)


def fidelity(book: Book, trace: dict[str, Any], dialect: str) -> str:
    if not book.candidates:
        return "no book"
    if reproduces(book, lambda c: current_key(book, c), trace, dialect):
        return "now"
    for commit, key in EARLIER_KEYS.items():
        if reproduces(book, functools.partial(key, book), trace, dialect):
            return commit
    return ""


def compare(
    run: str, task: str, trace: dict[str, Any], names: NamedNames, rule: str, dialect: str
) -> Outcome:
    """Today's pick and the proposed pick of one not-accepted trace."""
    book = Book.of(trace)
    fails = group_fails(book, names, rule)
    old = best(book, lambda c: current_key(book, c))
    new = best(book, lambda c: proposed_key(book, fails, c))
    old_id, old_sql = answer(old)
    new_id, new_sql = answer(new)
    original = trace.get("original_sql") or ""
    outcome = Outcome(run, task, fidelity(book, trace, dialect), old_id, new_id)
    outcome.old_sql = old_sql if old_id != ORIGINAL else original
    outcome.new_sql = new_sql if new_id != ORIGINAL else original
    if old is not None and old.get("group"):
        outcome.dropped = ", ".join(
            sorted({n for m in book.members(old["group"]) for n in names.dropped(m["sql"])})
        )
    return outcome


# ---------------------------------------------------------------- BIRD-CRITIC dev


def dev_runs(results: Path) -> list[Path]:
    return [
        d
        for d in sorted(results.iterdir())
        if d.name.split("-")[0] in ("acts", "linear")
        and (d / "traces").is_dir()
        and (d / "candidates.jsonl").is_file()
    ]


def dev_verdict(line: Any, sql: str, dialect: str) -> str:
    """The evaluator's verdict on `sql` in a `CandidateLine`, or "unscored"."""
    if line is None:
        return "unscored"
    key = canonical(sql, dialect)
    for verdict in line.verdicts:
        if canonical(verdict.sql, dialect) == key:
            return str(verdict.verdict.value if verdict.verdict else "unscored")
    return "unscored"


def dev_run(run: Path, tasks: dict[tuple[str, str], dict[str, Any]], rule: str) -> list[Outcome]:
    lines = read_candidates(run / "candidates.jsonl")
    outcomes = []
    for record in read_jsonl(run / "records.jsonl"):
        if record.get("accepted") or not record.get("trace_file"):
            continue
        key = (record["set"], str(record["instance_id"]))
        path = loader.stored_trace(run / record["trace_file"])
        if path is None:
            continue
        trace = loader.read_trace(path)
        dialect = project_dialect(record["dialect"])
        outcome = compare(run.name, key[1], trace, named(tasks[key]), rule, dialect)
        if outcome.changed:
            line = lines.get(key)
            stale = line is not None and (
                line.final_status.value != record["status"] or line.accepted != record["accepted"]
            )
            line = None if stale else line
            outcome.old_verdict = (
                str(record["status"])
                if outcome.reproduced == "now"
                else dev_verdict(line, outcome.old_sql, dialect)
            )
            outcome.new_verdict = dev_verdict(line, outcome.new_sql, dialect)
        outcomes.append(outcome)
    return outcomes


# ---------------------------------------------------------------- everyday


@contextmanager
def sqlite_databases(cases: list[EverydayCase]) -> Iterator[dict[str, Executor]]:
    """A read-only executor per schema of the SQLite cases, on fixture files built here."""
    with tempfile.TemporaryDirectory(prefix="fallback_names_") as folder:
        executors: dict[str, Executor] = {}
        try:
            for schema in sorted({c.schema_name for c in cases}):
                path = Path(folder) / f"{schema}.sqlite"
                with closing(sqlite3.connect(path)) as conn:
                    for statement in fixture_statements(schema, "sqlite"):
                        conn.execute(statement)
                    conn.commit()
                executors[schema] = open_database(f"sqlite:///{path}")
            yield executors
        finally:
            for executor in executors.values():
                executor.close()


def everyday_right(case: EverydayCase, sql: str, executor: Executor) -> str:
    """Verdict "passed" or "failed", as `bench everyday` scores `sql` (`scoring.returns_gold`)."""
    gold = executor.execute(case.gold_sql)
    final = executor.execute(sql) if sql.strip() else None
    return "passed" if returns_gold(final, gold_result(gold, case.ordered)) else "failed"


def everyday_run(
    run: Path, cases: dict[str, EverydayCase], executors: dict[str, Executor], rule: str
) -> list[Outcome]:
    outcomes = []
    for record in read_jsonl(run / "records-acts.jsonl"):
        if record.get("accepted") or not record.get("trace_file"):
            continue
        case = cases[record["id"]]
        path = loader.stored_trace(run / record["trace_file"])
        if path is None:
            continue
        trace = loader.read_trace(path)
        names = NamedNames.of(case.question, case.wrong_sql, everyday_schema(case.schema_name))
        outcome = compare(run.name, case.id, trace, names, rule, case.dialect)
        executor = executors.get(case.schema_name) if case.dialect == "sqlite" else None
        recorded = "passed" if record.get("right") else "failed"
        if executor is not None:
            rescored = everyday_right(case, record.get("final_sql") or "", executor)
            outcome.rescored = "agrees" if rescored == recorded else "disagrees"
        if outcome.changed:
            if executor is None:
                outcome.old_verdict = recorded if outcome.reproduced == "now" else "unscored"
                outcome.new_verdict = f"unscored ({case.dialect})"
            else:
                outcome.old_verdict = everyday_right(case, outcome.old_sql, executor)
                outcome.new_verdict = everyday_right(case, outcome.new_sql, executor)
                if outcome.reproduced == "now" and outcome.old_verdict != recorded:
                    outcome.old_verdict += f" (record says {recorded})"
        outcomes.append(outcome)
    return outcomes


# ---------------------------------------------------------------- report


FIDELITY = {"now": "same_now", "no book": "no_book", "": "unexplained"}


def tally(outcomes: list[Outcome]) -> Counter[str]:
    counts: Counter[str] = Counter(not_accepted=len(outcomes))
    for o in outcomes:
        counts[FIDELITY.get(o.reproduced, "earlier_rank")] += 1
        if not o.changed:
            continue
        counts["changed"] += 1
        old_right = o.old_verdict.startswith("passed")
        scored = ("passed", "failed", "error", "timeout")
        if not (o.new_verdict.startswith(scored) and o.old_verdict.startswith(scored)):
            counts["unscored"] += 1
        elif o.new_verdict == "passed":
            counts["both right" if old_right else "wrong->right"] += 1
        else:
            counts["right->wrong" if old_right else "both wrong"] += 1
    return counts


COLUMNS = (
    "not_accepted",
    "no_book",
    "same_now",
    "earlier_rank",
    "unexplained",
    "changed",
    "right->wrong",
    "wrong->right",
    "both wrong",
    "both right",
    "unscored",
)


def print_table(rows: list[tuple[str, Counter[str]]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"{'run':{width}}  " + "  ".join(COLUMNS))
    for name, counts in rows:
        print(f"{name:{width}}  " + "  ".join(f"{counts[c]:>{len(c)}}" for c in COLUMNS))


def report(title: str, runs_outcomes: list[tuple[str, list[Outcome]]]) -> Counter[str]:
    print(f"== {title}")
    rows = [(name, tally(outcomes)) for name, outcomes in runs_outcomes]
    total: Counter[str] = Counter()
    for _, counts in rows:
        total.update(counts)
    print_table([*rows, ("TOTAL", total)])
    rescored = Counter(o.rescored for _, outcomes in runs_outcomes for o in outcomes if o.rescored)
    if rescored:
        print(
            f"  scoring check (recorded final SQL rescored here vs the record): "
            f"{rescored['agrees']} agree, {rescored['disagrees']} disagree"
        )
    for _, outcomes in runs_outcomes:
        for o in outcomes:
            if o.changed:
                print(
                    f"  changed {o.run} {o.task}: {o.old} {o.old_verdict} -> {o.new} "
                    f"{o.new_verdict}; old pick drops: {o.dropped or '-'}"
                )
    for _, outcomes in runs_outcomes:
        for o in outcomes:
            if o.reproduced not in ("now", "no book"):
                how = (
                    f"reproduced by the ranking of {o.reproduced}"
                    if o.reproduced
                    else "unexplained"
                )
                print(f"  recorded answer is not today's pick {o.old}: {o.run} {o.task}: {how}")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/bird-critic")
    parser.add_argument("--rule", choices=("all", "any"), default="all")
    args = parser.parse_args()
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    tasks = {
        (s, str(t["instance_id"])): t
        for s in SETS
        for t in read_jsonl(args.data / f"tasks/{s}.jsonl")
    }
    print(f"rule: a group fails when {args.rule} of its members drop a name")
    dev = [
        (run.name, dev_run(run, tasks, args.rule))
        for run in dev_runs(ROOT / "results/bird-critic-dev")
    ]
    grand = report("BIRD-CRITIC dev (acts, linear)", dev)
    cases = {c.id: c for c in load_cases()}
    everyday_dirs = [
        d
        for d in sorted((ROOT / "results/everyday-local").iterdir())
        if (d / "traces/acts").is_dir() and (d / "records-acts.jsonl").is_file()
    ]
    with sqlite_databases([c for c in cases.values() if c.dialect == "sqlite"]) as executors:
        everyday = [(d.name, everyday_run(d, cases, executors, args.rule)) for d in everyday_dirs]
    grand.update(report("everyday (acts; SQLite cases scored)", everyday))
    print("== all runs")
    print_table([("TOTAL", grand)])


if __name__ == "__main__":
    main()
