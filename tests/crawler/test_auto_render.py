"""``--render auto``'s parts without a crawl: the template key, a group's verdict, the bounded degradation."""

from __future__ import annotations

import asyncio
import json

from nitpicker_core.crawler.auto import MIN_GROUPS, AutoRender, differences, template_key


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
        return [stored["render"]], [later.render, later.reason, auto.as_dict()]

    stored, later = asyncio.run(run())
    assert stored == [
        {
            "mode": "auto",
            "template": "k",
            "rendered": True,
            "reason": "sample of its template: differs: links +2",
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
