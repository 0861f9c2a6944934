-- The run store: the same tables on SQLite and PostgreSQL. Statements end with ";".
CREATE TABLE IF NOT EXISTS acts_sql_store (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS acts_sql_runs (
    run_id TEXT PRIMARY KEY,
    view_key TEXT NOT NULL,
    status TEXT NOT NULL,
    spec TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    started_at DOUBLE PRECISION,
    finished_at DOUBLE PRECISION,
    event_count INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS acts_sql_runs_by_created ON acts_sql_runs (created_at);
CREATE TABLE IF NOT EXISTS acts_sql_run_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
