"""Keeping a benchmark run in the repository: small, readable later, no ground truth.

A local-model run takes hours and its output directory lives outside the
repository, so a new machine starts without it: numbers in the docs could
not be re-read, compared or replayed. `keep_run` copies what the tools read
into a folder that can be committed:

- ``records.jsonl`` and ``preds.jsonl``: one line per task (what `bench
  compare` reads), ``candidates.jsonl`` when the run was scored candidate by
  candidate (`bench candidates`), ``report.json``;
- each task's trace, gzipped (``traces/<set>/<id>.json.gz``; every reader of
  trace files takes the gzipped copy where the plain one is missing,
  `bench.loader.read_trace`), so `scripts/replay_run.py` and
  `scripts/trace_stats.py` work on the kept folder as on the run.

A run finished in parts (the first tasks at one commit, the rest later) is
kept as one folder with `keep_runs`: their tasks must not overlap, and
``sources.json`` says which run each task came from.

The evaluator's reasons quote the hidden test cases ("expected 1"), and the
benchmark asks that its ground truth stay out of public repositories: a kept
record says which test failed, not what it expected. A folder whose files
name a solution field (``sol_sql``, ``test_cases``) is refused.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acts_sql.bench.candidates import CANDIDATES
from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.loader import GZIP_SUFFIX, read_jsonl, stored_trace
from acts_sql.bench.runner import PREDICTIONS, RECORDS

REPORT = "report.json"
SOURCES = "sources.json"
REDACTED = "detail not kept"
SOLUTION_FIELDS = ("sol_sql", "test_cases")
_TEST_NAME = re.compile(r"(?:^|; )(test_\d+):")


class KeptRun(BaseModel):
    """What `keep_run` wrote."""

    source: str
    dest: str
    tasks: int
    """Distinct tasks (a resumed run may hold several lines for one; the last one counts)."""
    traces: int
    traces_missing: int
    bytes: int


def redact_reason(reason: str) -> str:
    """An evaluator reason without what the tests expected: the failing tests' names only."""
    if not reason:
        return ""
    names = _TEST_NAME.findall(reason)
    return f"{', '.join(names)}: {REDACTED}" if names else REDACTED


def keep_run(run: Path, dest: Path) -> KeptRun:
    """Copy run directory `run` into `dest` (see the module doc); `dest` is replaced."""
    return keep_runs([run], dest)


def keep_runs(runs: list[Path], dest: Path) -> KeptRun:
    """Copy the run directories `runs` into one folder `dest`, as if they were one run.

    With more than one run, a task found in two of them is a `BenchDataError` (which one
    counts would be a guess), no run's ``report.json`` is kept (each covers its own tasks
    only), and ``sources.json`` lists each run with its tasks. `dest` is replaced.
    """
    if not runs:
        raise BenchDataError("no run to keep", path=str(dest))
    for run in runs:
        if not (run / RECORDS).is_file():
            raise BenchDataError(
                f"no {RECORDS} in {run}: not an `acts-sql bench` output", path=str(run)
            )
        if dest.resolve() == run.resolve():
            raise BenchDataError(
                f"{dest} is the run itself; keep it somewhere else", path=str(dest)
            )
    parts = [(run, [data for _, data in read_jsonl(run / RECORDS)]) for run in runs]
    _refuse_overlap(parts)
    staging = dest.with_name(dest.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    records = [record for _, part in parts for record in part]
    _write_jsonl(staging / RECORDS, [_redacted_record(r) for r in records])
    _concatenate([run / PREDICTIONS for run in runs], staging / PREDICTIONS)
    candidates = [
        _redacted_candidates(data)
        for run in runs
        if (run / CANDIDATES).is_file()
        for _, data in read_jsonl(run / CANDIDATES)
    ]
    if candidates:
        _write_jsonl(staging / CANDIDATES, candidates)
    if len(runs) == 1 and (runs[0] / REPORT).is_file():
        shutil.copyfile(runs[0] / REPORT, staging / REPORT)
    if len(runs) > 1:
        sources = [{"run": run.resolve().name, "tasks": _task_ids(part)} for run, part in parts]
        (staging / SOURCES).write_text(json.dumps({"sources": sources}, indent=1) + "\n")
    traces = missing = 0
    for run, part in parts:
        for record in part:
            if _keep_trace(run, record.get("trace_file"), staging):
                traces += 1
            else:
                missing += 1
    _refuse_solutions(staging)
    if dest.exists():
        shutil.rmtree(dest)
    staging.rename(dest)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    return KeptRun(
        source=", ".join(str(run) for run in runs),
        dest=str(dest),
        tasks=len({(r.get("set"), str(r.get("instance_id"))) for r in records}),
        traces=traces,
        traces_missing=missing,
        bytes=size,
    )


def _task_ids(records: list[dict[str, Any]]) -> list[str]:
    return sorted({f"{r.get('set')}/{r.get('instance_id')}" for r in records})


def _refuse_overlap(parts: list[tuple[Path, list[dict[str, Any]]]]) -> None:
    seen: dict[str, Path] = {}
    for run, records in parts:
        for task in _task_ids(records):
            if task in seen:
                raise BenchDataError(
                    f"{task} is in both {seen[task]} and {run}: keep the runs apart, or "
                    "remove the task from one of them",
                    path=str(run),
                )
            seen[task] = run


def _concatenate(sources: list[Path], target: Path) -> None:
    present = [source for source in sources if source.is_file()]
    if not present:
        return
    with target.open("wb") as sink:
        for source in present:
            data = source.read_bytes()
            sink.write(data if not data or data.endswith(b"\n") else data + b"\n")


def _keep_trace(run: Path, name: str | None, staging: Path) -> bool:
    """Copy one task's trace, gzipped; False when the record names none or it is lost."""
    found = stored_trace(run / name) if name else None
    if found is None or name is None:
        return False
    target = staging / f"{name}{GZIP_SUFFIX}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if found.suffix == GZIP_SUFFIX:
        shutil.copyfile(found, target)
        return True
    # mtime 0: the same trace packs to the same bytes, so re-keeping a run changes
    # only the files whose content changed
    with (
        found.open("rb") as source,
        target.open("wb") as sink,
        gzip.GzipFile(fileobj=sink, mode="wb", mtime=0) as packed,
    ):
        shutil.copyfileobj(source, packed)
    return True


def _redacted_record(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "reason": redact_reason(str(record.get("reason") or ""))}


def _redacted_candidates(line: dict[str, Any]) -> dict[str, Any]:
    verdicts = line.get("verdicts")
    if not isinstance(verdicts, list):
        return line
    kept = [
        {**v, "reason": redact_reason(str(v.get("reason") or ""))} if isinstance(v, dict) else v
        for v in verdicts
    ]
    return {**line, "verdicts": kept}


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _refuse_solutions(folder: Path) -> None:
    """BenchDataError (and the folder removed) when a kept file names a solution field."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        text = (gzip.decompress(data) if path.suffix == GZIP_SUFFIX else data).decode("utf-8")
        for field in SOLUTION_FIELDS:
            if f'"{field}"' in text:
                shutil.rmtree(folder)
                raise BenchDataError(
                    f"{path.relative_to(folder)} names {field!r}: a kept run must not hold "
                    "the benchmark's solutions",
                    path=str(path),
                )
