"""`crawl --screenshots` end to end: real Chromium, real archive; images valid, sized, stored once, kept on --update."""

from __future__ import annotations

import base64
import re
import shutil
import struct

import pytest
from support import run_cli

from nitpicker_core import UsageError
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import query_registry, run_query

pytestmark = pytest.mark.browser
QUERIES = query_registry(make_plugin_manager())
PAGES = ("/shots/", "/shots/twin-a", "/shots/twin-b", "/shots/tall")


def _query(archive, name, commit=None, **params):
    with open_archive(archive) as reader:
        return run_query(QUERIES, reader, name, params, commit)


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's frame header; fails on anything that is not a whole baseline/progressive JPEG."""
    assert data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9", "not a complete JPEG"
    at = 2
    while at < len(data):
        assert data[at] == 0xFF, f"no marker at byte {at}"
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2 : at + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):  # start of frame: precision, height, width
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    raise AssertionError("no frame header")


def _image(archive, sha256: str) -> bytes:
    found = _query(archive, "screenshot", sha256=sha256)
    data = base64.b64decode(found["data"])
    assert found["size"] == len(data) and found["media_type"] == "image/jpeg"
    assert jpeg_size(data) == (found["width"], found["height"])
    return data


def test_every_rendered_page_has_a_valid_screenshot_stored_once(site, shots):
    archive = shots["with"]
    found = {path: _query(archive, "page-detail", url=site + path)["screenshot"] for path in PAGES}
    for path, shot in found.items():
        assert shot is not None, path
        assert (shot["width"], shot["thumbnail"]["width"], shot["thumbnail"]["height"]) == (1280, 320, 240)
        assert jpeg_size(_image(archive, shot["sha256"])) == (1280, shot["height"])
        assert jpeg_size(_image(archive, shot["thumbnail"]["sha256"])) == (320, 240)
    assert found["/shots/"]["height"] == 960  # a short page: one screen
    assert found["/shots/tall"]["height"] == 8000  # a 12,000 px page is cut at the cap
    # the twins render the same: one image (and one thumbnail) for both pages
    assert found["/shots/twin-a"] == found["/shots/twin-b"]
    assert found["/shots/twin-a"]["sha256"] != found["/shots/"]["sha256"]
    with open_archive(archive) as reader:
        stored = {row[0] for row in reader.execute("SELECT sha256 FROM screenshot_blob")}
        linked = reader.execute("SELECT COUNT(*) FROM page_screenshot")[0][0]
    named = {sha for shot in found.values() for sha in (shot["sha256"], shot["thumbnail"]["sha256"])}
    assert stored == named and len(stored) == 6 and linked == 4
    # not a page, no picture: the SVG the index links to
    assert _query(archive, "page-detail", url=site + "/shots/pixel.svg")["screenshot"] is None


def test_no_screenshot_without_the_flag(site, shots):
    archive = shots["without"]
    assert _query(archive, "page-detail", url=site + "/shots/twin-a")["screenshot"] is None
    with open_archive(archive) as reader:
        assert reader.execute("SELECT COUNT(*) FROM screenshot_blob")[0][0] == 0
        assert reader.info()["options"]["screenshots"] is False


def test_update_keeps_the_screenshots_of_unchanged_pages_and_gc_keeps_them(site, shots, tmp_path):
    archive = tmp_path / "update.nitpicker"
    shutil.copy(shots["with"], archive)
    before = {path: _query(archive, "page-detail", url=site + path)["screenshot"] for path in PAGES}
    result = run_cli("crawl", "--update", str(archive), cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    unchanged = re.search(r"(\d+) pages unchanged", result.stderr)
    assert unchanged and int(unchanged[1]) >= len(PAGES), (
        result.stderr
    )  # 304s: taken over, not rendered again
    after = {path: _query(archive, "page-detail", commit=2, url=site + path)["screenshot"] for path in PAGES}
    assert after == before
    with ArchiveWriter.open(archive) as writer:
        removed = writer.gc()
    assert removed["screenshots"] == 0
    shot = after["/shots/tall"]
    assert jpeg_size(_image(archive, shot["sha256"])) == (1280, 8000)


def test_a_bad_or_unknown_hash_is_a_one_line_error(shots):
    for sha, said in (("xyz", "64 lower-case hex digits"), ("0" * 64, "no screenshot 000")):
        with pytest.raises(UsageError, match=said) as refused:
            _query(shots["with"], "screenshot", sha256=sha)
        assert "\n" not in str(refused.value) and str(shots["with"].parent) not in str(refused.value)


def test_an_archive_from_before_screenshots_says_none(tmp_path):
    from archives import SITE, build_archive

    archive = build_archive(tmp_path / "old.nitpicker")
    with ArchiveWriter.open(archive) as writer:  # as written before the screenshot tables existed
        writer._conn.executescript("DROP TABLE page_screenshot; DROP TABLE screenshot_blob;")
        writer.write()
    with open_archive(archive) as reader:
        assert not reader.execute("SELECT 1 FROM sqlite_master WHERE name = 'screenshot_blob'")
    assert _query(archive, "page-detail", url=SITE + "/")["screenshot"] is None
    with pytest.raises(UsageError, match="no screenshot"):
        _query(archive, "screenshot", sha256="a" * 64)
