"""Which query languages are installed: the SQL dialects, bundled plugins, entry points.

Where a language comes from, in the order names are looked up:

1. the SQL dialects (`acts_sql.sql.dialects`): every dialect is a built-in
   language of the same name, whose text is SQL;
2. languages registered in-process (`register_language`, or the `registered`
   context manager for a test);
3. plugins shipped with acts-sql (``BUNDLED``: PRQL) and plugins of other
   packages, declared as entry points of the group ``acts_sql.languages``::

       [project.entry-points."acts_sql.languages"]
       mylang = "my_package.mylang:MyLang"

   The entry point's name is the language's name; its object is a
   `QueryLanguage` subclass (or an instance). Plugins are imported the first
   time their name is looked up (or when all languages are listed), so a
   plugin that cannot be imported (a missing package) breaks only itself: its
   name then raises `ConfigError` with the reason, and `acts-sql languages`
   lists it as not loadable.

Every plugin is checked when it is registered (`check_language`): a name of
its own, targets that are dialects, tools that exist.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import import_module, metadata
from typing import Any

from pydantic import BaseModel, ConfigDict

from acts_sql.errors import ConfigError
from acts_sql.sql.dialects import Dialect, all_dialects, find_dialect, get_dialect, lookup_key
from acts_sql.sql.languages.base import (
    REQUIRED_TOOLS,
    TOOL_NAMES,
    LanguageInfo,
    QueryLanguage,
    SqlLanguage,
)

ENTRY_POINT_GROUP = "acts_sql.languages"
BUNDLED: Mapping[str, tuple[str, str]] = {
    "prql": ("acts_sql.sql.languages.prql:PRQL", "prql"),
}
"""Plugins shipped with acts-sql: name -> (object reference, pip extra it needs)."""

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class LoadFailure(BaseModel):
    """A plugin that is declared but cannot be used, and why."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str
    reason: str


class _Declared(BaseModel):
    """A plugin known by name, not imported yet."""

    reference: str
    source: str
    extra: str | None = None


def check_language(language: QueryLanguage) -> None:
    """Raise ConfigError unless `language` is a usable plugin (see the module doc)."""
    name = language.name
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(
            f"query language name {name!r} must be lower case letters, digits and '_'",
            language=name,
        )
    if find_dialect(name) is not None:
        raise ConfigError(
            f"query language name {name!r} is taken by the SQL dialect {get_dialect(name).name!r}",
            language=name,
        )
    if not language.display_name:
        raise ConfigError(f"query language {name!r} has no display_name", language=name)
    if type(language).compile is QueryLanguage.compile:
        raise ConfigError(f"query language {name!r} does not implement compile()", language=name)
    if not language.targets:
        raise ConfigError(f"query language {name!r} names no target dialect", language=name)
    for target in language.targets:
        dialect = find_dialect(target)
        if dialect is None or dialect.name != target:
            raise ConfigError(
                f"query language {name!r}: target {target!r} is not a dialect name; "
                f"dialects: {', '.join(d.name for d in all_dialects())}",
                language=name,
            )
    for tool in language.unavailable_tools:
        if tool not in TOOL_NAMES:
            raise ConfigError(
                f"query language {name!r}: unknown tool {tool!r}; tools: {', '.join(TOOL_NAMES)}",
                language=name,
            )
        if tool in REQUIRED_TOOLS:
            raise ConfigError(
                f"query language {name!r}: {tool} applies to every language", language=name
            )


class LanguageRegistry:
    """Query languages by name (see the module doc). Thread-safe."""

    def __init__(
        self,
        *,
        entry_points: bool = True,
        bundled: Mapping[str, tuple[str, str]] = BUNDLED,
    ) -> None:
        self._plugins: dict[str, tuple[QueryLanguage, str]] = {}
        self._declared: dict[str, _Declared] = {
            name: _Declared(reference=ref, source="bundled", extra=extra)
            for name, (ref, extra) in bundled.items()
        }
        self._failures: dict[str, LoadFailure] = {}
        self._sql: dict[str, SqlLanguage] = {}
        self._scan_entry_points = entry_points
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- registering
    def register(
        self, language: QueryLanguage | type[QueryLanguage], *, source: str = "in-process"
    ) -> QueryLanguage:
        """Add a plugin (an instance, or a class to instantiate); ConfigError if it is not
        usable or its name is taken by another plugin."""
        instance = language() if isinstance(language, type) else language
        if not isinstance(instance, QueryLanguage):
            raise ConfigError(
                f"{language!r} is not a QueryLanguage (subclass acts_sql.sql.languages."
                "QueryLanguage)"
            )
        check_language(instance)
        key = lookup_key(instance.name)
        with self._lock:
            taken = self._plugins.get(key)
            if taken is not None and type(taken[0]) is not type(instance):
                raise ConfigError(
                    f"query language {instance.name!r} is already registered (from {taken[1]})",
                    language=instance.name,
                )
            self._plugins[key] = (instance, source)
            self._failures.pop(key, None)
            self._declared.pop(key, None)
        return instance

    def unregister(self, name: str) -> None:
        with self._lock:
            self._plugins.pop(lookup_key(name), None)

    @contextmanager
    def registered(self, language: QueryLanguage | type[QueryLanguage]) -> Iterator[QueryLanguage]:
        """`language` registered for the duration of a `with` block (tests, embedding)."""
        instance = self.register(language)
        try:
            yield instance
        finally:
            self.unregister(instance.name)

    # ----------------------------------------------------------------- lookup
    def get(self, name: str | Dialect) -> QueryLanguage:
        """The language called `name`: a SQL dialect's, or a plugin; ConfigError naming the
        installed languages (or why a declared plugin cannot load) otherwise."""
        dialect = find_dialect(name)
        if dialect is not None:
            return self._sql_language(dialect)
        found = self.plugin(str(name))
        if found is None:
            known = [info.name for info in self.infos()]
            raise ConfigError(
                f"unknown query language {name!r}; installed: {', '.join(known)}",
                language=name,
                known=known,
            )
        return found

    def plugin(self, name: str) -> QueryLanguage | None:
        """The plugin called `name`; None when there is none (SQL dialects are not plugins).
        ConfigError when it is declared but cannot be loaded."""
        key = lookup_key(name)
        with self._lock:
            if key in self._plugins:
                return self._plugins[key][0]
            self._discover()
            if key in self._declared:
                self._load(key)
            failure = self._failures.get(key)
            if failure is not None:
                raise ConfigError(
                    f"query language {failure.name!r} cannot be used: {failure.reason}",
                    language=failure.name,
                )
            entry = self._plugins.get(key)
        return entry[0] if entry else None

    def infos(self) -> list[LanguageInfo]:
        """Every usable language: the SQL dialects, then the plugins (all loaded)."""
        with self._lock:
            self._discover()
            for key in list(self._declared):
                self._load(key)
            plugins = [lang.info(source) for lang, source in self._plugins.values()]
        builtins = [self._sql_language(d).info("built-in") for d in all_dialects()]
        return builtins + sorted(plugins, key=lambda info: info.name)

    def for_suffix(self, suffix: str) -> QueryLanguage | None:
        """The usable plugin whose `file_suffixes` hold `suffix` (".prql"; any case), if any."""
        wanted = suffix.lower()
        if not wanted:
            return None
        self.infos()  # every declared plugin loaded
        with self._lock:
            found = [
                lang
                for lang, _ in self._plugins.values()
                if wanted in (s.lower() for s in lang.file_suffixes)
            ]
        return found[0] if len(found) == 1 else None

    def failures(self) -> list[LoadFailure]:
        """Declared plugins that cannot be loaded, with the reason."""
        self.infos()
        with self._lock:
            return sorted(self._failures.values(), key=lambda f: f.name)

    # ----------------------------------------------------------------- loading
    def _sql_language(self, dialect: Dialect) -> SqlLanguage:
        with self._lock:
            language = self._sql.get(dialect.name)
            if language is None:
                language = self._sql[dialect.name] = SqlLanguage(dialect)
            return language

    def _discover(self) -> None:
        """Read the entry points once (their modules are imported only when used)."""
        if not self._scan_entry_points:
            return
        self._scan_entry_points = False
        for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
            key = lookup_key(point.name)
            if key in self._plugins or key in self._declared:
                continue
            where = f"entry point {point.name} = {point.value}"
            if point.dist is not None:
                where += f" ({point.dist.name})"
            self._declared[key] = _Declared(reference=point.value, source=where)

    def _load(self, key: str) -> None:
        declared = self._declared.pop(key)
        try:
            language = self.register(_resolve(declared.reference), source=declared.source)
        except ConfigError as exc:
            self._fail(key, declared, str(exc))
            return
        except ImportError as exc:
            reason = f"{declared.reference} cannot be imported ({exc})"
            if declared.extra:
                reason += f"; pip install 'acts-sql[{declared.extra}]'"
            self._fail(key, declared, reason)
            return
        except Exception as exc:  # a plugin's own bug must not break the other languages
            self._fail(key, declared, f"{declared.reference}: {type(exc).__name__}: {exc}")
            return
        if lookup_key(language.name) != key:
            self.unregister(language.name)
            self._fail(key, declared, f"its language is called {language.name!r}, not {key!r}")

    def _fail(self, key: str, declared: _Declared, reason: str) -> None:
        self._failures[key] = LoadFailure(name=key, source=declared.source, reason=reason)


def _resolve(reference: str) -> Any:
    """The object of ``module:attribute`` (attribute may be dotted)."""
    module_name, _, attribute = reference.partition(":")
    value: Any = import_module(module_name.strip())
    for part in filter(None, attribute.strip().split(".")):
        value = getattr(value, part)
    return value


# --------------------------------------------------------------------- the default registry

_DEFAULT = LanguageRegistry()


def default_registry() -> LanguageRegistry:
    """The registry the engine, the executors and the command line use."""
    return _DEFAULT


def get_language(name: str | Dialect) -> QueryLanguage:
    """The installed language called `name` (a SQL dialect name gives its built-in language)."""
    return _DEFAULT.get(name)


def register_language(
    language: QueryLanguage | type[QueryLanguage], *, source: str = "in-process"
) -> QueryLanguage:
    """Register a plugin in-process (see `LanguageRegistry.register`)."""
    return _DEFAULT.register(language, source=source)


def plugin_for(name: str | Dialect) -> QueryLanguage | None:
    """The plugin language called `name`, or None for a SQL dialect (fast) and for a name
    that names nothing (the caller's own "unknown dialect" error then applies)."""
    if find_dialect(name) is not None or not isinstance(name, str):
        return None
    return _DEFAULT.plugin(name)


def unavailable_tools(name: str) -> dict[str, str]:
    """Tools that do not apply to the language `name`, with the reason; {} for SQL and for
    names no language has."""
    try:
        language = plugin_for(name)
    except ConfigError:
        return {}
    return dict(language.unavailable_tools) if language is not None else {}
