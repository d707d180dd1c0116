"""The settings of the crawl checks as the checks read them: the anchor-text lists per language and their errors."""

from __future__ import annotations

import pytest
from nitpicker_checks.settings import anchor_texts, words

from nitpicker_core import UsageError


@pytest.mark.parametrize(
    ("text", "lang"),
    [("Hier klicken", "de"), ("Mehr erfahren »", "de"), ("Cliquez ici", "fr"), ("En savoir plus", "fr"),
     ("Haga clic aquí", "es"), ("Leer más…", "es")],
)  # fmt: skip
def test_the_built_in_lists_hold_common_phrases_of_each_language(text: str, lang: str) -> None:
    lists = anchor_texts({})
    assert words(text) in lists[lang]
    assert words(text) not in lists["en"]


def test_own_texts_extend_a_language_every_language_or_a_new_one() -> None:
    lists = anchor_texts({"anchor_texts": ["en:Go there", "*:Nach oben", "pt:Clique aqui"]})
    assert {"go there", "click here"} <= lists["en"]
    assert "go there" not in lists["ja"] and "nach oben" in lists["ja"]
    assert lists["pt"] == {"clique aqui", "nach oben"}


def test_replaced_languages_keep_only_the_users_texts() -> None:
    lists = anchor_texts({"anchor_texts": ["ja:こちらから"], "anchor_texts_replace": ["JA"]})
    assert lists["ja"] == {"こちらから"}
    assert "click here" in lists["en"]
    assert all(not texts for texts in anchor_texts({"anchor_texts_replace": ["*"]}).values())


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"anchor_texts": ["click here"]}, "expected 'LANG:text'"),
        ({"anchor_texts": ["english:click"]}, "expected 'LANG:text'"),
        ({"anchor_texts": ["en: … "]}, "expected 'LANG:text'"),
        ({"anchor_texts_replace": ["en-GB"]}, "expected language codes"),
    ],
)
def test_a_malformed_entry_is_one_line_naming_the_setting(settings: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message) as caught:
        anchor_texts(settings)
    assert "plugins.checks." in str(caught.value) and "\n" not in str(caught.value)
