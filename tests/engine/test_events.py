"""Trace events as types: kept traces load and write back byte for byte, the docs list
every kind, the exported schema holds the union."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest
from rich.console import Console

from acts_sql.bench.loader import read_trace
from acts_sql.cli.app import protocol_schema
from acts_sql.cli.render import progress_line, show_result
from acts_sql.engine.events import (
    EVENT_TYPES,
    EVENTS,
    BacktrackData,
    EventKind,
    JudgementData,
    LlmCallData,
)
from acts_sql.engine.result import CorrectionResult
from acts_sql.engine.trace import Trace
from acts_sql.viewer import render_html

ROOT = Path(__file__).resolve().parents[2]
KEPT = sorted((ROOT / "results").glob("**/traces/**/*.json.gz"))
RICH_TRACE = ROOT / "results/bird-critic-dev/acts-0.5b/traces/sqlite500/SQLite_54.json.gz"


def test_every_kept_trace_loads_and_writes_back_byte_for_byte():
    assert len(KEPT) > 100
    kinds = set()
    for path in KEPT:
        for raw in read_trace(path)["trace"]:
            event = EVENTS.validate_python(raw)
            kinds.add(event.kind)
            assert json.dumps(EVENTS.dump_python(event, mode="json")) == json.dumps(raw), path
    assert len(kinds) > 25


def test_a_kept_trace_renders_in_the_terminal_and_the_viewer():
    result = CorrectionResult.model_validate(read_trace(RICH_TRACE))
    judged = [e.data for e in result.trace if isinstance(e.data, JudgementData) and e.data.labels]
    assert judged and judged[0].verdict in ("accept", "reject")
    console = Console(record=True, width=120)
    show_result(console, result)
    assert "judge shown" in console.export_text()
    lines = [line for e in result.trace if (line := progress_line(e)) is not None]
    assert any(line.startswith("▸ n1 ") for line in lines)
    assert any(line.startswith("  judgement ") for line in lines)
    assert 'id="acts-data"' in render_html(result)


def test_a_payload_writes_only_what_it_was_given_and_reads_as_a_dict():
    trace = Trace()
    event = trace.emit(BacktrackData(to="n1"), node="n2", summary="back to n1")
    assert event.kind == EventKind.BACKTRACK
    assert json.loads(event.model_dump_json())["data"] == {"to": "n1"}
    assert event.data["to"] == "n1" and event.data.get("by") is None and "by" not in event.data
    failed = LlmCallData(ok=False, error="down")
    failed.before_any_reply = True
    assert list(failed.model_dump()) == ["ok", "error", "before_any_reply"]
    with pytest.raises(KeyError):
        failed["response"]


def test_one_payload_per_kind():
    assert len(EVENT_TYPES) == len(EventKind)
    assert {t.model_fields["kind"].default for t in EVENT_TYPES.values()} == set(EventKind)
    assert all(EVENT_TYPES[kind.payload].model_fields["kind"].default == kind for kind in EventKind)


def test_an_event_class_is_named_for_its_payload_and_pickles():
    event = Trace().emit(BacktrackData(to="n1"), node="n2")
    assert type(event).__name__ == "BacktrackEvent"
    assert pickle.loads(pickle.dumps(event)) == event


def test_the_protocol_docs_list_every_kind():
    text = (ROOT / "docs/PROTOCOL.md").read_text()
    table = text.split("## Trace events", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    listed = [kind for row in rows for kind in re.findall(r"`([a-z_]+)`", row)]
    assert sorted(listed) == sorted(EventKind)


def test_the_exported_schema_holds_the_event_union():
    union = protocol_schema()["$defs"]["TraceEvent"]
    assert set(union["discriminator"]["mapping"]) == set(EventKind)
