"""The JSON reader reads every model reply kept in results/ as pinned.

The pins (tests/llm/data/reply_readings.txt, written by scripts/pin_reply_readings.py) hold
a hash of each reply's reading: the object it yields, or the refusal's reason. A reader that
reads any kept reply differently, even one cut off or damaged, fails here.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from support import load_script

REGENERATE = "run scripts/pin_reply_readings.py"


@pytest.fixture(scope="module")
def pinning() -> ModuleType:
    return load_script("pin_reply_readings")


@pytest.fixture(scope="module")
def replies(pinning: ModuleType) -> dict[str, str]:
    return pinning.recorded_replies()


def test_every_kept_reply_is_pinned(pinning: ModuleType, replies: dict[str, str]) -> None:
    pins = pinning.load_pins()
    unpinned, stale = replies.keys() - pins.keys(), pins.keys() - replies.keys()
    assert not unpinned, f"{len(unpinned)} kept replies have no pinned reading: {REGENERATE}"
    assert not stale, f"{len(stale)} pinned replies are no longer kept: {REGENERATE}"


def test_the_reader_reads_every_kept_reply_as_pinned(
    pinning: ModuleType, replies: dict[str, str]
) -> None:
    pins = pinning.load_pins()
    readings = {key: pinning.reading(reply) for key, reply in replies.items() if key in pins}
    changed = [key for key, read in readings.items() if pinning.digest(read) != pins[key]]
    examples = "; ".join(
        f"{key}: {replies[key][-80:]!r} now {readings[key][:80]!r}" for key in changed[:3]
    )
    assert not changed, f"{len(changed)} kept replies read differently, e.g. {examples}"
    # the kept replies exercise both outcomes of the reader: objects and refusals
    assert sum(read.startswith("object ") for read in readings.values()) > 2000
    assert sum(read.startswith("refused ") for read in readings.values()) > 100
