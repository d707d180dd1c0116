"""The `text` analyzer by language: English rules on English text, Japanese rules on Japanese text only,
and code, keyboard input, sample output and variables never read as prose (issue 27, point 3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from nitpicker_text import TextAnalyzer
from nitpicker_text.language import block_language, guess
from nitpicker_text.rules import RULES, snippet
from nitpicker_text.visible import sentences
from support import crawl_subtree, run_cli

from nitpicker_core import CHECK_TYPES, PageInput
from nitpicker_core.archive import open_archive

INTRO = "/docs-en/tutorial/intro.html"
LONG_INTRO = (
    "In the following examples, input and output are distinguished by the presence or absence of prompts, and "
    "you must type everything after the prompt when the prompt appears, because lines that do not begin with "
    "a prompt are output from the interpreter, which means that you can copy them into your own session "
    "without changing anything and without worrying about what the interpreter will print back to you in "
    "the meantime, even when the example is very long indeed."
)


# -- the English docs site of test_server, crawled from its subfolder and analyzed by the real CLI ----------
@pytest.fixture(scope="module")
def docs_en(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("docs-en")
    crawled = crawl_subtree(f"{site}/docs-en/tutorial/index.html", workdir, "--no-fetch-external")
    archive = workdir / "analyzed.nitpicker"
    shutil.copy(crawled, archive)
    result = run_cli("analyze", str(archive), "--plugin", "text", cwd=workdir, timeout=300)
    assert result.returncode == 0, result.stderr
    return archive


def test_english_docs_get_english_findings_only(docs_en: Path, site: str) -> None:
    """Measured on Python's tutorial: 752 of 754 findings were the character-counted Japanese long-sentence
    rule on English pages, and `and` and `or` in <code> was a high-priority repeated word."""
    with open_archive(docs_en) as reader:
        rows = reader.violations(analyzer="text")
        pages = {row["url"].removeprefix(site) for row in reader.analysis(analyzer="text")}
    assert {"/docs-en/tutorial/index.html", INTRO, "/docs-en/tutorial/controlflow.html"} <= pages
    assert [
        (r["url"].removeprefix(site), r["rule"], r["severity"], r["location"], r["message"], r["snippet"])
        for r in rows
    ] == [
        (
            INTRO,
            "long-sentence-words",
            "info",
            "body > main > p:nth-of-type(1)",
            "sentence of 79 words (limit 40) (sentence 2)",
            snippet(LONG_INTRO),
        ),
        (
            INTRO,
            "repeated-word",
            "warning",
            "body > main > p:nth-of-type(2)",
            "word “the” repeated: “the the” (sentence 3)",
            "This sentence repeats the the article by mistake.",
        ),
    ]


def test_english_docs_checks_have_fitting_priorities(docs_en: Path) -> None:
    result = run_cli("issues", str(docs_en), "--json", cwd=docs_en.parent, timeout=300)
    assert result.returncode == 0, result.stderr
    found = {
        item["id"]: (item["priority"], item["findings"])
        for item in json.loads(result.stdout)["items"]
        if item["id"].startswith("text/") and item["findings"]
    }
    assert found == {"text/long-sentence-words": ("low", 1), "text/repeated-word": ("medium", 1)}


# -- literal HTML ----------------------------------------------------------------------------------------
def check(body: str, lang: str | None = "en", **settings: Any) -> list[tuple[str, str, str]]:
    """(rule, message, snippet) of every finding in ``body``, in a page declared ``lang`` (None: not)."""
    full = {"disable": [], "max_sentence_length": 100, "max_sentence_words": 40, "dictionary": [], **settings}
    analyzer = TextAnalyzer()
    analyzer.setup(full)
    declared = f' lang="{lang}"' if lang is not None else ""
    html = f"<!DOCTYPE html><html{declared}><head><title>t</title></head><body>{body}</body></html>"
    report = analyzer.each_page(PageInput("http://localhost/x", html, {}, full))
    return [(v.rule, v.message, v.snippet) for v in report.violations]


def rules_of(body: str, lang: str | None = "en", **settings: Any) -> list[str]:
    return [rule for rule, _, _ in check(body, lang, **settings)]


@pytest.mark.parametrize(
    "body",
    [
        "<p>Combine them with the <code>and</code> and <code>or</code> operators.</p>",
        "<p>Then <code>not</code> <code>not</code> negates twice.</p>",
        "<p>Press <kbd>Ctrl</kbd> <kbd>Ctrl</kbd> to stop it.</p>",
        "<p>Here the variable <var>n</var> <var>n</var> is shown twice.</p>",
        "<p>The program prints <samp>ok ok</samp> at the end.</p>",
        "<p>Old pages use <tt>data data</tt> for code.</p>",
        "<p>We set the <code>x</code> the first time round.</p>",  # code between two words parts them
        "<p>Read the <code><span class='pre'>is</span></code> is operator.</p>",
        "<div>Type this:<pre>if a and and_also:\n    pass pass</pre>pass on.</div>",
        "<p>The data <script>var data = 'data data';</script><style>p {}</style>sets.</p>",
        "<p>Your answer: <textarea>yes yes</textarea> yes.</p>",
    ],
)
def test_code_and_other_non_prose_is_not_read(body: str) -> None:
    assert check(body) == []


def test_invisible_text_between_two_words_leaves_them_together() -> None:
    # what a reader sees is "the the": a script or a hidden span does not part the words
    assert rules_of(
        "<p>Read the <script>x()</script>the guide. Read the <span hidden>x</span> the end.</p>"
    ) == ["repeated-word", "repeated-word"]


def test_snippets_show_the_code_the_prose_check_left_out() -> None:
    long = " ".join(f"w{i}" for i in range(38))
    found = check(f"<p>Call <code>print(a, b)</code> and {long}.</p>")
    assert found == [
        (
            "long-sentence-words",
            "sentence of 41 words (limit 40) (sentence 1)",
            f"Call print(a, b) and {long}.",
        )
    ]


def test_repeated_words() -> None:
    body = (
        "<p>The the end. It is a a test. Is IS it? We saw this theme, the thesis and the "
        "<b>is</b> <i>is</i> case.</p><p>Bye-bye bye now. It ends with the</p><p>the next block.</p>"
        "<p>Say the<br>the line. What he had had was that that was fine.</p>"
    )
    assert [(rule, message) for rule, message, _ in check(body)] == [
        ("repeated-word", "word “the” repeated: “The the” (sentence 1)"),
        ("repeated-word", "word “a” repeated: “a a” (sentence 2)"),
        ("repeated-word", "word “is” repeated: “Is IS” (sentence 3)"),
        ("repeated-word", "word “is” repeated: “is is” (sentence 4)"),
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # Sphinx names a parameter in italics right after the noun: a name, not a repeated word
        ("<p>Return the month <em>month</em> of the year <em>year</em>.</p>", []),
        ("<p>Set the scheduling policy for the process with PID <em>pid</em>.</p>", []),
        ("<p><em>exception</em> <span>Exception</span></p>", []),
        ("<p>Send <b>the</b> the signal.</p>", []),
        ("<p>C has signed long long integers.</p>", []),
        # both words plain, both set apart, or both inside one emphasis: a repeat
        ("<p>Send the signal signal now.</p>", ["signal"]),
        ("<p>Send <b>the</b> <i>the</i> signal now.</p>", ["the"]),
        ("<p>Send <em>the the</em> signal now.</p>", ["the"]),
        ("<p>Read <em>a</em> line, then a a line.</p>", ["a"]),
        # offsets hold in later sentences, after code and collapsed white space
        (
            "<p>  First <code>x  y</code>  one.\n  Then   the month  <em> month</em>. And the the end.</p>",
            ["the"],
        ),
    ],
)
def test_words_set_apart_in_italics_or_bold(body: str, expected: list[str]) -> None:
    assert [message.split("”")[0].split("“")[1] for _, message, _ in check(body)] == expected


def test_long_sentences_in_words() -> None:
    forty = " ".join(f"w{i}" for i in range(39)) + " end."
    assert rules_of(f"<p>{forty}</p>") == []
    assert check(f"<p>{forty} {forty.capitalize()}</p>", max_sentence_words=40) == []  # two sentences
    assert [m for _, m, _ in check(f"<p>{forty}</p>", max_sentence_words=39)] == [
        "sentence of 40 words (limit 39) (sentence 1)"
    ]
    # characters do not count in English: 70 words of 1 letter is long, 20 long words are not
    assert rules_of("<p>" + "a b " * 35 + "c.</p>") == ["long-sentence-words"]
    assert rules_of("<p>" + "internationalization localization " * 10 + "done.</p>") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use a list, e.g. a queue. Then stop.", ["Use a list, e.g. a queue.", "Then stop."]),
        ("Pick one, i.e. Python 3.11. It is new.", ["Pick one, i.e. Python 3.11.", "It is new."]),
        ("Pi is 3.14 and v2.0.1 is out. Done.", ["Pi is 3.14 and v2.0.1 is out.", "Done."]),
        ("Ask Dr. Smith and J. R. Hacker. Or not.", ["Ask Dr. Smith and J. R. Hacker.", "Or not."]),
        (
            "See p. 12 and Fig. 3. Apples, pears, etc. and more, etc. The end.",
            ["See p. 12 and Fig. 3.", "Apples, pears, etc. and more, etc.", "The end."],
        ),
        (
            "It stops here... and goes on. 今日は晴れ。明日も。",
            ["It stops here... and goes on.", "今日は晴れ。", "明日も。"],
        ),
        ("No. 5 is mine. The answer is no. Right?", ["No. 5 is mine.", "The answer is no.", "Right?"]),
        # docs start sentences with identifiers: a lower-case word after a period is a new sentence
        (
            "Set the reference point. whence can be omitted.",
            ["Set the reference point.", "whence can be omitted."],
        ),
    ],
)
def test_sentences_do_not_end_at_abbreviations(text: str, expected: list[str]) -> None:
    assert list(sentences(text)) == expected


# -- which rules run: the language of each block --------------------------------------------------------
LONG_JA = "点検の結果は" + "、問題の一覧と集計と変化と提案" * 8 + "をまとめてお届けします。"
LONG_EN = (
    "This deliberately long English sentence goes on and on with many clauses, so that it is far "
    "longer than one hundred characters."
)
TYPO_EN = "This is the the typo."


def test_japanese_rules_only_on_japanese_text() -> None:
    # an English page: its English sentence of 120 characters is no Japanese long sentence
    assert (
        rules_of(f"<p>{LONG_EN}</p><p>The old sign said ｶﾀｶﾅ in narrow letters and ＡＢＣ in wide ones.</p>")
        == []
    )
    # a Japanese page: its English paragraph is read with the English rules, the Japanese one with the Japanese
    assert rules_of(f"<p>{LONG_JA}</p><p>{LONG_EN} {TYPO_EN}</p>", "ja", max_sentence_words=10) == [
        "long-sentence",
        "long-sentence-words",
        "repeated-word",
    ]
    # Japanese text on a page a template declared English is Japanese; lang on an element counts
    assert rules_of(f"<p>{LONG_JA}</p>") == ["long-sentence"]
    assert rules_of(f'<p lang="ja">{LONG_JA}</p><div lang="ja"><p>{TYPO_EN}</p></div>') == [
        "long-sentence",
        "repeated-word",
    ]


def test_other_languages_get_the_language_neutral_rules_only() -> None:
    # "nous nous" and "die die" are grammatical in French and German
    assert rules_of("<p>Nous nous sommes vus.&nbsp;&nbsp;Fin.</p>", "fr") == ["double-space"]
    assert rules_of("<p>Die Frau, die die Zeitung liest, ist hier.</p>", "de-DE") == []
    assert rules_of(f'<p lang="fr">Nous nous sommes vus.</p><p>{TYPO_EN}</p>') == ["repeated-word"]
    assert rules_of("<p>Nous nous sommes vus. Fin.</p>", "fr", dictionary=["fin=terminé"]) == ["dictionary"]


def test_undeclared_pages_are_detected() -> None:
    assert rules_of(f"<p>{TYPO_EN}</p>", None) == ["repeated-word"]
    assert rules_of(f"<p>{LONG_JA}</p>", None) == ["long-sentence"]
    assert rules_of("<p>Nous nous sommes vus, et nous avons parlé de la ville.</p>", None) == []
    # a short block takes the page's language: English here, so "Go go" is a repeat
    assert rules_of(f"<p>{TYPO_EN} It is the guide for the users of the tool.</p><p>Go go.</p>", None) == [
        "repeated-word",
        "repeated-word",
    ]


@pytest.mark.parametrize(
    ("text", "lang", "page", "expected"),
    [
        ("これは日本語の文です。", "en", "en", "ja"),  # the script wins over a template's lang="en"
        ("The word すし means sushi in the shop and in the book.", "en", "", "en"),  # a quoted Japanese word
        ("会社案内", "ja", "ja", "ja"),  # kanji only, declared Japanese
        ("会社案内", "", "", ""),  # kanji only, nothing declared: Chinese as well
        (
            "This is what the tool does for you and your site.",
            "ja",
            "ja",
            "en",
        ),  # no kana or kanji: not Japanese
        ("Fin.", "", "fr", "fr"),
        ("Control Flow", "", "en", "en"),
        ("Ceci est une phrase en français avec des mots.", "", "", ""),
    ],
)
def test_block_language(text: str, lang: str, page: str, expected: str) -> None:
    assert block_language(text, lang, page) == expected


def test_guess() -> None:
    assert guess("It is the end of the story, and that is all there is to it.") == "en"
    assert guess("今日は晴れです。") == "ja"
    assert guess("Python Tutorial") == ""


# -- the catalogue ----------------------------------------------------------------------------------------
def test_every_rule_has_a_type_a_priority_and_japanese_texts() -> None:
    rules = {rule.id: rule for rule in TextAnalyzer().rules()}
    assert list(rules) == list(RULES)
    for rule in rules.values():
        assert rule.type in CHECK_TYPES
        assert rule.fix
        assert all(rule.i18n["ja"].get(name) for name in ("title", "description", "fix")), rule.id
    assert (rules["repeated-word"].priority, rules["repeated-word"].type) == ("medium", "issue")
    assert (rules["doubled-particle"].priority, rules["doubled-particle"].type) == ("medium", "issue")
    assert (rules["long-sentence-words"].priority, rules["long-sentence-words"].type) == ("low", "warning")
    assert (rules["long-sentence"].priority, rules["long-sentence"].type) == ("low", "warning")
    assert TextAnalyzer.version == "2.0.0"
