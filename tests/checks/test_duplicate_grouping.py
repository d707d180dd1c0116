"""The duplicate-content grouping on its own: signatures, exact groups, LSH candidates confirmed exactly."""

from __future__ import annotations

import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from nitpicker_checks.duplicates import (
    LSH_MARGIN,
    MIN_WORDS,
    NUM_PERM,
    Near,
    _bands,
    _Sketcher,
    group,
    jaccard,
    low_words_setting,
    percent,
    signature,
)

from nitpicker_core import content_words, main_text

ROOT = Path(__file__).resolve().parents[2]


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


def test_japanese_and_chinese_count_a_word_per_character_punctuation_not() -> None:
    assert content_words("東京タワーは、とても高い。") == list(
        "東京タワーはとても高い"
    )  # 11: 、 and 。 are not words
    assert len(content_words("中文文本，测试。")) == 6
    assert content_words("ｶﾀｶﾅ・𠮷野家々") == [
        "ｶ",
        "ﾀ",
        "ｶ",
        "ﾅ",
        "𠮷",
        "野",
        "家",
        "々",
    ]  # ・ is punctuation
    # languages with spaces: a run of word characters is one word (Korean too: it spaces its words)
    assert content_words("Hello world 123, naïve café") == ["Hello", "world", "123", "naïve", "café"]
    assert content_words("한국어 문장입니다") == ["한국어", "문장입니다"]


def test_a_mixed_page_adds_both_counts_and_its_shingles_are_character_trigrams() -> None:
    html = (
        "<html><body><nav>メニュー ホーム</nav><main><h1>Nitpicker とは</h1>"
        "<p>Webサイトを検査する tool です。</p></main><footer>© 2026</footer></body></html>"
    )
    text = main_text(html)
    assert text is not None and "メニュー" not in text
    # "Webサイトを検査する" is Web and 8 characters; punctuation and the chrome (nav, footer) are not counted
    assert content_words(text.casefold()) == [
        "nitpicker", "と", "は", "web", "サ", "イ", "ト", "を", "検", "査", "す", "る", "tool", "で", "す",
    ]  # fmt: skip
    found = signature(text)
    assert found.words == 15 and found.shingles.size == 13  # 15 words, 13 distinct trigrams
    # a Japanese sentence edited by one character keeps most of its trigrams: compared as text, not as one "word"
    a = signature("日本語の文章を一文字ずつ単語として数えるので、似たページの類似度が分かります。")
    b = signature("日本語の文章を一文字ずつ単語として数えるので、似たページの類似度が分かる。")
    assert a.words == 37 and 0.8 < jaccard(a.shingles, b.shingles) < 1


def test_content_low_counts_japanese_characters_against_the_setting() -> None:
    limit = low_words_setting({})  # 200 by default: characters in Japanese text
    short = "短い説明だけのページです。" * 10  # 12 characters a sentence: 120 words
    long = "内容が十分にあるページです。" * 20  # 13 characters a sentence: 260 words
    assert signature(short).words == 120 < limit <= signature(long).words == 260
    assert signature(short + " plus some English words").words == 124


def test_the_bands_make_the_fewest_missed_and_extra_proposals() -> None:
    # checked against a plain midpoint sum over 20,000 steps, for thresholds the similarity setting gives
    def error(threshold: float, bands: int, rows: int) -> float:
        steps = 20_000
        total = 0.0
        for i in range(steps):
            s = (i + 0.5) / steps
            shared = 1 - (1 - s**rows) ** bands
            total += (shared if s < threshold else 1 - shared) / steps
        return total

    for threshold in (0.05, 0.35, 0.65, 0.75):
        bands, rows = _bands(threshold, NUM_PERM)
        assert bands * rows <= NUM_PERM
        best = min(error(threshold, b, r) for b in range(1, 65) for r in range(1, 64 // b + 1))
        assert error(threshold, bands, rows) <= best + 1e-4
    assert _bands(0.65, NUM_PERM) == (
        9,
        7,
    )  # the default 90 % less the margin: 99.7 % of pairs at 90 % proposed


def test_sketches_agree_in_about_the_share_of_shingles_in_common() -> None:
    sketcher = _Sketcher(256)
    base = signature(_text(7, n=2000, vocabulary=100_000)).shingles
    for changed in (0, 40, 200, 600):
        other = signature(_text(7, n=2000, changed=changed, vocabulary=100_000)).shingles
        agree = float(np.mean(sketcher.sketch(base) == sketcher.sketch(other)))
        assert abs(agree - jaccard(base, other)) < 0.1, changed
    assert np.array_equal(sketcher.sketch(base), _Sketcher(256).sketch(base))  # the same in every run


def test_the_sketches_and_bands_are_those_datasketch_made_before() -> None:
    # the grouping used datasketch 2 until issue 32: the same sketches and bands propose the same pairs
    datasketch = pytest.importorskip("datasketch")
    from datasketch.lsh import _optimal_param

    sketcher = _Sketcher(NUM_PERM)
    for seed in range(20):
        shingles = signature(_text(seed, n=50 + 40 * seed)).shingles
        theirs = datasketch.MinHash(num_perm=NUM_PERM, hashfunc=int)
        theirs.update_batch(shingles.tolist())
        assert np.array_equal(sketcher.sketch(shingles), theirs.hashvalues)
    for similarity in range(1, 101):
        threshold = max(0.05, similarity / 100 - LSH_MARGIN)
        assert _bands(threshold, NUM_PERM) == _optimal_param(threshold, NUM_PERM, 0.5, 0.5), similarity


def test_loading_the_checks_imports_no_numpy_and_grouping_no_scipy() -> None:
    # numpy costs every command ~0.1 s, scipy (what datasketch imported) a crawl's end ~0.7 s
    code = (
        "import sys, nitpicker_checks\n"
        "assert 'numpy' not in sys.modules, 'numpy'\n"
        "from nitpicker_checks.duplicates import group, signature\n"
        "words = ' '.join(f'w{i}' for i in range(50))\n"
        "found = group({'/a': signature(words), '/b': signature(words + ' x'), '/c': signature('a b')}, 0.9)\n"
        "assert set(found.near) == {'/a', '/b'}, found\n"
        "print(sorted(m for m in ('scipy', 'datasketch') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "plugins")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
