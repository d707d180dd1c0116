// Progressive enhancement for the viewer's pages: theme switch, resizable columns, opt-in infinite scroll, search, tabs.
"use strict";
(function () {
  const store = {
    get(key) { try { return localStorage.getItem(key); } catch (e) { return null; } },
    set(key, value) { try { localStorage.setItem(key, value); } catch (e) { /* storage off */ } },
  };
  const announce = (text) => { const a = document.getElementById("announcer"); if (a) a.textContent = text; };

  // --- theme -------------------------------------------------------------------------------------------
  function setupTheme() {
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    const show = () => {
      const dark = document.documentElement.dataset.theme === "dark";
      button.setAttribute("aria-pressed", dark ? "true" : "false");
      button.textContent = dark ? button.dataset.labelLight : button.dataset.labelDark;
    };
    button.addEventListener("click", () => {
      const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
      document.documentElement.dataset.theme = next;
      store.set("nitpicker-theme", next);
      show();
    });
    show();
  }

  // --- column widths: drag the handle, or focus it and use the arrow keys -------------------------------
  function setupResize(table) {
    const key = "nitpicker-widths:" + location.pathname + ":" + table.id;
    let widths = {};
    try { widths = JSON.parse(store.get(key) || "{}"); } catch (e) { widths = {}; }
    const label = document.body.dataset.resizeLabel || "Resize column";
    table.querySelectorAll("thead th").forEach((th) => {
      const col = th.dataset.col || th.cellIndex;
      if (widths[col]) th.style.width = widths[col] + "px";
      const handle = document.createElement("span");
      handle.className = "col-resize";
      handle.tabIndex = 0;
      handle.setAttribute("role", "separator");
      handle.setAttribute("aria-orientation", "vertical");
      handle.setAttribute("aria-label", label.replace("{column}", th.textContent.trim()));
      const save = (width) => {
        width = Math.max(48, Math.round(width));
        th.style.width = width + "px";
        table.classList.add("fixed");
        handle.setAttribute("aria-valuenow", String(width));
        widths[col] = width;
        store.set(key, JSON.stringify(widths));
      };
      handle.setAttribute("aria-valuenow", String(Math.round(th.getBoundingClientRect().width)));
      handle.setAttribute("aria-valuemin", "48");
      handle.addEventListener("keydown", (e) => {
        const step = e.shiftKey ? 50 : 10;
        if (e.key === "ArrowRight") save(th.getBoundingClientRect().width + step);
        else if (e.key === "ArrowLeft") save(th.getBoundingClientRect().width - step);
        else return;
        e.preventDefault();
      });
      handle.addEventListener("pointerdown", (e) => {
        e.preventDefault();
        const startX = e.clientX, startW = th.getBoundingClientRect().width;
        const move = (m) => save(startW + m.clientX - startX);
        const up = () => { window.removeEventListener("pointermove", move); window.removeEventListener("pointerup", up); };
        window.addEventListener("pointermove", move);
        window.addEventListener("pointerup", up);
      });
      handle.addEventListener("click", (e) => e.preventDefault());
      th.appendChild(handle);
    });
    if (Object.keys(widths).length) table.classList.add("fixed");
  }

  // --- infinite scroll (opt-in, remembered): fetch the next page's HTML and append its rows -------------
  function setupInfinite(block) {
    const toggle = block.querySelector(".infinite-toggle");
    const pager = block.querySelector(".pager");
    const tbody = block.querySelector("table.data tbody");
    if (!toggle || !pager || !tbody) return;
    toggle.hidden = false;
    block.querySelector("label[for='" + toggle.id + "']").hidden = false;
    toggle.checked = store.get("nitpicker-infinite") === "on";
    let next = pager.dataset.next || null, loading = false, observer = null;
    const sentinel = document.createElement("div");
    sentinel.className = "sentinel";
    block.appendChild(sentinel);
    const load = () => {
      if (!next || loading) return;
      loading = true;
      block.setAttribute("aria-busy", "true");
      announce(document.body.dataset.loadingLabel || "Loading");
      fetch(next).then((r) => r.text()).then((html) => {
        const doc = new DOMParser().parseFromString(html, "text/html");
        const other = doc.querySelector("[data-table-id='" + block.dataset.tableId + "']");
        const rows = other ? other.querySelectorAll("table.data tbody tr") : [];
        rows.forEach((row) => { if (!row.querySelector("td.empty")) tbody.appendChild(document.importNode(row, true)); });
        const otherPager = other && other.querySelector(".pager");
        next = otherPager ? otherPager.dataset.next || null : null;
        block.dataset.loadedRows = String(tbody.rows.length);
        announce((document.body.dataset.loadedLabel || "{rows} rows").replace("{rows}", tbody.rows.length));
      }).finally(() => {
        loading = false;
        block.removeAttribute("aria-busy");
        // observing again reports the sentinel at once if it is still in view (a tall window): keep filling
        if (observer && next) { observer.unobserve(sentinel); observer.observe(sentinel); }
      });
    };
    const apply = () => {
      store.set("nitpicker-infinite", toggle.checked ? "on" : "off");
      block.classList.toggle("infinite", toggle.checked);
      if (observer) { observer.disconnect(); observer = null; }
      if (toggle.checked && "IntersectionObserver" in window) {
        observer = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) load(); });
        observer.observe(sentinel);
      }
    };
    toggle.addEventListener("change", apply);
    apply();
  }

  // --- search: results as one types, "/" from anywhere, arrow keys through the results ---------------------
  function setupSearch() {
    const input = document.getElementById("site-search-q");
    const list = document.getElementById("site-search-results");
    if (!input || !list) return;
    const commit = new URLSearchParams(location.search).get("commit");
    let timer = null, asked = 0;
    const hide = () => { list.hidden = true; };
    // the list opens from the box's left edge (viewer.css); where the box sits near the window's right edge,
    // it moves left just enough to stay inside the window, never past its left edge
    const place = () => {
      list.style.left = "";
      const margin = 8, room = document.documentElement.clientWidth - margin;
      const box = list.getBoundingClientRect(), form = input.form.getBoundingClientRect();
      if (box.right > room) list.style.left = Math.max(room - box.right, margin - form.left) + "px";
    };
    window.addEventListener("resize", () => { if (!list.hidden) place(); });
    const links = () => Array.from(list.querySelectorAll("a"));
    const show = (data) => {
      list.textContent = "";
      data.items.forEach((hit) => {
        const li = document.createElement("li"), a = document.createElement("a");
        const params = new URLSearchParams({ url: hit.url });
        if (commit) params.set("commit", commit);
        a.href = input.dataset.page + "?" + params;
        const url = document.createElement("span");
        url.className = "hit-url";
        url.textContent = hit.url;
        a.appendChild(url);
        if (hit.title) {
          const title = document.createElement("span");
          title.className = "hit-title";
          title.textContent = hit.title;
          a.appendChild(title);
        }
        li.appendChild(a);
        list.appendChild(li);
      });
      if (!data.items.length) {
        const li = document.createElement("li");
        li.className = "hit-none";
        li.textContent = input.dataset.none;
        list.appendChild(li);
      }
      list.hidden = false;
      place();
      list.dataset.q = data.q;
      announce(input.dataset.found.replace("{count}", data.items.length) + (data.more ? " " + input.dataset.more : ""));
    };
    const run = () => {
      const q = input.value.trim();
      if (!q) { hide(); return; }
      const mine = ++asked;
      const params = new URLSearchParams({ q: q, limit: "10" });
      if (commit) params.set("commit", commit);
      fetch(input.dataset.api + "?" + params)
        .then((r) => (r.ok ? r.json() : null))
        .then((data) => { if (data && mine === asked) show(data); })
        .catch(() => { /* the next keystroke asks again */ });
    };
    input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, 60); });
    // the first search of a commit builds its index: start that when the box is focused, before any key
    let prepared = false;
    input.addEventListener("focus", () => {
      if (prepared) return;
      prepared = true;
      const params = new URLSearchParams({ q: " ", limit: "1" });  // blank: prepares, finds nothing
      if (commit) params.set("commit", commit);
      fetch(input.dataset.api + "?" + params).catch(() => { /* the first search builds it instead */ });
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "ArrowDown" && !list.hidden && links().length) { e.preventDefault(); links()[0].focus(); }
      else if (e.key === "Escape") hide();
    });
    list.addEventListener("keydown", (e) => {
      const all = links(), i = all.indexOf(document.activeElement);
      if (e.key === "ArrowDown") { e.preventDefault(); all[Math.min(i + 1, all.length - 1)].focus(); }
      else if (e.key === "ArrowUp") { e.preventDefault(); if (i <= 0) input.focus(); else all[i - 1].focus(); }
      else if (e.key === "Escape") { hide(); input.focus(); }
    });
    const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
    document.addEventListener("keydown", (e) => {
      if (e.key === "/" && !e.ctrlKey && !e.metaKey && !e.altKey && !typing(e.target)) {
        e.preventDefault();
        input.focus();
        input.select();
      }
    });
    document.addEventListener("click", (e) => { if (!input.form.contains(e.target)) hide(); });
  }


  // --- page detail tabs: the section links become a tablist (arrow keys, Home, End); the fragment names the tab
  function setupTabs(nav) {
    const list = nav.querySelector("ul");
    const tabs = Array.from(nav.querySelectorAll("a[href^='#']"));
    const panels = tabs.map((a) => document.getElementById(a.hash.slice(1)));
    if (!list || !tabs.length || panels.some((p) => !p)) return;
    list.setAttribute("role", "tablist");
    list.setAttribute("aria-label", nav.getAttribute("aria-label") || "");
    tabs.forEach((a, i) => {
      a.parentElement.setAttribute("role", "presentation");
      a.setAttribute("role", "tab");
      a.id = panels[i].id + "-tab";
      a.setAttribute("aria-controls", panels[i].id);
      panels[i].setAttribute("role", "tabpanel");
      panels[i].setAttribute("aria-labelledby", a.id);
      panels[i].tabIndex = 0;
    });
    const select = (i, focus, remember = true) => {
      tabs.forEach((a, j) => {
        a.setAttribute("aria-selected", i === j ? "true" : "false");
        a.tabIndex = i === j ? 0 : -1;
        panels[j].hidden = i !== j;
      });
      if (focus) tabs[i].focus();
      if (remember && location.hash !== "#" + panels[i].id) history.replaceState(history.state, "", "#" + panels[i].id);
    };
    // the fragment's element and the panel holding it: a tab's own id, or any section inside (#inbound, #rendered…)
    const fromHash = () => {
      const target = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
      return { target, i: target ? panels.findIndex((p) => p.contains(target)) : -1 };
    };
    tabs.forEach((a, i) => a.addEventListener("click", (e) => { e.preventDefault(); select(i, true); }));
    list.addEventListener("keydown", (e) => {
      const i = tabs.indexOf(document.activeElement);
      if (i < 0) return;
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      select((to + tabs.length) % tabs.length, true);
    });
    // a link to a tab or to a section inside one (#analyzer-errors) opens that tab, then shows the section
    const follow = () => {
      const { target, i } = fromHash();
      if (i < 0) return false;
      select(i, false, false);  // the URL stays as it was given
      if (target !== panels[i]) target.scrollIntoView();
      return true;
    };
    window.addEventListener("hashchange", follow);
    if (!follow()) select(0, false, false);
    nav.classList.add("tabbed");
  }

  document.addEventListener("DOMContentLoaded", () => {
    setupTheme();
    setupSearch();
    document.querySelectorAll("nav.page-tabs").forEach(setupTabs);
    document.querySelectorAll("table.data[id]").forEach(setupResize);
    document.querySelectorAll(".table-block[data-table-id]").forEach(setupInfinite);
  });
})();
