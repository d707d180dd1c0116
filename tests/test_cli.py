"""The CLI shell: version, help on every command, one-line errors, exit codes, --verbose tracebacks."""

from __future__ import annotations

import pytest

from nitpicker_cli.main import build_cli
from nitpicker_core import __version__
from nitpicker_core.plugins import make_plugin_manager

COMMANDS = sorted(build_cli(make_plugin_manager()).commands)


def test_version(cli):
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"nitpicker, version {__version__}"


def test_every_builtin_command_is_there():
    assert {"analyze", "crawl", "log", "pipeline", "plugins", "query"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_on_every_command(cli, command):
    result = cli(command, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Usage: nitpicker {command}")


def test_unknown_command_is_one_line_exit_1(cli):
    result = cli("frobnicate")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "nitpicker: error: No such command 'frobnicate'. (see `nitpicker --help`)"
    ]


def test_missing_archive_is_one_line_and_traceback_only_with_verbose(cli, tmp_path):
    result = cli("log", "missing.nitpicker", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["nitpicker: error: no such archive: missing.nitpicker"]
    verbose = cli("--verbose", "log", "missing.nitpicker", cwd=tmp_path)
    assert verbose.returncode == 1
    assert "Traceback (most recent call last)" in verbose.stderr
    assert verbose.stderr.strip().splitlines()[-1] == "nitpicker: error: no such archive: missing.nitpicker"
    assert list(tmp_path.iterdir()) == []


def test_pipeline_rejects_a_bad_url_in_one_line(cli, tmp_path):
    result = cli("pipeline", "ftp://example.test/", cwd=tmp_path)
    assert result.returncode == 1
    assert (
        result.stderr.strip().splitlines()[-1]
        == "nitpicker: error: not an http(s) URL: 'ftp://example.test/'"
    )
    assert list(tmp_path.iterdir()) == []


def test_silent_hides_config_warnings_verbose_does_not(cli, tmp_path):
    (tmp_path / "nitpicker.toml").write_text("colour = 'blue'\n")
    loud = cli("plugins", cwd=tmp_path)
    assert "nitpicker: warning: nitpicker.toml: unknown key 'colour'" in loud.stderr
    quiet = cli("--silent", "plugins", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_log_and_diff_between_two_commits(cli, tmp_path):
    from archives import SITE, build_archive, demo_pages

    archive = build_archive(tmp_path / "site.nitpicker")
    changed = demo_pages()
    changed[1].metadata["title"] = "About us"
    changed[1].html = changed[1].html.replace("About", "About us")
    build_archive(archive, changed[:-1])  # a second crawl: /about changed, the external page is gone
    log = cli("log", str(archive))
    assert [line.split()[:2] for line in log.stdout.splitlines()] == [["HEAD", "2"], ["1", "parent"]]
    # pages as every screen counts them (HTML answers of the site: 4), not the commit's URLs (5, issue 33)
    assert all("  pages 4  urls 5  " in line for line in log.stdout.splitlines()), log.stdout
    result = cli("diff", str(archive))
    assert result.returncode == 0, result.stderr
    import json

    data = json.loads(result.stdout)
    assert (data["base"], data["commit"]) == (1, 2)
    # the external page was not fetched again: it is still linked, so it stays, as a bare link target
    assert sorted(data["modified"]) == [SITE + "/about", "https://elsewhere.test/"] and data["removed"] == []
    fields = json.loads(cli("diff", str(archive), "1", "2", "--url", SITE + "/about").stdout)["fields"]
    assert fields["title"] == ["About", "About us"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("analyze", "x.nitpicker", "--timeout", "nan"), "'nan' is not a finite number."),
        (("analyze", "x.nitpicker", "--timeout", "inf"), "'inf' is not a finite number."),
        (("mcp", "--wait", "nan"), "'nan' is not a finite number."),
        (("dashboard", "--stale-after", "inf"), "'inf' is not a finite number."),
    ],
)
def test_a_number_option_refuses_nan_and_infinity_in_one_line(cli, tmp_path, args, message):
    result = cli(*args, cwd=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nitpicker: error: ") and message in lines[0], (
        result.stderr
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("header", "line"),
    [
        (
            "X-Token: abc\r\nX-Injected: 1",
            "nitpicker: error: --header X-Token: the value has a line break or NUL",
        ),
        (
            "X-Token: secret\nHost: evil",
            "nitpicker: error: --header X-Token: the value has a line break or NUL",
        ),
        ("Bad Name: secret", "nitpicker: error: --header 'Bad Name': not an HTTP header name"),
        ("no-colon-secret", "nitpicker: error: --header must be NAME:VALUE"),
    ],
)
def test_a_header_that_would_split_a_request_is_refused_without_echoing_its_value(
    cli, tmp_path, header, line
):
    result = cli("crawl", "http://127.0.0.1:9/", "-o", "x.nitpicker", "--header", header, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [line] or result.stderr.strip().splitlines()[0].startswith(
        line
    )
    assert "secret" not in result.stderr and "evil" not in result.stderr
    assert list(tmp_path.iterdir()) == []
