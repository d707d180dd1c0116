"""/analyze/markup/: pages whose markup findings (rendered DOM, html5lib + structural rules) are known exactly."""

from __future__ import annotations

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("analyze_markup", __name__, url_prefix="/analyze/markup")

PIXEL = "data:image/gif;base64,R0lGODlhAQABAAAAACw="


@bp.get("/")
def top():  # type: ignore[no-untyped-def]
    # Clean: no finding at all
    return page(
        "Markup fixtures",
        "<h1>Markup fixtures</h1>\n" + links(("structure", "Structure rules"), ("parse", "Parse errors")),
    )


@bp.get("/structure")
def structure():  # type: ignore[no-untyped-def]
    # One finding per structural rule, in this order (the comments name them)
    body = f"""<h1>Markup structure</h1>
<div id="dup">first</div>
<div id="dup">second</div>
<img src="{PIXEL}">
<img src="{PIXEL}" alt="">
<img src="{PIXEL}" alt="Pixel">
<h3>Skipped a level</h3>
<h1>Second title</h1>
<a href="/analyze/markup/"></a>
<a href="/analyze/markup/" aria-label="Home"></a>
<button type="button"></button>
<button type="button" title="Close"></button>
<center>Old</center>
<p align="center">Aligned</p>
<label for="missing">Name</label>
<label for="email">Email</label> <input id="email" type="email">"""
    # duplicate-id, img-alt-missing, img-alt-empty, heading-skip, multiple-h1, empty-link, empty-button,
    # obsolete-element, obsolete-attribute, label-without-control
    return page("Markup structure", body)


@bp.get("/parse")
def parse():  # type: ignore[no-untyped-def]
    # No doctype and an empty lang; the script builds nesting the HTML parser would never produce, so the
    # serialized DOM (what the archive keeps) re-parses with errors.
    html = """<html lang=""><head><meta charset="UTF-8"><title>Markup parse errors</title></head>
<body>
<h1>Parse errors</h1>
<p id="host">Text</p>
<a id="outer" href="/analyze/markup/">Outer</a>
<script>
document.getElementById("host").appendChild(document.createElement("div"));
document.getElementById("outer").appendChild(document.createElement("a"));
</script>
</body>
</html>
"""
    return Response(html, content_type="text/html; charset=UTF-8")
