"""Query languages: SQL dialects (built in) and plugins such as PRQL.

The plugin API: subclass `QueryLanguage`, then register it in-process
(`register_language`) or declare it as an entry point of the group
``acts_sql.languages`` (see `registry`). docs/LANGUAGES.md walks through the
bundled PRQL plugin as the worked example.
"""

from acts_sql.sql.languages.base import (
    REQUIRED_TOOLS,
    TOOL_NAMES,
    Diagnostic,
    LanguageInfo,
    QueryLanguage,
    SqlLanguage,
)
from acts_sql.sql.languages.registry import (
    ENTRY_POINT_GROUP,
    LanguageRegistry,
    LoadFailure,
    check_language,
    default_registry,
    get_language,
    plugin_for,
    register_language,
    unavailable_tools,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "REQUIRED_TOOLS",
    "TOOL_NAMES",
    "Diagnostic",
    "LanguageInfo",
    "LanguageRegistry",
    "LoadFailure",
    "QueryLanguage",
    "SqlLanguage",
    "check_language",
    "default_registry",
    "get_language",
    "plugin_for",
    "register_language",
    "unavailable_tools",
]
