"""The settings of the crawl checks: how deep a page may sit, which anchor texts say nothing, per language.

Declared once (``register_settings``): the config file's ``[plugins.checks]`` keys and the ``--checks-*``
flags of ``crawl``, ``issues``, ``analyze`` and ``pipeline``. A check names the keys it reads
(``Check.settings``), so a changed value makes only its findings stored with a commit stale.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nitpicker_core import CheckContext, RegisterSetting, UsageError

# The plugin's entry-point name: settings are plugins.checks.<key>, flags --checks-<key>
PLUGIN = "checks"
DEFAULT_MAX_DEPTH = 4
EVERY = "*"  # the language of a phrase or a replaced list that counts for every language
# Anchor texts that say nothing of where the link goes, per language (the page's lang picks the list; pages of
# another or no language get the English one). Compared without case, spaces and end punctuation.
NON_DESCRIPTIVE: dict[str, frozenset[str]] = {
    "en": frozenset(
        {
            "click here",
            "click",
            "here",
            "read more",
            "more",
            "learn more",
            "see more",
            "more info",
            "more information",
            "details",
            "link",
            "this link",
            "this",
            "this page",
            "continue",
            "go",
        }
    ),
    "ja": frozenset(
        {
            "こちら",
            "ここ",
            "こちらをクリック",
            "ここをクリック",
            "クリック",
            "詳しくはこちら",
            "詳細はこちら",
            "詳細",
            "詳しく",
            "もっと見る",
            "続きを読む",
            "続きはこちら",
            "リンク",
            "このページ",
        }
    ),
    "de": frozenset(
        {
            "hier klicken",
            "klicken sie hier",
            "klick hier",
            "hier",
            "klicken",
            "mehr",
            "weiterlesen",
            "weiter lesen",
            "mehr lesen",
            "mehr erfahren",
            "mehr dazu",
            "mehr infos",
            "mehr informationen",
            "details",
            "link",
            "dieser link",
            "diese seite",
            "weiter",
        }
    ),
    "fr": frozenset(
        {
            "cliquez ici",
            "cliquer ici",
            "clique ici",
            "ici",
            "cliquez",
            "plus",
            "lire la suite",
            "lire plus",
            "en savoir plus",
            "voir plus",
            "plus d'infos",
            "plus d'informations",
            "détails",
            "lien",
            "ce lien",
            "cette page",
            "suite",
            "continuer",
        }
    ),
    "es": frozenset(
        {
            "haga clic aquí",
            "haz clic aquí",
            "clic aquí",
            "pulse aquí",
            "pulsa aquí",
            "aquí",
            "clic",
            "más",
            "leer más",
            "seguir leyendo",
            "saber más",
            "ver más",
            "más información",
            "más info",
            "detalles",
            "enlace",
            "este enlace",
            "esta página",
            "continuar",
        }
    ),
}
# Spaces and punctuation at the ends of a text, brackets aside: "link()" or "[1]" names code or a note, not
# the phrase "link"
_ENDS = r"(?:[^\w()\[\]{}]|_)+"
_TRIM = re.compile(rf"^{_ENDS}|{_ENDS}$|\s+(?=\s)")
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_LANGUAGE = re.compile(r"^(?:[a-z]{2,3}|\*)$")


def words(text: str) -> str:
    """An anchor text as compared: case folded, spaces and punctuation at the ends off, inner spaces single.

    Brackets stay unless they enclose the whole text: "(more)" is "more", "link()" names code.
    """
    folded = _TRIM.sub("", text.casefold())
    while len(folded) > 1 and _PAIRS.get(folded[0]) == folded[-1]:
        folded = _TRIM.sub("", folded[1:-1])
    return folded


def register(register: RegisterSetting) -> None:
    register(
        "max_depth",
        type="int",
        default=DEFAULT_MAX_DEPTH,
        help="page-too-deep: internal pages more clicks than this from the crawl's start pages are findings "
        "(0 or more)",
    )
    register(
        "anchor_texts",
        type="list",
        default=[],
        help="anchor-text-non-descriptive: more texts that say nothing, each 'LANG:text' (LANG as in the "
        "page's lang, e.g. en, ja, de; '*:text' for every language)",
    )
    register(
        "anchor_texts_replace",
        type="list",
        default=[],
        help="anchor-text-non-descriptive: languages whose built-in texts anchor_texts replaces rather than "
        "extends ('*': every language)",
    )


def _of(ctx: CheckContext) -> Mapping[str, Any]:
    return ctx.settings_for(PLUGIN)


def max_depth(ctx: CheckContext) -> int:
    """The depth past which a page is too deep; a negative one is an error of the check."""
    value = _of(ctx).get("max_depth")
    depth = DEFAULT_MAX_DEPTH if value is None else int(value)
    if depth < 0:
        raise UsageError(f"plugins.checks.max_depth (--checks-max-depth) must be 0 or more, got {depth}")
    return depth


def anchor_texts(settings: Mapping[str, Any]) -> dict[str, set[str]]:
    """Language → the compared forms of its non-descriptive texts: the built-in lists, extended or replaced.

    A language of the user's own (``pt:clique aqui``) gets a list of its own; ``*`` texts join every list
    (and the English one, which pages of a language without a list get). A malformed entry is a UsageError.
    """
    replaced = set()
    for code in settings.get("anchor_texts_replace") or ():
        code = str(code).strip().lower()
        if not _LANGUAGE.match(code):
            raise UsageError(
                "plugins.checks.anchor_texts_replace (--checks-anchor-texts-replace): expected language codes "
                f"such as en or ja, or '*', got {code!r}"
            )
        replaced.add(code)
    own: dict[str, set[str]] = {}
    for entry in settings.get("anchor_texts") or ():
        code, sep, text = str(entry).partition(":")
        code = code.strip().lower()
        if not sep or not _LANGUAGE.match(code) or not words(text):
            raise UsageError(
                "plugins.checks.anchor_texts (--checks-anchor-texts): expected 'LANG:text' such as "
                f"'en:go here' or '*:text', got {entry!r}"
            )
        own.setdefault(code, set()).add(words(text))
    lists: dict[str, set[str]] = {}
    for code in {*NON_DESCRIPTIVE, *own} - {EVERY}:
        builtin = (
            set()
            if EVERY in replaced or code in replaced
            else {words(t) for t in NON_DESCRIPTIVE.get(code, ())}
        )
        lists[code] = builtin | own.get(code, set()) | own.get(EVERY, set())
    return lists


def non_descriptive_lists(ctx: CheckContext) -> dict[str, set[str]]:
    return anchor_texts(_of(ctx))
