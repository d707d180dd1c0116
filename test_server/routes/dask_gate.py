"""/dask-gate/<run>/: pages whose render waits on a script the test releases, to act while pages render.

The top page links to leaves ``one`` … ``four``. A leaf's HTML answers at once (the crawler's preflight
passes), but its head loads ``/dask-gate/<run>/hold.js``, which answers only after
``POST /dask-gate/<run>/open``: the browser's load, and so the render, waits for it.
``/dask-gate/<run>/waiting`` says how many ``hold.js`` requests are waiting now.
"""

from __future__ import annotations

import threading

from flask import Blueprint, Response, current_app

from test_server.routes._html import links, page

bp = Blueprint("dask_gate", __name__, url_prefix="/dask-gate")
LEAVES = ("one", "two", "three", "four")
_opened: set[str] = set()
_waiting: dict[str, int] = {}
_changed = threading.Condition()


@bp.get("/<run>/")
def top(run: str):  # type: ignore[no-untyped-def]
    return page("Dask Gate", links(*((f"/dask-gate/{run}/{leaf}", leaf.title()) for leaf in LEAVES)))


@bp.get("/<run>/<leaf>")
def leaf(run: str, leaf: str):  # type: ignore[no-untyped-def]
    if leaf not in LEAVES:
        return page("Not Found", "<p>No such leaf.</p>"), 404
    return page(
        f"Leaf {leaf.title()}",
        links((f"/dask-gate/{run}/", "Top")),
        head=f'<script src="/dask-gate/{run}/hold.js"></script>\n',
    )


@bp.get("/<run>/hold.js")
def hold(run: str):  # type: ignore[no-untyped-def]
    stop = current_app.extensions["stop_event"]
    with _changed:
        _waiting[run] = _waiting.get(run, 0) + 1
        # bounded: a test that never opens the gate must not hang the server's shutdown
        _changed.wait_for(lambda: run in _opened or stop.is_set(), timeout=300)
        _waiting[run] -= 1
    return Response("window.held = true;\n", content_type="text/javascript")


@bp.get("/<run>/waiting")
def waiting(run: str):  # type: ignore[no-untyped-def]
    with _changed:
        return {"waiting": _waiting.get(run, 0)}


@bp.post("/<run>/open")
def open_gate(run: str):  # type: ignore[no-untyped-def]
    with _changed:
        _opened.add(run)
        _changed.notify_all()
    return {"opened": True}
