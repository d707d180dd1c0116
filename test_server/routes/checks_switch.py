"""/checks-switch/<key>/: a small site whose defects change when a test flips it, for issue lifecycles.

Each test picks its own ``key`` (a fresh one per test keeps tests isolated) and POSTs
``/checks-switch/<key>/flip`` between two crawls; the pages then answer their second version.
Version 1 → 2: a broken link and a page without a title are fixed, one of each stays, one of each appears;
the same for duplicate ids (markup/duplicate-id).
"""

from __future__ import annotations

import threading
from html import escape

from flask import Blueprint, Response

bp = Blueprint("checks_switch", __name__, url_prefix="/checks-switch")

_LOCK = threading.Lock()
_VERSIONS: dict[str, int] = {}  # key → version (1 until flipped); test server lifetime only

# version → page → (title or None for no <title>, ids of the elements, written twice when duplicated)
_PAGES: dict[int, dict[str, tuple[str | None, tuple[str, ...]]]] = {
    1: {"a": (None, ("x",)), "b": (None, ("y",)), "c": ("Page C", ())},
    2: {"a": ("Page A", ()), "b": (None, ("y",)), "c": ("", ("z",))},
}
# version → the 404 targets the home page links to
_GONE = {1: ("gone-1", "gone-2"), 2: ("gone-2", "gone-3")}


def _version(key: str) -> int:
    with _LOCK:
        return _VERSIONS.get(key, 1)


def _html(title: str | None, body: str, status: int = 200) -> Response:
    head = "" if title is None else f"<title>{escape(title)}</title>"
    html = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="UTF-8">\n{head}\n</head>\n'
        f"<body>\n<h1>Switch</h1>\n{body}\n</body>\n</html>\n"
    )
    return Response(html, status=status, content_type="text/html; charset=UTF-8")


@bp.post("/<key>/flip")
def flip(key: str) -> Response:
    with _LOCK:
        _VERSIONS[key] = 2
    return Response("flipped\n", content_type="text/plain")


@bp.get("/<key>/")
def home(key: str) -> Response:
    version = _version(key)
    targets = [*_PAGES[version], *_GONE[version]]
    items = "".join(f'<li><a href="/checks-switch/{key}/{t}">{t}</a></li>' for t in targets)
    return _html("Switch home", f"<ul>{items}</ul>")


@bp.get("/<key>/<name>")
def child(key: str, name: str) -> Response:
    pages = _PAGES[_version(key)]
    if name not in pages:
        return _html("Not found", "<p>Gone.</p>", status=404)
    title, ids = pages[name]
    twice = "".join(f'<p id="{i}">one</p><p id="{i}">two</p>' for i in ids)
    return _html(title, f'<p><a href="/checks-switch/{key}/">Home</a></p>{twice}')
