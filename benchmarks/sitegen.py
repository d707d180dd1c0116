"""A deterministic synthetic website for crawl benchmarks, served on 127.0.0.1 by a threaded werkzeug server.

Page ``i`` lives at ``/`` (i = 0) or ``/p/<i>``. Every page links to 20–40 other pages (always including
``i + 1``, so every page is reachable from ``/``), has a shared stylesheet and script, two or three images
(small PNG/SVG, the ones far below the fold ``loading="lazy"``), a few links to ``/missing/<j>`` (404) and a
few "external" links: the same server under the host ``127.0.0.1`` while the site itself is crawled as
``localhost``, so nothing leaves loopback.
"""

from __future__ import annotations

import random
import struct
import threading
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.serving import make_server

IMAGE_POOL = 24
MISSING_POOL = 40
EXTERNAL_POOL = 40

CSS = b"""body { font: 16px/1.4 sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem; }
nav a { display: inline-block; margin: 0 .4rem .2rem 0; }
.spacer { height: 3200px; background: linear-gradient(#fff, #eef); }
img { display: block; margin: 1rem 0; }
"""
JS = b"""document.addEventListener("DOMContentLoaded", () => {
  document.body.dataset.ready = "1";
  const n = document.querySelectorAll("a").length;
  const footer = document.querySelector("footer");
  if (footer) footer.textContent += " (" + n + " links)";
});
"""
WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
    "tau upsilon phi chi psi omega"
).split()


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid solid-colour RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def _svg(k: int) -> bytes:
    hue = (k * 47) % 360
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="96" height="48" viewBox="0 0 96 48">'
        f'<rect width="96" height="48" fill="hsl({hue},60%,60%)"/><text x="8" y="30">{k}</text></svg>'
    ).encode()


class Site:
    """N pages generated from ``seed``; ``port`` is filled in once the server is bound."""

    def __init__(self, pages: int, seed: int = 1) -> None:
        if pages < 2:
            raise ValueError("a site needs at least 2 pages")
        self.pages = pages
        self.seed = seed
        self.port = 0
        self.pngs = {
            k: _png(16 + k, 16 + k, ((k * 40) % 256, (k * 90) % 256, (k * 150) % 256))
            for k in range(IMAGE_POOL)
        }
        self.svgs = {k: _svg(k) for k in range(IMAGE_POOL)}
        self.requests: Counter[tuple[str, str]] = Counter()
        self.stray: Counter[str] = Counter()  # 404s for paths no page links to (guessed URLs)
        self._lock = threading.Lock()

    # -- structure ---------------------------------------------------------------------------------------
    @staticmethod
    def path_of(i: int) -> str:
        return "/" if i == 0 else f"/p/{i}"

    def page_paths(self) -> list[str]:
        return [self.path_of(i) for i in range(self.pages)]

    def _plan(self, i: int) -> dict[str, Any]:
        rng = random.Random(self.seed * 1_000_003 + i)
        n = self.pages
        count = min(rng.randint(20, 40), n - 1)
        targets = {(i + 1) % n}
        while len(targets) < count:
            t = rng.randrange(n)
            if t != i:
                targets.add(t)
        ordered = sorted(targets)
        rng.shuffle(ordered)
        return {
            "links": ordered,
            "missing": sorted({rng.randrange(MISSING_POOL) for _ in range(rng.randint(2, 3))}),
            "external": sorted({rng.randrange(EXTERNAL_POOL) for _ in range(rng.randint(2, 3))}),
            "top_image": rng.randrange(IMAGE_POOL),
            "lazy_images": [rng.randrange(IMAGE_POOL) for _ in range(rng.randint(1, 2))],
            "words": " ".join(rng.choice(WORDS) for _ in range(rng.randint(80, 200))),
        }

    def render_page(self, i: int) -> bytes:
        plan = self._plan(i)
        links = "\n".join(f'<a href="{self.path_of(t)}">Page {t}</a>' for t in plan["links"])
        missing = "\n".join(f'<a href="/missing/{j}">Old page {j}</a>' for j in plan["missing"])
        external = "\n".join(
            f'<a href="http://127.0.0.1:{self.port}/ext/{j}">Partner {j}</a>' for j in plan["external"]
        )
        top = plan["top_image"]
        lazy = "\n".join(
            f'<img src="/img/{k}.{"svg" if n % 2 else "png"}" alt="lazy {k}" loading="lazy" width="96" height="48">'
            for n, k in enumerate(plan["lazy_images"])
        )
        html = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Page {i} of the benchmark site</title>
<meta name="description" content="Synthetic page {i} for crawl throughput benchmarks.">
<link rel="canonical" href="{self.path_of(i)}">
<link rel="stylesheet" href="/static/site.css">
<script src="/static/site.js" defer></script>
</head><body>
<header><h1>Page {i}</h1><img src="/img/{top}.png" alt="logo {top}" width="{16 + top}" height="{16 + top}"></header>
<nav>
{links}
</nav>
<main><p>{plan["words"]}</p>
<div class="spacer"></div>
{lazy}
<ul><li>{missing}</li><li>{external}</li></ul>
</main>
<footer>Footer of page {i}</footer>
</body></html>
"""
        return html.encode()

    # -- WSGI ----------------------------------------------------------------------------------------------
    def reset_counts(self) -> Counter[tuple[str, str]]:
        with self._lock:
            counts, self.requests = self.requests, Counter()
        return counts

    def reset_stray(self) -> Counter[str]:
        with self._lock:
            stray, self.stray = self.stray, Counter()
        return stray

    def _count(self, method: str, kind: str, path: str) -> None:
        with self._lock:
            self.requests[(method, kind)] += 1
            if kind in ("404-other", "external-404") or (
                kind == "missing" and not self._linked_missing(path)
            ):
                self.stray[f"{method} {path}"] += 1

    @staticmethod
    def _linked_missing(path: str) -> bool:
        tail = path[len("/missing/") :]
        return tail.isdigit() and int(tail) < MISSING_POOL

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "/")
        host = (environ.get("HTTP_HOST") or "").split(":")[0]
        kind, status, ctype, body, cache = self._route(path, host)
        self._count(method, kind, path)
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))]
        if cache:
            headers.append(("Cache-Control", "public, max-age=3600"))
        start_response(status, headers)
        return [] if method == "HEAD" else [body]

    def _route(self, path: str, host: str) -> tuple[str, str, str, bytes, bool]:
        html = "text/html; charset=utf-8"
        if path == "/robots.txt":
            return "robots", "200 OK", "text/plain", b"User-agent: *\nAllow: /\n", True
        if path.startswith("/ext/"):
            body = f"<!doctype html><title>External {path[5:]}</title><p>elsewhere</p>".encode()
            return "external", "200 OK", html, body, False
        if host == "127.0.0.1":  # only /ext/ exists on the "other" host
            return "external-404", "404 Not Found", html, b"<!doctype html><title>Not found</title>", False
        if path == "/static/site.css":
            return "css", "200 OK", "text/css", CSS, True
        if path == "/static/site.js":
            return "js", "200 OK", "application/javascript", JS, True
        if path.startswith("/img/"):
            name, _, ext = path[5:].partition(".")
            if name.isdigit() and int(name) < IMAGE_POOL and ext in ("png", "svg"):
                k = int(name)
                if ext == "png":
                    return "image", "200 OK", "image/png", self.pngs[k], True
                return "image", "200 OK", "image/svg+xml", self.svgs[k], True
        index = 0 if path == "/" else None
        if path.startswith("/p/") and path[3:].isdigit():
            index = int(path[3:])
        if index is not None and 0 <= index < self.pages and (index == 0) == (path == "/"):
            return "page", "200 OK", html, self.render_page(index), False
        body = b"<!doctype html><html><head><title>404 Not Found</title></head><body>Not found</body></html>"
        return "missing" if path.startswith("/missing/") else "404-other", "404 Not Found", html, body, False


class SiteServer:
    """``Site`` served on 127.0.0.1 (free port) by werkzeug's threaded server in a daemon thread."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self._server = make_server("127.0.0.1", 0, site, threaded=True)
        site.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, name="sitegen", daemon=True)

    @property
    def port(self) -> int:
        return self.site.port

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._thread.join(5)
