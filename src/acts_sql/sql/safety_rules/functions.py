"""Which functions a read may call: the allowlists and the reviewed lists.

On PostgreSQL and DuckDB a call is allowed only when its name is known to be
free of side effects:

- the generated lists in `data/<dialect>_functions.txt` (made from the
  engines' catalogs by scripts/gen_function_allowlists.py: every overload of
  the name immutable or stable, see that script);
- `HARMLESS`: volatile functions reviewed as harmless (random values, clocks,
  sleeping under the statement timeout), and DuckDB's table functions that only
  read the catalog or make rows;
- or, instead of the generated list, the connected server's own (`Context.
  catalog_functions`, read by the PostgreSQL executor with the same rule: every overload
  immutable or stable, in any schema), which covers PostGIS, the user's own functions and
  built-ins of other server versions, and drops a listed name that the user's database
  overloads with a volatile function;
- sqlglot classes in `HARMLESS_CLASSES`: syntax sqlglot models as a function
  (CAST, CASE, EXTRACT, CURRENT_TIMESTAMP, ...) whose SQL names are not in
  pg_proc.

`ALWAYS_BLOCKED` wins over all of them, on every dialect where it applies:
functions that run SQL given as text, and server administration, file,
large-object, lock, replication, logging, settings and session-signalling
functions. Pure: the lists are package data, read once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from acts_sql.sql.safety_rules.tables import Category, Kind

ALLOWLIST_DIALECTS = frozenset({"postgresql", "duckdb"})
"""Dialects where a call must be on the allowlist (elsewhere only the deny rules apply)."""


@dataclass(frozen=True)
class Blocked:
    """Calls whose whole name matches `pattern` are blocked as `category`; `why` says
    what they do. `dialects`: where the entry applies (None: every dialect)."""

    pattern: re.Pattern[str]
    category: Category
    why: str
    dialects: frozenset[str] | None = None

    def applies(self, name: str, dialect: str) -> bool:
        in_dialect = self.dialects is None or dialect in self.dialects
        return in_dialect and self.pattern.fullmatch(name) is not None

    def kind(self, name: str) -> Kind:
        return Kind(self.category, f"{name}() ({self.why})")


def _blocked(pattern: str, category: Category, why: str, *dialects: str) -> Blocked:
    return Blocked(re.compile(pattern, re.IGNORECASE), category, why, frozenset(dialects) or None)


_TEXT_SQL = "it runs SQL given as text"
_PG = "postgresql"
_DUCK = "duckdb"
_ADMIN = "it administers the server"
_XID = "it assigns a transaction id"
_REPLICATION = "it drives replication"
_FILES = "it reads server files"

ALWAYS_BLOCKED: tuple[Blocked, ...] = (
    # SQL given as text: a statement hidden in a string, a second door past every rule of
    # the guard (category "hidden": never permitted, not even on a sandbox copy)
    _blocked(r"(query|cursor)_to_xml(schema|_and_xmlschema)?", "hidden", _TEXT_SQL),
    _blocked(r"ts_stat|ts_rewrite", "hidden", _TEXT_SQL, _PG),
    _blocked(r"crosstab\d*|connectby", "hidden", _TEXT_SQL + " (tablefunc)", _PG),
    _blocked(r"json_execute_serialized_sql|query|query_table", "hidden", _TEXT_SQL, _DUCK),
    _blocked(r"dblink\w*", "network", "it runs SQL on another server"),
    # sessions and server administration
    _blocked(r"pg_terminate_backend|pg_cancel_backend", "admin", "it signals other sessions"),
    _blocked(r"pg_reload_conf|pg_rotate_logfile\w*|pg_switch_wal|pg_promote", "admin", _ADMIN),
    _blocked(r"pg_wal_replay_\w+|pg_create_restore_point|pg_backup_\w+", "admin", _ADMIN),
    _blocked(r"pg_(start|stop)_backup|pg_import_system_collations", "admin", _ADMIN),
    _blocked(r"pg_stat_reset\w*|pg_stat_statements_reset|pg_stat_clear_snapshot", "admin", _ADMIN),
    _blocked(r"pg_stat_force_next_flush|pg_notify|binary_upgrade_\w+", "admin", _ADMIN),
    _blocked(r"pg_current_xact_id\w*|txid_current\w*|pg_export_snapshot", "admin", _XID),
    _blocked(r"brin_(de)?summarize\w*|gin_clean_pending_list", "admin", "it writes an index"),
    # replication and logging
    _blocked(r"pg_(create|drop|copy)_\w*replication_slot", "admin", _REPLICATION),
    _blocked(r"pg_logical_\w+|pg_replication_\w+", "admin", _REPLICATION),
    _blocked(r"pg_log_\w+", "admin", "it writes the server log"),
    _blocked(r"write_log|truncate_duckdb_logs", "admin", "it writes the log", _DUCK),
    _blocked(
        r"(enable|disable)_\w+", "admin", "it turns logging or engine features on or off", _DUCK
    ),
    _blocked(r"\w*checkpoint\w*", "admin", "it writes the database file", _DUCK),
    _blocked(r"\w*external_resource\w*|\w*grammar_extension", "admin", _ADMIN, _DUCK),
    # settings
    _blocked(r"set_config|setseed", "session", "it changes a setting"),
    # files, large objects and the environment
    _blocked(r"pg_read_file\w*|pg_read_binary_file|pg_stat_file", "file", _FILES),
    _blocked(r"pg_ls_\w+|pg_file_\w+|pg_logdir_ls|pg_current_logfile", "file", _FILES),
    _blocked(
        r"lo_\w+|loread|lowrite", "file", "a large object (it can read or write server files)"
    ),
    _blocked(r"pg_show_all_file_settings|pg_hba_file_rules|pg_ident_file_mappings", "file", _FILES),
    _blocked(r"read_\w+|\w+_scan|sniff_csv|parquet_\w+", "file", "it reads files", _DUCK),
    _blocked(r"copy_database|import_database|add_parquet_key", "file", "it reaches files", _DUCK),
    _blocked(r"getenv|duckdb_secrets|which_secret", "file", "it reads the environment", _DUCK),
    # locks and sequences
    _blocked(r"pg_(try_)?advisory_\w+|lockrow|unlockrows", "lock", "it takes or frees locks"),
    _blocked(r"nextval|setval", "sequence", "sequences are not transactional"),
    # triggers and handlers called by hand
    _blocked(r"ri_fkey_\w+|\w+_trigger(_column)?|checkauthtrigger", "procedure", "a trigger"),
)
"""Functions that are never called, whatever the generated lists say."""

HARMLESS: dict[str, dict[str, str]] = {
    "postgresql": {
        "random": "a random value",
        "random_normal": "a random value (PostgreSQL 16)",
        "gen_random_uuid": "a random value",
        "uuid_generate_v1": "a new UUID (uuid-ossp)",
        "uuid_generate_v4": "a random UUID (uuid-ossp)",
        "clock_timestamp": "the clock",
        "timeofday": "the clock",
        "pg_sleep": "waits; the statement timeout bounds it",
        "pg_sleep_for": "waits; the statement timeout bounds it",
        "pg_sleep_until": "waits; the statement timeout bounds it",
        "currval": "reads this session's last sequence value",
        "lastval": "reads this session's last sequence value",
        "pg_sequence_last_value": "reads a sequence",
        "pg_relation_size": "reads a size",
        "pg_table_size": "reads a size",
        "pg_total_relation_size": "reads a size",
        "pg_indexes_size": "reads a size",
        "pg_database_size": "reads a size",
        "pg_tablespace_size": "reads a size",
        "pg_is_in_recovery": "reads the server state",
        "pg_jit_available": "reads the server state",
        "pg_blocking_pids": "reads the lock table",
        "pg_lock_status": "reads the lock table (the pg_locks view)",
        "pg_partition_tree": "reads the catalog",
        "pg_partition_ancestors": "reads the catalog",
        "current_query": "this session's own statement",
        "pg_xact_status": "reads a transaction's status",
        "txid_status": "reads a transaction's status",
        "pg_xact_commit_timestamp": "reads a commit time",
        "pg_last_committed_xact": "reads a commit time",
        "pg_stat_get_xact_numscans": "reads statistics",
        "pg_collation_actual_version": "reads the collation library",
        "st_clusterkmeans": "PostGIS computation (random start)",
        "st_generatepoints": "PostGIS computation (random points)",
        "st_symmetricdifference": "PostGIS computation",
        "all": "syntax: x op ALL (array), a reserved word, never a function",
        "any": "syntax: x op ANY (array), a reserved word, never a function",
        "some": "syntax: x op SOME (array), a reserved word, never a function",
        **dict.fromkeys(
            [
                "coalesce",
                "nullif",
                "greatest",
                "least",
                "grouping",
                "row",
                "xmlattributes",
                "xmlelement",
                "xmlforest",
                "xmlparse",
                "xmlpi",
                "xmlroot",
                "xmlserialize",
                "xmlexists",
                "xmlconcat",
            ],
            "SQL syntax that looks like a call (no pg_proc function of that name)",
        ),
    },
    "duckdb": {
        "random": "a random value",
        "gen_random_uuid": "a random value",
        "uuid": "a random value",
        "uuidv4": "a random value",
        "uuidv7": "a new UUID",
        "error": "raises an error",
        "currval": "reads a sequence",
        "current_query": "this connection's own statement",
        "current_query_id": "reads the connection state",
        "current_connection_id": "reads the connection state",
        "current_transaction_id": "reads the connection state",
        "version": "the DuckDB version",
        "histogram": "an aggregate (also a table macro)",
        "columns": "the COLUMNS(...) star expression: selects columns, calls nothing",
        # table functions that only make rows or read the catalog
        "range": "makes rows",
        "generate_series": "makes rows",
        "unnest": "makes rows",
        "repeat": "makes rows (also a string function)",
        "repeat_row": "makes rows",
        "json_each": "rows of a JSON value",
        "json_tree": "rows of a JSON value",
        "summary": "summarises rows (SUMMARIZE)",
        "test_all_types": "makes rows",
        "pg_timezone_names": "reads the time zones",
        "icu_calendar_names": "reads the calendars",
        "duckdb_tables": "reads the catalog",
        "duckdb_columns": "reads the catalog",
        "duckdb_views": "reads the catalog",
        "duckdb_schemas": "reads the catalog",
        "duckdb_databases": "reads the catalog",
        "duckdb_constraints": "reads the catalog",
        "duckdb_indexes": "reads the catalog",
        "duckdb_sequences": "reads the catalog",
        "duckdb_types": "reads the catalog",
        "duckdb_functions": "reads the catalog",
        "duckdb_keywords": "reads the catalog",
        "duckdb_dependencies": "reads the catalog",
        "duckdb_settings": "reads the settings",
        "duckdb_extensions": "reads the catalog",
        "duckdb_memory": "reads the memory use",
        "pragma_table_info": "reads the catalog",
        "pragma_show": "reads the catalog",
        "pragma_version": "the DuckDB version",
        "pragma_platform": "the platform",
        "pragma_database_size": "reads a size",
        "pragma_storage_info": "reads the storage layout",
        "pragma_collations": "reads the catalog",
        "pragma_metadata_info": "reads the storage layout",
    },
}
"""Reviewed additions to the generated lists, per dialect, with the reason each is harmless."""

HARMLESS_CLASSES: frozenset[str] = frozenset(
    {
        # syntax sqlglot models as a call, whose name is not a pg_proc function
        "Cast",
        "TryCast",
        "Case",
        "If",
        "Coalesce",
        "Extract",
        "Interval",
        "Array",
        "Struct",
        "Bracket",
        "Collate",
        "Exists",
        "In",
        "Any",
        "All",
        "Greatest",
        "Least",
        "Nullif",
        "Trim",
        "Substring",
        "Overlay",
        "Position",
        "StrPosition",
        "AtTimeZone",
        "Convert",
        "JSONExtract",
        "JSONExtractScalar",
        "JSONBExtract",
        "JSONBExtractScalar",
        "JSONBContains",
        "ArrayContains",
        "ArrayContainsAll",
        "ArrayOverlaps",
        "CurrentDate",
        "CurrentTime",
        "CurrentTimestamp",
        "CurrentUser",
        "CurrentSchema",
        "CurrentCatalog",
        "Localtime",
        "Localtimestamp",
        "SessionUser",
        "Xor",
        "Pow",
        "Log",
        "Ln",
        "Count",
        "CountIf",
        "Sum",
        "Avg",
        "Min",
        "Max",
        "Filter",
        "Unnest",
        "Explode",
        "GenerateSeries",
        "GenerateDateArray",
        "ArrayAgg",
        "GroupConcat",
        "StringAgg",
        "Lambda",
        "Grouping",
        "XMLElement",
        "XMLForest",
        "XMLTable",
        "JSONTable",
        "JSONObject",
        "JSONArray",
        "JSONObjectAgg",
        "JSONArrayAgg",
    }
)
"""sqlglot function classes judged by what they are, not by a name: syntax and
standard aggregates whose SQL names are not pg_proc or DuckDB catalog names.
Operators (`OPERATOR_CLASSES`) pass too. Any other class is allowed only when one
of its SQL names, or the name sqlglot writes for it in the dialect, is listed."""

OPERATOR_CLASSES: tuple[str, ...] = ("Binary", "Unary", "Connector", "Predicate")
"""sqlglot bases of operators (AND, OR, =, GLOB, ...), which sqlglot also files as
functions: written as operators, they call no function by name."""


@cache
def generated(dialect: str) -> frozenset[str]:
    """The generated allowlist of `dialect` (empty for a dialect without one)."""
    if dialect not in ALLOWLIST_DIALECTS:
        return frozenset()
    text = (
        resources.files("acts_sql.sql.safety_rules")
        .joinpath(f"data/{dialect}_functions.txt")
        .read_text(encoding="utf-8")
    )
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def blocked_kind(name: str, dialect: str) -> Kind | None:
    """What calling `name` would do when it is on `ALWAYS_BLOCKED`, else None."""
    for entry in ALWAYS_BLOCKED:
        if entry.applies(name, dialect):
            return entry.kind(name)
    return None


def is_listed(name: str, dialect: str, catalog: frozenset[str] | None = None) -> bool:
    """Is `name` (normalised) on `dialect`'s allowlist or its reviewed additions? `catalog`:
    the connected server's own list, used instead of the generated one when given."""
    listed = generated(dialect) if catalog is None else catalog
    return name in listed or name in HARMLESS.get(dialect, {})
