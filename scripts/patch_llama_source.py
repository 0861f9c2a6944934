#!/usr/bin/env python3
"""Make llama.cpp's llamafile matrix kernels skip small batches, in an unpacked sdist.

usage: scripts/patch_llama_source.py SOURCE_DIR [--min-rows N] [--show]

SOURCE_DIR is an unpacked llama-cpp-python sdist (its ``vendor/llama.cpp``
is patched in place). llamafile's kernels multiply a batch of 2 or more
rows in another order than ggml's own dot products do for a single row, so
a prompt-lookup verification batch got other logits than the plain decoder
(docs/BENCHMARKS.md, "Prompt lookup"). Building without them
(``-DGGML_LLAMAFILE=OFF``) makes small batches exact but reads cold prompts
at 0.6x the speed. This patch keeps the kernels for batches of at least N
rows (prompts) and uses ggml's own products below that (the verification
batches, at most ``MAX_VERIFY_BATCH`` rows), and reports
``LLAMAFILE = N`` in llama.cpp's system info, which
``acts_sql.llm.local.engine.batch_exact_build`` reads.

The patch is exact string replacement on the pinned version's files: a
source that does not match exactly is refused (exit 1, the file and the
text that was not found), never patched halfway. Patching twice is a no-op.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

MIN_ROWS = 8
"""Smallest batch that still gets llamafile's kernels (the lookup verifies at most 7)."""

MATMUL = Path("vendor/llama.cpp/ggml/src/ggml-cpu/ggml-cpu.c")
FEATURES = Path("vendor/llama.cpp/ggml/src/ggml-cpu/ggml-cpu.cpp")


WDATA = "        const void* wdata = (src1->type == vec_dot_type) ? src1->data : params->wdata;"


def replacements(min_rows: int) -> list[tuple[Path, str, str, int]]:
    """(file, old, new, expected count) for every edit of the patch."""
    return [
        (
            MATMUL,
            "    if (src1_cont) {\n        for (int64_t i13 = 0; i13 < ne13; i13++)",
            f"    if (src1_cont && ne11 >= {min_rows}) {{\n"
            "        for (int64_t i13 = 0; i13 < ne13; i13++)",
            1,
        ),
        (
            MATMUL,
            f"    if (src1->type != vec_dot_type) {{\n{WDATA}",
            f"    if (src1->type != vec_dot_type && ne11 >= {min_rows}) {{\n{WDATA}",
            1,
        ),
        (
            FEATURES,
            'features.push_back({ "LLAMAFILE", "1" });',
            f'features.push_back({{ "LLAMAFILE", "{min_rows}" }});',
            1,
        ),
    ]


class PatchError(Exception):
    """The source is not the one the patch was written for."""


def patch(source: Path, min_rows: int = MIN_ROWS) -> list[str]:
    """Apply every edit or none; returns what was changed (empty when already patched)."""
    edits = replacements(min_rows)
    texts: dict[Path, str] = {}
    for rel, _, _, _ in edits:
        path = source / rel
        if not path.is_file():
            raise PatchError(f"{path}: not found (is {source} an unpacked llama-cpp-python sdist?)")
        texts.setdefault(rel, path.read_text())
    if all(texts[rel].count(new) == n for rel, _, new, n in edits):
        return []
    changed = []
    for rel, old, new, n in edits:
        found = texts[rel].count(old)
        if found != n:
            first = old.splitlines()[0].strip()
            raise PatchError(f"{source / rel}: expected {n} of {first!r}, found {found}")
        texts[rel] = texts[rel].replace(old, new)
        changed.append(f"{rel}: {new.splitlines()[0].strip()}")
    for rel, text in texts.items():
        (source / rel).write_text(text)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--min-rows", type=int, default=MIN_ROWS)
    parser.add_argument(
        "--show",
        action="store_true",
        help="print the edits and change nothing (scripts/_env.sh names the wheel by them)",
    )
    args = parser.parse_args(argv)
    if args.min_rows < 2:
        parser.error("--min-rows must be at least 2 (llamafile never takes a single row)")
    if args.show:
        for rel, old, new, count in replacements(args.min_rows):
            print(f"{rel} x{count}\n- {old!r}\n+ {new!r}")
        return 0
    try:
        changed = patch(args.source, args.min_rows)
    except PatchError as err:
        print(f"patch_llama_source: {err}", file=sys.stderr)
        return 1
    for line in changed or ["already patched"]:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
