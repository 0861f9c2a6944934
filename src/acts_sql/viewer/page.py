"""The viewer page: one self-contained HTML file (template, CSS and JS inline).

The page carries its data as a JSON block (``<script type="application/json">``)
that the bundled script reads and draws; nothing from a run is ever written
into the markup except that block and the title, both escaped. A
Content-Security-Policy allows only the bundled script and style (by hash), so
even an escaping mistake could not run injected code. The script names trace
event kinds by `acts_sql.engine.events.EventKind`, written into it here.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import cache
from importlib.resources import files
from typing import Any

from acts_sql.engine.events import EventKind
from acts_sql.engine.result import CorrectionResult

_ASSETS = "assets"
_PLACEHOLDER = re.compile(r"\{\{([A-Z]+)\}\}")
_TITLE_CHARS = 90
_KINDS_SLOT = "/* EVENT_KINDS */ {}"


def _asset(name: str) -> str:
    return files(__package__).joinpath(_ASSETS, name).read_text(encoding="utf-8")


@cache
def _bundle() -> tuple[str, str, str]:
    """(template, style, script), checked to be safe to inline; the script with the trace
    event kinds written in (its `KIND`)."""
    template, style, script = _asset("page.html"), _asset("viewer.css"), _asset("viewer.js")
    if "</style" in style.lower() or "</script" in script.lower():
        raise RuntimeError("viewer assets must not contain closing </style> or </script> tags")
    if script.count(_KINDS_SLOT) != 1:
        raise RuntimeError(f"viewer.js must hold {_KINDS_SLOT!r} once")
    kinds = json.dumps({kind.name: kind.value for kind in EventKind}, separators=(",", ":"))
    return template, style, script.replace(_KINDS_SLOT, kinds)


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@cache
def content_security_policy() -> str:
    """The page's CSP: the bundled script and style only, no network but its own origin."""
    _, style, script = _bundle()
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {_sha256(script)}",
            f"style-src {_sha256(style)}",
            "img-src data:",
            "connect-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )


def embed_json(value: Any) -> str:
    """JSON that is inert inside a ``<script type="application/json">`` block.

    ``<``, ``>`` and ``&`` become ``\\u003c``/``\\u003e``/``\\u0026`` (so no
    ``</script>`` or ``<!--`` can close or confuse the block), and the line
    separators U+2028/U+2029 are escaped; ``JSON.parse`` reads the same value.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def page_title(question: str) -> str:
    """A short one-line title from the question (plain text; escaped when inlined)."""
    line = " ".join(question.split())
    if len(line) > _TITLE_CHARS:
        line = line[: _TITLE_CHARS - 1] + "…"
    return f"acts-sql · {line}" if line else "acts-sql · debugging tree"


def build_page(payload: dict[str, Any], title: str) -> str:
    """The HTML page for a payload (see `render_html` and `render_live_html`)."""
    template, style, script = _bundle()
    values = {
        "CSP": html.escape(content_security_policy(), quote=True),
        "TITLE": html.escape(title, quote=True),
        "STYLE": style,
        "SCRIPT": script,
        "DATA": embed_json(payload),
    }
    # one pass: text substituted for one placeholder is never scanned again
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def render_html(result: CorrectionResult) -> str:
    """The debugging tree of a finished run as one self-contained HTML page."""
    payload = {"mode": "static", "result": result.model_dump(mode="json")}
    return build_page(payload, page_title(result.question))


def render_live_html(
    *,
    run_id: str,
    events_url: str,
    result_url: str,
    question: str = "",
    choice_url: str | None = None,
) -> str:
    """A page that draws a run while it is in progress, from its event stream.

    `events_url` is the run's server-sent-event stream (replayed from the
    start), `result_url` gives the final result once the stream has ended;
    both must be same-origin URLs the page may read without headers.
    `choice_url`, for a run that may ask the person, takes a reading as
    ``POST {"reading": id}``: a `choice_needed` event then shows the readings
    with buttons (without it, the readings are shown without buttons).
    """
    payload = {
        "mode": "live",
        "run_id": run_id,
        "events_url": events_url,
        "result_url": result_url,
        "choice_url": choice_url,
        "result": None,
    }
    return build_page(payload, page_title(question))
