"""The cases of `bench everyday` and the fixture SQL of their databases.

``data/cases.json``: one object per case: ``id``, ``dialect`` (sqlite,
duckdb, postgresql), ``error_class`` (`ErrorClass`), ``schema`` (a fixture
under ``data/schemas/``), ``question`` (the issue as a user writes it),
``wrong_sql`` (what the user ran) and ``gold_sql`` (our own right answer).
``data/schemas/<schema>.sql`` holds one schema with its rows; a file
``<schema>.<dialect>.sql`` next to it, when present, replaces it on that
dialect (none is needed today: the five fixtures are portable).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal, get_args

import sqlglot
from pydantic import BaseModel, ConfigDict

from acts_sql.errors import ConfigError

Dialect = Literal["sqlite", "duckdb", "postgresql"]
DIALECTS: tuple[Dialect, ...] = ("sqlite", "duckdb", "postgresql")
ErrorClass = Literal[
    "keyword_typo",
    "misspelled_column",
    "wrong_table",
    "missing_comma_error",
    "equals_null",
    "ambiguous_column",
    "missing_group_by",
    "dialect_function",
    "wrong_quotes",
    "comma_alias",
    "integer_division",
    "wrong_join_key",
    "missing_distinct",
]
ERROR_CLASSES: tuple[str, ...] = get_args(ErrorClass)
SILENT_CLASSES = frozenset(
    {"comma_alias", "integer_division", "wrong_join_key", "missing_distinct"}
)
"""The logic slips: the wrong SQL runs and returns other rows."""
_DATA = "acts_sql.bench.everyday"
_SQLGLOT = {"sqlite": "sqlite", "duckdb": "duckdb", "postgresql": "postgres"}


class EverydayCase(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    dialect: Dialect
    error_class: ErrorClass
    schema_name: str
    question: str
    wrong_sql: str
    gold_sql: str

    @property
    def ordered(self) -> bool:
        """Whether row order is part of the answer: the gold SQL ends in ORDER BY."""
        tree = sqlglot.parse_one(self.gold_sql, read=_SQLGLOT[self.dialect])
        return tree.args.get("order") is not None


@cache
def load_cases() -> tuple[EverydayCase, ...]:
    text = resources.files(_DATA).joinpath("data/cases.json").read_text("utf-8")
    items = json.loads(text)
    return tuple(
        EverydayCase.model_validate({**item, "schema_name": item.pop("schema")}) for item in items
    )


def select_cases(
    ids: list[str] | None = None,
    dialects: list[str] | None = None,
    limit: int | None = None,
) -> list[EverydayCase]:
    """The cases named by `ids` (all when empty) on `dialects` (all when empty), at most
    `limit`; ConfigError for an unknown id or dialect."""
    cases = list(load_cases())
    unknown_dialects = [d for d in dialects or [] if d not in DIALECTS]
    if unknown_dialects:
        raise ConfigError(
            f"unknown dialect(s): {', '.join(unknown_dialects)}; choose from {', '.join(DIALECTS)}"
        )
    if ids:
        known = {c.id: c for c in cases}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ConfigError(
                f"unknown case id(s): {', '.join(unknown)}; ids are S01-S13 (SQLite), "
                "D01-D12 (DuckDB), P01-P13 (PostgreSQL)"
            )
        cases = [known[i] for i in ids]
    if dialects:
        cases = [c for c in cases if c.dialect in dialects]
    return cases if limit is None else cases[:limit]


def fixture_sql(schema: str, dialect: str) -> str:
    """The fixture of `schema` on `dialect`: ``<schema>.<dialect>.sql`` if there is one, else
    ``<schema>.sql``; ConfigError naming the schema when neither exists."""
    folder = resources.files(_DATA).joinpath("data/schemas")
    for name in (f"{schema}.{dialect}.sql", f"{schema}.sql"):
        path = folder.joinpath(name)
        if path.is_file():
            return path.read_text("utf-8")
    raise ConfigError(f"no fixture for schema {schema!r} in {_DATA}/data/schemas")


def fixture_statements(schema: str, dialect: str) -> list[str]:
    """The fixture's statements: ``--`` comment lines dropped, split at ``;`` line ends."""
    lines = [ln for ln in fixture_sql(schema, dialect).splitlines() if not ln.startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";\n") if s.strip().rstrip(";")]
