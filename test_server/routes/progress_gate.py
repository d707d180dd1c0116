"""/progress-gate/<run>/: pages that answer only when the test lets them, to read a crawl's progress mid-way.

The top page links to leaves ``alpha`` … ``echo``, to an in-scope redirect loop (an internal error) and to a
closed port on the external host (an external error). Each leaf answers once ``/progress-gate/<run>/open``
was called as many times as its rank (alpha 1, bravo 2, …), so the test decides how far the crawl gets.
Paths have no digits, so the pagination guesser adds nothing.
"""

from __future__ import annotations

import threading

from flask import Blueprint, current_app, redirect, request

from test_server.routes._html import links, page

bp = Blueprint("progress_gate", __name__, url_prefix="/progress-gate")
LEAVES = ("alpha", "bravo", "charlie", "delta", "echo")
_opened: dict[str, int] = {}
_ports: dict[str, int] = {}
_changed = threading.Condition()


@bp.get("/<run>/")
def top(run: str):  # type: ignore[no-untyped-def]
    closed = f"http://127.0.0.1:{_ports.setdefault(run, _closed_port())}/gone"
    return page(
        "Progress Gate",
        links(
            *((f"/progress-gate/{run}/{leaf}", leaf.title()) for leaf in LEAVES),
            (f"/progress-gate/{run}/loop-a", "Loop"),
            (closed, "Gone"),
        ),
    )


@bp.post("/<run>/open")
def open_one(run: str):  # type: ignore[no-untyped-def]
    with _changed:
        _opened[run] = _opened.get(run, 0) + int(request.args.get("n", "1"))
        _changed.notify_all()
    return {"opened": _opened[run]}


@bp.get("/<run>/<leaf>")
def leaf(run: str, leaf: str):  # type: ignore[no-untyped-def]
    if leaf in ("loop-a", "loop-b"):
        return redirect(f"/progress-gate/{run}/{'loop-b' if leaf == 'loop-a' else 'loop-a'}", code=302)
    if leaf not in LEAVES:
        return page("Not Found", "<p>No such leaf.</p>"), 404
    rank = LEAVES.index(leaf) + 1
    stop = current_app.extensions["stop_event"]
    with _changed:  # bounded: a test that never opens the gate must not hang the server's shutdown
        _changed.wait_for(lambda: _opened.get(run, 0) >= rank or stop.is_set(), timeout=300)
    return page(f"Leaf {leaf.title()}", f"<p>The {leaf} leaf.</p>" + links((f"/progress-gate/{run}/", "Top")))


def _closed_port() -> int:
    """A port nothing listens on (bound, then closed): connecting to it is refused at once."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
