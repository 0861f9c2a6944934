"""The everyday-errors benchmark: 38 mistakes users make every day, on SQLite, DuckDB and
PostgreSQL, each with its own small database, the wrong SQL and our own gold SQL;
`acts-sql bench everyday` (correction, scored by result). See data/README.md."""
