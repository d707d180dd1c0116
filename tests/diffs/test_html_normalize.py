"""The HTML diff's normalisation: built-in patterns for per-render noise, and the config file's [diff] table."""

from __future__ import annotations

import hashlib

import pytest
from archives import SITE, build_archive

from nitpicker_core import ScrapeResult, UsageError
from nitpicker_core.archive import pagediff
from nitpicker_core.config import load_config

BUILTIN = pagediff.patterns()


@pytest.mark.parametrize(
    "noisy, normalised",
    [
        ('<script nonce="r4nd0m+/=">x()</script>', '<script nonce="…">x()</script>'),
        (
            '<meta http-equiv="Content-Security-Policy" content="script-src \'nonce-abc123==\'">',
            '<meta http-equiv="Content-Security-Policy" content="script-src \'nonce-…\'">',
        ),
        ('<meta name="csrf-token" content="9f8e7d">', '<meta name="csrf-token" content="…">'),
        (
            '<input type="hidden" name="csrfmiddlewaretoken" value="abc">',
            '<input type="hidden" name="csrfmiddlewaretoken" value="…">',
        ),
        (
            '<input value="abc" type="hidden" name="authenticity_token">',
            '<input value="…" type="hidden" name="authenticity_token">',
        ),
        (
            '<link href="/site.css?v=1733050000" rel="stylesheet">',
            '<link href="/site.css?v=…" rel="stylesheet">',
        ),
        (
            '<script src="/app.js?lang=en&amp;ver=6.4.2"></script>',
            '<script src="/app.js?lang=en&amp;ver=…"></script>',
        ),
        ("<p>Generated 2026-12-01T18:04:05.123Z</p>", "<p>Generated …</p>"),
        ('<time datetime="2026-12-01 18:04+01:00">today</time>', '<time datetime="…">today</time>'),
    ],
)
def test_builtin_patterns_blank_what_differs_between_renders(noisy, normalised):
    assert pagediff.normalize_html(noisy, BUILTIN) == normalised


@pytest.mark.parametrize(
    "kept",
    [
        '<input type="hidden" name="page" value="2">',  # not a token
        '<a href="/search?q=shoes&amp;page=2">next</a>',  # a query string that is no cache-buster
        "<p>Opening hours 2026-12-01</p>",  # a date without a time is content
        '<meta name="description" content="Tokens and nonces explained">',
    ],
)
def test_content_is_left_alone(kept):
    assert pagediff.normalize_html(kept, BUILTIN) == kept


def test_touching_tags_go_on_lines_of_their_own_so_a_minified_page_diffs_by_line():
    assert (
        pagediff.normalize_html("<ul><li>a</li><li>b</li></ul>", []) == "<ul>\n<li>a</li>\n<li>b</li>\n</ul>"
    )
    assert (
        pagediff.normalize_html('<p><script src="a.js"></script></p>', [])
        == '<p>\n<script src="a.js"></script>\n</p>'
    )


def test_a_pattern_without_groups_blanks_its_whole_match_and_a_bad_one_is_one_line():
    compiled = pagediff.patterns([r"build \d+"], builtin=False)
    assert (
        pagediff.normalize_html('<p>build 42</p><script nonce="n">', compiled)
        == '<p>…</p>\n<script nonce="n">'
    )
    with pytest.raises(UsageError, match=r"normalisation pattern '\(' is not a valid regular expression"):
        pagediff.patterns(["("])


def test_the_diff_table_of_the_config_file(bare_pm):
    assert load_config(bare_pm, data={}).diff == {"normalize": [], "builtin_normalize": True}
    table = load_config(bare_pm, data={"diff": {"normalize": ["x=(\\d+)"], "builtin_normalize": False}}).diff
    assert table == {"normalize": ["x=(\\d+)"], "builtin_normalize": False}
    unknown = load_config(bare_pm, data={"diff": {"normalise": []}})
    assert unknown.warnings == ["config: unknown key 'diff.normalise'"]
    for bad, message in (
        ({"normalize": "x"}, "diff.normalize must be a list of regular expressions"),
        ({"normalize": ["("]}, "diff.normalize: '(' is not a valid regular expression"),
        ({"builtin_normalize": "yes"}, "diff.builtin_normalize must be true or false"),
        ([], "'diff' must be a table"),
    ):
        config = load_config(bare_pm, data={"diff": bad})
        with pytest.raises(UsageError, match=message.replace("(", r"\(")):
            assert config.diff is None
        assert config.crawl == {}  # only what reads the table fails


def page(build: str, nonce: str) -> ScrapeResult:
    html = (
        f'<html><head><script nonce="{nonce}" src="/a.js?v={nonce}"></script></head>'
        f"<body><p>Build {build}</p><p>Same text</p></body></html>"
    )
    return ScrapeResult(
        url=SITE + "/",
        status=200,
        content_type="text/html",
        html=html,
        anchors=[],
        metadata={"title": "Home"},
    )


def test_cli_html_diff_uses_the_patterns_of_the_config_file(cli, tmp_path):
    archive = tmp_path / "site.nitpicker"
    build_archive(archive, [page("101", "aaa")])
    build_archive(archive, [page("102", "bbb")])
    before = hashlib.sha256(archive.read_bytes()).digest()

    plain = cli("diff", str(archive), "--html", SITE + "/", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "-<p>Build 101</p>" in plain.stdout and "+<p>Build 102</p>" in plain.stdout
    assert "aaa" not in plain.stdout and "bbb" not in plain.stdout  # the nonce and the cache-buster

    (tmp_path / "nitpicker.toml").write_text("[diff]\nnormalize = ['Build (\\d+)']\n")
    assert cli("diff", str(archive), "--html", SITE + "/", cwd=tmp_path).stdout == ""

    (tmp_path / "nitpicker.toml").write_text(
        "[diff]\nnormalize = ['Build (\\d+)']\nbuiltin_normalize = false\n"
    )
    raw = cli("diff", str(archive), "--html", SITE + "/", cwd=tmp_path).stdout
    assert '-<script nonce="aaa" src="/a.js?v=aaa"></script>' in raw.splitlines()
    assert " <p>Build …</p>" in raw.splitlines()  # a line of context now, the same on both sides

    (tmp_path / "nitpicker.toml").write_text("[diff]\nnormalize = ['Build (']\n")
    bad = cli("diff", str(archive), "--html", SITE + "/", cwd=tmp_path)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("nitpicker: error: nitpicker.toml: diff.normalize: 'Build (' is not a valid")
    assert cli("diff", str(archive), cwd=tmp_path).returncode == 0  # only --html reads the table
    assert hashlib.sha256(archive.read_bytes()).digest() == before
