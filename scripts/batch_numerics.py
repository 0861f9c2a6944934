"""Does llama.cpp compute a position's logits the same in a batch as alone?

Prompt lookup verifies drafted tokens in one batch and keeps what greedy
decoding confirms. Its reply equals plain greedy decoding only where a
batch's logits equal the single-token ones. This evaluates one SQL-copying
continuation after a prompt, one token at a time (the reference), then split
into batches of each size asked, and prints, per attention setting (flash
attention on or off, F16 or F32 KV cache) and batch size, the largest logit
difference and whether every position is bit-identical. The prompt is a
short question, or, with --prompt-repeat N, its SQL N times (25: about 700
tokens, the length of the engine's prompts). What it found is in
"Batch numerics" in ``acts_sql.llm.local.engine`` and docs/BENCHMARKS.md.

    .venv/bin/python scripts/batch_numerics.py [--model qwen2.5-coder-0.5b]
        [--threads 2] [--sizes 2,4,7,8,16] [--prompt-repeat 25] [--json]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from acts_sql.llm.local import LocalBackend
from acts_sql.llm.local.engine import LlamaEngine, load_llama

QUERY = (
    b"SELECT name, COUNT(*) FROM orders o JOIN customers c ON c.id = o.customer_id "
    b"WHERE o.total > 100 GROUP BY name ORDER BY 2 DESC\n"
)
CONTINUATION = (
    b"SELECT c.name, COUNT(o.id) AS orders FROM orders o JOIN customers c ON "
    b"c.id = o.customer_id WHERE o.total > 100 GROUP BY c.name ORDER BY orders DESC"
)


def logits(engine: LlamaEngine, prompt: list[int], tokens: list[int], size: int) -> Any:
    """The rows after each of `tokens`, evaluated after `prompt` in batches of `size`."""
    engine.truncate(0)
    engine.evaluate_prompt(prompt, None)
    rows = []
    for start in range(0, len(tokens), size):
        rows.append(np.array(engine.decode(tokens[start : start + size])))
    return np.concatenate(rows)


def measure(
    path: Any, threads: int, setting: tuple[bool, bool], sizes: list[int], repeat: int
) -> list[dict[str, Any]]:
    flash_attn, kv_f32 = setting
    llama = load_llama(
        path,
        n_ctx=4096,
        n_threads=threads,
        seed=0,
        extra_buffers=False,
        flash_attn=flash_attn,
        kv_f32=kv_f32,
    )
    try:
        engine = LlamaEngine(llama)
        text = b"This SQLite query returns the wrong rows:\n" + QUERY * repeat
        prompt = llama.tokenize(text + b"The corrected query:\n")
        tokens = llama.tokenize(CONTINUATION, add_bos=False)
        reference = logits(engine, prompt, tokens, 1)
        out = []
        for size in sizes:
            got = logits(engine, prompt, tokens, size)
            diff = np.abs(got - reference).max(axis=1)
            out.append(
                {
                    "flash_attn": flash_attn,
                    "kv": "f32" if kv_f32 else "f16",
                    "prompt_tokens": len(prompt),
                    "batch": size,
                    "positions": len(tokens),
                    "max_abs_diff": round(float(diff.max()), 4),
                    "identical": bool((diff == 0).all()),
                    "same_argmax": bool((got.argmax(1) == reference.argmax(1)).all()),
                }
            )
        return out
    finally:
        llama.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sizes", default="2,3,4,5,6,7,8,16")
    parser.add_argument("--prompt-repeat", type=int, default=1, help="copies of the SQL")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    if any(size < 1 for size in sizes):
        parser.error(f"--sizes must be positive integers, got {args.sizes}")
    if not 1 <= args.prompt_repeat <= 100:
        parser.error(f"--prompt-repeat must be 1 to 100, got {args.prompt_repeat}")
    path = LocalBackend(args.model).model_path(None)
    settings = [(False, False), (True, False), (False, True), (True, True)]
    rows = [
        row
        for setting in settings
        for row in measure(path, args.threads, setting, sizes, args.prompt_repeat)
    ]
    if args.json:
        print(json.dumps({"model": args.model, "threads": args.threads, "rows": rows}))
        return
    print(f"{args.model}, {args.threads} threads, {rows[0]['prompt_tokens']} prompt tokens")
    print("flash attention | KV  | batch | max |logit diff| | identical | same argmax")
    for row in rows:
        print(
            f"{'on' if row['flash_attn'] else 'off':>15} | {row['kv']} | {row['batch']:>5} | "
            f"{row['max_abs_diff']:>16} | {row['identical']!s:>9} | {row['same_argmax']}"
        )


if __name__ == "__main__":
    main()
