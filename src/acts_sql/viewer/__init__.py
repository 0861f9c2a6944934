"""The debugging-tree viewer: a run as one self-contained HTML page.

``render_html(result)`` draws a finished run (``acts-sql fix --html PATH``);
``render_live_html(...)`` is the page the service serves at ``/runs/{id}``,
which follows the run's event stream. Pure: no I/O beyond reading the bundled
assets.
"""

from acts_sql.viewer.page import (
    content_security_policy,
    embed_json,
    render_html,
    render_live_html,
)

__all__ = ["content_security_policy", "embed_json", "render_html", "render_live_html"]
