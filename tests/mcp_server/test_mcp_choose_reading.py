"""`acts-sql mcp --ask`: fix_sql returns the readings when they lead to different results and
nothing is accepted; choose_reading continues the run with the user's reading. Through the
SDK's stdio client, scripted LLM (the readings script of tests/engine/test_ask_person.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install 'acts-sql[mcp]'")

from mcp import ClientSession

from engine.test_ask_person import FIRST, SECOND, script
from mcp_server.test_mcp_server import serve, shop_db  # noqa: F401 (a fixture)


def write_script(tmp_path: Path, user_sql: str) -> Path:
    path = tmp_path / "readings.json"
    replies = {
        purpose: [r if isinstance(r, str) else json.dumps(r) for r in answers]
        for purpose, answers in script(user_sql).items()
    }
    path.write_text(json.dumps(replies))
    return path


def args(db: Path, tmp_path: Path, sql: str, *extra: str) -> list[str]:
    llm = f"scripted:{write_script(tmp_path, sql)}"
    return [
        "--db",
        f"sqlite:///{db}",
        "--llm",
        llm,
        "--candidates",
        "1",
        "--no-scaled-budget",
        *extra,
    ]


def test_fix_sql_returns_the_readings_and_choose_reading_continues(shop_db, demo_tasks, tmp_path):  # noqa: F811
    task = demo_tasks["figure3"]

    async def talk(session: ClientSession) -> dict[str, Any]:
        tools = [t.name for t in (await session.list_tools()).tools]
        asked = await session.call_tool("fix_sql", {"question": task.question, "sql": task.sql})
        waiting = asked.structured_content or {}
        bad = await session.call_tool(
            "choose_reading", {"run_id": waiting.get("run_id", ""), "reading": "n7"}
        )
        chosen = await session.call_tool(
            "choose_reading", {"run_id": waiting.get("run_id", ""), "reading": "n1.2"}
        )
        again = await session.call_tool(
            "choose_reading", {"run_id": waiting.get("run_id", ""), "reading": "n1.2"}
        )
        explained = await session.call_tool("explain_run", {"run_id": waiting.get("run_id", "")})
        return {
            "tools": tools,
            "waiting": waiting,
            "bad": bad,
            "chosen": chosen,
            "again": again,
            "explained": explained,
        }

    out = serve(args(shop_db, tmp_path, task.sql, "--ask"), tmp_path, talk)

    assert "choose_reading" in out["tools"]
    waiting = out["waiting"]
    assert waiting["needs_choice"] is True and waiting["sql"] == ""
    assert [r["sql"] for r in waiting["readings"]] == [FIRST, SECOND]
    assert waiting["readings"][1]["rows"] == [[3, "Cedar"], [4, "Delta"]]
    assert out["bad"].is_error and "was not offered" in out["bad"].content[0].text
    chosen = out["chosen"].structured_content
    assert chosen["sql"] == SECOND and chosen["accepted"] is False
    assert chosen["needs_choice"] is False and chosen["run_id"] == waiting["run_id"]
    assert "the person chose reading n1.2" in chosen["reason"]
    assert out["again"].is_error  # the run no longer waits
    assert not out["explained"].is_error


def test_without_ask_fix_sql_never_waits(shop_db, demo_tasks, tmp_path):  # noqa: F811
    task = demo_tasks["figure3"]

    async def talk(session: ClientSession) -> dict[str, Any]:
        fixed = await session.call_tool("fix_sql", {"question": task.question, "sql": task.sql})
        return fixed.structured_content or {}

    out = serve(args(shop_db, tmp_path, task.sql), tmp_path, talk)
    assert out["needs_choice"] is False and out["sql"] in (FIRST, SECOND)
