"""Pages for the viewer's tests: a page whose script tries to reach the viewer when shown in a frame."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("viewer_fixtures", __name__)

# Harmless when crawled (the page is the top window then); in the viewer's frame it tries everything.
PROBE = """<script>
if (window.top !== window) {
  try { window.parent.document.body.setAttribute("data-pwned", "parent"); } catch (e) {}
  try { window.top.localStorage.setItem("pwned", "storage"); } catch (e) {}
  try { document.cookie = "pwned=cookie; path=/"; } catch (e) {}
  try { new Image().src = "/viewer-sandbox-beacon?from=script"; } catch (e) {}
  try { fetch("/viewer-sandbox-beacon?from=fetch"); } catch (e) {}
  document.documentElement.setAttribute("data-ran", "yes");
}
</script>"""


@bp.get("/viewer-sandbox/")
def probe():  # type: ignore[no-untyped-def]
    body = (
        "<h1>Sandbox probe</h1><p id='probe-text'>Rendered probe content</p>"
        + PROBE
        + '<img src="/viewer-sandbox-beacon?from=img" alt="" '
        "onerror=\"window.parent.document.body.setAttribute('data-pwned', 'onerror')\">"
        + links(('/viewer-sandbox/markup?q="><b id=injected>x</b>', "Escaped <b>link</b>"))
    )
    return page("Sandbox probe <b>bold</b>", body)


@bp.get("/viewer-sandbox/markup")
def markup():  # type: ignore[no-untyped-def]
    return page("Markup target", "<h1>Markup target</h1>")
