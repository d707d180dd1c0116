"""The /generations/<site>/ test pages: validators honoured, per-render noise, counted requests, one-page changes."""

from __future__ import annotations

import requests


def test_validators_noise_counts_and_changes(gsite) -> None:
    first = requests.get(gsite.url("p2"), timeout=30)
    again = requests.get(gsite.url("p2"), timeout=30)
    assert first.status_code == again.status_code == 200
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert etag == again.headers["ETag"] == '"p2-v0"' and modified == again.headers["Last-Modified"]
    # the same page, rendered twice: nonce, CSRF token, request id and cookie differ
    assert first.text != again.text and first.headers["X-Request-Id"] != again.headers["X-Request-Id"]
    assert first.headers["Set-Cookie"] != again.headers["Set-Cookie"]
    assert requests.get(gsite.url("p2"), headers={"If-None-Match": etag}, timeout=30).status_code == 304
    assert (
        requests.get(gsite.url("p2"), headers={"If-Modified-Since": modified}, timeout=30).status_code == 304
    )
    assert (
        requests.get(
            gsite.url("style.css"), headers={"If-None-Match": '"style.css-v0"'}, timeout=30
        ).status_code
        == 304
    )
    assert gsite.change("p2") == 1
    changed = requests.get(gsite.url("p2"), headers={"If-None-Match": etag}, timeout=30)
    assert changed.status_code == 200 and changed.headers["ETag"] == '"p2-v1"' and "p2 v1" in changed.text
    assert (
        requests.get(gsite.url("p2"), headers={"If-Modified-Since": modified}, timeout=30).status_code == 200
    )
    assert gsite.hits() == {
        "p2": {"200": 4, "304": 2, "conditional": 4},
        "style.css": {"304": 1, "conditional": 1},
    }
    assert requests.get(gsite.url("p31"), timeout=30).status_code == 404
