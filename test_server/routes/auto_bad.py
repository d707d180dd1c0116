"""Bad input for ``crawl --render auto`` (issue 32): each page must end as a recorded state with its reason.

/auto-site/bad/ links to:

- plain/1, the sample of a template with no script, which links to plain/2 and to /mojibake: a page of that
  template whose bytes are UTF-8, labelled windows-1252 by the Content-Type header and UTF-8 by a meta
  charset (a browser follows the header: the title shows as "CafÃ©");
- /huge: a page of over 10 MiB (a comment fills it), more than auto reads a template from;
- /comment: HTML with nothing but a comment in it, which no HTML parser makes a document of;
- /binary: bytes that are no text (a PNG's), sent as text/html.

/auto-site/varied/ is a site where every page has a structure of its own: its home page links to
``VARIED`` pages, each with a class name no other page has, so each is a template of its own and auto
degrades to rendering every page once there are more than 50. Paths have no digits, so the pagination
guesser adds nothing.
"""

from __future__ import annotations

from string import ascii_lowercase

from flask import Blueprint, Response, abort

from test_server.routes._html import links, page

bp = Blueprint("auto_bad", __name__, url_prefix="/auto-site")

B = "/auto-site/bad"
V = "/auto-site/varied"
HUGE = 10 * 1024 * 1024 + 4096  # bytes of comment: over the 10 MiB a page is read from
VARIED = 60
TEXT = " ".join(f"word{i}" for i in range(40))
# the first bytes of a PNG and more that no text has
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 16


def _plain(title: str, more: str) -> str:
    return f'<div class="plain"><h1>{title}</h1><p>{TEXT}</p>{more}</div>'


@bp.get("/bad/")
def bad_home():  # type: ignore[no-untyped-def]
    first = ("plain/1", "huge", "comment", "binary")
    return page("Bad", "<main><h1>Bad</h1>" + links(*((f"{B}/{p}", p) for p in first)) + "</main>")


@bp.get("/bad/plain/<int:n>")
def bad_plain(n: int):  # type: ignore[no-untyped-def]
    if n not in (1, 2):
        abort(404)
    others = ((f"{B}/plain/2", "next"), (f"{B}/mojibake", "mojibake")) if n == 1 else ()
    return page(f"Plain {n}", _plain(f"Plain {n}", links(*others, (f"{B}/", "Bad"))))


@bp.get("/bad/mojibake")
def bad_mojibake():  # type: ignore[no-untyped-def]
    html = (
        '<!DOCTYPE html>\n<html lang="fr"><head><meta charset="UTF-8"><title>Café</title></head><body>'
        + _plain("Café", links((f"{B}/", "Bad")))
        + "</body></html>"
    )
    return Response(html.encode("utf-8"), content_type="text/html; charset=windows-1252")


@bp.get("/bad/huge")
def bad_huge():  # type: ignore[no-untyped-def]
    body = _plain("Huge", links((f"{B}/", "Bad"))) + "<!-- " + "x" * HUGE + " -->"
    return page("Huge", body)


@bp.get("/bad/comment")
def bad_comment():  # type: ignore[no-untyped-def]
    return Response("<!-- nothing but a comment -->", content_type="text/html; charset=UTF-8")


@bp.get("/bad/binary")
def bad_binary():  # type: ignore[no-untyped-def]
    return Response(BINARY, content_type="text/html")


def varied_name(n: int) -> str:
    """``n`` in letters (0 → "a", 26 → "ba"): a path and a class name without digits."""
    name = ""
    while True:
        n, rest = divmod(n, 26)
        name = ascii_lowercase[rest] + name
        if not n:
            return name


@bp.get("/varied/")
def varied_home():  # type: ignore[no-untyped-def]
    pages = ((f"{V}/{varied_name(n)}", varied_name(n)) for n in range(VARIED))
    return page("Varied", "<main><h1>Varied</h1>" + links(*pages) + "</main>")


@bp.get("/varied/<name>")
def varied_page(name: str):  # type: ignore[no-untyped-def]
    if name not in {varied_name(n) for n in range(VARIED)}:
        abort(404)
    body = f'<section class="only-{name}"><h1>{name}</h1><p>{TEXT}</p>{links((f"{V}/", "Varied"))}</section>'
    return page(f"Varied {name}", body)
