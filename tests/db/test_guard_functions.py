"""`guard.admit` and the function allowlist: every finding counts with writes allowed,
and the executor's own-catalog functions reach the guard."""

from __future__ import annotations

import pytest

from acts_sql.db.guard import admit


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM t; SELECT pg_terminate_backend(1)",
        "INSERT INTO t VALUES (1); SELECT U&\"pg_read_fil\\0065\"('/etc/passwd')",
        "UPDATE t SET a = 1; SELECT query_to_xml('select 1', true, false, '')",
        "DELETE FROM t; SELECT pg_advisory_lock(1)",
    ],
)
def test_with_writes_a_later_always_blocked_call_still_blocks(sql: str) -> None:
    """Before issue 37 only the first finding (the write) was judged."""
    admission = admit(sql, "postgresql", allow_writes=True)
    assert not admission.allowed, sql


def test_with_writes_the_copys_own_functions_may_run() -> None:
    assert admit("SELECT * FROM order_ids(1)", "postgresql", allow_writes=True).allowed
    assert not admit("SELECT * FROM order_ids(1)", "postgresql").allowed


def test_catalog_functions_reach_the_guard_but_never_over_always_blocked() -> None:
    extra = frozenset({"acts_double", "pg_read_file"})
    assert admit("SELECT acts_double(2)", "postgresql", catalog_functions=extra).allowed
    assert not admit("SELECT acts_double(2)", "postgresql").allowed
    blocked = admit("SELECT pg_read_file('x')", "postgresql", catalog_functions=extra)
    assert not blocked.allowed and "pg_read_file()" in blocked.reason


def test_the_servers_catalog_replaces_the_generated_list() -> None:
    """A name the generated list has but the server's catalog lacks (the user's database
    overloads it with a volatile function) is blocked; one only the server has passes."""
    assert admit("SELECT md5('x')", "postgresql").allowed
    catalog = frozenset({"acts_newer_builtin"})
    dropped = admit("SELECT md5('x')", "postgresql", catalog_functions=catalog)
    assert not dropped.allowed and "md5()" in dropped.reason
    assert admit("SELECT acts_newer_builtin(1)", "postgresql", catalog_functions=catalog).allowed
    # the reviewed volatile-but-harmless names stay allowed whatever the catalog says
    assert admit("SELECT random()", "postgresql", catalog_functions=catalog).allowed
