"""The URL queue: ordering, de-duplication and counts."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from nitpicker_core.crawler.queue import QueueItem, UrlQueue


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
        "http://h/p1", "http://h/p2/", "http://h/old-page", "http://h/old.css", "http://h/a.png", "http://h/doc.pdf",
    ]


def test_dedup_by_normalized_url() -> None:
    queue = UrlQueue()
    fresh = queue.add(["http://H/a#x", "http://user:pw@h/a", "http://h//a", "http://h/q?kind=alpha",
                       "http://h/q?kind=beta", "http://h/q?PHPSESSID=1&kind=alpha"])
    assert [i.url for i in fresh] == ["http://h/a", "http://h/q?kind=alpha", "http://h/q?kind=beta"]
    assert queue.add(["http://h/a"]) == []
    item = queue.pop()
    assert item is not None and queue.state("http://h/a#y") == "in-progress"
    queue.finish("http://h/a")
    assert queue.add(["http://h/a"]) == [] and queue.state("http://h/a") == "done"
    assert "http://h/q?kind=beta" in queue and "http://h/nope" not in queue


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
