"""The viewer in a real browser: headless Chromium (Debian's package), no network.

Chromium is driven over the DevTools protocol on a pipe (tests/viewer/chromium.py),
with real mouse clicks. Screenshots go to artifacts/ (git-ignored).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql.demo import get_task
from acts_sql.viewer import render_html
from engine.test_ask_person import SECOND
from engine.test_ask_person import script as ask_script
from server.service import running_service, service_config
from viewer.chromium import Browser, chromium_path
from viewer.conftest import PAYLOAD

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


def pool_rows(browser: Browser) -> list[dict]:
    """The candidate table of the detail panel, one dict per candidate."""
    return browser.evaluate(
        "[...document.querySelectorAll('#detail .pool-table tbody tr.cand-row')].map(tr => {"
        " const t = [...tr.cells].map(c => c.textContent);"
        " const why = tr.querySelector('.cand-why');"
        " return {id: t[0].replace(/^[▸▾] /, ''), origin: t[1], votes: t[2], status: t[3],"
        " group: t[4], verdict: tr.querySelector('.cand-verdict .badge').textContent,"
        " why: why ? why.textContent : '', classes: [...tr.classList]}; })"
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
    # the first branch's candidates give the user's SQL or its rows: the engine refused them
    assert "pruned: c1 refused: the same SQL as the user's" in wrong["text"]
    assert "2 cand · 1 group · 2 refused" in wrong["text"]
    assert right["status"] == "accepted" and "final" in right["classes"]
    assert "accepted answer" in right["text"] and "1 cand · 1 group" in right["text"]
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
    assert "The judge chose group A (g2, 1 vote); answer c3: only rooms with two bookings" in detail
    added = browser.evaluate(
        "[...document.querySelectorAll('#detail .diff-lines .add')].map(e => e.textContent)"
    )
    assert "start_time" in added and "b2" in added
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
    assert "pruned: c1 refused" in detail
    assert "No result group reached the judge; the engine rejected the pool" in detail
    rows = pool_rows(browser)
    assert [r["id"] for r in rows] == ["c1", "c2"]
    assert all(r["verdict"] == "refused by the engine" for r in rows)
    assert rows[0]["why"] == "the same SQL as the user's (formatting aside): it changes nothing"
    assert rows[1]["why"].startswith("returns exactly the rows of the user's SQL")
    assert browser.exceptions == []


def test_a_pool_shows_its_candidates_groups_and_the_judges_choice(browser, pooled_result, tmp_path):
    page = tmp_path / "pooled.html"
    page.write_text(render_html(pooled_result))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    assert "6 cand · 4 groups · 1 refused" in node_info(browser)["n1"]["text"]

    browser.click('.node[data-id="n1"]')
    browser.wait_for("document.querySelector('#detail .pool-table') !== null")
    rows = pool_rows(browser)
    assert [(r["id"], r["origin"], r["votes"], r["group"], r["verdict"]) for r in rows] == [
        ("c1", "raw", "1", "g1", "refused by the engine"),
        ("c2", "greedy", "2", "A · g2", "unjudged"),
        ("c3", "sample", "1", "B · g3", "accepted"),
        ("c4", "sample", "1", "A · g2", "unjudged"),
        ("c5", "sample", "1", "B · g3", "unjudged"),
        ("c6", "sample", "1", "C · g4", "unjudged"),
    ]
    assert rows[0]["why"].startswith("the same SQL as the user's")
    assert rows[0]["classes"].count("v-refused") == 1
    assert rows[2]["status"] == "ok · 2 row(s)" and rows[2]["why"].startswith("group B lists")
    # what the judge compared: labels A/B/C, their groups and votes, and its choice
    groups = browser.evaluate(
        "[...document.querySelectorAll('#detail .groups-table tbody tr')].map(tr => ["
        "...[...tr.cells].slice(0, 3).map(c => c.textContent), tr.dataset.outcome])"
    )
    assert groups == [
        ["A", "g2", "3", "not chosen"],
        ["B", "g3", "2", "chosen"],
        ["C", "g4", "1", "not chosen"],
    ]
    verdict = browser.evaluate("document.querySelector('#detail .judge-verdict').textContent")
    assert verdict == (
        "The judge chose group B (g3, 2 votes); answer c3: "
        "group B lists the rooms whose bookings intersect in time"
    )
    # the answer shown for the node is the judge's pick, not the greedy candidate
    winner = next(c for c in pooled_result.candidates if c["id"] == "c3")
    assert browser.evaluate("document.getElementById('detail-sql').textContent") == winner["sql"]

    # a row opens to its SQL, its diff against the original and its first rows
    assert browser.evaluate("document.querySelector('#detail tr.cand-more') === null")
    browser.click('#detail tr.cand-row[data-candidate="c3"]')
    browser.wait_for("document.querySelector('#detail tr.cand-more') !== null")
    more = "document.querySelector('#detail tr.cand-more[data-candidate=\"c3\"]')"
    assert browser.evaluate(f"{more}.querySelector('.cand-sql').textContent") == winner["sql"]
    added = browser.evaluate(
        f"[...{more}.querySelectorAll('.diff-lines .add')].map(e => e.textContent)"
    )
    assert "start_time" in added and "b2" in added  # tokens the candidate adds
    first_rows = browser.evaluate(
        f"[...{more}.querySelectorAll('.result-table tbody tr')]"
        ".map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert first_rows == [["1", "Atlas"], ["5", "Ember"]]
    # the refused candidate says so when opened
    browser.click('#detail tr.cand-row[data-candidate="c1"]')
    note = browser.wait_for(
        "document.querySelector('#detail tr.cand-more[data-candidate=\"c1\"] .refused-note')"
        "?.textContent"
    )
    assert note == "Refused by the engine: the same SQL as the user's (formatting aside): " + (
        "it changes nothing"
    )
    browser.screenshot(ARTIFACTS / "viewer-pool.png")
    # and closes again
    browser.click('#detail tr.cand-row[data-candidate="c3"]')
    browser.wait_for(
        "document.querySelector('#detail tr.cand-more[data-candidate=\"c3\"]') === null"
    )
    assert browser.exceptions == []


@pytest.mark.parametrize(
    ("run", "node"), [("pooled_result", "n1"), ("judged_wrong_result", "n1.1")]
)
def test_the_pool_is_built_from_the_events_alone(browser, request, run, node, tmp_path):
    """What a live page has: the trace events, no final candidates or groups.

    The result columns differ (events carry no rows); all else is the same.
    """
    result = request.getfixturevalue(run)
    static = tmp_path / "static.html"
    static.write_text(render_html(result))
    replay = tmp_path / "events.html"
    replay.write_text(render_html(result.model_copy(update={"candidates": [], "groups": []})))
    seen = []
    for page in (static, replay):
        browser.open(page.as_uri())
        browser.wait_for("document.body.dataset.state === 'finished'")
        browser.click(f'.node[data-id="{node}"]')
        browser.wait_for("document.querySelector('#detail .pool-table') !== null")
        rows = [{k: v for k, v in r.items() if k != "status"} for r in pool_rows(browser)]
        groups = browser.evaluate(
            "[...document.querySelectorAll('#detail .groups-table tbody tr')]"
            ".map(tr => [...tr.cells].filter((c, i) => i !== 4).map(c => c.textContent))"
        )
        badge = browser.evaluate(
            f"document.querySelector('.node[data-id=\"{node}\"] .pool-badge').textContent"
        )
        verdict = browser.evaluate("document.querySelector('#detail .judge-verdict').textContent")
        seen.append((rows, groups, badge, verdict))
    assert seen[0] == seen[1]
    assert len(seen[0][0]) >= 2 and seen[0][1]
    assert browser.exceptions == []


def test_a_judge_that_rejects_every_group_says_so(browser, judged_wrong_result, tmp_path):
    page = tmp_path / "judged.html"
    page.write_text(render_html(judged_wrong_result))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    browser.click('.node[data-id="n1.1"]')
    browser.wait_for("document.querySelector('#detail .groups-table') !== null")
    verdict = browser.evaluate("document.querySelector('#detail .judge-verdict').textContent")
    assert verdict.startswith("The judge rejected all 1 group: this lists every room with many")
    assert verdict.endswith("(back to n1)")
    outcome = browser.evaluate(
        "({...document.querySelector('#detail .groups-table tbody tr').dataset})"
    )
    assert outcome["label"] == "A" and outcome["outcome"] == "rejected"
    rows = {r["id"]: r for r in pool_rows(browser)}
    assert rows["c1"]["verdict"] == "refused by the engine"
    assert rows["c2"]["verdict"] == "rejected" and rows["c2"]["group"] == "A · g2"
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


def test_markup_in_a_candidates_sql_and_reason_never_runs(browser, hostile_pool_result, tmp_path):
    page = tmp_path / "hostile-pool.html"
    page.write_text(render_html(hostile_pool_result))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    browser.click('.node[data-id="n1"]')
    browser.wait_for("document.querySelector('#detail .pool-table') !== null")
    for cid in ("c3", "c5"):
        browser.click(f'#detail tr.cand-row[data-candidate="{cid}"]')
        browser.wait_for(
            f"document.querySelector('#detail tr.cand-more[data-candidate=\"{cid}\"]') !== null"
        )
    candidates = {c["id"]: c for c in hostile_pool_result.candidates}
    shown_sql = browser.evaluate(
        "document.querySelector('#detail tr.cand-more[data-candidate=\"c5\"] .cand-sql')"
        ".textContent"
    )
    assert shown_sql == candidates["c5"]["sql"] and PAYLOAD in shown_sql
    title = browser.evaluate(
        "document.querySelector('#detail tr.cand-row[data-candidate=\"c3\"] .cand-why').title"
    )
    assert title == candidates["c3"]["reason"] and PAYLOAD in title
    verdict = browser.evaluate("document.querySelector('#detail .judge-verdict').textContent")
    assert PAYLOAD in verdict
    assert browser.evaluate("window.__pwned === undefined")
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("document.querySelectorAll('script').length") == 2
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
    assert "2 cand · 1 group · 2 refused" in nodes["n1.1"]["text"]
    events = browser.evaluate("+document.body.dataset.events")
    assert events == len(final["trace"])
    browser.click('.node[data-id="n1.2"]')
    shown = browser.wait_for("document.getElementById('detail-sql')?.textContent")
    assert shown == final["sql"]
    browser.screenshot(ARTIFACTS / "viewer-live.png")
    assert browser.exceptions == [], json.dumps(browser.exceptions)


@pytest.mark.parametrize("events_only", [False, True], ids=["final", "events"])
def test_only_the_nodes_the_engine_holds_are_drawn(
    browser, replanned_result, tmp_path, events_only
):
    """A re-plan whose nodes reuse ids (`n1`) is drawn under the engine's names (`r.n1`),
    from the final tree and from the events alone (a live page), never as stray roots."""
    result = replanned_result
    tree_ids = {n["id"] for n in result.tree}
    assert {"r.n1", "r.n9"} <= tree_ids and "n9" not in tree_ids
    shown = result.model_copy(update={"tree": []}) if events_only else result
    page = tmp_path / "replanned.html"
    page.write_text(render_html(shown))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    nodes = node_info(browser)
    assert set(nodes) == tree_ids
    assert nodes["n1"]["text"].split("\n")[1] == "detect_ambiguities"  # not overwritten
    assert all(n["status"] != "pending" for i, n in nodes.items() if i.startswith("r."))
    assert browser.exceptions == []


def test_the_diff_ignores_layout_and_keyword_case(browser, figure3_result, tmp_path):
    """c1 is the user's SQL reformatted: the diff says so and marks nothing; the accepted
    candidate's diff marks the tokens it adds, keeping its own layout."""
    page = tmp_path / "figure3.html"
    page.write_text(render_html(figure3_result))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    browser.click('.node[data-id="n1.1"]')
    browser.wait_for("document.querySelector('#detail .pool-table') !== null")
    browser.click("#detail .pool-table tr.cand-row")  # c1: the user's SQL reformatted
    c1 = "document.querySelector('#detail tr.cand-more[data-candidate=\"c1\"] .diff')"
    diff = browser.wait_for(f"{c1}?.innerText")
    assert "same as the original SQL" in diff
    assert browser.evaluate(f"{c1}.querySelectorAll('ins, del').length") == 0
    browser.click('.node[data-id="n1.2"]')
    browser.wait_for("document.getElementById('detail').innerText.includes('n1.2')")
    added = browser.evaluate(
        "[...document.querySelectorAll('#detail .diff-lines ins')].map(e => e.textContent)"
    )
    assert {"b1", "b2", "start_time", "end_time"} <= set(added)
    assert "SELECT" not in added and "FROM" not in added  # shared tokens are not changes
    assert browser.exceptions == []


def asking(task, *, wait: bool = True, max_seconds: float = 300) -> dict:
    """A request that may ask the person, with one candidate a pool (the script's)."""
    return {
        "database": "demo",
        "question": task.question,
        "sql": task.sql,
        "options": {"candidates": 1, "budget": {"max_seconds": max_seconds}},
        "ask": True,
        "wait": wait,
    }


def test_the_service_page_shows_the_readings_as_buttons_and_sends_the_choice(browser, tmp_path):
    task = get_task("figure3")
    config = service_config(tmp_path, script=ask_script(task.sql))
    with running_service(config) as svc, svc.client() as client:
        started = client.post("/v1/correct", json=asking(task, wait=False)).json()
        browser.open(svc.base_url + started["links"]["viewer"])
        browser.wait_for("document.querySelectorAll('#choice button.choose').length === 2")
        readings = browser.evaluate(
            "[...document.querySelectorAll('#choice .reading')].map(el => ({"
            " id: el.dataset.reading, sql: el.querySelector('pre.sql').textContent,"
            " rows: el.querySelectorAll('tbody tr').length}))"
        )
        assert not svc.registry.get(started["run_id"]).done  # the run waits for the person
        browser.screenshot(ARTIFACTS / "viewer-choice.png")
        browser.click('#choice .reading[data-reading="n1.2"] button.choose')
        browser.wait_for("document.body.dataset.state === 'finished'", timeout=20)
        status = browser.wait_for(
            "document.querySelector('#choice .choice-status')?.textContent.startsWith('You chose')"
            " && document.querySelector('#choice .choice-status').textContent"
        )
        chosen = browser.evaluate(
            "[...document.querySelectorAll('#choice .reading.chosen')]"
            ".map(el => el.dataset.reading)"
        )
        buttons = browser.evaluate("document.querySelectorAll('#choice button.choose').length")
        final = client.get(started["links"]["run"]).json()

    assert [r["id"] for r in readings] == ["n1.1", "n1.2"]
    assert readings[1]["sql"] == SECOND and all(r["rows"] >= 1 for r in readings)
    assert status == "You chose n1.2." and chosen == ["n1.2"] and buttons == 0
    assert final["sql"] == SECOND and "the person chose reading n1.2" in final["reason"]
    assert browser.exceptions == [], json.dumps(browser.exceptions)


def test_a_page_without_a_choice_link_shows_the_readings_without_buttons(browser, tmp_path):
    task = get_task("figure3")
    config = service_config(tmp_path, script=ask_script(task.sql))
    with running_service(config) as svc, svc.client() as client:
        reply = client.post("/v1/correct", json=asking(task, max_seconds=3)).json()
        page = tmp_path / "asked.html"
        page.write_text(render_html(svc.registry.get(reply["run_id"]).result))
    browser.open(page.as_uri())
    browser.wait_for("document.body.dataset.state === 'finished'")
    shown = browser.evaluate(
        "({readings: document.querySelectorAll('#choice .reading').length,"
        " buttons: document.querySelectorAll('#choice button').length,"
        " status: document.querySelector('#choice .choice-status').textContent})"
    )
    assert shown["readings"] == 2 and shown["buttons"] == 0
    assert shown["status"].startswith("No choice in time")
    assert browser.exceptions == [], json.dumps(browser.exceptions)
