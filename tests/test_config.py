"""Config files found by walking up, settings declared once, flags overriding, unknown keys reported."""

from __future__ import annotations

import json

import pytest

from nitpicker_core import UsageError, hookimpl
from nitpicker_core.config import find_config_file, load_config


class Keywords:
    @hookimpl
    def register_settings(self, register):
        register("keywords", type="list", default=[], help="words to look for")
        register("limit", type="int", default=5)
        register("strict", type="bool", default=False)


@pytest.fixture
def kpm(bare_pm):
    bare_pm.add_plugin(Keywords(), "search")
    return bare_pm


@pytest.mark.parametrize(
    "name,text",
    [
        ("nitpicker.toml", '[plugins.search]\nkeywords = ["alpha", "beta"]\nlimit = 7\n'),
        (
            ".nitpickerrc.json",
            json.dumps({"plugins": {"search": {"keywords": ["alpha", "beta"], "limit": 7}}}),
        ),
        (
            "pyproject.toml",
            '[project]\nname = "x"\n[tool.nitpicker.plugins.search]\nkeywords = ["alpha", "beta"]\nlimit = 7\n',
        ),
    ],
)
def test_each_file_kind_is_found_walking_up(tmp_path, kpm, name, text):
    (tmp_path / name).write_text(text)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    config = load_config(kpm, start=deep)
    assert config.path == tmp_path / name
    assert config.settings_for("search") == {"keywords": ["alpha", "beta"], "limit": 7, "strict": False}
    assert config.warnings == []


def test_pyproject_without_our_table_is_skipped(tmp_path):
    (tmp_path / "nitpicker.toml").write_text("[plugins]\n")
    inner = tmp_path / "proj"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "x"\n')
    path, _ = find_config_file(inner)
    assert path == tmp_path / "nitpicker.toml"


def test_flags_override_the_file_for_one_run(tmp_path, kpm):
    (tmp_path / "nitpicker.toml").write_text("[plugins.search]\nlimit = 7\n")
    config = load_config(kpm, start=tmp_path)
    overridden = config.override({"search_limit": "9", "search_keywords": "a, b", "search_strict": None})
    assert overridden.settings_for("search") == {"keywords": ["a", "b"], "limit": 9, "strict": False}
    assert config.get("search", "limit") == 7  # the loaded config is untouched


def test_unknown_keys_are_reported(tmp_path, kpm):
    (tmp_path / "nitpicker.toml").write_text(
        'colour = "blue"\n[plugins.search]\nlimti = 3\n[plugins.nosuch]\nx = 1\n'
    )
    config = load_config(kpm, start=tmp_path)
    assert config.warnings == [
        "nitpicker.toml: unknown key 'colour'",
        "nitpicker.toml: unknown key 'plugins.search.limti' (did you mean 'limit'?)",
        "nitpicker.toml: unknown plugin 'nosuch'",
    ]


@pytest.mark.parametrize(
    "text,message",
    [
        (
            '[plugins.search]\nlimit = "many"\n',
            "nitpicker.toml: plugins.search.limit: expected int, got 'many'",
        ),
        ("[plugins.search\n", "cannot read config file nitpicker.toml"),
    ],
)
def test_bad_values_are_one_line_errors_when_the_plugin_is_used(tmp_path, kpm, text, message):
    (tmp_path / "nitpicker.toml").write_text(text)
    config = load_config(kpm, start=tmp_path)  # loading never fails: commands not using search keep working
    with pytest.raises(UsageError) as err:
        config.settings_for("search")
    assert message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(UsageError):
        config.override({}).get("search", "limit")


def test_a_bad_value_stops_only_its_own_plugin(tmp_path, kpm):
    class Other:
        @hookimpl
        def register_settings(self, register):
            register("depth", type="int", default=3)

    kpm.add_plugin(Other(), "other")
    (tmp_path / "nitpicker.toml").write_text("[plugins.search]\nlimit = inf\n[plugins.other]\ndepth = 4\n")
    config = load_config(kpm, start=tmp_path)
    assert config.settings_for("other") == {"depth": 4}
    assert config.errors == {"plugins.search": "nitpicker.toml: plugins.search.limit: expected int, got inf"}


def test_setting_derives_flag_and_key(kpm):
    config = load_config(kpm, data={})
    setting = config.settings["search.keywords"]
    assert (setting.config_key, setting.flag, setting.dest) == (
        "plugins.search.keywords",
        "--search-keywords",
        "search_keywords",
    )


class Rules:
    @hookimpl
    def register_settings(self, register):
        register("rules", type="list", default=[], flag="extract", split=False, help="extractors")


def test_a_setting_may_name_its_flag_and_keep_list_items_whole(tmp_path, bare_pm):
    bare_pm.add_plugin(Rules(), "extract")
    (tmp_path / "nitpicker.toml").write_text("[plugins.extract]\nrules = 'p=css:h1, h2'\n")
    config = load_config(bare_pm, start=tmp_path)
    setting = config.settings["extract.rules"]
    assert (setting.config_key, setting.flag, setting.dest) == (
        "plugins.extract.rules",
        "--extract",
        "extract_rules",
    )
    assert config.get("extract", "rules") == ["p=css:h1, h2"]  # one item: the comma is the selector's
    overridden = config.override({"extract_rules": ["a=regex:x{1,2}", "b=css:p, li"]})
    assert overridden.get("extract", "rules") == ["a=regex:x{1,2}", "b=css:p, li"]
