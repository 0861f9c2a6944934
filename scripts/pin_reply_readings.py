#!/usr/bin/env python
"""Pin how the JSON reader (`acts_sql.llm.jsonrepair`) reads every model reply kept in results/.

    .venv/bin/python scripts/pin_reply_readings.py [--accept-changes]

Every `llm_call` reply in the kept traces (``results/**/traces/**/*.json.gz``) is read with
`parse_json_object`. Its reading is the object as canonical JSON (keys sorted, types kept),
or the refusal's reason, which a re-ask shows the model. ``tests/llm/data/reply_readings.txt``
holds one line per distinct reply: a hash of the reply and a hash of its reading.
``tests/llm/test_llm_recorded_replies.py`` checks every reply against it, so a reader that
reads any recorded reply differently fails there.

Run this after keeping a run (`scripts/keep_run.py`): it adds the new replies and drops the
ones no longer kept. A pinned reading that changed is rewritten only with ``--accept-changes``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from acts_sql.bench.loader import read_trace
from acts_sql.llm.jsonrepair import JsonExtractionError, parse_json_object

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"
PINS = REPO / "tests" / "llm" / "data" / "reply_readings.txt"
_DIGITS = 12  # hex digits of each hash: 48 bits, no collision among tens of thousands


def digest(text: str) -> str:
    """The short hash that stands for `text` in the pins file."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_DIGITS]


def recorded_replies(results: Path = RESULTS) -> dict[str, str]:
    """Every distinct `llm_call` reply in the kept traces under `results`, by its digest."""
    replies: dict[str, str] = {}
    for path in sorted(results.glob("**/traces/**/*.json.gz")):
        for event in read_trace(path).get("trace") or []:
            data = event.get("data") or {}
            if event.get("kind") == "llm_call" and isinstance(data.get("response"), str):
                replies[digest(data["response"])] = data["response"]
    return replies


def reading(reply: str) -> str:
    """How the reader reads `reply`: ``object <canonical JSON>`` or ``refused <reason>``."""
    try:
        value = parse_json_object(reply).value
    except JsonExtractionError as exc:
        return f"refused {exc.reason}"
    return "object " + json.dumps(value, sort_keys=True, ensure_ascii=False)


def load_pins(path: Path = PINS) -> dict[str, str]:
    """The pins file as {reply digest: reading digest}."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return dict(line.split(" ") for line in lines if line and not line.startswith("#"))


def write_pins(pins: dict[str, str], path: Path = PINS) -> None:
    header = "# reply digest, reading digest: written by scripts/pin_reply_readings.py\n"
    path.write_text(header + "".join(f"{k} {pins[k]}\n" for k in sorted(pins)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accept-changes", action="store_true", help="rewrite changed readings")
    args = parser.parse_args(argv)
    old = load_pins() if PINS.is_file() else {}
    new = {key: digest(reading(reply)) for key, reply in recorded_replies().items()}
    changed = sorted(key for key in new.keys() & old.keys() if new[key] != old[key])
    added, dropped = len(new.keys() - old.keys()), len(old.keys() - new.keys())
    print(f"{len(new)} replies: {added} new, {dropped} gone, {len(changed)} read differently")
    if changed and not args.accept_changes:
        print(
            "not written: the reader changed how it reads " + ", ".join(changed[:10]),
            file=sys.stderr,
        )
        return 1
    write_pins(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
