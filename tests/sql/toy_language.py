"""A toy query language for the plugin-API tests: `fetch TABLE` then `keep CONDITION` lines.

    fetch bookings
    keep room_id = 2
    keep guests > 1

compiles to ``SELECT * FROM bookings WHERE room_id = 2 AND guests > 1``. Its reference
text is ``toy_reference.md`` next to this file; sqlglot cannot read it, so it rules out
split_fix_syntax.
"""

from __future__ import annotations

from types import MappingProxyType

from acts_sql.sql.languages import Diagnostic, QueryLanguage


class Toy(QueryLanguage):
    name = "toy"
    display_name = "Toy"
    code_fence = "toy"
    file_suffixes = (".toy",)
    targets = ("sqlite", "duckdb")
    unavailable_tools = MappingProxyType({"split_fix_syntax": "the toy is not SQL"})
    reference_file = "toy_reference.md"

    def compile(self, text: str, dialect: str) -> str:
        lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
        if not lines:
            raise self.compile_error([Diagnostic(message="no query")])
        first_no, first = lines[0]
        words = first.split()
        if words[0] != "fetch" or len(words) != 2:
            raise self.compile_error(
                [Diagnostic(message="a query starts with `fetch TABLE`", line=first_no, column=1)]
            )
        conditions = []
        for number, line in lines[1:]:
            keyword, _, condition = line.strip().partition(" ")
            if keyword != "keep" or not condition:
                column = len(line) - len(line.lstrip()) + 1
                raise self.compile_error(
                    [
                        Diagnostic(
                            message=f"unknown clause {keyword!r}; write `keep CONDITION`",
                            line=number,
                            column=column,
                            near=keyword,
                        )
                    ]
                )
            conditions.append(condition)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        return f"SELECT * FROM {words[1]}{where}"
