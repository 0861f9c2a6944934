"""Schema-constrained decoding on a stand-in model and tokenizer: the same greedy reply
when every name is valid (with and without prompt lookup), the best allowed token when a
name is not, drafts cut at a refused token, samples held to the names too, and where the
SQL of a reply is (```sql blocks, JSON string fields)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import pytest

from acts_sql.llm.local.constraint import (
    ConstrainedGreedy,
    ConstrainedSample,
    NameGuard,
    fenced_sql,
    json_sql,
)
from acts_sql.llm.local.decoder import Argmax, Transcript, decode_greedy
from acts_sql.llm.local.lookup import DraftGate, NgramDrafter
from acts_sql.llm.local.sampling import SampleChooser
from acts_sql.llm.local.sqlnames import NameRules

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numpy") is None, reason="the decoder's logit rows are numpy arrays"
)

NAMES = ["users", "orders", "Order Items", "id", "name", "age", "user_id", "amount", "created_at"]
EOG = "<eog>"


class OpenGate(DraftGate):
    def length(self, fresh: bool, most: int) -> int:
        return most


class Vocab:
    """Pieces by id (id 0 ends the reply)."""

    def __init__(self, pieces: Sequence[str]) -> None:
        self.pieces = [EOG, *dict.fromkeys(pieces)]
        self.ids = {p: i for i, p in enumerate(self.pieces)}

    def piece(self, token: int) -> bytes:
        return b"" if token == 0 else self.pieces[token].encode()

    def encode(self, pieces: Sequence[str]) -> list[int]:
        return [self.ids[p] for p in pieces]


class TextModel:
    """A stand-in model that prefers its `replies` in order: the next piece of the first
    reply the written text still follows scores 10, of the second 9, and so on (each reply
    a list of pieces). It keeps a KV 'cache' of evaluated tokens."""

    def __init__(self, vocab: Vocab, prompt: Sequence[int], replies: Sequence[Sequence[str]]):
        self.vocab = vocab
        self.prompt = list(prompt)
        self.replies = [list(r) for r in replies]
        self.cache = list(prompt)

    @property
    def n_tokens(self) -> int:
        return len(self.cache)

    def row(self) -> Any:
        import numpy as np

        written = self.cache[len(self.prompt) :]
        logits = np.zeros(len(self.vocab.pieces), dtype=np.float32)
        for rank, reply in enumerate(self.replies):
            ids = self.vocab.encode(reply)
            if ids[: len(written)] == written:
                nxt = ids[len(written)] if len(written) < len(ids) else 0
                logits[nxt] = max(logits[nxt], 10.0 - rank)
        return logits

    def first(self) -> Any:
        return self.row()[None, :]

    def decode(self, tokens: Sequence[int]) -> Any:
        import numpy as np

        rows = []
        for token in tokens:
            self.cache.append(token)
            rows.append(self.row())
        return np.stack(rows)

    def truncate(self, n_tokens: int) -> None:
        del self.cache[n_tokens:]

    def is_eog(self, token: int) -> bool:
        return token == 0

    def piece(self, token: int) -> bytes:
        return self.vocab.piece(token)


def pieces_of(sql: str) -> list[str]:
    """A crude tokenizer: words with their leading space, then single characters."""
    import re

    return re.findall(r" ?[A-Za-z_]+|\s|.", sql)


def fenced(sql: str) -> list[str]:
    return ["```sql\n", *pieces_of(sql), "\n```"]


def decode(
    replies: Sequence[Sequence[str]],
    *,
    names: Sequence[str] | None,
    prompt_pieces: Sequence[str] = (),
    drafts: bool = False,
    extra: Sequence[str] = (),
) -> tuple[str, NameGuard | None, Any]:
    vocab = Vocab([p for r in replies for p in r] + list(prompt_pieces) + list(extra))
    prompt = vocab.encode(prompt_pieces) if prompt_pieces else [1]
    model = TextModel(vocab, prompt, replies)
    script = Transcript(prompt=prompt, max_tokens=200, piece=model.piece, is_eog=model.is_eog)
    guard = NameGuard(NameRules(names), model.piece) if names is not None else None
    chooser: Any = Argmax() if guard is None else ConstrainedGreedy(Argmax(), guard)
    drafter = NgramDrafter(prompt) if drafts else None
    stats = decode_greedy(model, model.first(), script, chooser, drafter, gate=OpenGate())
    return script.text.decode(), guard, stats


VALID = [
    "SELECT name FROM users",
    "SELECT T1.name, COUNT(T2.id) AS cnt FROM users AS T1 JOIN orders AS T2 "
    "ON T1.id = T2.user_id GROUP BY T1.name ORDER BY cnt DESC",
    "WITH big AS (SELECT user_id, SUM(amount) total FROM orders GROUP BY user_id) "
    "SELECT u.name, b.total FROM users u JOIN big b ON b.user_id = u.id",
    'SELECT "name" FROM "users" JOIN "Order Items" ON 1 = 1',
    "SELECT strftime('%Y', created_at) AS yr, COUNT(*) FROM orders "
    "WHERE name = 'zorglub quux' GROUP BY yr",
    "SELECT d.n FROM (SELECT COUNT(*) AS n FROM users) d WHERE d.n > 1",
    "WITH RECURSIVE cnt(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 5) "
    "SELECT x FROM cnt",
    "SELECT CASE WHEN age > 30 THEN 'old' ELSE 'young' END grp FROM users ORDER BY grp",
    "SELECT CAST(amount AS REAL) / 2, amount::numeric FROM orders WHERE name IN ('a', 'b')",
    "SELECT `name` FROM `users` WHERE id > ? -- a zorglub comment",
    "SELECT t.name FROM users t WHERE t.created_at >= DATE('now', '-7 days') LIMIT 10",
    "SELECT COALESCE(name, 'none') FROM users UNION SELECT LOWER(name) FROM users",
    # columns of a derived table, used before it is written
    "SELECT SUM(total_cost), qty FROM (SELECT amount * 2 AS total_cost, id AS qty FROM orders) s",
    # functions sqlglot does not model: SQLite's and PostgreSQL's set-returning ones
    "SELECT j.value FROM orders, json_each(orders.name) AS j",
    "SELECT e.value FROM orders CROSS JOIN LATERAL jsonb_array_elements(orders.name::jsonb) AS e",
    "SELECT regexp_split_to_table(name, ',') AS part FROM users",
]


@pytest.mark.parametrize("sql", VALID)
@pytest.mark.parametrize("drafts", [False, True], ids=["plain", "lookup"])
def test_valid_names_decode_to_the_unconstrained_reply_token_for_token(
    sql: str, drafts: bool
) -> None:
    reply = ["Here:\n", *fenced(sql), "\nzorglub"]
    prompt = pieces_of(f"Fix: {sql}")
    plain, _, _ = decode([reply], names=None, prompt_pieces=prompt, drafts=drafts)
    held, guard, stats = decode([reply], names=NAMES, prompt_pieces=prompt, drafts=drafts)
    assert plain == "".join(reply)
    assert held == plain
    assert guard is not None and guard.refused == 0 and guard.let_through == 0
    if drafts:
        assert stats.accepted > 0  # prompt lookup stayed on


@pytest.mark.parametrize(
    ("wrong", "right"),
    [
        ("SELECT name FROM users WHERE agee > 3", "SELECT name FROM users WHERE age > 3"),
        ("SELECT name FROM usres", "SELECT name FROM users"),
        (
            "SELECT u.nmae FROM users u WHERE u.nmae = 'x'",
            "SELECT u.nmae FROM users u WHERE u.name = 'x'",
        ),
        ('SELECT 1 FROM users WHERE "nmae" = 1', 'SELECT 1 FROM users WHERE "name" = 1'),
    ],
)
def test_an_invalid_name_is_refused_and_the_best_allowed_token_taken(
    wrong: str, right: str
) -> None:
    replies = [fenced(wrong), fenced(right)]
    plain, _, _ = decode(replies, names=None)
    held, guard, _ = decode(replies, names=NAMES)
    assert plain == "".join(fenced(wrong))
    assert held == "".join(fenced(right))
    assert guard is not None and guard.refused >= 1


def test_a_word_that_cannot_become_a_name_may_end_rather_than_grow_into_garbage() -> None:
    # `sign_amount` is an alias of an earlier statement: no name starts with it, and the
    # constrained decoder once refused every token that ended it (PostgreSQL_51, the 1.5B)
    meant = "SELECT sign_amount, SUM(amount) FROM orders"
    garbage = "SELECT sign_amountSUM(amount) FROM orders"
    replies = [fenced(meant), fenced(garbage)]
    held, guard, _ = decode(replies, names=NAMES)
    assert held == "".join(fenced(meant))
    assert guard is not None and guard.refused == 0


@pytest.mark.parametrize(
    ("grow", "written", "refused", "let_through"),
    [(4.0, "e", 1, 0), (-2.0, ",", 0, 1)],
    ids=["a likely growth is taken", "an unlikely one is not forced"],
)
def test_a_refused_end_is_replaced_only_by_a_token_the_model_finds_likely(
    grow: float, written: str, refused: int, let_through: int
) -> None:
    import numpy as np

    vocab = Vocab(["```sql\n", "SELECT", " nam", ",", "e"])
    guard = NameGuard(NameRules(NAMES), vocab.piece)
    for token in vocab.encode(["```sql\n", "SELECT", " nam"]):
        guard.accept(token)
    logits = np.full(len(vocab.pieces), -50.0, dtype=np.float32)
    logits[vocab.ids[","]] = 5.0  # `nam` is no name, but a prefix of `name`
    logits[vocab.ids["e"]] = grow
    token = ConstrainedGreedy(Argmax(), guard).choose(logits)
    assert vocab.pieces[token] == written
    assert (guard.refused, guard.let_through) == (refused, let_through)


def test_a_draft_is_cut_at_the_token_the_constraint_refuses() -> None:
    wrong = "SELECT name FROM users WHERE agee > 3 ORDER BY name"
    right = "SELECT name FROM users WHERE age > 3 ORDER BY name"
    prompt = pieces_of(f"Fix: {wrong} ;")
    replies = [fenced(wrong), fenced(right)]
    plain, _, plain_stats = decode(replies, names=None, prompt_pieces=prompt, drafts=True)
    held, guard, stats = decode(replies, names=NAMES, prompt_pieces=prompt, drafts=True)
    assert plain == "".join(fenced(wrong))
    assert held == "".join(fenced(right))
    assert guard is not None and guard.refused == 1
    # the draft copied "ee" from the prompt; it was not accepted
    assert stats.accepted < plain_stats.accepted
    assert stats.accepted > 0


def test_text_outside_the_sql_block_is_never_constrained() -> None:
    reply = ["nmae usres zorglub ", *fenced("SELECT name FROM users"), " agee"]
    held, guard, _ = decode([reply], names=NAMES)
    assert held == "".join(reply)
    assert guard is not None and guard.refused == 0


def test_samples_are_held_to_the_names() -> None:
    import numpy as np

    vocab = Vocab(["```sql\n", "SELECT", " name", " FROM", " users", " usres"])
    logits = np.full(len(vocab.pieces), -50.0, dtype=np.float32)
    logits[vocab.ids[" usres"]] = 5.0
    logits[vocab.ids[" users"]] = 4.9

    def guard() -> NameGuard:
        held = NameGuard(NameRules(NAMES), vocab.piece)
        for token in vocab.encode(["```sql\n", "SELECT", " name", " FROM"]):
            held.accept(token)
        return held

    drawn = {
        ConstrainedSample(SampleChooser(1.0, seed), guard()).choose(logits) for seed in range(12)
    }
    free = {SampleChooser(1.0, seed).choose(logits) for seed in range(12)}
    assert free == {vocab.ids[" usres"], vocab.ids[" users"]}
    assert drawn == {vocab.ids[" users"]}

    # an allowed token outside the sampling distribution is not forced: the draw stays
    logits[vocab.ids[" users"]] = -40.0
    guards = [guard() for _ in range(4)]
    kept = {
        ConstrainedSample(SampleChooser(1.0, k), g).choose(logits) for k, g in enumerate(guards)
    }
    assert kept == {vocab.ids[" usres"]}
    assert [(g.refused, g.let_through) for g in guards] == [(0, 1)] * 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Here:\n```sql\nSELECT a", ("SELECT a", False)),
        ("```SQL\nSELECT a\n```\nmore", ("SELECT a\n", True)),
        ("```sql\nSELECT a\n``", ("SELECT a\n", False)),
        ("no block `x`", None),
        ("```python\nx = 1", None),
    ],
)
def test_the_sql_of_a_text_reply_is_its_last_sql_block(
    text: str, expected: tuple[str, bool] | None
) -> None:
    span = fenced_sql(text)
    if expected is None:
        assert span is None
    else:
        assert span is not None
        start, end, closed = span
        assert (text[start:end], closed) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"sql": "SELECT \\"na', ('SELECT "na', False)),
        ('{"sql": "SELECT a\\nFROM t", "why": "x"}', ("SELECT a\nFROM t", True)),
        ('{"sql": "SELECT \\', ("SELECT ", False)),
        ('{"why": "usres"}', None),
    ],
)
def test_the_sql_of_a_json_reply_is_its_sql_string_unescaped(
    text: str, expected: tuple[str, bool] | None
) -> None:
    found = json_sql(text, ["sql"])
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert (found[1], found[3]) == expected


def test_a_json_sql_field_is_constrained_with_escapes_resolved() -> None:
    guard = NameGuard(NameRules(NAMES), lambda t: b"", ["sql"])
    assert guard.allows_text('{"sql": "SELECT \\"na', '{"sql": "SELECT \\"name\\" FROM')
    before = '{"sql": "SELECT 1 FROM users WHERE \\"nm'
    assert not guard.allows_text(before, before + 'ae\\" = 1')
    assert not guard.allows_text('{"sql": "SELECT name FROM usr', '{"sql": "SELECT name FROM usr"')
    assert guard.allows_text('{"sql": "SELECT 1", "why": "', '{"sql": "SELECT 1", "why": "usr')


def test_the_cache_key_covers_the_names_for_a_local_backend_only() -> None:
    from acts_sql.llm.base import LLMRequest, Message, SqlNames
    from acts_sql.llm.cache import request_key

    free = LLMRequest(purpose="correct", messages=[Message(role="user", content="x")])
    held = free.model_copy(update={"sql_names": SqlNames(names=["users"])})
    assert request_key("local:qwen", free) != request_key("local:qwen", held)
    assert request_key("openai:gpt", free) == request_key("openai:gpt", held)


# -- the real model (slow) --------------------------------------------------------------

SLOW_SCHEMA = ["users", "id", "name", "age", "orders", "user_id", "amount"]


def _real_request(sql: str, names: list[str] | None) -> Any:
    from acts_sql.llm.base import LLMRequest, Message, SqlNames

    return LLMRequest(
        purpose="correct",
        messages=[
            Message(
                role="user",
                content="Tables: users(id, name, age), orders(id, user_id, amount).\n"
                f"Repeat this SQLite query exactly, in one ```sql block:\n{sql}",
            )
        ],
        max_tokens=80,
        sql_names=SqlNames(names=names) if names is not None else None,
    )


def _real_model_ready() -> bool:
    from acts_sql.llm.local import llama_cpp_available
    from acts_sql.llm.models import model_available

    return llama_cpp_available() and model_available("qwen2.5-coder-0.5b", search_paths=None)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(not _real_model_ready(), reason="needs llama-cpp-python and the 0.5B model")
def test_the_real_model_writes_the_same_valid_sql_and_cannot_write_a_wrong_name() -> None:
    from acts_sql.llm.local import LocalBackend

    backend = LocalBackend("qwen2.5-coder-0.5b", prompt_lookup=True)
    valid = (
        "SELECT u.name, SUM(o.amount) AS total FROM users u "
        "JOIN orders o ON o.user_id = u.id GROUP BY u.name"
    )
    free = backend.complete(_real_request(valid, None))
    backend.reset_prompt_cache()
    held = backend.complete(_real_request(valid, SLOW_SCHEMA))
    assert valid in free.text
    assert held.text == free.text
    assert held.usage.constrained and held.usage.refused_tokens == 0
    wrong = "SELECT name FROM users WHERE agee > 30"
    backend.reset_prompt_cache()
    free = backend.complete(_real_request(wrong, None))
    backend.reset_prompt_cache()
    held = backend.complete(_real_request(wrong, SLOW_SCHEMA))
    assert "agee" in free.text
    assert "agee" not in held.text and held.usage.refused_tokens >= 1
