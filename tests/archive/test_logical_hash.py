"""What a state hash sees: per-render values out, racing lists as sets, real changes in."""

from __future__ import annotations

from nitpicker_core.archive.logical import logical_headers, normalize_html
from nitpicker_core.archive.prepare import prepare_page, prepare_resource
from nitpicker_core.records import Resource, ScrapeResult

HTML = (
    '<html><head><meta name="csrf-token" content="{token}"><script nonce="{nonce}" src="/a.js"></script></head>'
    '<body><form><input type="hidden" name="authenticity_token" value="{token}">'
    '<input type="text" name="q" value="{query}"></form></body></html>'
)


def _page(
    token: str = "t1", nonce: str = "n1", query: str = "", resources=("/a.js", "/b.css"), **kw
) -> ScrapeResult:
    html = HTML.format(token=token, nonce=nonce, query=query)
    headers = {
        "date": "Tue, 01 Dec 2026 18:00:00 GMT",
        "x-request-id": token,
        "content-security-policy": f"script-src 'nonce-{nonce}'",
        "etag": '"v1"',
        **kw.pop("headers", {}),
    }
    return ScrapeResult(
        url="http://site.test/",
        status=200,
        html=html,
        source=html,
        headers=headers,
        resources=list(resources),
        anchors=[],
        images=[],
        **kw,
    )


def test_per_render_values_and_order_races_keep_the_hash() -> None:
    base = prepare_page(_page())
    again = prepare_page(
        _page(
            token="t2",
            nonce="n2",
            resources=("/b.css", "/a.js"),
            headers={"date": "Wed, 02 Dec 2026 00:00:00 GMT"},
        )
    )
    assert again.hash == base.hash
    assert again.html_sha256 != base.html_sha256  # the stored HTML is still the HTML as rendered


def test_real_changes_change_the_hash() -> None:
    base = prepare_page(_page()).hash
    assert prepare_page(_page(query="other")).hash != base  # a visible field value is content
    assert prepare_page(_page(resources=("/a.js",))).hash != base
    assert prepare_page(_page(headers={"etag": '"v2"'})).hash != base
    assert prepare_page(_page(headers={"content-security-policy": "script-src 'self'"})).hash != base


def test_logical_headers_and_html() -> None:
    headers = {
        "Date": "x",
        "Set-Cookie": "a=1; Path=/\nb=2",
        "Content-Security-Policy": "script-src 'nonce-abc'",
    }
    assert logical_headers(headers) == {
        "Set-Cookie": ["a", "b"],
        "Content-Security-Policy": "script-src 'nonce-'",
    }
    assert normalize_html('<input name="_csrf" value="zz"><input name="x" value="zz">') == (
        '<input name="_csrf" value=""><input name="x" value="zz">'
    )
    assert normalize_html("<p>no tokens</p>") == "<p>no tokens</p>"


def test_resource_hash_ignores_volatile_headers() -> None:
    def res(date: str, etag: str) -> str:
        return prepare_resource(
            Resource(url="http://site.test/a.js", status=200, headers={"date": date, "etag": etag})
        )[0]

    assert res("a", '"1"') == res("b", '"1"')
    assert res("a", '"1"') != res("a", '"2"')


def _normalized_in_full(html: str) -> str:
    """``normalize_html`` without its shortcut: both substitutions over every page."""
    from nitpicker_core.archive import logical

    html = logical._NONCE_ATTR.sub(r'\1""', html)
    return logical._TAG.sub(logical._blank_token, html)


def test_normalizing_skips_only_pages_it_leaves_alone() -> None:
    """The shortcut for pages without a nonce or a token never keeps a value the substitutions blank."""
    pages = [
        '<script NONCE="abc" src="/a.js"></script>',
        "<html><body>¶ <script nOnCe=abc></script></body></html>",
        '<meta name="CSRF-Token" content="zz">',
        '<p>ü</p><input type="hidden" name="_TOKEN" value="zz">',
        '<p>ü</p><meta name="XSRF-TOKEN" content="zz">',
        # KELVIN SIGN lower-cases to "k": "_to\u212aen" is "_token" to the substitution
        '<p>ü</p><meta name="_to\u212aen" content="zz">',
        '<p>ü \u212a</p><meta name="_wpnonce" content="zz">',
        "<p>plain ¶, no tokens: İ \u212a</p>",
        "<p>plain, nothing to blank</p>",
    ]
    for html in pages:
        assert normalize_html(html) == _normalized_in_full(html), html
    assert normalize_html(pages[5]) == '<p>ü</p><meta name="_to\u212aen" content="">'


def test_a_page_read_without_a_browser_hashes_its_one_html_once() -> None:
    """HTML and source the same text (``--render never``): the state is the one of two equal copies."""
    html = HTML.format(token="t", nonce="n", query="")
    same = _page(token="t", nonce="n")
    copied = _page(token="t", nonce="n")
    copied.source = "".join(list(html))  # equal, not the same object
    assert same.source is same.html and copied.source is not copied.html
    assert prepare_page(same).hash == prepare_page(copied).hash
    other = _page(token="t", nonce="n")
    other.source = html.replace("/a.js", "/b.js")
    assert prepare_page(other).hash != prepare_page(same).hash


def test_a_placeholder_is_the_page_of_its_url_alone() -> None:
    """A link target's state, built from a template, is the one prepare_page gives its record."""
    from nitpicker_core.archive.prepare import placeholder

    for url in ("https://site.test/", 'https://site.test/ü?q="1"\\', "http://127.0.0.1:8766/library/os.html"):
        for external in (False, True):
            record = ScrapeResult(
                url=url, is_external=external, is_target=False, scraped=False, anchors=[], images=[]
            )
            full, fast = prepare_page(record), placeholder(url, external)
            assert (fast.url, fast.hash, fast.fields) == (full.url, full.hash, full.fields)
            assert (fast.anchors, fast.resources, fast.html, fast.redirect_dest) == ([], [], None, None)
    assert placeholder("https://site.test/", True).hash != placeholder("https://site.test/", False).hash
