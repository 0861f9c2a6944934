"""scripts/trace_stats.py: where a run's LLM time went, read from its traces."""

from __future__ import annotations

from support import load_script


def _script():
    return load_script("trace_stats")


def call(purpose, prompt, cached, written, seconds, **data):
    return {
        "kind": "llm_call",
        "purpose": purpose,
        "data": {
            "prompt_tokens": prompt,
            "cached_prompt_tokens": cached,
            "completion_tokens": written,
            "seconds": seconds,
            **data,
        },
    }


def test_seconds_by_purpose_and_the_writing_rate_of_cached_prompts_by_decoder():
    stats = _script()
    trace = {
        "trace": [
            call("plan", 900, 0, 200, 40.0),  # a cold prompt: not a writing rate
            call("generate_sql", 1000, 950, 100, 12.0, decoder="lookup"),  # 50 prompt tokens
            call("generate_sql", 1000, 999, 150, 10.0, decoder="sampler", temperature=0.8),
            call("generate_sql", 1000, 999, 90, 10.0, decoder="sampler", temperature=0.8),
            call("judge", 1200, 1199, 60, 12.0),  # an older trace: no decoder recorded
            call("choose", 1200, 1199, 4, 1.0),  # too short to say anything about a rate
        ]
    }
    one = stats.task_stats(trace)
    assert one["seconds"] == {"plan": 40.0, "generate_sql": 32.0, "judge": 12.0, "choose": 1.0}
    assert dict(one["writing"]) == {
        "sampler tokens": 240,
        "sampler seconds": 20.0,
        "unknown tokens": 60,
        "unknown seconds": 12.0,
    }
    assert stats._rates(one["writing"]) == "sampler 12.0 (240 tokens), unknown 5.0 (60 tokens)"
    assert stats._shares({"a": 30.0, "b": 10.0}) == "a 30 s (75 %), b 10 s (25 %)"


def test_the_throughput_floor_is_uncached_prompt_over_its_rate_plus_writing_over_its_rate():
    stats = _script()
    usage = {
        "seconds": 130.0,
        "llm_seconds": 120.0,
        "prompt_tokens": 5000,
        "cached_prompt_tokens": 3000,
        "completion_tokens": 400,
    }
    one = stats.task_stats({"trace": [], "usage": usage})
    assert dict(one["time"]) == {
        "wall seconds": 130.0,
        "llm seconds": 120.0,
        "uncached prompt tokens": 2000,
        "written tokens": 400,
    }
    run = {"run": "r", "time": {**one["time"], "tasks": 2}}
    floored = stats.with_floor(run, prompt_rate=100.0, gen_rate=20.0)
    assert floored["time"]["floor seconds"] == 40.0  # 2000 / 100 + 400 / 20
    assert stats._per_task(floored["time"]).startswith("65 / 60 / 20 (at 100 / 20 tokens/s)")
    assert "give --prompt-rate" in stats._per_task(run["time"])


def test_judge_verdicts_count_the_accepts_the_engine_withdrew_apart():
    stats = _script()

    def judgement(by, verdict, summary):
        return {"kind": "judgement", "summary": summary, "data": {"by": by, "verdict": verdict}}

    trace = {
        "trace": [
            judgement("agent", "reject", "the rows miss the totals"),
            judgement("agent", "accept", "it does what the issue asks"),
            judgement(
                "engine", "reject", "the judge accepted, but its reason says the candidate is wrong"
            ),
            judgement(
                "engine",
                "reject",
                "the judge accepted a result only 1 candidate(s) agree on (at least 2 needed)",
            ),
            judgement(
                "engine",
                "reject",
                "the judge accepted, but 93% of its reason is copied (most of it from the issue)",
            ),
            judgement("engine", "reject", "c2 already rejected: the rows miss the totals"),
        ]
    }
    counts = stats.task_stats(trace)["counts"]
    assert counts["judge verdicts"] == 5
    assert counts["judge accept with a copied reason"] == 1
    assert (counts["judge accept"], counts["judge reject"]) == (1, 1)
    assert counts["judge accept contradicted by its reason"] == 1
    assert counts["judge accept of too few agreeing"] == 1


def test_engine_reasons_the_model_copied_are_counted_in_replies_and_candidates():
    stats = _script()
    copied = "SELECT a FROM t (it fails: error: syntax error at end of input)"

    def candidate(sql, status):
        return {"kind": "candidate", "data": {"sql": sql, "status": status}}

    trace = {
        "trace": [
            call("generate_sql", 900, 800, 40, 2.0, response='{"sql": "' + copied + '"}'),
            candidate(copied, "error"),  # written before the copies were cut
            call("generate_sql", 900, 800, 40, 2.0,
                 response="SELECT a FROM t (returns exactly the rows of the user's SQL, wh"),
            candidate("SELECT a FROM t", "ok"),  # the copy cut: the SQL it was written after
            call("generate_sql", 900, 800, 40, 2.0, response='{"sql": "SELECT (a) FROM t"}'),
            candidate("SELECT (a) FROM t", "ok"),
        ]
    }  # fmt: skip
    counts = stats.task_stats(trace)["counts"]
    assert counts["replies with a copied reason"] == 2
    assert counts["candidates with a copied reason"] == 1


def test_repeats_of_dropped_sql_and_steered_replies_are_counted():
    stats = _script()

    def candidate(sql, verdict, duplicate):
        data = {"sql": sql, "status": "ok", "verdict": verdict, "duplicate": duplicate}
        return {"kind": "candidate", "data": data}

    trace = {
        "trace": [
            call("generate_sql", 1000, 950, 100, 12.0, decoder="lookup", steered=2),
            call("generate_sql", 1000, 999, 90, 10.0, decoder="sampler", steered=1),
            call("generate_sql", 1000, 999, 90, 10.0, decoder="sampler"),
            candidate("SELECT 1", "refused", False),
            candidate("SELECT 1", "refused", True),  # a paid repeat of a dropped SQL
            candidate("SELECT 2", "unjudged", False),
            candidate("SELECT 2", "unjudged", True),  # a vote
        ]
    }
    counts = stats.task_stats(trace)["counts"]
    assert (counts["duplicates"], counts["repeats of a dropped SQL"]) == (2, 1)
    assert (counts["steered replies"], counts["forks"]) == (2, 3)


def test_feedback_that_starts_mid_line_is_counted():
    stats = _script()

    def node(tool, feedback):
        return {"tool": tool, "input": {"feedback": feedback} if feedback is not None else {}}

    tree = [
        node("generate_sql", "Rejected: SELECT 1 -- wrong"),
        node("generate_sql", "(3 earlier rejected candidate(s) not shown)\nRejected: SELECT 2"),
        node("generate_sql", "This candidate fails: SELECT x\nIts error: no such column"),
        node("generate_sql", "ULL THEN 'extra' END FROM t -- wrong"),  # cut at a char count
        node("generate_sql", ""),  # none given
        node("generate_sql", None),
        node("run_sql", "ULL not feedback of a generate_sql step"),
    ]
    counts = stats.task_stats({"trace": [], "tree": tree})["counts"]
    assert counts["steps with feedback"] == 4
    assert counts["feedback starting mid-line"] == 1


def test_plan_steps_repeating_their_path_are_counted_in_old_and_new_traces():
    stats = _script()
    col = {"table": "t", "column": "c"}
    old_plan = {
        "cursor": "a",
        "nodes": [
            {"id": "a", "tool": "inspect_columns", "input": col, "children": []},
            {"id": "b", "tool": "inspect_columns", "input": col, "children": []},
            {"id": "c", "tool": "generate_sql", "input": {}, "children": []},
        ],
    }
    old = {"kind": "plan", "data": {"plan": old_plan}}  # before the engine left them out
    new = {"kind": "plan", "data": {"plan": old_plan, "repeats": {"b": "a", "x": "a"}}}
    replan = {"kind": "plan", "data": {"plan": old_plan, "replan": True}}
    count = "plan steps repeating their path"
    assert stats.task_stats({"trace": [old]})["counts"][count] == 1
    assert stats.task_stats({"trace": [new]})["counts"][count] == 2
    assert stats.task_stats({"trace": [replan]})["counts"][count] == 0


def test_judge_accepts_that_vouch_for_the_users_sql_are_counted_from_the_replies():
    stats = _script()

    def judge(verdict, reason):
        return call(
            "judge", 900, 800, 40, 4.0, response=f'{{"reason": "{reason}", "verdict": "{verdict}"}}'
        )

    trace = {
        "trace": [
            judge("accept", "The user's SQL is already correct and does not need any changes."),
            judge("reject", "The user's SQL is already correct and does not need any changes."),
            judge("accept", "Group A lists rooms whose bookings intersect."),
            call("judge", 900, 800, 40, 4.0, response="not json"),
        ]
    }
    counts = stats.task_stats(trace)["counts"]
    assert counts["judge accepts vouching for the user's SQL"] == 1
