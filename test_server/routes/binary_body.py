"""/binary-body/: bytes that are no text served as text/html, beside real text in other encodings."""

from __future__ import annotations

import random

from flask import Blueprint, Response

from test_server.routes._html import links, page

bp = Blueprint("binary_body", __name__)

# 256 KiB of the same random bytes on every run: what a misconfigured server sends for an archive or image
BLOB = random.Random(33).randbytes(256 * 1024)


@bp.get("/binary-body/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Binary Bodies",
        links(
            ("/binary-body/blob.html", "Blob"),
            ("/binary-body/blob-utf8.html", "Blob UTF-8"),
            ("/binary-body/latin1.html", "Latin-1"),
            ("/binary-body/utf16.html", "UTF-16"),
        ),
    )


@bp.get("/binary-body/blob.html")
def blob():  # type: ignore[no-untyped-def]
    return Response(BLOB, content_type="text/html")


@bp.get("/binary-body/blob-utf8.html")
def blob_utf8():  # type: ignore[no-untyped-def]
    return Response(
        b"<!DOCTYPE html><title>Looks Like</title>" + BLOB, content_type="text/html; charset=UTF-8"
    )


def _text_page(title: str) -> str:
    words = "Café crème brûlée à la française, déjà vu — naïve façade. " * 200
    return (
        f'<!DOCTYPE html><html lang="fr"><head><title>{title}</title></head>'
        f'<body><p>{words}</p><a href="/binary-body/">Haut</a></body></html>'
    )


@bp.get("/binary-body/latin1.html")
def latin1():  # type: ignore[no-untyped-def]
    body = _text_page("Latin Un").replace("—", "-").encode("latin-1")
    return Response(body, content_type="text/html; charset=ISO-8859-1")


@bp.get("/binary-body/utf16.html")
def utf16():  # type: ignore[no-untyped-def]
    return Response(_text_page("Seize").encode("utf-16"), content_type="text/html; charset=UTF-16")
