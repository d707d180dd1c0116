"""`nitpicker mcp`: the real server over stdio, driven by the MCP SDK's own client, against the query archive.

One server process serves the whole module: a background event loop holds the client session, and each
test submits coroutines to it. The in-process tests at the end build the server object directly.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support import McpStdio, run_cli


@pytest.fixture(scope="module")
def server(crawled, tmp_path_factory):
    errlog_path = tmp_path_factory.mktemp("mcp") / "stderr.log"
    with errlog_path.open("w+", encoding="utf-8") as errlog:
        stdio = McpStdio(crawled.parent, errlog, None, "-v")
        stdio.errlog_path = errlog_path
        yield stdio
        stdio.close()


@pytest.fixture(scope="module")
def listed(crawled):
    result = run_cli("query", "--list")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def payload(result: Any) -> Any:
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert result.structured_content == (data if isinstance(data, dict) else {"result": data})
    return data


def error_text(result: Any) -> str:
    assert result.is_error
    assert len(result.content) == 1
    text = result.content[0].text
    assert text and "\n" not in text
    return text


def test_initialize_names_the_server(server):
    assert server.init.server_info.name == "nitpicker"
    assert server.init.capabilities.tools is not None


def test_every_query_is_a_tool_with_its_schema_and_the_archive_parameter(server, listed):
    tools = {tool.name: tool for tool in server.run(server.session.list_tools()).tools}
    assert {"list_archives", "list_commits"} <= set(tools)
    for query in listed:
        tool = tools[query["name"].replace("-", "_")]
        assert tool.description == query["description"]
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["properties"]["archive"]["type"] == "string"
        assert "commit" in schema["properties"]
        for name, prop in query["schema"]["properties"].items():
            assert schema["properties"][name] == prop
        assert schema["required"] == ["archive", *query["schema"]["required"]]
    assert len(tools) == len(listed) + 2


@pytest.mark.parametrize(
    ("tool", "arguments", "params"),
    [
        ("info", {}, []),
        ("commits", {}, []),
        ("commits", {"limit": 1, "offset": 0}, ["--limit", "1", "--offset", "0"]),
        ("diff", {"commit": 1, "base": 1}, ["--commit", "1", "--base", "1"]),
        ("info", {"commit": "HEAD"}, ["--commit", "HEAD"]),
    ],
)
def test_tool_results_equal_the_query_command(server, query, crawled, tool, arguments, params):
    assert payload(server.call(tool, archive=str(crawled), **arguments)) == query(tool, *params)


def test_every_query_without_required_parameters_gives_what_the_registry_gives(server, listed, pm, crawled):
    """Each tool against `run_query` in this process (the `query` command's core), errors included."""
    from nitpicker_mcp.tools import dumps, error_message

    from nitpicker_core import NitpickerError, query_registry, run_query
    from nitpicker_core.archive import open_archive

    registry = query_registry(pm)
    with open_archive(crawled) as reader:
        for item in listed:
            if item["schema"]["required"]:
                continue
            result = server.call(item["name"].replace("-", "_"), archive="site.nitpicker")
            try:
                expected = json.loads(dumps(run_query(registry, reader, item["name"], {})))
            except (NitpickerError, TypeError, ValueError, KeyError) as exc:
                assert error_text(result) == error_message(exc), item["name"]
            else:
                assert payload(result) == expected, item["name"]


def test_list_commits(server, crawled, query):
    data = payload(server.call("list_commits", archive=str(crawled)))
    assert data["archive"] == "site.nitpicker" and data["head"] == 1 and data["total"] == 1
    assert [c["id"] for c in data["items"]] == [c["id"] for c in query("commits")["items"]]
    assert data["items"][0]["head"] is True


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"limit": "many"}, "parameter 'limit' must be integer"),
        ({"limit": 0}, "parameter 'limit' must be at least 1"),
        ({"limits": 3}, "has no parameter 'limits'"),
        ({"commit": "latest"}, "parameter 'commit' must be"),
        ({"commit": 99}, "has no commit 99"),
    ],
)
def test_bad_parameters_are_one_line_errors(server, crawled, arguments, expected):
    text = error_text(server.call("commits", archive=str(crawled), **arguments))
    assert expected in text
    assert str(crawled.parent) not in text


def test_archive_is_required_and_unknown_tools_are_errors(server):
    assert "parameter 'archive' is required" in error_text(server.call("info"))
    assert "parameter 'archive' is required" in error_text(server.call("info", archive=""))
    assert "unknown tool 'nope'" in error_text(server.call("nope"))
    assert "has no parameter 'extra'" in error_text(server.call("list_archives", extra=1))


def test_errors_never_show_absolute_paths(server, tmp_path):
    missing = tmp_path / "deep" / "gone.nitpicker"
    text = error_text(server.call("info", archive=str(missing)))
    assert text == "no such archive: gone.nitpicker"
    junk = tmp_path / "junk.nitpicker"
    junk.write_text("not a tar at all")
    directory = tmp_path / "plain-dir"
    directory.mkdir()
    for path in (junk, directory):
        text = error_text(server.call("list_commits", archive=str(path)))
        assert path.name in text
        assert str(tmp_path) not in text and "/tmp" not in text, text


def test_open_archives_are_listed_once_per_file(server, crawled):
    payload(server.call("info", archive="site.nitpicker"))  # relative to the server's working directory
    payload(server.call("info", archive=str(crawled)))
    archives = payload(server.call("list_archives"))["archives"]
    mine = [a for a in archives if a["name"] == "site.nitpicker"]
    assert len(mine) == 1
    assert mine[0]["commits"] == 1 and mine[0]["head"] == 1 and mine[0]["live"] is False
    assert mine[0]["calls"] >= 2


def test_logs_go_to_stderr(server, crawled):
    payload(server.call("info", archive=str(crawled)))
    assert "nitpicker MCP server:" in server.errlog_path.read_text(encoding="utf-8")


# --- in process -------------------------------------------------------------------------------------------


def _in_process(toolbox: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    from mcp import Client
    from nitpicker_mcp.server import build_server

    async def main() -> tuple[list[Any], list[Any]]:
        async with Client(build_server(toolbox)) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    try:
        return asyncio.run(main())
    finally:
        toolbox.close()


def test_a_plugin_query_becomes_a_tool_and_big_results_are_cut(pm, crawled):
    from nitpicker_mcp.tools import Toolbox

    from nitpicker_core import Query, hookimpl, query_registry

    def rows(archive, commit, limit, offset):
        items = [{"n": i, "text": "x" * 100} for i in range(offset, 5000)][:limit]
        return {
            "total": 5000,
            "limit": limit,
            "offset": offset,
            "items": items,
            "next_offset": offset + limit,
        }

    class Plugin:
        @hookimpl
        def register_queries(self, register):
            register(
                Query(
                    "many-rows",
                    "Lots of rows.",
                    rows,
                    {
                        "limit": {"type": "integer", "default": 5000},
                        "offset": {"type": "integer", "default": 0},
                    },
                )
            )
            register(Query("blob", "One big string.", lambda archive, commit: "y" * 50_000))

    pm.add_plugin(Plugin(), "big")
    toolbox = Toolbox(query_registry(pm), max_bytes=20_000)
    tools, (cut, blob, small) = _in_process(
        toolbox,
        [
            ("many_rows", {"archive": str(crawled), "offset": 10}),
            ("blob", {"archive": str(crawled)}),
            ("many_rows", {"archive": str(crawled), "limit": 3}),
        ],
    )
    assert {"many_rows", "blob", "info"} <= {t.name for t in tools}
    data = payload(cut)
    assert len(cut.content[0].text.encode()) <= 20_000
    kept = len(data["items"])
    assert 0 < kept < 5000 and data["items"][0]["n"] == 10
    assert data["next_offset"] == 10 + kept and "over the limit" in data["truncated"]
    assert not blob.is_error and blob.structured_content is None
    assert len(blob.content[0].text) == 20_000 and "[truncated" in blob.content[1].text
    assert len(payload(small)["items"]) == 3 and "truncated" not in payload(small)


def test_archives_are_opened_once_reopened_when_changed_and_closed_at_the_end(tmp_path):
    from nitpicker_mcp.archives import ArchiveManager

    opened: list[Any] = []

    class Reader:
        def __init__(self, path):
            self.name, self.closed = path.name, False
            opened.append(self)

        def close(self):
            self.closed = True

    archive = tmp_path / "a.nitpicker"
    archive.write_text("one")
    manager = ArchiveManager(Reader)
    with manager.use(str(archive)) as first:
        archive.write_text("two, longer")  # replaced while in use: the running call keeps its reader
        with manager.use(str(tmp_path / "." / "a.nitpicker")) as second:
            assert second is not first and not first.closed
        assert not first.closed
    assert first.closed and not second.closed
    with manager.use(str(archive)) as third:
        assert third is second
    assert len(opened) == 2 and len(manager) == 1
    manager.close_all()
    assert second.closed and len(manager) == 0


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("no such archive: gone.nitpicker", "no such archive: gone.nitpicker"),
        ("cannot read /home/me/sites/site.nitpicker: bad tar", "cannot read site.nitpicker: bad tar"),
        (
            "[Errno 2] No such file or directory: '/var/cache/my dir/archive.db'",
            "[Errno 2] No such file or directory: 'archive.db'",
        ),
        ("unable to open file:/tmp/x/archive.db?mode=ro", "unable to open archive.db?mode=ro"),
        (r"C:\Users\me\site.nitpicker is locked", "site.nitpicker is locked"),
        ("no page http://example.com/a/b in commit 2", "no page http://example.com/a/b in commit 2"),
        ("3 / 4 and/or\nsecond line", "3 / 4 and/or second line"),
    ],
)
def test_messages_lose_absolute_paths_and_line_breaks(message, expected):
    from nitpicker_mcp.tools import scrub

    assert scrub(message) == expected
