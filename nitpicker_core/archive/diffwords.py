"""What changed in one page, in words: a `page_diff` turned into a short list of plain-language changes.

Each change is a dict with ``change`` (its kind), the values it names and ``text``, the English sentence
("status 200 → 404", "title changed from “A” to “B”", "3 links added, 1 removed"); readers in another
language build their own sentence from the kind and values. A page that became an error page says so first.
"""

from __future__ import annotations

from typing import Any

# Fields said in words, in this order; the others that changed are named together at the end.
WORDED = (
    "title",
    "description",
    "canonical",
    "lang",
    "robots",
    "og_title",
    "og_description",
    "og_image",
    "viewport",
)
FLAGS = ("noindex", "nofollow", "noarchive", "noimageindex")
# Fields that follow from others (hashes and lengths of the content, the status line's text) or are said
# above: never named among the other changes.
SAID = frozenset(
    {
        "status",
        "status_text",
        "redirect_dest",
        "content_type",
        "content_length",
        "html_sha256",
        "source_sha256",
        "is_target",
        "scraped",
        *WORDED,
        *FLAGS,
    }
)
# Headers that change with the content or its type, said by "the HTML changed" and "content type"
FOLLOWING_HEADERS = frozenset({"content-length", "content-type", "etag", "last-modified"})
FACET_NAMES = {
    "anchors": ("link", "links"),
    "images": ("image", "images"),
    "resources": ("resource", "resources"),
    "jsonld": ("JSON-LD block", "JSON-LD blocks"),
    "tags": ("tag", "tags"),
    "headings": ("heading", "headings"),
    "errors": ("page error", "page errors"),
}
QUOTE_CHARS = 80


def _quoted(value: Any) -> str:
    text = " ".join(str(value).split())
    return "“" + (text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…") + "”"


def _error(status: Any) -> bool:
    return isinstance(status, int) and status >= 400


def _empty(value: Any) -> bool:
    return value is None or value == ""


def _item(change: str, text: str, **values: Any) -> dict[str, Any]:
    return {"change": change, **values, "text": text}


def _cell(key: str, old: Any, new: Any) -> dict[str, Any]:
    """An analyzer cell that changed (``extract/price``), worded like a field."""
    if _empty(old) or old == []:
        return _item("field_added", f"{key} added: {_quoted(new)}", field=key, new=new)
    if _empty(new) or new == []:
        return _item("field_removed", f"{key} removed", field=key, old=old)
    return _item(
        "field_changed", f"{key} changed from {_quoted(old)} to {_quoted(new)}", field=key, old=old, new=new
    )


def _status(fields: dict[str, list[Any]]) -> list[dict[str, Any]]:
    if "status" not in fields:
        return []
    old, new = fields["status"]
    if _error(new) and not _error(old):
        return [_item("became_error", f"now an error page: status {old} → {new}", old=old, new=new)]
    if _error(old) and not _error(new):
        return [_item("recovered", f"no longer an error page: status {old} → {new}", old=old, new=new)]
    return [_item("status", f"status {old} → {new}", old=old, new=new)]


def _redirect(fields: dict[str, list[Any]], said: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if "redirect_dest" not in fields:
        return []
    old, new = fields["redirect_dest"]
    if _empty(old):
        status = next((s for s in said if s["change"] == "status"), None)
        if status is not None:  # "status 200 → 301" and "now redirects" are one change
            said.remove(status)
            return [
                _item(
                    "redirects",
                    f"now redirects to {new} (status {status['old']} → {status['new']})",
                    new=new,
                    status=[status["old"], status["new"]],
                )
            ]
        return [_item("redirects", f"now redirects to {new}", new=new)]
    if _empty(new):
        return [_item("redirect_removed", f"no longer redirects (was to {old})", old=old)]
    return [_item("redirect_changed", f"now redirects to {new} instead of {old}", old=old, new=new)]


def _label(name: str) -> str:
    return name.replace("_", ":", 1) if name.startswith(("og_", "twitter_")) else name


def _field(name: str, old: Any, new: Any) -> dict[str, Any] | None:
    label = _label(name)
    if _empty(old) and _empty(new):
        return None
    if _empty(old):
        return _item("field_added", f"{label} added: {_quoted(new)}", field=name, new=new)
    if _empty(new):
        return _item("field_removed", f"{label} removed", field=name, old=old)
    return _item(
        "field_changed",
        f"{label} changed from {_quoted(old)} to {_quoted(new)}",
        field=name,
        old=old,
        new=new,
    )


def _flag(name: str, old: Any, new: Any) -> dict[str, Any] | None:
    if bool(old) == bool(new) or old is None or new is None:  # a page that stopped being HTML has no robots
        return None
    return (
        _item("flag_on", f"now {name}", field=name)
        if new
        else _item("flag_off", f"no longer {name}", field=name)
    )


def _facet(name: str, delta: dict[str, list[Any]]) -> dict[str, Any]:
    added, removed = len(delta.get("added") or []), len(delta.get("removed") or [])
    one, many = FACET_NAMES.get(name, (name, name))
    parts = [
        f"{n} {one if n == 1 else many} {word}" for n, word in ((added, "added"), (removed, "removed")) if n
    ]
    if len(parts) == 2:  # "3 links added, 1 removed"
        parts[1] = f"{removed} removed"
    return _item("facet", ", ".join(parts), facet=name, added=added, removed=removed)


def _headers(delta: dict[str, Any]) -> dict[str, Any] | None:
    names = {
        key: sorted(set(delta.get(key) or {}) - FOLLOWING_HEADERS) for key in ("added", "removed", "changed")
    }
    if not any(names.values()):  # only headers that differ on every response
        return None
    text = "; ".join(f"{', '.join(found)} {key}" for key, found in names.items() if found)
    return _item("headers", f"headers: {text}", **names)


def summarize(delta: dict[str, Any]) -> list[dict[str, Any]]:
    """The changes of a modified page's ``page_diff`` in words, the most telling first (status, redirect,
    content type, then titles and other fields, links and other sets, headers, the content itself)."""
    if delta.get("status") not in ("modified", "gone"):
        return []
    fields: dict[str, list[Any]] = delta.get("fields") or {}
    said = _status(fields)
    said += _redirect(fields, said)
    redirected = bool(said) and said[0]["change"] == "redirects"
    if "content_type" in fields and not (redirected and _empty(fields["content_type"][1])):
        old, new = fields["content_type"]
        said.append(_item("content_type", f"content type {old or '—'} → {new or '—'}", old=old, new=new))
    worded = [item for name in WORDED if name in fields if (item := _field(name, *fields[name]))]
    worded += [item for name in FLAGS if name in fields if (item := _flag(name, *fields[name]))]
    sets = [_facet(name, delta[name]) for name in FACET_NAMES if delta.get(name)]
    # what a page that became an error page or a redirect had went with it: one line
    if said and said[0]["change"] in ("became_error", "redirects"):
        gone = [item for item in worded if item["change"] == "field_removed"]
        emptied = [item for item in sets if not item["added"]]
        worded = [item for item in worded if item not in gone]
        sets = [item for item in sets if item not in emptied]
        if gone or emptied:
            names = [_label(item["field"]) for item in gone] + [
                item["text"].replace(" removed", "") for item in emptied
            ]
            said.append(
                _item(
                    "gone",
                    f"no longer has: {', '.join(names)}",
                    fields=[i["field"] for i in gone],
                    facets={item["facet"]: item["removed"] for item in emptied},
                )
            )
    said += worded + sets
    for key, (old_value, new_value) in (delta.get("analysis") or {}).items():  # extracted values and the like
        said.append(_cell(key, old_value, new_value))
    headers = _headers(delta.get("headers") or {})
    if headers:
        said.append(headers)
    old_html, new_html = fields.get("source_sha256", [None, None])
    if old_html and new_html:  # the same page with other HTML: how much it grew or shrank
        old_size, new_size = fields.get("content_length", [None, None])
        size = (
            f" ({old_size:,} → {new_size:,} bytes)" if old_size is not None and new_size is not None else ""
        )
        said.append(_item("content", f"the HTML changed{size}", old=old_size, new=new_size))
    others = sorted(
        name
        for name, (old, new) in fields.items()
        if name not in SAID and old is not None and new is not None
    )
    if others:
        said.append(_item("other", f"also changed: {', '.join(others)}", fields=others))
    return said
