"""/robots.txt and the /private/ area it forbids.

The ``*`` group has no Crawl-delay so every other test crawls at full speed; the ``SlowBot`` group
carries one (``Crawl-delay: 2``) for tests that send that user agent.
"""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("robots", __name__)

ROBOTS_TXT = """User-agent: *
Disallow: /private/

User-agent: SlowBot
Disallow: /private/
Crawl-delay: 2
"""


@bp.get("/robots.txt")
def robots_txt():  # type: ignore[no-untyped-def]
    return Response(ROBOTS_TXT, content_type="text/plain; charset=UTF-8")


@bp.get("/private/")
def private_top():  # type: ignore[no-untyped-def]
    return page("Private Top", links(("/private/page", "Private page")))


@bp.get("/private/page")
def private_page():  # type: ignore[no-untyped-def]
    return page("Private Page", "<p>Robots may not read this.</p>")
