"""`/screenshot/<sha256>`: a page's screenshot or thumbnail (``crawl --screenshots``), by content hash."""

from __future__ import annotations

import base64
import re

from flask import Blueprint, Response, abort, request

from nitpicker_core import NitpickerError, RegisterBlueprint, hookimpl
from nitpicker_viewer.app import has_query, query_once

screenshots = Blueprint("screenshots", __name__)

_SHA256 = re.compile(r"[0-9a-f]{64}")
# Only what the crawl stores is served, each as exactly its own type: never a type a browser would run
IMAGE_TYPES = frozenset({"image/jpeg", "image/png"})
# Content-addressed: the bytes behind a hash never change, so a browser may keep them for good
CACHE_CONTROL = "public, max-age=31536000, immutable"
# Opened on its own, the image is a document: nothing in it may load or run anything
IMAGE_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'self'"


@screenshots.get("/screenshot/<sha256>")
def image(sha256: str) -> Response:
    """The image whose content hash is ``sha256`` (the full size and the thumbnail have one each)."""
    if not _SHA256.fullmatch(sha256) or not has_query("screenshot"):
        abort(404)
    etag = f'"{sha256}"'
    if etag in request.headers.get("If-None-Match", ""):
        return _cached(Response(status=304), etag)
    try:
        found = query_once(
            "screenshot", sha256=sha256
        )  # never kept: images are large and cached by the browser
    except NitpickerError:
        abort(404)
    if found.get("media_type") not in IMAGE_TYPES:
        abort(404)
    response = Response(base64.b64decode(found["data"]), content_type=found["media_type"])
    response.headers["Content-Security-Policy"] = IMAGE_CSP
    return _cached(response, etag)


def _cached(response: Response, etag: str) -> Response:
    response.headers["ETag"] = etag
    response.headers["Cache-Control"] = CACHE_CONTROL
    return response


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    register(screenshots)
