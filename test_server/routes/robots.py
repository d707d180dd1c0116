"""/robots.txt and the /private/ area it forbids; /ai-crawlers/, whose members area one AI crawler may not read.

The ``*`` group has no Crawl-delay so every other test crawls at full speed; the ``SlowBot`` group
carries one (``Crawl-delay: 2``) for tests that send that user agent. GPTBot, CCBot and Google-Extended
may fetch nothing at all, ClaudeBot anything but /ai-crawlers/members/ (the crawlers query,
nitpicker_core/crawler_access.py); no crawl of the tests sends those user agents.

/ai-crawlers/ has four pages: the top, /about (with a link to another host), /members/ and /members/page.
"""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import external, links, page

bp = Blueprint("robots", __name__)

ROBOTS_TXT = """User-agent: *
Disallow: /private/

User-agent: SlowBot
Disallow: /private/
Crawl-delay: 2

User-agent: GPTBot
User-agent: CCBot
User-agent: Google-Extended
Disallow: /

User-agent: ClaudeBot
Disallow: /ai-crawlers/members/
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


@bp.get("/ai-crawlers/")
def ai_top():  # type: ignore[no-untyped-def]
    return page(
        "AI Crawlers Top",
        links(("/ai-crawlers/about", "About"), ("/ai-crawlers/members/", "Members")),
    )


@bp.get("/ai-crawlers/about")
def ai_about():  # type: ignore[no-untyped-def]
    # a link to another host: its robots.txt is not the site's (the crawl keeps only the site's)
    return page("About", "<p>Anyone may read this.</p>" + links((external("/about"), "Elsewhere")))


@bp.get("/ai-crawlers/members/")
def ai_members():  # type: ignore[no-untyped-def]
    return page("Members", links(("/ai-crawlers/members/page", "A members' page")))


@bp.get("/ai-crawlers/members/page")
def ai_members_page():  # type: ignore[no-untyped-def]
    return page("Members' Page", "<p>ClaudeBot may not read this.</p>")
