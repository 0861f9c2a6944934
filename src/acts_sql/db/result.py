"""Typed results of running one statement."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ExecStatus = Literal["ok", "error", "timeout", "blocked"]
ErrorKind = Literal["syntax", "schema", "type", "runtime", "blocked", "timeout", "other"]


class ExecResult(BaseModel):
    """Outcome of one statement: never an exception, always one of these."""

    status: ExecStatus
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    row_count: int = 0
    truncated: bool = False
    error: str | None = None
    error_kind: ErrorKind | None = None
    error_code: str | None = None
    error_position: int | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def is_syntax_error(self) -> bool:
        return self.status == "error" and self.error_kind == "syntax"

    def failure(self) -> str:
        """Status and error as one phrase, the status said once: "error: no such table: t",
        "blocked: writes are not allowed" (a blocked or timed-out error already starts with
        its status); "" for a statement that ran."""
        return "" if self.ok else failure_text(self.status, self.error)

    def preview(self, max_rows: int = 20) -> ExecResult:
        """A copy with at most `max_rows` rows, for traces and prompts."""
        return self.model_copy(update={"rows": self.rows[:max_rows]})

    def summary(self, max_rows: int = 5, max_cell: int = 40) -> str:
        """A short, prompt-friendly text: status, columns and the first rows."""
        if self.status != "ok":
            return self.failure()
        more = "+" if self.truncated else ""
        head = f"ok: {self.row_count}{more} row(s); columns: {', '.join(self.columns) or '-'}"
        lines = [head]
        for row in self.rows[:max_rows]:
            cells = [_cell(v, max_cell) for v in row]
            lines.append("  (" + ", ".join(cells) + ")")
        if self.row_count > max_rows:
            lines.append(f"  ... {self.row_count - max_rows} more")
        return "\n".join(lines)


def failure_text(status: str, error: str | None) -> str:
    """``STATUS: ERROR``, without repeating a status the error already starts with."""
    text = (error or "").strip()
    if not text:
        return status
    if text.lower().startswith(f"{status.lower()}:"):
        return text
    return f"{status}: {text}"


BLOCKED_WRITE = "blocked: writes are not allowed"


def blocked_result(reason: str, seconds: float = 0.0) -> ExecResult:
    """A statement that is never sent: status and kind `blocked`."""
    text = reason if reason.startswith("blocked") else f"blocked: {reason}"
    return ExecResult(status="blocked", error=text, error_kind="blocked", seconds=seconds)


def write_blocked_result(code: str | None = None, detail: str | None = None) -> ExecResult:
    """A write the database itself refused (read-only transaction, mode or grant)."""
    text = BLOCKED_WRITE if not detail else f"{BLOCKED_WRITE} ({detail})"
    return ExecResult(status="blocked", error=text, error_kind="blocked", error_code=code)


def timeout_result(seconds_limit: float, code: str | None = None) -> ExecResult:
    """A statement stopped at its time limit."""
    return ExecResult(
        status="timeout",
        error=f"timeout: statement exceeded {seconds_limit:g} s",
        error_kind="timeout",
        error_code=code,
    )


def _cell(value: Any, limit: int) -> str:
    text = "NULL" if value is None else repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
