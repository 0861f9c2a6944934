"""The doctor's questions for database servers: PostgreSQL and MariaDB/MySQL.

Every question is a read query on the session a run uses (catalog views,
privilege functions such as ``has_table_privilege``, settings), so the answers
are the server's, for this account, as acts-sql connects.
"""

from __future__ import annotations

from typing import Any

from acts_sql.db.doctor.report import (
    SELECT_ONLY,
    Check,
    CheckName,
    Session,
    unanswered,
    yes_no,
)
from acts_sql.db.result import ExecResult

SHOWN_NAMES = 3
"""Objects named in a row before "and N more"."""


def named(items: list[str], limit: int = SHOWN_NAMES) -> str:
    """'a, b, c and 4 more'."""
    head = ", ".join(items[:limit])
    return head if len(items) <= limit else f"{head} and {len(items) - limit} more"


def first_column(result: ExecResult) -> list[str]:
    return [str(row[0]) for row in result.rows if row and row[0] is not None]


# ---------------------------------------------------------------- PostgreSQL

PG_ROLE = (
    "SELECT current_user, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolreplication, "
    "r.rolbypassrls, current_setting('server_version') "
    "FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user"
)
PG_PREDEFINED = (
    "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname IN ('pg_read_server_files', "
    "'pg_write_server_files', 'pg_execute_server_program', 'pg_signal_backend', "
    "'pg_read_all_data', 'pg_write_all_data', 'pg_checkpoint') "
    "AND pg_catalog.pg_has_role(current_user, oid, 'MEMBER') ORDER BY rolname"
)
PG_FILE_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")
_PG_USER_RELATIONS = (
    "FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
    "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%' "
)
PG_WRITABLE_TABLES = (
    "SELECT n.nspname || '.' || c.relname "
    + _PG_USER_RELATIONS
    + "AND c.relkind IN ('r', 'p', 'v', 'f', 'm') "
    "AND pg_catalog.has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') ORDER BY 1"
)
PG_WRITABLE_SEQUENCES = (
    "SELECT n.nspname || '.' || c.relname "
    + _PG_USER_RELATIONS
    + "AND CASE WHEN c.relkind = 'S' "  # the privilege function only after the kind is known
    "THEN pg_catalog.has_sequence_privilege(c.oid, 'USAGE, UPDATE') ELSE false END ORDER BY 1"
)
PG_CREATE = (
    "SELECT 'schema ' || n.nspname FROM pg_catalog.pg_namespace AS n "
    "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%' "
    "AND pg_catalog.has_schema_privilege(n.oid, 'CREATE') "
    "UNION ALL SELECT 'database ' || current_database() "
    "WHERE pg_catalog.has_database_privilege(current_database(), 'CREATE') ORDER BY 1"
)
PG_SESSION = (
    "SELECT current_setting('default_transaction_read_only'), "
    "current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout')"
)
PG_OTHER_SESSIONS = (
    "SELECT count(*) FROM pg_catalog.pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_catalog.pg_backend_pid()"
)


def postgres_checks(session: Session) -> list[Check]:
    """The rows for a PostgreSQL connection."""
    role = session.run_internal(PG_ROLE)
    if not role.ok or not role.rows:
        return [unanswered(CheckName.SUPERUSER, role)]
    user, superuser, createdb, createrole, replication, bypassrls, version = role.rows[0]
    members = first_column(session.run_internal(PG_PREDEFINED))
    connection = Check(
        name=CheckName.CONNECTION,
        value=f"PostgreSQL {version}, as role {user}",
        level="ok",
    )
    admin = [
        flag
        for flag, held in (
            ("CREATEROLE", createrole),
            ("REPLICATION", replication),
            ("BYPASSRLS", bypassrls),
        )
        if held
    ] + [m for m in members if m not in PG_FILE_ROLES and m != "pg_read_all_data"]
    return [
        connection,
        _superuser(bool(superuser), admin if not superuser else []),
        _pg_writes(session, bool(superuser)),
        _pg_files(bool(superuser), [m for m in members if m in PG_FILE_ROLES]),
        _pg_session(session),
        _pg_copy(session, bool(superuser or createdb)),
    ]


def _superuser(superuser: bool, admin: list[str]) -> Check:
    if superuser:
        return Check(
            name=CheckName.SUPERUSER,
            answer=True,
            value="yes",
            level="warning",
            meaning="a superuser can do anything the guard might miss (read files, end other "
            f"sessions); {SELECT_ONLY}",
        )
    if admin:
        return Check(
            name=CheckName.SUPERUSER,
            answer=False,
            value=f"no, but admin-like: {', '.join(admin)}",
            level="warning",
            meaning=f"these privileges reach beyond reading data; {SELECT_ONLY}",
        )
    return Check(
        name=CheckName.SUPERUSER,
        answer=False,
        value="no",
        level="ok",
        meaning="no superuser or admin privileges",
    )


def writes_check(found: list[str], *, failed: ExecResult | None = None) -> Check:
    """The "can write" row from what the account may change (descriptions)."""
    if failed is not None:
        return unanswered(CheckName.CAN_WRITE, failed)
    if found:
        return Check(
            name=CheckName.CAN_WRITE,
            answer=True,
            value=f"yes: {'; '.join(found)}",
            level="warning",
            meaning="only the guard and the read-only session stand between a statement and "
            f"these writes; {SELECT_ONLY}",
        )
    return Check(
        name=CheckName.CAN_WRITE,
        answer=False,
        value="no",
        level="ok",
        meaning="the database itself refuses every write, whatever the guard lets through",
    )


def _pg_writes(session: Session, superuser: bool) -> Check:
    tables = session.run_internal(PG_WRITABLE_TABLES)
    sequences = session.run_internal(PG_WRITABLE_SEQUENCES)
    creates = session.run_internal(PG_CREATE)
    failed = next((r for r in (tables, sequences, creates) if not r.ok), None)
    found = ["superuser: every table"] if superuser else []
    if tables.rows and not superuser:
        found.append(f"INSERT/UPDATE/DELETE on {named(first_column(tables))}")
    if sequences.rows and not superuser:
        found.append(f"nextval/setval on {named(first_column(sequences))}")
    if creates.rows and not superuser:
        found.append(f"CREATE in {named(first_column(creates))}")
    return writes_check(found, failed=failed if not superuser else None)


def _pg_files(superuser: bool, file_roles: list[str]) -> Check:
    if superuser or file_roles:
        why = "superuser" if superuser else f"member of {', '.join(file_roles)}"
        return Check(
            name=CheckName.READS_FILES,
            answer=True,
            value=f"yes: {why}",
            level="warning",
            meaning="pg_read_file, COPY ... FROM PROGRAM and large-object export work for this "
            f"role; the guard blocks them by name; {SELECT_ONLY}",
        )
    return Check(
        name=CheckName.READS_FILES,
        answer=False,
        value="no",
        level="ok",
        meaning="not a superuser nor a member of pg_read_server_files, pg_write_server_files "
        "or pg_execute_server_program",
    )


def _pg_session(session: Session) -> Check:
    result = session.run_internal(PG_SESSION)
    if not result.ok or not result.rows:
        return unanswered(CheckName.ENGINE_READ_ONLY, result)
    read_only, lock_timeout, idle_timeout = (str(v) for v in result.rows[0])
    on = read_only == "on"
    return Check(
        name=CheckName.ENGINE_READ_ONLY,
        answer=on,
        value=f"default_transaction_read_only={read_only}, every batch in a READ ONLY "
        f"transaction; lock_timeout={lock_timeout}, "
        f"idle_in_transaction_session_timeout={idle_timeout}",
        level="ok" if on else "warning",
        meaning="PostgreSQL refuses writes in this session, even ones the guard let through"
        if on
        else "this session is not read-only: only the guard stops writes",
    )


def _pg_copy(session: Session, can_create: bool) -> Check:
    others = session.run_internal(PG_OTHER_SESSIONS)
    count = int(others.rows[0][0]) if others.ok and others.rows else None
    if not can_create:
        return Check(
            name=CheckName.WRITABLE_COPY,
            answer=False,
            value="no: the role has no CREATEDB",
            meaning="--allow-writes stops with exit 2 (no private copy); read-only runs work",
        )
    busy = f"; {count} other session(s) on the database now" if count else ""
    return Check(
        name=CheckName.WRITABLE_COPY,
        answer=True,
        value=f"yes: CREATEDB (CREATE DATABASE ... TEMPLATE){busy}",
        meaning="the copy needs no other session connected to the database while it is made",
    )


# ---------------------------------------------------------------- MariaDB / MySQL

_GRANTEES = (
    "(SELECT CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "
    "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') "
    "UNION SELECT CONCAT('''', ROLE_NAME, '''') FROM information_schema.ENABLED_ROLES "
    "UNION SELECT CONCAT('''', ROLE_NAME, '''@''''') FROM information_schema.ENABLED_ROLES)"
)
MY_USER = "SELECT CURRENT_USER(), VERSION(), @@GLOBAL.secure_file_priv"
MY_GLOBAL = (
    "SELECT PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.USER_PRIVILEGES "
    f"WHERE GRANTEE IN {_GRANTEES}"
)
MY_SCOPED = (
    "SELECT CONCAT(TABLE_SCHEMA, '.*'), PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES "
    f"WHERE GRANTEE IN {_GRANTEES} "
    "UNION ALL SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME), PRIVILEGE_TYPE "
    f"FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE IN {_GRANTEES} "
    "UNION ALL SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME, '.', COLUMN_NAME), PRIVILEGE_TYPE "
    f"FROM information_schema.COLUMN_PRIVILEGES WHERE GRANTEE IN {_GRANTEES}"
)
MY_READ_ONLY = ("SELECT @@SESSION.transaction_read_only", "SELECT @@SESSION.tx_read_only")
MY_WRITES = frozenset(
    {
        "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "CREATE VIEW",
        "CREATE ROUTINE", "ALTER ROUTINE", "EVENT", "TRIGGER", "DELETE HISTORY",
    }
)  # fmt: skip
MY_ADMIN = frozenset(
    {
        "SUPER", "SHUTDOWN", "RELOAD", "PROCESS", "CREATE USER", "CONNECTION ADMIN",
        "READ_ONLY ADMIN", "BINLOG ADMIN", "SET USER", "FEDERATED ADMIN",
        "REPLICATION MASTER ADMIN", "REPLICATION SLAVE ADMIN", "GRANT OPTION",
    }
)  # fmt: skip


def mysql_checks(session: Session) -> list[Check]:
    """The rows for a MariaDB or MySQL connection."""
    who = session.run_internal(MY_USER)
    if not who.ok or not who.rows:
        return [unanswered(CheckName.SUPERUSER, who)]
    user, version, secure_file_priv = who.rows[0]
    held = session.run_internal(MY_GLOBAL)
    scoped = session.run_internal(MY_SCOPED)
    if not held.ok or not scoped.ok:
        failed = held if not held.ok else scoped
        return [unanswered(CheckName.SUPERUSER, failed), unanswered(CheckName.CAN_WRITE, failed)]
    global_privileges = {str(row[0]) for row in held.rows}
    if any(str(row[1]).upper() == "YES" for row in held.rows):
        global_privileges.add("GRANT OPTION")
    admin = sorted(global_privileges & (MY_ADMIN - {"SUPER"}))
    return [
        Check(name=CheckName.CONNECTION, value=f"MariaDB/MySQL {version}, as {user}", level="ok"),
        _superuser("SUPER" in global_privileges, admin),
        writes_check(_my_writes(global_privileges, scoped.rows)),
        _my_files("FILE" in global_privileges, secure_file_priv),
        _my_session(session),
        _my_copy(global_privileges),
    ]


def _my_writes(global_privileges: set[str], scoped: list[list[Any]]) -> list[str]:
    found = []
    on_all = sorted(global_privileges & MY_WRITES)
    if on_all:
        found.append(f"{named(on_all, 4)} on *.*")
    by_object: dict[str, set[str]] = {}
    for where, privilege in scoped:
        if str(privilege) in MY_WRITES:
            by_object.setdefault(str(where), set()).add(str(privilege))
    found += [f"{named(sorted(p), 4)} on {where}" for where, p in sorted(by_object.items())]
    more = len(found) - SHOWN_NAMES
    return found[:SHOWN_NAMES] + ([f"{more} more"] if more > 0 else [])


def _my_files(file_privilege: bool, secure_file_priv: Any) -> Check:
    where = (
        "disabled (secure_file_priv is NULL)"
        if secure_file_priv is None
        else "any directory (secure_file_priv is empty)"
        if secure_file_priv == ""
        else f"the directory {secure_file_priv} (secure_file_priv)"
    )
    if not file_privilege:
        return Check(
            name=CheckName.READS_FILES,
            answer=False,
            value="no: no FILE privilege",
            level="ok",
            meaning=f"LOAD_FILE and SELECT ... INTO OUTFILE are refused; server files: {where}",
        )
    reads = secure_file_priv is not None
    return Check(
        name=CheckName.READS_FILES,
        answer=reads,
        value=f"{yes_no(reads)}: FILE privilege; file access {where}",
        level="warning",
        meaning=f"LOAD_FILE and INTO OUTFILE work for this account; {SELECT_ONLY}"
        if reads
        else "the server has file access turned off; were secure_file_priv set, this account "
        f"could read files; {SELECT_ONLY}",
    )


def _my_session(session: Session) -> Check:
    result = ExecResult(status="error", error="no read-only variable")
    for query in MY_READ_ONLY:
        result = session.run_internal(query)
        if result.ok:
            break
    if not result.ok or not result.rows:
        return unanswered(CheckName.ENGINE_READ_ONLY, result)
    on = str(result.rows[0][0]) in ("1", "ON", "True")
    return Check(
        name=CheckName.ENGINE_READ_ONLY,
        answer=on,
        value=f"SET SESSION TRANSACTION READ ONLY: {'on' if on else 'off'}; every batch in "
        "START TRANSACTION READ ONLY",
        level="ok" if on else "warning",
        meaning="the server refuses writes to tables in this session (temporary tables aside)"
        if on
        else "this session is not read-only: only the guard stops writes",
    )


def _my_copy(global_privileges: set[str]) -> Check:
    can = {"CREATE", "INSERT", "DROP"} <= global_privileges
    return Check(
        name=CheckName.WRITABLE_COPY,
        answer=can,
        value="yes: CREATE, INSERT and DROP on *.*"
        if can
        else "no: the copy needs CREATE, INSERT and DROP on *.*",
        meaning="--allow-writes copies the database to acts_sandbox_* and drops it after"
        if can
        else "--allow-writes stops with exit 2 (no private copy); read-only runs work",
    )
