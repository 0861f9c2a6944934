"""llm.local.steering: a reply that repeats a dropped SQL is forked away from it.

A stand-in model (`TreeModel`) gives fixed logits for each reply prefix, so
where the decoder forks, and what it writes after, can be checked exactly.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from acts_sql.llm.base import AvoidValues, LLMRequest, Message
from acts_sql.llm.local import call
from acts_sql.llm.local.decoder import Argmax
from acts_sql.llm.local.guards import RepetitionGuard, Stops
from acts_sql.llm.local.lookup import NgramDrafter
from acts_sql.llm.local.steering import (
    MAX_FORKS,
    Step,
    ValueWatch,
    decoded,
    fork_point,
    normalized,
    value_span,
)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numpy") is None,
    reason="the project's decoder reads logit rows as numpy arrays (the local extra brings it)",
)

EOG = 0
PIECES = [
    "<eog>",
    '{"sql": "',  # 1
    "SELECT a",  # 2
    " FROM t",  # 3
    " FROM u",  # 4
    '"}',  # 5
    '"',  # 6: ends the string early
    " FROM v",  # 7
    "SELECT b",  # 8
    " WHERE x",  # 9
]
PROMPT = [8, 9, 2, 3]  # "SELECT b WHERE x SELECT a FROM t": drafts can copy from it


class TreeModel:
    """Logits by reply prefix: ``{prefix: {token: logit}}``; any other prefix ends."""

    def __init__(self, tree: dict[tuple[int, ...], dict[int, float]]) -> None:
        self.tree = tree
        self.ids: list[int] = []
        self.evaluated = 0

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    def _row(self) -> Any:
        import numpy as np

        row = np.full(len(PIECES), -20.0, dtype=np.float32)
        for token, logit in self.tree.get(tuple(self.ids[len(PROMPT) :]), {EOG: 10.0}).items():
            row[token] = logit
        return row

    def truncate(self, n_tokens: int) -> None:
        del self.ids[n_tokens:]

    def evaluate_prompt(self, tokens: list[int], deadline: float | None) -> Any:
        import numpy as np

        self.ids += tokens
        self.evaluated += len(tokens)
        return np.stack([self._row()])

    def decode(self, tokens: list[int]) -> Any:
        import numpy as np

        rows = []
        for token in tokens:
            self.ids.append(token)
            self.evaluated += 1
            rows.append(self._row())
        return np.stack(rows)

    def is_eog(self, token: int) -> bool:
        return token == EOG

    def piece(self, token: int) -> bytes:
        return PIECES[token].encode()


# The model's favourite reply is SELECT a FROM t. Least sure after "SELECT a"
# (FROM t 5.0 against FROM u 4.5); sure of "SELECT a" itself (9 against 6).
FAVOURITE = {
    (): {1: 10.0},
    (1,): {2: 9.0, 8: 6.0},
    (1, 2): {3: 5.0, 4: 4.5, 9: 1.0},
    (1, 2, 3): {5: 10.0},
    (1, 2, 4): {5: 10.0},
    (1, 2, 9): {5: 10.0},
    (1, 8): {3: 10.0},
    (1, 8, 3): {5: 10.0},
}


def _write(
    tree: dict[tuple[int, ...], dict[int, float]],
    avoid: list[str] | None,
    *,
    chooser: Any = None,
    lookup: bool = True,
) -> tuple[str, call._Written, TreeModel]:
    model = TreeModel(tree)
    request = LLMRequest(
        purpose="generate_sql",
        messages=[Message(role="user", content="-")],
        avoid=AvoidValues(values=avoid) if avoid is not None else None,
    )
    guard = RepetitionGuard(len(PROMPT))
    prepared = call._Call(
        request=request,
        name="tree",
        prompt=list(PROMPT),
        formatted=SimpleNamespace(stop=None),
        limit=32,
        cached=0,
        guard=guard,
        clock=None,
        stops=Stops([guard]),
        grammar=None,
        deadline=None,
        started=time.perf_counter(),
        threads=1,
    )
    loaded = call.LoadedModel(None, Path("tree.gguf"), 0.0, lambda **_: None, 1)
    written = loaded._run_project(
        prepared,
        model,
        (lambda attempt: chooser if chooser is not None else Argmax()),
        (lambda: NgramDrafter(PROMPT)) if lookup else None,
        False,
        "lookup",
    )
    return written.text, written, model


def test_without_values_to_avoid_the_reply_is_the_greedy_one():
    for avoid in (None, []):
        text, written, _ = _write(FAVOURITE, avoid)
        assert text == '{"sql": "SELECT a FROM t"}'
        assert written.steered == 0 and written.completion_tokens == 4


def test_a_reply_that_repeats_a_value_forks_where_the_model_was_least_sure():
    text, written, _ = _write(FAVOURITE, ["select a   from T;"])
    assert text == '{"sql": "SELECT a FROM u"}'  # FROM u: the runner-up where the gap was 0.5
    assert written.steered == 1
    # 4 tokens up to the repeated value's end, then FROM u and the end written anew
    assert written.completion_tokens == 4 + 2


def test_forking_keeps_what_the_kv_cache_holds_before_the_fork():
    _, _, model = _write(FAVOURITE, ["SELECT a FROM t"], lookup=False)
    # prompt 4 + first reply (3 evaluated before the value closed) + FROM u and "} again
    assert model.evaluated == len(PROMPT) + 3 + 2


def test_a_second_repeat_forks_again_and_then_the_reply_is_left_as_it_is():
    text, written, _ = _write(FAVOURITE, ["SELECT a FROM t", "SELECT a FROM u"])
    # not the third choice after "SELECT a" (4 below): "SELECT b" was only 3 below
    assert text == '{"sql": "SELECT b FROM t"}' and written.steered == 2
    everything = ["SELECT a FROM t", "SELECT a FROM u", "SELECT a WHERE x", "SELECT b FROM t"]
    text, written, _ = _write(FAVOURITE, everything)
    assert written.steered == MAX_FORKS
    assert normalized(decoded(text.encode()[9:-2])) in {normalized(v) for v in everything}
    assert text.endswith('"}')  # the last attempt is written to its end


def test_a_fork_never_ends_the_string_early():
    tree = dict(FAVOURITE)
    tree[(1, 2)] = {3: 5.0, 6: 4.9}  # the runner-up closes the string: SQL cut short
    text, written, _ = _write(tree, ["SELECT a FROM t"])
    assert text == '{"sql": "SELECT b FROM t"}'  # forked at the next least sure token instead
    assert written.steered == 1


class Refusing(Argmax):
    """A grammar that refuses some tokens."""

    def __init__(self, refused: set[int]) -> None:
        self.refused = refused

    def allows(self, token: int, logit: float) -> bool:
        return token not in self.refused


def test_a_fork_takes_only_a_token_the_grammar_allows():
    text, _, _ = _write(FAVOURITE, ["SELECT a FROM t"], chooser=Refusing({4}))
    assert text == '{"sql": "SELECT a WHERE x"}'  # FROM u refused: the next best there


def test_value_span_finds_the_string_once_it_is_closed():
    assert value_span(b'{"sql": "SELECT 1', b"sql") is None
    text = b'{"rationale": "x", "sql" : "SELECT \\"A\\" FROM t", "b": 1}'
    start, end = value_span(text, b"sql") or (0, 0)
    assert decoded(text[start:end]) == 'SELECT "A" FROM t'
    assert value_span(b'{"other": "SELECT 1"}', b"sql") is None


def test_the_watch_stops_at_a_repeat_and_only_there():
    written = {"text": b""}
    watch = ValueWatch("sql", ["SELECT 1;"], lambda: written["text"])
    written["text"] = b'{"sql": "select'
    assert not watch(None, None)
    written["text"] = b'{"sql": "select  1"'
    assert watch(None, None) and watch.span == (9, 18)
    other = ValueWatch("sql", ["SELECT 1"], lambda: b'{"sql": "SELECT 2"')
    assert not other(None, None) and other.done and other.span is None


def test_the_fork_point_is_the_smallest_margin_inside_the_value():
    pieces = {1: b'{"sql": "', 2: b"SELECT", 3: b" 1", 4: b'"', 5: b" 2"}
    steps = [
        Step(1, 10.0, ((7, 0.0),)),  # before the value: never forked
        Step(2, 9.0, ((5, 8.5),)),
        Step(3, 9.0, ((5, 5.0),)),
        Step(4, 9.0, ((5, 8.9),)),  # the closing quote: never forked
    ]

    def fork(tried: set[int], chosen: list[Step] = steps) -> tuple[int, int] | None:
        found = fork_point(
            chosen, [1, 2, 3, 4], (9, 17), pieces.__getitem__, lambda _: Argmax(), tried, never
        )
        return None if found is None else (found.position, found.token)

    assert fork(set()) == (1, 5)
    assert fork({1}) == (2, 5)
    # a token far less likely than the chosen one is no place to fork
    sure = [steps[0], Step(2, 9.0, ((5, 2.0),)), Step(3, 9.0, ((5, 2.9),)), steps[3]]
    assert fork(set(), sure) is None


def never(token: int) -> bool:
    return False


class RecordingGrammar:
    def __init__(self) -> None:
        self.accepted: list[int] = []

    def accept(self, token: int) -> None:
        self.accepted.append(token)

    def allows(self, token: int, logit: float) -> bool:
        return token != 3


def test_a_sample_forked_away_keeps_its_grammar_in_step():
    """A sampled reply is forked too: the forced tokens advance its grammar, which is asked
    about the token the fork would take."""
    from acts_sql.llm.local.sampling import SampleChooser

    grammar = RecordingGrammar()
    chooser = SampleChooser(0.8, 11, grammar)  # type: ignore[arg-type]
    chooser.accept(5)
    chooser.accept(7)
    assert grammar.accepted == [5, 7]
    assert chooser.allows(4, 1.0) and not chooser.allows(3, 1.0)
    assert SampleChooser(0.8, 11).allows(3, 1.0)  # no grammar: anything goes
