#!/usr/bin/env python
"""What would a rule's repair of the issue SQL, accepted with no model call, be worth? No model.

    source /tmp/svc/env   # or pass --pg-url / --mysql-url
    .venv/bin/python scripts/issue_rule_repairs.py [--data /work/shared/data/bird-critic] \\
        [--out artifacts/issue-rule-repairs] [--timeout 20] [--limit-tasks N] [--ids ID ...] \
        [--running]

For every task of the development split (``--data/dev``, joined with ``--data/tasks``), on
the database the bench gives the agent (a fresh database with the task's ``preprocess_sql``,
statements isolated, as `scripts/candidate_rule_repairs.py` opens it), the issue SQL is run;
when it does not run (an error, a timeout, or blocked by the guard), the whole rule chain
repairs it with the issue SQL as reference, as the engine's ``_rule_entries`` does (on any
failure). A repair that runs, returns a result set and changed the SQL is scored by the bench's
evaluator (`Evaluator.score`): would accepting it, with no call, have passed the task? With
``--running`` the issue SQL that runs is repaired too (the logic rules, as the engine does when
the issue says the rows are wrong; a repair that returns the issue SQL's rows counts as none),
and the guesses of the rules that do not compose (`RuleChain.guesses`) are scored beside.

Prints one progress line per task on stderr; then, per rule set of the repairs (the rules
that repaired, in order), how many ran and how many passed; one JSON line per task to
``--out/rows.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from candidate_rule_repairs import SetupError, agent_database, one_line

from acts_sql.bench.candidates import canonical, project_dialect, statements_of
from acts_sql.bench.evaluate import load_items
from acts_sql.bench.models import ScoredTask, Status
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from acts_sql.engine.fingerprint import result_shape, same_rows


def measure(
    item: ScoredTask, evaluator: Evaluator, cap_s: float, running: bool = False
) -> dict[str, Any]:
    """The issue SQL's status, the chain's repair of it (and the guesses of the rules that do
    not compose), and the evaluator's verdicts; with `running`, also of issue SQL that runs."""
    dialect = project_dialect(item.task.dialect)
    issue_sql = ";\n".join(item.task.issue_sql)
    row: dict[str, Any] = {"task": "/".join(item.key), "dialect": dialect}
    with ExitStack() as stack:
        try:
            executor, chain = agent_database(stack, evaluator, item, cap_s)
        except SetupError as exc:
            return row | {"setup_error": str(exc)}
        first = executor.execute(issue_sql)
        row |= {"issue_status": first.status, "error": one_line(first.failure() or "")}
        if first.ok and not running:
            return row
        try:
            state = chain.run(issue_sql, first)
            guesses = chain.guesses(issue_sql, first)
        except Exception as exc:  # a rule crash is a finding
            return row | {"crash": f"{type(exc).__name__}: {one_line(str(exc))}"}
        row["guesses"] = [
            _guess(item, evaluator, g, issue_sql, first, dialect)
            for g in guesses
            if g.result.ok and canonical(g.sql, dialect) != canonical(issue_sql, dialect)
        ]
        changed = canonical(state.sql, dialect) != canonical(issue_sql, dialect)
        ran = state.result.ok and bool(state.result.columns)
        if first.ok and ran and _same_rows(state.result, first, dialect):
            changed = False  # a repair that returns the user's rows changes nothing for the gate
        row |= {
            "repaired": ran and changed,
            "rules": state.repaired_by,
            "rows": state.result.row_count if ran else None,
            "sql": state.sql if changed else "",
        }
    if row["repaired"]:
        scored = evaluator.score(item, statements_of(row["sql"], dialect))
        row |= {"verdict": scored.status.value, "reason": one_line(scored.reason, 200)}
    return row


def _guess(
    item: ScoredTask,
    evaluator: Evaluator,
    guess: Any,
    issue_sql: str,
    first: Any,
    dialect: str,
) -> dict[str, Any]:
    """One guess (a rule that does not compose) of the issue SQL, scored when its rows differ."""
    found = {"rules": guess.repaired_by, "rows": guess.result.row_count, "sql": guess.sql}
    if first.ok and _same_rows(guess.result, first, dialect):
        return found | {"verdict": "the user's rows"}
    scored = evaluator.score(item, statements_of(guess.sql, dialect))
    return found | {"verdict": scored.status.value, "reason": one_line(scored.reason, 200)}


def _same_rows(result: Any, other: Any, dialect: str) -> bool:
    """Whether two results hold the same rows, as the gate's refusal compares them."""
    return same_rows(result_shape("", result, dialect), result_shape("", other, dialect))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data/bird-critic"))
    parser.add_argument("--out", type=Path, default=Path("artifacts/issue-rule-repairs"))
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--mysql-url", default=None)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per statement")
    parser.add_argument("--limit-tasks", type=int, default=None)
    parser.add_argument("--ids", nargs="*", default=None)
    parser.add_argument(
        "--running", action="store_true", help="also repair issue SQL that runs (the logic rules)"
    )
    args = parser.parse_args(argv)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    items = load_items(args.data / "tasks", args.data / "dev", TaskFilter(ids=args.ids or []))
    items = [i for i in items if i.solution is not None][: args.limit_tasks]
    args.out.mkdir(parents=True, exist_ok=True)
    options = EvalOptions(servers=ServerURLs.resolve(args.pg_url, args.mysql_url))
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    with Evaluator(options) as evaluator, (args.out / "rows.jsonl").open("w") as out:
        for number, item in enumerate(items, 1):
            row = measure(item, evaluator, args.timeout, args.running)
            rows.append(row)
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            out.flush()
            print(
                f"[{number}/{len(items)}] {row['task']}: {row.get('issue_status', '-')}"
                f" repaired={row.get('repaired', '-')} {row.get('verdict', '')}"
                f" {','.join(row.get('rules') or [])} ({time.perf_counter() - started:.0f}s)",
                file=sys.stderr,
                flush=True,
            )
    failing = [r for r in rows if r.get("issue_status") not in (None, "ok")]
    repaired = [r for r in rows if r.get("repaired")]
    print(
        f"tasks {len(rows)}; issue SQL fails {len(failing)}; repaired and runs {len(repaired)};"
        f" passing {sum(r.get('verdict') == Status.PASSED.value for r in repaired)}"
    )
    by_rules: Counter[str] = Counter()
    passing: Counter[str] = Counter()
    for r in repaired:
        key = "+".join(dict.fromkeys(r["rules"])) or "-"
        by_rules[key] += 1
        passing[key] += r.get("verdict") == Status.PASSED.value
    for key, n in by_rules.most_common():
        print(f"  {key}: {n} repaired, {passing[key]} passing")
    verdicts: Counter[str] = Counter(
        f"{'+'.join(g['rules'])}: {g['verdict']}" for r in rows for g in r.get("guesses", [])
    )
    for key, n in sorted(verdicts.items()):
        print(f"  guess {key}: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
