"""`acts-sql mcp` as an assistant runs it: a subprocess spoken to over stdio by the official
SDK's client, on a copy of the demo SQLite database, with the demo's scripted LLM."""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install 'acts-sql[mcp]'")

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from acts_sql.cli.app import app
from acts_sql.demo import demo_db_path
from support import DEMO_SCRIPTS

SRC = Path(__file__).resolve().parents[2] / "src"
CALL_SECONDS = 60


def checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def text_of(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def serve(args: list[str], tmp_path: Path, talk: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Start `python -m acts_sql mcp ARGS`, run `talk` on an initialised session, stop it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "acts_sql", "mcp", *args],
        env={"PYTHONPATH": str(SRC)},
        cwd=str(tmp_path),
    )

    async def main() -> Any:
        with (tmp_path / "server.stderr").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=CALL_SECONDS) as session,
            ):
                await session.initialize()
                return await talk(session)

    return anyio.run(main)


@pytest.fixture
def shop_db(tmp_path: Path) -> Path:
    """A private copy of the demo database (rooms, bookings, ...)."""
    path = tmp_path / "demo.sqlite"
    shutil.copyfile(demo_db_path(), path)
    return path


def test_each_tool_through_the_sdk_client_leaves_the_database_unchanged(
    shop_db, demo_tasks, tmp_path
):
    task = demo_tasks["figure3"]
    before = checksum(shop_db)
    args = ["--db", f"sqlite:///{shop_db}", "--llm", f"scripted:{DEMO_SCRIPTS / 'figure3.json'}"]

    async def talk(session: ClientSession) -> dict[str, Any]:
        listed = await session.list_tools()
        tables = await session.call_tool("list_tables", {})
        fixed = await session.call_tool("fix_sql", {"question": task.question, "sql": task.sql})
        run_id = (fixed.structured_content or {}).get("run_id", "")
        explained = await session.call_tool("explain_run", {"run_id": run_id})
        unknown = await session.call_tool("explain_run", {"run_id": "no-such-run"})
        return {
            "tools": {t.name: t for t in listed.tools},
            "tables": tables,
            "fixed": fixed,
            "explained": explained,
            "unknown": unknown,
        }

    out = serve(args, tmp_path, talk)
    assert set(out["tools"]) == {"fix_sql", "choose_reading", "explain_run", "list_tables"}
    for tool in out["tools"].values():  # typed, structured output; read-only for the assistant
        assert tool.output_schema and tool.output_schema["required"], tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint is True

    tables = out["tables"].structured_content
    assert not out["tables"].is_error and tables["dialect"] == "sqlite"
    by_name = {t["name"]: t for t in tables["tables"]}
    assert {"rooms", "bookings"} <= set(by_name)
    columns = {c["name"]: c["type"].upper() for c in by_name["bookings"]["columns"]}
    assert columns["room_id"] == "INTEGER" and "start_time" in columns

    fixed = out["fixed"]
    assert not fixed.is_error, text_of(fixed)
    result = fixed.structured_content
    assert result["accepted"] is True and result["reason"]
    assert "b1.start_time < b2.end_time" in result["sql"]
    assert result["original_sql"] == task.sql
    assert result["preview"]["status"] == "ok"
    assert result["preview"]["columns"] == ["room_id", "name"] and result["preview"]["rows"]
    assert result["cost"]["llm_calls"] >= 4 and result["cost"]["seconds"] > 0
    assert result["run_id"] in text_of(fixed)  # the JSON text for clients that read only text

    explained = out["explained"]
    assert not explained.is_error, text_of(explained)
    tree = text_of(explained)
    assert "debugging tree" in tree and "n1.1" in tree and "[rejected]" in tree
    assert "verdict: accepted" in tree and "\x1b[" not in tree  # plain text, no colours
    assert explained.structured_content["run_id"] == result["run_id"]

    assert out["unknown"].is_error and "no run 'no-such-run'" in text_of(out["unknown"])
    assert checksum(shop_db) == before


@pytest.mark.parametrize(
    ("flags", "status"), [([], "blocked"), (["--allow-writes"], "ok")], ids=["guard", "copy"]
)
def test_a_write_never_reaches_the_database(flags, status, shop_db, tmp_path):
    """Read-only as `fix`: blocked by the guard, or with --allow-writes run on a throw-away copy."""
    before = checksum(shop_db)
    script = tmp_path / "empty.json"
    script.write_text("{}")
    args = ["--db", str(shop_db), "--llm", f"scripted:{script}", "--method", "raw", *flags]

    async def talk(session: ClientSession) -> CallToolResult:
        sql = "DELETE FROM bookings"
        return await session.call_tool("fix_sql", {"question": "remove all bookings", "sql": sql})

    fixed = serve(args, tmp_path, talk)
    assert not fixed.is_error, text_of(fixed)
    result = fixed.structured_content
    assert result["accepted"] is False
    assert result["preview"]["status"] == status, result["preview"]
    assert checksum(shop_db) == before


def test_a_bad_database_is_a_tool_error_and_the_server_answers_the_next_call(shop_db, tmp_path):
    later = tmp_path / "later.sqlite"
    args = ["--db", f"sqlite:///{later}", "--llm", f"scripted:{DEMO_SCRIPTS / 'figure3.json'}"]

    async def talk(session: ClientSession) -> list[CallToolResult]:
        missing = await session.call_tool("list_tables", {})
        fix_missing = await session.call_tool("fix_sql", {"question": "q", "sql": "SELECT 1"})
        shutil.copyfile(shop_db, later)  # the database appears: the next call opens it
        found = await session.call_tool("list_tables", {})
        return [missing, fix_missing, found]

    missing, fix_missing, found = serve(args, tmp_path, talk)
    for failed in (missing, fix_missing):
        assert failed.is_error and "not found" in text_of(failed), text_of(failed)
        assert "Traceback" not in text_of(failed)
    assert not found.is_error
    assert "rooms" in {t["name"] for t in found.structured_content["tables"]}


runner = CliRunner()


def test_without_the_mcp_extra_the_command_says_how_to_install_it(monkeypatch, demo_db):
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")] + ["mcp"]:
        monkeypatch.setitem(sys.modules, name, None)  # `import mcp` fails as if not installed
    monkeypatch.delitem(sys.modules, "acts_sql.mcp_server.server", raising=False)
    result = runner.invoke(app, ["mcp", "--db", demo_db, "--llm", "scripted:/x.json"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "pip install 'acts-sql[mcp]'" in lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--llm", "scripted:/nonexistent/script.json"], "script.json"),
        (["--llm", "nonsense"], "unknown LLM spec"),
        (["--llm", "scripted:{script}", "--timeout", "0"], "timeout"),
        (["--llm", "scripted:{script}", "--max-llm-calls", "0"], "max_llm_calls"),
        (["--llm", "scripted:{script}", "--llm-cache", "{script}"], "not a directory"),
    ],
)
def test_bad_configuration_ends_at_start_with_one_line(args, message, demo_db, tmp_path):
    script = tmp_path / "s.json"
    script.write_text("{}")
    args = [a.replace("{script}", str(script)) for a in args]
    result = runner.invoke(app, ["mcp", "--db", demo_db, *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], lines
