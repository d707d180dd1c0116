"""URL rules of the crawler: normalisation, scope, exclusions and flag-value splitting."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import SplitResult, quote, unquote, unquote_plus, urlsplit, urlunsplit

from wcmatch import glob

from nitpicker_core.url_syntax import UrlJoiner, join, normalize_escapes, remove_dot_segments

__all__ = [
    "Excludes",
    "Scope",
    "ScopeEntry",
    "UrlJoiner",
    "fragment_of",
    "join",
    "looks_like_html",
    "normalize",
    "port_of",
    "remove_dot_segments",
    "split_credentials",
    "split_top_level_commas",
]

DEFAULT_PORTS = {"http": 80, "https": 443}
HTML_EXTENSIONS = frozenset(
    {
        "html",
        "htm",
        "xhtml",
        "xht",
        "shtml",
        "shtm",
        "php",
        "php3",
        "php4",
        "php5",
        "phtml",
        "asp",
        "aspx",
        "jsp",
        "jspx",
        "do",
        "action",
        "cgi",
        "pl",
        "cfm",
        "html5",
    }
)
_DROPPED_PARAMS = frozenset({"phpsessid"})
# Characters left alone when re-quoting: everything RFC 3986 allows, plus "%" so escapes survive
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = _PATH_SAFE + "?"
_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_USERINFO_RE = re.compile(r"^(\s*[a-zA-Z][a-zA-Z0-9+.-]*://)([^/?#]*@)")


def _host_port(scheme: str, netloc_host: str | None, port: int | None) -> str:
    host = (netloc_host or "").lower()
    if host and not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass  # keep the Unicode form rather than fail on a odd label
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    if port is None or DEFAULT_PORTS.get(scheme) == port:
        return host
    return f"{host}:{port}"


def port_of(parts: SplitResult) -> int | None:
    """The port of split URL parts (None when absent); ValueError when it is no port at all.

    The message names the port as written and never the URL, which may carry credentials.
    """
    try:
        return parts.port
    except ValueError:
        written = parts.netloc.rpartition("@")[2].rpartition("]")[2].partition(":")[2]
        raise ValueError(f"invalid port {written!r} (a port is a number from 0 to 65535)") from None


def _clean_path(path: str) -> str:
    # Only RFC 3986 §6.2.2: escapes, then dot segments. Repeated slashes are kept: /a//b is another URL
    # (https://web.archive.org/web/2006/https://www.python.org/ must not become …/https:/www…)
    if not path:
        return "/"
    return remove_dot_segments(normalize_escapes(quote(path, safe=_PATH_SAFE))) or "/"


def _clean_query(query: str) -> str:
    pieces = [p for p in query.split("&") if p]
    kept = [p for p in pieces if unquote_plus(p.split("=", 1)[0]).lower() not in _DROPPED_PARAMS]
    # Sort by key only: a stable sort keeps the order of repeated keys, which servers may rely on
    kept.sort(key=lambda p: unquote_plus(p.split("=", 1)[0]))
    return "&".join(normalize_escapes(quote(p, safe=_QUERY_SAFE)) for p in kept)


def normalize(url: str, base: str | None = None, *, disable_queries: bool = False) -> str:
    """The canonical form used as the identity of a URL.

    RFC 3986 §6.2.2 and nothing more on the path: absolute (joined to ``base`` by ``join``), lower-case
    scheme and host, no default port, escapes in upper case and unreserved ones decoded, dot segments
    removed; repeated slashes are kept, they are part of the path. Beyond the RFC, on purpose: no fragment,
    no credentials, ``PHPSESSID`` dropped, query parameters sorted by key (all dropped with
    ``disable_queries``). An empty path becomes ``/`` so ``http://h`` and ``http://h/`` are one URL. Non-HTTP URLs (``mailto:``, ``data:``…) come back stripped, otherwise as is.
    Raises ValueError for an HTTP URL no request can go to: a port out of 0–65535 or not a number, a broken
    IPv6 literal.
    """
    url = url.strip()
    if base:
        url = join(base, url)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        return url
    # A nonsense port is refused: leaving it out would make http://h:99999/ mean http://h/, another server
    port = port_of(parts)
    netloc = _host_port(scheme, parts.hostname, port)
    query = "" if disable_queries else _clean_query(parts.query)
    return urlunsplit((scheme, netloc, _clean_path(parts.path), query, ""))


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without ``user:pass@`` and the decoded credentials (None when there are none)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # a broken IPv6 literal: the credentials still come out, for error messages to show
        found = _USERINFO_RE.match(url)
        if not found:
            return url, None
        user, _, password = found.group(2).rpartition("@")[0].partition(":")
        return found.group(1) + url[found.end(2) :], (unquote(user), unquote(password))
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=hostport)), (unquote(user), unquote(password))


def _split(url: str) -> SplitResult:
    """``urlsplit`` that never raises: a URL it refuses (a broken IPv6 literal, ``http://[::1``) is all path.

    Such a URL is recorded as an invalid link and never fetched; asking its path or fragment must not fail
    the page that links to it.
    """
    try:
        return urlsplit(url)
    except ValueError:
        return SplitResult("", "", url, "", "")


def fragment_of(url: str) -> str:
    """The fragment without ``#``; empty when there is none."""
    return _split(url.strip()).fragment


def looks_like_html(url: str) -> bool:
    """True when the path suggests a page: no extension, a trailing slash or a page extension."""
    path = _split(url).path
    last = path.rsplit("/", 1)[-1]
    if not last or "." not in last:
        return True
    return last.rsplit(".", 1)[1].lower() in HTML_EXTENSIONS


def split_top_level_commas(value: str) -> list[str]:
    """Split a flag value at commas outside ``{}``, ``[]`` and ``()``: ``/a/*.{html,php},/b/*`` is two."""
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for char in value:
        if char in "{[(":
            depth += 1
        elif char in "}])" and depth:
            depth -= 1
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


@dataclass(frozen=True)
class ScopeEntry:
    """One scope root: hostname, port (None for the scheme's default) and path segments."""

    host: str
    port: int | None
    segments: tuple[str, ...]
    url: str
    credentials: tuple[str, str] | None = None

    def covers(self, host: str, port: int | None, segments: tuple[str, ...]) -> bool:
        return host == self.host and port == self.port and segments[: len(self.segments)] == self.segments


def _locate(url: str) -> tuple[str, int | None, tuple[str, ...]]:
    try:
        parts = urlsplit(url)
    except ValueError:  # a broken IPv6 literal ("http://[::1"): no scope covers it, and it is no host of any
        return "", -1, ()
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1  # no URL with an invalid port is in any scope (and Scope.add refuses such an entry)
    if port is not None and DEFAULT_PORTS.get(scheme) == port:
        port = None  # http://h:80 and https://h:443 are both plain "h"
    host = (parts.hostname or "").lower().rstrip(".")
    segments = tuple(s for s in unquote(re.sub(r"/{2,}", "/", parts.path)).split("/") if s)
    return host, port, segments


def _names_a_page(segment: str) -> bool:
    stem, dot, extension = segment.rpartition(".")
    return bool(dot and stem) and extension.lower() in HTML_EXTENSIONS


SCOPE_MEMO = 100_000  # URLs whose place a Scope remembers (forgotten all at once past it)


class Scope:
    """Which URLs are internal: same host and port as an entry whose path is a segment prefix.

    ``https://h/`` covers the whole host, ``https://h/blog/`` that subtree only. A start URL naming a
    page file (``https://h/docs/index.html``: a page extension, see ``HTML_EXTENSIONS``) covers its
    directory, ``/docs/``; any other start URL ``https://h/a/b`` covers ``/a/b`` and below but not its
    siblings (``/a/c``), since ``/python/3.11`` may well be a directory. Extra values (``--scope``) and
    added URLs (``--list``) are taken as written. The scheme is ignored (http and https of a host are
    one site). Extra values may be URLs or bare ``host[:port]``.
    """

    def __init__(self, roots: list[str], extra: list[str] | None = None) -> None:
        self.entries: list[ScopeEntry] = []
        # where each URL asked about points (host, port, segments): a crawl asks about every link of every
        # page, mostly the same few hundred URLs again (a site's navigation)
        self._located: dict[str, tuple[str, int | None, tuple[str, ...]]] = {}
        for value in roots:
            self.add(value, start=True)
        for value in extra or []:
            self.add(value)

    def add(self, value: str, *, start: bool = False) -> ScopeEntry:
        """Add a scope entry; ``start`` (a start URL) widens a page file to its directory."""
        value = value.strip()
        if not _SCHEME_RE.match(value):
            value = "http://" + value
        bare, credentials = split_credentials(value)
        host, port, segments = _locate(bare)
        url = normalize(bare)
        if start and segments and _names_a_page(segments[-1]) and not urlsplit(bare).path.endswith("/"):
            # users start at /index.html all the time: the scope was that one file (issue 12)
            segments = segments[:-1]
            parts = urlsplit(url)
            url = urlunsplit((parts.scheme, parts.netloc, parts.path.rsplit("/", 1)[0] + "/", "", ""))
        entry = ScopeEntry(host, port, segments, url, credentials)
        self.entries.append(entry)
        return entry

    def _locate(self, url: str) -> tuple[str, int | None, tuple[str, ...]]:
        located = self._located.get(url)
        if located is None:
            if len(self._located) >= SCOPE_MEMO:
                self._located.clear()
            located = self._located[url] = _locate(url)
        return located

    def match(self, url: str) -> ScopeEntry | None:
        """The deepest entry covering ``url``, or None when the URL is external."""
        located = self._locate(url)
        best: ScopeEntry | None = None
        for entry in self.entries:
            if entry.covers(*located) and (best is None or len(entry.segments) > len(best.segments)):
                best = entry
        return best

    def is_internal(self, url: str) -> bool:
        return self.match(url) is not None

    def same_host(self, url: str) -> bool:
        """True when some entry has this host and port, whatever its path (in-site but maybe out of scope)."""
        host, port, _ = self._locate(url)
        return any(e.host == host and e.port == port for e in self.entries)

    def credentials_for(self, url: str) -> tuple[str, str] | None:
        """Basic-auth credentials of the deepest covering entry that has some."""
        located = _locate(url)
        covering = [e for e in self.entries if e.covers(*located) and e.credentials]
        return max(covering, key=lambda e: len(e.segments)).credentials if covering else None


_GLOB_FLAGS = glob.GLOBSTAR | glob.BRACE | glob.EXTGLOB | glob.DOTGLOB | glob.FORCEUNIX


def _without_scheme(url: str) -> str:
    rest = _SCHEME_RE.sub("", url.strip(), count=1)
    authority, sep, tail = rest.partition("/")
    return authority.lower() + sep + tail


@dataclass(frozen=True)
class KeywordHit:
    """An ``--exclude-keyword`` pattern and the text it matched."""

    pattern: str
    text: str


class Excludes:
    """``--exclude`` path globs, ``--exclude-url`` prefixes and ``--exclude-keyword`` regexes."""

    def __init__(
        self,
        globs: list[str] | None = None,
        url_prefixes: list[str] | None = None,
        keywords: list[str] | None = None,
    ) -> None:
        self.globs = list(globs or [])
        # Only what the user asked for: a built-in list once skipped every https://www.google.com link
        self.url_prefixes = list(url_prefixes or [])
        self.keywords = list(keywords or [])
        self._prefixes = [_without_scheme(p) for p in self.url_prefixes]
        self._regexes = [_compile_keyword(k) for k in self.keywords]

    def matches_glob(self, url: str) -> bool:
        if not self.globs:
            return False
        path = _split(url).path or "/"
        # Users write globs decoded (/日本語/*) or encoded; try both forms of the path
        return any(glob.globmatch(p, self.globs, flags=_GLOB_FLAGS) for p in {path, unquote(path)})

    def matches_url(self, url: str) -> bool:
        target = _without_scheme(url)
        for prefix in self._prefixes:
            if not target.startswith(prefix):
                continue
            # A bare-host prefix must end at the host: https://line.me is not https://line.meetup.com
            if "/" in prefix or len(target) == len(prefix) or target[len(prefix)] in "/?#:":
                return True
        return False

    def is_excluded(self, url: str) -> bool:
        return self.matches_glob(url) or self.matches_url(url)

    def keyword_hit(self, html: str) -> KeywordHit | None:
        """The first keyword found in ``html``, or None."""
        for source, regex in zip(self.keywords, self._regexes, strict=True):
            found = regex.search(html)
            if found:
                return KeywordHit(source, found.group(0))
        return None


def _compile_keyword(keyword: str) -> re.Pattern[str]:
    # /pattern/flags is accepted as a JavaScript-style regex literal, as users of the original wrote
    literal = re.fullmatch(r"/(.+)/([a-z]*)", keyword, flags=re.S)
    source, flags = (literal.group(1), re.I if "i" in literal.group(2) else 0) if literal else (keyword, 0)
    try:
        return re.compile(source, flags)
    except re.error:
        return re.compile(re.escape(keyword))
