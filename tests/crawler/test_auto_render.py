"""``--render auto``'s parts without a crawl: the template key, a group's verdict, the bounded degradation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nitpicker_scrape

from nitpicker_core import CrawlContext, ScrapeResult
from nitpicker_core.crawler import reading
from nitpicker_core.crawler.auto import (
    MIN_GROUPS,
    AutoRender,
    Decision,
    differences,
    stored_verdict,
    template_key,
)


def _html(body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>".encode()


def test_pages_of_one_structure_share_a_key_whatever_their_text():
    one = _html('<main id="post-12"><h1>One</h1><p>a</p><p>b</p></main><script>var id = 12;</script>')
    two = _html('<main id="post-345"><h1>Two words</h1><p>c</p></main><script>var id = 345;</script>')
    assert template_key(one) == template_key(two) is not None
    # JSON-LD is data, not a script that runs: it does not split a template
    data = '<script type="application/ld+json">{"name": "x"}</script>'
    assert template_key(_html("<main><h1>x</h1></main>" + data)) == template_key(
        _html("<main><h1>y</h1></main>")
    )


def test_another_skeleton_or_another_script_is_another_template():
    base = template_key(_html("<main><h1>x</h1></main>"))
    assert template_key(_html("<div class='list'><h1>x</h1></div>")) != base
    assert template_key(_html("<main><h1>x</h1></main><script src='/a.js?v=1'></script>")) != base
    assert template_key(_html("<main><h1>x</h1></main><script src='/a.js?v=2'></script>")) == template_key(
        _html("<main><h1>y</h1></main><script src='/a.js?v=1'></script>")
    )
    assert template_key(_html("<main><h1>x</h1></main><script>go()</script>")) != template_key(
        _html("<main><h1>x</h1></main><script>stay()</script>")
    )


def test_no_html_to_parse_has_no_key():
    assert template_key(b"") is None
    assert template_key(b"   ") is None


def test_what_a_sample_shows_in_words():
    assert differences(None) == [] and differences({"link_count": 0, "text_share": 100, "changed": {}}) == []
    js = {"link_count": 3, "text_share": 12, "changed": {"title": ["a", "b"], "robots": [None, "noindex"]}}
    assert differences({**js, "noindex": [False, True]}) == [
        "links +3",
        "main text 12% as sent",
        "robots",
        "title",
    ]
    assert differences({"link_count": 0, "text_share": 95, "changed": {}}) == []  # over TEXT_SHARE: the same


def _facts(js: dict | None) -> str:
    return json.dumps({"js": js})


def test_a_group_waits_for_its_sample_then_follows_it():
    async def run() -> tuple[list, list]:
        auto = AutoRender()
        sample = await auto.decide("http://s/a", "k")
        waiting = asyncio.ensure_future(auto.decide("http://s/b", "k"))
        await asyncio.sleep(0)  # let it reach the verdict it waits for
        assert sample.sample and sample.render and not waiting.done()
        stored = json.loads(auto.rendered("http://s/a", _facts({"link_count": 2, "changed": {}})) or "")
        auto.done("http://s/a", sample)
        later = await waiting
        return [stored], [later.render, later.reason, auto.as_dict()]

    stored, later = asyncio.run(run())
    assert stored == [
        {
            "mode": "auto",
            "template": "k",
            "rendered": True,
            "reason": "sample of its template: differs: links +2",
            "verdict": {"render": True, "reason": "sample http://s/a differs: links +2"},
        }
    ]
    assert later == [
        True,
        "sample http://s/a differs: links +2",
        {"templates": 1, "samples": 1, "rendered_templates": 1, "degraded": ""},
    ]


def test_a_sample_that_fails_or_cannot_be_compared_renders_its_template():
    async def run() -> list[str]:
        auto = AutoRender()
        failing = await auto.decide("http://s/a", "k1")
        auto.failed("http://s/a", "timeout")
        auto.done("http://s/a", failing)
        gone = await auto.decide("http://s/c", "k2")
        auto.done("http://s/c", gone)  # stopped before anything was known
        blind = await auto.decide("http://s/e", "k3")
        auto.rendered("http://s/e", _facts(None))  # no HTML as sent to compare with
        auto.done("http://s/e", blind)
        return [(await auto.decide(url, key)).reason for url, key in (("b", "k1"), ("d", "k2"), ("f", "k3"))]

    assert asyncio.run(run()) == [
        "sample http://s/a failed to render (timeout)",
        "sample http://s/c was not rendered",
        "sample http://s/e: its HTML as sent and rendered could not be compared",
    ]


def test_a_site_of_all_different_pages_degrades_to_rendering_with_bounded_samples():
    async def run() -> tuple[AutoRender, list]:
        auto = AutoRender()
        decisions = []
        for n in range(3 * MIN_GROUPS):
            decision = await auto.decide(f"http://s/{n}", f"key{n}")
            decisions.append(decision)
            if decision.sample:
                auto.rendered(f"http://s/{n}", _facts({"link_count": 0, "text_share": 100, "changed": {}}))
            auto.done(f"http://s/{n}", decision)
        return auto, decisions

    auto, decisions = asyncio.run(run())
    assert sum(d.sample for d in decisions) == MIN_GROUPS == auto.samples  # bounded: no sample after that
    assert all(d.render for d in decisions)
    assert (
        auto.degraded
        == f"degraded: too many templates ({MIN_GROUPS + 1} in {MIN_GROUPS + 1} pages), every page rendered from here on"
    )
    assert {d.reason for d in decisions[MIN_GROUPS:]} == {auto.degraded}


def test_a_site_with_few_templates_never_degrades():
    async def run() -> AutoRender:
        auto = AutoRender()
        for n in range(10 * MIN_GROUPS):
            key = f"key{n % (MIN_GROUPS - 5)}"  # each template's pages spread over the whole crawl
            decision = await auto.decide(f"http://s/{n}", key)
            if decision.sample:
                auto.rendered(f"http://s/{n}", _facts({"link_count": 0, "text_share": 100, "changed": {}}))
            auto.done(f"http://s/{n}", decision)
        return auto

    auto = asyncio.run(run())
    assert not auto.degraded


def test_the_summary_counts_both_kinds_and_the_templates():
    from nitpicker_cli.summary import rendered_words

    auto = {"templates": 5, "samples": 5, "rendered_templates": 2, "degraded": ""}
    assert (
        rendered_words(9, None, 6, auto)
        == "9 rendered, 6 read without a browser (auto: 5 templates, 2 rendered)"
    )
    one = {"templates": 1, "samples": 1, "rendered_templates": 1, "degraded": "degraded: too many templates"}
    assert rendered_words(3, None, 0, one) == (
        "3 rendered, 0 read without a browser (auto: 1 template, 1 rendered; degraded: too many templates)"
    )
    assert rendered_words(3, None, 0) == "3 rendered"  # --render always says nothing more


async def _crawl(auto: AutoRender, pages: list[tuple[str, str | None, dict | None, int]]) -> dict[str, dict]:
    """Pages through ``auto`` one after the other, (URL, key, the sample's comparison, its console errors):
    each page's decision, as the crawl stores it."""
    stored = {}
    for url, key, js, console in pages:
        decision = await auto.decide(url, key)
        decided = auto.rendered(url, _facts(js), console) if decision.render else auto.parsed(url)
        auto.done(url, decision)
        stored[url] = json.loads(decided or "{}")
    return stored


SAME = {"link_count": 0, "text_share": 100, "changed": {}}


def test_a_sample_keeps_what_it_settled_for_its_group():
    stored = asyncio.run(_crawl(AutoRender(), [("http://s/a", "k", SAME, 2), ("http://s/b", "k", None, 0)]))
    assert stored["http://s/a"]["verdict"] == {
        "render": False,
        "reason": "sample http://s/a same; its 2 console errors not looked for here",
    }
    assert "verdict" not in stored["http://s/b"]  # no sample: nothing settled by it


def test_a_resumed_crawl_takes_over_the_stored_verdicts_and_samples_nothing_again():
    before = [
        ("http://s/a1", "a", SAME, 1),
        ("http://s/b1", "b", {"link_count": 2, "text_share": 100, "changed": {}}, 0),
        ("http://s/a2", "a", None, 0),
    ]
    after = [("http://s/a3", "a", None, 0), ("http://s/b2", "b", None, 0)]

    async def run() -> tuple[AutoRender, AutoRender, dict, list[Decision]]:
        whole = AutoRender()  # the uninterrupted crawl
        stored = await _crawl(whole, before)
        expected = await _crawl(whole, after)
        resumed = AutoRender()
        resumed.restore(stored.items())
        decisions = [await resumed.decide(url, key) for url, key, _, _ in after]
        return whole, resumed, expected, decisions

    whole, resumed, expected, decisions = asyncio.run(run())
    assert not any(d.sample for d in decisions)
    assert [(d.render, d.reason) for d in decisions] == [
        (expected[url]["rendered"], expected[url]["reason"]) for url, _, _, _ in after
    ]
    assert [(d.render, d.reason) for d in decisions] == [
        (False, "sample http://s/a1 same; its 1 console error not looked for here"),
        (True, "sample http://s/b1 differs: links +2"),
    ]
    # the commit's templates and samples, as the uninterrupted crawl counts them
    assert (
        resumed.as_dict()
        == whole.as_dict()
        == {
            "templates": 2,
            "samples": 2,
            "rendered_templates": 1,
            "degraded": "",
        }
    )
    assert resumed.seen == len(before) + len(after)  # the stored pages count towards the degradation rule


def test_a_verdict_stored_before_samples_kept_it_is_read_from_the_samples_reason():
    url = "http://s/a"
    old = {"mode": "auto", "template": "k", "rendered": True}
    read = [
        stored_verdict(url, {**old, "reason": "sample of its template: same"}),
        stored_verdict(url, {**old, "reason": "sample of its template: differs: links +1, title"}),
        stored_verdict(url, {**old, "reason": "sample of its template: failed to render (timeout)"}),
        stored_verdict(
            url,
            {**old, "reason": "sample of its template: its HTML as sent and rendered could not be compared"},
        ),
        stored_verdict(url, {**old, "reason": "sample http://s/x same"}),  # a page that followed one
        stored_verdict(url, {**old, "reason": "the HTML as sent could not be parsed"}),
    ]
    assert read == [
        (False, "sample http://s/a same"),
        (True, "sample http://s/a differs: links +1, title"),
        (True, "sample http://s/a failed to render (timeout)"),
        (True, "sample http://s/a: its HTML as sent and rendered could not be compared"),
        None,
        None,
    ]


def test_a_failed_sample_is_stored_with_its_decision_and_a_resume_renders_its_template():
    async def run() -> tuple[str | None, Decision]:
        auto = AutoRender()
        decision = await auto.decide("http://s/a", "k")
        decided = auto.failed("http://s/a", "timeout")
        auto.done("http://s/a", decision)
        resumed = AutoRender()
        resumed.restore([("http://s/a", json.loads(decided or "{}"))])
        return decided, await resumed.decide("http://s/b", "k")

    decided, later = asyncio.run(run())
    assert json.loads(decided or "{}") == {
        "mode": "auto",
        "template": "k",
        "rendered": True,
        "reason": "sample of its template: failed to render (timeout)",
        "verdict": {"render": True, "reason": "sample http://s/a failed to render (timeout)"},
    }
    assert (later.sample, later.render, later.reason) == (
        False,
        True,
        "sample http://s/a failed to render (timeout)",
    )


def test_a_degraded_crawl_stays_degraded_when_resumed():
    async def run() -> tuple[AutoRender, list]:
        first = AutoRender()
        stored = []
        for n in range(MIN_GROUPS + 3):
            url = f"http://s/{n}"
            decision = await first.decide(url, f"key{n}")
            decided = first.rendered(url, _facts(SAME))
            first.done(url, decision)
            stored.append((url, json.loads(decided or "{}")))
        resumed = AutoRender()
        resumed.restore(stored)
        return resumed, [await resumed.decide("http://s/new", "another"), first.degraded]

    resumed, (decision, degraded) = asyncio.run(run())
    assert degraded and resumed.degraded == degraded
    assert (decision.sample, decision.render, decision.reason) == (False, True, degraded)
    assert resumed.samples == MIN_GROUPS


# -- the template key from the reader's own parse ------------------------------------------------------------
KEYED = [
    _html("<main id='post-12' class='a b3'>\r\n<p>1</p><p>2</p></main><script>var a = 'x';</script>"),
    '<html><head><meta charset="shift_jis"></head><body><div class="\u65e5\u672c">x</div></body></html>'.encode(
        "shift_jis"
    ),
    '<html><head><meta charset="iso-8859-1"></head><body><div class="caf\u00e9">x</div></body></html>'.encode(
        "latin-1"
    ),
    b"\xef\xbb\xbf<html><body><nav><ul><li>a</li><li>b</li></ul></nav></body></html>",
    b"<p>no body tag</p><script src='/s.js?v=3'></script>",
    # what the reader takes out of the tree (an inert template, a noscript) is in the key: it is read first
    b"<html><body><template><div class='t'></div></template><noscript><a href='x'>y</a></noscript>"
    b"<!-- c --><div>x</div></body></html>",
    b"<html><frameset><frame src='a'></frameset></html>",
]


def _parse_page(body: bytes, render: str) -> ScrapeResult:
    crawl = CrawlContext(
        output=Path("unused.nitpicker"), roots=["http://site.test/"], options={"render": render}
    )
    result = ScrapeResult(url="http://site.test/page", headers={"content-type": "text/html"})
    parsed = nitpicker_scrape.crawl_parse(result=result, body=body, crawl=crawl)
    assert isinstance(parsed, ScrapeResult)
    return parsed


def test_the_built_in_reader_of_an_auto_crawl_keys_a_page_as_template_key_does():
    for body in KEYED:
        assert _parse_page(body, "auto").template == template_key(body), body
        assert _parse_page(body, "never").template is None  # no key asked for: no walk of the tree
    assert _parse_page(b"", "auto").template is None  # nothing parsed, no key


def test_an_auto_read_parses_a_page_once_when_its_reader_keys_it(monkeypatch):
    asked: list[bytes] = []

    def counted(body: bytes) -> str | None:
        asked.append(body)
        return template_key(body)

    monkeypatch.setattr(reading, "template_key", counted)
    body = KEYED[0]
    result = ScrapeResult(url="http://site.test/page", headers={"content-type": "text/html"})

    def keyed(result: ScrapeResult, body: bytes) -> ScrapeResult:
        return _parse_page(body, "auto")

    key, parsed, error = reading.key_and_read(keyed, result, body)
    assert (key, error, asked) == (template_key(body), None, []) and parsed is not None
    # a reader that sets no key (another plugin's, an older one): the page is parsed again for it
    key, parsed, error = reading.key_and_read(lambda result, body: _parse_page(body, "never"), result, body)
    assert (key, error, asked) == (template_key(body), None, [body]) and parsed is not None

    # a reader that fails: the key still groups the page, and the failure is told in words
    def broken(result: ScrapeResult, body: bytes) -> ScrapeResult:
        raise RuntimeError("reader bug")

    assert reading.key_and_read(broken, result, body) == (
        template_key(body),
        None,
        "RuntimeError: reader bug",
    )
