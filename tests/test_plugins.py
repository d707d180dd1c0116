"""The plugin manager: entry points, allow/deny lists, broken plugins, plugins declining in configure."""

from __future__ import annotations

import json
import os

import pytest
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT

from nitpicker_core import NotConfigured, Query, hookimpl
from nitpicker_core.config import load_config
from nitpicker_core.plugins import PluginRejected, make_plugin_manager

BROKEN = """
import this_module_does_not_exist_anywhere
"""
DECLINES = """
from nitpicker_core import NotConfigured, Query, hookimpl

@hookimpl
def configure(config):
    raise NotConfigured("needs the frobnicate binary on PATH")

@hookimpl
def register_queries(register):
    raise AssertionError("a declined plugin must not be asked for queries")
"""
GOOD = """
from nitpicker_core import Query, hookimpl

@hookimpl
def register_queries(register):
    register(Query("hello", "says hello", lambda archive, commit: "hello"))
"""


def test_builtins_are_loaded_through_entry_points(pm):
    names = {info.name for info in pm.plugin_infos() if info.status == "enabled"}
    assert names == set(BUILTIN_PLUGINS)
    queries = next(i for i in pm.plugin_infos() if i.name == "core-queries")
    assert queries.distribution == "nitpicker" and queries.hooks == ["register_queries"]


def test_deny_list_disables_a_plugin(monkeypatch):
    monkeypatch.setenv("NITPICKER_DISABLE_PLUGINS", "csv, core-queries")
    pm = make_plugin_manager()
    status = {i.name: i.status for i in pm.plugin_infos()}
    assert status["csv"] == "disabled: listed in NITPICKER_DISABLE_PLUGINS"
    assert status["core-queries"].startswith("disabled")
    assert pm.get_plugin("csv") is None and pm.get_plugin("cmd-query") is not None


def test_allow_list_keeps_only_named_plugins(monkeypatch):
    monkeypatch.setenv("NITPICKER_LOAD_PLUGINS", "csv")
    pm = make_plugin_manager()
    assert pm.enabled_names() == ["csv"]
    assert {i.status for i in pm.plugin_infos() if i.name != "csv"} == {
        "disabled: not in NITPICKER_LOAD_PLUGINS"
    }


def test_broken_plugin_is_unavailable_and_others_still_load(tmp_path, cli):
    make_dist(tmp_path, "nitpicker-broken", "broken", "broken_plugin", BROKEN)
    make_dist(tmp_path, "nitpicker-hello", "hello", "hello_plugin", GOOD)
    env = {
        "PYTHONPATH": str(tmp_path),
        "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "broken", "hello"]),
    }
    result = cli("plugins", env=env)
    assert result.returncode == 0, result.stderr
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["broken"]["status"] == (
        "unavailable: ModuleNotFoundError: No module named 'this_module_does_not_exist_anywhere'"
    )
    assert plugins["broken"]["distribution"] == "nitpicker-broken" and plugins["broken"]["hooks"] == []
    assert plugins["hello"] == {
        "name": "hello",
        "module": "hello_plugin",
        "distribution": "nitpicker-hello",
        "version": "1.0",
        "hooks": ["register_queries"],
        "status": "enabled",
    }
    assert all(plugins[name]["status"] == "enabled" for name in BUILTIN_PLUGINS)
    listed = cli("query", "--list", env=env)
    assert "hello" in [q["name"] for q in json.loads(listed.stdout)]


def test_plugin_declining_in_configure_is_unavailable_with_reason(tmp_path, cli):
    make_dist(tmp_path, "nitpicker-frob", "frob", "frob_plugin", DECLINES)
    env = {"PYTHONPATH": str(tmp_path), "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "frob"])}
    result = cli("plugins", env=env)
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["frob"]["status"] == "unavailable: needs the frobnicate binary on PATH"
    listed = cli("query", "--list", env=env)
    assert listed.returncode == 0, listed.stderr  # the declined plugin's register_queries never ran


def test_decline_only_affects_the_declining_plugin(bare_pm):
    seen = []

    class Declines:
        @hookimpl
        def configure(self, config):
            raise NotConfigured("no credentials")

    class Accepts:
        @hookimpl
        def configure(self, config):
            seen.append(config)

    bare_pm.add_plugin(Declines(), "declines")
    bare_pm.add_plugin(Accepts(), "accepts")
    config = load_config(bare_pm, data={})
    bare_pm.configure_plugins(config)
    assert seen == [config]
    status = {i.name: i.status for i in bare_pm.plugin_infos()}
    assert status == {"declines": "unavailable: no credentials", "accepts": "enabled"}


def test_conftest_blocks_installed_third_party_plugins():
    assert os.environ["NITPICKER_LOAD_PLUGINS"].split(",") == BUILTIN_PLUGINS


PLUGIN_PACKAGES = sorted(p.name for p in (ROOT / "plugins").iterdir() if p.name.startswith("nitpicker_"))
# nitpicker_core.indexing: the indexer crawl_open_archive passes (pyproject's plugins-public-api contract)
PUBLIC = {"nitpicker_core", "nitpicker_core.archive", "nitpicker_core.indexing"}


@pytest.mark.parametrize("package", PLUGIN_PACKAGES)
def test_each_builtin_plugin_imports_only_the_public_core(package):
    """Built-in plugins could move to their own distribution: they import nitpicker_core's facade only."""
    import ast

    for path in (ROOT / "plugins" / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                if module.startswith("nitpicker"):
                    assert module in PUBLIC, f"{path.name} imports {module}, not the public API"


def test_plugins_are_configured_once_per_manager(bare_pm):
    calls = []

    class P:
        @hookimpl
        def configure(self, config):
            calls.append(config)

    bare_pm.add_plugin(P(), "p")
    config = load_config(bare_pm, data={})
    bare_pm.configure_plugins(config)
    with pytest.raises(RuntimeError, match="configured once"):
        bare_pm.configure_plugins(config)
    assert calls == [config]


def test_a_late_plugin_with_an_unknown_hook_is_refused_before_it_is_configured(bare_pm):
    configured = []

    class Misspelled:
        @hookimpl
        def configure(self, config):
            configured.append(config)

        @hookimpl
        def register_querys(self, register):
            pass

    bare_pm.configure_plugins(load_config(bare_pm, data={}))
    with pytest.raises(PluginRejected, match="is unavailable: unknown hook register_querys"):
        bare_pm.add_plugin(Misspelled(), "late")  # loud in a test; an entry point is only listed unavailable
    assert configured == [] and bare_pm.get_plugin("late") is None
    assert (
        bare_pm.infos["late"].status
        == "unavailable: unknown hook register_querys (did you mean register_queries?)"
    )
    assert bare_pm.hook.register_querys.get_hookimpls() == []  # nothing of it stays registered


def test_a_failure_is_blamed_on_the_instance_that_raised_when_plugins_share_a_class(bare_pm):
    """Two instances of one class share their hook's code; only the one that raised is unavailable."""
    from nitpicker_core.registries import query_registry

    class Shared:
        def __init__(self, fail):
            self.fail = fail

        @hookimpl
        def register_queries(self, register):
            if self.fail:
                raise RuntimeError("this one breaks")
            register(Query("fine", "works", lambda archive, commit: 1))

    bare_pm.add_plugin(Shared(False), "first")
    bare_pm.add_plugin(Shared(True), "second")
    assert query_registry(bare_pm).names() == ["fine"]
    status = {i.name: i.status for i in bare_pm.plugin_infos()}
    assert status == {"first": "enabled", "second": "unavailable: RuntimeError: this one breaks"}
