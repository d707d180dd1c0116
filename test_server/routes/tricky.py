"""Pages that trip naive crawlers: scroll-jack, query-distinct, clobber and HEAD/GET divergence."""

from __future__ import annotations

from flask import Blueprint, redirect, request

from test_server.routes._html import external, internal, links, page

bp = Blueprint("tricky", __name__)


@bp.get("/scroll-jack/")
def scroll_jack():  # type: ignore[no-untyped-def]
    # Only a narrow viewport (a mobile preset) is sent away, and only by script
    script = "<script>if (window.innerWidth < 600) { location.href = '/scroll-jack/mobile'; }</script>"
    return page("Scroll Jack", "<p>Wide viewports stay here.</p>" + script)


@bp.get("/scroll-jack/mobile")
def scroll_jack_mobile():  # type: ignore[no-untyped-def]
    return page("Scroll Jack Mobile")


@bp.get("/query/")
def query():  # type: ignore[no-untyped-def]
    kind = request.args.get("kind")
    if kind in ("alpha", "beta"):
        return page(f"Query {kind.title()}", f"<p>Kind {kind}</p>")
    return page(
        "Query Top",
        links(
            ("/query/?kind=alpha", "Alpha"),
            ("/query/?kind=beta", "Beta"),
            ("/query/?PHPSESSID=abc123&kind=alpha", "Alpha with a session id"),
        ),
    )


@bp.get("/clobber/")
def clobber():  # type: ignore[no-untyped-def]
    return page("Clobber Top", links((external("/clobber/away"), "External that comes back")))


@bp.get("/clobber/away")
def clobber_away():  # type: ignore[no-untyped-def]
    # An external URL whose redirect lands on an internal page: it must not overwrite that page
    return redirect(internal("/clobber/target"), code=301)


@bp.get("/clobber/target")
def clobber_target():  # type: ignore[no-untyped-def]
    return page("Clobber Target", links(("/clobber/", "Back")))


@bp.route("/diverge/", methods=["GET", "HEAD"])
def diverge():  # type: ignore[no-untyped-def]
    # HEAD and GET disagree, as behind some CDNs: the crawler must trust what the browser reached
    if request.method == "HEAD":
        return redirect("/diverge/head-dest", code=302)
    return redirect("/diverge/get-dest", code=302)


@bp.get("/diverge/head-dest")
def diverge_head():  # type: ignore[no-untyped-def]
    return page("Diverge HEAD Destination")


@bp.get("/diverge/get-dest")
def diverge_get():  # type: ignore[no-untyped-def]
    return page("Diverge GET Destination")
