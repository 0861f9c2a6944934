"""The tool contract: the registry validates a node's input once and runs the tool on typed
arguments; the engine reads the tools' own flags; the system prompt's tool list is rendered
from the registry (byte-identical to the text it replaced); outputs are typed models."""

from __future__ import annotations

from pathlib import Path

from pydantic import model_validator

from acts_sql.db.connect import open_database
from acts_sql.demo import demo_db_path
from acts_sql.engine.budget import Budget, BudgetTracker
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.recording import TracedLLM, UsageLedger
from acts_sql.engine.search import TreeSearch
from acts_sql.engine.trace import Trace
from acts_sql.engine.trust import TrustContext
from acts_sql.prompts.context import TaskContext, system_message
from acts_sql.tools.base import (
    PoolSettings,
    Tool,
    ToolArgs,
    ToolCall,
    ToolEnv,
    ToolOutcome,
    ToolOutput,
    advertised,
)
from acts_sql.tools.registry import TOOLS, run_tool, tool_list
from support import demo_script, scripted

SYSTEM_TXT = Path(__file__).parents[1] / "fixtures" / "prompts" / "system.txt"
"""The system message as it was written by hand before the tool list was rendered."""


class ProbeArgs(ToolArgs):
    table: str = advertised("T")
    limit: int = advertised("N", 5)

    @model_validator(mode="after")
    def _count(self) -> ProbeArgs:
        ProbeTool.validations += 1
        return self


class ProbeOutput(ToolOutput):
    table: str
    limit: int = 0


class ProbeTool(Tool[ProbeArgs]):
    name = "probe"
    description = "a tool of the tests."
    Args = ProbeArgs
    Output = ProbeOutput
    uses_execution = True
    produces_candidate = False
    validations = 0

    def __init__(self) -> None:
        self.seen: list[ProbeArgs] = []

    def run(self, env: ToolEnv, call: ToolCall, args: ProbeArgs) -> ToolOutcome:
        self.seen.append(args)
        return ToolOutcome(status="done", summary="probed", output=ProbeOutput(table=args.table))


def tool_env(script=None) -> ToolEnv:
    executor = open_database(str(demo_db_path()))
    task = TaskContext(
        dialect="sqlite", question="q", original_sql="SELECT 1", schema_text="-", tool_list=""
    )
    return ToolEnv(executor=executor, llm=scripted(script or {}), task=task)


def test_the_registry_validates_once_and_the_tool_runs_on_typed_arguments():
    probe = ProbeTool()
    ProbeTool.validations = 0
    outcome = run_tool(
        "probe",
        tool_env(),
        ToolCall(node_id="n1", input={"table": "rooms", "limit": "7"}),
        {"probe": probe},
    )
    assert ProbeTool.validations == 1
    assert probe.seen == [ProbeArgs(table="rooms", limit=7)]
    assert isinstance(outcome.output, ProbeOutput)
    assert outcome.output.dump() == {"table": "rooms"}  # the fields the tool set, only


def test_input_that_does_not_fit_fails_before_the_tool_runs():
    probe = ProbeTool()
    outcome = run_tool(
        "probe", tool_env(), ToolCall(node_id="n1", input={"limit": "x"}), {"probe": probe}
    )
    assert probe.seen == []
    assert outcome.status == "failed"
    assert outcome.error == (
        "invalid input for probe: table: Field required; "
        "limit: Input should be a valid integer, unable to parse string as an integer"
    )
    assert outcome.summary == f"failed: {outcome.error}"
    assert outcome.output.dump() == {}
    real = run_tool("run_sql", tool_env(), ToolCall(node_id="n1", input={}))
    assert real.error == "invalid input for run_sql: sql: Field required"


def search(tools, **options) -> TreeSearch:
    """A search over `tools` (this search's own registry; the global one stays as it is)."""
    trace, budget = Trace(), BudgetTracker(Budget())
    task = TaskContext(
        dialect="sqlite", question="q", original_sql="SELECT 1", schema_text="-", tool_list=""
    )
    run = TreeSearch(
        executor=open_database(str(demo_db_path())),
        llm=TracedLLM(scripted({}), trace, budget, UsageLedger()),
        task=task,
        options=CorrectionOptions(**options),
        trace=trace,
        budget=budget,
        trust=TrustContext.build("sqlite", "SELECT 1", None, False),
        pool=PoolSettings(),
    )
    run.tools = tools
    return run


def test_the_engine_leaves_out_the_tools_that_say_they_execute_when_execution_is_off():
    tools = {**TOOLS, "probe": ProbeTool()}
    assert "probe" in search(tools).enabled_tools()
    assert search(tools, execution_tools=False).enabled_tools() == [
        "detect_ambiguities",
        "generate_sql",
    ]
    # the registry's flags give the set the engine once listed by hand
    executing = {name for name, tool in TOOLS.items() if tool.uses_execution}
    assert executing == {"inspect_columns", "run_sql", "split_fix_syntax"}


def test_the_rendered_system_message_is_the_one_written_by_hand():
    assert system_message(tool_list()).content == SYSTEM_TXT.read_text(encoding="utf-8").strip()


def test_every_call_of_a_search_starts_with_that_system_message(demo_db, demo_tasks):
    from acts_sql import correct

    task = demo_tasks["figure3"]
    llm = scripted(demo_script("figure3"))
    correct(demo_db, task.question, task.sql, llm=llm)
    expected = SYSTEM_TXT.read_text(encoding="utf-8").strip()
    shared = [r for r in llm.requests if r.purpose != "correct"]  # the raw rewrite: its own
    assert len(shared) > 3
    assert {r.messages[0].content for r in shared} == {expected}


def test_every_argument_is_advertised_or_says_why_not():
    for tool in TOOLS.values():
        for name, field in tool.Args.model_fields.items():
            extra = field.json_schema_extra
            assert isinstance(extra, dict), f"{tool.name}.{name} is neither advertised nor not"
            marks = {"advertised_as", "not_advertised"} & set(extra)
            assert len(marks) == 1, f"{tool.name}.{name}: {marks}"
            assert all(str(extra[m]).strip() for m in marks)


def test_a_done_outcome_holds_its_tools_output_model():
    amb = {"ambiguities": [{"phrase": "big", "interpretations": ["over 10", "at least 20"]}]}
    gen = {"sql": "SELECT name FROM rooms LIMIT 2", "rationale": "r"}
    calls = {
        "run_sql": ({}, {"sql": "SELECT name FROM rooms"}),
        "inspect_columns": ({}, {"table": "rooms", "column": "name"}),
        "detect_ambiguities": ({"detect_ambiguities": [amb]}, {}),
        "generate_sql": ({"generate_sql": [gen]}, {}),
        "split_fix_syntax": ({}, {"sql": "SELECT 1"}),
    }
    for name, (script, given) in calls.items():
        outcome = run_tool(name, tool_env(script), ToolCall(node_id="n1", input=given))
        assert outcome.status == "done", (name, outcome.error)
        assert type(outcome.output) is TOOLS[name].Output
    runs = run_tool(
        "split_fix_syntax", tool_env(), ToolCall(node_id="n1", input={"sql": "SELECT 1"})
    )
    assert runs.output.dump() == {"sql": "SELECT 1", "runs": True}  # the fields it set, only
