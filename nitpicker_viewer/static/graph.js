// The link graph: a small force layout on a canvas (pan by dragging, zoom with the wheel or +/-, click a node;
// N and P step through the pages by the keyboard, Enter opens one). The legend in graph.html names the colours.
"use strict";
(function () {
  const canvas = document.getElementById("graph");
  if (!canvas) return;
  const ctx = canvas.getContext("2d");
  const hover = document.getElementById("graph-hover");
  const announce = (text) => { const a = document.getElementById("announcer"); if (a) a.textContent = text; };
  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  let nodes = [], edges = [], view = { x: 0, y: 0, k: 1 }, hot = null, ticks = 0, centre = null, order = [];

  function color(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  function layout(data) {
    const index = new Map();
    const add = (url, extra) => {
      if (!index.has(url)) {
        const angle = index.size * 2.399963, r = 12 * Math.sqrt(index.size + 1);
        index.set(url, { url, x: r * Math.cos(angle), y: r * Math.sin(angle), vx: 0, vy: 0, deg: 0, ...extra });
      }
      return index.get(url);
    };
    (data.nodes || []).forEach((n) => add(n.url, { title: n.title || "", status: n.status }));
    edges = data.items.map((e) => ({ s: add(e.source, {}), t: add(e.target, {}) }));
    edges.forEach((e) => { e.s.deg++; e.t.deg++; });
    nodes = Array.from(index.values());
    centre = index.get(canvas.dataset.centre) || null;
    // keyboard order: the centre first, then the most linked pages
    order = nodes.slice().sort((a, b) => (b === centre) - (a === centre) || b.deg - a.deg || (a.url < b.url ? -1 : 1));
  }

  // Repulsion only between nodes in neighbouring grid cells keeps a tick near O(n) for thousands of nodes.
  function tick() {
    const cell = 60, grid = new Map(), alpha = Math.max(0.02, 1 - ticks / 300);
    for (const n of nodes) {
      const key = Math.floor(n.x / cell) + "," + Math.floor(n.y / cell);
      (grid.get(key) || grid.set(key, []).get(key)).push(n);
    }
    for (const n of nodes) {
      const gx = Math.floor(n.x / cell), gy = Math.floor(n.y / cell);
      for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) {
        for (const m of grid.get((gx + dx) + "," + (gy + dy)) || []) {
          if (m === n) continue;
          let ddx = n.x - m.x, ddy = n.y - m.y, d2 = ddx * ddx + ddy * ddy || 0.01;
          if (d2 > cell * cell) continue;
          const f = (400 / d2) * alpha;
          n.vx += ddx * f; n.vy += ddy * f;
        }
      }
      n.vx -= n.x * 0.002 * alpha; n.vy -= n.y * 0.002 * alpha;
    }
    for (const e of edges) {
      const dx = e.t.x - e.s.x, dy = e.t.y - e.s.y, d = Math.sqrt(dx * dx + dy * dy) || 1;
      const f = ((d - 40) / d) * 0.05 * alpha;
      e.s.vx += dx * f; e.s.vy += dy * f; e.t.vx -= dx * f; e.t.vy -= dy * f;
    }
    for (const n of nodes) {
      n.vx = Math.max(-20, Math.min(20, n.vx * 0.6)); n.vy = Math.max(-20, Math.min(20, n.vy * 0.6));
      n.x += n.vx; n.y += n.vy;
    }
    ticks++;
  }

  function fit() {
    if (!nodes.length) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of nodes) { x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.y); x1 = Math.max(x1, n.x); y1 = Math.max(y1, n.y); }
    view.k = Math.min(canvas.width / (x1 - x0 + 40), canvas.height / (y1 - y0 + 40), 4);
    view.x = canvas.width / 2 - view.k * (x0 + x1) / 2; view.y = canvas.height / 2 - view.k * (y0 + y1) / 2;
  }

  function draw() {
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = color("--surface"); ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(view.k, 0, 0, view.k, view.x, view.y);
    ctx.strokeStyle = color("--edge"); ctx.lineWidth = 1 / view.k; ctx.beginPath();
    for (const e of edges) { ctx.moveTo(e.s.x, e.s.y); ctx.lineTo(e.t.x, e.t.y); }
    ctx.stroke();
    const radius = (n) => (3 + Math.min(6, Math.sqrt(n.deg))) / Math.sqrt(view.k);
    for (const n of nodes) {
      const marked = n === hot || n === centre;
      ctx.fillStyle = marked ? color("--accent") : (n.status && n.status >= 400 ? color("--bad") : color("--node"));
      ctx.beginPath(); ctx.arc(n.x, n.y, radius(n) * (marked ? 1.4 : 1), 0, 6.2832); ctx.fill();
      if (marked) { ctx.strokeStyle = color("--text"); ctx.lineWidth = 2 / view.k; ctx.stroke(); }
    }
    // the label of the page under the pointer or the keyboard's choice, drawn beside it
    const labelled = hot || centre;
    if (labelled) {
      ctx.font = (13 / view.k) + "px system-ui, sans-serif";
      const text = labelled.title || labelled.url, x = labelled.x + radius(labelled) * 1.6, y = labelled.y - radius(labelled);
      const w = ctx.measureText(text).width;
      ctx.fillStyle = color("--bg"); ctx.fillRect(x - 2 / view.k, y - 13 / view.k, w + 4 / view.k, 17 / view.k);
      ctx.fillStyle = color("--text"); ctx.fillText(text, x, y);
    }
  }
  function choose(n) {
    hot = n;
    hover.textContent = n ? (n.title ? n.title + " — " : "") + n.url : "";
    canvas.dataset.chosen = n ? n.url : "";
    draw();
  }

  function size() {
    canvas.width = Math.max(300, Math.round(canvas.clientWidth)); canvas.height = Math.max(200, Math.round(canvas.clientHeight));
  }
  window.addEventListener("resize", () => { size(); draw(); });

  function run() {
    size();
    if (reduced) { for (let i = 0; i < 300; i++) tick(); fit(); draw(); return; }
    const step = () => { for (let i = 0; i < 3; i++) tick(); if (ticks < 30) fit(); draw(); if (ticks < 300) requestAnimationFrame(step); };
    requestAnimationFrame(step);
  }

  function at(evt) {
    const r = canvas.getBoundingClientRect();
    const x = ((evt.clientX - r.left) * canvas.width / r.width - view.x) / view.k;
    const y = ((evt.clientY - r.top) * canvas.height / r.height - view.y) / view.k;
    let best = null, bestD = (10 / view.k) ** 2;
    for (const n of nodes) { const d = (n.x - x) ** 2 + (n.y - y) ** 2; if (d < bestD) { best = n; bestD = d; } }
    return best;
  }

  let drag = null;
  canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, moved: false }; });
  window.addEventListener("mouseup", (e) => {
    if (drag && !drag.moved) { const n = at(e); if (n) window.location.href = canvas.dataset.detail + "?url=" + encodeURIComponent(n.url); }
    drag = null;
  });
  canvas.addEventListener("mousemove", (e) => {
    if (drag) {
      const r = canvas.getBoundingClientRect(), s = canvas.width / r.width;
      if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 2) drag.moved = true;
      view.x += (e.clientX - drag.x) * s; view.y += (e.clientY - drag.y) * s; drag.x = e.clientX; drag.y = e.clientY; draw(); return;
    }
    const n = at(e);
    if (n !== hot) choose(n);
  });
  function zoom(f) {
    const cx = canvas.width / 2, cy = canvas.height / 2;
    view.x = cx - (cx - view.x) * f; view.y = cy - (cy - view.y) * f; view.k *= f; draw();
  }
  canvas.addEventListener("wheel", (e) => { e.preventDefault(); zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2); }, { passive: false });
  canvas.addEventListener("keydown", (e) => {
    const moves = { ArrowLeft: [40, 0], ArrowRight: [-40, 0], ArrowUp: [0, 40], ArrowDown: [0, -40] };
    if (e.key === "+" || e.key === "=") zoom(1.2);
    else if (e.key === "-") zoom(1 / 1.2);
    else if (e.key === "0") { fit(); draw(); }
    else if (moves[e.key]) { view.x += moves[e.key][0]; view.y += moves[e.key][1]; draw(); }
    else if ((e.key === "n" || e.key === "p") && order.length) {
      const i = order.indexOf(hot), step = e.key === "n" ? 1 : -1;
      choose(order[i < 0 ? (step > 0 ? 0 : order.length - 1) : (i + step + order.length) % order.length]);
    }
    else if (e.key === "Enter" && hot) window.location.href = canvas.dataset.detail + "?url=" + encodeURIComponent(hot.url);
    else return;
    e.preventDefault();
  });
  new MutationObserver(draw).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });

  announce(canvas.dataset.labelLoading);
  fetch(canvas.dataset.api, { headers: { Accept: "application/json" } })
    .then((r) => { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
    .then((data) => {
      layout(data);
      canvas.dataset.nodes = String(nodes.length); canvas.dataset.edges = String(edges.length);
      const cut = document.getElementById("graph-truncated");
      if (cut && data.truncated) cut.hidden = false;
      run();
      canvas.dataset.drawn = "true";
      announce(canvas.dataset.labelDrawn.replace("{nodes}", nodes.length).replace("{edges}", edges.length));
    })
    .catch(() => announce(canvas.dataset.labelFailed))
    .finally(() => document.getElementById("graph-wrap").removeAttribute("aria-busy"));
})();
