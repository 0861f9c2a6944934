"""What a query language is to acts-sql: the class a plugin subclasses.

A query language other than SQL (PRQL, a pipe syntax, a log query language)
is corrected the way SQL is: the agent writes queries in it, the engine runs
them against a database an executor supports, and every comparison the engine
makes (is this the user's own query? does it sort its result?) is made on its
text. A plugin says how, by subclassing `QueryLanguage`:

- ``name``, ``display_name``, ``code_fence``, ``file_suffixes``;
- ``targets``: the acts-sql dialects (``duckdb``, ``sqlite``, ...) whose
  databases it runs on, and `compile` (text -> that dialect's SQL, or
  `QueryCompileError` with the compiler's line, column and message);
- ``unavailable_tools``: the engine's tools that do not apply, each with the
  reason the agent is told (``split_fix_syntax`` works on SQL that sqlglot can
  parse, so a language sqlglot cannot read leaves it out);
- a reference text for the prompts (syntax, functions, common mistakes) in
  ``reference_file``, a file next to the plugin's module.

`check`, `canonical` and `statements` have defaults built on `compile`; a
plugin overrides them when its compiler offers better. The SQL dialects are the
built-in languages (`SqlLanguage`): their text is SQL, run as it is.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from functools import cached_property
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from acts_sql.errors import ConfigError, QueryCompileError
from acts_sql.sql.diagnostics import SqlDiagnostic, split_sql, syntax_diagnostics
from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.normalize import canonical_sql

TOOL_NAMES = (
    "detect_ambiguities",
    "inspect_columns",
    "run_sql",
    "split_fix_syntax",
    "generate_sql",
)
"""The engine's tools (`acts_sql.protocol.ToolName`), by name: the sql layer sits below it."""
REQUIRED_TOOLS = ("generate_sql", "run_sql")
"""Tools no language can rule out: every path ends in generate_sql, and run_sql is
how a query of the language runs at all."""

Diagnostic = SqlDiagnostic
"""A compiler's finding: message, 1-based line and column, the text near it."""


class LanguageInfo(BaseModel):
    """A language as `acts-sql languages` lists it."""

    model_config = ConfigDict(frozen=True)

    name: str
    display_name: str
    kind: str
    """"sql" (a built-in dialect) or "compiled" (a plugin compiled to SQL)."""
    source: str
    """"built-in", "bundled", "in-process" or the entry point that provided it."""
    targets: list[str]
    unavailable_tools: dict[str, str]
    reference_file: str | None = None


class QueryLanguage:
    """Base class of query-language plugins (see the module doc).

    Class attributes describe the language; an instance is what the registry
    holds. Subclasses implement `compile`.
    """

    name: str = ""
    """Registry name: lower case, letters, digits and '_' (e.g. "prql")."""
    display_name: str = ""
    """Name for people and prompts (e.g. "PRQL")."""
    code_fence: str = ""
    """Tag of the code blocks a model writes queries in (```prql); default: `name`."""
    file_suffixes: tuple[str, ...] = ()
    """File name suffixes of queries in this language (".prql")."""
    targets: tuple[str, ...] = ()
    """acts-sql dialect names whose databases the language runs on, in order of preference."""
    unavailable_tools: Mapping[str, str] = MappingProxyType({})
    """Tool name -> why it does not apply to this language (the agent is told)."""
    reference_file: str | None = "reference.md"
    """File next to the plugin's module with the prompts' reference text; None: none."""

    # ----------------------------------------------------------- what a plugin writes
    def compile(self, text: str, dialect: str) -> str:
        """`text` as SQL of `dialect` (one of `targets`); `QueryCompileError` if it does not
        compile, with the compiler's diagnostics (`compile_error` builds one)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement compile()")

    # ----------------------------------------------------------- defaults
    @property
    def is_sql(self) -> bool:
        """Whether the text is SQL of a dialect (the built-in languages)."""
        return False

    @property
    def fence(self) -> str:
        return self.code_fence or self.name

    @property
    def canonical_target(self) -> str:
        """The dialect `canonical` and `ordered` compile to."""
        return self.targets[0]

    def check(self, text: str) -> list[Diagnostic]:
        """Validate without running: the compiler's diagnostics, [] when it compiles."""
        try:
            self.compile(text, self.canonical_target)
        except QueryCompileError as exc:
            return exc.diagnostics or [Diagnostic(message=exc.message)]
        return []

    def canonical(self, text: str) -> str:
        """The text by which two queries count as the same one (the engine's "the user's
        own query" and duplicate votes): the SQL it compiles to, normalised, so that
        whitespace, comments and spellings the compiler merges do not matter. A text that
        does not compile: its words joined by single spaces. "" for no query."""
        if not text.strip():
            return ""
        target = self.canonical_target
        try:
            compiled = self.compile(text, target)
        except QueryCompileError:
            return f"{self.name}-text: " + " ".join(text.split())
        return f"{self.name}: " + canonical_sql(compiled, target)

    def statements(self, text: str) -> list[str]:
        """The queries of `text`: one, the text itself (a plugin whose language has a
        separator overrides this)."""
        stripped = text.strip()
        return [stripped] if stripped else []

    def from_sql(self, sql: str, dialect: str) -> str | None:
        """`sql`, a SELECT of the acts-sql dialect `dialect`, written in this language; None
        when the plugin does not translate SQL (the default) or not this SQL.

        Small models write SQL whatever language is asked for; where a plugin can rewrite
        such an answer mechanically, the engine keeps the rewrite as the candidate when it
        compiles and returns the SQL's own rows (`acts_sql.db.language.translate_sql`)."""
        return None

    def compiled_or_none(self, text: str) -> tuple[str, str] | None:
        """(SQL, dialect) of `text` compiled to `canonical_target`; None if it does not compile."""
        try:
            return self.compile(text, self.canonical_target), self.canonical_target
        except QueryCompileError:
            return None

    def compile_error(self, diagnostics: list[Diagnostic]) -> QueryCompileError:
        """The error `compile` raises: the first finding in the message, all in details."""
        first = diagnostics[0].describe() if diagnostics else "does not compile"
        return QueryCompileError(
            f"{self.display_name} compile error: {first}",
            language=self.name,
            diagnostics=diagnostics,
        )

    @cached_property
    def reference(self) -> str:
        """The reference text for the prompts ("" when the plugin has none)."""
        if self.reference_file is None:
            return ""
        try:
            return _beside(type(self)).joinpath(self.reference_file).read_text("utf-8")
        except (OSError, ModuleNotFoundError, TypeError) as exc:
            raise ConfigError(
                f"query language {self.name!r}: reference file {self.reference_file!r} "
                f"not found next to {type(self).__module__} ({exc})",
                language=self.name,
            ) from None

    def info(self, source: str) -> LanguageInfo:
        return LanguageInfo(
            name=self.name,
            display_name=self.display_name,
            kind="sql" if self.is_sql else "compiled",
            source=source,
            targets=list(self.targets),
            unavailable_tools=dict(self.unavailable_tools),
            reference_file=self.reference_file,
        )

    def __repr__(self) -> str:
        return f"<query language {self.name}>"


def _beside(cls: type) -> Traversable:
    """The directory (or zip folder) holding the module that defines `cls`."""
    name = cls.__module__
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "__path__"):  # a package: its own folder
        return resources.files(name)
    parent = name.rpartition(".")[0]
    if parent:
        return resources.files(parent)
    return Path(inspect.getfile(cls)).parent  # a top-level module: the folder it is in


class SqlLanguage(QueryLanguage):
    """A SQL dialect as a query language: the text is SQL, run as it is; every tool applies."""

    reference_file = None

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.name = dialect.name
        self.display_name = f"{dialect.display_name} SQL"
        self.code_fence = "sql"
        self.targets = (dialect.name,)

    @property
    def is_sql(self) -> bool:
        return True

    def compile(self, text: str, dialect: str) -> str:
        """The text itself: the database, not sqlglot, decides whether SQL is valid."""
        if get_dialect(dialect).name != self.name:
            raise ConfigError(
                f"{self.display_name} runs on {self.dialect.display_name} databases only, "
                f"not {get_dialect(dialect).display_name}",
                language=self.name,
            )
        return text

    def check(self, text: str) -> list[Diagnostic]:
        return syntax_diagnostics(text, self.dialect)

    def canonical(self, text: str) -> str:
        return canonical_sql(text, self.dialect)

    def statements(self, text: str) -> list[str]:
        return split_sql(text, self.dialect)
