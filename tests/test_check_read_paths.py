"""The one-pass read paths the crawl checks use give what the paged and per-page paths gave, on a real archive.

``image_rows`` against the ``images`` list paged with OFFSET across page boundaries, ``anchor_graph`` and
``link_texts`` against ``internal_links``, ``page_html`` against ``html_by_sha256`` page by page, and
``link_depths`` over an adjacency mapping against the same walk over (source, target) pairs, and
``page_resource_rows`` with a prefix against the rows without one.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from nitpicker_checks.settings import words

from nitpicker_core import read
from nitpicker_core.archive import ArchiveWriter, aggregates, linkgraph, open_archive
from nitpicker_core.archive.prepare import plain_length
from nitpicker_core.records import Anchor, Image
from nitpicker_testing.archives import archive_builder, page

SITE = "https://paths.test"
PAGES = 23
# Texts a page's links carry: phrases, padded ones, runs of spaces, other scripts, empty
TEXTS = [
    "read more",
    "  Read   more!! ",
    "link to a page of the site",
    "詳しくはこちら",
    "",
    "→ here",
    "x\ty",
    "READ MORE",
    "Read more.",
    'say "here"',
    "here\\",
    "here  now",
    "click here",
    # ending next to a letter or digit in ASCII ('/' ':' '@' '[' '`' '{'): not plain
    "here/",
    "here:",
    "here@",
    "here[",
    "here`",
    "here{",
]


def _anchors(i: int) -> list[Anchor]:
    found = []
    for k in range(5):
        target = f"{SITE}/p{(i * 7 + k * 3) % PAGES}"
        found.append(Anchor(target, TEXTS[(i + k) % len(TEXTS)]))
    found.append(Anchor(f"{SITE}/p{i}", "itself"))  # a page's link to itself
    found.append(Anchor(f"{SITE}/old", "old"))  # a redirect
    found.append(Anchor("https://elsewhere.test/x", "away"))
    return found


def _images(i: int) -> list[Image]:
    found = []
    for width in (390, 1280):  # the same image at two device presets
        for k in range(i % 5):
            found.append(
                Image(
                    src=f"/img/{i}-{k}.png" if k else "",
                    current_src=f"{SITE}/img/{i}-{k}.png",
                    alt=None if k == 1 else f"image {k}",
                    width=100.0 if k != 2 else None,
                    height=80.0,
                    natural_width=400 if k == 3 else 100,
                    viewport_width=width,
                    markup='<img width="100" height="80">' if k == 0 else "",
                )
            )
    return found


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("paths") / "paths.nitpicker"
    with archive_builder(path, roots=[SITE + "/p0"]) as build:
        for i in range(PAGES):
            built = page(
                f"{SITE}/p{i}", title=f"Page {i}", source="<html><head></head><body>sent</body></html>"
            )
            resources = [f"{scheme}://cdn.test/{i}.png" for scheme in ("http", "HTTP", "https")][: i % 4]
            build.page(replace(built, anchors=_anchors(i), images=_images(i), resources=resources))
        redirect = page(f"{SITE}/old", None, content_type="", redirect_chain=[f"{SITE}/p5"])
        build.page(replace(redirect, status=301, is_target=False))
        build.page(page("https://elsewhere.test/x", external=True))
    return path


def test_image_rows_are_the_images_list_paged_across_its_page_boundaries(archive: Path) -> None:
    with open_archive(archive) as reader:
        commit = reader.resolve()
        paged, offset = [], 0
        while True:
            result = read.image_list(reader, commit, limit=7, offset=offset)
            paged += [
                (r["page"], r["src"], r["current_src"], r["alt"], r["missing_size"], r["oversized"])
                for r in result["items"]
            ]
            if result.get("next_offset") is None:
                break
            offset = result["next_offset"]
        rows = [tuple(r) for r in read.image_rows(reader, commit)]
    assert len(paged) > 3 * 7  # several pages of the list
    assert sorted(rows) == sorted(paged)
    assert any(r[4] for r in rows) and any(r[5] for r in rows) and any(r[3] is None for r in rows)


def test_the_anchor_graph_and_link_texts_hold_the_internal_links(archive: Path) -> None:
    with open_archive(archive) as reader:
        commit = reader.resolve()
        links = read.internal_links(reader, commit)
        graph = read.anchor_graph(reader, commit)
        texts = read.link_texts(reader, commit, lambda text: True)
        some = read.link_texts(reader, commit, lambda text: "more" in text)
    expected: dict[str, set[str]] = {}
    for link in links:
        expected.setdefault(link.source, set()).add(link.target)
    named = {graph.urls[s]: {graph.urls[t] for t in targets} for s, targets in graph.targets.items()}
    assert named == expected and len(named) == PAGES
    assert {graph.urls[i] for i in graph.linked()} == {
        link.target for link in links if link.target != link.source
    }
    assert {graph.ids[url] for url in named} == set(graph.targets)
    assert set(texts) == set(links) and len(texts) >= len(links)
    assert set(some) == {link for link in links if "more" in link.text} and some


def test_link_texts_with_phrases_leave_out_only_texts_that_are_none_of_them(archive: Path) -> None:
    # SQLite leaves out the plain texts that are no phrase: every link whose compared text is one is still
    # read, and every text that is not plain (case, padding, punctuation, other scripts) reaches ``keep``
    phrases = {words(text) for text in ("read more", "click here", "here", "詳しくはこちら")}
    with open_archive(archive) as reader:
        commit = reader.resolve()
        links = read.internal_links(reader, commit)
        every = read.link_texts(reader, commit, lambda text: True)
        some = read.link_texts(reader, commit, lambda text: True, phrases)
    assert {link for link in some if words(link.text) in phrases} == {
        link for link in links if words(link.text) in phrases
    }
    left_out = set(every) - set(some)
    assert {link.text for link in left_out} == {"link to a page of the site", "itself", "old", "away"}
    assert {"READ MORE", "Read more.", 'say "here"', "here\\", "here  now", "", "x\ty"} <= {
        link.text for link in some
    }
    assert {"here/", "here:", "here@", "here[", "here`", "here{"} <= {link.text for link in some}
    assert len(some) == len([link for link in every if link not in left_out])


def test_page_html_is_each_pages_stored_html(archive: Path) -> None:
    with open_archive(archive) as reader:
        commit = reader.resolve()
        pages = read.page_directives(reader, commit)
        rendered = dict(read.page_html(reader, commit))
        sent = dict(read.page_html(reader, commit, sent=True))
        assert rendered == {p.url: reader.html_by_sha256(p.html_sha256) for p in pages if p.html_sha256}
        assert sent == {p.url: reader.html_by_sha256(p.source_sha256) for p in pages if p.source_sha256}
    assert len(rendered) == PAGES and all("sent" in html for html in sent.values()) and sent


def test_page_resource_rows_with_a_prefix_are_those_starting_with_it(archive: Path) -> None:
    with open_archive(archive) as reader:
        commit = reader.resolve()
        every = list(read.page_resource_rows(reader, commit))
        plain = list(read.page_resource_rows(reader, commit, prefix="http://"))
    assert plain == [row for row in every if row.resource.startswith("http://")]
    assert plain and len(plain) < len(every)


def test_link_depths_over_a_mapping_are_those_over_pairs() -> None:
    rng = random.Random(7)
    edges = [(rng.randrange(200), rng.randrange(200)) for _ in range(400)]
    redirects = {rng.randrange(200): rng.randrange(200) for _ in range(15)}
    adjacency: dict[int, set[int]] = {}
    for source, target in edges:
        adjacency.setdefault(source, set()).add(target)
    for roots in ([0], [3, 50], [199]):
        assert read.link_depths(adjacency, roots, redirects) == read.link_depths(edges, roots, redirects)


def test_the_anchor_graph_stored_with_the_aggregates_is_the_one_walked_from_the_anchors(
    archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_archive(archive) as reader:
        commit = reader.resolve()
        assert aggregates.graph_set(reader, commit) is not None  # the commit's targets are stored
        stored = read.anchor_graph(reader, commit)
        monkeypatch.setenv(aggregates.ENV_SWITCH, "0")  # stored aggregates ignored: the anchors walked
        assert aggregates.graph_set(reader, commit) is None
        walked = read.anchor_graph(reader, commit)
    assert stored.targets == walked.targets and len(stored.targets) == PAGES
    assert stored.urls == walked.urls and stored.ids == walked.ids


def test_targets_pack_as_ascending_little_endian_32_bit_ids() -> None:
    packed = aggregates.pack_targets([70000, 3, 2**31 - 1, 1])
    assert packed == b"".join(i.to_bytes(4, "little") for i in (1, 3, 70000, 2**31 - 1))
    assert list(aggregates.unpack_targets(packed)) == [1, 3, 70000, 2**31 - 1]


def test_the_stored_plain_flag_is_what_sqlite_works_out(tmp_path: Path) -> None:
    # anchor.plain (format 7) stands for linkgraph._PLAIN: the same answer for every ASCII character at the
    # start, the end and inside a text, other scripts, runs of spaces, and the texts above
    chars = [chr(c) for c in range(1, 128)] + ["é", "詳", "\u2028", "😀"]
    texts = [*TEXTS, "a", "Z9", "a b", "a  b", " a", "a "]
    texts += [f"{c}ab" for c in chars] + [f"ab{c}" for c in chars] + [f"a{c}b" for c in chars]
    conn = sqlite3.connect(":memory:")
    for text in texts:
        sql = conn.execute(f"SELECT {linkgraph._PLAIN}, length(a.text) FROM (SELECT ? AS text) a", (text,))
        plain, length = sql.fetchone()
        assert plain_length(text) == (length if plain else 0), repr(text)
    assert plain_length(None) is None and plain_length("a\x00b") is None


def test_link_texts_read_anchors_stored_without_the_plain_flag_alike(archive: Path, tmp_path: Path) -> None:
    # An archive whose anchors were stored before format 7 (anchor.plain NULL): SQLite works it out again
    phrases = {words(text) for text in ("read more", "click here", "here", "詳しくはこちら")}
    older = tmp_path / "older.nitpicker"
    shutil.copy(archive, older)
    with ArchiveWriter.open(older) as writer:
        assert writer._conn.execute("SELECT count(*) FROM anchor WHERE plain IS NULL").fetchone()[0] == 0
        writer._conn.execute("UPDATE anchor SET plain = NULL")
        writer._conn.commit()
        writer._touch()
        writer.write()
    found = {}
    for path in (archive, older):
        with open_archive(path) as reader:
            found[path] = read.link_texts(reader, reader.resolve(), lambda text: True, phrases)
    assert found[archive] == found[older] and found[archive]
