"""Small helpers to build the test pages."""

from __future__ import annotations

from html import escape

from flask import Response, request


def page(title: str, body: str = "", *, lang: str = "en", head: str = "", status: int = 200) -> Response:
    """An HTML document served as ``text/html; charset=UTF-8``."""
    html = (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="UTF-8">\n'
        f"<title>{escape(title)}</title>\n{head}</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
    return Response(html, status=status, content_type="text/html; charset=UTF-8")


def links(*hrefs: tuple[str, str]) -> str:
    """A list of anchors from (href, text) pairs."""
    items = "".join(f'<li><a href="{escape(href)}">{escape(text)}</a></li>' for href, text in hrefs)
    return f"<ul>{items}</ul>"


def external(path: str) -> str:
    """The same server under the "external" hostname, on the port this request came in on."""
    return f"http://127.0.0.1:{request.server[1] if request.server else 80}{path}"


def internal(path: str) -> str:
    """An absolute URL on the internal hostname (for redirects sent from the external one)."""
    return f"http://localhost:{request.server[1] if request.server else 80}{path}"
