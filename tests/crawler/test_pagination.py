"""Predictive pagination."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nitpicker_core.crawler.pagination import PaginationPredictor, detect_step, predict


def test_path_sequence() -> None:
    assert predict("http://h/pagination/page/1", "http://h/pagination/page/2", 3) == [
        "http://h/pagination/page/3", "http://h/pagination/page/4", "http://h/pagination/page/5",
    ]


def test_query_sequence_with_step_and_padding() -> None:
    assert predict("http://h/list?cat=x&p=10", "http://h/list?cat=x&p=20", 2) == [
        "http://h/list?cat=x&p=30", "http://h/list?cat=x&p=40",
    ]
    assert predict("http://h/img/007/", "http://h/img/008/", 2) == ["http://h/img/009/", "http://h/img/010/"]


def test_no_prediction_when_not_one_positive_numeric_difference() -> None:
    assert predict("http://h/page/2", "http://h/page/1", 3) == []  # backwards
    assert predict("http://h/page/2", "http://h/page/2", 3) == []
    assert predict("http://h/a/1/x/1", "http://h/a/2/x/2", 3) == []  # two tokens differ
    assert predict("http://h/page/a", "http://h/page/b", 3) == []
    assert predict("http://h/page/1", "http://other/page/2", 3) == []
    assert predict("http://h/list?p=1", "http://h/list?q=2", 3) == []
    assert predict("http://h/page/1", "http://h/page/2/x", 3) == []
    assert detect_step("http://h/post-1", "http://h/post-2") is None  # only whole tokens count


def test_predictor_never_cascades() -> None:
    predictor = PaginationPredictor(count=2)
    assert predictor.observe("http://h/pagination/") == []
    assert predictor.observe("http://h/pagination/page/1") == []
    guesses = predictor.observe("http://h/pagination/page/2")
    assert [g.url for g in guesses] == ["http://h/pagination/page/3", "http://h/pagination/page/4"]
    assert all(g.predicted for g in guesses)
    for guess in guesses:  # the queue feeds predictions back: they must not predict again
        assert predictor.observe(guess.url, predicted=True) == []
    # a real link to page 3 (already guessed) → only the not-yet-issued ones come back
    assert [g.url for g in predictor.observe("http://h/pagination/page/3")] == ["http://h/pagination/page/5"]


@given(st.integers(0, 10**6), st.integers(1, 1000), st.integers(1, 8))
def test_predictions_continue_the_sequence(start: int, step: int, count: int) -> None:
    urls = predict(f"http://h/p/{start}?x=1", f"http://h/p/{start + step}?x=1", count)
    assert urls == [f"http://h/p/{start + step * (n + 1)}?x=1" for n in range(1, count + 1)]
