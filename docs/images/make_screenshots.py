"""Screenshots of the viewer for the README: the demo shop crawled twice, each view in Chromium, 1280 px, light.

    .venv/bin/python docs/images/make_screenshots.py                        # runs the demo pipeline twice first
    .venv/bin/python docs/images/make_screenshots.py --archive demo.nitpicker --out /tmp/shots

Without --archive the demo pipeline runs twice in a temporary directory (the shop, then its next version), so
the diff view has changes to show. The viewer is served on 127.0.0.1 for the length of the run; each PNG is
deflated again at level 9 (stdlib only) to keep the README light. Japanese text needs a CJK font
(Debian: fonts-ipafont-gothic or fonts-noto-cjk), or the language switch shows empty boxes.
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

WIDTH, HEIGHT = 1280, 800
LIMIT = 200_000  # bytes a README image may weigh


@dataclass(frozen=True)
class Shot:
    """One PNG: the view's path (``{home}`` is the demo's home page, URL-quoted), what to wait for, what to do,
    and the part of the page to keep: from ``top``'s element (else the page's top) down to ``bottom``'s
    element (else one screen), at most MAX_HEIGHT."""

    name: str
    path: str
    ready: str
    act: Callable[[Any], None] = field(default=lambda page: None)
    top: str | None = None
    bottom: str | None = None


MAX_HEIGHT = 1100
MARGIN = 16  # px kept around the chosen elements


def _label_a_page(page: Any) -> None:
    # the picture is a canvas: N picks a page by the keyboard and draws its label, as hovering it would
    page.focus("#graph")
    for _ in range(2):
        page.keyboard.press("n")


def _at_top(page: Any) -> None:
    # a tab in the URL fragment scrolls to its panel and focuses it: show the page from its heading instead
    page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")


SHOTS = (
    Shot("summary", "/summary", "main h1"),
    Shot("issues", "/", "main h1"),
    Shot("pages-filtered", "/pages?status=4xx&every_type=1&external=1", "main table", bottom="main table"),
    Shot("page-detail", "/page?url={home}#t-links", "#t-links:not([hidden])", _at_top, top="main h1"),
    Shot(
        "link-graph",
        "/graph",
        "#graph[data-drawn='true']",
        _label_a_page,
        top="main h1",
        bottom="#graph-legend",
    ),
    Shot("security-headers", "/security-headers", "#header-counts"),
    Shot("diff", "/diff", "main h1"),
)


def run_demo(workdir: Path) -> Path:
    """The demo pipeline twice into one archive (the shop, then its next version); the archive's path."""
    archive = workdir / "demo.nitpicker"
    nitpicker = Path(sys.executable).with_name("nitpicker")
    for run in (1, 2):
        print(f"demo pipeline, run {run} of 2 …", flush=True)
        done = subprocess.run(
            [str(nitpicker), "pipeline", "-o", str(archive)], cwd=workdir, stdout=subprocess.DEVNULL
        )
        if done.returncode not in (0, 2):  # 2: only external links failed (the demo links out on purpose)
            raise subprocess.CalledProcessError(done.returncode, done.args)
    return archive


@contextmanager
def serving(archive: Path) -> Iterator[str]:
    """The viewer over ``archive`` on a free port of 127.0.0.1; yields its base URL."""
    import logging

    from werkzeug.serving import make_server

    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_viewer.app import create_app

    app = create_app(archive, make_plugin_manager())
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.shutdown()
        app.config["NITPICKER_CLOSE"]()


def home_url(base: str) -> str:
    """The crawl's first root (the demo shop's home page)."""
    import json
    import urllib.request

    with urllib.request.urlopen(base + "/api/pages?limit=1&external=false&strict=true&sort=url") as response:
        return str(json.loads(response.read())["items"][0]["url"])


def _chunks(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    pos = 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        yield data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def shrink_png(data: bytes) -> bytes:
    """The same image with its IDAT deflated again at level 9 (Chromium's encoder favours speed); the rows and
    their filters stay as they are."""
    chunks = list(_chunks(data))
    header = next(body for kind, body in chunks if kind == b"IHDR")
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    smaller = (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(raw, 9))
        + _png_chunk(b"IEND", b"")
    )
    return smaller if len(smaller) < len(data) else data


def region(page: Any, shot: Shot) -> dict[str, float]:
    """The clip of ``shot`` in page coordinates."""

    def box(selector: str) -> dict[str, float]:
        found = page.locator(selector).first.bounding_box()
        scroll = page.evaluate("window.scrollY")
        return {"y": found["y"] + scroll, "bottom": found["y"] + scroll + found["height"]}

    top = max(0.0, box(shot.top)["y"] - MARGIN) if shot.top else 0.0
    bottom = box(shot.bottom)["bottom"] + MARGIN if shot.bottom else top + HEIGHT
    return {"x": 0, "y": top, "width": WIDTH, "height": min(bottom - top, MAX_HEIGHT)}


def capture(base: str, out: Path, shots: tuple[Shot, ...]) -> dict[str, int]:
    """Each shot as ``out/viewer-<name>.png``; bytes per file."""
    from playwright.sync_api import sync_playwright

    from nitpicker_core.crawler.browser import browser_args, find_browser

    home = quote(home_url(base), safe="")
    sizes = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=find_browser(), args=browser_args(), headless=True
        )
        context = browser.new_context(
            viewport={"width": WIDTH, "height": HEIGHT},
            color_scheme="light",
            locale="en-US",
            reduced_motion="reduce",
            device_scale_factor=1,
        )
        context.add_init_script("try { localStorage.setItem('nitpicker-theme', 'light'); } catch (e) {}")
        page = context.new_page()
        for shot in shots:
            page.goto(base + shot.path.format(home=home))
            page.wait_for_selector(shot.ready)
            shot.act(page)
            page.wait_for_load_state("networkidle")
            target = out / f"viewer-{shot.name}.png"
            png = shrink_png(page.screenshot(full_page=True, clip=region(page, shot)))
            target.write_bytes(png)
            sizes[target.name] = len(png)
            print(
                f"{target}: {len(png) / 1000:.0f} kB{'  <-- over the limit' if len(png) > LIMIT else ''}",
                flush=True,
            )
        browser.close()
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, help="a demo archive with two commits (default: make one)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="where the PNGs go")
    parser.add_argument("--only", help="comma-separated shot names")
    args = parser.parse_args()
    shots = tuple(s for s in SHOTS if not args.only or s.name in args.only.split(","))
    with tempfile.TemporaryDirectory(prefix="nitpicker-shots-") as tmp:
        archive = args.archive or run_demo(Path(tmp))
        with serving(archive) as base:
            capture(base, args.out, shots)


if __name__ == "__main__":
    main()
