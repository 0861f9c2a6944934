"""Candidate pools: greedy + samples + deterministic repairs, deduplicated, executed once."""

from __future__ import annotations

import json

import pytest

from acts_sql.db.connect import open_database
from acts_sql.db.result import ExecResult
from acts_sql.demo import demo_db_path
from acts_sql.prompts.context import TaskContext, sql_reply_cap
from acts_sql.tools.base import PoolSettings, ToolCall, ToolEnv
from acts_sql.tools.pool import strip_echoed_reasons
from acts_sql.tools.registry import run_tool, tool_list
from support import scripted

SCHEMA = {
    "rooms": ["room_id", "name", "capacity"],
    "bookings": ["booking_id", "room_id", "booked_by", "start_time", "end_time"],
}


class CountingExecutor:
    """The demo database, counting the statements it runs."""

    def __init__(self) -> None:
        self.inner = open_database(str(demo_db_path()))
        self.dialect = self.inner.dialect
        self.statements: list[str] = []

    def execute(self, sql, *, max_rows=None, timeout=None):
        self.statements.append(sql)
        return self.inner.execute(sql, max_rows=max_rows, timeout=timeout)

    def scratch(self):
        return self.inner.scratch()

    def reflect(self, sample_rows=3):
        return self.inner.reflect(sample_rows)

    def close(self):
        self.inner.close()


class Memory:
    def __init__(self, known=None, rejected=None):
        self.known = known or {}
        self.rejected = rejected or {}

    def known_result(self, sql):
        return self.known.get(" ".join(sql.split()))

    def rejection(self, sql):
        return self.rejected.get(" ".join(sql.split()))

    def reasons(self):
        return list(self.rejected.values())

    def dropped(self):
        return list(self.rejected)


def env(script, *, size=1, rules=True, memory=None, original_sql="SELECT room_id FROM rooms"):
    executor = CountingExecutor()
    task = TaskContext(
        dialect="sqlite",
        question="Which rooms have overlapping bookings?",
        original_sql=original_sql,
        schema_text="-",
        schema_names=SCHEMA,
        tool_list=tool_list(),
    )
    llm = scripted(script)
    return (
        ToolEnv(
            executor=executor,
            llm=llm,
            task=task,
            pool=PoolSettings(size=size, temperature=0.7, rules=rules),
            memory=memory,
        ),
        executor,
        llm,
    )


def gen(sql):
    return json.dumps({"sql": sql, "rationale": "r"})


def run(tool_env, tool="generate_sql", **input):
    return run_tool(tool, tool_env, ToolCall(node_id="n1", input=input))


def test_a_pool_is_greedy_then_samples_and_repeats_are_votes_not_executions():
    script = {
        "generate_sql": [
            gen("SELECT room_id FROM rooms WHERE capacity > 8"),
            gen("select room_id from rooms where capacity>8;"),  # the greedy one again
            gen("SELECT room_id FROM rooms WHERE capacity > 10"),
        ]
    }
    tool_env, executor, llm = env(script, size=3)
    outcome = run(tool_env)

    assert [(e.origin, e.votes) for e in outcome.candidates] == [("greedy", 2), ("sample", 1)]
    assert len(executor.statements) == 2  # the repeat was not executed again
    temperatures = [r.temperature for r in llm.requests]
    assert temperatures == [0.0, 0.7, 0.7]
    assert [r.seed for r in llm.requests] == [None, 1, 2]  # each sample its own seed
    assert outcome.candidate_sql == "SELECT room_id FROM rooms WHERE capacity > 8"
    assert [p["votes"] for p in outcome.output.dump()["pool"]] == [2, 1]


def test_a_sql_the_run_already_executed_reuses_its_result():
    known_sql = "SELECT room_id FROM rooms WHERE capacity > 8"
    earlier = ExecResult(status="ok", columns=["room_id"], rows=[[2]], row_count=1)
    tool_env, executor, _ = env(
        {"generate_sql": [gen(known_sql)]}, memory=Memory(known={known_sql: earlier})
    )
    outcome = run(tool_env)
    assert outcome.candidates[0].known and outcome.candidates[0].result == earlier
    assert executor.statements == []


def test_a_greedy_answer_that_repeats_a_rejected_sql_is_asked_again_hotter():
    rejected_sql = "SELECT room_id FROM rooms"
    memory = Memory(
        known={rejected_sql: ExecResult(status="ok", columns=["room_id"], rows=[[1]], row_count=1)},
        rejected={rejected_sql: "it is the user's SQL"},
    )
    script = {"generate_sql": [gen(rejected_sql), gen("SELECT room_id FROM bookings")]}
    tool_env, _, llm = env(script, memory=memory)
    outcome = run(tool_env)

    assert [e.origin for e in outcome.candidates] == ["retry", "greedy"]
    retry = llm.requests[1]
    assert retry.temperature >= 1.0
    prompt = retry.messages[-1].content
    assert "Do not repeat these SQL statements" in prompt and "it is the user's SQL" in prompt


def test_a_failing_candidate_gets_deterministic_repairs_in_the_same_pool():
    script = {"generate_sql": [gen("SELECT room_name, capacity FROM rooms WHERE capacity > 8")]}
    tool_env, _, llm = env(script)
    outcome = run(tool_env)

    origins = {e.origin: e for e in outcome.candidates}
    assert origins["greedy"].result.status == "error"
    repaired = origins["rule:unknown_identifier"]
    assert repaired.result.ok and "name" in repaired.sql and "room_name" not in repaired.sql
    assert len(llm.requests) == 1  # no LLM call for the repair


def test_a_candidate_that_dropped_the_users_with_clause_gets_it_back():
    user_sql = (
        "WITH big AS (SELECT room_id, capacity FROM rooms WHERE capacity >= 8) "
        "SELECT COUNT(*) FROM big"
    )
    script = {"generate_sql": [gen("SELECT room_id FROM big ORDER BY capacity DESC")]}
    tool_env, _, llm = env(script, original_sql=user_sql)
    outcome = run(tool_env)

    origins = {e.origin: e for e in outcome.candidates}
    assert "no such table: big" in (origins["greedy"].result.error or "")
    repaired = origins["rule:missing_cte"]
    assert repaired.result.ok and repaired.result.row_count > 0
    assert repaired.sql.startswith("WITH big AS (SELECT room_id, capacity FROM rooms WHERE")
    assert repaired.sql.endswith("SELECT room_id FROM big ORDER BY capacity DESC")
    assert len(llm.requests) == 1


def test_without_rules_a_failing_pool_stays_as_written():
    script = {"generate_sql": [gen("SELECT room_name FROM rooms")]}
    tool_env, _, _ = env(script, rules=False)
    outcome = run(tool_env)
    assert [e.origin for e in outcome.candidates] == ["greedy"]


def test_split_fix_syntax_leaves_sql_that_runs_alone_at_no_llm_cost():
    tool_env, _, llm = env({})
    outcome = run_tool(
        "split_fix_syntax",
        tool_env,
        ToolCall(node_id="n1", input={"sql": "SELECT room_id FROM rooms"}),
    )
    assert outcome.output.dump()["runs"] is True and not outcome.candidates
    assert llm.requests == []


def test_a_greedy_prompt_asked_again_becomes_a_sample_and_seeds_never_repeat():
    script = {"generate_sql": [gen("SELECT 1")] * 4}
    tool_env, _, llm = env(script, size=2)
    run(tool_env)
    run(tool_env)  # a regenerated node whose prompt did not change
    temperatures = [r.temperature for r in llm.requests]
    seeds = [r.seed for r in llm.requests]
    assert temperatures[0] == 0.0 and all(t >= 0.7 for t in temperatures[1:])
    assert seeds[0] is None and len(set(seeds[1:])) == 3  # every sample its own seed


def test_a_statement_blocked_only_because_it_does_not_parse_is_repairable():
    from acts_sql.tools.pool import repairable

    unparsed = ExecResult(
        status="blocked",
        error="blocked: cannot be checked: PostgreSQL syntax error: line 1, column 41: ...",
        error_kind="blocked",
    )
    write = ExecResult(status="blocked", error="blocked: writes are not allowed")
    assert repairable(unparsed) and not repairable(write)
    assert repairable(ExecResult(status="timeout")) and not repairable(ExecResult(status="ok"))


def test_once_a_draw_repeats_a_rejected_sql_the_later_draws_are_told_not_to():
    rejected_sql = "SELECT room_id FROM rooms"
    memory = Memory(
        known={rejected_sql: ExecResult(status="ok", columns=["room_id"], rows=[[1]], row_count=1)},
        rejected={rejected_sql: "it is the user's SQL"},
    )
    script = {
        "generate_sql": [
            gen("SELECT room_id FROM rooms WHERE capacity > 4"),  # greedy: new
            gen(rejected_sql),  # first sample: repeats the rejected one
            gen("SELECT room_id FROM bookings"),
        ]
    }
    tool_env, _, llm = env(script, size=3, memory=memory)
    run(tool_env)
    prompts = [r.messages[-1].content for r in llm.requests]
    assert "Do not repeat" not in prompts[0] and "Do not repeat" not in prompts[1]
    assert "Do not repeat these SQL statements" in prompts[2] and rejected_sql in prompts[2]


def test_a_sample_that_repeats_a_failing_candidate_of_its_pool_warns_the_later_draws():
    """A failing SQL written again is no vote for anything: once a draw repeats one that
    failed in this pool, the later draws are told not to write it, with its error."""
    failing = "SELECT room_name FROM rooms"  # no such column
    script = {
        "generate_sql": [
            gen(failing),  # greedy: fails
            gen(failing),  # first sample: the same failing SQL
            gen("SELECT name FROM rooms"),
        ]
    }
    tool_env, _, llm = env(script, size=3, rules=False)
    outcome = run(tool_env)
    prompts = [r.messages[-1].content for r in llm.requests]
    assert "Do not repeat" not in prompts[1]
    assert "Do not repeat these SQL statements" in prompts[2]
    assert failing in prompts[2] and "it fails: error: no such column: room_name" in prompts[2]
    assert [(e.sql, e.votes) for e in outcome.candidates] == [
        (failing, 2),
        ("SELECT name FROM rooms", 1),
    ]


def test_a_greedy_answer_that_repeats_a_sql_the_run_saw_fail_is_asked_again_hotter():
    """The engine's memory (BookMemory) reports a SQL that failed earlier in the run as one
    not to repeat, so the pool re-asks with that SQL and its error shown."""
    from acts_sql.engine.candidate_stage import BookMemory
    from acts_sql.engine.candidates import CandidateBook
    from acts_sql.engine.trust import TrustContext

    failing = "SELECT room_name FROM rooms"
    book = CandidateBook("sqlite")
    error = ExecResult(status="error", error="no such column: room_name\nLINE 1: ...")
    book.add("n1", failing, error, None, origin="greedy")
    trust = TrustContext.build("sqlite", "SELECT room_id FROM rooms", None, False)
    memory = BookMemory(book, trust)
    assert memory.rejection("select room_name from rooms;") == (
        "it fails: error: no such column: room_name"
    )
    assert memory.rejection("SELECT name FROM rooms") is None

    script = {"generate_sql": [gen(failing), gen("SELECT name FROM rooms")]}
    tool_env, executor, llm = env(script, rules=False, memory=memory)
    outcome = run(tool_env)
    assert [e.origin for e in outcome.candidates] == ["retry", "greedy"]
    assert llm.requests[1].temperature >= 1.0
    assert "it fails: error: no such column: room_name" in llm.requests[1].messages[-1].content
    assert executor.statements == ["SELECT name FROM rooms"]  # the known failure is not re-run


def test_every_draw_names_the_sql_it_must_not_write_again():
    """The request's ``avoid`` (what a local model is steered away from): the run's dropped
    SQL for every draw, and for the later draws also what failed in this pool."""
    failing = "SELECT room_name FROM rooms"  # no such column
    rejected_sql = "SELECT room_id FROM rooms"
    script = {"generate_sql": [gen(failing), gen("SELECT name FROM rooms"), gen("SELECT 1")]}
    tool_env, _, llm = env(script, size=3, rules=False, memory=_rejecting(rejected_sql))
    run(tool_env)
    avoided = [r.avoid.values if r.avoid else [] for r in llm.requests]
    assert avoided[0] == [rejected_sql] and all(a.field == "sql" for a in [llm.requests[0].avoid])
    # the greedy answer failed in this pool: the samples after it avoid it too
    assert avoided[1] == avoided[2] == [rejected_sql, failing]


def test_the_run_memory_names_the_users_sql_and_every_dropped_candidate():
    from acts_sql.engine.candidate_stage import BookMemory
    from acts_sql.engine.candidates import CandidateBook
    from acts_sql.engine.trust import TrustContext

    book = CandidateBook("sqlite")
    failed = book.add("n1", "SELECT nope FROM rooms", ExecResult(status="error"), None, origin="g")
    ran = ExecResult(status="ok", columns=["a"], rows=[[1]], row_count=1)
    kept = book.add("n1", "SELECT 1", ran, None, origin="sample")
    refused = book.add("n1", "SELECT 2", ran, None, origin="sample")
    book.refuse(refused, "the user's rows")
    users = "SELECT room_id FROM rooms"
    memory = BookMemory(book, TrustContext.build("sqlite", users, None, False), users)
    assert memory.dropped() == [users, failed.sql, refused.sql]
    assert kept.sql not in memory.dropped()
    # text-to-SQL mode: there is no user's SQL to avoid
    assert BookMemory(book, TrustContext.build("sqlite", "", None, False), "").dropped() == [
        failed.sql,
        refused.sql,
    ]


def _rejecting(sql):
    return Memory(
        known={sql: ExecResult(status="ok", columns=["room_id"], rows=[[1]], row_count=1)},
        rejected={sql: "it is the user's SQL"},
    )


def test_a_pool_stops_drawing_once_two_draws_repeated_a_dropped_sql():
    """Greedy and retry both hand back the rejected SQL: the two samples left are not
    drawn (they would most likely repeat it too), and the outcome says why."""
    rejected_sql = "SELECT room_id FROM rooms"
    script = {"generate_sql": [gen(rejected_sql), gen(rejected_sql), gen("SELECT 1")]}
    tool_env, _, llm = env(script, size=4, memory=_rejecting(rejected_sql))
    outcome = run(tool_env)
    assert len(llm.requests) == 2  # greedy and retry; no sample
    assert [e.sql for e in outcome.candidates] == [rejected_sql]
    stopped = outcome.output.dump()["pool_stopped"]
    assert "3 of 4 draw(s) left" in stopped and "2 repeated" in stopped
    assert stopped in outcome.summary


def test_a_pool_keeps_drawing_while_its_draws_bring_something_new_or_when_told_to():
    rejected_sql = "SELECT room_id FROM rooms"
    new = [gen(f"SELECT room_id FROM rooms WHERE capacity > {n}") for n in (1, 2, 3, 4)]
    script = {"generate_sql": [gen(rejected_sql), *new]}
    tool_env, _, llm = env(script, size=4, memory=_rejecting(rejected_sql))
    outcome = run(tool_env)  # one repeat, then new SQL: greedy, retry and three samples
    assert len(llm.requests) == 5 and "pool_stopped" not in outcome.output.dump()
    assert len(outcome.candidates) == 5  # the greedy repeat is there too, as known

    script = {"generate_sql": [gen(rejected_sql)] * 5}
    tool_env, _, llm = env(script, size=4, memory=_rejecting(rejected_sql))
    tool_env.pool.stop_after_repeats = 0
    run(tool_env)
    assert len(llm.requests) == 5  # greedy, retry and three samples


def test_a_reply_that_rewrites_sql_is_capped_by_the_length_of_that_sql():
    """About twice the SQL's tokens plus room for the JSON, within [256, 1024]: a runaway
    reply to a short statement stops early instead of at the backend's 1024 tokens."""
    long_sql = "SELECT room_id FROM rooms WHERE " + " OR ".join(
        f"room_id = {i}" for i in range(200)
    )
    assert sql_reply_cap("SELECT 1") == 256
    assert sql_reply_cap(long_sql) == 1024
    medium = "SELECT " + ", ".join(f"c{i}" for i in range(120)) + " FROM t"
    assert 256 < sql_reply_cap(medium) == 2 * len(medium) // 3 + 128 < 1024

    tool_env, _, llm = env({"generate_sql": [gen("SELECT room_id FROM rooms WHERE capacity > 8")]})
    run(tool_env)
    assert llm.requests[0].max_tokens == sql_reply_cap(tool_env.task.original_sql)
    fix_env, _, fix_llm = env(
        {
            "decompose": [json.dumps({"units": [{"name": "u1", "sql": medium, "depends_on": []}]})],
            "fix_syntax": [json.dumps({"sql": "SELECT room_id FROM rooms"})],
        }
    )
    run(fix_env, "split_fix_syntax", sql=medium + " WHERE")
    fix = next(r for r in fix_llm.requests if r.purpose == "fix_syntax")
    assert fix.max_tokens == sql_reply_cap(medium + " WHERE")
    units = next(r for r in fix_llm.requests if r.purpose == "decompose")
    assert units.max_tokens == min(1024, 2 * sql_reply_cap(medium + " WHERE"))


def test_the_samples_of_a_pool_repeat_the_greedy_prompt_so_it_is_evaluated_once():
    # a local model keeps the evaluated prompt in its KV cache: identical prompts
    # mean K candidates cost one prompt evaluation and K generations
    script = {
        "generate_sql": [gen(f"SELECT room_id FROM rooms WHERE capacity > {n}") for n in range(4)]
    }
    tool_env, _, llm = env(script, size=4)
    run(tool_env)
    assert len(llm.requests) == 4
    assert all(r.messages == llm.requests[0].messages for r in llm.requests)
    assert [r.temperature for r in llm.requests] == [0.0, 0.7, 0.7, 0.7]


SAME_ROWS = (
    "returns exactly the rows of the user's SQL, which the issue says do not do what it asks"
)
FAILS = "it fails: error: syntax error at end of input"


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        # the whole reason after the SQL, as the 0.5B wrote it (acts run, PostgreSQL_23)
        (f"SELECT EXTRACT(QUARTER FROM ts) AS quarter ({SAME_ROWS})",
         "SELECT EXTRACT(QUARTER FROM ts) AS quarter"),
        # in the middle, before more SQL
        (f"SELECT a FROM t ({FAILS})\nORDER BY a", "SELECT a FROM t\nORDER BY a"),
        # cut short at the end of the reply
        ("SELECT a FROM t (returns exactly the rows of the us", "SELECT a FROM t"),
        # two reasons
        (f"SELECT a FROM t ({FAILS}) ({SAME_ROWS});", "SELECT a FROM t"),
        # SQL's own parentheses stay
        ("SELECT (a + 1) FROM t WHERE b IN (1, 2)", "SELECT (a + 1) FROM t WHERE b IN (1, 2)"),
        # the start of a reason that more SQL follows is no copy cut short: it stays
        ("SELECT a FROM t WHERE b = '(returns exactly the rows' AND c = 2",
         "SELECT a FROM t WHERE b = '(returns exactly the rows' AND c = 2"),
    ],
)  # fmt: skip
def test_reasons_the_model_copied_into_its_sql_are_cut(written, kept):
    assert strip_echoed_reasons(written, [SAME_ROWS, FAILS, "short"]) == kept


def test_a_reason_too_short_to_be_told_from_sql_is_left():
    assert strip_echoed_reasons("SELECT a FROM t (x)", ["x"]) == "SELECT a FROM t (x)"


def test_a_draw_that_copies_a_reason_is_the_sql_it_copied_it_after():
    """The greedy answer is the rejected SQL plus the reason it was rejected for: it is that
    SQL again (so the draw is asked again hotter), not a new statement that fails on the
    reason's words."""
    rejected_sql = "SELECT room_id FROM rooms"
    memory = Memory(
        known={rejected_sql: ExecResult(status="ok", columns=["room_id"], rows=[[1]], row_count=1)},
        rejected={rejected_sql: SAME_ROWS},
    )
    script = {
        "generate_sql": [gen(f"{rejected_sql} ({SAME_ROWS})"), gen("SELECT room_id FROM bookings")]
    }
    tool_env, executor, llm = env(script, memory=memory)
    outcome = run(tool_env)

    assert [e.origin for e in outcome.candidates] == ["retry", "greedy"]
    assert all(SAME_ROWS not in sql for sql in executor.statements)
    note = llm.requests[1].messages[-1].content
    # the note puts each reason on a line of its own, before the SQL it is about
    assert f"- dropped because {SAME_ROWS}:\n  {rejected_sql}\n" in note
    assert f"{rejected_sql} (" not in note


def test_split_fix_syntax_puts_back_a_dropped_with_clause_at_no_llm_cost():
    user_sql = "WITH big AS (SELECT room_id FROM rooms WHERE capacity >= 8) SELECT * FROM big"
    tool_env, _, llm = env({}, original_sql=user_sql)
    outcome = run_tool(
        "split_fix_syntax",
        tool_env,
        ToolCall(node_id="n1", input={"sql": "SELECT COUNT(*) FROM big"}),
    )
    assert outcome.output.dump()["repaired_by_rules"] == ["missing_cte"]
    assert outcome.candidates[0].result.ok
    assert outcome.candidates[0].sql.startswith("WITH big AS (SELECT room_id FROM rooms")
    assert llm.requests == []
