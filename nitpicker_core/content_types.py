"""Content-type categories: one ordered rule table, from which the Python and SQL classifiers derive."""

from __future__ import annotations

import codecs
import re

#: The types a page's HTML comes as: what the crawler renders and analyzers read.
HTML_TYPES: frozenset[str] = frozenset({"text/html", "application/xhtml+xml"})

# The 18 categories, in display order.
CATEGORIES: tuple[str, ...] = (
    "html",
    "pdf",
    "csv",
    "word",
    "excel",
    "powerpoint",
    "image",
    "css",
    "javascript",
    "json",
    "xml",
    "font",
    "audio",
    "video",
    "archive",
    "text",
    "other",
    "unknown",
)

# (kind, pattern, category), first match wins. Kinds: "exact" (whole type), "prefix" (type starts with
# the pattern) and "suffix" (type ends with the pattern). NULL/empty is "unknown"; no match is "other".
RULES: tuple[tuple[str, str, str], ...] = (
    *(("exact", html, "html") for html in sorted(HTML_TYPES, key=len)),
    ("exact", "application/pdf", "pdf"),
    ("exact", "text/csv", "csv"),
    ("exact", "application/csv", "csv"),
    ("exact", "text/tab-separated-values", "csv"),
    ("exact", "application/msword", "word"),
    ("prefix", "application/vnd.openxmlformats-officedocument.wordprocessingml.", "word"),
    ("prefix", "application/vnd.ms-word.", "word"),
    ("exact", "application/vnd.oasis.opendocument.text", "word"),
    ("exact", "application/rtf", "word"),
    ("exact", "application/vnd.ms-excel", "excel"),
    ("prefix", "application/vnd.openxmlformats-officedocument.spreadsheetml.", "excel"),
    ("prefix", "application/vnd.ms-excel.", "excel"),
    ("exact", "application/vnd.oasis.opendocument.spreadsheet", "excel"),
    ("exact", "application/vnd.ms-powerpoint", "powerpoint"),
    ("prefix", "application/vnd.openxmlformats-officedocument.presentationml.", "powerpoint"),
    ("prefix", "application/vnd.ms-powerpoint.", "powerpoint"),
    ("exact", "application/vnd.oasis.opendocument.presentation", "powerpoint"),
    ("prefix", "image/", "image"),
    ("exact", "text/css", "css"),
    ("exact", "text/javascript", "javascript"),
    ("exact", "application/javascript", "javascript"),
    ("exact", "application/x-javascript", "javascript"),
    ("exact", "application/ecmascript", "javascript"),
    ("exact", "text/ecmascript", "javascript"),
    ("exact", "module/javascript", "javascript"),
    ("exact", "application/json", "json"),
    ("exact", "text/json", "json"),
    ("suffix", "+json", "json"),
    ("exact", "application/xml", "xml"),
    ("exact", "text/xml", "xml"),
    ("suffix", "+xml", "xml"),
    ("prefix", "font/", "font"),
    ("exact", "application/font-woff", "font"),
    ("exact", "application/font-woff2", "font"),
    ("exact", "application/x-font-ttf", "font"),
    ("exact", "application/x-font-otf", "font"),
    ("exact", "application/vnd.ms-fontobject", "font"),
    ("prefix", "audio/", "audio"),
    ("prefix", "video/", "video"),
    ("exact", "application/zip", "archive"),
    ("exact", "application/gzip", "archive"),
    ("exact", "application/x-gzip", "archive"),
    ("exact", "application/x-tar", "archive"),
    ("exact", "application/x-bzip2", "archive"),
    ("exact", "application/x-xz", "archive"),
    ("exact", "application/x-7z-compressed", "archive"),
    ("exact", "application/x-rar-compressed", "archive"),
    ("exact", "application/vnd.rar", "archive"),
    ("exact", "application/zstd", "archive"),
    ("prefix", "text/", "text"),
)

_KINDS = ("exact", "prefix", "suffix")
assert all(kind in _KINDS and category in CATEGORIES for kind, _, category in RULES)


def normalize(content_type: str | None) -> str:
    """``Text/HTML; charset=UTF-8`` → ``text/html``; None → ``""``."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def normalize_content_type(value: str | None) -> str | None:
    """The form the archive stores: ``text/html`` for ``Text/HTML; charset=UTF-8``, None when missing."""
    return normalize(value) or None


def _matches(kind: str, pattern: str, value: str) -> bool:
    if kind == "exact":
        return value == pattern
    if kind == "prefix":
        return value.startswith(pattern)
    return value.endswith(pattern)


def classify(content_type: str | None) -> str:
    """The category of a content type (normalised first)."""
    value = normalize(content_type)
    if not value:
        return "unknown"
    for kind, pattern, category in RULES:
        if _matches(kind, pattern, value):
            return category
    return "other"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_condition(kind: str, pattern: str, column: str) -> str:
    # substr/length compare bytes-exactly, unlike LIKE (case-insensitive, with wildcards).
    if kind == "exact":
        return f"{column} = {_quote(pattern)}"
    size = len(pattern)
    if kind == "prefix":
        return f"substr({column}, 1, {size}) = {_quote(pattern)}"
    return f"(length({column}) >= {size} AND substr({column}, -{size}) = {_quote(pattern)})"


def sql_case(column: str) -> str:
    """An SQL CASE expression giving the category of ``column`` (an already normalised content type)."""
    whens = "".join(
        f" WHEN {_sql_condition(kind, pattern, column)} THEN {_quote(category)}"
        for kind, pattern, category in RULES
    )
    return f"(CASE WHEN {column} IS NULL OR {column} = '' THEN 'unknown'{whens} ELSE 'other' END)"


def sql_filter(column: str, category: str) -> tuple[str, list[str]]:
    """A WHERE condition (and its parameters) selecting rows of ``column`` in ``category``."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown content-type category {category!r}")
    return f"{sql_case(column)} = ?", [category]


# What is read of a body to tell text from bytes that are no text (a misconfigured server's archive or image
# sent as text/html): no text has a NUL in it, and barely any control characters beyond whitespace and ESC
# (ISO-2022-JP's shifts); random bytes have a NUL every 256 and about 10% control characters.
BINARY_SAMPLE = 8192
# the control characters no text has many of: below a space, but for \t \n \r \f and ESC (counted by a
# regular expression at C speed; a Python loop over 8 KiB took 0.17 ms a page)
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def binary_body(body: bytes | str | None) -> bool:
    """True when a body sent as text is not text: a NUL or over 5% control characters in its first 8 KiB.

    ``body`` is the bytes as sent (UTF-16 and UTF-32 read by their byte order mark) or the text a browser
    decoded; any single-byte or multibyte encoding of real text passes.
    """
    if not body:
        return False
    if isinstance(body, bytes):
        head = body[: BINARY_SAMPLE * 4]
        codec = next((name for bom, name in _BOMS if head.startswith(bom)), "latin-1")
        body = head.decode(codec, errors="replace")
    text = body[:BINARY_SAMPLE]
    if "\x00" in text:
        return True
    return len(_CONTROLS.findall(text)) * 20 > len(text)
