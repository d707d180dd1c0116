"""RFC 3986 syntax the URL rules stand on: percent-escapes, dot segments and reference resolution."""

from __future__ import annotations

import functools
import string
from urllib.parse import urlsplit, urlunsplit

__all__ = ["UrlJoiner", "join", "normalize_escapes", "remove_dot_segments"]

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
    if "/." not in path and not path.startswith("."):
        return path  # no segment starts with a dot, so none is one: every segment kept as it is
    return _remove_dot_segments(path)


@functools.lru_cache(maxsize=4096)  # the same "../" links on every page of a directory
def _remove_dot_segments(path: str) -> str:
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


def _plain_path_ref(ref: str) -> bool:
    """Whether ``ref`` is a path (absolute or relative, maybe with a query and a fragment) that ``urlsplit``
    reads as written: no scheme, no authority, nothing it strips or removes; most links are one."""
    return (
        ref[:1] > " "  # nor empty, nor led by what urlsplit strips
        and ref[0] not in "?#"
        and ":" not in ref
        and ref[:2] != "//"
        and "\t" not in ref
        and "\n" not in ref
        and "\r" not in ref
    )


def join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base`` as RFC 3986 §5.2 says (its non-strict reading, as browsers do).

    Unlike ``urllib.parse.urljoin``, empty path segments survive: ``e//f`` against ``http://a/b/`` is
    ``http://a/b/e//f``.
    """
    if _plain_path_ref(ref):
        # what the general case below does for such a reference, without splitting it with urlsplit
        # (a page's links are resolved one by one: this is most of the time of reading one)
        b = urlsplit(base)
        before_fragment, _, fragment = ref.partition("#")
        path, _, query = before_fragment.partition("?")
        if not path.startswith("/"):
            path = "/" + path if b.netloc and not b.path else b.path[: b.path.rfind("/") + 1] + path
        path = remove_dot_segments(path)
        if b.scheme and b.netloc and path.startswith("/"):  # urlunsplit's result, put together directly
            return f"{b.scheme}://{b.netloc}{path}{'?' if query else ''}{query}{'#' if fragment else ''}{fragment}"
        return urlunsplit((b.scheme, b.netloc, path, query, fragment))
    return _join(base, ref)


def _join(base: str, ref: str) -> str:
    """``join`` for any reference."""
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


class UrlJoiner:
    """``join`` against one base, for the many references of one page, each reference resolved once.

    A page's links to one document differ mostly by their fragments (``os.html#os.getcwd``, ``os.html#os.sep``):
    the part before the fragment is resolved once and the fragment put after it, as RFC 3986 §5.2.2 does (the
    fragment is always the reference's own). Raises ValueError where ``join`` does.
    """

    def __init__(self, base: str) -> None:
        self.base = base
        self._joined: dict[str, str | ValueError] = {}  # reference (before its fragment) → its join

    def __call__(self, ref: str) -> str:
        apart = _fragment_apart(ref)
        rest, fragment = apart if apart is not None else (ref, "")
        joined = self._joined.get(rest)
        if joined is None:
            try:
                joined = join(self.base, rest)
            except ValueError as exc:
                joined = exc
            self._joined[rest] = joined
        if isinstance(joined, ValueError):
            raise joined.with_traceback(None)
        return f"{joined}#{fragment}" if fragment else joined


def _fragment_apart(ref: str) -> tuple[str, str] | None:
    """``ref`` without its fragment, and the fragment, when ``join(base, ref)`` is the first's join with
    ``#fragment`` after it (nothing for an empty fragment) whatever the base; None when ``urlsplit`` might read
    the whole reference otherwise than its parts: only a plain path or no path before the ``#`` qualifies,
    with a fragment ``urlsplit`` keeps as written (none of the tabs and newlines it removes)."""
    rest, sign, fragment = ref.partition("#")
    if not sign or (rest and not _plain_path_ref(rest)):
        return None
    if "\t" in fragment or "\n" in fragment or "\r" in fragment:
        return None
    return rest, fragment
