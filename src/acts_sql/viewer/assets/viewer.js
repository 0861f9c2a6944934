/* acts-sql debugging-tree viewer.
 *
 * Reads its data from the JSON block #acts-data (a finished run's result, or
 * the URLs of a live run's event stream) and draws the tree of tool calls.
 * Everything from the run (SQL, LLM text, values) is untrusted: it is only
 * ever inserted as text (textContent / text nodes), never parsed as HTML.
 */
"use strict";
(function () {
  const NODE_W = 250;
  const NODE_H = 166;
  const GAP_X = 28;
  const GAP_Y = 56;
  const MAX_DIFF_CELLS = 400000;
  /* the trace event kinds by name ({RUN_STARTED: "run_started", ...}), written in when the
   * page is built from acts_sql.engine.events.EventKind */
  const KIND = Object.freeze(/* EVENT_KINDS */ {});

  const dataBlock = document.getElementById("acts-data");
  const DATA = JSON.parse(dataBlock ? dataBlock.textContent : "{}");

  /* ---------- DOM helpers (text only, never HTML) ---------- */

  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") el.className = value;
      else if (key === "text") el.textContent = String(value);
      else if (key === "data") for (const [k, v] of Object.entries(value)) el.dataset[k] = String(v);
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === undefined || kid === null || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }

  function put(host, ...kids) {
    for (const kid of kids.flat(Infinity)) {
      if (kid === undefined || kid === null || kid === false) continue;
      host.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
  }

  function svg(tag, attrs) {
    const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
    return el;
  }

  function pretty(value) {
    if (value === undefined || value === null) return "";
    if (typeof value === "string") return value;
    try {
      return JSON.stringify(value, null, 2);
    } catch (err) {
      return String(value);
    }
  }

  function clip(text, limit) {
    const s = String(text || "");
    return s.length <= limit ? s : s.slice(0, limit - 1) + "…";
  }

  /* ---------- the run's state, built from trace events ---------- */

  function newState() {
    return {
      nodes: new Map(),
      seen: new Set(),
      meta: { question: "", original_sql: "", method: "", dialect: "" },
      final: null,
      status: "running",
      error: null,
      result: null,
      eventCount: 0,
      selected: null,
      candidates: new Map(),
      groups: new Map(),
      replans: [],
      expanded: new Set(),
      choice: null,
    };
  }

  function ensure(st, id) {
    let node = st.nodes.get(id);
    if (!node) {
      node = {
        id: id,
        tool: "",
        description: "",
        input: null,
        children: [],
        parent: null,
        status: "pending",
        summary: "",
        reason: "",
        candidate_sql: null,
        output: null,
        error: null,
        pruned: false,
        prunedReason: "",
        chosenReason: "",
        statements: [],
        llm: [],
        candidate: null,
        pool: [],
        poolSummary: "",
        judgements: [],
        winner: null,
      };
      st.nodes.set(id, node);
    }
    return node;
  }

  function link(st, parentId, childId) {
    if (parentId === childId) return;
    const parent = ensure(st, parentId);
    const child = ensure(st, childId);
    if (child.parent && child.parent !== parentId) return;
    child.parent = parentId;
    if (!parent.children.includes(childId)) parent.children.push(childId);
  }

  function inferParent(st, node) {
    if (node.parent) return;
    const cut = node.id.lastIndexOf(".");
    if (cut > 0) {
      const parentId = node.id.slice(0, cut);
      if (st.nodes.has(parentId)) link(st, parentId, node.id);
    }
  }

  /* ---------- candidate pools and result groups ---------- */

  function ensureCandidate(st, id) {
    let cand = st.candidates.get(id);
    if (!cand) {
      cand = {
        id: id,
        node: "",
        sql: "",
        origin: "",
        votes: 0,
        status: "",
        group: null,
        verdict: "unjudged",
        reason: "",
        judge: null,
        result: null,
        preview: "",
        order: st.candidates.size,
      };
      st.candidates.set(id, cand);
    }
    return cand;
  }

  function ensureGroup(st, id) {
    let group = st.groups.get(id);
    if (!group) {
      group = { id: id, fingerprint: "", members: [], votes: 0, rejected_reason: "" };
      st.groups.set(id, group);
    }
    return group;
  }

  function addToPool(node, id) {
    if (!node.pool.includes(id)) node.pool.push(id);
  }

  /* one `candidate` event is one generation: a new candidate, or a vote for a known one */
  function applyCandidate(st, node, event) {
    const d = event.data || {};
    if (!d.candidate) return;
    const cand = ensureCandidate(st, String(d.candidate));
    cand.votes += 1;
    if (!d.duplicate || !cand.sql) {
      cand.node = cand.node || node.id;
      cand.sql = d.sql || cand.sql;
      cand.origin = d.origin || cand.origin;
      cand.status = d.status || cand.status;
      if (!d.duplicate) cand.preview = event.summary || "";
    }
    if (d.verdict) cand.verdict = d.verdict;
    if (d.reason) cand.reason = d.reason;
    if (d.group) {
      cand.group = String(d.group);
      const group = ensureGroup(st, cand.group);
      group.votes += 1;
      if (!group.members.includes(cand.id)) group.members.push(cand.id);
    }
    addToPool(node, cand.id);
  }

  function applyRefusal(st, node, event) {
    const d = event.data || {};
    if (!d.candidate) return;
    const cand = ensureCandidate(st, String(d.candidate));
    cand.verdict = d.verdict || "refused";
    cand.reason = event.summary || cand.reason;
    if (d.sql && !cand.sql) cand.sql = d.sql;
    if (node) addToPool(node, cand.id);
  }

  function applyPool(node, event) {
    const d = event.data || {};
    node.poolSummary = event.summary || node.poolSummary;
    for (const id of d.candidates || []) addToPool(node, String(id));
  }

  /* what the judge (or the engine) decided for a node's pool */
  function applyJudgement(st, node, event) {
    const d = event.data || {};
    const verdict = d.verdict === "accept" ? "accept" : "reject";
    const judgement = {
      verdict: verdict,
      by: d.by || "agent",
      group: d.group || null,
      candidate: d.candidate || null,
      labels: d.labels && typeof d.labels === "object" ? d.labels : {},
      reason: event.summary || "",
      backtrack_to: d.backtrack_to || null,
      judged: d.judged !== false,
      overruled: node.overruled || [],
    };
    node.overruled = [];
    node.judgements.push(judgement);
    if (verdict === "accept" && judgement.candidate) {
      const cand = ensureCandidate(st, String(judgement.candidate));
      Object.assign(cand, { verdict: "accepted", judge: "accept", reason: judgement.reason });
      node.winner = cand.id;
      if (d.sql) node.candidate_sql = d.sql;
    } else if (verdict === "reject" && judgement.by === "agent" && Object.keys(judgement.labels).length) {
      rejectShownGroups(st, node, judgement);
    }
  }

  /* the judge rejected every group it was shown: so did the engine, for every runnable unjudged
   * candidate, except in the groups whose rejection it overruled (`overruled` events just before) */
  function rejectShownGroups(st, node, judgement) {
    for (const id of node.pool) {
      const cand = st.candidates.get(id);
      if (cand && cand.verdict === "unjudged" && cand.status === "ok" && !judgement.overruled.includes(String(cand.group))) {
        Object.assign(cand, { verdict: "rejected", judge: "reject", reason: judgement.reason });
      }
    }
    for (const groupId of Object.values(judgement.labels)) {
      if (!judgement.overruled.includes(String(groupId))) ensureGroup(st, String(groupId)).rejected_reason = judgement.reason;
    }
  }

  /* the finished run's candidates and groups are authoritative (and carry first rows) */
  function applyPools(st, result) {
    for (const item of result.candidates || []) {
      const cand = ensureCandidate(st, String(item.id));
      for (const key of ["node", "sql", "origin", "votes", "group", "verdict", "reason", "judge", "order"]) {
        if (item[key] !== undefined) cand[key] = item[key];
      }
      if (item.result) {
        cand.result = item.result;
        cand.status = item.result.status || cand.status;
      }
      if (cand.node && st.nodes.has(cand.node)) addToPool(st.nodes.get(cand.node), cand.id);
    }
    for (const item of result.groups || []) {
      const group = ensureGroup(st, String(item.id));
      for (const key of ["fingerprint", "members", "votes", "rejected_reason"]) {
        if (item[key] !== undefined) group[key] = item[key];
      }
    }
  }

  function applyPlan(st, data) {
    // `nodes`: the plan as the engine runs it (repaired, chained, renamed on a re-plan);
    // older traces only have `plan`, the agent's reply as written
    const items = Array.isArray(data.nodes) ? data.nodes : data.plan && data.plan.nodes;
    if (!Array.isArray(items)) return;
    for (const item of items) {
      const node = ensure(st, String(item.id));
      node.tool = item.tool || node.tool;
      node.description = item.description || node.description;
      if (item.input) node.input = item.input;
    }
    for (const item of items) {
      for (const child of item.children || []) link(st, String(item.id), String(child));
    }
  }

  function applyEvent(st, event) {
    if (typeof event.seq !== "number" || st.seen.has(event.seq)) return;
    st.seen.add(event.seq);
    st.eventCount = st.seen.size;
    const d = event.data || {};
    const node = event.node ? ensure(st, String(event.node)) : null;
    switch (event.kind) {
      case KIND.RUN_STARTED:
        st.meta.question = d.question || "";
        st.meta.original_sql = d.sql || "";
        st.meta.method = d.method || "";
        st.meta.dialect = d.dialect || "";
        break;
      case KIND.INITIAL_SQL:
        if (d.sql) st.meta.original_sql = d.sql;
        break;
      case KIND.PLAN:
      case KIND.PLAN_FAILED:
        applyPlan(st, d);
        break;
      case KIND.NODE_STARTED:
        node.tool = event.tool || node.tool;
        node.description = event.summary || node.description;
        if (d.input) node.input = d.input;
        node.status = "running";
        inferParent(st, node);
        break;
      case KIND.NODE_FINISHED:
        if (event.tool) node.tool = event.tool;
        node.status = d.status || "done";
        node.summary = event.summary || "";
        node.output = d.output === undefined ? null : d.output;
        if (node.output && typeof node.output.sql === "string") node.candidate_sql = node.output.sql;
        node.error = d.error || null;
        inferParent(st, node);
        break;
      case KIND.EXPANDED:
      case KIND.GRAFTED:
        for (const child of d.children || []) {
          link(st, node.id, String(child));
          const kid = ensure(st, String(child));
          if (event.kind === KIND.EXPANDED && !kid.tool) kid.tool = "generate_sql";
        }
        break;
      case KIND.FIX_INSERTED:
        if (d.child) {
          link(st, node.id, String(d.child));
          ensure(st, String(d.child)).tool = "split_fix_syntax";
        }
        break;
      case KIND.CHOICE:
        if (d.cursor) ensure(st, String(d.cursor)).chosenReason = event.summary || "chosen";
        break;
      case KIND.CANDIDATE:
        node.candidate = { sql: d.sql || "", status: d.status || "", summary: event.summary || "" };
        if (!node.candidate_sql) node.candidate_sql = d.sql || null;
        applyCandidate(st, node, event);
        break;
      case KIND.REFUSAL:
        applyRefusal(st, node, event);
        break;
      case KIND.POOL:
        if (node) applyPool(node, event);
        break;
      case KIND.OVERRULED:
        if (node && d.group) (node.overruled = node.overruled || []).push(String(d.group));
        break;
      case KIND.JUDGEMENT:
        node.reason = event.summary || "";
        node.status = d.verdict === "accept" ? "accepted" : "rejected";
        applyJudgement(st, node, event);
        break;
      case KIND.REPLAN:
        st.replans.push({ summary: event.summary || "", lessons: d.lessons || "" });
        break;
      case KIND.PRUNED:
        for (const id of d.nodes || []) {
          const hit = ensure(st, String(id));
          hit.pruned = true;
          hit.prunedReason = d.reason || event.summary || "";
          if (hit.status !== "rejected") hit.status = "pruned";
        }
        break;
      case KIND.STATEMENT:
        if (node) node.statements.push(Object.assign({ purpose: event.purpose }, d));
        break;
      case KIND.LLM_CALL:
        if (node) node.llm.push({ purpose: event.purpose, summary: event.summary, data: d });
        break;
      case KIND.CHOICE_NEEDED:
        st.choice = { readings: d.readings || [], timeout: d.timeout, made: null, sent: null, note: "" };
        break;
      case KIND.CHOICE_MADE:
        if (!st.choice) st.choice = { readings: [], timeout: null, made: null, sent: null, note: "" };
        st.choice.made = { reading: d.reading || null, by: d.by || "" };
        break;
      case KIND.RUN_FINISHED:
        st.final = { accepted: !!d.accepted, sql: d.sql || "", node: d.node || null };
        st.final.reason = event.summary || "";
        st.status = "finished";
        break;
      default:
        break;
    }
  }

  function applyResult(st, result) {
    st.result = result;
    const events = (result.trace || []).slice().sort((a, b) => a.seq - b.seq);
    for (const event of events) applyEvent(st, event);
    for (const item of result.tree || []) {
      const node = ensure(st, String(item.id));
      for (const key of ["tool", "description", "input", "status", "summary", "reason"]) {
        if (item[key] !== undefined && item[key] !== null && item[key] !== "") node[key] = item[key];
      }
      if (item.candidate_sql) node.candidate_sql = item.candidate_sql;
      if (node.status === "pruned") node.pruned = true;
    }
    for (const item of result.tree || []) {
      for (const child of item.children || []) link(st, String(item.id), String(child));
    }
    dropDiscarded(st, result.tree || []);
    applyPools(st, result);
    st.meta.question = result.question || st.meta.question;
    st.meta.original_sql = result.original_sql || st.meta.original_sql;
    st.meta.method = result.method || st.meta.method;
    st.meta.dialect = result.dialect || st.meta.dialect;
    const fin = st.final || { node: null };
    st.final = {
      accepted: !!result.accepted,
      sql: result.sql || "",
      node: fin.node,
      reason: result.reason || fin.reason || "",
    };
    st.status = "finished";
  }

  function dropDiscarded(st, tree) {
    // the final tree is what the engine kept: a node the events named but the tree does not
    // hold is not drawn; one that did work (statements, LLM calls) stays, marked discarded
    if (!tree.length) return;
    const kept = new Set(tree.map((item) => String(item.id)));
    for (const node of [...st.nodes.values()]) {
      if (kept.has(node.id)) continue;
      if (node.statements.length || node.llm.length || node.pool.length) {
        node.status = "discarded";
        continue;
      }
      st.nodes.delete(node.id);
      const parent = node.parent ? st.nodes.get(node.parent) : null;
      if (parent) parent.children = parent.children.filter((c) => c !== node.id);
      for (const child of node.children) {
        const kid = st.nodes.get(child);
        if (kid && kid.parent === node.id) kid.parent = null;
      }
    }
  }

  /* ---------- derived views ---------- */

  function finalNodeId(st) {
    if (st.final && st.final.node && st.nodes.has(st.final.node)) return st.final.node;
    for (const node of st.nodes.values()) if (node.status === "accepted") return node.id;
    return null;
  }

  function pathTo(st, id) {
    const path = new Set();
    let cur = id;
    while (cur && !path.has(cur) && st.nodes.has(cur)) {
      path.add(cur);
      cur = st.nodes.get(cur).parent;
    }
    return path;
  }

  function nodeSql(st, node) {
    const winner = node.winner ? st.candidates.get(node.winner) : null;
    if (winner && winner.sql) return winner.sql;
    if (node.candidate_sql) return node.candidate_sql;
    if (node.candidate && node.candidate.sql) return node.candidate.sql;
    if (node.output && typeof node.output.sql === "string") return node.output.sql;
    if (node.input && typeof node.input.sql === "string") return node.input.sql;
    return "";
  }

  function resultLine(node) {
    if (node.status === "running") return "running…";
    const text = node.summary || "";
    const match = text.match(/^result: (.*)$/m);
    if (match) return match[1];
    if (node.status === "pending" && !text) return "not run";
    return text.replace(/^candidate:\s*/, "").split("\n")[0];
  }

  function inputLine(node) {
    if (node.description) return node.description;
    if (node.input && Object.keys(node.input).length) return JSON.stringify(node.input);
    return "";
  }

  function layout(st) {
    const roots = [...st.nodes.values()].filter((n) => !n.parent || !st.nodes.has(n.parent));
    const placed = new Map();
    let column = 0;
    let maxDepth = 0;
    function place(node, depth, trail) {
      if (trail.has(node.id) || placed.has(node.id)) return;
      trail.add(node.id);
      maxDepth = Math.max(maxDepth, depth);
      const kids = node.children.map((id) => st.nodes.get(id)).filter((k) => k && !placed.has(k.id));
      const spot = { depth: depth, x: 0 };
      placed.set(node.id, spot);
      if (!kids.length) {
        spot.x = column;
        column += 1;
      } else {
        for (const kid of kids) place(kid, depth + 1, trail);
        const xs = kids.map((k) => placed.get(k.id)).filter(Boolean).map((p) => p.x);
        spot.x = xs.length ? (Math.min(...xs) + Math.max(...xs)) / 2 : column++;
      }
      trail.delete(node.id);
    }
    for (const root of roots) place(root, 0, new Set());
    return { placed: placed, columns: Math.max(column, 1), rows: maxDepth + 1 };
  }

  /* ---------- SQL diff on tokens (LCS) ---------- */

  // words, numbers, 'strings', "quoted" / `quoted` / [quoted] names, comments, operators
  const TOKEN = /\s+|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?|[A-Za-z_][A-Za-z0-9_$]*|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+|::|<=|>=|<>|!=|\|\||[^\s]/g;

  function sqlTokens(text) {
    // tokens with the whitespace before them; `key` ignores the case of unquoted words
    const out = [];
    let space = "";
    for (const match of String(text || "").matchAll(TOKEN)) {
      const tok = match[0];
      if (/^\s+$/.test(tok)) {
        space += tok;
        continue;
      }
      const word = /^[A-Za-z_]/.test(tok);
      out.push({ text: tok, space: space, key: word ? tok.toLowerCase() : tok });
      space = "";
    }
    return out;
  }

  function tokenDiff(before, after) {
    // [op, token] with op " " (same), "-" (only before), "+" (only after); null when too big
    const a = sqlTokens(before);
    const b = sqlTokens(after);
    const n = a.length;
    const m = b.length;
    if (n * m > MAX_DIFF_CELLS) return null;
    const table = [];
    for (let i = 0; i <= n; i++) table.push(new Int32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i][j] =
          a[i].key === b[j].key ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    const out = [];
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[i].key === b[j].key) {
        out.push([" ", b[j]]);
        i++;
        j++;
      } else if (table[i + 1][j] >= table[i][j + 1]) {
        out.push(["-", a[i++]]);
      } else {
        out.push(["+", b[j++]]);
      }
    }
    while (i < n) out.push(["-", a[i++]]);
    while (j < m) out.push(["+", b[j++]]);
    return out;
  }

  function diffView(before, after) {
    // the new SQL as written (its own layout), removed tokens struck out, added ones marked;
    // whitespace and the case of keywords and unquoted names are not changes
    const ops = tokenDiff(before, after);
    if (ops === null) {
      return h("div", { class: "diff" },
        h("div", { class: "muted", text: "too long to compare; the new SQL:" }),
        h("pre", { class: "diff-lines" }, String(after || "")));
    }
    const changed = ops.some((op) => op[0] !== " ");
    const parts = ops.map((op) => {
      const tok = op[1];
      const space = op[0] === "-" ? (tok.space ? " " : "") : tok.space;
      if (op[0] === " ") return space + tok.text;
      const mark = h(op[0] === "+" ? "ins" : "del", { class: op[0] === "+" ? "add" : "del", text: tok.text });
      return space ? [space, mark] : mark;
    });
    return h(
      "div",
      { class: "diff", data: { changed: changed ? "1" : "0" } },
      changed ? null : h("div", { class: "muted", text: "same as the original SQL (layout and keyword case aside)" }),
      h("pre", { class: "diff-lines" }, parts.flat()),
    );
  }

  /* ---------- tables of execution results ---------- */

  function findTables(value, out, depth) {
    if (!value || typeof value !== "object" || depth > 4 || out.length >= 6) return out;
    if (Array.isArray(value)) {
      const objects = value.length && value.every((v) => v && typeof v === "object" && !Array.isArray(v));
      if (objects) {
        const keys = [...new Set(value.flatMap((v) => Object.keys(v)))];
        const flat = value.every((v) => keys.every((k) => v[k] === null || typeof v[k] !== "object"));
        if (flat) {
          out.push({ columns: keys, rows: value.map((v) => keys.map((k) => v[k])), note: "" });
          return out;
        }
      }
      for (const item of value) findTables(item, out, depth + 1);
      return out;
    }
    if (Array.isArray(value.columns) && Array.isArray(value.rows)) {
      const note = [value.status, value.row_count !== undefined ? value.row_count + " row(s)" : "",
        value.truncated ? "truncated" : "", value.error || ""].filter(Boolean).join(" · ");
      out.push({ columns: value.columns.map(String), rows: value.rows, note: note });
      return out;
    }
    for (const item of Object.values(value)) findTables(item, out, depth + 1);
    return out;
  }

  /* the judge's pick when there is one (a pool's greedy candidate may not be it), else the tool's output */
  function executionTables(node) {
    const winner = node.winner ? st.candidates.get(node.winner) : null;
    if (winner && winner.result) return findTables(winner.result, [], 0);
    const out = node.output;
    if (out && typeof out === "object" && Array.isArray(out.pool)) {
      const rest = Object.assign({}, out);
      delete rest.pool; // shown as the Candidates table
      return findTables(rest, [], 0);
    }
    return findTables(out, [], 0);
  }

  function cellText(value) {
    if (value === null || value === undefined) return "NULL";
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  }

  function tableView(table) {
    const rows = table.rows.slice(0, 200);
    return h(
      "div",
      { class: "result-table" },
      table.note ? h("div", { class: "muted", text: table.note }) : null,
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, table.columns.map((c) => h("th", { text: c })))),
        h(
          "tbody",
          {},
          rows.map((row) =>
            h("tr", {}, (Array.isArray(row) ? row : [row]).map((v) =>
              h("td", { class: v === null ? "null" : "", text: cellText(v) }))),
          ),
        ),
      ),
    );
  }

  /* ---------- candidate pools and the judge's comparison ---------- */

  const VERDICT_TEXT = { refused: "refused by the engine" };

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function verdictBadge(verdict) {
    return h("span", { class: "badge v-" + verdict, text: VERDICT_TEXT[verdict] || verdict });
  }

  function labelsByGroup(labels) {
    const out = {};
    for (const [label, groupId] of Object.entries(labels || {})) out[groupId] = label;
    return out;
  }

  /* the latest judgement of a node that showed groups to the judge */
  function shownJudgement(node) {
    for (let i = node.judgements.length - 1; i >= 0; i--) {
      if (Object.keys(node.judgements[i].labels).length) return node.judgements[i];
    }
    return null;
  }

  function poolCandidates(st, ids) {
    return ids.map((id) => st.candidates.get(id)).filter(Boolean);
  }

  function poolCounts(st, node) {
    const cands = poolCandidates(st, node.pool);
    return {
      candidates: cands.length,
      groups: new Set(cands.map((c) => c.group).filter(Boolean)).size,
      refused: cands.filter((c) => c.verdict === "refused").length,
    };
  }

  function poolBadgeText(counts) {
    return [counts.candidates + " cand", plural(counts.groups, "group"),
      counts.refused ? counts.refused + " refused" : ""].filter(Boolean).join(" · ");
  }

  function groupText(cand, byGroup) {
    if (!cand.group) return "—";
    return byGroup[cand.group] ? byGroup[cand.group] + " · " + cand.group : cand.group;
  }

  function statusText(cand) {
    const r = cand && cand.result;
    if (r && r.status === "ok") return "ok · " + r.row_count + (r.truncated ? "+" : "") + " row(s)";
    if (r && r.status) return r.status;
    return (cand && cand.status) || "?";
  }

  /* the member with the most votes, the earliest on a tie (as the engine picks it) */
  function representative(members) {
    return members.slice().sort((a, b) => b.votes - a.votes || a.order - b.order)[0] || null;
  }

  function toggle(key) {
    if (st.expanded.has(key)) st.expanded.delete(key);
    else st.expanded.add(key);
    const panel = document.getElementById("detail");
    const top = panel ? panel.scrollTop : 0;
    renderDetail();
    if (panel) panel.scrollTop = top;
  }

  function candidateRows(cand) {
    const r = cand.result;
    if (r && r.status !== "ok") return h("p", { class: "error", text: r.status + ": " + (r.error || "") });
    if (r) return tableView({ columns: (r.columns || []).map(String), rows: r.rows || [],
      note: r.row_count + (r.truncated ? "+" : "") + " row(s)" + (r.row_count > (r.rows || []).length ? ", first " + (r.rows || []).length + " shown" : "") });
    return h("pre", { class: "summary", text: cand.preview || "(no rows recorded)" });
  }

  function candidateDetail(cand) {
    const why = cand.verdict === "refused"
      ? h("p", { class: "refused-note", text: "Refused by the engine: " + cand.reason })
      : cand.reason ? h("p", { class: "cand-reason", text: cand.verdict + ": " + cand.reason }) : null;
    return h("div", { class: "cand-detail" },
      why,
      h("div", { class: "label", text: "SQL · " + (cand.origin || "?") + " · " + plural(cand.votes, "vote") }),
      h("pre", { class: "sql cand-sql", text: cand.sql }),
      h("div", { class: "label", text: "Diff against the original SQL" }),
      diffView(st.meta.original_sql, cand.sql),
      h("div", { class: "label", text: "First rows" }),
      h("div", { class: "cand-rows" }, candidateRows(cand)));
  }

  function candidateRow(cand, opts) {
    const key = opts.scope + ":" + cand.id;
    const open = st.expanded.has(key);
    const classes = ["cand-row", "v-" + cand.verdict, open ? "open" : ""].filter(Boolean).join(" ");
    const row = h("tr", { class: classes, data: { candidate: cand.id, verdict: cand.verdict }, onclick: () => toggle(key) },
      h("td", { class: "cand-id" }, h("button", { type: "button", class: "toggle", "aria-expanded": open ? "true" : "false",
        "aria-label": (open ? "hide " : "show ") + cand.id }, open ? "▾" : "▸"), " " + cand.id),
      opts.showNode ? h("td", { text: cand.node || "" }) : null,
      h("td", { class: "cand-origin", text: cand.origin || "?" }),
      h("td", { class: "num", text: cand.votes }),
      h("td", { text: statusText(cand) }),
      h("td", { class: "cand-group", text: groupText(cand, opts.byGroup) }),
      h("td", { class: "cand-verdict" }, verdictBadge(cand.verdict),
        cand.reason ? h("div", { class: "cand-why", title: cand.reason, text: clip(cand.reason, 160) }) : null));
    if (!open) return [row];
    const width = opts.showNode ? 7 : 6;
    return [row, h("tr", { class: "cand-more", data: { candidate: cand.id } },
      h("td", { colspan: width }, candidateDetail(cand)))];
  }

  function candidateTable(ids, opts) {
    const cands = poolCandidates(st, ids);
    const heads = ["id", opts.showNode ? "node" : null, "origin", "votes", "status", "group", "verdict · why"];
    return h("div", { class: "pool-wrap" },
      h("table", { class: "pool-table" },
        h("thead", {}, h("tr", {}, heads.filter(Boolean).map((t) => h("th", { text: t })))),
        h("tbody", {}, cands.map((c) => candidateRow(c, opts)))),
      h("div", { class: "muted small-note", text: "Click a candidate to see its SQL, its diff and its first rows." }));
  }

  function groupRow(label, groupId, judgement) {
    const group = st.groups.get(groupId) || { members: [], votes: 0 };
    const members = poolCandidates(st, group.members);
    const chosen = judgement.verdict === "accept" && judgement.group === groupId;
    const rejected = !chosen && judgement.verdict === "reject" && judgement.by === "agent";
    const overruled = rejected && (judgement.overruled || []).includes(groupId);
    const outcome = chosen ? "chosen" : overruled ? "overruled" : rejected ? "rejected" : "not chosen";
    return h("tr", { class: "group-row" + (chosen ? " chosen" : ""), data: { group: groupId, label: label, outcome: outcome } },
      h("td", { class: "group-label", text: label }),
      h("td", { text: groupId }),
      h("td", { class: "num", text: group.votes }),
      h("td", { text: members.map((m) => m.id + " (" + m.origin + ")").join(", ") }),
      h("td", { text: statusText(representative(members)) }),
      h("td", {}, h("span", { class: "badge o-" + outcome.replace(" ", "-"), text: outcome })));
  }

  function judgementLine(judgement) {
    const byGroup = labelsByGroup(judgement.labels);
    const shown = Object.keys(judgement.labels).length;
    let text;
    if (judgement.verdict === "accept") {
      const group = st.groups.get(judgement.group);
      text = "The judge chose group " + (byGroup[judgement.group] || "?") + " (" + judgement.group +
        (group ? ", " + plural(group.votes, "vote") : "") + ")" +
        (judgement.candidate ? "; answer " + judgement.candidate : "") + ": " + judgement.reason;
    } else if (judgement.by === "agent" && shown) {
      text = "The judge rejected all " + plural(shown, "group") + ": " + judgement.reason +
        (judgement.backtrack_to ? " (back to " + judgement.backtrack_to + ")" : "");
    } else if (shown) {
      text = "The engine overruled the judge: " + judgement.reason;
    } else {
      text = "No result group reached the judge; the engine rejected the pool: " + judgement.reason;
    }
    return h("p", { class: "judge-verdict " + judgement.verdict, text: text });
  }

  function judgementView(judgement) {
    const labels = Object.entries(judgement.labels);
    return h("div", { class: "judgement" },
      labels.length ? h("table", { class: "groups-table" },
        h("thead", {}, h("tr", {}, ["label", "group", "votes", "candidates", "result", "judge"].map((t) => h("th", { text: t })))),
        h("tbody", {}, labels.map(([label, groupId]) => groupRow(label, String(groupId), judgement)))) : null,
      judgementLine(judgement));
  }

  function poolSections(node) {
    if (!node.pool.length && !node.judgements.length) return [];
    const shown = shownJudgement(node);
    return [
      section("Judge", node.judgements.map(judgementView)),
      node.pool.length ? section("Candidates (" + poolBadgeText(poolCounts(st, node)) + ")",
        node.poolSummary ? h("p", { class: "muted pool-summary", text: node.poolSummary }) : null,
        candidateTable(node.pool, { scope: node.id, byGroup: labelsByGroup(shown ? shown.labels : {}), showNode: false })) : null,
    ];
  }

  /* ---------- rendering ---------- */

  let st = newState();
  let pending = false;

  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      render();
    });
  }

  function statusBadge(status) {
    return h("span", { class: "badge s-" + status, text: status });
  }

  function renderHeader() {
    const header = document.getElementById("run");
    header.replaceChildren();
    const fin = st.final;
    let verdict;
    if (st.status === "running") verdict = h("span", { class: "badge s-running", text: "running…" });
    else if (st.error) verdict = h("span", { class: "badge s-failed", text: st.status });
    else if (fin && fin.accepted) verdict = h("span", { class: "badge s-accepted", text: "accepted" });
    else verdict = h("span", { class: "badge s-rejected", text: "not accepted" });
    const usage = st.result && st.result.usage;
    put(
      header,
      h("h1", {}, "acts-sql · debugging tree ", verdict),
      h("div", { class: "meta" },
        [st.meta.method && "method " + st.meta.method, st.meta.dialect && "dialect " + st.meta.dialect,
          usage && usage.llm_calls + " LLM calls", usage && usage.prompt_tokens + usage.completion_tokens + " tokens",
          usage && usage.seconds + " s", st.eventCount + " events"].filter(Boolean).join(" · ")),
      h("div", { class: "field" }, h("div", { class: "label", text: "Question / issue" }),
        h("div", { id: "question", class: "question", text: st.meta.question || "(none)" })),
      h("div", { class: "sql-pair" },
        h("div", { class: "field" }, h("div", { class: "label", text: "Original SQL" }),
          h("pre", { id: "original-sql", class: "sql", text: st.meta.original_sql })),
        fin ? h("div", { class: "field" }, h("div", { class: "label", text: fin.accepted ? "Corrected SQL" : "Best candidate (not accepted)" }),
          diffView(st.meta.original_sql, fin.sql)) : null),
      fin && fin.reason ? h("div", { class: "reason", text: "Stopped: " + fin.reason }) : null,
      st.replans.map((r) => h("details", { class: "replan" },
        h("summary", { text: "Replanned: " + r.summary }),
        h("pre", { class: "summary", text: r.lessons || "(no lessons recorded)" }))),
      st.error ? h("div", { class: "error", text: st.error.code + ": " + st.error.message }) : null,
    );
  }

  function renderTree() {
    const host = document.getElementById("tree");
    host.replaceChildren();
    if (!st.nodes.size) {
      host.append(h("div", { class: "muted empty", text: st.status === "running" ? "waiting for the plan…" : "no tree (this method does not build one)" }));
      return;
    }
    const lay = layout(st);
    const width = lay.columns * (NODE_W + GAP_X) + GAP_X;
    const height = lay.rows * (NODE_H + GAP_Y) + GAP_Y;
    const finalId = finalNodeId(st);
    const path = finalId ? pathTo(st, finalId) : new Set();
    const canvas = h("div", { class: "canvas" });
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    const edges = svg("svg", { class: "edges", width: width, height: height, viewBox: "0 0 " + width + " " + height });
    const pos = (id) => {
      const p = lay.placed.get(id);
      return { x: GAP_X + p.x * (NODE_W + GAP_X), y: GAP_Y / 2 + p.depth * (NODE_H + GAP_Y) };
    };
    for (const node of st.nodes.values()) {
      if (!node.parent || !lay.placed.has(node.parent) || !lay.placed.has(node.id)) continue;
      const a = pos(node.parent);
      const b = pos(node.id);
      const x1 = a.x + NODE_W / 2;
      const y1 = a.y + NODE_H;
      const x2 = b.x + NODE_W / 2;
      const y2 = b.y;
      const mid = (y1 + y2) / 2;
      const onPath = path.has(node.id) && path.has(node.parent);
      const cls = ["edge", onPath ? "on-path" : "", node.pruned || node.status === "pruned" ? "pruned" : ""].join(" ");
      edges.append(svg("path", { class: cls, d: `M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2}`, "data-edge": node.parent + "->" + node.id }));
    }
    canvas.append(edges);
    for (const node of st.nodes.values()) {
      if (!lay.placed.has(node.id)) continue;
      const p = pos(node.id);
      const isFinal = node.id === finalId;
      const classes = ["node", "s-" + node.status, node.pruned ? "pruned" : "", path.has(node.id) ? "on-path" : "",
        isFinal && node.status === "accepted" ? "final" : "", st.selected === node.id ? "selected" : ""];
      const box = h(
        "div",
        {
          class: classes.filter(Boolean).join(" "),
          role: "button",
          tabindex: "0",
          "aria-label": "node " + node.id,
          data: { id: node.id, status: node.status, pruned: node.pruned ? "1" : "0" },
          onclick: () => select(node.id),
          onkeydown: (ev) => {
            if (ev.key === "Enter" || ev.key === " ") {
              ev.preventDefault();
              select(node.id);
            }
          },
        },
        h("div", { class: "node-head" },
          h("span", { class: "node-id", text: node.id }),
          h("span", { class: "node-tool", text: node.tool || "?" }),
          statusBadge(node.status)),
        h("div", { class: "node-input", title: inputLine(node), text: clip(inputLine(node), 160) }),
        h("div", { class: "node-result", text: clip(resultLine(node), 120) }),
        node.pool.length ? h("div", { class: "node-pool" },
          h("span", { class: "pool-badge", title: node.poolSummary || "", text: poolBadgeText(poolCounts(st, node)) })) : null,
        node.pruned ? h("div", { class: "node-reason", text: "pruned: " + clip(node.prunedReason, 140) }) : null,
        !node.pruned && node.status === "rejected" && node.reason ? h("div", { class: "node-reason", text: "rejected: " + clip(node.reason, 140) }) : null,
        isFinal && node.status === "accepted" ? h("div", { class: "node-mark", text: "✓ accepted answer" }) : null,
        node.chosenReason ? h("div", { class: "node-chosen", title: node.chosenReason, text: "↳ chosen by the agent" }) : null,
      );
      box.style.left = p.x + "px";
      box.style.top = p.y + "px";
      box.style.width = NODE_W + "px";
      box.style.height = NODE_H + "px";
      canvas.append(box);
    }
    host.append(canvas);
  }

  function section(title, ...content) {
    const body = content.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false && c !== "");
    if (!body.length) return null;
    return h("section", {}, h("h3", { text: title }), body);
  }

  function renderDetail() {
    const host = document.getElementById("detail");
    host.replaceChildren();
    const node = st.selected ? st.nodes.get(st.selected) : null;
    if (!node) {
      host.append(h("div", { class: "muted", text: "Click a node to see its input, output, SQL and results." }));
      if (st.candidates.size) {
        put(host, section("All candidates of the run",
          candidateTable([...st.candidates.keys()], { scope: "run", byGroup: {}, showNode: true })));
      }
      return;
    }
    const sql = nodeSql(st, node);
    const tables = executionTables(node);
    put(
      host,
      h("h2", {}, node.id + " · " + (node.tool || "?") + " ", statusBadge(node.status)),
      node.description ? h("p", { class: "description", text: node.description }) : null,
      section("Why",
        node.chosenReason ? h("p", { text: "chosen: " + node.chosenReason }) : null,
        node.reason ? h("p", { text: (node.status === "accepted" ? "accepted: " : "judged: ") + node.reason }) : null,
        node.pruned ? h("p", { class: "pruned-reason", text: "pruned: " + node.prunedReason }) : null),
      poolSections(node),
      section("Input", h("pre", { class: "json", id: "detail-input", text: pretty(node.input || {}) })),
      sql ? section("SQL", h("pre", { class: "sql", id: "detail-sql", text: sql }),
        h("div", { class: "label", text: "Diff against the original SQL" }), diffView(st.meta.original_sql, sql)) : null,
      section("Execution result", tables.map(tableView),
        node.statements.map((s) => h("div", { class: "statement" },
          h("div", { class: "muted", text: [s.purpose, s.status, s.row_count === undefined ? "" : s.row_count + " row(s)",
            s.seconds === undefined ? "" : (s.seconds * 1000).toFixed(1) + " ms", s.error || ""].filter((x) => x !== "" && x !== null && x !== undefined).join(" · ") }),
          h("pre", { class: "sql small", text: s.sql || "" })))),
      section("Output", node.error ? h("p", { class: "error", text: node.error }) : null,
        node.summary ? h("pre", { class: "summary", text: node.summary }) : null,
        node.output !== null ? h("pre", { class: "json", id: "detail-output", text: pretty(node.output) }) : null),
      section("LLM calls", node.llm.map((c) => h("details", {},
        h("summary", { text: (c.purpose || "") + " · " + (c.summary || "") }),
        h("pre", { class: "json", text: pretty(c.data.response !== undefined ? c.data.response : c.data) })))),
    );
  }

  /* ---------- asking the person (a run started with "ask": true) ---------- */

  function chooseReading(id) {
    const choice = st.choice;
    if (!choice || choice.made || choice.sent || !DATA.choice_url) return;
    choice.sent = id;
    choice.note = "sending…";
    renderChoice();
    fetch(DATA.choice_url, {
      method: "POST",
      credentials: "same-origin",
      cache: "no-store",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ reading: id }),
    })
      .then((r) => r.json().catch(() => ({})).then((body) => ({ ok: r.ok, status: r.status, body: body })))
      .then((reply) => {
        if (reply.ok) {
          choice.note = "sent: the run goes on with " + id;
        } else {
          const err = (reply.body && reply.body.error) || {};
          choice.sent = null;
          choice.note = "not taken (HTTP " + reply.status + "): " + (err.message || "no detail");
        }
        renderChoice();
      })
      .catch((err) => {
        choice.sent = null;
        choice.note = "not sent: " + err.message;
        renderChoice();
      });
  }

  function readingCard(option, choice) {
    const chosen = choice.made ? choice.made.reading === option.id : choice.sent === option.id;
    const open = !choice.made && !choice.sent && !!DATA.choice_url && st.status === "running";
    return h("div", { class: "reading" + (chosen ? " chosen" : ""), data: { reading: option.id } },
      h("div", { class: "reading-head" },
        h("span", { class: "node-id", text: option.id }),
        h("span", { class: "reading-text", text: option.reading || "(no reading text)" })),
      h("pre", { class: "sql small", text: option.sql || "" }),
      tableView({ columns: (option.columns || []).map(String), rows: option.rows || [],
        note: plural(option.row_count || 0, "row") + ((option.rows || []).length < (option.row_count || 0) ? ", the first " + option.rows.length + " shown" : "") }),
      open ? h("button", { type: "button", class: "choose", "aria-label": "choose reading " + option.id,
        onclick: () => chooseReading(option.id) }, "Use this reading") : null,
      chosen ? h("div", { class: "node-mark", text: choice.made ? "✓ chosen" : "✓ sent" }) : null);
  }

  function renderChoice() {
    const host = document.getElementById("choice");
    if (!host) return;
    host.replaceChildren();
    const choice = st.choice;
    host.hidden = !choice;
    if (!choice) return;
    let status;
    if (choice.made) {
      status = choice.made.by === "person"
        ? "You chose " + choice.made.reading + "."
        : "No choice in time: the engine returns its own best candidate.";
    } else if (!DATA.choice_url) {
      status = "The run asked which reading was meant.";
    } else {
      const wait = typeof choice.timeout === "number" ? " within " + Math.round(choice.timeout) + " s" : "";
      status = "Choose one" + wait + "; without an answer the engine returns its own best candidate.";
    }
    put(host,
      h("h2", { text: "The request reads more than one way, and the readings return different rows" }),
      h("p", { class: "choice-status", role: "status", text: status }),
      choice.note ? h("p", { class: "choice-note", text: choice.note }) : null,
      h("div", { class: "readings" }, choice.readings.map((option) => readingCard(option, choice))));
  }

  function render() {
    renderHeader();
    renderChoice();
    renderTree();
    renderDetail();
    document.body.dataset.state = st.status;
    document.body.dataset.nodes = String(st.nodes.size);
    document.body.dataset.events = String(st.eventCount);
  }

  function select(id) {
    st.selected = id;
    for (const el of document.querySelectorAll(".node.selected")) el.classList.remove("selected");
    for (const el of document.querySelectorAll(".node")) if (el.dataset.id === id) el.classList.add("selected");
    renderDetail();
    const panel = document.getElementById("detail");
    if (panel && panel.scrollIntoView) panel.scrollTop = 0;
  }

  /* ---------- live runs ---------- */

  function live() {
    const source = new EventSource(DATA.events_url);
    const banner = document.getElementById("connection");
    source.addEventListener("trace", (msg) => {
      banner.textContent = "";
      applyEvent(st, JSON.parse(msg.data));
      schedule();
    });
    source.addEventListener("end", (msg) => {
      source.close();
      const info = JSON.parse(msg.data || "{}");
      if (info.status !== "finished") {
        st.status = info.status || "failed";
        st.error = info.error || { code: info.status || "failed", message: "the run did not finish" };
        schedule();
        return;
      }
      fetch(DATA.result_url, { credentials: "same-origin", cache: "no-store" })
        .then((r) => (r.ok ? r.json() : Promise.reject(new Error("HTTP " + r.status))))
        .then((result) => {
          applyResult(st, result);
          schedule();
        })
        .catch((err) => {
          st.status = "finished";
          banner.textContent = "could not load the final result: " + err.message;
          schedule();
        });
    });
    source.onerror = () => {
      if (st.status === "running") banner.textContent = "connection lost; reconnecting…";
    };
  }

  if (DATA.result) applyResult(st, DATA.result);
  if (DATA.mode === "live" && !DATA.result) live();
  render();
  window.actsViewer = { select: select, state: () => st };
})();
