"""The duplicate-content grouping on its own: signatures, exact groups, LSH candidates confirmed exactly."""

from __future__ import annotations

import pickle
import random

import numpy as np
from nitpicker_checks.duplicates import (
    MIN_WORDS,
    Near,
    group,
    jaccard,
    percent,
    signature,
)

from nitpicker_core import main_text


def _text(seed: int, n: int = 300, changed: int = 0, vocabulary: int = 5000) -> str:
    rng = random.Random(seed)
    words = [f"w{rng.randrange(vocabulary)}" for _ in range(n)]
    for i in random.Random(seed + 1).sample(range(n), changed):  # spread, not at one end
        words[i] = f"new{i}"
    return " ".join(words)


def test_a_signature_counts_words_and_ignores_case_markup_and_spacing() -> None:
    a = signature("Hello, World!  The  quick fox.")
    b = signature("hello world the quick fox")
    assert a.words == 5 and a == b and np.array_equal(a.shingles, b.shingles)
    assert a.shingles.size == 3 and signature("").words == 0 and signature("").shingles.size == 0
    # a worker makes it, the grouping process reads it: plain data, the same in any process
    again = pickle.loads(pickle.dumps(a))
    assert again == a and np.array_equal(again.shingles, a.shingles)


def test_jaccard_is_the_share_of_shingles_in_common() -> None:
    a = signature("one two three four five").shingles  # 3 shingles
    b = signature("one two three four six").shingles  # 2 of them, and 1 other
    assert jaccard(a, b) == 2 / 4 and jaccard(a, a) == 1.0
    assert jaccard(a, signature("seven eight nine").shingles) == 0.0


def test_exact_duplicates_group_by_words_and_short_pages_are_nobodys_duplicate() -> None:
    sigs = {
        "/a": signature(_text(1)),
        "/b": signature(_text(1).upper()),
        "/c": signature(_text(1)),
        "/d": signature(_text(2)),
        "/e": signature("Home"),
        "/f": signature("Home"),
    }
    found = group(sigs, 0.9)
    assert found.exact == {"/a": ["/b", "/c"], "/b": ["/a", "/c"], "/c": ["/a", "/b"]}
    assert found.near == {} and found.words["/e"] == 1 < MIN_WORDS


def test_near_duplicates_at_a_known_similarity_with_the_closest_and_the_count() -> None:
    base = _text(3, n=400, vocabulary=100_000)
    sigs = {
        "/base": signature(base),
        "/base-copy": signature(base),
        "/two-words": signature(_text(3, n=400, changed=2, vocabulary=100_000)),
        "/twenty": signature(_text(3, n=400, changed=20, vocabulary=100_000)),
        "/other": signature(_text(4, n=400, vocabulary=100_000)),
    }
    exact = {u: jaccard(sigs["/base"].shingles, s.shingles) for u, s in sigs.items()}
    assert exact["/two-words"] > 0.95 > 0.9 > exact["/twenty"] > 0.6 and exact["/other"] < 0.05
    found = group(sigs, 0.9)
    assert set(found.near) == {"/base", "/base-copy", "/two-words"}
    assert found.near["/two-words"] == Near("/base", exact["/two-words"], 2)  # the first of two equals
    assert found.near["/base"] == Near("/two-words", exact["/two-words"], 1)
    loose = group(sigs, 0.6)
    assert loose.near["/twenty"] == Near(
        "/two-words", jaccard(sigs["/twenty"].shingles, sigs["/two-words"].shingles), 3
    )
    assert loose.near["/base"].count == 2 and "/other" not in loose.near


def test_lsh_proposes_the_near_pairs_among_many_pages_not_every_pair() -> None:
    # 2000 distinct pages and 50 pairs at about 97 %: every pair found, few other pairs looked at
    sigs = {f"/p{i}": signature(_text(i, n=250)) for i in range(2000)}
    for i in range(50):
        sigs[f"/p{i}-near"] = signature(_text(i, n=250, changed=2))
    found = group(sigs, 0.9)
    assert set(found.near) == {f"/p{i}" for i in range(50)} | {f"/p{i}-near" for i in range(50)}
    assert all(n.count == 1 and n.similarity >= 0.9 for n in found.near.values())
    assert 50 <= found.candidates < 500  # of ~2.1 million pairs


def test_the_similarity_rounds_down() -> None:
    assert percent(0.8999) == 89 and percent(0.9) == 90 and percent(1.0) == 100


def test_the_main_text_leaves_the_chrome_out() -> None:
    html = "<html><body><nav>Menu</nav><main><h1>Title</h1><p>Body <b>text</b></p></main><footer>F</footer>"
    assert (main_text(html + "</body></html>") or "").split() == ["Title", "Body", "text"]
    assert main_text("") is None and main_text("   ") is None
