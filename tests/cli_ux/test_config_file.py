"""Every command's options in nitpicker.toml: flags win, `config init` writes them all, `config show` says where."""

from __future__ import annotations

import json
import re

import pytest
from support import run_cli


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _show(*args: str) -> dict:
    result = run_cli("config", "show", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["settings"]


def test_show_says_default_file_and_flag(here) -> None:
    (here / "nitpicker.toml").write_text(
        '[crawl]\nparallels = 2\nmax-pages = 9\n[analyze]\nplugin = ["search"]\n'
        '[plugins.search]\nkeywords = ["a"]\n'
    )
    shown = _show()
    assert shown["crawl"]["parallels"] == {"value": 2, "source": "file"}
    assert shown["crawl"]["max_pages"] == {"value": 9, "source": "file"}
    assert shown["crawl"]["retry"] == {"value": 3, "source": "default"}
    assert shown["analyze"]["plugin"] == {"value": ["search"], "source": "file"}
    assert shown["pipeline"]["plugin"] == {"value": ["search"], "source": "file"}  # pipeline shares [analyze]
    assert shown["plugins.search"]["keywords"] == {"value": ["a"], "source": "file"}
    flagged = _show("pipeline", "--parallels", "6", "--search-keywords", "b")
    assert flagged["pipeline"]["parallels"] == {"value": 6, "source": "flag"}
    assert flagged["pipeline"]["max_pages"] == {"value": 9, "source": "file"}
    assert flagged["plugins.search"]["keywords"] == {"value": ["b"], "source": "flag"}
    # of the plugins' settings crawl reads only those of the checks it indexes the commit with
    assert set(_show("crawl")) == {"crawl", "plugins.checks"}
    depth = _show("crawl", "--checks-max-depth", "2")["plugins.checks"]["max_depth"]
    assert depth == {"value": 2, "source": "flag"}


def test_init_writes_every_setting_and_each_line_loads(here) -> None:
    written = run_cli("config", "init")
    assert written.returncode == 0, written.stderr
    text = (here / "nitpicker.toml").read_text()
    assert all(f"[{table}]" in text for table in ("crawl", "analyze", "report", "pipeline", "plugins.search"))
    again = run_cli("config", "init")
    assert again.returncode == 1 and "nitpicker.toml exists: give --force" in again.stderr
    assert _show()["crawl"]["parallels"]["source"] == "default"  # all commented out
    # uncommented at their defaults, every line is a known key with a value its option takes
    (here / "nitpicker.toml").write_text(re.sub(r"^# (\w+ = (?!…).*)$", r"\1", text, flags=re.M))
    result = run_cli("config", "show", "--json")
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
    settings = json.loads(result.stdout)["settings"]
    sources = {
        item["source"] for table in settings.values() for item in table.values() if item["value"] is not None
    }
    assert sources == {"file"}


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("[crawl]\nparalels = 2\n", "unknown key 'crawl.paralels' (did you mean 'parallels'?)"),
        ("[pipelin]\n", "unknown key 'pipelin' (did you mean 'pipeline'?)"),
        ("[analyze]\nno-cach = true\n", "unknown key 'analyze.no-cach' (did you mean 'no_cache'?)"),
        ("[plugins.serch]\nkeywords = []\n", "unknown plugin 'serch' (did you mean 'search'?)"),
        (
            "[plugins.search]\nkeyword = []\n",
            "unknown key 'plugins.search.keyword' (did you mean 'keywords'?)",
        ),
        ("[report]\nzzz = 1\n", "unknown key 'report.zzz'"),
    ],
)
def test_unknown_names_get_the_closest(here, text, warning) -> None:
    (here / "nitpicker.toml").write_text(text)
    result = run_cli("config", "show")
    assert result.returncode == 0, result.stderr
    assert f"nitpicker: warning: nitpicker.toml: {warning}" in result.stderr.splitlines()


def test_a_bad_value_fails_only_its_command(here, site) -> None:
    (here / "nitpicker.toml").write_text("[crawl]\nparallels = 0\n")
    crawled = run_cli("crawl", "-o", "out.nitpicker", f"{site}/recursive/", cwd=here)
    assert crawled.returncode == 1
    assert crawled.stderr.splitlines() == [
        "nitpicker: error: nitpicker.toml: crawl.parallels: 0 is not in the range 1<=x<=64."
    ]
    assert not (here / "out.nitpicker").exists()
    assert run_cli("plugins").returncode == 0


def _counts(stderr: str) -> str:
    return re.search(r"\((\d+ rendered, \d+ skipped)", stderr).group(1)


def test_crawl_and_analyze_take_the_file_and_flags_win(here, site) -> None:
    (here / "nitpicker.toml").write_text(
        '[crawl]\nexclude = ["/recursive/page-a"]\nparallels = 2\nno_fetch_external = true\n'
        '[analyze]\nplugin = ["search"]\n[plugins.search]\nkeywords = ["Page"]\n'
    )
    from_file = run_cli("crawl", "-o", "a.nitpicker", f"{site}/recursive/", cwd=here)
    assert from_file.returncode == 0, from_file.stderr
    assert _counts(from_file.stderr) == "3 rendered, 1 skipped"  # page-a excluded by the file
    flagged = run_cli(
        "crawl", "-o", "b.nitpicker", "--exclude", "/recursive/page-*", f"{site}/recursive/", cwd=here
    )
    assert flagged.returncode == 0, flagged.stderr
    assert _counts(flagged.stderr) == "1 rendered, 3 skipped"  # the flag replaces the file's list
    analyzed = run_cli("analyze", "a.nitpicker", cwd=here)
    assert analyzed.returncode == 0, analyzed.stderr
    assert list(json.loads(analyzed.stdout)["analyzers"]) == ["search"]
    other = run_cli("analyze", "--plugin", "markup", "a.nitpicker", cwd=here)
    assert other.returncode == 0, other.stderr
    assert list(json.loads(other.stdout)["analyzers"]) == ["markup"]
