"""The third-party path: pip-install tests/example_plugin and use it; run its own tests with nitpicker's fixtures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from archives import SITE, build_archive
from support import BUILTIN_PLUGINS, ROOT

from nitpicker_core.archive import open_archive

EXAMPLE = ROOT / "tests" / "example_plugin"
ENV = {"NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "word-count"])}
BUILTINS_ONLY: dict[str, str] = {}  # the conftest's built-ins-only list, with the example importable


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Install the example distribution as a user would (pip, from its source), into a directory of its own.

    Not into this environment: the suite runs in parallel workers that share it, and a plugin appearing in
    the middle of their runs changed the plugin list other tests read (seen in CI). The CLI runs below put
    the directory on PYTHONPATH, where entry points are found exactly as in site-packages.
    """
    base = tmp_path_factory.mktemp("example")
    source, target = base / "source", base / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    # --no-build-isolation: build with this environment's setuptools (bin/setup upgrades it), no download
    done = subprocess.run(
        [*pip, "install", "--no-build-isolation", "--no-deps", "--target", str(target), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    ENV["PYTHONPATH"] = os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")]))
    BUILTINS_ONLY["PYTHONPATH"] = ENV["PYTHONPATH"]
    yield target


def test_plugins_lists_the_example_with_its_hooks(installed, cli):
    plugins = {p["name"]: p for p in json.loads(cli("plugins", env=ENV).stdout)}
    assert plugins["word-count"] == {
        "name": "word-count",
        "module": "nitpicker_example",
        "distribution": "nitpicker-example",
        "version": "0.4.0",
        "status": "enabled",
        "hooks": [
            "configure",
            "crawl_page_filter",
            "register_analyzers",
            "register_commands",
            "register_queries",
            "register_report_sections",
            "register_settings",
            "register_sheets",
            "register_viewer_blueprints",
            "viewer_menu_links",
        ],
    }


def test_installed_but_not_allowed_stays_out(installed, cli):
    plugins = {p["name"]: p for p in json.loads(cli("plugins", env=BUILTINS_ONLY).stdout)}
    assert plugins["word-count"]["status"] == "disabled: not in NITPICKER_LOAD_PLUGINS"
    assert cli("word-stats", "x", env=BUILTINS_ONLY).returncode == 1


def test_analyzer_query_and_command_work_through_the_normal_commands(installed, cli, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker")
    analyzed = cli("analyze", str(archive), "--plugin", "word-count", "--word-count-min-words", "12", env=ENV)
    assert analyzed.returncode == 0, analyzed.stderr
    summary = json.loads(analyzed.stdout)
    assert summary["errors"] == {"word-count": 0} and summary["pages"] == 4

    counts = cli("query", str(archive), "word-counts", env=ENV)
    assert counts.returncode == 0, counts.stderr
    words = {item["url"]: item["words"] for item in json.loads(counts.stdout)["items"]}
    assert words == {SITE + "/": 19, SITE + "/about": 12, SITE + "/blog/": 3, SITE + "/missing": 7}
    filtered = json.loads(cli("query", str(archive), "word-counts", "--min-words", "10", env=ENV).stdout)
    assert filtered["total"] == 2

    thin = cli("query", str(archive), "word-counts", "--min-words", "lots", env=ENV)
    assert thin.returncode == 1
    assert thin.stderr.strip() == "nitpicker: error: parameter 'min_words' must be integer, got 'lots'"

    stats = cli("word-stats", str(archive), env=ENV)
    assert stats.returncode == 0 and stats.stdout.strip() == "4 pages, 41 words, 10.2 words per page"

    with open_archive(archive) as reader:
        thin_pages = sorted(v["url"] for v in reader.violations(analyzer="word-count"))
        runs = reader.execute("SELECT analyzer, version, settings FROM analyzer_run")
    assert thin_pages == [SITE + "/blog/", SITE + "/missing"]  # 3 and 7 words < 12
    assert [(r[0], r[1], json.loads(r[2])) for r in runs] == [
        ("word-count", "0.3.0", {"min_words": 12, "max_url_length": 80, "skip_below": 0})
    ]


def test_config_file_sets_the_plugin_setting(installed, cli, tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker")
    (tmp_path / "nitpicker.toml").write_text("[plugins.word-count]\nmin_words = 5\n")
    assert cli("analyze", "site.nitpicker", "--plugin", "word-count", cwd=tmp_path, env=ENV).returncode == 0
    with open_archive(archive) as reader:
        assert [v["url"] for v in reader.violations(analyzer="word-count")] == [SITE + "/blog/"]


def test_the_crawl_filter_skips_thin_pages_in_a_real_crawl(installed, cli, site, tmp_path):
    (tmp_path / "nitpicker.toml").write_text("[plugins.word-count]\nskip_below = 5\n")
    crawled = cli(
        "crawl",
        "-o",
        "thin.nitpicker",
        "--parallels",
        "2",
        site + "/recursive/",
        cwd=tmp_path,
        env=ENV,
        timeout=300,
    )
    assert crawled.returncode == 0, crawled.stderr
    with open_archive(tmp_path / "thin.nitpicker") as reader:
        pages = {p["url"].removeprefix(site): p for p in reader.pages()}
    assert not pages["/recursive/"]["is_skipped"]  # "Page A Page B Page C": 6 words
    for path in ("/recursive/page-a", "/recursive/page-b", "/recursive/page-c"):
        assert pages[path]["is_skipped"], path
        assert pages[path]["skip_reason"].endswith("words (word-count skip_below 5)"), pages[path][
            "skip_reason"
        ]
    # page-b alone links to the external host; skipped, its links are not followed
    assert not any("external-like" in url for url in pages)


def test_a_crawl_records_the_example_distribution_in_its_environment(installed, cli, site, tmp_path):
    """The manifest's plugins come from the plugin manager's records: a third party's with its version."""
    crawled = cli(
        "crawl", "-o", "one.nitpicker", "--single", site + "/scope/docs/", cwd=tmp_path, env=ENV, timeout=300
    )
    assert crawled.returncode == 0, crawled.stderr
    logged = cli("log", "one.nitpicker", "--json", cwd=tmp_path, env=ENV)
    plugins = json.loads(logged.stdout)[0]["environment"]["plugins"]
    assert plugins["word-count"] == "nitpicker-example 0.4.0"
    assert plugins["archive-writer"].startswith("nitpicker ")


def test_the_examples_own_tests_pass_with_the_shipped_fixtures(tmp_path):
    """The example is a project of its own: `pytest` there finds nitpicker's fixtures through pytest11."""
    env = dict(os.environ, NITPICKER_LOAD_PLUGINS=",".join(BUILTIN_PLUGINS))  # conftest adds word-count
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "t")],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("11 passed"), done.stdout


def test_nitpickers_own_run_leaves_the_examples_tests_to_it():
    """From nitpicker's root the example's tests are not collected: they run once, as their own project."""
    # two arguments: their common ancestor is tests/, so the rootdir is nitpicker's, as in a whole-suite run
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/example_plugin",
            "tests/test_example_plugin.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "tests/test_example_plugin.py::test_nitpickers_own_run_leaves_the_examples_tests_to_it" in done.stdout
    )
    assert "test_example_views" not in done.stdout and "test_example_analyzers" not in done.stdout
