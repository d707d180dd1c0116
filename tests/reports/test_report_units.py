"""Pieces of the report sheets that need no crawl: natural order, query patterns, index titles, streaming."""

from __future__ import annotations

import random

import pytest
from nitpicker_sheets.natural import natural_key, natural_sorted
from nitpicker_sheets.pages import IndexTitles
from nitpicker_sheets.resources import PATTERN_CAP, QueryPattern, canonical


def test_natural_order_numbers_case_and_stability():
    urls = ["/img10.png", "/IMG2.png", "/img2.png", "/img1.png", "/a/b", "/a10", "/a9"]
    assert sorted(urls, key=natural_key) == [
        "/a9",
        "/a10",
        "/a/b",
        "/img1.png",
        "/IMG2.png",
        "/img2.png",
        "/img10.png",
    ]


@pytest.mark.parametrize("run_size", [3, 7, 1000])
def test_external_merge_sort_matches_in_memory_sort(run_size):
    rng = random.Random(7)
    items = [{"url": f"/p{rng.randint(0, 30)}/x{rng.randint(0, 5)}", "n": i} for i in range(200)]
    expected = sorted(items, key=lambda r: natural_key(r["url"]))  # stable: equal URLs keep input order
    assert list(natural_sorted(iter(items), lambda r: r["url"], run_size=run_size)) == expected


def test_query_pattern_counts_distinct_values_and_caps():
    pattern = QueryPattern()
    for i in range(150):
        pattern.add(f"https://x.test/app.js?v={i}&lang={'en' if i % 2 else 'ja'}&lang=en")
    pattern.add("https://x.test/app.js")
    assert pattern.text() == f"lang=2, v={PATTERN_CAP}+"
    assert canonical("https://x.test/a.css?v=1#top") == "https://x.test/a.css"


def test_index_titles_follow_the_url_order_without_global_state():
    titles = IndexTitles()
    assert titles.short("https://s.test/", "Shop") == "Shop"
    assert titles.short("https://s.test/a/", "Alpha | Shop") == "Alpha"
    assert titles.short("https://s.test/a/one", "One | Alpha | Shop") == "One"  # nearest index: /a/
    assert titles.short("https://s.test/b", "Beta - Shop") == "Beta"
    assert titles.short("https://s.test/c/x", "Shop") == "Shop"  # the whole title is the index title
    assert IndexTitles().short("https://s.test/a/one", "One | Alpha | Shop") == "One | Alpha | Shop"


def test_stream_reads_one_batch_per_call(report_archive):
    """Sheets pull rows batch by batch: with batch=1, each page row costs one query call."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.plugins import make_plugin_manager
    from nitpicker_core.report import ReportContext

    calls = []
    with open_archive(report_archive) as reader:
        context = ReportContext(make_plugin_manager(), reader, reader.resolve(None), {"batch": 1})
        original = context.run

        def counting(name, **params):
            calls.append(params.get("after"))
            return original(name, **params)

        context.run = counting
        stream = context.stream("report-pages", scope="targets")
        first = next(stream)
        assert len(calls) == 1 and first["url"].endswith("/report-site/")
        rest = list(stream)
    assert [p["url"].rsplit("/", 1)[1] for p in rest] == ["alpha", "beta", "missing"]
    assert calls == [None, first["url"], rest[0]["url"], rest[1]["url"], rest[2]["url"]]


def _api_error(status, body, headers=None):
    import json

    import requests
    from gspread.exceptions import APIError

    response = requests.Response()
    response.status_code = status
    response._content = json.dumps(body).encode()
    response.headers.update(headers or {})
    return APIError(response)


def test_rate_limit_waits_honour_retry_after_and_quota_403_only():
    from nitpicker_gsheets.api import rate_limit_wait

    quota = {
        "error": {
            "code": 403,
            "message": "Quota exceeded for quota metric 'Write requests'",
            "status": "PERMISSION_DENIED",
            "errors": [{"reason": "rateLimitExceeded"}],
        }
    }
    denied = {
        "error": {
            "code": 403,
            "message": "The caller does not have permission",
            "status": "PERMISSION_DENIED",
        }
    }
    assert rate_limit_wait(_api_error(429, {}, {"Retry-After": "7"}), 0) == 7
    assert rate_limit_wait(_api_error(429, {}), 0) == 2 and rate_limit_wait(_api_error(429, {}), 3) == 16
    assert rate_limit_wait(_api_error(429, {}), 10) == 64
    assert rate_limit_wait(_api_error(403, quota), 1) == 4
    assert rate_limit_wait(_api_error(403, denied), 0) is None
    assert rate_limit_wait(_api_error(400, {}), 0) is None
    past = rate_limit_wait(_api_error(429, {}, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}), 0)
    assert past == 0
