"""Help that matches the behaviour: pipeline's --plugin and --all, analyzer flags, query's list, search's keywords."""

from __future__ import annotations

import json
import re

from archives import build_archive
from support import run_cli


def _help(*command: str) -> str:
    result = run_cli(*command, "--help")
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.split())  # wrapped lines joined: help texts are matched whole


def test_pipeline_help_says_what_plugin_and_all_do() -> None:
    text = _help("pipeline")
    assert "(default: all)" not in text
    assert (
        "--plugin NAME Analyzer to run (repeatable; default: the default analyzers, all but opt-in ones"
        in text
    )
    assert "--all Run every analyzer, lighthouse and other opt-in ones included." in text


def test_analyzer_flags_show_no_type_names_or_empty_defaults() -> None:
    for command in ("analyze", "pipeline"):
        text = _help(command)
        assert "--axe-lang LANG" in text and "--search-keywords KEYWORDS" in text
        assert not re.search(
            r" --(axe|search|markup|text|lighthouse|main-content)-[\w-]+ (STR|INT|FLOAT|VALUE|TEXT) ", text
        ), command
        assert "(default: '')" not in text and "(default: [])" not in text
        assert "(default: performance, accessibility, best-practices, seo)" in text
        assert "(default: 30.0)" in text  # a real default is still shown


def test_query_help_lists_every_query() -> None:
    listed = run_cli("query", "--list")
    names = [q["name"] for q in json.loads(listed.stdout)]
    assert len(names) > 10
    text = run_cli("query", "--help").stdout
    section = text.split("Queries (parameters: `nitpicker query --list`):", 1)[1]
    assert [name for name in names if re.search(rf"^\s+{re.escape(name)}\s", section, re.M)] == names


def test_search_without_keywords_says_so(tmp_path) -> None:
    archive = build_archive(tmp_path / "a.nitpicker")
    chosen = run_cli("analyze", "--plugin", "search", str(archive), cwd=tmp_path)
    assert chosen.returncode == 0, chosen.stderr
    said = [line for line in chosen.stderr.splitlines() if "no keywords" in line]
    assert said == [
        "WARNING nitpicker: search: no keywords to count: give --search-keywords WORD or keywords in "
        "[plugins.search]"
    ]
    # a second run in the same process (the CLI runs in-process here) says it again: the analyzer object
    # lives as long as the process, what it said belongs to one run
    again = run_cli("analyze", "--plugin", "search", str(archive), cwd=tmp_path)
    assert [line for line in again.stderr.splitlines() if "no keywords" in line] == said
    default = run_cli("analyze", "--plugin", "markup", "--search-keywords", "x", str(archive), cwd=tmp_path)
    assert default.returncode == 0 and "no keywords" not in default.stderr
    # which analyzers the default run chooses does not depend on the pages: an archive without any
    # spares those runs every default analyzer's work (axe's Chromium among them)
    empty = build_archive(tmp_path / "empty.nitpicker", pages=[])
    plain = run_cli("analyze", str(empty), cwd=tmp_path, input="")
    assert plain.returncode == 0, plain.stderr
    assert (
        "search" not in json.loads(plain.stdout)["analyzers"]
    )  # it would count nothing: left out by default
    with_keywords = run_cli("analyze", "--search-keywords", "a", str(empty), cwd=tmp_path, input="")
    assert "search" in json.loads(with_keywords.stdout)["analyzers"]


def test_pipeline_all_selects_every_analyzer(tmp_path, site) -> None:
    result = run_cli(
        "pipeline",
        f"{site}/recursive/",
        "--single",
        "--no-image",
        "--all",
        "--no-analyze",
        "-o",
        "p.nitpicker",
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    from nitpicker_core.analyze import analyzer_registry
    from nitpicker_core.plugins import make_plugin_manager

    every = analyzer_registry(make_plugin_manager()).names()
    assert {"markup", "search", "axe"} <= set(every)
    journal = next((tmp_path / "p.nitpicker.runs").glob("*.jsonl"))
    lines = [json.dumps(json.loads(line)) for line in journal.read_text().splitlines()]
    assert any(f'"analyze": {{"plugins": {json.dumps(every)}}}' in line for line in lines), lines[0]
