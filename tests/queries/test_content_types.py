"""The content-type rule table: Python classifier and SQL CASE/filter agree, on random and real types."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nitpicker_core import CATEGORIES, classify_content_type, content_type_sql_case, content_type_sql_filter
from nitpicker_core.content_types import RULES, normalize

EXAMPLES = {
    "html": ["text/html", "Text/HTML; charset=UTF-8", "application/xhtml+xml"],
    "pdf": ["application/pdf"],
    "csv": ["text/csv", "text/csv; header=present"],
    "word": ["application/msword", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    "excel": [
        "application/vnd.ms-excel",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ],
    "powerpoint": [
        "application/vnd.ms-powerpoint",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ],
    "image": ["image/png", "image/svg+xml", "IMAGE/JPEG"],
    "css": ["text/css"],
    "javascript": ["text/javascript", "application/javascript; charset=utf-8"],
    "json": ["application/json", "application/ld+json", "application/manifest+json"],
    "xml": ["application/xml", "text/xml", "application/rss+xml", "application/atom+xml"],
    "font": ["font/woff2", "application/vnd.ms-fontobject"],
    "audio": ["audio/mpeg"],
    "video": ["video/mp4"],
    "archive": ["application/zip", "application/gzip"],
    "text": ["text/plain", "text/markdown"],
    "other": ["application/octet-stream", "application/wasm", "x", "multipart/form-data"],
    "unknown": [None, "", "  ", ";charset=utf-8"],
}

# Random MIME-ish strings: pieces of the rule patterns glued to random text, so rules really get hit.
PIECES = sorted(
    {p for _, pattern, _ in RULES for p in (pattern, pattern[:4], pattern[-4:])}
    | {"/", "+", ";", " ", "json", "xml", "TEXT", "Html", ";charset=utf-8"}
)
TEXT = st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=8)
MIME = st.lists(st.one_of(st.sampled_from(PIECES), TEXT), max_size=5).map("".join)


@pytest.fixture(scope="module")
def db():
    conn = sqlite3.connect(":memory:")
    yield conn
    conn.close()


def sql_category(db: sqlite3.Connection, value: str | None) -> str:
    return db.execute(f"SELECT {content_type_sql_case('ct')} FROM (SELECT ? AS ct)", (value,)).fetchone()[0]


def sql_matches(db: sqlite3.Connection, value: str | None, category: str) -> bool:
    where, params = content_type_sql_filter("ct", category)
    return (
        db.execute(f"SELECT COUNT(*) FROM (SELECT ? AS ct) WHERE {where}", (value, *params)).fetchone()[0]
        == 1
    )


def test_categories_are_the_eighteen():
    assert len(CATEGORIES) == 18 and CATEGORIES[-2:] == ("other", "unknown")
    assert set(EXAMPLES) == set(CATEGORIES)


@pytest.mark.parametrize("category", CATEGORIES)
def test_examples(db, category):
    for raw in EXAMPLES[category]:
        assert classify_content_type(raw) == category, raw
        stored = normalize(raw) or None  # the archive stores normalised types, NULL when absent
        assert sql_category(db, stored) == category, raw
        assert sql_matches(db, stored, category)


@settings(max_examples=400, deadline=None)
@given(raw=st.one_of(st.none(), MIME))
def test_python_and_sql_agree(db, raw):
    expected = classify_content_type(raw)
    assert expected in CATEGORIES
    stored = normalize(raw)
    assert classify_content_type(stored) == expected  # normalising is idempotent for the classifier
    assert sql_category(db, stored) == expected
    assert [c for c in CATEGORIES if sql_matches(db, stored, c)] == [expected]


def test_unknown_category_is_refused():
    with pytest.raises(ValueError):
        content_type_sql_filter("ct", "spreadsheet")


def test_summary_categories_match_page_filters(crawled, nitpicker_query):
    # the registered queries run in this process: the CLI path is test_pages' (a CLI start per category
    # was most of this test's time)
    summary = nitpicker_query(crawled, "summary")
    counts = {row["category"]: row["count"] for row in summary["content_types"]}
    assert list(counts) == list(CATEGORIES)
    assert counts["html"] > 30 and counts["json"] == 2 and counts["image"] == 1 and counts["unknown"] >= 5
    assert sum(counts.values()) == summary["status"]["total"]
    for category in CATEGORIES:
        assert nitpicker_query(crawled, "pages", category=category, limit="1")["total"] == counts[category], (
            category
        )


def test_a_binary_body_is_told_from_text_in_any_encoding() -> None:
    import random

    from nitpicker_core.content_types import binary_body

    blob = random.Random(1).randbytes(8192)
    text = "<!DOCTYPE html><title>Ça</title><p>日本語のテキスト、naïve façade\tand\r\nlines</p>" * 40
    assert binary_body(blob) and binary_body(blob.decode("latin-1"))  # as sent, or as a browser decoded it
    assert binary_body(b"<html>" + bytes(range(1, 32)) * 20)  # no NUL, but a fifth control characters
    for encoded in (
        text.encode("utf-8"),
        text.encode("utf-16"),
        text.encode("utf-32"),
        text.encode("shift_jis", "replace"),
        text.encode("iso-2022-jp", "replace"),
        text.encode("euc-jp", "replace"),
    ):
        assert not binary_body(encoded), encoded[:20]
    assert not binary_body(text) and not binary_body(b"") and not binary_body(None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200))
def test_a_body_is_binary_exactly_when_a_twentieth_of_it_are_controls_other_than_whitespace_and_esc(
    text: str,
) -> None:
    from nitpicker_core.content_types import binary_body

    whitespace = "\t\n\r\f\x1b"
    controls = sum(1 for char in text if char < " " and char not in whitespace)
    assert binary_body(text) == (bool(text) and ("\x00" in text or controls * 20 > len(text)))
