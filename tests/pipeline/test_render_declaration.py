"""A pipeline crawl made before --render existed is still the same crawl when run with --render always."""

from __future__ import annotations

from nitpicker_core.pipeline.stages import crawl_declaration


def test_render_always_is_the_crawl_made_before_the_option():
    before = {"crawl": {"roots": ["http://site.test/"], "parallels": 2, "image": True}}
    always = {"crawl": {**before["crawl"], "render": "always"}}
    never = {"crawl": {**before["crawl"], "render": "never"}}
    assert (
        crawl_declaration(always)
        == crawl_declaration(before)
        == {"roots": ["http://site.test/"], "image": True}
    )
    assert crawl_declaration(never) == {**crawl_declaration(before), "render": "never"}
