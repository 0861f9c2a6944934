"""The viewer in a real browser: headless Chromium (Debian's package), no network.

Chromium is driven over the DevTools protocol on a pipe (tests/viewer/chromium.py),
with real mouse clicks. Screenshots go to artifacts/ (git-ignored).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql.viewer import render_html
from server.service import running_service, service_config
from viewer.chromium import Browser, chromium_path

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"

pytestmark = pytest.mark.skipif(
    chromium_path() is None,
    reason="chromium is not installed (scripts/test.sh installs Debian's chromium package)",
)


@pytest.fixture(scope="module")
def browser():
    with Browser() as chromium:
        yield chromium


def node_info(browser: Browser) -> dict[str, dict]:
    return browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('.node')].map(el => [el.dataset.id, {"
        "status: el.dataset.status, pruned: el.dataset.pruned === '1',"
        "classes: [...el.classList], text: el.innerText}]))"
    )


def test_figure3_tree_shows_the_pruned_and_the_accepted_branch(browser, figure3_result, tmp_path):
    page = tmp_path / "figure3.html"
    page.write_text(render_html(figure3_result))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    nodes = node_info(browser)
    assert set(nodes) == {"n1", "n1.1", "n1.2"}
    wrong, right = nodes["n1.1"], nodes["n1.2"]
    assert wrong["status"] == "rejected" and wrong["pruned"] and "pruned" in wrong["classes"]
    assert "pruned: this lists every room with two bookings" in wrong["text"]
    assert right["status"] == "accepted" and "final" in right["classes"]
    assert "accepted answer" in right["text"]
    assert "on-path" in nodes["n1"]["classes"] and "on-path" not in wrong["classes"]
    # the chosen branch's edge is highlighted, the pruned one is not
    edges = browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('path.edge')]"
        ".map(p => [p.dataset.edge, p.getAttribute('class')]))"
    )
    assert "on-path" in edges["n1->n1.2"] and "pruned" in edges["n1->n1.1"]

    assert browser.evaluate("document.getElementById('detail-sql') === null")
    browser.click('.node[data-id="n1.2"]')
    accepted_sql = next(n["candidate_sql"] for n in figure3_result.tree if n["id"] == "n1.2")
    shown = browser.wait_for("document.getElementById('detail-sql')?.textContent")
    assert shown == accepted_sql
    detail = browser.evaluate("document.getElementById('detail').innerText")
    assert "n1.2 · generate_sql" in detail
    added = browser.evaluate(
        "[...document.querySelectorAll('#detail .diff-lines .add')].map(e => e.textContent)"
    )
    assert any("b1.start_time < b2.end_time" in line for line in added)
    table = browser.evaluate(
        "[...document.querySelectorAll('#detail .result-table tbody tr')]"
        ".map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert table == [["1", "Atlas"], ["5", "Ember"]]
    browser.screenshot(ARTIFACTS / "viewer-figure3.png")

    browser.click('.node[data-id="n1.1"]')
    detail = browser.wait_for(
        "document.getElementById('detail').innerText.includes('n1.1') && "
        "document.getElementById('detail').innerText"
    )
    assert "pruned: this lists every room" in detail
    assert browser.exceptions == []


def test_markup_from_the_run_is_shown_as_text_and_never_runs(browser, hostile_result, tmp_path):
    page = tmp_path / "hostile.html"
    page.write_text(render_html(hostile_result))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    browser.click('.node[data-id="n1.1"]')
    browser.wait_for("document.getElementById('detail-sql') !== null")
    assert browser.evaluate("window.__pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("document.querySelectorAll('script').length") == 2
    question = browser.evaluate("document.getElementById('question').textContent")
    assert question == hostile_result.question
    assert "onerror" in browser.evaluate("document.getElementById('original-sql').textContent")
    assert browser.exceptions == []


def test_the_service_page_follows_a_run_live(browser, tmp_path, figure3_result):
    config = service_config(tmp_path, delay_s=0.15)
    with running_service(config) as svc, svc.client() as client:
        started = client.post(
            "/v1/correct",
            json={
                "database": "demo",
                "question": figure3_result.question,
                "sql": figure3_result.original_sql,
                "wait": False,
            },
        ).json()
        browser.open(svc.base_url + started["links"]["viewer"])
        # drawn while the run is still in progress ...
        browser.wait_for(
            "document.body.dataset.state === 'running' && +document.body.dataset.nodes >= 1"
        )
        assert not svc.registry.get(started["run_id"]).done
        # ... and complete once it has finished
        browser.wait_for("document.body.dataset.state === 'finished'", timeout=20)
        browser.wait_for("document.querySelector('.node.final') !== null")
        nodes = node_info(browser)
        final = client.get(started["links"]["run"]).json()
    assert nodes["n1.1"]["pruned"] and nodes["n1.2"]["status"] == "accepted"
    events = browser.evaluate("+document.body.dataset.events")
    assert events == len(final["trace"])
    browser.click('.node[data-id="n1.2"]')
    shown = browser.wait_for("document.getElementById('detail-sql')?.textContent")
    assert shown == final["sql"]
    browser.screenshot(ARTIFACTS / "viewer-live.png")
    assert browser.exceptions == [], json.dumps(browser.exceptions)
