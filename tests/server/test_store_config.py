"""The [store] table, a store that cannot be opened (exit 2, one line), and recovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from acts_sql.errors import ConfigError
from acts_sql.server import load_config
from acts_sql.server.models import RunState
from acts_sql.server.run import Run
from acts_sql.server.store import Retention, SqlRunStore
from acts_sql.server.store.records import Created, Event
from acts_sql.server.store.sqlite import SQLiteDriver
from server.process import ServiceProcess, free_port
from server.service import service_config
from server.test_config import run_cli
from server.test_runs import SPEC
from support import statement_event


def store_of(tmp_path: Path, text: str = "", limits: str = ""):
    config = service_config(tmp_path)
    body = config.read_text().replace("[limits]\n", "[limits]\n" + limits)
    config.write_text(body + ("\n[store]\n" + text if text else ""))
    return load_config(config, environ={}).store


def test_the_default_store_is_named_after_the_configuration_and_next_to_it(tmp_path: Path):
    store = store_of(tmp_path)
    assert store.kind == "sqlite" and store.path == str(tmp_path / "service.runs.sqlite")
    assert store.max_runs == 1000 and store.max_age_days is None
    relative = store_of(tmp_path, 'path = "state/runs.db"\nmax_age_days = 7')
    assert relative.path == str(tmp_path / "state" / "runs.db")
    assert relative.max_age_s == 7 * 86_400
    pg = store_of(tmp_path, 'url = "postgresql://acts:pw@db.internal/acts"')
    assert pg.kind == "postgresql" and pg.path is None
    assert store_of(tmp_path, 'url = "memory"').kind == "memory"


def test_keep_finished_runs_still_sets_how_many_runs_are_kept(tmp_path: Path):
    assert store_of(tmp_path, limits="keep_finished_runs = 7\n").max_runs == 7
    assert store_of(tmp_path, "max_runs = 9", limits="keep_finished_runs = 7\n").max_runs == 9


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        (
            'url = "mysql://u@h/db"',
            'store.url: Value error, give postgresql://..., sqlite:///PATH or "memory"',
        ),
        ('url = "memory"\npath = "x.db"', "store: Value error, give either url or path, not both"),
        ("max_runs = 0", "store.max_runs"),
        ("keep = 3", "store.keep: unknown key"),
    ],
)
def test_a_bad_store_table_names_the_problem(tmp_path: Path, table: str, reason: str):
    with pytest.raises(ConfigError) as failed:
        store_of(tmp_path, table)
    assert reason in str(failed.value)


def serve_fails(config: Path) -> str:
    proc = run_cli("serve", "--config", str(config), "--port", "0")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_a_store_that_cannot_be_opened_stops_the_start(tmp_path: Path):
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("these are not runs\n" * 100)
    down = f"postgresql://acts:s3cret-pw@127.0.0.1:{free_port()}/runs"
    cases = {
        "directory": ({"path": str(tmp_path)}, "cannot be opened"),
        "not_sqlite": ({"path": str(not_sqlite)}, "file is not a database"),
        "postgres_down": ({"url": down}, "cannot connect to PostgreSQL"),
    }
    for name, (store, reason) in cases.items():
        case_dir = tmp_path / name
        case_dir.mkdir()
        line = serve_fails(service_config(case_dir, store=store))
        assert reason in line and line.startswith("error: store "), line
        assert "s3cret-pw" not in line


def test_a_store_serves_one_service_at_a_time(tmp_path: Path):
    config = service_config(tmp_path)
    with ServiceProcess(config):
        line = serve_fails(config)
    assert "in use by another acts-sql serve" in line


def test_recovery_keeps_the_events_up_to_the_first_one_missing(tmp_path: Path):
    driver = SQLiteDriver(tmp_path / "runs.sqlite")
    store = SqlRunStore.open(driver, Retention(max_runs=10))
    run = Run(SPEC, hard_deadline_s=10)
    run.mark_running()
    events = [statement_event(seq) for seq in (0, 1, 3)]
    store.write([Created(run), *(Event(run.id, e) for e in events)])
    assert store.load(run.id) is None  # in progress: not the store's to answer for
    store.close()  # as a killed process would leave it: no end

    reopened = SqlRunStore.open(driver, Retention(max_runs=10))
    try:
        restored = reopened.load(run.id)
        listed = reopened.recent(10)
    finally:
        reopened.close()
    assert reopened.interrupted == 1
    assert restored is not None and restored.state is RunState.INTERRUPTED
    assert [e.seq for e in restored.events_from(0)[0]] == [0, 1]
    assert restored.view_key == run.view_key and restored.spec == SPEC
    assert [(r.id, r.event_count) for r in listed] == [(run.id, 2)]
