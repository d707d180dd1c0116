"""/change-named/<key>/: a small site whose second version changes in every way an update should name.

Each test picks its own ``key`` and GETs ``/change-named/<key>/__next`` between two crawls. Version 1 → 2:
- the home page's broken link to ``gone-1`` is fixed; it now links to ``gone-2`` (404) and to ``b``, which
  answers 404 as text/plain (a page that became an error page): two new broken links;
- five pages ``n1`` … ``n5`` are added (no security headers, like every page here: five new findings of each
  header check on the same five pages);
- ``a``: its title changes, its description is removed, three links are added (n1, n2, n3) and one removed;
- ``c`` now redirects (301) to ``n1``.
"""

from __future__ import annotations

import threading

from flask import Blueprint, Response, redirect

from test_server.routes._html import links, page

bp = Blueprint("change_named", __name__, url_prefix="/change-named")

ADDED = ("n1", "n2", "n3", "n4", "n5")
_LOCK = threading.Lock()
_VERSIONS: dict[str, int] = {}  # key → version (1 until moved on); test server lifetime only


def _version(key: str) -> int:
    with _LOCK:
        return _VERSIONS.get(key, 1)


def _not_found() -> Response:
    return Response("404 Not Found", status=404, content_type="text/plain; charset=UTF-8")


@bp.get("/<key>/__next")
def next_version(key: str):  # type: ignore[no-untyped-def]
    with _LOCK:
        _VERSIONS[key] = _VERSIONS.get(key, 1) + 1
        return {"version": _VERSIONS[key]}


@bp.get("/<key>/")
def home(key: str):  # type: ignore[no-untyped-def]
    names = ("a", "b", "c", "gone-1") if _version(key) == 1 else ("a", "b", "c", "gone-2", *ADDED)
    return page("Change named", links(*((f"/change-named/{key}/{n}", n.upper()) for n in names)))


@bp.get("/<key>/<name>")
def one(key: str, name: str):  # type: ignore[no-untyped-def]
    first = _version(key) == 1
    root = f"/change-named/{key}/"
    if name == "a":
        head = '<meta name="description" content="About page A">\n' if first else ""
        targets = (root, root + "b") if first else (root, root + "n1", root + "n2", root + "n3")
        return page(
            "Page A" if first else "Page A, renamed",
            "<h1>Page A</h1>" + links(*((t, t.rsplit("/", 1)[-1] or "Home") for t in targets)),
            head=head,
        )
    if name == "b":
        return page("Page B", "<h1>Page B</h1>" + links((root, "Home"))) if first else _not_found()
    if name == "c":
        return (
            page("Page C", "<h1>Page C</h1>" + links((root, "Home"))) if first else redirect(root + "n1", 301)
        )
    if name in ADDED and not first:
        return page(f"Added {name}", f"<h1>Added {name}</h1>" + links((root, "Home")))
    return _not_found()
