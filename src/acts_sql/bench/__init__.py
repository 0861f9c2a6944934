"""The benchmark harness: BIRD-CRITIC data, an evaluator that agrees with the official one,
method runs and reports.

Modules, one job each:

- `models`, `loader`, `selection`: tasks, solutions, predictions; reading and choosing them.
- `evaluability`: can a task be scored on an empty database (its SQL creates its tables)?
- `helpers`: the official helper functions test cases call, per dialect.
- `databases`, `servers`: a fresh database per task (SQLite file, PostgreSQL/MariaDB database).
- `jobs`, `phases`, `testcases`, `worker`, `isolation`: scoring one task in a subprocess.
- `scorer`: the verdict of a task; `evaluate`: a whole run; `report`: the reports.
- `runner`: running a correction method over tasks (`acts-sql bench`).
- `candidates`: every candidate of a finished run scored (generation versus selection);
  `compare`: runs side by side.
"""
