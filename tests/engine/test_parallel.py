"""`--parallel`: requests sent ahead overlap the waiting; the decisions and their order do not.

Two kinds of backend: the scripted one (replies by order: a request sent ahead only waits
out its latency, its reply is taken in the sequential order) and an endpoint stand-in
whose reply depends only on the request (what a deterministic endpoint does).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from typer.testing import CliRunner

from acts_sql import CorrectionOptions, correct
from acts_sql.cli.app import app
from acts_sql.engine.result import CorrectionResult
from acts_sql.llm.base import LLMRequest, LLMResponse, Usage
from acts_sql.llm.scripted import ScriptedBackend
from support import DEMO_SCRIPTS, demo_script, judge_story, scripted, without

VOLATILE = {"seconds", "t", "timeout_s", "sent_ahead", "llm_seconds", "parallel"}
TIMED_SUMMARIES = {"llm_call", "statement"}
SECOND_READING = "follows: overlapping bookings: a room with two bookings whose time ranges"


def _strip(value: Any) -> Any:
    return without(value, VOLATILE)


def comparable(result: CorrectionResult) -> dict[str, Any]:
    """Everything a run decided, without its timings. A pool's statements run in a
    background thread while the next draw is written, so where their events fall among
    the others depends on timing (with or without --parallel): they are compared apart."""
    data = result.model_dump(mode="json", exclude={"usage", "trace"})
    events = [
        {
            "kind": e.kind,
            "node": e.node,
            "purpose": e.purpose,
            "summary": "" if e.kind in TIMED_SUMMARIES else e.summary,
            "data": _strip(e.data.model_dump(mode="json")),
        }
        for e in result.trace
    ]
    return {
        "result": _strip(data),
        "trace": [e for e in events if e["kind"] != "statement"],
        "statements": [e for e in events if e["kind"] == "statement"],
        "calls": result.usage.by_purpose,
    }


def timed(run: Any) -> tuple[CorrectionResult, float]:
    started = time.perf_counter()
    result = run()
    return result, time.perf_counter() - started


class EndpointStub:
    """An endpoint stand-in: the reply is a function of the request alone (by purpose, and
    for `generate_sql` by the reading its prompt carries); sleeps `delay` per call."""

    def __init__(self, script: dict[str, list[str]], delay: float = 0.0) -> None:
        self.name = "endpoint-stub"
        self.delay = delay
        self.script = script
        self.requests: list[LLMRequest] = []
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.requests.append(request)
        time.sleep(self.delay)
        replies = self.script[request.purpose]
        text = replies[0]
        if request.purpose == "generate_sql":
            prompt = request.messages[-1].content
            text = replies[1] if SECOND_READING in prompt else replies[0]
        return LLMResponse(text=text, usage=Usage(purpose=request.purpose, seconds=self.delay))


def figure3(demo_db: str, demo_tasks: dict[str, Any], llm: Any, **options: Any) -> Any:
    task = demo_tasks["figure3"]
    return lambda: correct(
        demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(**options)
    )


def test_two_branches_with_parallel_2_take_less_wall_time_and_decide_the_same(demo_db, demo_tasks):
    """Figure 3, 1 s per call: the raw rewrite and the plan overlap, and so do the choice and
    the two branches' generations; 7 calls in about 5 s instead of 7 s."""
    runs = {}
    for parallel in (1, 2):
        llm = ScriptedBackend(demo_script("figure3"), delay_s=1.0)
        result, wall = timed(figure3(demo_db, demo_tasks, llm, parallel=parallel))
        runs[parallel] = (result, wall, llm.used())
    (one, wall_1, used_1), (two, wall_2, used_2) = runs[1], runs[2]

    assert one.accepted and two.accepted
    assert comparable(two) == comparable(one)
    assert two.tree == one.tree
    assert used_2 == used_1  # every scripted reply went to the same call
    assert one.usage.sent_ahead_llm_calls == 0
    assert two.usage.sent_ahead_llm_calls == 3  # the plan and the two branches
    assert wall_1 >= 7.0
    assert wall_2 <= wall_1 - 1.5, (wall_1, wall_2)


def test_a_branch_not_taken_leaves_its_scripted_reply_untaken(demo_db, demo_tasks):
    """The agent chooses the right branch first: the other branch's request was sent ahead
    but never used, and took no reply from the script (the sequential run's replies)."""
    script = demo_script("figure3")
    choice = json.loads(script["choose"][0])
    script["choose"] = [json.dumps({**choice, "cursor": "n1.2"})]
    script["generate_sql"] = [script["generate_sql"][1], script["generate_sql"][0]]
    results = {}
    for parallel in (1, 3):
        llm = ScriptedBackend(script, delay_s=0.05)
        results[parallel] = (figure3(demo_db, demo_tasks, llm, parallel=parallel)(), llm)
    (one, llm_1), (three, llm_3) = results[1], results[3]

    assert three.accepted and comparable(three) == comparable(one)
    assert llm_3.remaining() == llm_1.remaining()
    assert llm_3.remaining()["generate_sql"] == 1
    assert three.usage.unused_prefetches == 1  # n1.1's generation
    assert three.usage.sent_ahead_llm_calls == 2  # the plan and n1.2's generation


def test_an_endpoint_replying_by_request_gets_each_call_once(demo_db, demo_tasks):
    """The judge rejects the first branch: the second branch's request, sent while the agent
    chose, is the one the search makes after backtracking."""
    story = judge_story()
    endpoint_script = {**story, "judge": story["judge"]}
    results = {}
    for parallel in (1, 3):
        llm = _judging_endpoint(endpoint_script)
        run = figure3(demo_db, demo_tasks, llm, parallel=parallel, candidates=1)
        results[parallel] = (run(), llm)
    (one, llm_1), (three, llm_3) = results[1], results[3]

    assert one.accepted and comparable(three) == comparable(one)
    assert three.usage.sent_ahead_llm_calls == 3
    assert three.usage.unused_prefetches == 0
    assert len(llm_3.requests) == len(llm_1.requests) == 8


def _judging_endpoint(script: dict[str, list[str]]) -> EndpointStub:
    """The endpoint stub, with the judge's reply chosen by the candidate it is shown."""
    stub = EndpointStub(script, delay=0.05)
    reject, accept = script["judge"]
    plain = stub.complete

    def complete(request: LLMRequest) -> LLMResponse:
        response = plain(request)
        if request.purpose == "judge":
            text = accept if "b1.start_time" in request.messages[-1].content else reject
            return response.model_copy(update={"text": text})
        return response

    stub.complete = complete  # type: ignore[method-assign]
    return stub


def test_a_pool_sends_its_samples_ahead_and_reads_them_in_order(demo_db, demo_tasks):
    results = {}
    for parallel in (1, 4):
        llm = EndpointStub(demo_script("figure3"), delay=0.05)
        run = figure3(demo_db, demo_tasks, llm, parallel=parallel, candidates=3)
        results[parallel] = (run(), llm)
    (one, llm_1), (four, llm_4) = results[1], results[4]

    assert comparable(four) == comparable(one)
    # each pool of three: the greedy answer is the search's call, two samples went ahead
    pools = sum(1 for e in one.trace if e.kind == "pool")
    assert four.usage.sent_ahead_llm_calls >= 2 * pools
    assert {r.seed for r in llm_4.requests} == {r.seed for r in llm_1.requests}


def test_a_wrapper_around_a_scripted_backend_sends_nothing_ahead(demo_db, demo_tasks):
    """A backend that wraps an ordered one (here a recorder) cannot take replies in order."""
    llm = scripted(demo_script("figure3"))
    result = figure3(demo_db, demo_tasks, llm, parallel=4)()
    assert result.accepted
    assert result.usage.sent_ahead_llm_calls == 0
    assert result.usage.unused_prefetches == 0


def test_fix_takes_parallel_and_reports_the_calls_answered_ahead(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    args = ["fix", "--db", demo_db, "--question", task.question, "--sql", task.sql, "--json"]
    script = f"scripted:{DEMO_SCRIPTS / 'figure3.json'}"
    result = CliRunner().invoke(app, [*args, "--llm", script, "--parallel", "3"])
    assert result.exit_code == 0, result.output
    usage = json.loads(result.stdout)["usage"]
    assert (usage["sent_ahead_llm_calls"], usage["unused_prefetches"]) == (3, 0)
    refused = CliRunner().invoke(app, [*args, "--llm", script, "--parallel", "0"])
    assert refused.exit_code == 2
