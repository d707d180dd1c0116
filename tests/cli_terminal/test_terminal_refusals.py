"""Refusals and the config commands as a person sees them on a terminal: one line, the fix, the sources."""

from __future__ import annotations

from pty_terminal import Terminal


def test_a_url_without_a_scheme_is_one_line_with_the_suggestion(tmp_path) -> None:
    term = Terminal("crawl", "localhost:8311/", cwd=tmp_path)
    assert term.wait() == 1
    assert term.fragments() == [
        "nitpicker: error: not an http(s) URL: 'localhost:8311/' (did you mean http://localhost:8311/?)"
    ]
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_config_init_then_show_says_where_each_value_comes_from(tmp_path) -> None:
    init = Terminal("config", "init", cwd=tmp_path)
    assert init.wait() == 0 and (tmp_path / "nitpicker.toml").exists()
    again = Terminal("config", "init", cwd=tmp_path)
    assert again.wait() == 1
    errors = [f for f in again.fragments() if f.startswith("nitpicker: error:")]
    assert len(errors) == 1 and "nitpicker.toml exists: give --force" in errors[0], again.text
    (tmp_path / "nitpicker.toml").write_text("[crawl]\nparallels = 3\n")
    show = Terminal("config", "show", "crawl", "--retry", "5", cwd=tmp_path)
    assert show.wait() == 0
    lines = show.fragments()
    assert "[crawl]" in lines
    assert "parallels = 3  # file" in lines and "retry = 5  # flag" in lines
    assert "disable_queries = false  # default" in lines
