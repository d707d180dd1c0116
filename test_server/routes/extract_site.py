"""/extract-site/<key>/: product pages for custom extraction and custom search (docs/extraction.md).

Each test picks its own ``key`` and GETs ``/extract-site/<key>/__next`` between two crawls. Version 1 → 2:
``p1``'s price goes from 10.00 to 12.50 (its SKU stays); ``p2`` is out of stock in both. ``p1`` adds a
paragraph by script (only in the rendered page); ``slow`` holds a run of 40 "a" then "b", on which a regex
such as ``(a|aa)+$`` backtracks catastrophically.
"""

from __future__ import annotations

import threading

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("extract_site", __name__, url_prefix="/extract-site")

_LOCK = threading.Lock()
_VERSIONS: dict[str, int] = {}  # key → version (1 until moved on); test server lifetime only
SCRIPT = "<script>document.body.insertAdjacentHTML('beforeend', '<p id=\"js\">Added by script</p>')</script>"


def _version(key: str) -> int:
    with _LOCK:
        return _VERSIONS.get(key, 1)


@bp.get("/<key>/__next")
def next_version(key: str):  # type: ignore[no-untyped-def]
    with _LOCK:
        _VERSIONS[key] = _VERSIONS.get(key, 1) + 1
        return {"version": _VERSIONS[key]}


@bp.get("/<key>/")
def home(key: str) -> Response:
    root = f"/extract-site/{key}/"
    return page(
        "Shop",
        "<h1>Shop</h1>" + links((root + "p1", "Widget"), (root + "p2", "Gadget"), (root + "slow", "Slow")),
    )


def _product(key: str, name: str, price: str | None, sku: str, stock: str, extra: str = "") -> Response:
    root = f"/extract-site/{key}/"
    offer = f'<p>Price: <span class="price">€{price}</span></p>' if price else ""
    body = (
        f'<main><h1>{name}</h1>{offer}<meta itemprop="sku" content="{sku}">'
        f'<ul class="tags"><li>blue</li><li>small</li></ul><p class="stock">{stock}</p></main>'
        f"<footer>Contact: shop@example.com</footer>{links((root, 'Home'))}{extra}"
    )
    return page(name, body)


@bp.get("/<key>/p1")
def p1(key: str) -> Response:
    price = "10.00" if _version(key) == 1 else "12.50"
    return _product(key, "Widget", price, "SKU-1", "In stock", SCRIPT)


@bp.get("/<key>/p2")
def p2(key: str) -> Response:
    return _product(key, "Gadget", None, "SKU-2", "Out of stock")


@bp.get("/<key>/slow")
def slow(key: str) -> Response:
    return page("Slow", f"<h1>Slow</h1><p>{'a' * 40}b</p>" + links((f"/extract-site/{key}/", "Home")))
