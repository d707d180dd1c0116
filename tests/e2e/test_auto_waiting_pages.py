"""`--render auto`: while a template's sample renders, the pages waiting for its verdict do not stop the crawl.

A real HTTP server on 127.0.0.1 holds the browser's request for the sample (the second GET of a page of the
template: the first is the crawler's own) until it has been asked for every page of that template, or until
a deadline. The crawl has as many workers as requests at once (eight), fewer than the template's pages: the
pages waiting for the verdict used to keep every worker, so the others were fetched only after the sample,
and the server waited out its deadline. Now a worker starts for each page that waits, and the server is
released by the pages.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest
from support import run_cli, serving

pytestmark = pytest.mark.browser

PAGES = [f"/p{n}" for n in range(1, 15)]  # more than the eight requests at once
HOLD = 60.0  # seconds the sample's render is held at most (the crawl goes on either way)
TEMPLATE = (
    '<!DOCTYPE html><html lang="en"><head><title>{title}</title></head><body><main class="doc"><h1>{title}</h1>'
    "<p>{title} reads the same with or without JavaScript.</p></main></body></html>"
)


class _Holding(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
        pass

    def do_GET(self) -> None:
        state = self.server.state  # type: ignore[attr-defined]
        with state["lock"]:
            state["asked"].append(self.path)
            asked = state["asked"]
            if self.path in PAGES and all(page in asked for page in PAGES):
                state["all_pages"].set()
            hold = self.path in PAGES and asked.count(self.path) == 2
            if hold:
                state["sample"] = self.path
        if hold:  # the browser's navigation: the sample renders only once the other pages were fetched
            released = state["all_pages"].wait(HOLD)
            state["released_by"] = "pages" if released else "deadline"
        if self.path == "/":
            links = "".join(f'<a href="{path}">{path}</a> ' for path in PAGES)
            body = f'<!DOCTYPE html><html lang="en"><head><title>Home</title></head><body><nav>{links}</nav></body></html>'
        elif self.path in PAGES:
            body = TEMPLATE.format(title=self.path.strip("/"))
        else:
            self.send_error(404)
            return
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def holding_site() -> Iterator[tuple[str, dict]]:
    pages = threading.Event()
    state = {"lock": threading.Lock(), "asked": [], "all_pages": pages, "released_by": None, "sample": None}
    state["release"] = pages  # a request still held lets go when the server stops
    with serving(_Holding, state) as site:
        yield site, state


def test_pages_waiting_for_a_verdict_leave_the_crawl_going(holding_site, tmp_path):
    from nitpicker_core.archive import open_archive

    site, state = holding_site
    archive = tmp_path / "auto.nitpicker"
    started = time.monotonic()
    done = run_cli(
        "crawl", f"{site}/", "--render", "auto", "--parallels", "1", "--no-image", "-o", str(archive),
        cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert state["released_by"] == "pages", (state["asked"], time.monotonic() - started)
    with open_archive(archive) as reader:
        pages = {page["url"]: page for page in reader.pages()}
    # the sample rendered, and its template's other pages read as sent on its verdict
    sample = state["sample"]
    assert "unrendered" not in pages[f"{site}{sample}"]["extra"]
    for path in PAGES:
        if path != sample:
            why = pages[f"{site}{path}"]["extra"]["unrendered"]
            assert why.startswith(f"--render auto: sample {site}{sample} same"), (path, why)
