"""The query-language plugin API, with a toy language registered in-process."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from toy_language import Toy

from acts_sql.errors import ConfigError, QueryCompileError
from acts_sql.sql.languages import (
    LanguageRegistry,
    QueryLanguage,
    check_language,
    default_registry,
    get_language,
    plugin_for,
    unavailable_tools,
)
from acts_sql.sql.query_text import normalize_sql, split_statements
from acts_sql.sql.repairs import has_top_level_order_by
from acts_sql.sql.sqldiff import token_diff


@pytest.fixture
def toy():
    with default_registry().registered(Toy) as language:
        yield language


def test_a_registered_language_is_found_by_name_and_lists_itself(toy):
    assert get_language("toy") is toy
    assert get_language("TOY") is toy  # names compare like dialect names
    names = [info.name for info in default_registry().infos()]
    assert "toy" in names and "sqlite" in names  # SQL dialects are languages too
    info = next(i for i in default_registry().infos() if i.name == "toy")
    assert info.kind == "compiled" and info.source == "in-process"
    assert info.targets == ["sqlite", "duckdb"]
    assert info.unavailable_tools == {"split_fix_syntax": "the toy is not SQL"}


def test_unregistered_it_is_gone():
    with default_registry().registered(Toy):
        assert plugin_for("toy") is not None
    assert plugin_for("toy") is None
    with pytest.raises(ConfigError, match="unknown query language 'toy'"):
        get_language("toy")


def test_compile_gives_the_databases_sql_and_errors_carry_line_and_column(toy):
    assert toy.compile("fetch rooms\nkeep price > 100", "sqlite") == (
        "SELECT * FROM rooms WHERE price > 100"
    )
    with pytest.raises(QueryCompileError) as caught:
        toy.compile("fetch rooms\n  kep price > 100", "sqlite")
    [finding] = caught.value.diagnostics
    assert (finding.line, finding.column, finding.near) == (2, 3, "kep")
    assert "Toy compile error: line 2, column 3: unknown clause 'kep'" in str(caught.value)
    assert toy.check("fetch rooms\n  kep price > 100")[0].line == 2
    assert toy.check("fetch rooms") == []


def test_canonical_form_is_the_compiled_sql_so_layout_does_not_matter(toy):
    a = toy.canonical("fetch rooms\nkeep price > 100")
    b = toy.canonical("   fetch    rooms\n\n\nkeep price   >   100   ")
    assert a == b and a.startswith("toy: SELECT")
    assert toy.canonical("fetch rooms\nkeep price > 200") != a
    # a text that does not compile is compared by its words
    assert toy.canonical("fetch  rooms\nkep x") == toy.canonical("fetch rooms kep x")
    assert toy.canonical("fetch rooms\nkep x") != a
    assert toy.canonical("  ") == ""


def test_sql_helpers_dispatch_to_the_language(toy):
    """The engine passes the language's name where it passes a dialect's."""
    assert normalize_sql("fetch rooms\nkeep a = 1", "toy") == toy.canonical(
        "fetch rooms\n keep a=1"
    )
    assert split_statements("  fetch rooms\nkeep a = 1\n", "toy") == ["fetch rooms\nkeep a = 1"]
    assert not has_top_level_order_by("fetch rooms", "toy")  # compiled SQL has no ORDER BY
    assert token_diff("fetch rooms", "fetch bookings", "toy") == "- fetch rooms + fetch bookings"
    # SQL dialects are unchanged
    assert normalize_sql("select  1", "sqlite") == "SELECT 1"


def test_tools_a_language_rules_out(toy):
    assert unavailable_tools("toy") == {"split_fix_syntax": "the toy is not SQL"}
    assert unavailable_tools("sqlite") == {}
    assert unavailable_tools("no-such-language") == {}


def test_the_reference_text_is_read_from_the_file_next_to_the_plugin(toy):
    assert toy.reference.startswith("Toy: `fetch TABLE`")

    class Missing(Toy):
        name = "missing"
        reference_file = "nowhere.md"

    with pytest.raises(ConfigError, match=r"reference file 'nowhere.md' not found"):
        _ = Missing().reference


def test_sql_dialects_are_built_in_languages():
    sqlite = get_language("sqlite")
    assert sqlite.is_sql and sqlite.targets == ("sqlite",)
    assert sqlite.compile("SELECT 1", "sqlite") == "SELECT 1"
    assert sqlite.canonical("select   1 ;") == normalize_sql("SELECT 1", "sqlite")
    assert sqlite.check("SELEC 1")  # sqlglot's diagnostics
    assert sqlite.unavailable_tools == {}
    with pytest.raises(ConfigError, match="runs on SQLite databases only"):
        sqlite.compile("SELECT 1", "duckdb")
    assert plugin_for("sqlite") is None  # not a plugin: the SQL path stays as it was


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Bad Name"}, "must be lower case"),
        ({"name": "postgres"}, "taken by the SQL dialect 'postgresql'"),
        ({"display_name": ""}, "has no display_name"),
        ({"targets": ()}, "names no target dialect"),
        ({"targets": ("postgres",)}, "target 'postgres' is not a dialect name"),
        ({"unavailable_tools": {"nope": "x"}}, "unknown tool 'nope'"),
        ({"unavailable_tools": {"generate_sql": "x"}}, "generate_sql applies to every"),
    ],
)
def test_a_plugin_that_cannot_work_is_refused(change, message):
    broken = type("Broken", (Toy,), change)
    with pytest.raises(ConfigError, match=message):
        check_language(broken())
    with pytest.raises(ConfigError, match=message):
        LanguageRegistry(entry_points=False, bundled={}).register(broken)


def test_a_plugin_without_compile_is_refused():
    class NoCompile(QueryLanguage):
        name = "nocompile"
        display_name = "No compile"
        targets = ("sqlite",)

    with pytest.raises(ConfigError, match="does not implement compile"):
        check_language(NoCompile())


def test_two_plugins_of_one_name_collide():
    registry = LanguageRegistry(entry_points=False, bundled={})
    registry.register(Toy)
    registry.register(Toy())  # the same plugin again: fine
    other = type("OtherToy", (Toy,), {})
    with pytest.raises(ConfigError, match="already registered"):
        registry.register(other)


def _install_plugin(root: Path, module: str, entry_point: str) -> None:
    """A package on sys.path with an entry point of group acts_sql.languages, as pip
    would leave it (a module and a .dist-info directory)."""
    (root / f"{module}.py").write_text(
        textwrap.dedent(
            f"""
            from toy_language import Toy

            class Piped(Toy):
                name = "{entry_point}"
                display_name = "Piped"
                reference_file = None
            """
        )
    )
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[acts_sql.languages]\n{entry_point} = {module}:Piped\n"
    )


def test_plugins_are_found_through_entry_points(tmp_path, monkeypatch):
    _install_plugin(tmp_path, "piped_plugin", "piped")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = LanguageRegistry(bundled={})
    found = registry.get("piped")
    assert found.display_name == "Piped"
    info = next(i for i in registry.infos() if i.name == "piped")
    assert info.source.startswith("entry point piped = piped_plugin:Piped")
    sys.modules.pop("piped_plugin", None)


def test_a_plugin_that_cannot_be_imported_breaks_only_itself(tmp_path, monkeypatch):
    info = tmp_path / "broken_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken_plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[acts_sql.languages]\nbroken = no_such_module:X\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = LanguageRegistry(bundled={})
    assert "sqlite" in [i.name for i in registry.infos()]
    [failure] = [f for f in registry.failures() if f.name == "broken"]
    assert "no_such_module:X cannot be imported" in failure.reason
    with pytest.raises(ConfigError, match="query language 'broken' cannot be used"):
        registry.get("broken")


def test_a_bundled_plugin_whose_package_is_missing_says_which_extra_to_install():
    registry = LanguageRegistry(
        entry_points=False, bundled={"ghost": ("ghost_language_pkg:Ghost", "ghost")}
    )
    with pytest.raises(ConfigError, match=r"pip install 'acts-sql\[ghost\]'"):
        registry.get("ghost")


def test_an_entry_point_whose_language_has_another_name_is_refused():
    registry = LanguageRegistry(entry_points=False, bundled={"other": ("toy_language:Toy", "x")})
    with pytest.raises(ConfigError, match="its language is called 'toy', not 'other'"):
        registry.get("other")
    assert registry.plugin("toy") is None
