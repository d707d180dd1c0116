"""Robots directives of a page, parsed: the meta robots tags and the ``X-Robots-Tag`` header, per user agent.

``parse_directives`` turns what a page said into one rule set per user agent (``"*"`` for every bot), the way
search engines read it: directives are comma-separated and case-insensitive; in the header a
``name: directives`` entry speaks for the bot named until the next bot is named; ``none`` is
``noindex, nofollow``; where two sources disagree the stricter one wins. A bot's rule set includes what every
bot is told. Unknown words are kept under ``unknown`` rather than dropped, so a typo stays visible.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["parse_directives", "says_noindex"]

_FLAGS = ("noarchive", "nocache", "nosnippet", "noimageindex", "notranslate", "indexifembedded")
_VALUED = ("max-snippet", "max-image-preview", "max-video-preview", "unavailable_after")
_KNOWN = {"all", "index", "noindex", "follow", "nofollow", "none", *_FLAGS, *_VALUED}
_SPLIT = re.compile(r"\s*,\s*")
EVERY_BOT = "*"


def _rules() -> dict[str, Any]:
    return {"index": True, "follow": True}


def _apply(rules: dict[str, Any], word: str, value: str | None, source: str) -> None:
    if word in ("noindex", "none"):
        rules["index"] = False
    if word in ("nofollow", "none"):
        rules["follow"] = False
    if word in _FLAGS:
        rules[word] = True
    elif word in _VALUED and value:
        value = value.strip()
        if word in ("max-snippet", "max-video-preview"):
            try:
                number = int(value)
            except ValueError:
                rules.setdefault("unknown", []).append(f"{word}:{value}")
                return
            old = rules.get(word)
            rules[word] = number if old is None or (number != -1 and (old == -1 or number < old)) else old
        elif word == "max-image-preview":
            order = ("none", "standard", "large")
            value = value.lower()
            old = rules.get(word)
            if value not in order:
                rules.setdefault("unknown", []).append(f"{word}:{value}")
            elif old is None or order.index(value) < order.index(old):
                rules[word] = value
        else:
            rules[word] = value
    elif word not in _KNOWN:
        rules.setdefault("unknown", []).append(word)
    sources = rules.setdefault("sources", [])
    if source not in sources:
        sources.append(source)


def _entries(text: str) -> Iterable[tuple[str | None, str, str | None]]:
    """(bot or None, word, value) of each comma-separated entry; a ``bot: word`` entry names the bot."""
    for part in _SPLIT.split(text.strip()):
        if not part:
            continue
        head, colon, rest = part.partition(":")
        name = head.strip().lower()
        if not colon:
            yield None, name, None
        elif name in _VALUED:
            yield None, name, rest
        elif name in _KNOWN:  # "noindex:" and the like: a directive with a stray colon
            yield None, name, None
        else:  # "googlebot: noindex": the bot, and the first directive it is given
            word, _, value = rest.strip().partition(":")
            yield name, word.strip().lower(), value or None


def parse_directives(
    meta: str | None = None, header: str | None = None, bots: dict[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """Rule sets by user agent from the meta robots ``meta``, the ``X-Robots-Tag`` ``header`` and per-bot
    meta tags ``bots`` (``{"googlebot": "noindex"}``). Empty when the page said nothing."""
    found: dict[str, dict[str, Any]] = {}

    def rules_of(bot: str) -> dict[str, Any]:
        return found.setdefault(bot, _rules())

    for text, source in ((meta, "meta"), (header, "header")):
        if not text or not text.strip():
            continue
        bot = EVERY_BOT
        for named, word, value in _entries(text):
            if source == "header" and named is not None:
                bot = named
            if word:
                _apply(rules_of(bot), word, value, source)
    for bot, text in (bots or {}).items():
        for _named, word, value in _entries(text or ""):
            if word:
                _apply(rules_of(bot.lower()), word, value, "meta")
    every = found.get(EVERY_BOT)
    if every:  # what every bot is told, each named bot is told too
        for bot, rules in found.items():
            if bot != EVERY_BOT:
                rules["index"] = rules["index"] and every["index"]
                rules["follow"] = rules["follow"] and every["follow"]
                for key, value in every.items():
                    if key in _FLAGS:
                        rules[key] = True
                    elif key in _VALUED and key not in rules:
                        rules[key] = value
    return found


def says_noindex(header: str | None) -> bool:
    """Whether an ``X-Robots-Tag`` value tells every bot not to index the page."""
    every = parse_directives(header=header).get(EVERY_BOT)
    return every is not None and not every["index"]
