"""The URL queue: ordering, de-duplication and counts."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nitpicker_core.crawler import queue as queue_module
from nitpicker_core.crawler.queue import Limits, QueueItem, UrlQueue
from nitpicker_core.urls import normalize


def _drain(queue: UrlQueue) -> list[str]:
    order = []
    while (item := queue.pop()) is not None:
        order.append(item.url)
        queue.finish(item.url)
    return order


def test_html_first_in_batch_order_assets_last() -> None:
    queue = UrlQueue()
    queue.add(["http://h/old-page", "http://h/old.css"])
    queue.add(["http://h/a.png", "http://h/p1", "http://h/doc.pdf", "http://h/p2/"])
    assert _drain(queue) == [
        "http://h/p1",
        "http://h/p2/",
        "http://h/old-page",
        "http://h/old.css",
        "http://h/a.png",
        "http://h/doc.pdf",
    ]


def test_dedup_by_normalized_url() -> None:
    queue = UrlQueue()
    fresh = queue.add(
        [
            "http://H/a#x",
            "http://user:pw@h/a",
            "http://h/./%61",
            "http://h/q?kind=alpha",
            "http://h/q?kind=beta",
            "http://h/q?PHPSESSID=1&kind=alpha",
        ]
    )
    assert [i.url for i in fresh] == ["http://h/a", "http://h/q?kind=alpha", "http://h/q?kind=beta"]
    assert queue.add(["http://h/a"]) == []
    item = queue.pop()
    assert item is not None and queue.state("http://h/a#y") == "in-progress"
    queue.finish("http://h/a")
    assert queue.add(["http://h/a"]) == [] and queue.state("http://h/a") == "done"
    assert "http://h/q?kind=beta" in queue and "http://h/nope" not in queue
    # RFC 3986 keeps empty segments: /a//b is another URL, not a duplicate (issue 12)
    assert [i.url for i in queue.add(["http://h//a"])] == ["http://h//a"]


def test_disable_queries() -> None:
    queue = UrlQueue(disable_queries=True)
    assert [i.url for i in queue.add(["http://h/p?tab=1", "http://h/p?tab=2"])] == ["http://h/p"]


def test_counts_and_discard() -> None:
    queue = UrlQueue()
    queue.add_done("http://h/resumed", rendered=True)
    queue.add(["http://h/", "http://h/x.css", QueueItem("http://ext/", external=True)])
    queue.add([QueueItem("http://h/page/9", predicted=True)])
    while (item := queue.pop()) is not None:
        if item.predicted:
            queue.discard(item.url)  # a predicted 404 leaves no trace
        else:
            queue.finish(item.url, rendered=item.url == "http://h/")
    counts = queue.counts()
    assert (counts.internal_done, counts.internal_rendered, counts.internal_found) == (3, 2, 3)
    assert (counts.external_done, counts.external_found) == (1, 1)
    assert counts.remaining == 0 and counts.percent == 100 and queue.idle()
    assert queue.state("http://h/page/9") is None


def test_requeue_goes_to_front() -> None:
    queue = UrlQueue()
    queue.add(["http://h/a", "http://h/b"])
    first = queue.pop()
    assert first is not None
    queue.requeue(first.url)
    assert _drain(queue) == ["http://h/a", "http://h/b"]


def test_parallel_workers_take_each_url_once() -> None:
    queue = UrlQueue()
    queue.add([f"http://h/p{n}" for n in range(500)])
    taken: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        while (item := queue.pop()) is not None:
            with lock:
                taken.append(item.url)
            queue.finish(item.url)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(f"http://h/p{n}" for n in range(500))
    assert queue.counts().internal_done == 500


@given(st.lists(st.sampled_from(["/a", "/b/", "/c.png", "/d.html", "/e.js", "/a#f", "//b/"]), max_size=20))
def test_every_url_popped_once(paths: list[str]) -> None:
    queue = UrlQueue()
    for path in paths:
        queue.add([f"http://h{path}"])
    popped = _drain(queue)
    assert len(popped) == len(set(popped)) == queue.counts().internal_found


# -- limits -------------------------------------------------------------------------------------------------
def _limited(**limits: int) -> tuple[UrlQueue, list[tuple[str, str]]]:
    held: list[tuple[str, str]] = []
    queue = UrlQueue(
        limits=Limits(**limits),
        is_internal=lambda url: "//h/" in url,
        on_hold=lambda url, reason: held.append((url, reason)),
    )
    return queue, held


def test_max_pages_counts_internal_urls_and_resumed_ones_and_lets_external_checks_go_on() -> None:
    queue, held = _limited(max_pages=4)
    queue.add_done("http://h/resumed", rendered=True)  # finished before an interruption: counts
    queue.add_done("http://ext/resumed")  # an external check from before: does not
    queue.add(
        ["http://h/a", "http://h/b", QueueItem("http://ext/x", external=True), "http://h/c", "http://h/d.css"]
    )
    assert _drain(queue) == ["http://h/a", "http://h/b", "http://ext/x", "http://h/c"]
    reason = "not crawled: --max-pages 4 reached"
    assert held == [("http://h/d.css", reason)] and queue.state("http://h/d.css") == "held"
    queue.add(["http://h/later"])  # found by a page still in flight when the limit was reached
    assert queue.pop() is None and held[-1] == ("http://h/later", reason) and queue.idle()
    assert queue.limit_stats() == {
        "max_pages": 4,
        "max_depth": None,
        "not_crawled_max_pages": 2,
        "not_crawled_max_depth": 0,
    }
    assert queue.counts().internal_done == 4


def test_max_pages_frees_the_slot_of_a_forgotten_guess_and_drops_held_guesses_silently() -> None:
    queue, held = _limited(max_pages=2)
    queue.add(
        ["http://h/a", QueueItem("http://h/p/3", predicted=True), QueueItem("http://h/p/4", predicted=True)]
    )
    first, guess = queue.pop(), queue.pop()
    assert first is not None and guess is not None and guess.predicted
    queue.discard(guess.url)  # a guess that was a 404 leaves no trace, and no page is counted for it
    second = queue.pop()
    assert second is not None and second.url == "http://h/p/4"
    queue.add([QueueItem("http://h/p/5", predicted=True)])
    assert queue.pop() is None and held == [] and queue.state("http://h/p/5") is None


def test_requeue_gives_the_slot_back() -> None:
    queue, _ = _limited(max_pages=1)
    queue.add(["http://h/a", "http://h/b"])
    item = queue.pop()
    assert item is not None
    queue.requeue(item.url)  # shutting down: back to pending, not counted
    assert queue.pop() == item and queue.pop() is None


def test_max_depth_holds_deeper_urls_and_takes_pages_level_by_level() -> None:
    queue, held = _limited(max_depth=1)
    queue.add([QueueItem("http://h/", depth=0)])
    root = queue.pop()
    assert root is not None and root.depth == 0
    queue.add([QueueItem("http://h/a", depth=1, referrer=root.url), QueueItem("http://h/b", depth=1)])
    queue.finish(root.url)
    a = queue.pop()
    assert a is not None and a.url == "http://h/a"
    queue.add(
        [
            QueueItem("http://h/a/deep", depth=2, referrer=a.url),
            QueueItem("http://ext/", depth=2, external=True, metadata_only=True),
            QueueItem("http://h/a/guess", depth=2, predicted=True),
        ]
    )
    assert held == [("http://h/a/deep", "deeper than --max-depth 1")]
    assert queue.state("http://h/a/guess") is None  # a guess past the limit is never made
    # external checks are never held by depth; pages of depth 1 still go before them
    assert [i.url for i in (queue.pop(), queue.pop())] == ["http://h/b", "http://ext/"]
    assert queue.limit_stats()["not_crawled_max_depth"] == 1


def test_a_page_waits_while_a_shallower_page_is_in_progress() -> None:
    queue, _ = _limited(max_depth=5)
    queue.add(
        [
            QueueItem("http://h/", depth=0),
            QueueItem("http://h/one", depth=1),
            QueueItem("http://h/pic.png", depth=1, metadata_only=True),
        ]
    )
    root = queue.pop()
    assert root is not None and root.url == "http://h/"
    # "one" may yet be found nearer the root by the root page: it waits; a check that leads nowhere does not
    check = queue.pop()
    assert check is not None and check.url == "http://h/pic.png"
    assert queue.pop() is None and not queue.idle()
    queue.finish(root.url)
    one = queue.pop()
    assert one is not None and one.url == "http://h/one"


def test_a_shorter_path_found_later_wins() -> None:
    queue, held = _limited(max_depth=2)
    queue.add([QueueItem("http://h/x", depth=3)])  # e.g. a depth guessed for a URL resumed from an archive
    assert queue.state("http://h/x") == "held"
    queue.add([QueueItem("http://h/x", depth=2)])
    assert queue.state("http://h/x") == "pending" and queue.depth("http://h/x") == 2
    assert queue.limit_stats()["not_crawled_max_depth"] == 0
    item = queue.pop()
    assert item is not None and item.depth == 2


def test_depth_of_urls_queued_without_one() -> None:
    queue = UrlQueue(limits=Limits(max_depth=3), depth_of=lambda url: 1 if url.endswith("/pending") else 0)
    queue.add(["http://h/", "http://h/pending"])  # roots and URLs resumed from an archive
    queue.add([QueueItem("http://h/a", depth=2)])
    queue.add([QueueItem("http://h/redirected-to", referrer="http://h/a")])  # a redirect keeps its source's
    assert [queue.depth(u) for u in ("http://h/", "http://h/pending", "http://h/redirected-to")] == [0, 1, 2]


def test_a_real_link_makes_a_guess_a_page() -> None:
    queue = UrlQueue()
    queue.add([QueueItem("http://h/p/3", predicted=True)])
    assert queue.guessed("http://h/p/3")
    queue.add(["http://h/p/3"])
    assert not queue.guessed("http://h/p/3")


def test_a_url_is_normalized_once_however_it_is_asked_again(monkeypatch) -> None:
    """The crawler asks again of the URLs it normalized (a page's stored anchors, the queue's keys), and some
    calls leave ``disable_queries`` out: each distinct URL costs one ``normalize``, an invalid one each time."""
    calls: list[str] = []

    def counting(url: str, disable_queries: bool = False) -> str:
        calls.append(url)
        return normalize(url, disable_queries=disable_queries)

    monkeypatch.setattr(queue_module, "normalize", counting)
    monkeypatch.setattr(queue_module, "_normalized", {})
    raw = "HTTP://Example.COM:80/a/./b/../c.html#top"
    once = queue_module.normalized(raw, False)
    assert once == normalize(raw) == "http://example.com/a/c.html"
    assert queue_module.normalized(once, False) == queue_module.normalized(once) == once
    assert queue_module.normalized(raw) == once
    assert calls == [raw]
    for _ in range(2):
        with pytest.raises(ValueError):
            queue_module.normalized("http://example.com:99999/")
    assert calls == [raw, "http://example.com:99999/", "http://example.com:99999/"]
