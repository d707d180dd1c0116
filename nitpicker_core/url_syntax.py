"""RFC 3986 syntax the URL rules stand on: percent-escapes, dot segments and reference resolution."""

from __future__ import annotations

import string
from urllib.parse import urlsplit, urlunsplit

__all__ = ["join", "normalize_escapes", "remove_dot_segments"]

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")  # RFC 3986 §2.3
_HEX = frozenset(string.hexdigits)


def normalize_escapes(text: str) -> str:
    """Percent-escapes in upper case, those of unreserved characters decoded (RFC 3986 §6.2.2.1–2).

    A stray ``%`` is left as written (browsers send it so); an escape right after one stays encoded when
    decoding it would spell a new escape (``%%41b`` is not ``%Ab``), so normalising twice changes nothing.
    """
    if "%" not in text:  # no escape to change (most URLs): the walk below would copy it as it is
        return text
    out: list[str] = []
    completes = 0  # how many more hex digits would turn the last stray "%" into an escape
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%" and len(text) >= i + 3 and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            if decoded in _UNRESERVED and not (completes and decoded in _HEX):
                out.append(decoded)
                completes = completes - 1 if completes and decoded in _HEX else 0
            else:
                out.append("%" + text[i + 1 : i + 3].upper())
                completes = 0
            i += 3
            continue
        out.append(char)
        completes = 2 if char == "%" else completes - 1 if completes and char in _HEX else 0
        i += 1
    return "".join(out)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4: ``.`` and ``..`` segments resolved; every other segment, empty ones too, kept."""
    out: list[str] = []
    while path:
        if path.startswith("../"):
            path = path[3:]
        elif path.startswith(("./", "/./")):
            path = path[2:]
        elif path == "/.":
            path = "/"
        elif path.startswith("/../") or path == "/..":
            path = "/" + path[4:]
            if out:
                out.pop()
        elif path in (".", ".."):
            path = ""
        else:
            end = path.find("/", 1)
            end = len(path) if end < 0 else end
            out.append(path[:end])
            path = path[end:]
    return "".join(out)


def join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` as RFC 3986 §5.2 says (its non-strict reading, as browsers do).

    Unlike ``urllib.parse.urljoin``, empty path segments survive: ``e//f`` against ``http://a/b/`` is
    ``http://a/b/e//f``.
    """
    r, b = urlsplit(ref), urlsplit(base)
    before_fragment = ref.partition("#")[0]
    after_scheme = before_fragment[len(r.scheme) + 1 :] if r.scheme else before_fragment
    has_authority = after_scheme.startswith("//")
    if r.scheme and (r.scheme.lower() != b.scheme.lower() or has_authority):
        return urlunsplit((r.scheme, r.netloc, remove_dot_segments(r.path), r.query, r.fragment))
    if has_authority:
        return urlunsplit((b.scheme, r.netloc, remove_dot_segments(r.path), r.query, r.fragment))
    if not r.path:
        query = r.query if "?" in before_fragment else b.query
        return urlunsplit((b.scheme, b.netloc, b.path, query, r.fragment))
    if r.path.startswith("/"):
        path = r.path
    elif b.netloc and not b.path:
        path = "/" + r.path
    else:
        path = b.path[: b.path.rfind("/") + 1] + r.path
    return urlunsplit((b.scheme, b.netloc, remove_dot_segments(path), r.query, r.fragment))
