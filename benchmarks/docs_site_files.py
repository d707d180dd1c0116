"""The docs-site benchmark's ground truth: copy Python's HTML docs, inject known faults, read the answers off the files."""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import lxml.html

SOURCE = Path("/usr/share/doc/python3.11/html")
INSTALL_HINT = "apt-get install -y python3.11-doc"
BASE = "http://docs.invalid/"  # a stand-in origin: only paths matter when reading the files

# The faults, chosen once so every run injects the same ones
BROKEN_SOURCE = "library/glob.html"
BROKEN_HREF = "nitpicker-bench-missing.html#section"
BROKEN_TARGET = "library/nitpicker-bench-missing.html"
ORPHAN = "nitpicker-bench-orphan.html"
DUP_FROM, DUP_TO = "library/glob.html", "library/fnmatch.html"  # DUP_TO takes DUP_FROM's title


@dataclass
class Truth:
    """What the files say: pages reachable from index.html, broken anchor targets, orphans, title groups."""

    reachable: set[str] = field(default_factory=set)  # HTML file paths, relative to the site
    broken: dict[str, set[str]] = field(default_factory=dict)  # missing target path -> source paths
    orphans: set[str] = field(default_factory=set)  # HTML files no other HTML file links to
    duplicate_titles: dict[str, set[str]] = field(default_factory=dict)  # title -> reachable pages sharing it
    html_files: set[str] = field(default_factory=set)


def prepare(dest: Path) -> None:
    """Copy the docs to ``dest`` (symlinks followed; dangling ones left out, as the server would 404 them) and inject."""
    shutil.copytree(SOURCE, dest, symlinks=False, ignore_dangling_symlinks=True)
    page = dest / BROKEN_SOURCE
    text = page.read_text(encoding="utf-8")
    marker = '<div class="body" role="main">'
    link = f'\n<p><a href="{BROKEN_HREF}">nitpicker benchmark: a broken link</a></p>'
    if marker not in text:
        raise SystemExit(f"docs_site: {BROKEN_SOURCE} has no {marker!r}; the python3.11-doc layout changed")
    page.write_text(text.replace(marker, marker + link, 1), encoding="utf-8")
    title = _title_of(dest / DUP_FROM)
    dup = dest / DUP_TO
    dup.write_text(
        re.sub(
            r"<title>.*?</title>",
            f"<title>{title}</title>",
            dup.read_text(encoding="utf-8"),
            count=1,
            flags=re.S,
        ),
        encoding="utf-8",
    )
    (dest / ORPHAN).write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>nitpicker benchmark orphan'
        '</title></head><body><h1>Orphan</h1><p>No page links here. <a href="index.html">Home</a></p>'
        "</body></html>\n",
        encoding="utf-8",
    )


def _title_of(path: Path) -> str:
    titles = lxml.html.parse(str(path)).getroot().xpath("//title")
    return titles[0].text_content() if titles else ""


def _to_path(url: str) -> str:
    """A site-relative file path for an URL of the stand-in origin ('' for the root's index)."""
    path = unquote(urlsplit(url).path).lstrip("/")
    return path + "index.html" if path == "" or path.endswith("/") else path


def path_of(url: str, origin: str) -> str | None:
    """The site file an absolute URL names, or None when it is not on ``origin`` (scheme://host:port)."""
    url = urldefrag(url)[0]
    if not url.startswith(origin.rstrip("/") + "/"):
        return None
    return _to_path(BASE + url[len(origin.rstrip("/")) + 1 :])


def read(site: Path, start: str = "index.html") -> Truth:
    """Parse every HTML file of ``site`` and derive the answers a checker should give."""
    truth = Truth()
    links: dict[str, set[str]] = {}
    titles: dict[str, str] = {}
    for file in sorted(site.rglob("*.html")):
        rel = file.relative_to(site).as_posix()
        truth.html_files.add(rel)
        root = lxml.html.parse(str(file)).getroot()
        titles[rel] = " ".join(_title_of(file).split())
        targets = set()
        for href in root.xpath("//a/@href | //area/@href"):
            absolute = urldefrag(urljoin(BASE + rel, href.strip()))[0]
            if absolute.startswith(BASE):
                targets.add(_to_path(absolute))
        links[rel] = targets
    exists = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    # BFS over anchors between HTML files, the way a crawler follows them
    todo, seen = [start], {start}
    while todo:
        page = todo.pop()
        for target in links.get(page, ()):
            if target not in seen and target in truth.html_files:
                seen.add(target)
                todo.append(target)
    truth.reachable = seen
    broken: dict[str, set[str]] = defaultdict(set)
    for page in seen:
        for target in links[page]:
            if target not in exists and not (site / target).is_dir():
                broken[target].add(page)
    truth.broken = dict(broken)
    inbound: dict[str, set[str]] = defaultdict(set)
    for page, targets in links.items():
        for target in targets - {page}:
            inbound[target].add(page)
    truth.orphans = {p for p in truth.html_files if not inbound[p] and p != start}
    groups: dict[str, set[str]] = defaultdict(set)
    for page in seen:
        if titles[page]:
            groups[titles[page]].add(page)
    truth.duplicate_titles = {t: g for t, g in groups.items() if len(g) > 1}
    return truth
