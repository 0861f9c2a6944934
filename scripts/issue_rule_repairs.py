#!/usr/bin/env python
"""What would a rule's repair of the issue SQL, accepted with no model call, be worth? No model.

    source /tmp/svc/env   # or pass --pg-url / --mysql-url
    .venv/bin/python scripts/issue_rule_repairs.py [--data /work/shared/data/bird-critic] \\
        [--out artifacts/issue-rule-repairs] [--timeout 20] [--limit-tasks N] [--ids ID ...]

For every task of the development split (``--data/dev``, joined with ``--data/tasks``), on
the database the bench gives the agent (a fresh database with the task's ``preprocess_sql``,
statements isolated, as `scripts/candidate_rule_repairs.py` opens it), the issue SQL is run;
when it does not run (an error, a timeout, or blocked by the guard), the whole rule chain
repairs it with the issue SQL as reference, as the engine's ``_rule_entries`` does (on any
failure). A repair that runs, returns a result set and changed the SQL is scored by the bench's
evaluator (`Evaluator.score`): would accepting it, with no call, have passed the task?

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


def measure(item: ScoredTask, evaluator: Evaluator, cap_s: float) -> dict[str, Any]:
    """The issue SQL's status, the chain's repair of it, and the evaluator's verdict."""
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
        if first.ok:
            return row
        try:
            state = chain.run(issue_sql, first)
        except Exception as exc:  # a rule crash is a finding
            return row | {"crash": f"{type(exc).__name__}: {one_line(str(exc))}"}
        changed = canonical(state.sql, dialect) != canonical(issue_sql, dialect)
        ran = state.result.ok and bool(state.result.columns)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data/bird-critic"))
    parser.add_argument("--out", type=Path, default=Path("artifacts/issue-rule-repairs"))
    parser.add_argument("--pg-url", default=None)
    parser.add_argument("--mysql-url", default=None)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per statement")
    parser.add_argument("--limit-tasks", type=int, default=None)
    parser.add_argument("--ids", nargs="*", default=None)
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
            row = measure(item, evaluator, args.timeout)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
