"""Measures the embedded local model (llama.cpp in process) on this machine.

1. Load: assembling the GGUF from its part packages (first run only) and
   loading it.
2. Prompt processing, synthetic: a prompt whose first PREFIX tokens (the real
   system message, then schema DDL) are shared and whose last TAIL tokens
   differ. Cold: the KV cache is emptied first. Cached: the same prefix was
   the previous call's. Rates are prompt tokens per second of prompt
   evaluation (llama.cpp's own counters); the speed-up compares the cached
   call with a cold call of the same length.
3. The engine's real prompts: the calls of the Section 5.4 demo correction
   (captured by replaying its script), run in order after an empty cache,
   each with one generated token: how many prompt tokens each reuses.
4. Generation: tokens per second written, free text and JSON constrained by
   a schema (grammar).
5. With --demo: ``acts-sql demo``'s corrections with the model (the demo's
   budget), wall time and LLM calls per task.

With --prompt-lookup, only this: the SQL-copying prompts of
scripts/data/lookup_prompts.json (rendered with the engine's templates),
each answered greedily with prompt lookup off (llama-cpp-python's loop) and
on, in the same run, both from the same cached prompt (a one-token call
evaluates it first); generation time only. --json prints one JSON object;
--out FILE keeps one JSON line per prompt (with `parted_at_char`, where the
two replies first differ) and, run again, skips the prompts already in it
(resumable). --lean adds a third answer, the project's decoder with every draft
refused (one token a step): `seconds_lean`, and `ratio_drafts` (lean over on,
per token), what the drafts add to the leaner loop.

With --sampling, only this: the same prompts, each answered greedily (not
timed: it evaluates the prompt), then sampled --samples times at
--temperature by llama-cpp-python's loop (``ACTS_SQL_SAMPLER=llama-cpp``, its
sampler applies the JSON grammar to the whole vocabulary) and as many times
by the project's decoder (the grammar asked about the drawn token only), the
same seeds in both. Per sampler: tokens written, generation seconds, tokens
per second, distinct replies, replies the engine reads a JSON object from, replies equal to
the greedy one; `ratio` is the project's tokens per second over
llama-cpp-python's. --json and --out as above.

The machine has 2 cores and is shared: the load average is printed first;
numbers taken while other jobs run are slower (llama.cpp's threads wait for
each other when a core is taken).

    .venv/bin/python scripts/bench_local_llm.py [--model qwen2.5-coder-0.5b]
        [--repeat 3] [--prefix-tokens 1500] [--tail-tokens 200] [--demo]
    .venv/bin/python scripts/bench_local_llm.py --prompt-lookup --json [--lean]
        [--model qwen2.5-coder-1.5b] [--offset N] [--limit N] [--out results.jsonl]
    .venv/bin/python scripts/bench_local_llm.py --sampling --json [--samples 3]
        [--temperature 0.8] [--model ...] [--limit N] [--out results.jsonl]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acts_sql import Budget, CorrectionOptions, correct, prompts
from acts_sql.cli.demo import LIVE_MAX_LLM_CALLS, LIVE_MAX_SECONDS, script_path
from acts_sql.demo import demo_db_path, load_tasks
from acts_sql.llm.base import LLMRequest, LLMResponse, Message
from acts_sql.llm.jsonrepair import JsonExtractionError, extract_json
from acts_sql.llm.local import CallStats, LocalBackend
from acts_sql.llm.local.call import LoadedModel
from acts_sql.llm.local.lookup import DraftGate
from acts_sql.llm.models import ProgressEvent
from acts_sql.llm.prompting import render
from acts_sql.llm.scripted import ScriptedBackend
from acts_sql.prompts.context import TaskContext, system_message, task_messages
from acts_sql.protocol import Decomposition, GeneratedSql, RepairedSql
from acts_sql.tools.registry import tool_list

LOOKUP_PROMPTS = Path(__file__).with_name("data") / "lookup_prompts.json"

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"sql": {"type": "string"}, "rationale": {"type": "string"}},
    "required": ["sql", "rationale"],
}


class Recorder:
    """Keeps the requests an engine run makes (answered by a scripted backend)."""

    def __init__(self, inner: ScriptedBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return self.inner.complete(request)


def count_tokens(backend: LocalBackend, messages: list[Message]) -> int:
    backend.complete(LLMRequest(purpose="count", messages=messages, max_tokens=1))
    assert backend.last_call is not None
    return backend.last_call.prompt_tokens


def synthetic_messages(prefix_lines: int, tail: str) -> list[Message]:
    ddl = "\n".join(
        f"CREATE TABLE sales_{i} (id INTEGER PRIMARY KEY, store_id INTEGER, product_id INTEGER, "
        f"quantity INTEGER, unit_price REAL, sold_at TEXT);"
        for i in range(prefix_lines)
    )
    system = system_message(tool_list())
    return [system, Message(role="user", content=f"Schema:\n{ddl}\n\n{tail}")]


def tail_text(words: int, seed: int) -> str:
    topics = ["monthly sales", "top stores", "returns", "price changes", "late orders"]
    body = " ".join(f"{topics[(seed + i) % len(topics)]} {i}" for i in range(words // 3))
    return f"Step {seed}: consider {body}. Reply with JSON."


def call(backend: LocalBackend, messages: list[Message], **fields: Any) -> CallStats:
    backend.complete(LLMRequest(purpose="bench", messages=messages, **fields))
    assert backend.last_call is not None
    return backend.last_call


def bench_prompt(backend: LocalBackend, prefix_tokens: int, tail_tokens: int, repeat: int) -> None:
    lines = 1
    while count_tokens(backend, synthetic_messages(lines, "")) < prefix_tokens:
        lines += 4
    prefix = count_tokens(backend, synthetic_messages(lines, ""))
    cold_rates, warm_rates, speedups, cached, warm_lengths = [], [], [], [], []
    threads: list[int] = []
    for run in range(repeat):
        backend.reset_prompt_cache()
        cold = call(
            backend, synthetic_messages(lines, tail_text(tail_tokens, 2 * run)), max_tokens=1
        )
        warm = call(
            backend, synthetic_messages(lines, tail_text(tail_tokens, 2 * run + 1)), max_tokens=1
        )
        cold_rate = cold.evaluated_prompt_tokens / cold.prompt_seconds
        cold_rates.append(cold_rate)
        warm_rates.append(warm.prompt_tokens / warm.prompt_seconds)
        speedups.append((warm.prompt_tokens / cold_rate) / warm.prompt_seconds)
        cached.append(warm.cached_prompt_tokens)
        warm_lengths.append(warm.prompt_tokens)
        threads += [cold.threads, warm.threads]
    print(f"\n## prompt processing: {prefix}-token shared prefix, ~{tail_tokens}-token tails")
    print(f"cold:   {statistics.median(cold_rates):7.1f} prompt tokens/s")
    print(
        f"cached: {statistics.median(warm_rates):7.1f} prompt tokens/s effective "
        f"({statistics.median(cached):.0f} of {statistics.median(warm_lengths):.0f} tokens "
        "reused)"
    )
    print(f"speed-up of the cached call over a cold one: {statistics.median(speedups):.1f}x")
    print(f"threads used: {sorted(set(threads))}")


def bench_engine_prompts(backend: LocalBackend) -> None:
    task = next(t for t in load_tasks() if t.id == "case_5_4")
    recorder = Recorder(ScriptedBackend.from_file(script_path(task.id)))
    correct(f"sqlite:///{demo_db_path()}", task.question, task.sql, llm=recorder)
    backend.reset_prompt_cache()
    print(f"\n## the engine's prompts, Section 5.4 correction ({len(recorder.requests)} calls)")
    print(f"{'purpose':20} {'prompt':>6} {'cached':>6} {'evaluated':>9} {'prompt s':>8}")
    total_prompt = total_evaluated = 0
    seconds = 0.0
    for request in recorder.requests:
        stats = call(backend, request.messages, max_tokens=1)
        total_prompt += stats.prompt_tokens
        total_evaluated += stats.evaluated_prompt_tokens
        seconds += stats.prompt_seconds
        print(
            f"{request.purpose:20} {stats.prompt_tokens:>6} {stats.cached_prompt_tokens:>6} "
            f"{stats.evaluated_prompt_tokens:>9} {stats.prompt_seconds:>8.2f}"
        )
    print(
        f"total: {total_prompt} prompt tokens, {total_evaluated} evaluated "
        f"({100 * (1 - total_evaluated / total_prompt):.0f}% reused), {seconds:.1f} s"
    )


def bench_generation(backend: LocalBackend, tokens: int, repeat: int) -> None:
    free = [
        Message(
            role="user",
            content="Write a long SQL tutorial for beginners with many example queries.",
        )
    ]
    constrained = [
        Message(
            role="user",
            content="Explain in detail, with a long rationale, how to find the top 3 products "
            "by monthly sales in SQLite. Reply as JSON with keys sql and rationale.",
        )
    ]
    print(f"\n## generation (up to {tokens} tokens)")
    for label, messages, schema in (
        ("free text", free, None),
        ("JSON schema", constrained, ANSWER_SCHEMA),
    ):
        rates, written, threads = [], [], set()
        for _ in range(repeat):
            backend.reset_prompt_cache()
            stats = call(backend, messages, max_tokens=tokens, json_schema=schema)
            rates.append(stats.completion_tokens / stats.generation_seconds)
            written.append(stats.completion_tokens)
            threads.add(stats.threads)
        print(
            f"{label:12} {statistics.median(rates):6.1f} tokens/s "
            f"({statistics.median(written):.0f} tokens written, threads {sorted(threads)})"
        )


def bench_demo(backend: LocalBackend, max_llm_calls: int, max_seconds: float) -> None:
    print(f"\n## acts-sql demo with {backend.name} ({max_llm_calls} calls, {max_seconds:g} s max)")
    print(
        f"{'task':10} {'accepted':>8} {'calls':>5} {'prompt':>7} {'cached':>7} "
        f"{'written':>7} {'wall s':>7}"
    )
    for task in load_tasks():
        started = time.perf_counter()
        result = correct(
            f"sqlite:///{demo_db_path()}",
            task.question,
            task.sql,
            llm=backend,
            options=CorrectionOptions(
                budget=Budget(max_llm_calls=max_llm_calls, max_seconds=max_seconds)
            ),
        )
        usage = result.usage
        print(
            f"{task.id:10} {result.accepted!s:>8} {usage.llm_calls:>5} {usage.prompt_tokens:>7} "
            f"{usage.cached_prompt_tokens:>7} {usage.completion_tokens:>7} "
            f"{time.perf_counter() - started:>7.1f}"
        )


def lookup_request(item: dict[str, Any], schema_text: str, max_tokens: int) -> LLMRequest:
    """One prompt of the set as the engine would send it (system, task block, tail)."""
    task = TaskContext(
        dialect=item["dialect"],
        question=item["issue"],
        original_sql=item["sql"],
        schema_text=schema_text,
        tool_list=tool_list(),
    )
    purpose = item["purpose"]
    if purpose == "generate_sql":
        values = {
            "path": "(nothing executed yet)",
            "hypothesis": "(none: use the most natural reading of the issue)",
            "notes": "(none)",
        }
        model: type[Any] = GeneratedSql
    elif purpose == "fix_syntax":
        values = {
            "statement": item["sql"],
            "error": item["error"],
            "names": "(none)",
            "units": "(no units)",
            "reading": "(not parsed)",
            "notes": "(none)",
        }
        model = RepairedSql
    else:
        values = {"statement": item["sql"]}
        model = Decomposition
    tail = render(prompts.template(f"{purpose}.txt"), **values)
    return LLMRequest(
        purpose=purpose,
        messages=task_messages(task, tail),
        json_schema=model.model_json_schema(),
        max_tokens=max_tokens,
    )


class _NeverDraft(DraftGate):
    """A draft gate that refuses every draft: the project's decoder, one token a step."""

    def length(self, fresh: bool, most: int) -> int:
        return 0


@contextlib.contextmanager
def no_drafts() -> Iterator[None]:
    """Within it, the local backend's lookup decoder writes without drafting (``--lean``)."""
    original = LoadedModel.draft_gate
    LoadedModel.draft_gate = lambda self, threads: _NeverDraft()  # type: ignore[method-assign]
    try:
        yield
    finally:
        LoadedModel.draft_gate = original  # type: ignore[method-assign]


def lookup_lean(on: LocalBackend, request: LLMRequest, plain_text: str) -> dict[str, Any]:
    """The prompt answered by the project's decoder without drafts (from an empty cache)."""
    on.reset_prompt_cache()
    with no_drafts():
        lean = on.complete(request)
    stats = on.last_call
    assert stats is not None
    return {
        "completion_tokens_lean": stats.completion_tokens,
        "seconds_lean": round(stats.generation_seconds, 3),
        "identical_lean": lean.text == plain_text,
    }


def lookup_one(
    off: LocalBackend, on: LocalBackend, request: LLMRequest, lean: bool = False
) -> dict[str, Any]:
    """The prompt answered with lookup off, then on (and, with `lean`, without
    drafts), each from an empty KV cache.

    A reply depends on what the cache held before, not only on its tokens: the
    same request answered twice in a row by llama-cpp-python's loop, the prompt
    cached, can part (measured on `gen_self_join` with the 0.5B model), and a
    cold prompt's last token is evaluated in a batch where a cached one is
    evaluated alone. So every mode starts empty and evaluates the prompt the
    same way; the seconds compared are generation only."""
    off.reset_prompt_cache()
    plain = off.complete(request)
    first = off.last_call
    on.reset_prompt_cache()
    looked = on.complete(request)
    second = on.last_call
    assert first is not None and second is not None
    row = {
        "purpose": request.purpose,
        "prompt_tokens": first.prompt_tokens,
        "completion_tokens": second.completion_tokens,
        "completion_tokens_off": first.completion_tokens,
        "seconds_off": round(first.generation_seconds, 3),
        "seconds_on": round(second.generation_seconds, 3),
        "identical": plain.text == looked.text
        and first.completion_tokens == second.completion_tokens,
        "parted_at_char": _parted_at(plain.text, looked.text),
        "drafted": second.drafted_tokens,
        "accepted": second.accepted_tokens,
        "steps": second.decode_steps,
        "threads": [first.threads, second.threads],
    }
    if lean:
        row.update(lookup_lean(on, request, plain.text))
    return row


def _parted_at(first: str, second: str) -> int | None:
    """Where two replies first differ (a character offset); None when they are equal."""
    if first == second:
        return None
    return next(
        (i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b),
        min(len(first), len(second)),
    )


def chosen_prompts(prompts: list[Any], offset: int, limit: int) -> list[Any]:
    """The prompts from the `offset`-th on, at most `limit` of them (0: all)."""
    rest = prompts[offset:]
    return rest[:limit] if limit else rest


def bench_prompt_lookup(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(LOOKUP_PROMPTS.read_text())
    items = chosen_prompts(data["prompts"], args.offset, args.limit)
    done = _resumed(args)
    off = LocalBackend(args.model, prompt_lookup=False)
    on = LocalBackend(args.model, prompt_lookup=True)
    off.load()
    for item in items:
        if item["id"] in done:
            continue
        request = lookup_request(item, data["schema"], args.gen_tokens)
        row = {"id": item["id"], "model": args.model, **lookup_one(off, on, request, args.lean)}
        _keep(args, done, row)
    rows = [done[item["id"]] for item in items]
    seconds_off = sum(r["seconds_off"] for r in rows)
    seconds_on = sum(r["seconds_on"] for r in rows)
    tokens_on = sum(r["completion_tokens"] for r in rows)
    tokens_off = sum(r["completion_tokens_off"] for r in rows)
    drafted = sum(r["drafted"] for r in rows)
    return {
        "model": args.model,
        "prompts": len(rows),
        "completion_tokens": tokens_on,
        "completion_tokens_off": tokens_off,
        "seconds_off": round(seconds_off, 2),
        "seconds_on": round(seconds_on, 2),
        # per token: where a near-tie makes the replies differ, their lengths differ too
        "ratio": round((seconds_off / tokens_off) / (seconds_on / tokens_on), 3)
        if seconds_on and tokens_off
        else None,
        "identical": all(r["identical"] for r in rows),
        "identical_prompts": sum(r["identical"] for r in rows),
        "accepted_draft_share": round(sum(r["accepted"] for r in rows) / drafted, 3)
        if drafted
        else None,
        "decode_steps": sum(r["steps"] for r in rows),
        **_lean_summary(rows, seconds_on / tokens_on if tokens_on else 0.0),
        "threads": sorted({t for r in rows for t in r["threads"]}),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _lean_summary(rows: list[dict[str, Any]], on_per_token: float) -> dict[str, Any]:
    """With --lean: the project's decoder without drafts, and what the drafts add to it."""
    if not rows or any("seconds_lean" not in r for r in rows):
        return {}
    seconds = sum(r["seconds_lean"] for r in rows)
    tokens = sum(r["completion_tokens_lean"] for r in rows)
    return {
        "completion_tokens_lean": tokens,
        "seconds_lean": round(seconds, 2),
        # per token, as `ratio`: lean over on, what the drafts add to the lean loop
        "ratio_drafts": round((seconds / tokens) / on_per_token, 3)
        if tokens and on_per_token
        else None,
        "identical_lean_prompts": sum(r["identical_lean"] for r in rows),
    }


SAMPLERS = ("llama-cpp", "project")


def sampling_one(
    backends: dict[str, LocalBackend], request: LLMRequest, samples: int, temperature: float
) -> dict[str, Any]:
    """The prompt answered greedily, then `samples` draws by each sampler (same seeds)."""
    greedy = backends["project"].complete(request).text
    row: dict[str, Any] = {"purpose": request.purpose}
    for sampler in SAMPLERS:
        texts, tokens, seconds = [], 0, 0.0
        for seed in range(1, samples + 1):
            draw = request.model_copy(update={"temperature": temperature, "seed": seed})
            texts.append(backends[sampler].complete(draw).text)
            stats = backends[sampler].last_call
            assert stats is not None
            tokens += stats.completion_tokens
            seconds += stats.generation_seconds
        row[sampler] = {
            "completion_tokens": tokens,
            "seconds": round(seconds, 3),
            "distinct": len(set(texts)),
            "json_ok": sum(_parses(text) for text in texts),
            "same_as_greedy": sum(text == greedy for text in texts),
        }
    return row


def _parses(text: str) -> bool:
    """Whether the engine reads a JSON object out of the reply (raw newlines in strings allowed)."""
    try:
        extract_json(text)
    except JsonExtractionError:
        return False
    return True


def bench_sampling(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(LOOKUP_PROMPTS.read_text())
    items = chosen_prompts(data["prompts"], args.offset, args.limit)
    done = _resumed(args)
    backends = {
        "llama-cpp": LocalBackend(args.model, project_sampler=False),
        "project": LocalBackend(args.model, project_sampler=True),
    }
    backends["project"].load()
    for item in items:
        if item["id"] in done:
            continue
        request = lookup_request(item, data["schema"], args.gen_tokens)
        row = {
            "id": item["id"],
            "model": args.model,
            **sampling_one(backends, request, args.samples, args.temperature),
        }
        _keep(args, done, row)
    rows = [done[item["id"]] for item in items]
    result: dict[str, Any] = {
        "model": args.model,
        "prompts": len(rows),
        "samples_per_prompt": args.samples,
        "temperature": args.temperature,
    }
    for sampler in SAMPLERS:
        tokens = sum(r[sampler]["completion_tokens"] for r in rows)
        seconds = sum(r[sampler]["seconds"] for r in rows)
        result[sampler] = {
            "completion_tokens": tokens,
            "seconds": round(seconds, 2),
            "tokens_per_s": round(tokens / seconds, 2) if seconds else None,
            **{
                key: sum(r[sampler][key] for r in rows)
                for key in ("distinct", "json_ok", "same_as_greedy")
            },
        }
    stock, ours = result["llama-cpp"]["tokens_per_s"], result["project"]["tokens_per_s"]
    result["ratio"] = round(ours / stock, 3) if stock and ours else None
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return result


def _resumed(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The rows of --out already written for this model."""
    done: dict[str, dict[str, Any]] = {}
    out = Path(args.out) if args.out else None
    if out is not None and out.exists():
        for line in out.read_text().splitlines():
            row = json.loads(line)
            if row.get("model") == args.model:
                done[row["id"]] = row
    return done


def _keep(args: argparse.Namespace, done: dict[str, dict[str, Any]], row: dict[str, Any]) -> None:
    done[row["id"]] = row
    if args.out:
        with Path(args.out).open("a") as handle:
            handle.write(json.dumps(row) + "\n")
    if not args.json:
        print(json.dumps(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--prefix-tokens", type=int, default=1500)
    parser.add_argument("--tail-tokens", type=int, default=200)
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--demo", action="store_true", help="also time the demo's corrections")
    parser.add_argument("--max-llm-calls", type=int, default=LIVE_MAX_LLM_CALLS)
    parser.add_argument("--max-seconds", type=float, default=LIVE_MAX_SECONDS)
    parser.add_argument(
        "--prompt-lookup", action="store_true", help="only: prompt lookup off vs on, same run"
    )
    parser.add_argument(
        "--lean",
        action="store_true",
        help="with --prompt-lookup: also the project's decoder without drafts",
    )
    parser.add_argument(
        "--sampling", action="store_true", help="only: llama-cpp-python's sampler vs the project's"
    )
    parser.add_argument("--samples", type=int, default=3, help="draws per prompt and sampler")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--limit", type=int, default=0, help="the first N prompts only")
    parser.add_argument(
        "--offset", type=int, default=0, help="skip the first N prompts (with --limit: a slice)"
    )
    parser.add_argument("--out", help="JSON lines per prompt; resumes from it")
    args = parser.parse_args()
    if args.lean and not args.prompt_lookup:
        parser.error("--lean goes with --prompt-lookup")
    if args.prompt_lookup or args.sampling:
        if args.gen_tokens == 128:
            args.gen_tokens = 400  # whole answers: a copied statement is 100-300 tokens
        result = bench_sampling(args) if args.sampling else bench_prompt_lookup(args)
        print(json.dumps(result) if args.json else json.dumps(result, indent=2))
        return

    load = os.getloadavg()
    print(f"# local model benchmark: {args.model}, {os.cpu_count()} CPU(s)")
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")

    def progress(event: ProgressEvent) -> None:
        if event.stage != "assemble":
            print(f"  {event.message}")

    started = time.perf_counter()
    backend = LocalBackend(args.model)
    backend.load(progress=progress)
    print(f"model ready in {time.perf_counter() - started:.1f} s: {backend.describe()}")
    bench_prompt(backend, args.prefix_tokens, args.tail_tokens, args.repeat)
    bench_engine_prompts(backend)
    bench_generation(backend, args.gen_tokens, args.repeat)
    if args.demo:
        bench_demo(backend, args.max_llm_calls, args.max_seconds)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
