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
