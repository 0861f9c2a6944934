"""render_html: one self-contained page, its data intact, nothing from the run executable."""

from __future__ import annotations

import base64
import hashlib
import json
import re

from acts_sql.engine.events import EventKind
from acts_sql.viewer import content_security_policy, embed_json, render_html, render_live_html
from viewer.conftest import PAYLOAD

DATA_BLOCK = re.compile(r'<script id="acts-data" type="application/json">(.*?)</script>', re.S)
SCRIPT_BLOCK = re.compile(r"<script>(.*?)</script>", re.S)
STYLE_BLOCK = re.compile(r"<style>(.*?)</style>", re.S)


def payload(page: str) -> dict:
    blocks = DATA_BLOCK.findall(page)
    assert len(blocks) == 1
    return json.loads(blocks[0])


def sha(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_page_carries_the_whole_result(figure3_result):
    page = render_html(figure3_result)
    data = payload(page)
    assert data["mode"] == "static"
    assert data["result"] == json.loads(figure3_result.model_dump_json())
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>acts-sql · Which rooms have overlapping bookings?</title>" in page


def test_the_page_needs_no_network(figure3_result):
    page = render_html(figure3_result)
    assert not re.search(r"<(link|iframe|img|object|embed)\b", page, re.I)
    assert not re.search(r"\b(src|href)\s*=", page, re.I)
    assert "@import" not in page and "url(" not in page
    # exactly the bundled script and style, allowed by hash and nothing else
    scripts = SCRIPT_BLOCK.findall(page)
    styles = STYLE_BLOCK.findall(page)
    assert len(scripts) == 1 and len(styles) == 1
    csp = content_security_policy()
    assert f"script-src '{sha(scripts[0])}'" in csp
    assert f"style-src '{sha(styles[0])}'" in csp
    assert "default-src 'none'" in csp
    assert f'content="{csp}"' in page.replace("&#x27;", "'")


def test_markup_in_the_run_stays_text(hostile_result):
    page = render_html(hostile_result)
    data = payload(page)  # the block is intact and closes where it should
    assert PAYLOAD in data["result"]["question"]
    assert PAYLOAD in data["result"]["original_sql"]
    reasons = {n["id"]: n["reason"] for n in data["result"]["tree"]}
    assert PAYLOAD.replace('"', "'") in reasons["n1.2"]  # an LLM reply, too
    # no raw markup from the run anywhere in the page
    assert "<img" not in page
    assert page.count("</script>") == 2 and page.count("<script") == 2
    assert "<!--" not in page
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "&lt;/script&gt;&lt;img" in title


def test_the_page_carries_the_candidate_pool_and_the_judges_labels(pooled_result):
    data = payload(render_html(pooled_result))["result"]
    candidates = {c["id"]: c for c in data["candidates"]}
    assert len(candidates) == 6
    assert candidates["c1"]["verdict"] == "refused" and candidates["c1"]["origin"] == "raw"
    assert candidates["c3"]["verdict"] == "accepted" and candidates["c3"]["group"] == "g3"
    assert candidates["c2"]["votes"] == 2  # a repeated generation is a vote
    assert {g["id"]: g["votes"] for g in data["groups"]} == {"g1": 1, "g2": 3, "g3": 2, "g4": 1}
    judgement = next(e for e in data["trace"] if e["kind"] == "judgement")
    assert judgement["data"]["labels"] == {"A": "g2", "B": "g3", "C": "g4"}
    assert judgement["data"]["group"] == "g3"
    kinds = [e["kind"] for e in data["trace"]]
    assert kinds.count("candidate") == 7 and "refusal" in kinds and "pool" in kinds


def test_markup_in_a_candidates_sql_and_reason_stays_data(hostile_pool_result):
    page = render_html(hostile_pool_result)
    data = payload(page)["result"]
    candidates = {c["id"]: c for c in data["candidates"]}
    assert PAYLOAD in candidates["c5"]["sql"]
    assert PAYLOAD in candidates["c3"]["reason"]  # the judge's reason
    assert "<img" not in page and "<!--" not in page
    assert page.count("</script>") == 2 and page.count("<script") == 2


def test_the_script_only_ever_inserts_text():
    from importlib.resources import files

    script = files("acts_sql.viewer").joinpath("assets", "viewer.js").read_text()
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
        "srcdoc",
        'setAttribute("on',
        "javascript:",
    ):
        assert sink not in script, sink


def test_embedded_json_cannot_close_its_block():
    value = {"s": "</script><!-- & \u2028 \u2029 <SCRIPT>", "n": [1, 2.5, None, True]}
    text = embed_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == value


def test_the_live_page_points_at_the_run_stream():
    page = render_live_html(
        run_id="abc",
        events_url="/v1/runs/abc/events?key=k",
        result_url="/v1/runs/abc?key=k",
        question=PAYLOAD,
    )
    data = payload(page)
    assert data == {
        "mode": "live",
        "run_id": "abc",
        "events_url": "/v1/runs/abc/events?key=k",
        "result_url": "/v1/runs/abc?key=k",
        "choice_url": None,
        "result": None,
    }
    assert "<img" not in page
    asking = render_live_html(
        run_id="abc",
        events_url="/v1/runs/abc/events?key=k",
        result_url="/v1/runs/abc?key=k",
        choice_url="/v1/runs/abc/choice?key=k",
    )
    assert payload(asking)["choice_url"] == "/v1/runs/abc/choice?key=k"


def test_the_script_names_event_kinds_that_exist(figure3_result):
    from importlib.resources import files

    script = files("acts_sql.viewer").joinpath("assets", "viewer.js").read_text()
    named = set(re.findall(r"\bKIND\.([A-Z_]+)", script))
    assert named and named <= {kind.name for kind in EventKind}
    assert not re.search(r"case \"[a-z_]+\":", script)  # kinds by name, not as strings
    (script,) = SCRIPT_BLOCK.findall(render_html(figure3_result))
    assert 'Object.freeze({"RUN_STARTED":"run_started",' in script
