"""The limits a PRQL text must keep before prqlc sees it (`prql.limits`), and the
large-stack thread prqlc runs on (`prql.stack`).

Past these shapes prqlc 0.13 overflows its stack and the process dies (SIGSEGV):
every shape here is one measured to crash it, cut to just past the limit.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from acts_sql.errors import QueryCompileError
from acts_sql.sql.languages.prql import PRQL, _options, compile_report
from acts_sql.sql.languages.prql.limits import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_NAME_PARTS,
    MAX_NESTING,
    check_limits,
)
from acts_sql.sql.languages.prql.stack import on_large_stack

ROOT = Path(__file__).resolve().parents[2]
HEAD = "from customers | select {x = "
ISSUE_INPUT = HEAD + "(" * 1000 + "1" + ")" * 1000 + "}"
"""Issue 37, row 8: prqlc segfaulted on it in `fix` on every engine, and killed `serve`."""


def nested(opener: str, closer: str, levels: int) -> str:
    return HEAD + opener * levels + "1" + closer * levels + "}"


def chain(operator: str, length: int) -> str:
    return HEAD + f" {operator} ".join(["a"] * (length + 1)) + "}"


def legit_texts() -> list[str]:
    """Every PRQL text the project ships: the log tasks' gold queries, the translation
    fixtures and the reference's examples. None may come near a limit."""
    tasks = json.loads((ROOT / "src/acts_sql/bench/logs/data/tasks.json").read_text())
    cases = json.loads((ROOT / "tests/fixtures/sql/prql/from_sql.json").read_text())["cases"]
    reference = (ROOT / "src/acts_sql/sql/languages/prql/reference.md").read_text()
    examples = re.findall(r"```prql\n(.*?)```", reference, re.DOTALL)
    texts = [t["gold"] for t in tasks] + [c["prql"] for c in cases if c.get("prql")] + examples
    assert len(texts) > 60
    return texts


def test_the_issue_input_is_a_compile_error_with_the_place_and_the_limit() -> None:
    found = check_limits(ISSUE_INPUT)
    assert found is not None
    assert found.message == f"brackets nested 1001 deep; at most {MAX_NESTING}"
    assert (found.line, found.column) == (1, len(HEAD) + MAX_NESTING)  # the 129th bracket
    with pytest.raises(QueryCompileError, match=r"PRQL compile error: line 1, column 157: "):
        PRQL().compile(ISSUE_INPUT, "duckdb")


@pytest.mark.parametrize(
    ("opener", "closer"),
    [("(", ")"), ("{", "}"), ("[", "]"), ("math.abs (", ")"), ('s"{', '}"')],
)
def test_bracket_nesting_stops_one_past_the_limit(opener: str, closer: str) -> None:
    inside = MAX_NESTING - 1  # the select's own { is one level
    assert check_limits(nested(opener, closer, inside)) is None
    beyond = check_limits(nested(opener, closer, inside + 1))
    assert beyond is not None and "at most 128" in beyond.message
    assert f"nested {MAX_NESTING + 1} deep" in beyond.message


def test_nested_case_is_refused_by_its_depth() -> None:
    """Each `case [a => ` level is a bracket and an operator: two levels of depth."""
    assert check_limits(nested("case [a => ", "]", 100)) is None
    found = check_limits(nested("case [a => ", "]", 127))
    assert found is not None and found.message.startswith("an expression 25")


@pytest.mark.parametrize("operator", ["+", "&&", "??", "**", "==", "||", "..", "-"])
def test_operator_chains_count_as_depth(operator: str) -> None:
    assert check_limits(chain(operator, MAX_DEPTH - 3)) is None
    found = check_limits(chain(operator, 900))
    assert found is not None
    assert found.message.startswith("an expression 90") and f"at most {MAX_DEPTH}" in found.message


def test_pipelines_of_pipes_or_lines_count_as_depth() -> None:
    assert check_limits("from t" + " | filter a > 1" * 100) is None
    piped = check_limits("from t" + " | filter a > 1" * 300)
    assert piped is not None and "levels deep" in piped.message
    lines = check_limits("from t\n" + "derive {b = 1}\n" * 300)
    # each line is a step, its {b = 1} two levels more: line 255's step is one too many
    assert lines is not None and lines.line == MAX_DEPTH - 1
    # new lines inside a tuple are not steps: a select of 2,000 columns, one a line
    assert (
        check_limits("from t\nselect {\n" + ",\n".join(f"c{i}" for i in range(2000)) + "\n}")
        is None
    )


def test_depth_adds_up_across_levels() -> None:
    """A chain of 10 inside each of 30 levels is 330 deep (prqlc crashed at 85 levels)."""
    text = "1"
    for _ in range(30):
        text = "(" + " + ".join([text] + ["1"] * 10) + ")"
    found = check_limits(HEAD + text + "}")
    assert found is not None and "levels deep" in found.message


def test_strings_and_comments_are_not_code() -> None:
    brackets = "(" * 2000
    assert check_limits(f'from t | select {{x = "{brackets}"}}') is None
    assert check_limits(f"from t | select {{x = '''{brackets} \" '''}}") is None
    assert check_limits(f"from t # {brackets} {'+ ' * 2000}\nselect {{a}}") is None
    assert check_limits(f'from t | select {{x = r"\\{brackets}"}}') is None
    assert check_limits(f'from t | select {{x = f"{{{{{brackets}"}}') is None  # {{ escapes


def test_f_and_s_string_interpolations_are_code() -> None:
    levels = MAX_NESTING + 5
    found = check_limits(HEAD + 's"{' * levels + "1" + '}"' * levels + "}")
    assert found is not None and "brackets nested" in found.message


def test_long_dotted_names_and_long_texts_are_refused() -> None:
    assert check_limits(HEAD + "a" + ".b" * (MAX_NAME_PARTS - 1) + "}") is None
    dotted = check_limits(HEAD + "a" + ".b" * 8000 + "}")
    assert dotted is not None and dotted.message == "a name of 8001 dotted parts; at most 64"
    assert dotted.column == len(HEAD) + 1
    long_text = "from t\nselect {" + ", ".join(f"column_{i}" for i in range(8000)) + "}"
    assert len(long_text) > MAX_CHARS
    found = check_limits(long_text)
    assert found is not None and found.message.startswith(f"the PRQL text is {len(long_text):,}")


def test_every_prql_text_the_project_ships_is_within_the_limits() -> None:
    for text in legit_texts():
        assert check_limits(text) is None, text


def test_compile_report_returns_the_limit_without_compiling(monkeypatch) -> None:
    import acts_sql.sql.languages.prql as plugin

    def no_compile(*_args: object) -> str:
        raise AssertionError("prqlc must not see a text past a limit")

    monkeypatch.setattr(plugin.prqlc, "compile", no_compile)
    report = compile_report(ISSUE_INPUT, _options("sql.duckdb"))
    assert isinstance(report, list) and "nested 1001 deep" in report[0].message


def test_on_large_stack_returns_and_raises_across_the_thread() -> None:
    assert on_large_stack(lambda: threading.current_thread().name) == "prqlc"
    with pytest.raises(KeyError, match="x"):
        on_large_stack(lambda: {}["x"])


DEEPEST_ALLOWED = r"""
import sys, threading
from acts_sql.sql.languages.prql import PRQL
from acts_sql.sql.languages.prql.limits import MAX_DEPTH, MAX_NESTING, check_limits

head = "from customers | select {x = "
texts = [
    head + "(" * (MAX_NESTING - 1) + "1" + ")" * (MAX_NESTING - 1) + "}",
    head + " + ".join(["a"] * (MAX_DEPTH - 2)) + "}",
    "from customers\n" + "derive {b = 1}\n" * (MAX_DEPTH - 3),
]
failed = []
def run():
    try:
        for text in texts:
            assert check_limits(text) is None, text[-40:]
            print(len(PRQL().compile(text, "duckdb")) > 0, flush=True)
    except BaseException as exc:
        failed.append(repr(exc))
threading.stack_size(512 * 1024)  # a small caller stack: prqlc gets its own large one
thread = threading.Thread(target=run)
thread.start()
thread.join()
sys.exit(f"failed: {failed}" if failed else 0)
"""


def test_the_deepest_texts_allowed_compile_even_from_a_small_stack(tmp_path: Path) -> None:
    """At the limits, from a thread with a 512 KiB stack (prqlc crashed at 186 nested
    brackets on 2 MiB), prqlc compiles: a child process, so a crash fails the test."""
    done = subprocess.run(
        [sys.executable, "-c", DEEPEST_ALLOWED],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert done.stdout.split() == ["True", "True", "True"]
