"""/analyze/text/ and /analyze/search/: pages whose proofreading findings and keyword counts are known."""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("analyze_text", __name__, url_prefix="/analyze")

# Text that would be reported if it were visible; every page hides it in each way the analyzers skip.
HIDDEN = """<p hidden>これは隠れた文だ。the the</p>
<div aria-hidden="true">ｶﾅ　　の の the the</div>
<div style="color: red; display: none">私のの本。apple apple</div>
<script>var note = "the the ｶﾅ apple";</script>
<noscript><p>the the apple</p></noscript>
<template><p>the the apple</p></template>
<!-- the the apple -->"""


@bp.get("/text/")
def text_top():  # type: ignore[no-untyped-def]
    return page(
        "Text Top",
        links(("ja", "日本語のページ"), ("en", "English page"), ("clean", "整ったページ")),
        lang="ja",
    )


@bp.get("/text/ja")
def text_ja():  # type: ignore[no-untyped-def]
    body = f"""<h1>会社案内</h1>
<p>私たちはウェブサイトの品質を確認しています。お客様のサイトをを毎月点検します。</p>
<p>この報告書は重要である。</p>
<p>ｻｰﾋﾞｽの詳細は担当者にお問い合わせください。</p>
<p>料金は月額１０００円です。年間契約では12か月分をまとめてお支払いいただきます。</p>
<ul><li>社内のの担当者が対応します。</li><li>サーバの設定とサーバーの監視を行います。</li></ul>
<p id="note">窓口は　　平日のみです。</p>
<p>点検の結果は、ページごとの問題の一覧と、問題の種類ごとの集計と、前回の点検からの変化と、次の点検までに直しておきたい箇所の提案をまとめた報告書として、\
毎月の第一営業日にメールでお届けしますので、社内での共有にご活用ください。</p>
{HIDDEN}"""
    return page("日本語のページ", body, lang="ja")


@bp.get("/text/en")
def text_en():  # type: ignore[no-untyped-def]
    body = f"""<h1>About the service</h1>
<p>We check the the links on every page. Please utilize the report to fix them.</p>
<p>Prices start at&nbsp;&nbsp;10 dollars.<br>Source   spaces    collapse when the page is rendered.</p>
<div><p>The report lists every broken link, every missing image description and every page that is slower \
than the limit you set.</p></div>
<pre>code  keeps   its spaces the the</pre>
{HIDDEN}"""
    return page("English page", body)


@bp.get("/text/clean")
def text_clean():  # type: ignore[no-untyped-def]
    return page("整ったページ", "<p>本日は晴天です。明日も晴れるでしょう。</p>", lang="ja")


@bp.get("/search/")
def search_top():  # type: ignore[no-untyped-def]
    return page("Search Top", links(("page-a", "Apple page"), ("page-b", "Page without main")))


@bp.get("/search/page-a")
def search_a():  # type: ignore[no-untyped-def]
    body = f"""<header><p>Fresh apple pie</p></header>
<main>
<h1>Apples and pears</h1>
<p>An APPLE a day. Apple juice and pineapple.</p>
<p title="apple pear">Pears: 3 kinds, 12 pears sold.</p>
<p>東京タワーと東京駅</p>
<p><a href="/analyze/search/page-b" title="apple">Next</a></p>
{HIDDEN}
</main>
<footer><p>apple</p><p>pie</p></footer>"""
    return page("Apple page", body)


@bp.get("/search/page-b")
def search_b():  # type: ignore[no-untyped-def]
    return page("Page without main", "<div><p>Apple pie. 東京</p></div>")
