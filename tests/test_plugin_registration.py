"""Plugin registration through pluggy: unknown hooks, invalid registrations, tracing and wrappers, configure once.

Every plugin here is a real installed distribution (``plugin_dists.make_dist``) run through the real CLI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from archives import build_archive
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS

IMPORTS = "from nitpicker_core import Analyzer, PageReport, Query, hookimpl\n"
QUERY = (
    IMPORTS
    + """
@hookimpl
def register_queries(register):
    register(Query("{name}", "a query", lambda archive, commit: "{name}"))
"""
)
# name → (source, the status `nitpicker plugins` must show)
REJECTED = {
    "misspelled": (
        IMPORTS
        + """
@hookimpl
def register_analysers(register):
    raise AssertionError("never called")
""",
        "unavailable: unknown hook register_analysers (did you mean register_analyzers?)",
    ),
    "two-unknown": (
        IMPORTS
        + """
@hookimpl
def configur(config):
    pass

@hookimpl
def frobnicate(thing):
    pass
""",
        "unavailable: unknown hook configur (did you mean configure?); unknown hook frobnicate",
    ),
    "extra-argument": (
        IMPORTS
        + """
@hookimpl
def register_queries(register, extra):
    pass
""",
        "unavailable: hook register_queries: Argument(s) {'extra'} are declared in the hookimpl but can not be "
        "found in the hookspec",
    ),
    "setting-type": (
        IMPORTS
        + """
@hookimpl
def register_settings(register):
    register("level", type="complex")
""",
        "unavailable: ValueError: setting setting-type.level: unknown type 'complex'",
    ),
    "setting-default": (
        IMPORTS
        + """
@hookimpl
def register_settings(register):
    register("pages", type="int", default="many")
""",
        "unavailable: RegistrationError: setting setting-default.pages: default 'many' is not a int",
    ),
    "setting-key": (
        IMPORTS
        + """
@hookimpl
def register_settings(register):
    register("Max Pages", type="int")
""",
        "unavailable: RegistrationError: setting setting-key.'Max Pages': a key is lower-case letters, digits, - and _",
    ),
    "setting-flag": (
        IMPORTS
        + """
@hookimpl
def register_settings(register):
    register("rules", type="list", flag="--Extract")
""",
        "unavailable: RegistrationError: setting setting-flag.rules: flag '--Extract' is not lower-case kebab-case",
    ),
    "query-name": (
        QUERY.format(name="Top_Pages"),
        "unavailable: RegistrationError: plugin 'query-name' registered a query with an invalid name "
        "'Top_Pages' (lower-case kebab-case)",
    ),
    "query-type": (
        IMPORTS
        + """
@hookimpl
def register_queries(register):
    register("pages")
""",
        "unavailable: RegistrationError: plugin 'query-type' registered a query that is a str, not a "
        "nitpicker_core.Query",
    ),
    "query-duplicate": (
        QUERY.format(name="summary"),
        "unavailable: RegistrationError: query 'summary' is registered twice (by 'core-queries' and "
        "'query-duplicate')",
    ),
    "analyzer-empty": (
        IMPORTS
        + """
class Nothing(Analyzer):
    name = "does-nothing"

@hookimpl
def register_analyzers(register):
    register(Nothing())
""",
        "unavailable: RegistrationError: analyzer 'does-nothing' has neither each_page nor each_url",
    ),
}
ACCEPTED = {
    # helpers named like hooks are no hooks: only functions marked @hookimpl are
    "helpers": (
        IMPORTS
        + """
def register_helper(register):
    raise AssertionError("a helper, not a hook")

def configure_later():
    pass

@hookimpl(optionalhook=True)
def another_tools_hook(thing):
    pass

class Counted(Analyzer):
    name = "url-length"
    label = "URL length"

    def each_url(self, url, is_external, settings):
        return PageReport(cells={"length": len(url)})

@hookimpl
def register_analyzers(register):
    register(Counted())

@hookimpl
def register_settings(register):
    register("limit", type="int", default=80, help="longest URL")
""",
        "enabled",
    ),
}


def _install(root: Path, plugins: dict[str, str]) -> dict[str, str]:
    for name, source in plugins.items():
        make_dist(root, f"nitpicker-{name}", name, name.replace("-", "_") + "_plugin", source)
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, *plugins])}


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return build_archive(tmp_path_factory.mktemp("archive") / "site.nitpicker")


def test_invalid_registrations_make_only_their_plugin_unavailable(tmp_path, cli, archive):
    every = {name: source for name, (source, _) in {**REJECTED, **ACCEPTED}.items()}
    env = _install(tmp_path / "dists", every)
    result = cli("plugins", env=env)
    assert result.returncode == 0, result.stderr
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    for name, (_, status) in {**REJECTED, **ACCEPTED}.items():
        assert plugins[name]["status"] == status, name
    assert all(plugins[name]["hooks"] == [] for name in REJECTED)
    assert plugins["helpers"]["hooks"] == ["another_tools_hook", "register_analyzers", "register_settings"]
    assert all(plugins[name]["status"] == "enabled" for name in BUILTIN_PLUGINS)

    listed = cli("query", "--list", env=env)
    assert listed.returncode == 0, listed.stderr
    names = [q["name"] for q in json.loads(listed.stdout)]
    assert "summary" in names and "Top_Pages" not in names
    helped = cli("analyze", "--help", env=env)
    assert (
        helped.returncode == 0
        and "--helpers-limit" in helped.stdout
        and "--setting-type" not in helped.stdout
    )
    # analyze works with the valid plugin's analyzer (an analyzer without each_* once failed every run)
    analyzed = cli("analyze", str(archive), "--plugin", "url-length", env=env)
    assert analyzed.returncode == 0, analyzed.stderr
    assert "Traceback" not in analyzed.stderr + helped.stderr + listed.stderr


TRACED = (
    IMPORTS
    + """
import os, pathlib

def _note(line):
    with open(os.environ["REGISTRATION_LOG"], "a") as log:
        log.write(line + "\\n")

@hookimpl
def configure(config):
    _note("configured")

@hookimpl(wrapper=True)
def register_queries(register):
    _note("wrapped register_queries")
    return (yield)
"""
)
OWN_QUERY = QUERY.format(name="own-query")
BAD_WRAPPER = (
    IMPORTS
    + """
@hookimpl(wrapper=True)
def register_queries(register):
    yield
    raise RuntimeError("the wrapper broke")
"""
)


def test_configure_and_register_hooks_go_through_pluggy(tmp_path, cli, archive):
    """Tracing shows configure and register_* calls; a wrapper sees every plugin's call; configure runs once."""
    env = _install(tmp_path / "dists", {"traced": TRACED, "own": OWN_QUERY})
    log = tmp_path / "registration.log"
    env |= {"NITPICKER_TRACE_PLUGINS": "1", "REGISTRATION_LOG": str(log)}
    result = cli("query", str(archive), "own-query", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == "own-query"
    traced = result.stderr
    for hook in ("configure", "register_settings", "register_commands", "register_queries"):
        assert f"{hook} [hook]" in traced, hook
    lines = log.read_text().splitlines()
    assert lines.count("configured") == 1  # by the host, once
    # the wrapper wrapped the call of each plugin implementing register_queries: core-queries, own, sheets…
    assert lines.count("wrapped register_queries") >= 2


def test_a_failing_wrapper_is_its_own_plugins_failure(tmp_path, cli, archive):
    env = _install(tmp_path / "dists", {"bad-wrapper": BAD_WRAPPER, "own": OWN_QUERY})
    result = cli("plugins", env=env)
    plugins = {p["name"]: p["status"] for p in json.loads(result.stdout)}
    assert plugins["bad-wrapper"] == "unavailable: RuntimeError: the wrapper broke"
    assert plugins["own"] == "enabled" and plugins["core-queries"] == "enabled"
    listed = cli("query", "--list", env=env)
    assert {"own-query", "summary"} <= {q["name"] for q in json.loads(listed.stdout)}
