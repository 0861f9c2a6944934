"""The data of the read-only guard: what each kind of statement, node and
function is, as tables.

Everything the guard knows about particular statements lives here; the rule
functions in `statements`, `nodes` and `text` only look things up. Keys are
sqlglot class names (strings, so a class missing from a future sqlglot
release is simply never matched) and lower-case SQL names.

A sqlglot class that is defined in sqlglot's `ddl` or `dml` expression
modules (where sqlglot puts statements) and is not listed in
`STATEMENT_KINDS`, `READ_ROOTS` or `STATEMENT_PARTS` is treated as an unknown
statement and blocked: a new sqlglot release cannot silently widen the guard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Category = Literal[
    "write",
    "ddl",
    "dcl",
    "admin",
    "transaction",
    "session",
    "procedure",
    "file",
    "network",
    "extension",
    "lock",
    "sequence",
    "hidden",
    "function",
    "unknown",
    "unparseable",
    "empty",
]
"""Why a statement is blocked. `write` and `ddl` (and, on a throw-away copy,
`sequence` and `lock`) may be permitted by an executor that sandboxes writes;
the others never are."""

REASON_PREFIX: dict[Category, str] = {
    "write": "writes are not allowed",
    "ddl": "writes are not allowed",
    "dcl": "changing permissions is not allowed",
    "admin": "server administration is not allowed",
    "transaction": "transaction control is not allowed (the executor manages transactions)",
    "session": "changing session or database settings is not allowed",
    "procedure": "procedures and dynamic SQL are not allowed",
    "file": "file and environment access is not allowed",
    "network": "access to other servers is not allowed",
    "extension": "loading extensions is not allowed",
    "lock": "taking locks is not allowed",
    "sequence": "advancing sequences is not allowed (it is a write)",
    "hidden": "hidden statements are not allowed",
    "function": (
        "only functions known to be free of side effects may be called (built-ins on "
        "acts-sql's list; on PostgreSQL also the database's own IMMUTABLE or STABLE functions)"
    ),
    "unknown": "only statements known to be reads are allowed",
    "unparseable": "cannot be checked",
    "empty": "no SQL statement",
}
"""What the agent reads after "blocked: ", before the specific label."""


@dataclass(frozen=True)
class Kind:
    """What a statement or node does: a category and a short label ("DELETE")."""

    category: Category
    label: str


# ------------------------------------------------------------ statements

READ_ROOTS: frozenset[str] = frozenset(
    {
        "Select",
        "Union",
        "Intersect",
        "Except",
        "Values",
        "Subquery",  # a parenthesised query
        "Describe",  # DESCRIBE t, MySQL EXPLAIN ...; its tree is still walked
        "Show",
        "Summarize",  # DuckDB SUMMARIZE
        "Pivot",  # DuckDB PIVOT statement
    }
)
"""sqlglot classes that are reads when they are a whole statement (their
trees are still walked for writes, locks and functions)."""

STATEMENT_KINDS: dict[str, Kind] = {
    # DML
    "Insert": Kind("write", "INSERT"),
    "Update": Kind("write", "UPDATE"),
    "Delete": Kind("write", "DELETE"),
    "Merge": Kind("write", "MERGE"),
    "MultitableInserts": Kind("write", "INSERT ALL"),
    "ConditionalInsert": Kind("write", "INSERT"),
    "TruncateTable": Kind("write", "TRUNCATE"),
    "Into": Kind("write", "SELECT ... INTO"),
    "Refresh": Kind("write", "REFRESH"),
    "LoadData": Kind("file", "LOAD DATA"),
    "Copy": Kind("file", "COPY"),
    "Export": Kind("file", "EXPORT"),
    "Directory": Kind("file", "INSERT ... DIRECTORY"),
    "Put": Kind("file", "PUT"),
    "Get": Kind("file", "GET"),
    "ListStage": Kind("file", "LIST"),
    # DDL (Create, Drop and Alter are refined by their kind, see OBJECT_KINDS)
    "Create": Kind("ddl", "CREATE"),
    "Drop": Kind("ddl", "DROP"),
    "Alter": Kind("ddl", "ALTER"),
    "Comment": Kind("ddl", "COMMENT"),
    "Undrop": Kind("ddl", "UNDROP"),
    "SwapTable": Kind("ddl", "SWAP"),
    "AddPartition": Kind("ddl", "ADD PARTITION"),
    "DropPartition": Kind("ddl", "DROP PARTITION"),
    "ReplacePartition": Kind("ddl", "REPLACE PARTITION"),
    "Cache": Kind("ddl", "CACHE TABLE"),
    "Uncache": Kind("ddl", "UNCACHE TABLE"),
    # permissions
    "Grant": Kind("dcl", "GRANT"),
    "Revoke": Kind("dcl", "REVOKE"),
    # administration
    "Analyze": Kind("admin", "ANALYZE"),
    "Kill": Kind("admin", "KILL"),
    # transactions
    "Transaction": Kind("transaction", "BEGIN"),
    "Commit": Kind("transaction", "COMMIT"),
    "Rollback": Kind("transaction", "ROLLBACK"),
    # session state
    "Set": Kind("session", "SET"),
    "Use": Kind("session", "USE"),
    "AlterSession": Kind("session", "ALTER SESSION"),
    "Pragma": Kind("session", "PRAGMA"),
    "ConnectTo": Kind("network", "CONNECT"),
    "Disconnect": Kind("network", "DISCONNECT"),
    # procedures, dynamic SQL, procedural blocks
    "Execute": Kind("procedure", "EXECUTE"),
    "ExecuteSql": Kind("procedure", "EXECUTE"),
    "Declare": Kind("procedure", "DECLARE"),
    "StoredProcedure": Kind("procedure", "CALL"),
    "Block": Kind("procedure", "BEGIN ... END block"),
    "IfBlock": Kind("procedure", "IF block"),
    "WhileBlock": Kind("procedure", "WHILE block"),
    "LoopBlock": Kind("procedure", "LOOP block"),
    "RepeatBlock": Kind("procedure", "REPEAT block"),
    "Iterate": Kind("procedure", "ITERATE"),
    "Leave": Kind("procedure", "LEAVE"),
    "Return": Kind("procedure", "RETURN"),
    "EndStatement": Kind("procedure", "END"),
    # files and extensions
    "Attach": Kind("file", "ATTACH"),
    "Detach": Kind("file", "DETACH"),
    "Install": Kind("extension", "INSTALL"),
    # sequences
    "NextValueFor": Kind("sequence", "NEXT VALUE FOR"),
    # locks
    "Lock": Kind("lock", "SELECT ... FOR UPDATE"),
    "LockingStatement": Kind("lock", "LOCKING"),
    # sqlglot could not parse the statement and kept its text
    "Command": Kind("unknown", "statement"),
}
"""Statement-like sqlglot classes and what they do, wherever they appear."""

STATEMENT_PARTS: frozenset[str] = frozenset(
    {
        "SetItem",
        "DeclareItem",
        "TriggerEvent",
        "TriggerExecute",
        "TriggerProperties",
        "TriggerReferencing",
        "SequenceProperties",
        "MacroOverload",
        "MacroOverloads",
        "UserDefinedFunction",
        "AlterColumn",
        "AlterDistStyle",
        "AlterIndex",
        "AlterModifySqlSecurity",
        "AlterRename",
        "AlterSet",
        "AlterSortKey",
        "DropPrimaryKey",
        "ModifyColumn",
        "RenameColumn",
        "RenameIndex",
        "MergeTreeTTL",
        "MergeTreeTTLAction",
        "Clone",
        "CopyParameter",
        "Credentials",
        "DirectoryStage",
        "OnConflict",
        "Returning",
        "When",
        "Whens",
        "DML",
        "DDL",
        # read-only pieces that sqlglot happens to define next to statements
        "CharacterSet",
        "Comprehension",
        "Heredoc",
    }
)
"""Classes from sqlglot's statement modules that are only parts of a
statement (judged with it) or harmless expressions."""

OBJECT_KINDS: dict[str, Category] = {
    "DATABASE": "admin",
    "CATALOG": "admin",
    "ROLE": "admin",
    "USER": "admin",
    "GROUP": "admin",
    "LOGIN": "admin",
    "TABLESPACE": "admin",
    "SERVER": "admin",
    "SYSTEM": "admin",
    "SECRET": "admin",
    "PUBLICATION": "admin",
    "SUBSCRIPTION": "admin",
    "EXTENSION": "extension",
    "SESSION": "session",
}
"""CREATE/DROP/ALTER of these object kinds acts beyond one database (or on
the session); any other kind (TABLE, VIEW, INDEX, ...) is plain DDL."""

COMMAND_KINDS: dict[str, Kind] = {
    "CALL": Kind("procedure", "CALL"),
    "EXEC": Kind("procedure", "EXEC"),
    "EXECUTE": Kind("procedure", "EXECUTE"),
    "DO": Kind("procedure", "DO block"),
    "PREPARE": Kind("procedure", "PREPARE"),
    "DEALLOCATE": Kind("procedure", "DEALLOCATE"),
    "DECLARE": Kind("procedure", "DECLARE"),
    "BEGIN": Kind("procedure", "BEGIN ... END block"),
    "LOCK": Kind("lock", "LOCK"),
    "UNLOCK": Kind("lock", "UNLOCK"),
    "VACUUM": Kind("admin", "VACUUM"),
    "REINDEX": Kind("admin", "REINDEX"),
    "CLUSTER": Kind("admin", "CLUSTER"),
    "CHECKPOINT": Kind("admin", "CHECKPOINT"),
    "FLUSH": Kind("admin", "FLUSH"),
    "OPTIMIZE": Kind("admin", "OPTIMIZE"),
    "NOTIFY": Kind("admin", "NOTIFY"),
    "LISTEN": Kind("session", "LISTEN"),
    "UNLISTEN": Kind("session", "UNLISTEN"),
    "REFRESH": Kind("write", "REFRESH MATERIALIZED VIEW"),
    "REPLACE": Kind("write", "REPLACE"),
    "UPSERT": Kind("write", "UPSERT"),
    "INSERT": Kind("write", "INSERT"),
    "UPDATE": Kind("write", "UPDATE"),
    "DELETE": Kind("write", "DELETE"),
    "MERGE": Kind("write", "MERGE"),
    "TRUNCATE": Kind("write", "TRUNCATE"),
    "COPY": Kind("file", "COPY"),
    "EXPORT": Kind("file", "EXPORT"),
    "IMPORT": Kind("file", "IMPORT"),
    "ATTACH": Kind("file", "ATTACH"),
    "DETACH": Kind("file", "DETACH"),
    "LOAD": Kind("extension", "LOAD"),
    "INSTALL": Kind("extension", "INSTALL"),
    "GRANT": Kind("dcl", "GRANT"),
    "REVOKE": Kind("dcl", "REVOKE"),
    "SET": Kind("session", "SET"),
    "RESET": Kind("session", "RESET"),
    "DISCARD": Kind("session", "DISCARD"),
    "USE": Kind("session", "USE"),
    "CREATE": Kind("ddl", "CREATE"),
    "DROP": Kind("ddl", "DROP"),
    "ALTER": Kind("ddl", "ALTER"),
    "COMMENT": Kind("ddl", "COMMENT"),
    "SECURITY": Kind("ddl", "SECURITY LABEL"),
    "ANALYZE": Kind("admin", "ANALYZE"),
    "COMMIT": Kind("transaction", "COMMIT"),
    "ROLLBACK": Kind("transaction", "ROLLBACK"),
    "START": Kind("transaction", "START TRANSACTION"),
    "SAVEPOINT": Kind("transaction", "SAVEPOINT"),
    "RELEASE": Kind("transaction", "RELEASE SAVEPOINT"),
    "KILL": Kind("admin", "KILL"),
    "SHUTDOWN": Kind("admin", "SHUTDOWN"),
    "ABORT": Kind("transaction", "ABORT"),
    "END": Kind("transaction", "END"),
    "WAITFOR": Kind("procedure", "WAITFOR"),
    "BULK": Kind("file", "BULK INSERT"),
    "HANDLER": Kind("unknown", "HANDLER"),
}
"""First keyword of a statement that sqlglot kept as raw text (`Command`) or
could not parse. SHOW and EXPLAIN Commands are handled by their own rules;
any other head is unknown (or, unparsed, "unparseable")."""

SHOW_TAIL = re.compile(r"^\s*[A-Za-z_][\w.]*\s*$")
"""A `SHOW <name>` kept as text is a read only when it names one setting."""

EXPLAIN_OPTION = re.compile(
    r"""^\s*(?:
        \((?:[^()'"]|'[^']*')*\)          # PostgreSQL: (ANALYZE, FORMAT JSON)
      | ANALY[SZ]E\b | VERBOSE\b | QUERY\s+PLAN\b | EXTENDED\b | PARTITIONS\b
      | FORMAT\s*=\s*\w+
    )""",
    re.IGNORECASE | re.VERBOSE,
)
"""One option between EXPLAIN and the explained statement."""

EXPLAIN_PLAN = re.compile(r"^\s*PLAN\b", re.IGNORECASE)
"""Oracle's EXPLAIN PLAN [INTO t] FOR ...: writes rows into a plan table."""

# ------------------------------------------------------------ pragmas

ARGUMENT_READ_PRAGMAS: frozenset[str] = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "integrity_check",
        "quick_check",
        "storage_info",  # DuckDB
        "show",  # DuckDB PRAGMA show('t')
    }
)
"""Pragmas whose argument only names what to read (a table, an index)."""

BARE_READ_PRAGMAS: frozenset[str] = frozenset(
    {
        # SQLite: without an argument these only report a setting
        "application_id",
        "auto_vacuum",
        "cache_size",
        "collation_list",
        "compile_options",
        "data_version",
        "database_list",
        "encoding",
        "foreign_keys",
        "freelist_count",
        "function_list",
        "journal_mode",
        "module_list",
        "page_count",
        "page_size",
        "pragma_list",
        "schema_version",
        "user_version",
        # DuckDB
        "show_tables",
        "show_tables_expanded",
        "show_databases",
        "version",
        "platform",
        "database_size",
        "functions",
        "collations",
        "metadata_info",
    }
)
"""Pragmas that are reads when they have no argument (with one they set)."""

# ------------------------------------------------------------ functions


@dataclass(frozen=True)
class FunctionRule:
    """Calls whose name matches `pattern` (whole name, case-insensitive) do
    `kind`; `dialects` limits the rule to some dialects (None: all)."""

    pattern: re.Pattern[str]
    kind: Kind
    dialects: frozenset[str] | None = None

    def applies(self, name: str, dialect: str) -> bool:
        in_dialect = self.dialects is None or dialect in self.dialects
        return in_dialect and self.pattern.fullmatch(name) is not None


def _rule(pattern: str, category: Category, label: str, *dialects: str) -> FunctionRule:
    return FunctionRule(
        re.compile(pattern, re.IGNORECASE),
        Kind(category, label),
        frozenset(dialects) if dialects else None,
    )


FUNCTION_RULES: tuple[FunctionRule, ...] = (
    # PostgreSQL
    _rule(r"pg_terminate_backend|pg_cancel_backend", "admin", "{name}()"),
    _rule(r"pg_reload_conf|pg_rotate_logfile|pg_switch_wal|pg_promote", "admin", "{name}()"),
    _rule(r"pg_create_restore_point|pg_log_backend_memory_contexts", "admin", "{name}()"),
    _rule(r"pg_(start|stop)_backup|pg_backup_(start|stop)", "admin", "{name}()"),
    _rule(r"pg_stat_reset\w*|pg_stat_statements_reset", "admin", "{name}()"),
    _rule(r"pg_(create|drop|copy)_\w*replication_slot|pg_logical_slot_\w+", "admin", "{name}()"),
    _rule(r"pg_replication_origin_\w+|pg_import_system_collations", "admin", "{name}()"),
    _rule(r"pg_notify", "admin", "{name}()"),
    _rule(r"set_config", "session", "{name}()"),
    _rule(r"pg_read_file|pg_read_binary_file|pg_stat_file|pg_ls_\w+", "file", "{name}()"),
    _rule(r"lo_import|lo_export|pg_file_\w+|pg_logdir_ls", "file", "{name}()"),
    _rule(
        r"lo_(create|creat|unlink|put|from_bytea|truncate|truncate64|open|write)",
        "write",
        "{name}()",
    ),
    _rule(r"dblink\w*", "network", "{name}()"),
    _rule(r"nextval|setval", "sequence", "{name}()"),
    _rule(r"pg_(try_)?advisory_\w+", "lock", "{name}()"),
    # MySQL / MariaDB
    _rule(r"load_file", "file", "{name}()", "mysql"),
    _rule(r"sys_exec|sys_eval", "procedure", "{name}()", "mysql"),
    _rule(r"get_lock|release_lock|release_all_locks", "lock", "{name}()", "mysql"),
    _rule(r"master_pos_wait|source_pos_wait", "admin", "{name}()", "mysql"),
    # SQLite
    _rule(r"load_extension", "extension", "{name}()"),
    _rule(r"readfile|writefile|edit|fts3_tokenizer", "file", "{name}()", "sqlite"),
    # SQL Server
    _rule(r"openrowset|opendatasource|openquery", "network", "{name}()"),
    _rule(r"xp_\w+", "procedure", "{name}()", "sqlserver"),
    _rule(
        r"fn_get_audit_file|fn_xe_file_target_read_file|fn_trace_gettable",
        "file",
        "{name}()",
        "sqlserver",
    ),
    # Oracle (package calls are judged by PACKAGE rules below)
    _rule(r"httpuritype", "network", "{name}()", "oracle"),
    # DuckDB: files, environment, dynamic SQL
    _rule(
        r"read_\w+|\w+_scan|glob|sniff_csv|parquet_\w+|st_read|getenv", "file", "{name}()", "duckdb"
    ),
    _rule(r"query|query_table", "procedure", "{name}()", "duckdb"),
)
"""Functions with side effects, or that read files or other servers."""

GUARDED_PACKAGES = re.compile(r"(dbms|utl)_\w+", re.IGNORECASE)
"""Oracle packages that can act outside the query (jobs, files, HTTP, locks, pipes)."""

HARMLESS_PACKAGES: frozenset[str] = frozenset(
    {"dbms_lob", "dbms_random", "dbms_metadata", "dbms_crypto", "dbms_assert"}
)
"""Guarded-looking packages whose functions only compute or read."""

PACKAGE_CATEGORIES: dict[str, Category] = {
    "utl_http": "network",
    "utl_tcp": "network",
    "utl_smtp": "network",
    "utl_mail": "network",
    "utl_inaddr": "network",
    "utl_file": "file",
    "dbms_lock": "lock",
    "dbms_session": "session",
}
"""Category of a call into a guarded package; any other one is "procedure"
(DBMS_SCHEDULER, DBMS_SQL, DBMS_PIPE, ...)."""

ORACLE_SEQUENCE_COLUMNS: frozenset[str] = frozenset({"nextval"})
"""`seq.NEXTVAL` is a column reference in Oracle's grammar, and a write."""

LOCK_HINTS: frozenset[str] = frozenset(
    {
        "UPDLOCK",
        "XLOCK",
        "TABLOCK",
        "TABLOCKX",
        "HOLDLOCK",
        "PAGLOCK",
        "SERIALIZABLE",
        "REPEATABLEREAD",
    }
)
"""SQL Server table hints that take or hold locks (NOLOCK and friends only read)."""

SESSION_HINTS: frozenset[str] = frozenset({"max_execution_time", "set_var"})
"""MySQL optimizer hints that change the executor's limits or session variables."""

FILE_TABLE = re.compile(
    r".*[/\\:~].*|.*\.(csv|tsv|txt|parquet|json|jsonl|ndjson|gz|zst|xlsx|db|duckdb|sqlite|arrow)",
    re.IGNORECASE,
)
"""A DuckDB table name that is really a file path (`FROM 'data/x.csv'`)."""

EXECUTABLE_COMMENT_DIALECTS: frozenset[str] = frozenset({"mysql"})
"""Dialects that run the text of `/*! ... */` comments (MySQL, MariaDB)."""

EXECUTABLE_COMMENT = re.compile(r"^/\*M?!")
