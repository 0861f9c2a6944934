"""Reading BIRD-CRITIC files: tasks, solutions, the development ids, predictions.

Layout (``../shared/data/bird-critic/``): ``tasks/<set>.jsonl`` (public
tasks), ``dev/<set>_solutions.jsonl`` and ``dev/ids.tsv`` (a development split
with solutions), ``example_output/<model>/<file>.jsonl`` (predictions). A set
is named by its task file's stem (``flash``, ``open570``, ``pg530``,
``sqlite500``); the example outputs' names (``open``, ``sqlite_500``) are
aliases. Records are joined on ``(set, instance_id)``.

Solution files are read at run time only; nothing here copies them anywhere.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.models import Prediction, ScoredTask, Solution, Task, TaskKey

SET_ALIASES = {
    "open": "open570",
    "open600": "open570",
    "sqlite_500": "sqlite500",
    "postgresql": "pg530",
    "pg": "pg530",
    "flash_exp": "flash",
}
KNOWN_SETS = ("flash", "open570", "pg530", "sqlite500")
SOLUTIONS_SUFFIX = "_solutions"
M = TypeVar("M", bound=BaseModel)


def canonical_set(name: str) -> str:
    """The set name for a file stem: ``open`` -> ``open570``, ``sqlite_500`` -> ``sqlite500``."""
    stem = name.strip()
    if stem.endswith(SOLUTIONS_SUFFIX):
        stem = stem[: -len(SOLUTIONS_SUFFIX)]
    return SET_ALIASES.get(stem.lower(), stem)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-empty line; BenchDataError on bad JSON."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise BenchDataError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BenchDataError(
                    f"{path}:{number}: not JSON ({exc.msg})", path=str(path), line=number
                ) from exc
            if not isinstance(value, dict):
                raise BenchDataError(
                    f"{path}:{number}: expected a JSON object", path=str(path), line=number
                )
            yield number, value


GZIP_SUFFIX = ".gz"


def stored_trace(path: Path) -> Path | None:
    """Where a record's trace file is: `path` itself, or its gzipped copy ``path.gz`` (how a
    kept run stores its traces, see `bench.archive`); None when neither exists."""
    if path.is_file():
        return path
    packed = path.with_name(path.name + GZIP_SUFFIX)
    return packed if packed.is_file() else None


def read_trace(path: Path) -> dict[str, Any]:
    """A trace file (a `CorrectionResult` as JSON), plain or gzipped (`stored_trace`)."""
    found = stored_trace(path)
    if found is None:
        raise BenchDataError(f"no trace file {path} (nor {path.name}{GZIP_SUFFIX})", path=str(path))
    try:
        if found.suffix == GZIP_SUFFIX:
            with gzip.open(found, "rt", encoding="utf-8") as handle:
                text = handle.read()
        else:
            text = found.read_text(encoding="utf-8")
    except (OSError, EOFError) as exc:
        raise BenchDataError(f"cannot read {found}: {exc}", path=str(found)) from exc
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchDataError(f"{found} is not JSON: {exc}", path=str(found)) from exc
    if not isinstance(payload, dict):
        raise BenchDataError(f"{found}: expected a JSON object", path=str(found))
    return payload


def _validated(model: type[M], data: dict[str, Any], path: Path, number: int) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        raise BenchDataError(
            f"{path}:{number}: invalid {model.__name__.lower()} ({where}: {first['msg']})",
            path=str(path),
            line=number,
        ) from None


def _jsonl_files(path: Path, *, suffix: str = "") -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.glob(f"*{suffix}.jsonl") if p.is_file())
        if not files:
            raise BenchDataError(f"no *{suffix}.jsonl files in {path}", path=str(path))
        return files
    if not path.exists():
        raise BenchDataError(f"file not found: {path}", path=str(path))
    return [path]


def load_tasks(path: Path | str, *, set_name: str | None = None) -> list[Task]:
    """Tasks of one file (its stem names the set) or of every ``*.jsonl`` in a directory."""
    tasks: list[Task] = []
    seen: set[TaskKey] = set()
    for file in _jsonl_files(Path(path)):
        name = canonical_set(set_name or file.stem)
        for number, data in read_jsonl(file):
            task = _validated(Task, {**data, "set": name}, file, number)
            if task.key in seen:
                raise BenchDataError(
                    f"{file}:{number}: duplicate instance_id {task.instance_id!r} in set {name}",
                    path=str(file),
                    line=number,
                )
            seen.add(task.key)
            tasks.append(task)
    return tasks


def load_solutions(path: Path | str, *, set_name: str | None = None) -> dict[TaskKey, Solution]:
    """Solutions keyed by (set, id): a ``<set>_solutions.jsonl`` file or a directory of them."""
    root = Path(path)
    solutions: dict[TaskKey, Solution] = {}
    files = _jsonl_files(root, suffix=SOLUTIONS_SUFFIX if root.is_dir() else "")
    for file in files:
        name = canonical_set(set_name or file.stem)
        for number, data in read_jsonl(file):
            solution = _validated(Solution, {**data, "set": name}, file, number)
            solutions[solution.key] = solution
    return solutions


class DevEntry(BaseModel):
    """One row of ``dev/ids.tsv``: a task verified to be evaluable on an empty database."""

    set: str
    instance_id: str
    dialect: str
    category: str

    @property
    def key(self) -> TaskKey:
        return (self.set, self.instance_id)


def load_dev_ids(path: Path | str) -> list[DevEntry]:
    """The rows of ``ids.tsv`` (columns: set, instance_id, dialect, category)."""
    file = Path(path)
    if file.is_dir():
        file = file / "ids.tsv"
    try:
        with file.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
    except OSError as exc:
        raise BenchDataError(f"cannot read {file}: {exc.strerror or exc}", path=str(file)) from exc
    try:
        return [
            DevEntry(
                set=canonical_set(r["set"]),
                instance_id=r["instance_id"],
                dialect=r["dialect"],
                category=r["category"],
            )
            for r in rows
        ]
    except (KeyError, ValidationError) as exc:
        raise BenchDataError(
            f"{file}: expected columns set, instance_id, dialect, category"
        ) from exc


def load_predictions(path: Path | str, *, set_name: str | None = None) -> dict[TaskKey, Prediction]:
    """Predictions keyed by (set, id).

    The set is the record's own ``set`` field if it has one, else ``set_name``,
    else the file's stem. A later line for the same task replaces an earlier one.
    """
    file = Path(path)
    default = canonical_set(set_name or file.stem)
    predictions: dict[TaskKey, Prediction] = {}
    for number, data in read_jsonl(file):
        prediction = _validated(Prediction, data, file, number)
        name = canonical_set(prediction.set) if prediction.set else default
        predictions[(name, str(prediction.instance_id))] = prediction
    return predictions


def join(tasks: Iterable[Task], solutions: dict[TaskKey, Solution] | None) -> list[ScoredTask]:
    """Tasks with their solution where one exists (same set, same id)."""
    solutions = solutions or {}
    return [ScoredTask(task=t, solution=solutions.get(t.key)) for t in tasks]
