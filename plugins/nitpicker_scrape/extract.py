"""Shape what extract.js returns into records: metadata columns, anchors, headings, JSON-LD and meta refresh."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from typing import Any

from nitpicker_core import METADATA_FIELDS, Anchor, Heading, JsonLd, heading_text, join_url

EXTRACT_JS = (files(__package__) / "extract.js").read_text(encoding="utf-8")
IMAGES_JS = (files(__package__) / "images.js").read_text(encoding="utf-8")

BOOLEAN_FIELDS = frozenset({"noindex", "nofollow", "noarchive", "noimageindex"})
SCHEMA_PREFIXES = ("https://schema.org/", "http://schema.org/", "schema:")
REFRESH = re.compile(
    r"^\s*(\d+(?:\.\d*)?)\s*(?:[;,]\s*(?:url\s*=\s*)?['\"]?([^'\"]*)['\"]?)?\s*$", re.IGNORECASE
)


def metadata_from(raw: dict[str, Any]) -> dict[str, Any]:
    """Every metadata column, booleans as real booleans."""
    data = {name: raw.get(name) for name in METADATA_FIELDS}
    for name in BOOLEAN_FIELDS:
        data[name] = bool(data[name])
    return data


def anchors_from(raw: list[dict[str, Any]]) -> list[Anchor]:
    """Anchors in document order, the fragment split off the href, the attribute kept as written."""
    anchors: list[Anchor] = []
    for item in raw:
        href, _, fragment = str(item.get("href") or "").partition("#")
        if href:
            written = item.get("raw")
            anchors.append(
                Anchor(
                    href=href,
                    text=str(item.get("text") or ""),
                    fragment=fragment,
                    raw_href=str(written) if written is not None else None,
                )
            )
    return anchors


def headings_from(raw: list[dict[str, Any]]) -> list[Heading]:
    """h1–h6 in document order; anything that is not one is dropped. Each item's ``text`` is the heading's
    whole text, ``links`` the texts of its fragment links: its permalink anchor ("¶") is left out here, for
    the rendered page and the HTML as sent alike (``nitpicker_core.permalink``)."""
    headings = []
    for item in raw:
        level = item.get("level")
        if isinstance(level, int) and 1 <= level <= 6:
            links = item.get("links")
            texts = [str(t) for t in links] if isinstance(links, list) else []
            headings.append(Heading(level=level, text=heading_text(str(item.get("text") or ""), texts)))
    return headings


def _types_of(node: Any) -> list[str]:
    if not isinstance(node, dict):
        return []
    value = node.get("@type")
    values = value if isinstance(value, list) else [value] if value is not None else []
    types = []
    for item in values:
        if isinstance(item, str) and item:
            for prefix in SCHEMA_PREFIXES:
                if item.startswith(prefix):
                    item = item[len(prefix) :]
                    break
            types.append(item)
    return types


def jsonld_types(parsed: Any) -> list[str]:
    """@type values of the top-level items and of their @graph members, schema.org prefix removed, unique."""
    nodes = parsed if isinstance(parsed, list) else [parsed]
    types: list[str] = []
    for node in nodes:
        members = [node]
        if isinstance(node, dict) and isinstance(node.get("@graph"), list):
            members += node["@graph"]
        for member in members:
            types += [t for t in _types_of(member) if t not in types]
    return types


def jsonld_from(scripts: list[dict[str, Any]]) -> list[JsonLd]:
    """Parse each JSON-LD / speculation-rules script; a parse error is kept as text, not raised."""
    items: list[JsonLd] = []
    for script in scripts:
        raw = str(script.get("raw") or "")
        kind = "speculationrules" if script.get("kind") == "speculationrules" else "jsonld"
        item = JsonLd(raw=raw, kind=kind)
        try:
            item.parsed = json.loads(raw)
        except ValueError as exc:
            item.error = str(exc)
        else:
            if kind == "jsonld":
                item.types = jsonld_types(item.parsed)
        items.append(item)
    return items


def parse_refresh(content: str | None, base: str) -> tuple[float, str] | None:
    """(delay, absolute URL) of a ``<meta http-equiv=refresh>`` that points somewhere, else None."""
    if not content:
        return None
    match = REFRESH.match(content)
    if not match or not (match.group(2) or "").strip():
        return None
    return float(match.group(1)), join_url(base, match.group(2).strip())  # RFC 3986: a // in the path stays
