"""Refusals said plainly: a URL without a scheme, roots that could not be reached, an archive of other roots."""

from __future__ import annotations

import re
from pathlib import Path

from nitpicker_core.errors import UsageError

# What each crawl error kind (nitpicker_core/crawler/errors.py) means to someone who typed the URL.
REASONS = {
    "dns": "the host name does not resolve (DNS)",
    "dns-transient": "the DNS lookup failed (temporarily)",
    "connection-refused": "connection refused (nothing listens on {netloc})",
    "connection-reset": "the connection was reset by {netloc}",
    "connection-timeout": "connecting to {netloc} timed out",
    "timeout": "{netloc} did not answer in time",
    "tls": "TLS/SSL handshake with {netloc} failed",
    "parse-error": "the answer of {netloc} is not valid HTTP",
    "client-blocked": "the browser refused to load it",
    "local-network": "the network is unreachable",
    "redirect-loop": "it redirects in a loop",
    "redirect-chain-too-long": "it redirects too many times",
    "invalid-url": "it is not a valid URL",
}
# a host[:port][/path] typed without a scheme: "localhost:8311/", "example.com", "127.0.0.1/a"
_BARE_HOST = re.compile(r"^(?:[\w-]+\.)*[\w-]+(?::\d{1,5})?(?:[/?#].*)?$")


def scheme_hint(url: str) -> str:
    """`` (did you mean http://…?)`` for a URL given without a scheme, else ``""``."""
    if "://" in url or not _BARE_HOST.match(url):
        return ""
    host = re.split(r"[:/?#]", url, maxsplit=1)[0]
    if "." not in host and host != "localhost":
        return ""  # "foo/bar" is more likely a file than a host
    return f" (did you mean http://{url}?)"


def _netloc(url: str) -> str:
    from urllib.parse import urlsplit

    from nitpicker_core.urls import split_credentials

    try:
        return urlsplit(split_credentials(url)[0]).netloc or url
    except ValueError:
        return url


def reason(kind: str, message: str, url: str) -> str:
    """One line saying why ``url`` could not be fetched; the raw message's last part for other kinds."""
    if kind in REASONS:
        return REASONS[kind].format(netloc=_netloc(url))
    tail = (message or kind).strip().splitlines()[0] if (message or kind).strip() else kind
    return f"{kind}: {tail[:200]}"


def unreachable_roots(archive: Path, roots: list[str]) -> list[str]:
    """One line per root of this crawl that failed outright, from the error rows the crawl recorded."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.urls import normalize, split_credentials

    def key(url: str) -> str:
        try:
            return normalize(split_credentials(url)[0])
        except ValueError:
            return url

    wanted = {key(root): split_credentials(root)[0] for root in roots}
    try:
        with open_archive(archive) as reader:
            errors = reader.crawl_errors()
    except Exception:  # the archive could not be read back: the summary line still says how many failed
        return []
    lines = []
    for row in errors:
        shown = wanted.pop(key(row["url"]), None)
        if shown is not None:
            lines.append(f"cannot crawl {shown}: {reason(row['kind'], row['message'], row['url'])}")
    return lines


def check_same_roots(archive: Path, roots: list[str]) -> None:
    """A new crawl into an existing archive must crawl the roots it holds; others need --append/--update.

    Without this, ``crawl OTHER -o existing.nitpicker`` adds a commit of another site and every page of
    the previous one shows as removed. Only read here: the refused archive stays byte-identical.
    """
    if not archive.exists():
        return
    from nitpicker_core.archive import open_archive
    from nitpicker_core.urls import normalize, split_credentials

    try:
        with open_archive(archive) as reader:
            stored = list((reader.info().get("options") or {}).get("roots") or [])
    except Exception:  # not an archive, or broken: the crawl's own checks say so
        return

    def keys(urls: list[str]) -> set[str]:
        return {normalize(split_credentials(u)[0]) for u in urls}

    if not stored or keys(stored) == keys(roots):
        return
    had = ", ".join(split_credentials(u)[0] for u in stored[:3]) + (" …" if len(stored) > 3 else "")
    raise UsageError(
        f"{archive.name} holds a crawl of {had}, not of these URLs: add them with --append {archive.name}, "
        f"crawl its roots again with --update {archive.name}, or write another archive with -o"
    )
