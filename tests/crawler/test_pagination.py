"""Predictive pagination: guesses come from one page's own links, stay near them, and never cascade."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nitpicker_core.crawler.pagination import MAX_STEP, PaginationPredictor, detect_step, predict


def test_path_sequence() -> None:
    assert predict("http://h/pagination/page/1", "http://h/pagination/page/2", 3) == [
        "http://h/pagination/page/3",
        "http://h/pagination/page/4",
        "http://h/pagination/page/5",
    ]


def test_query_sequence_with_step_and_padding() -> None:
    assert predict("http://h/list?cat=x&p=10", "http://h/list?cat=x&p=20", 2) == [
        "http://h/list?cat=x&p=30",
        "http://h/list?cat=x&p=40",
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


def _urls(guesses) -> list[str]:  # type: ignore[no-untyped-def]
    return [g.url for g in guesses]


def test_a_page_and_its_next_link_predict() -> None:
    predictor = PaginationPredictor(count=2)
    guesses = predictor.observe_page("http://h/pagination/page/1", ["http://h/pagination/page/2"])
    assert _urls(guesses) == ["http://h/pagination/page/3", "http://h/pagination/page/4"]
    assert all(g.predicted and g.after == "http://h/pagination/page/2" for g in guesses)
    assert [g.steps for g in guesses] == [1, 2]
    # page 3, reached by a real link, links page 4 (already guessed): only what was not issued comes back
    assert _urls(predictor.observe_page("http://h/pagination/page/3", ["http://h/pagination/page/4"])) == [
        "http://h/pagination/page/5",
        "http://h/pagination/page/6",
    ]


def test_a_list_page_linking_pages_in_order_predicts() -> None:
    predictor = PaginationPredictor(count=2)
    assert _urls(predictor.observe_page("http://h/list", ["http://h/list?p=1", "http://h/list?p=2"])) == [
        "http://h/list?p=3",
        "http://h/list?p=4",
    ]


def test_links_of_different_pages_never_pair() -> None:
    # The calendar-trap runaway: workers interleave the new links of unrelated pages (here pages reached
    # through guesses three years apart); paired, they made a 3-year step, then 12, then decades.
    predictor = PaginationPredictor(count=4)
    assert predictor.observe_page("http://h/cal/2027/01", ["http://h/cal/2027/02"]) != []
    before = set(_urls(predictor.observe_page("http://h/cal/2030/01", ["http://h/cal/2030/02"])))
    assert before == {f"http://h/cal/2030/{m:02d}" for m in range(3, 7)}  # months after 2030/02, nothing else
    assert not any("/2033/" in u or "/2036/" in u for u in before)


def test_implausible_steps_are_refused() -> None:
    predictor = PaginationPredictor(count=3)
    # "1 2 3 … 50": 3 → 50 is the last page, not a step of 47
    assert predictor.observe_page("http://h/list", ["http://h/list?p=3", "http://h/list?p=50"]) == []
    assert predictor.observe_page("http://h/y/2024", ["http://h/y/2030"]) == []  # 6 years from 2024: no
    big = MAX_STEP + 1
    assert predictor.observe_page("http://h/o?start=0", [f"http://h/o?start={big}"]) == []
    assert _urls(predictor.observe_page("http://h/o?start=0", ["http://h/o?start=50"])) == [
        "http://h/o?start=100",
        "http://h/o?start=150",
        "http://h/o?start=200",
    ]


@given(
    st.lists(st.tuples(st.integers(0, 10**6), st.lists(st.integers(0, 10**6), max_size=4)), max_size=12),
    st.integers(1, 6),
)
def test_guesses_stay_within_count_steps_of_a_linked_value(
    pages: list[tuple[int, list[int]]], count: int
) -> None:
    predictor = PaginationPredictor(count=count)
    linked: set[int] = set()
    for page, links in pages:
        urls = [f"http://h/p/{n}" for n in links]
        linked.update(links)
        for guess in predictor.observe_page(f"http://h/p/{page}", urls):
            after = int(guess.after.rsplit("/", 1)[1])
            value = int(guess.url.rsplit("/", 1)[1])
            assert after in linked and 1 <= guess.steps <= count
            step = (value - after) // guess.steps
            assert value == after + step * guess.steps and 0 < step <= MAX_STEP
            assert value <= max(linked) + count * step


@given(st.integers(0, 10**6), st.integers(1, 1000), st.integers(1, 8))
def test_predictions_continue_the_sequence(start: int, step: int, count: int) -> None:
    urls = predict(f"http://h/p/{start}?x=1", f"http://h/p/{start + step}?x=1", count)
    assert urls == [f"http://h/p/{start + step * (n + 1)}?x=1" for n in range(1, count + 1)]
