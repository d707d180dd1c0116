"""The viewer's layout in real Chromium at 1280 and 1920 px, light and dark, English and Japanese: the search
suggestions stay on screen, the security headers table fits its container with readable URLs, and labels (menu,
column headings, cards, badges, counts) never break inside a word."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser

WIDTHS = (1280, 1920)
THEMES = ("light", "dark")
LANGUAGES = ("en", "ja")
VIEWS = (
    "/",
    "/summary",
    "/issue?check=broken-link",
    "/pages",
    "/broken-links",
    "/external-links",
    "/isolated",
    "/graph",
    "/resources",
    "/images",
    "/violations",
    "/violations/rules",
    "/duplicates",
    "/mismatches",
    "/commits",
    "/diff",
)
URL_CHARS = 30  # the narrowest a URL column may get, in characters of its own font
ROW_LINES = 3  # the tallest a security headers row may get on average, in lines of text

# Short texts that read as one unit: a break inside one of their words is a layout defect.
LABELS = ", ".join(
    (
        "header nav a",
        "thead th",
        ".card-label",
        ".card-value",
        "td.k-num",
        "td.k-status",
        ".priority",
        ".badge",
        ".finding-state",
        ".page-tabs a",
        "#commits tbody td:not(.tools)",
        "table.kv th",
    )
)
# Every place inside ``selector``'s elements where a line ends between two characters of one word: the first
# character of each line compared with the last one before it. A word goes on after a hyphen, a slash or a
# space; in Japanese (no spaces) any break between two letters of a label is inside its word.
BREAKS = """(selector) => {
  const found = [], range = document.createRange();
  const opens = /[\\s\\-\\/·,、。・]/;
  for (const el of document.querySelectorAll(selector)) {
    if (!el.getClientRects().length || el.closest('[hidden], .visually-hidden, details:not([open]) > :not(summary)')) continue;
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let prev = null, gap = false;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        const ch = node.data[i];
        if (/\\s/.test(ch)) { gap = true; continue; }
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = Array.from(range.getClientRects()).find((r) => r.width > 0);
        if (!rect) continue;
        if (prev && !gap && rect.top >= prev.bottom - 2 && !opens.test(prev.ch)) {
          found.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ': '
                     + JSON.stringify(el.textContent.trim().slice(0, 60)) + ' breaks before ' + JSON.stringify(ch));
        }
        prev = {ch: ch, bottom: rect.bottom};
        gap = false;
      }
    }
  }
  return found;
}"""


@pytest.fixture(params=[(w, t) for w in WIDTHS for t in THEMES], ids=lambda p: f"{p[0]}px-{p[1]}")
def screen(request, browser, served):
    """A page at one width in one theme; ``screen.lang(code)`` switches the viewer's language."""
    width, theme = request.param
    context = browser.new_context(
        viewport={"width": width, "height": 900}, locale="en-US", reduced_motion="reduce"
    )
    context.add_init_script(f"try {{ localStorage.setItem('nitpicker-theme', '{theme}'); }} catch (e) {{}}")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def lang(code: str) -> None:
        context.add_cookies([{"name": "nitpicker-lang", "value": code, "url": served}])

    page.lang = lang  # type: ignore[attr-defined]
    page.goto(served + "/")
    assert page.locator("html").get_attribute("data-theme") == theme
    yield page
    context.close()
    assert errors == []


def _suggestions(page, served: str) -> dict:
    page.locator("#site-search-q").fill("")  # hides the list
    page.wait_for_selector("#site-search-results", state="hidden")
    page.locator("#site-search-q").fill("meta")
    page.wait_for_selector("#site-search-results:not([hidden]) li", timeout=20_000)
    return page.evaluate("""() => {
        const r = document.getElementById('site-search-results').getBoundingClientRect();
        return {left: r.left, right: r.right, width: r.width, viewport: document.documentElement.clientWidth};
    }""")


def test_search_suggestions_open_inside_the_viewport(screen, served):
    for code in LANGUAGES:
        screen.lang(code)
        screen.goto(served + "/summary")
        box = _suggestions(screen, served)
        assert box["left"] >= 0 and box["right"] <= box["viewport"], box
        assert box["width"] >= 300, box  # a useful width, not squeezed to fit
    # the search box at the header's right end (a narrower menu puts it there): the list opens leftwards
    screen.add_style_tag(content=".site-search { order: 10; margin-left: auto; }")
    box = _suggestions(screen, served)
    assert box["left"] >= 0 and box["right"] <= box["viewport"], box


def test_security_headers_table_fits_with_readable_urls(screen, served):
    for code in LANGUAGES:
        screen.lang(code)
        screen.goto(served + "/security-headers?pageSize=50")
        geometry = screen.evaluate("""() => {
            const table = document.getElementById('security-headers'), box = table.closest('.table-scroll');
            const probe = document.createElement('span');
            probe.className = 'url';
            probe.textContent = '0'.repeat(20);
            table.querySelector('tbody td.k-page').appendChild(probe);
            const ch = probe.getBoundingClientRect().width / 20;
            probe.remove();
            const rows = table.querySelectorAll('tbody tr');
            const line = parseFloat(getComputedStyle(table.querySelector('tbody td')).lineHeight);
            return {scroll: box.scrollWidth, client: box.clientWidth, right: box.getBoundingClientRect().right,
                    headings: Array.from(table.querySelectorAll('thead th')).map((th) => th.getBoundingClientRect().right),
                    urls: Array.from(table.querySelectorAll('tbody td.k-page')).map((td) => td.clientWidth / ch),
                    rows: rows.length, body: table.tBodies[0].getBoundingClientRect().height, line: line};
        }""")
        assert geometry["rows"] >= 10, geometry
        assert geometry["scroll"] <= geometry["client"] + 1, (
            geometry
        )  # every column visible, no sideways scroll
        assert max(geometry["headings"]) <= geometry["right"] + 1, geometry
        assert min(geometry["urls"]) >= URL_CHARS, geometry
        assert geometry["body"] / geometry["rows"] <= ROW_LINES * geometry["line"], geometry


def test_labels_never_break_inside_a_word(screen, served, site):
    paths = (
        *VIEWS,
        "/security-headers",
        f"/page?url={quote(site + '/', safe='')}",
        f"/page?url={quote(site + '/meta/full', safe='')}",
    )
    found = {}
    for code in LANGUAGES:
        screen.lang(code)
        for path in paths:
            screen.goto(served + path)
            breaks = screen.evaluate(BREAKS, LABELS)
            if breaks:
                found[f"{code} {path}"] = breaks[:5]
    assert found == {}, json.dumps(found, indent=1, ensure_ascii=False)


def test_menu_items_and_column_headings_stay_on_one_line(screen, served):
    for code in LANGUAGES:
        screen.lang(code)
        for path in ("/summary", "/commits"):
            screen.goto(served + path)
            lines = screen.evaluate("""() => Array.from(document.querySelectorAll('header nav a, main thead th'))
                .map((el) => {
                    const range = document.createRange(), bottoms = new Set();
                    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
                    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                        range.selectNodeContents(node);
                        for (const r of range.getClientRects()) if (r.width > 0) bottoms.add(Math.round(r.bottom));
                    }
                    return [el.textContent.trim(), bottoms.size];
                })""")
            assert [label for label, count in lines if count > 1] == [], (code, path, lines)
