"""The viewer shows analyzer errors: a findings tab listing them, their /api, and a section on a page's detail."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from archives import SITE, build_archive

from nitpicker_core import Analyzer, PageReport, ScrapeResult, hookimpl
from nitpicker_core.analyze import analyze
from nitpicker_core.config import load_config
from nitpicker_core.plugins import make_plugin_manager


class Fragile(Analyzer):
    """Raises on /boom, returns a dict on /wrong; fine elsewhere."""

    name = "fragile"

    def each_page(self, page):
        if page.url.endswith("/boom"):
            raise ZeroDivisionError("nothing to divide <by>")
        if page.url.endswith("/wrong"):
            return {"cells": {}}
        return PageReport({"seen": True})


class Plugin:
    @hookimpl
    def register_analyzers(self, register):
        register(Fragile())


def page(path: str) -> ScrapeResult:
    html_text = f"<!doctype html><html lang='en'><head><title>{path}</title></head><body>{path}</body></html>"
    return ScrapeResult(
        url=SITE + path,
        status=200,
        status_text="OK",
        content_type="text/html",
        content_length=len(html_text),
        metadata={"title": path},
        html=html_text,
    )


@pytest.fixture(scope="module")
def errors_client(tmp_path_factory):
    from nitpicker_viewer.app import create_app

    archive = build_archive(
        tmp_path_factory.mktemp("viewer-errors") / "site.nitpicker",
        [page(p) for p in ("/ok", "/boom", "/wrong")],
    )
    pm = make_plugin_manager()
    pm.add_plugin(Plugin(), "fragile-plugin")
    analyze(pm, load_config(pm, data={}), archive, ["fragile"])
    app = create_app(archive, make_plugin_manager())  # the viewer needs no analyzer plugin to show errors
    yield app.test_client()
    app.config["NITPICKER_CLOSE"]()


def text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.get_data(as_text=True)


def rows(body: str, table_id: str) -> list[str]:
    table = body[body.index(f'<table class="data" id="{table_id}"') :]
    table = table[: table.index("</table>")]
    return re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>") :], re.S)


def test_the_view_lists_each_error_with_its_traceback(errors_client):
    body = text(errors_client.get("/analyzer-errors"))
    found = rows(body, "analyzer-errors")
    assert len(found) == 2
    boom, wrong = found  # sorted by URL
    assert f'href="/page?url={quote(SITE + "/boom", safe="")}"' in boom
    assert "ZeroDivisionError: nothing to divide &lt;by&gt;" in boom  # escaped, never markup
    traceback = re.search(
        r'<details class="traceback">.*?<pre tabindex="0">(.*?)</pre></details>', boom, re.S
    )
    assert traceback is not None and "Traceback (most recent call last):" in traceback.group(1)
    assert "in each_page" in traceback.group(1)
    assert (
        "each_page of analyzer &#39;fragile&#39; (plugin &#39;fragile-plugin&#39;) returned a dict, not a "
        "PageReport"
    ) in wrong
    assert '<span class="none">—</span>' in wrong  # no traceback for a wrong type


def test_the_view_filters_and_is_a_findings_tab(errors_client):
    filtered = rows(text(errors_client.get("/analyzer-errors?url=wrong")), "analyzer-errors")
    assert len(filtered) == 1 and "returned a dict" in filtered[0]
    assert rows(text(errors_client.get("/analyzer-errors?analyzer=other")), "analyzer-errors") == [
        '<td colspan="4" class="empty">Nothing to show.</td>'
    ]
    violations = text(errors_client.get("/violations"))
    assert '<a href="/analyzer-errors">Analyzer errors</a>' in violations
    assert '<a href="/analyzer-errors" aria-current="page">' in text(errors_client.get("/analyzer-errors"))


def test_the_api_serves_the_query(errors_client):
    data = errors_client.get("/api/analyzer-errors?analyzer=fragile").get_json()
    assert [(r["url"], r["error"].split(":")[0]) for r in data["items"]] == [
        (SITE + "/boom", "ZeroDivisionError"),
        (
            SITE + "/wrong",
            "each_page of analyzer 'fragile' (plugin 'fragile-plugin') returned a dict, not a PageReport",
        ),
    ]


def test_a_page_with_errors_shows_them_and_a_page_without_does_not(errors_client):
    body = text(errors_client.get(f"/page?url={SITE}/boom"))
    assert '<a href="#analyzer-errors">' in body
    section = body[body.index('<section aria-labelledby="analyzer-errors">') :]
    section = section[: section.index("</section>")]
    assert "Analyzer errors (1)" in section
    assert "ZeroDivisionError: nothing to divide &lt;by&gt;" in section and "<details" in section
    assert f'href="/analyzer-errors?url={SITE}/boom"' in section  # the view, filtered to this page
    clean = text(errors_client.get(f"/page?url={SITE}/ok"))
    assert "analyzer-errors" not in clean


# --- real Chromium ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def errors_served(errors_client):
    """The same viewer app on 127.0.0.1 (a free port) in a thread; yields its base URL."""
    import threading

    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, errors_client.application, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.mark.browser
def test_in_chromium_the_traceback_unfolds_and_axe_finds_nothing_serious(errors_served):
    from pathlib import Path

    from playwright.sync_api import sync_playwright

    from nitpicker_core.crawler.browser import browser_args, find_browser

    axe = Path(__import__("axe_playwright_python").__file__).with_name("axe.min.js")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=find_browser(), args=browser_args(), headless=True
        )
        try:
            # bypass_csp: axe is injected as an inline script, which the viewer's own CSP rightly forbids
            context = browser.new_context(bypass_csp=True, locale="en-US", reduced_motion="reduce")
            tab = context.new_page()
            problems: list[str] = []
            tab.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
            tab.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
            for path in (
                "/analyzer-errors",
                f"/page?url={SITE}/boom#analyzer-errors",
            ):  # the fragment opens its tab
                tab.goto(errors_served + path)
                trace = tab.locator("details.traceback pre").first
                assert not trace.is_visible()
                tab.locator("details.traceback summary").first.click()
                trace.wait_for(state="visible")
                assert "ZeroDivisionError: nothing to divide <by>" in trace.inner_text()
                tab.add_script_tag(path=str(axe))
                result = tab.evaluate("axe.run(document, {resultTypes: ['violations']})")
                serious = [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")]
                assert serious == [], (path, serious)
            assert problems == []
            context.close()
        finally:
            browser.close()
