"""URLs with an invalid port: refused by normalize, outside every scope, queued as written (never fetched)."""

from __future__ import annotations

import pytest

from nitpicker_core.crawler.errors import PERMANENT_KINDS, classify
from nitpicker_core.crawler.queue import QueueItem, UrlQueue
from nitpicker_core.urls import Scope, normalize

BAD = (
    "http://localhost:99999/x",
    "http://localhost:65536/x",
    "http://localhost:-1/x",
    "http://localhost:abc/x",
)


@pytest.mark.parametrize("url", BAD)
def test_an_invalid_port_is_in_no_scope(url: str) -> None:
    # the old behaviour read the port as absent, which made these the site on port 80
    scope = Scope(["http://localhost/"])
    assert not scope.is_internal(url)
    assert not scope.same_host(url)
    assert scope.credentials_for(url) is None
    assert scope.is_internal("http://localhost/x")


def test_a_scope_entry_with_an_invalid_port_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid port '99999'"):
        Scope(["http://localhost/"], ["localhost:99999"])


def test_the_queue_keeps_an_invalid_url_as_written_once() -> None:
    queue = UrlQueue()
    fresh = queue.add([QueueItem(BAD[0], external=True), QueueItem("http://localhost/a"), BAD[0]])
    assert [item.url for item in fresh] == [BAD[0], "http://localhost/a"]  # found order, one each
    assert BAD[0] in queue and queue.state(BAD[0]) == "pending"
    assert queue.add_done(BAD[1]) and not queue.add_done(BAD[1])
    assert queue.state(BAD[1]) == "done"
    taken = [queue.pop(), queue.pop()]
    assert {item.url for item in taken if item} == {"http://localhost/a", BAD[0]}
    queue.finish(BAD[0])
    assert queue.state(BAD[0]) == "done"


def test_invalid_url_is_a_permanent_kind_of_its_own() -> None:
    assert "invalid-url" in PERMANENT_KINDS
    with pytest.raises(ValueError) as refused:
        normalize(BAD[0])
    # the message is not a network failure of any known kind: the crawler names the kind itself
    assert classify(str(refused.value)) == "unknown"
