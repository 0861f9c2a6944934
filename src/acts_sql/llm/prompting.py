"""Prompt templates: text files shipped inside a package, filled strictly.

Templates use :class:`string.Template` syntax: ``$name`` or ``${name}``, and
``$$`` for a literal dollar sign. Files are read once through
:mod:`importlib.resources` (so they work from a wheel or a zip) and cached.
A loaded template is a ``str`` (so ``render(load_template(...), ...)`` and
``load_template(...).strip()`` both work) with a strict :meth:`render`.
Rendering never leaves a placeholder unfilled: a missing value, or a stray
``$`` that is not a placeholder, raises :class:`PromptTemplateError`.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Mapping
from importlib import resources
from typing import Any

from acts_sql.errors import ActsSqlError

__all__ = ["PromptTemplate", "PromptTemplateError", "load_template", "render"]


class PromptTemplateError(ActsSqlError):
    """A template that cannot be found, parsed or filled; details say which."""


class PromptTemplate(str):
    """Template text (a ``str``) that knows its name and renders strictly."""

    name: str

    def __new__(cls, text: str, name: str = "<string>") -> PromptTemplate:
        template = super().__new__(cls, text)
        template.name = name
        return template

    @property
    def template(self) -> string.Template:
        """The text as a :class:`string.Template`."""
        return string.Template(str(self))

    def placeholders(self) -> list[str]:
        """The placeholder names, in order of first use."""
        template = self.template
        if not template.is_valid():
            raise _invalid(self)
        return list(template.get_identifiers())

    def render(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> str:
        """Fill every placeholder; a missing one raises PromptTemplateError."""
        mapping = {**(values or {}), **kwargs}
        missing = [name for name in self.placeholders() if name not in mapping]
        if missing:
            shown = ", ".join(f"${name}" for name in missing)
            raise PromptTemplateError(
                f"template {self.name}: no value for {shown}",
                template=self.name,
                missing=missing,
            )
        return self.template.substitute(mapping)


def render(template_text: str, /, **values: Any) -> str:
    """Fill `template_text`; a missing placeholder raises PromptTemplateError."""
    if isinstance(template_text, PromptTemplate):
        return template_text.render(values)
    return PromptTemplate(template_text).render(values)


@functools.lru_cache(maxsize=256)
def load_template(package: str, name: str) -> PromptTemplate:
    """The template file `name` (a path relative to `package`, e.g. "prompts/x.txt")."""
    where = f"{package}/{name}"
    try:
        text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    except ModuleNotFoundError:
        raise PromptTemplateError(
            f"template {where}: package {package!r} not found", package=package, template=name
        ) from None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise PromptTemplateError(
            f"template {where}: no such file in the package", package=package, template=name
        ) from None
    template = PromptTemplate(text, name=where)
    template.placeholders()  # fail at load time on a stray "$"
    return template


def _invalid(template: PromptTemplate) -> PromptTemplateError:
    try:
        template.template.substitute(dict.fromkeys(template.template.get_identifiers(), ""))
    except ValueError as exc:
        reason = str(exc)
    else:  # pragma: no cover - is_valid() and substitute() disagree
        reason = "invalid placeholder"
    return PromptTemplateError(
        f"template {template.name}: {reason} (write $$ for a literal $)", template=template.name
    )
