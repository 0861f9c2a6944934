"""Prompt templates: loading from a package (cached) and strict rendering."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from acts_sql.errors import ActsSqlError
from acts_sql.llm.prompting import PromptTemplate, PromptTemplateError, load_template, render

_COUNTER = itertools.count()


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """A throw-away importable package with a prompts/ folder."""
    name = f"prompt_pkg_{next(_COUNTER)}"
    root = tmp_path / name
    (root / "prompts").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "prompts" / "greet.txt").write_text(
        "Dialect: $dialect\nQuestion: ${question}\nCost: $$5\n", encoding="utf-8"
    )
    (root / "prompts" / "broken.txt").write_text("Price: $5 per row\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name, root


def test_render_fills_both_placeholder_forms_and_keeps_escaped_dollars() -> None:
    text = render("SELECT $col FROM ${table}s WHERE price > $$10", col="name", table="product")
    assert text == "SELECT name FROM products WHERE price > $10"


def test_render_fails_loudly_naming_every_missing_placeholder() -> None:
    with pytest.raises(PromptTemplateError) as caught:
        render("$dialect / $schema / ${question}", dialect="sqlite")
    assert "$schema, $question" in str(caught.value)
    assert caught.value.details["missing"] == ["schema", "question"]
    assert isinstance(caught.value, ActsSqlError)


def test_render_ignores_extra_values_and_does_not_expand_values() -> None:
    assert render("Q: $q", q="cost in $amount", unused=1) == "Q: cost in $amount"


def test_load_template_reads_a_file_from_a_package(package: tuple[str, Path]) -> None:
    name, _ = package
    template = load_template(name, "prompts/greet.txt")
    assert isinstance(template, PromptTemplate)
    assert template.placeholders() == ["dialect", "question"]
    assert template.render(dialect="sqlite", question="top 3?") == (
        "Dialect: sqlite\nQuestion: top 3?\nCost: $5\n"
    )
    # a loaded template is text: usable wherever a str is
    assert render(template, dialect="duckdb", question="q").startswith("Dialect: duckdb")
    assert template.strip().endswith("Cost: $$5")


def test_load_template_is_cached(package: tuple[str, Path]) -> None:
    name, root = package
    first = load_template(name, "prompts/greet.txt")
    (root / "prompts" / "greet.txt").write_text("changed $x", encoding="utf-8")
    assert load_template(name, "prompts/greet.txt") is first


def test_missing_value_for_a_loaded_template_names_the_template(package: tuple[str, Path]) -> None:
    name, _ = package
    with pytest.raises(
        PromptTemplateError, match=rf"{name}/prompts/greet.txt: no value for \$question"
    ):
        load_template(name, "prompts/greet.txt").render(dialect="sqlite")


def test_a_stray_dollar_fails_at_load_time(package: tuple[str, Path]) -> None:
    name, _ = package
    with pytest.raises(PromptTemplateError, match=r"broken.txt: Invalid placeholder.*\$\$"):
        load_template(name, "prompts/broken.txt")


def test_missing_file_and_missing_package(package: tuple[str, Path]) -> None:
    name, _ = package
    with pytest.raises(PromptTemplateError, match="no such file"):
        load_template(name, "prompts/nope.txt")
    with pytest.raises(PromptTemplateError, match="package 'no_such_pkg_xyz' not found"):
        load_template("no_such_pkg_xyz", "x.txt")


def test_the_shipped_re_ask_template_loads() -> None:
    template = load_template("acts_sql.llm", "prompts/json_reask.txt")
    assert template.placeholders() == ["problem"]
