"""/preflight-ahead/<run>/: two leaves whose render waits until the crawler has asked for the other leaf.

The top page links to ``alpha`` and ``bravo``. Each leaf loads a blocking script ``hold/<leaf>.js`` that
answers once the server has seen any request for the other leaf (or after ``HOLD_SECONDS``): with one tab,
the leaf rendered first meets its condition only if the crawler preflights the next URL while that tab
renders. ``/preflight-ahead/<run>/report`` tells which holds were met and every request seen, in order.
Paths have no digits, so the pagination guesser adds nothing.
"""

from __future__ import annotations

import threading

from flask import Blueprint, Response, current_app, request

from test_server.routes._html import links, page

bp = Blueprint("preflight_ahead", __name__, url_prefix="/preflight-ahead")
LEAVES = ("alpha", "bravo")
HOLD_SECONDS = 30.0
_seen: dict[str, list[str]] = {}
_holds: dict[str, dict[str, bool]] = {}
_changed = threading.Condition()


@bp.get("/<run>/")
def top(run: str):  # type: ignore[no-untyped-def]
    return page(
        "Preflight Ahead", links(*((f"/preflight-ahead/{run}/{leaf}", leaf.title()) for leaf in LEAVES))
    )


@bp.route("/<run>/<leaf>", methods=["GET", "HEAD"])
def leaf(run: str, leaf: str):  # type: ignore[no-untyped-def]
    if leaf not in LEAVES:
        return page("Not Found", "<p>No such leaf.</p>"), 404
    with _changed:
        _seen.setdefault(run, []).append(f"{request.method} {leaf}")
        _changed.notify_all()
    head = f'<script src="/preflight-ahead/{run}/hold/{leaf}.js"></script>\n'
    return page(f"Leaf {leaf.title()}", f"<p>The {leaf} leaf.</p>", head=head)


@bp.get("/<run>/hold/<leaf>.js")
def hold(run: str, leaf: str):  # type: ignore[no-untyped-def]
    other = next(name for name in LEAVES if name != leaf)
    stop = current_app.extensions["stop_event"]

    def asked() -> bool:
        return any(seen.endswith(f" {other}") for seen in _seen.get(run, ()))

    with _changed:  # bounded: a crawler that never asks must not hang the page (or the server's shutdown)
        met = _changed.wait_for(lambda: asked() or stop.is_set(), timeout=HOLD_SECONDS) and asked()
        _holds.setdefault(run, {})[leaf] = met
    return Response("/* held */", content_type="text/javascript")


@bp.get("/<run>/report")
def report(run: str):  # type: ignore[no-untyped-def]
    with _changed:
        return {"seen": list(_seen.get(run, ())), "holds": dict(_holds.get(run, {}))}
