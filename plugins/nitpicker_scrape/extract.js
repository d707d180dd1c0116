// Runs inside the rendered page: returns metadata, anchors, headings and embedded scripts as plain JSON.
() => {
  const meta = (sel) => { const el = document.querySelector(sel); return el ? (el.getAttribute("content") ?? "") : null; };
  const link = (rel) => { const el = document.querySelector(`link[rel~="${rel}" i][href]`); return el ? el.href : null; };
  const byName = (name) => meta(`meta[name="${name}" i]`);
  const byProp = (prop) => meta(`meta[property="${prop}" i]`) ?? meta(`meta[name="${prop}" i]`);
  const abs = (value) => { if (!value) return value; try { return new URL(value, document.baseURI).href; } catch { return value; } };
  const robots = byName("robots");
  const flags = (robots || "").toLowerCase().split(",").map((s) => s.trim());
  const charsetEl = document.querySelector("meta[charset]");
  const httpEquiv = meta('meta[http-equiv="content-type" i]');
  const m = {
    title: document.title ?? "",
    description: byName("description") ?? "",
    keywords: byName("keywords") ?? "",
    lang: document.documentElement.getAttribute("lang") ?? "",
    dir: document.documentElement.getAttribute("dir") ?? "",
    charset: charsetEl ? charsetEl.getAttribute("charset") : (httpEquiv && /charset=([^;]+)/i.test(httpEquiv) ? RegExp.$1.trim() : document.characterSet),
    base_href: document.querySelector("base[href]") ? document.baseURI : "",
    viewport: byName("viewport"),
    theme_color: byName("theme-color"),
    robots: robots,
    noindex: flags.includes("noindex") || flags.includes("none"),
    nofollow: flags.includes("nofollow") || flags.includes("none"),
    noarchive: flags.includes("noarchive"),
    noimageindex: flags.includes("noimageindex"),
    googlebot: byName("googlebot"),
    canonical: link("canonical"),
    amphtml: link("amphtml"),
    manifest: link("manifest"),
    icon: link("icon"),
    apple_touch_icon: link("apple-touch-icon"),
    og_type: byProp("og:type"), og_title: byProp("og:title") ?? "", og_site_name: byProp("og:site_name"),
    og_description: byProp("og:description") ?? "", og_url: abs(byProp("og:url")), og_image: abs(byProp("og:image")),
    og_locale: byProp("og:locale"),
    twitter_card: byName("twitter:card"), twitter_site: byName("twitter:site"), twitter_creator: byName("twitter:creator"),
    twitter_title: byName("twitter:title"), twitter_description: byName("twitter:description"),
    twitter_image: abs(byName("twitter:image")),
    author: byName("author"), generator: byName("generator"), publisher: byName("publisher") ?? link("publisher"),
    google_site_verification: byName("google-site-verification"), msvalidate: byName("msvalidate.01"),
    yandex_verification: byName("yandex-verification"),
  };
  // The canonical as written, kept only where the resolved URL hides a defect of it (empty, blank,
  // fragment-only, white space inside, a scheme without a host): other pages' stored state stays as it was.
  const canonicalEl = document.querySelector('link[rel~="canonical" i][href]');
  const canonicalHref = canonicalEl ? canonicalEl.getAttribute("href") : null;
  const hidden = canonicalEl && canonicalHref !== canonicalEl.href
    && /^\s*$|^\s*#|\S\s+\S|^\s*[a-z][a-z0-9+.-]*:(?!\/\/[^\/])/i.test(canonicalHref);
  // rel=next/prev, kept only when a page has them: other pages' stored state stays as it was
  const pagination = [...document.querySelectorAll("link[rel][href]")].flatMap((el) =>
    el.rel.toLowerCase().split(/\s+/).filter((r) => r === "next" || r === "prev" || r === "previous")
      .map((r) => ({ rel: r === "previous" ? "prev" : r, href: el.href })));
  const extra = {
    ...(hidden ? { canonical_href: canonicalHref } : {}),
    ...(pagination.length ? { pagination } : {}),
    alternate: link("alternate"),
    hreflang: [...document.querySelectorAll('link[rel~="alternate" i][hreflang][href]')].map((el) => ({ hreflang: el.getAttribute("hreflang"), href: el.href })),
    referrer: byName("referrer"),
    apple: Object.fromEntries([...document.querySelectorAll('meta[name^="apple-" i]')].map((el) => [el.getAttribute("name"), el.getAttribute("content")])),
    msapplication: Object.fromEntries([...document.querySelectorAll('meta[name^="msapplication-" i]')].map((el) => [el.getAttribute("name"), el.getAttribute("content")])),
    other_og: Object.fromEntries([...document.querySelectorAll('meta[property^="og:" i]')].map((el) => [el.getAttribute("property"), el.getAttribute("content")])),
  };
  const anchors = [];
  for (const el of document.querySelectorAll("a[href], area[href]")) {
    const href = el.href;
    if (typeof href !== "string" || !/^https?:/i.test(href)) continue;
    let text = (el.getAttribute("aria-label") || el.textContent || "").replace(/\s+/g, " ").trim();
    if (!text) { const img = el.querySelector("img[alt]"); text = img ? img.getAttribute("alt").trim() : (el.getAttribute("alt") || el.getAttribute("title") || ""); }
    anchors.push({ href, text, raw: el.getAttribute("href") });
  }
  // the texts of each heading's fragment links too: extract.py leaves its permalink ("¶") out, as without a browser
  const squeeze = (el) => (el.textContent || "").replace(/\s+/g, " ").trim();
  const headings = [...document.querySelectorAll("h1, h2, h3, h4, h5, h6")]
    .map((el) => ({ level: Number(el.tagName[1]), text: squeeze(el), links: [...el.querySelectorAll('a[href^="#"]')].map(squeeze) }));
  const scripts = [...document.querySelectorAll('script[type="application/ld+json" i], script[type="speculationrules" i]')]
    .map((el) => ({ kind: el.type.toLowerCase() === "speculationrules" ? "speculationrules" : "jsonld", raw: el.textContent || "" }));
  const refresh = meta('meta[http-equiv="refresh" i]');
  // Words of the body's text (scripts and styles left out), segmented as the page's language does it
  // (Japanese has no spaces). Text nodes, not innerText: innerText lays the page out again, which cost more
  // than the rest of the extract on large pages
  let words = null;
  if (document.body && typeof Intl.Segmenter === "function") {
    let segmenter;
    try { segmenter = new Intl.Segmenter(m.lang || undefined, { granularity: "word" }); }
    catch { segmenter = new Intl.Segmenter(undefined, { granularity: "word" }); }
    const texts = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!/^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/.test(node.parentNode.nodeName)) texts.push(node.data);
    }
    words = 0;
    for (const part of segmenter.segment(texts.join(" "))) if (part.isWordLike) words += 1;
  }
  // The document's own request: to its first byte and to its load event (redirects included), and the protocol
  const nav = performance.getEntriesByType("navigation")[0];
  const timing = nav ? {
    response_ms: nav.responseStart > 0 ? Math.round(nav.responseStart) : null,
    load_ms: nav.loadEventEnd > 0 ? Math.round(nav.loadEventEnd) : null,
    protocol: nav.nextHopProtocol || null,
  } : null;
  return { metadata: m, extra, anchors, headings, scripts, refresh, words, timing, encoding: document.characterSet };
}
