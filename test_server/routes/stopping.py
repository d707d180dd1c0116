"""/stopping/: a small site whose pages stay busy (an image that never ends until released), for stop and kill tests."""

from __future__ import annotations

import threading

from flask import Blueprint, Response, current_app, redirect

from test_server.routes._html import links, page

bp = Blueprint("stopping", __name__, url_prefix="/stopping")
PAGES = 4  # two in flight at --parallels 2 and two never started when a stop test signals the crawl


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    return page("Stopping Top", links(*((f"/stopping/p/{n}", f"Page {n}") for n in range(1, PAGES + 1))))


@bp.get("/flawed/")
def flawed():  # type: ignore[no-untyped-def]
    # the same busy pages, and first an in-scope redirect loop: a failure before any interruption
    return page(
        "Stopping Flawed",
        links(
            ("/stopping/flawed/loop-a", "Loop"),
            *((f"/stopping/flawed/p/{n}", f"Page {n}") for n in range(1, PAGES + 1)),
        ),
    )


@bp.get("/flawed/loop-a")
def loop_a():  # type: ignore[no-untyped-def]
    return redirect("/stopping/flawed/loop-b", code=302)


@bp.get("/flawed/loop-b")
def loop_b():  # type: ignore[no-untyped-def]
    return redirect("/stopping/flawed/loop-a", code=302)


@bp.get("/flawed/p/<int:n>")
@bp.get("/p/<int:n>")
def child(n: int):  # type: ignore[no-untyped-def]
    # The image keeps the page's network busy, so the page is in flight for seconds (the scrape's
    # network-quiet wait is bounded); its request tells a test that the page is being rendered now.
    return page(
        f"Stopping {n}",
        f'<p>Busy page {n}.</p><img src="/stopping/img/{n}.png" alt="busy">' + links(("/stopping/", "Top")),
    )


def _released() -> threading.Event:
    return current_app.extensions.setdefault("stopping_released", threading.Event())


@bp.post("/release")
def release():  # type: ignore[no-untyped-def]
    # a stop test has stopped its crawl: the images end now (those still trickling too), so a resume renders
    # each page at once instead of waiting out the scrape's network-quiet bound on every one
    _released().set()
    return Response("released\n", content_type="text/plain")


@bp.post("/hold")
def hold():  # type: ignore[no-untyped-def]
    _released().clear()  # busy again: what a test that is about to stop a crawl needs
    return Response("held\n", content_type="text/plain")


@bp.get("/img/<int:n>.png")
def busy_image(n: int):  # type: ignore[no-untyped-def]
    stop, released = current_app.extensions["stop_event"], _released()

    def trickle():  # a byte now and then until the server stops or a test releases it: never ends on its own
        yield b"\x89PNG"
        for _ in range(600):
            if released.is_set() or stop.wait(0.5):
                return
            yield b"\0"

    return Response(trickle(), content_type="image/png")


# /stopping/campaign/: a fast, deterministic site of 19 pages (no numbers in its paths, so no pagination
# guesses) for the kill campaign; each answer waits a little so a crawl lasts long enough to be killed.
SECTIONS = ("alpha", "beta", "gamma")
LEAVES = ("one", "two", "three", "four", "five")
CAMPAIGN_DELAY = 0.15


def campaign_urls() -> list[str]:
    """Every page path of the campaign site, the root first."""
    return [
        "/stopping/campaign/",
        *(f"/stopping/campaign/{s}/" for s in SECTIONS),
        *(f"/stopping/campaign/{s}/{leaf}" for s in SECTIONS for leaf in LEAVES),
    ]


@bp.get("/campaign/")
def campaign_top():  # type: ignore[no-untyped-def]
    current_app.extensions["stop_event"].wait(CAMPAIGN_DELAY)
    return page("Campaign", links(*((f"/stopping/campaign/{s}/", s.title()) for s in SECTIONS)))


@bp.get("/campaign/<section>/")
def campaign_section(section: str):  # type: ignore[no-untyped-def]
    current_app.extensions["stop_event"].wait(CAMPAIGN_DELAY)
    if section not in SECTIONS:
        return page("Not here", status=404)
    return page(
        f"Section {section}",
        links(
            *((f"/stopping/campaign/{section}/{leaf}", leaf) for leaf in LEAVES),
            ("/stopping/campaign/", "Top"),
        ),
    )


@bp.get("/campaign/<section>/<leaf>")
def campaign_leaf(section: str, leaf: str):  # type: ignore[no-untyped-def]
    current_app.extensions["stop_event"].wait(CAMPAIGN_DELAY)
    if section not in SECTIONS or leaf not in LEAVES:
        return page("Not here", status=404)
    others = [(f"/stopping/campaign/{s}/{leaf}", f"{leaf} in {s}") for s in SECTIONS if s != section]
    return page(
        f"{leaf.title()} of {section}",
        f'<img src="/stopping/campaign/{section}/{leaf}.svg" alt="{leaf}">'
        + links(*others, (f"/stopping/campaign/{section}/", "Up")),
    )


@bp.get("/campaign/<section>/<leaf>.svg")
def campaign_image(section: str, leaf: str):  # type: ignore[no-untyped-def]
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><title>{leaf}</title></svg>'
    return Response(svg, content_type="image/svg+xml")
