"""Settings that cannot take the tool down: each malformed config value is one line, for its plugin only."""

from __future__ import annotations

import json

import pytest
from archives import build_archive

DEEP_ARRAY = "[" * 1000 + "]" * 1000
DEEP_TABLE = ".".join(["a"] * 1000)
# id → (config file, its text, the plugin whose analyzer must fail, what the one error line says)
CASES = {
    "int-inf": (
        "nitpicker.toml",
        "[plugins.text]\nmax_sentence_length = inf\n",
        "text",
        "nitpicker.toml: plugins.text.max_sentence_length: expected int, got inf",
    ),
    "int-nan": (
        "nitpicker.toml",
        "[plugins.text]\nmax_sentence_length = nan\n",
        "text",
        "nitpicker.toml: plugins.text.max_sentence_length: expected int, got nan",
    ),
    "int-huge": (
        "nitpicker.toml",
        "[plugins.text]\nmax_sentence_length = 99999999999999999999999\n",
        "text",
        "nitpicker.toml: plugins.text.max_sentence_length: expected int between -2**63 and 2**63-1, "
        "got 99999999999999999999999",
    ),
    "int-huge-json": (
        ".nitpickerrc.json",
        '{"plugins": {"text": {"max_sentence_length": 1' + "0" * 400 + "}}}",
        "text",
        ".nitpickerrc.json: plugins.text.max_sentence_length: expected int between",
    ),
    "float-inf": (
        "nitpicker.toml",
        "[plugins.lighthouse]\ntimeout = inf\n",
        "lighthouse",
        "nitpicker.toml: plugins.lighthouse.timeout: expected float, got inf",
    ),
    "float-nan": (
        "nitpicker.toml",
        "[plugins.lighthouse]\ntimeout = -nan\n",
        "lighthouse",
        "nitpicker.toml: plugins.lighthouse.timeout: expected float, got nan",
    ),
    "list-item-type": (
        "nitpicker.toml",
        '[plugins.search]\nkeywords = ["a", 5]\n',
        "search",
        "nitpicker.toml: plugins.search.keywords: expected list of strings, got item 5",
    ),
    "list-nested": (
        "nitpicker.toml",
        '[plugins.search]\nkeywords = ["a", ["b"]]\n',
        "search",
        "nitpicker.toml: plugins.search.keywords: expected list of strings, got item ['b']",
    ),
    "deep-array": (
        "nitpicker.toml",
        f"[plugins.text]\nmax_sentence_length = {DEEP_ARRAY}\n",
        "text",
        "cannot read config file nitpicker.toml: nested too deeply",
    ),
    "deep-table": (
        "nitpicker.toml",
        f"[plugins.text.max_sentence_length.{DEEP_TABLE}]\nx = 1\n",
        "text",
        "nitpicker.toml: plugins.text.max_sentence_length: expected int, got {'a': {'a': {'a':",
    ),
    "deep-json": (
        ".nitpickerrc.json",
        '{"plugins": {"text": ' + "[" * 100000 + "]" * 100000 + "}}",
        "text",
        "cannot read config file .nitpickerrc.json: nested too deeply",
    ),
    "tool-not-table": (
        "pyproject.toml",
        '[project]\nname = "x"\n[tool]\nnitpicker = "x"\n',
        "text",
        "pyproject.toml: tool.nitpicker must be a table",
    ),
    "tool-is-string": ("pyproject.toml", 'tool = "x"\n', "text", "pyproject.toml: tool must be a table"),
    "json-list": (
        ".nitpickerrc.json",
        "[1, 2]",
        "text",
        "config file .nitpickerrc.json must hold a table/object at the top level",
    ),
    "plugins-not-table": (
        "nitpicker.toml",
        "plugins = 5\n",
        "text",
        "nitpicker.toml: 'plugins' must be a table",
    ),
    "plugin-not-table": (
        "nitpicker.toml",
        "[plugins]\ntext = 5\n",
        "text",
        "nitpicker.toml: plugins.text must be a table",
    ),
}


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return build_archive(tmp_path_factory.mktemp("archive") / "site.nitpicker")


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    return lines[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_malformed_value_fails_only_the_commands_that_use_it(tmp_path, cli, archive, case):
    name, text, plugin, message = CASES[case]
    (tmp_path / name).write_text(text)
    summary = cli("query", str(archive), "summary", cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["counts"]["internal"]["pages"] == 4
    analyzed = cli("analyze", "--plugin", plugin, str(archive), cwd=tmp_path)
    assert analyzed.returncode == 1
    line = _one_error_line(analyzed.stderr)
    assert line.startswith("nitpicker: error: ") and message in line, line
    assert str(tmp_path) not in line and len(line) < 300


def test_a_bad_value_of_another_plugin_does_not_stop_an_analyzer(tmp_path, cli, archive):
    (tmp_path / "nitpicker.toml").write_text("[plugins.text]\nmax_sentence_length = inf\n")
    analyzed = cli("analyze", "--plugin", "search", str(archive), cwd=tmp_path)
    assert analyzed.returncode == 0, analyzed.stderr
    assert json.loads(analyzed.stdout)["analyzers"]["search"]["pages"]


@pytest.mark.parametrize(
    "flag,value,message",
    [
        (
            "--text-max-sentence-length",
            "99999999999999999999999",
            "plugins.text.max_sentence_length: expected int",
        ),
        ("--lighthouse-timeout", "inf", "plugins.lighthouse.timeout: expected float, got inf"),
        ("--lighthouse-timeout", "nan", "plugins.lighthouse.timeout: expected float, got nan"),
    ],
)
def test_a_malformed_flag_is_one_line(tmp_path, cli, archive, flag, value, message):
    analyzed = cli("analyze", "--plugin", "search", flag, value, str(archive), cwd=tmp_path)
    assert analyzed.returncode == 1
    assert message in _one_error_line(analyzed.stderr)


def test_a_bad_crawl_table_fails_only_crawl(tmp_path, cli, archive):
    (tmp_path / "nitpicker.toml").write_text("[crawl]\nmax_pages = inf\n")
    summary = cli("query", str(archive), "summary", cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    crawled = cli("crawl", "-o", str(tmp_path / "out.nitpicker"), "http://127.0.0.1:9/", cwd=tmp_path)
    assert crawled.returncode == 1
    assert "nitpicker.toml: crawl.max_pages must be a whole number of at least 1, got inf" in _one_error_line(
        crawled.stderr
    )
    assert not (tmp_path / "out.nitpicker").exists()


def test_plugins_lists_settings_errors_as_warnings(tmp_path, cli):
    (tmp_path / "nitpicker.toml").write_text('[plugins.search]\nkeywords = ["a", 5]\n')
    result = cli("plugins", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "nitpicker: warning: nitpicker.toml: plugins.search.keywords: expected list of strings, got item 5"
        in result.stderr.splitlines()
    )
