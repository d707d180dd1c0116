"""The `text` analyzer: exact findings on the crawled /analyze/text/ pages; each rule and setting alone.

Languages, code in prose and the English rules are tested in test_text_language.py."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from nitpicker_text import TextAnalyzer, options_from
from nitpicker_text.rules import RULES
from support import crawl_subtree, run_cli

from nitpicker_core import PageInput, UsageError
from nitpicker_core.archive import open_archive

CONFIG = '[plugins.text]\ndictionary = ["サーバ=サーバー", "utilize=use"]\n'
LONG_JA = (
    "点検の結果は、ページごとの問題の一覧と、問題の種類ごとの集計と、前回の点検からの変化と、次の点検までに直して"
    "おきたい箇所の提案をまとめた報告書として、毎月の第一営業日にメールでお届けしますので、社内での共有にご活用ください。"
)
JA = "/analyze/text/ja"
EN = "/analyze/text/en"
# (page, rule, severity, location, message, snippet) in the order the archive returns them
FINDINGS = [
    (
        EN,
        "repeated-word",
        "warning",
        "body > p:nth-of-type(1)",
        "word “the” repeated: “the the” (sentence 2)",
        "We check the the links on every page.",
    ),
    (
        EN,
        "dictionary",
        "warning",
        "body > p:nth-of-type(1)",
        "“utilize”: use “use” (sentence 3)",
        "Please utilize the report to fix them.",
    ),
    (
        EN,
        "double-space",
        "info",
        "body > p:nth-of-type(2)",
        "2 spaces in a row (U+00A0 U+00A0) (sentence 4)",
        "Prices start at\xa0\xa010 dollars.",
    ),
    (
        JA,
        "doubled-particle",
        "warning",
        "body > p:nth-of-type(1)",
        "particle 「を」 twice in a row: 「をを」 (sentence 3)",
        "お客様のサイトをを毎月点検します。",
    ),
    (
        JA,
        "mixed-style",
        "warning",
        "body > p:nth-of-type(2)",
        "である style; 9 other sentences of this page use です・ます style (sentence 4)",
        "この報告書は重要である。",
    ),
    (
        JA,
        "halfwidth-kana",
        "warning",
        "body > p:nth-of-type(3)",
        "half-width katakana 「ｻｰﾋﾞｽ」: use 「サービス」 (sentence 5)",
        "ｻｰﾋﾞｽの詳細は担当者にお問い合わせください。",
    ),
    (
        JA,
        "mixed-width-alnum",
        "info",
        "body > p:nth-of-type(4)",
        "full-width 「１０００」 in a page that also uses half-width letters and digits: use “1000” (sentence 6)",
        "料金は月額１０００円です。",
    ),
    (
        JA,
        "doubled-particle",
        "warning",
        "body > ul > li:nth-of-type(1)",
        "particle 「の」 twice in a row: 「のの」 (sentence 8)",
        "社内のの担当者が対応します。",
    ),
    (
        JA,
        "dictionary",
        "warning",
        "body > ul > li:nth-of-type(2)",
        "“サーバ”: use “サーバー” (sentence 9)",
        "サーバの設定とサーバーの監視を行います。",
    ),
    (
        JA,
        "double-space",
        "info",
        "#note",
        "2 spaces in a row (U+3000 U+3000) (sentence 10)",
        "窓口は\u3000\u3000平日のみです。",
    ),
    (
        JA,
        "long-sentence",
        "info",
        "body > p:nth-of-type(6)",
        "sentence of 112 characters (limit 100) (sentence 11)",
        LONG_JA,
    ),
]
CELLS = {
    "/analyze/text/": {"characters": (24, ""), "sentences": (3, ""), "findings": (0, ""), "style": ("", "")},
    "/analyze/text/clean": {
        "characters": (19, ""),
        "sentences": (2, ""),
        "findings": (0, ""),
        "style": ("desu-masu", ""),
    },
    EN: {"characters": (243, ""), "sentences": (6, ""), "findings": (3, ""), "style": ("", "")},
    JA: {
        "characters": (275, ""),
        "sentences": (11, ""),
        "findings": (8, ""),
        "style": ("mixed", "mixed: see the mixed-style findings"),
    },
}


# -- the crawled fixture pages, through the real CLI ---------------------------------------------------
@pytest.fixture(scope="module")
def crawled(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return crawl_subtree(f"{site}/analyze/text/", tmp_path_factory.mktemp("text"))


def analyze(crawled: Path, workdir: Path, *args: str, config: str = "") -> tuple[Any, Path]:
    """``nitpicker analyze`` on a copy of the crawl in ``workdir`` (with ``config`` as its nitpicker.toml)."""
    archive = workdir / "site.nitpicker"
    shutil.copy(crawled, archive)
    if config:
        (workdir / "nitpicker.toml").write_text(config, encoding="utf-8")
    return run_cli("analyze", str(archive), "--plugin", "text", *args, cwd=workdir, timeout=300), archive


def findings(archive: Path, site: str) -> list[tuple[str, ...]]:
    with open_archive(archive) as reader:
        rows = reader.violations(analyzer="text")
    return [
        (r["url"].removeprefix(site), r["rule"], r["severity"], r["location"], r["message"], r["snippet"])
        for r in rows
    ]


@pytest.fixture(scope="module")
def analyzed(crawled: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    result, archive = analyze(crawled, tmp_path_factory.mktemp("text-default"), config=CONFIG)
    assert result.returncode == 0, result.stderr
    return archive


def test_findings_on_the_fixture_pages(analyzed: Path, site: str) -> None:
    assert findings(analyzed, site) == FINDINGS


def test_cells_on_the_fixture_pages(analyzed: Path, site: str) -> None:
    with open_archive(analyzed) as reader:
        rows = reader.analysis(analyzer="text")
    cells: dict[str, dict[str, tuple[Any, str]]] = {}
    for row in rows:
        cells.setdefault(row["url"].removeprefix(site), {})[row["column"]] = (row["value"], row["note"])
    assert cells == CELLS


def test_settings_from_flags(crawled: Path, site: str, tmp_path: Path) -> None:
    result, archive = analyze(
        crawled,
        tmp_path,
        "--text-disable",
        "doubled-particle",
        "--text-max-sentence-length",
        "115",
        config=CONFIG,
    )
    assert result.returncode == 0, result.stderr
    expected = [f for f in FINDINGS if f[1] != "doubled-particle" and f[5] != LONG_JA]
    assert findings(archive, site) == [
        (*f[:4], f[4].replace("(limit 100)", "(limit 115)"), f[5]) for f in expected
    ]


@pytest.mark.parametrize(
    ("args", "config", "error"),
    [
        (
            ("--text-disable", "no-such-rule"),
            "",
            f"nitpicker: error: text: unknown rule no-such-rule in disable (known: {', '.join(RULES)})",
        ),
        (
            (),
            '[plugins.text]\ndictionary = ["missing-words.txt"]\n',
            "nitpicker: error: text: cannot read dictionary file missing-words.txt: FileNotFoundError",
        ),
    ],
)
def test_bad_settings_stop_before_the_run(
    crawled: Path, tmp_path: Path, args: tuple[str, ...], config: str, error: str
) -> None:
    result, archive = analyze(crawled, tmp_path, *args, config=config)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [error]
    with open_archive(archive) as reader:
        assert reader.analyzer_runs() == []


# -- each rule and setting on literal HTML -------------------------------------------------------------
def check(
    body: str, lang: str | None = None, **settings: Any
) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    """(rule, location, message) of every finding in ``body`` (in a page of ``lang``), and the cells."""
    full = {"disable": [], "max_sentence_length": 100, "max_sentence_words": 40, "dictionary": [], **settings}
    analyzer = TextAnalyzer()
    analyzer.setup(full)
    declared = f' lang="{lang}"' if lang is not None else ""
    html = f"<!DOCTYPE html><html{declared}><head><title>t</title></head><body>{body}</body></html>"
    report = analyzer.each_page(PageInput("http://localhost/x", html, {}, full))
    return [(v.rule, v.location, v.message) for v in report.violations], report.cells


def rules_of(body: str, lang: str | None = None, **settings: Any) -> list[str]:
    return [rule for rule, _, _ in check(body, lang, **settings)[0]]


def test_hidden_and_non_prose_text_is_skipped() -> None:
    body = """<p>Visible.</p><p hidden>the the</p><div aria-hidden="true">the the</div>
    <div style="display:none">the the</div><span aria-hidden="false">Shown.</span><script>the the</script>
    <style>p::after {content: "the the"}</style><noscript>the the</noscript><template>the the</template>
    <pre>the the  x</pre><textarea>the the</textarea><!-- the the -->"""
    found, cells = check(body)
    assert found == []
    assert (cells["characters"], cells["sentences"]) == (14, 2)


@pytest.mark.parametrize(
    ("body", "style", "flagged"),
    [
        ("<p>今日は晴れです。明日は雨でしょう。これはペンである。</p>", "mixed", ["これはペンである。"]),
        (
            "<p>これは本だ。それは机だった。問題ないだろう。ご確認ください。</p>",
            "mixed",
            ["ご確認ください。"],
        ),
        (
            "<p>これはペンではない。雨が降りませんでした。</p>",
            "mixed",
            ["これはペンではない。"],
        ),  # a tie: plain reported
        ("<p>行きましょう。ございます。ですよね。</p>", "desu-masu", []),
        ("<p>これは本だよ。本を読む。</p>", "de-aru", []),
        ("<p>本を読む。English only.</p>", "", []),
        (
            "<p>今日は晴れです。まだ。ただ。</p>",
            "desu-masu",
            [],
        ),  # adverbs, not だ: the tokenizer tells them apart
    ],
)
def test_mixed_style(body: str, style: str, flagged: list[str]) -> None:
    analyzer = TextAnalyzer()
    analyzer.setup({})
    report = analyzer.each_page(PageInput("http://localhost/x", f"<body>{body}</body>", {}, {}))
    assert report.cells["style"].value == style
    assert [v.snippet for v in report.violations if v.rule == "mixed-style"] == flagged


def test_doubled_particle() -> None:
    found, _ = check(
        "<p>私のの本。</p><p>本をを読むがが好き。</p><p>東京からから来た。</p>"
        "<p>ここには、いろいろ、まだまだある。</p>"
    )
    assert found == [
        (
            "doubled-particle",
            "body > p:nth-of-type(1)",
            "particle 「の」 twice in a row: 「のの」 (sentence 1)",
        ),
        (
            "doubled-particle",
            "body > p:nth-of-type(2)",
            "particle 「を」 twice in a row: 「をを」 (sentence 2)",
        ),
        (
            "doubled-particle",
            "body > p:nth-of-type(2)",
            "particle 「が」 twice in a row: 「がが」 (sentence 2)",
        ),
        (
            "doubled-particle",
            "body > p:nth-of-type(3)",
            "particle 「から」 twice in a row: 「からから」 (sentence 3)",
        ),
    ]


def test_halfwidth_kana_and_mixed_width() -> None:
    assert check("<p>ｶﾞｲﾄﾞを読む。</p>")[0] == [
        ("halfwidth-kana", "body > p", "half-width katakana 「ｶﾞｲﾄﾞ」: use 「ガイド」 (sentence 1)")
    ]
    assert rules_of("<p>ＡＢＣと１２３。</p>") == []  # full-width only: consistent
    assert check("<p>ＡＢＣ社</p><p>2024年</p>", "ja")[0] == [
        (
            "mixed-width-alnum",
            "body > p:nth-of-type(1)",
            "full-width 「ＡＢＣ」 in a page that also uses half-width letters and digits: use “ABC” (sentence 1)",
        )
    ]


def test_long_sentence_limit() -> None:
    assert rules_of(f"<p>{'あ' * 99}。</p>") == []  # 100 characters with the period
    assert check(f"<p>{'あ' * 100}。</p>")[0] == [
        ("long-sentence", "body > p", "sentence of 101 characters (limit 100) (sentence 1)")
    ]
    assert check("<p>短い文です。少し長い文になります。</p>", max_sentence_length=8)[0] == [
        ("long-sentence", "body > p", "sentence of 11 characters (limit 8) (sentence 2)")
    ]


def test_repeated_word() -> None:
    assert check("<p>The the end. It was the. The end. <b>is</b> <i>is</i> it?</p>")[0] == [
        ("repeated-word", "body > p", "word “the” repeated: “The the” (sentence 1)"),
        ("repeated-word", "body > p", "word “is” repeated: “is is” (sentence 4)"),
    ]


def test_double_space() -> None:
    found, _ = check(
        "<p>Source   spaces collapse.</p><p>One&nbsp; two.</p><p>\u3000\u3000字下げ。</p><p>A\u3000B.</p>"
    )
    assert found == [
        ("double-space", "body > p:nth-of-type(2)", "2 spaces in a row (U+00A0 space) (sentence 2)"),
        ("double-space", "body > p:nth-of-type(3)", "2 spaces in a row (U+3000 U+3000) (sentence 3)"),
    ]


def test_dictionary_items_and_file(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("# forbidden=preferred\n\ncat = feline\nサーバ=サーバー\n", encoding="utf-8")
    body = "<p>A Cat, a catalog, a cat.</p><p>サーバーとサーバ。</p><p>Please utilize it.</p>"
    assert check(body, dictionary=[str(words), "utilize=use", "please="])[0] == [
        ("dictionary", "body > p:nth-of-type(1)", "“Cat”: use “feline” (sentence 1)"),
        ("dictionary", "body > p:nth-of-type(1)", "“cat”: use “feline” (sentence 1)"),
        ("dictionary", "body > p:nth-of-type(2)", "“サーバ”: use “サーバー” (sentence 2)"),
        ("dictionary", "body > p:nth-of-type(3)", "“utilize”: use “use” (sentence 3)"),
        ("dictionary", "body > p:nth-of-type(3)", "“Please” (sentence 3)"),
    ]


EVERY_RULE = (
    "<p>今日は晴れです。明日も晴れです。これは本である。</p><p>私のの本です。</p><p>ｶﾅです。</p>"
    "<p>ＡＢＣです。</p><p>長い文を書くと読みにくくなります。</p>"
    "<p>The the cat&nbsp;&nbsp;sat on a mat that is very long indeed.</p>"
)


@pytest.mark.parametrize("rule", list(RULES))
def test_every_rule_can_be_disabled(rule: str) -> None:
    settings: dict[str, Any] = {"max_sentence_length": 10, "max_sentence_words": 5, "dictionary": ["mat=rug"]}
    everything = rules_of(EVERY_RULE, **settings)
    assert sorted(set(everything)) == sorted(RULES)
    remaining = rules_of(EVERY_RULE, **settings, disable=[rule])
    assert remaining == [r for r in everything if r != rule]


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        ({"disable": ["nope"]}, "text: unknown rule nope in disable"),
        ({"max_sentence_length": 0}, "text: max_sentence_length must be at least 1, got 0"),
        ({"max_sentence_words": 0}, "text: max_sentence_words must be at least 1, got 0"),
        ({"dictionary": ["=x"]}, "text: dictionary entry '=x': expected 'forbidden=preferred'"),
        (
            {"dictionary": ["/no/such/dir/words.txt"]},
            "text: cannot read dictionary file words.txt: FileNotFoundError",
        ),
    ],
)
def test_bad_settings(settings: dict[str, Any], error: str) -> None:
    with pytest.raises(UsageError) as caught:
        options_from(settings)
    assert str(caught.value).startswith(error)
    assert "/no/such" not in str(caught.value)


def test_tokenizer_is_built_once_per_worker() -> None:
    analyzer = TextAnalyzer()
    analyzer.setup({})
    assert analyzer.checker is not None
    tokenizer = analyzer.checker.tokenizer
    for _ in range(2):
        analyzer.each_page(PageInput("http://localhost/x", "<p>私のの本です。</p>", {}, {}))
    assert analyzer.checker.tokenizer is tokenizer
