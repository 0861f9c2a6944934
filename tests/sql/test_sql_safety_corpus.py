"""The read-only guard against a corpus of hostile, tricky and harmless statements.

Corpus: tests/fixtures/sql/safety/corpus.tsv, one statement per line as
`<dialect> TAB <allow|block> TAB <sql>` (escapes: \\n, \\t, \\\\).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
from sqlglot import exp

from acts_sql.errors import SqlParseError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.safety import check_statement

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "sql" / "safety" / "corpus.tsv"
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\"}


class Case(NamedTuple):
    line: int
    dialect: str
    verdict: str
    sql: str

    def __str__(self) -> str:
        return f"{self.line}:{self.dialect}:{self.sql[:50]}"


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), text)


def load_corpus(path: Path = CORPUS) -> list[Case]:
    cases = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        dialect, verdict, sql = raw.split("\t", 2)
        assert verdict in ("allow", "block"), f"line {number}: bad verdict {verdict!r}"
        cases.append(Case(number, dialect, verdict, _unescape(sql)))
    return cases


CASES = load_corpus()


def test_corpus_size_and_spread() -> None:
    counts = Counter(case.verdict for case in CASES)
    assert len(CASES) >= 80
    assert counts["allow"] >= 25
    dialects = {case.dialect for case in CASES}
    assert dialects >= {"sqlite", "postgresql", "mysql", "sqlserver", "oracle", "duckdb"}
    assert len({(c.dialect, c.sql) for c in CASES}) == len(CASES), "duplicate corpus lines"


@pytest.mark.parametrize("case", CASES, ids=str)
def test_corpus_verdict(case: Case) -> None:
    verdict = check_statement(case.sql, case.dialect)
    assert verdict.allowed == (case.verdict == "allow"), verdict.reason
    if verdict.allowed:
        assert verdict.reason is None and verdict.category is None
    else:
        assert verdict.reason and verdict.category


_WRITE_NODES = (exp.DML, exp.DDL, exp.Into, exp.TruncateTable, exp.Drop, exp.Alter, exp.Merge)


def _parsed_writes(case: Case) -> bool:
    try:
        trees = parse_statements(case.sql, case.dialect)
    except SqlParseError:
        return False
    return any(tree.find(*_WRITE_NODES) is not None for tree in trees)


def test_every_write_in_the_corpus_is_blocked() -> None:
    writes = [case for case in CASES if _parsed_writes(case)]
    assert len(writes) >= 30
    allowed = [str(c) for c in writes if check_statement(c.sql, c.dialect).allowed]
    assert allowed == []
    assert all(c.verdict == "block" for c in writes)


# ---------------------------------------------------------------- property

_FORBIDDEN = (
    exp.DML,
    exp.DDL,
    exp.Into,
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Command,
    exp.Set,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Grant,
    exp.Revoke,
    exp.Lock,
    exp.Attach,
    exp.Execute,
    exp.Use,
)

_READS = [
    "SELECT a FROM t",
    "SELECT count(*) FROM t WHERE b > 1",
    "SELECT 'DROP TABLE t'",
    'SELECT "delete" FROM t',
    "SELECT a FROM t UNION ALL SELECT b FROM u",
]
_WRITES = [
    "DELETE FROM t",
    "UPDATE t SET a = 1",
    "INSERT INTO t VALUES (1)",
    "DROP TABLE t",
    "CREATE TABLE x (a INT)",
    "TRUNCATE t",
    "ALTER TABLE t ADD COLUMN c INT",
    "GRANT SELECT ON t TO bob",
    "SET search_path TO x",
    "COMMIT",
]
_RETURNING = ["DELETE FROM t RETURNING a", "UPDATE t SET a = 1 RETURNING a"]


def _compose(rng: random.Random) -> str:
    """A random statement built from reads and writes, in the shapes writes hide in."""
    read, write, returning = rng.choice(_READS), rng.choice(_WRITES), rng.choice(_RETURNING)
    shapes = [
        lambda: read,
        lambda: f"{read}; {rng.choice([read, write])}",
        lambda: f"{write}; {read}",
        lambda: f"WITH c AS ({returning}) SELECT * FROM c",
        lambda: f"WITH c AS ({read}) SELECT * FROM c",
        lambda: f"SELECT * FROM ({read}) AS s",
        lambda: f"SELECT * FROM t WHERE a IN (WITH c AS ({returning}) SELECT a FROM c)",
        lambda: f"SELECT * INTO x FROM ({read}) AS s",
        lambda: f"{read} FOR UPDATE",
        lambda: f"EXPLAIN {rng.choice([read, write])}",
        lambda: f"SELECT 1 /* {write} */",
        lambda: f"SELECT 1 -- ; {write}\n; {rng.choice([read, write])}",
        lambda: f"{read.upper()}; {write.lower()}",
    ]
    return rng.choice(shapes)()


def test_property_allowed_statements_hold_no_write_anywhere() -> None:
    """For any statement the guard allows, sqlglot finds no DML/DDL (or other
    non-read) node anywhere in its tree."""
    rng = random.Random(20240607)
    statements = [(c.dialect, c.sql) for c in CASES]
    statements += [
        (rng.choice(["postgresql", "sqlite", "duckdb"]), _compose(rng)) for _ in range(400)
    ]
    allowed = 0
    for dialect, sql in statements:
        if not check_statement(sql, dialect).allowed:
            continue
        allowed += 1
        for tree in _trees(sql, dialect):
            found = tree.find(*_FORBIDDEN)
            assert found is None, f"{dialect}: {sql!r} allowed but holds {found!r}"
    assert allowed >= 100


_EXPLAIN_OPTIONS = re.compile(r"^(?:\s+|\([^)]*\)|ANALYZE\b|QUERY\s+PLAN\b)*", re.I)


def _trees(sql: str, dialect: str) -> list[exp.Expr]:
    """The statements' trees; a SHOW kept as text has none, an EXPLAIN kept as
    text is replaced by the tree of the statement it explains."""
    trees = []
    for tree in parse_statements(sql, dialect):
        if not isinstance(tree, exp.Command):
            trees.append(tree)
            continue
        head = str(tree.this).upper()
        assert head in ("SHOW", "EXPLAIN"), f"allowed Command {sql!r}"
        if head == "EXPLAIN":
            inner = _EXPLAIN_OPTIONS.sub("", str(tree.expression.this), count=1)
            trees.extend(_trees(inner, dialect))
    return trees
