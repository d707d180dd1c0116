"""Malformed query input is a usage error everywhere: the shared query layer, the CLI and the viewer's JSON API.

Huge or negative integers, NUL bytes, over-long strings and paths, unbalanced GLOB patterns and archives that
are not regular files (a FIFO, a device) each give one line and a non-zero exit (CLI), HTTP 400 (viewer) or
a ``UsageError``/``ArchiveError`` (the layer the MCP server calls), never an internal error or a hang.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from archives import build_archive
from support import run_cli

from nitpicker_core import NitpickerError, Query, UsageError, hookimpl, query_registry, run_query
from nitpicker_core.archive import open_archive

BIG = str(2**63)  # one past SQLite's largest integer
HUGE = str(2**70)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding a small real archive (site.nitpicker), a FIFO and a plain directory."""
    path = tmp_path_factory.mktemp("query-input")
    build_archive(path / "site.nitpicker")
    os.mkfifo(path / "pipe.nitpicker")
    (path / "plain").mkdir()
    return path


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", str(tmp_path / "cache"))


def one_line_error(result, workdir: Path) -> str:
    """The CLI failed politely: exit 1, one `nitpicker: error:` line, no traceback, no absolute path."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1, result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("nitpicker: error: "), lines[0]
    assert "internal error" not in lines[0] and str(workdir) not in lines[0]
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (["pages", "--offset", BIG], "parameter 'offset' is out of range"),
        (["pages", "--offset", HUGE], "parameter 'offset' is out of range"),
        (["pages", "--offset", "-1"], "parameter 'offset' must be at least 0"),
        (["pages", "--limit", HUGE], "parameter 'limit' must be at most 10000"),
        (["pages", "--status", BIG], "parameter 'status' is out of range"),
        (["pages", "--commit", BIG], "parameter 'commit' must be a commit id"),
        (["pages", "--commit", "-1"], "parameter 'commit' must be a commit id"),
        (["pages", "--commit", "1" * 5000], "parameter 'commit' must be a commit id"),
        (["pages", "--url", "[[["], "parameter 'url': the [ at character 1 of the pattern is never closed"),
        (["pages", "--url", "http://site.test/[a-z"], "the [ at character 18 of the pattern is never closed"),
        (["pages", "--url", "[" * 60_000], "parameter 'url' is too long (60000 characters; at most 8192)"),
        (["page-detail", "--url", "http://site.test/" + "a" * 5000], "no URL 'http://site.test/aaaa"),
    ],
)
def test_bad_parameters_are_one_line_errors_in_the_cli(
    workdir: Path, params: list[str], expected: str
) -> None:
    line = one_line_error(run_cli("query", "site.nitpicker", *params, cwd=workdir), workdir)
    assert expected in line
    assert len(line) < 6000


@pytest.mark.parametrize(
    ("archive", "expected"),
    [
        ("pipe.nitpicker", "pipe.nitpicker is not a regular file (a FIFO)"),
        ("/dev/zero", "zero is not a regular file (a character device)"),
        ("plain", "plain is a directory but not a nitpicker working directory"),
        ("x" * 5000 + ".nitpicker", "the archive path is too long (5010 characters)"),
        ("x" * 300 + ".nitpicker", "the archive path is too long"),
    ],
)
def test_archives_that_are_not_regular_files_or_paths_fail_at_once(
    workdir: Path, archive: str, expected: str
) -> None:
    # a FIFO used to block the open forever (until the timeout below fails the test)
    result = run_cli("query", archive, "summary", cwd=workdir, timeout=90)
    assert expected in one_line_error(result, workdir)


def test_good_parameters_still_work_at_the_limits(workdir: Path) -> None:
    import json

    result = run_cli(
        "query",
        "site.nitpicker",
        "pages",
        "--offset",
        str(2**63 - 1),
        "--url",
        "http://site.test/[a-z]*",
        cwd=workdir,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["items"] == []
    result = run_cli("query", "site.nitpicker", "pages", "--url", "http://site.test/[a]*", cwd=workdir)
    assert [item["url"] for item in json.loads(result.stdout)["items"]] == ["http://site.test/about"]


# --- the shared layer (what the MCP tools and the viewer call) --------------------------------------------


class _PatternQueries:
    @hookimpl
    def register_queries(self, register):
        register(
            Query(
                "echo-regex",
                "Echo a regex.",
                lambda archive, commit, pattern, ratio=1.0: pattern,
                {"pattern": {"type": "string", "format": "regex"}, "ratio": {"type": "number"}},
                required=("pattern",),
            )
        )
        register(
            Query(
                "echo-list",
                "Echo a list.",
                lambda archive, commit, names=(): list(names),
                {"names": {"type": "array", "items": {"type": "string"}}},
            )
        )


@pytest.mark.parametrize(
    ("name", "params", "commit", "expected"),
    [
        ("pages", {"offset": 2**63}, None, "parameter 'offset' is out of range"),
        ("pages", {"status": -(2**63) - 1}, None, "parameter 'status' is out of range"),
        ("pages", {"url": "a\x00b"}, None, "parameter 'url' must not contain a NUL byte"),
        ("pages", {"url": "x" * 8193}, None, "parameter 'url' is too long"),
        ("pages", {}, 2**63, "parameter 'commit' must be a commit id"),
        ("pages", {}, "9223372036854775808", "parameter 'commit' must be a commit id"),
        ("pages", {}, 0, "parameter 'commit' must be a commit id"),
        ("pages", {}, True, "parameter 'commit' must be a commit id"),
        ("echo-regex", {"pattern": "[[["}, None, "parameter 'pattern' is not a valid regular expression"),
        (
            "echo-regex",
            {"pattern": "a", "ratio": float("inf")},
            None,
            "parameter 'ratio' must be a finite number",
        ),
        ("echo-regex", {"pattern": "a", "ratio": "nan"}, None, "parameter 'ratio' must be a finite number"),
        ("echo-list", {"names": ["ok", "b\x00d"]}, None, "parameter 'names' must not contain a NUL byte"),
    ],
)
def test_the_query_layer_raises_usage_errors(workdir: Path, pm, name, params, commit, expected) -> None:
    pm.add_plugin(_PatternQueries(), "pattern-queries")
    registry = query_registry(pm)
    with open_archive(workdir / "site.nitpicker") as reader:
        with pytest.raises(UsageError) as info:
            run_query(registry, reader, name, params, commit)
        assert expected in str(info.value)
        assert "\n" not in str(info.value) and len(str(info.value)) < 300
        assert (
            run_query(registry, reader, "echo-regex", {"pattern": "a[b]c", "ratio": "0.5"}, "HEAD") == "a[b]c"
        )


def test_archive_paths_with_nul_bytes_are_archive_errors() -> None:
    with pytest.raises(NitpickerError, match="the archive path contains a NUL byte"):
        open_archive("site\x00.nitpicker")


# --- the viewer's JSON API (the same layer, so HTTP 400) -------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        f"/api/pages?offset={BIG}",
        f"/api/pages?commit={BIG}",
        "/api/pages?url=a%00b",
        "/api/pages?url=%5B%5B%5B",
        f"/api/pages?status={HUGE}",
        "/api/pages?commit=-4",
    ],
)
def test_the_viewer_api_answers_400(workdir: Path, pm, query: str) -> None:
    from nitpicker_viewer.app import create_app

    app = create_app(workdir / "site.nitpicker", pm)
    try:
        response = app.test_client().get(query)
        assert response.status_code == 400, response.get_data(as_text=True)
        assert response.is_json and response.get_json()["status"] == 400
        assert str(workdir) not in response.get_data(as_text=True)
    finally:
        app.config["NITPICKER_CLOSE"]()
