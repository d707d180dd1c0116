// Polls /api/snapshot and redraws only the runs whose data changed; a new boot_id redraws everything.
(function () {
  "use strict";
  const POLL_MS = Number(document.body.dataset.pollMs) || 1500; // the CSP forbids an inline script
  const runsEl = document.getElementById("runs");
  const statusEl = document.getElementById("status");
  let bootId = null;
  const seen = new Map(); // run id -> JSON of what was drawn

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined) node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function resultText(stage) {
    const o = stage.outputs || {};
    if (stage.name === "crawl" && o.pages !== undefined) {
      const errors = o.internal_errors ? `, ${o.internal_errors} errors` : "";
      return `${o.pages} URLs, ${o.rendered} rendered${errors} (commit ${o.commit})`;
    }
    if (stage.name === "analyze" && o.pages !== undefined) return `${o.pages} pages, ${o.violations} violations`;
    if (stage.name === "analyze" && o.skipped) return o.skipped;
    if (stage.name === "report" && o.destination) return `→ ${o.target || o.destination}`;
    return "";
  }

  function progressText(stage) {
    // a finished stage shows what it produced; a running or failed one how far it got
    if (stage.state === "done" || stage.state === "reused") return resultText(stage);
    const p = stage.progress || {};
    if (stage.name === "crawl" && p.internal_found !== undefined) {
      return `${p.internal_done}(${p.internal_rendered}) / ${p.internal_found} URLs, +${p.external_done}/${p.external_found} ext`;
    }
    if (stage.name === "analyze" && p.pages !== undefined) {
      return `${p.pages} pages, ${p.violations} violations`;
    }
    return "";
  }

  function stageItem(stage) {
    const failure = stage.failure;
    const cls = "stage" + (failure ? ` failure-${failure.class}` : "");
    const label = failure ? `failed: ${failure.reason} (${failure.class})` : stage.state;
    return el("li", {class: cls, "data-stage": stage.name, "data-state": stage.state},
      el("strong", null, stage.name), " ",
      el("span", {class: `badge state-${stage.state}` + (failure ? ` failure-${failure.class}` : "")}, label),
      el("div", {class: "progress"}, progressText(stage)),
      failure && failure.message ? el("div", {class: "message"}, failure.message) : null,
      stage.notes && stage.notes.length ? el("div", {class: "muted notes"}, stage.notes.join("; ")) : null);
  }

  function ageText(run) {
    const age = run.heartbeat_age === null ? "no event yet" : `last event ${Math.round(run.heartbeat_age)} s ago`;
    if (run.hung && run.hung.reason === "stalled") {
      return `${age}; ${run.hung.stage} has made no progress for ${Math.round(run.progress_age)} s`;
    }
    return age;
  }

  function drawRun(card, run) {
    const c = run.counts || {};
    const meta = el("p", {class: "meta muted"},
      el("span", null, run.archive || ""),
      el("span", null, `started ${run.started_at || "?"}`),
      el("span", {class: "age"}, ageText(run)),
      run.resumes ? el("span", null, `resumed ${run.resumes}×`) : null,
      run.exit_code !== null ? el("span", null, `exit ${run.exit_code}`) : null);
    const counts = el("p", {class: "meta counts"},
      el("span", null, `${c.pages ?? "–"} URLs`), el("span", null, `${c.rendered ?? "–"} rendered`),
      el("span", null, `${c.violations ?? "–"} violations`));
    const verdict = run.verdict ? el("p", {class: "verdict " + (run.verdict.passed ? "state-complete" : "state-failed")},
      (run.verdict.passed ? "quality gate passed: " : "quality gate failed: ") +
      run.verdict.checks.map((k) => `${k.check} (${k.value})`).join(", ")) : null;
    // replaceChildren would draw a null as the text "null": absent parts are left out
    card.replaceChildren(...[
      el("h2", null, el("span", {class: `badge state-${run.state}`}, run.state), " ", run.url || run.id),
      el("p", {class: "muted"}, run.id), meta, counts, verdict,
      el("ul", {class: "stages"}, ...run.stages.map(stageItem))].filter((part) => part !== null));
    card.dataset.state = run.state;
    card.dataset.redraws = String(Number(card.dataset.redraws || 0) + 1);
  }

  function apply(snapshot) {
    if (snapshot.boot_id !== bootId) { // the server restarted: nothing drawn so far can be trusted
      bootId = snapshot.boot_id;
      seen.clear();
      runsEl.replaceChildren();
    }
    const t = snapshot.totals;
    document.getElementById("totals").textContent =
      `${snapshot.runs.length} runs: ${t.running} running, ${t.hung} hung, ${t.complete} complete, ` +
      `${t.failed} failed, ${t.stopped} stopped, ${t.interrupted} interrupted`;
    document.getElementById("empty").hidden = snapshot.runs.length > 0;
    const wanted = new Set(snapshot.runs.map((r) => r.id));
    for (const card of [...runsEl.children]) {
      if (!wanted.has(card.dataset.run)) { card.remove(); seen.delete(card.dataset.run); }
    }
    let previous = null;
    for (const run of snapshot.runs) {
      // the ages grow on every poll: they are updated in place, not a reason to redraw the run
      const json = JSON.stringify({...run, heartbeat_age: null, progress_age: null});
      let card = runsEl.querySelector(`[data-run="${CSS.escape(run.id)}"]`);
      if (!card) card = el("section", {class: "run", "data-run": run.id, "aria-label": `run ${run.id}`});
      if (seen.get(run.id) !== json) { drawRun(card, run); seen.set(run.id, json); }
      else { card.querySelector(".age").textContent = ageText(run); }
      const place = previous ? previous.nextSibling : runsEl.firstChild;
      if (place !== card) runsEl.insertBefore(card, place);
      previous = card;
    }
  }

  async function poll() {
    try {
      const response = await fetch("api/snapshot", {cache: "no-store"});
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      apply(await response.json());
      statusEl.textContent = `updated ${new Date().toLocaleTimeString()}`;
      statusEl.dataset.polls = String(Number(statusEl.dataset.polls || 0) + 1);
    } catch (err) {
      statusEl.textContent = `cannot reach the dashboard server (${err.message}); retrying`;
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }
  poll();
})();
