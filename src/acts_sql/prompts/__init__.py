"""Every prompt acts-sql sends: one template file per purpose (`*.txt` here) and the shared
prefix all calls of a correction start with (`context`: system message, task block).

The LLM layer's own JSON re-ask (`acts_sql.llm`, `llm/prompts/json_reask.txt`) sits below,
with the structured-output loop that sends it.
"""

from __future__ import annotations

from acts_sql.llm.prompting import PromptTemplate, load_template

PACKAGE = "acts_sql.prompts"


def template(name: str) -> PromptTemplate:
    """The template `name` ("judge.txt") of this package."""
    return load_template(PACKAGE, name)
