"""Plugins that cannot take the tool down: each failure mode as a real installed distribution, real CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from archives import build_archive
from plugin_dists import make_dist
from support import BUILTIN_PLUGINS, ROOT, as_from_a_terminal, wait_until

from nitpicker_core import __version__

QUERY = "from nitpicker_core import Query, hookimpl\n"
# name → (source of the plugin module, the status `nitpicker plugins` must show)
FAILURES = {
    "import-baseexception": (
        "class Boom(BaseException):\n    pass\nraise Boom('import went wrong')\n",
        "unavailable: Boom: import went wrong",
    ),
    "import-systemexit": ("raise SystemExit(3)\n", "unavailable: SystemExit: 3"),
    "import-keyboardinterrupt": (
        "raise KeyboardInterrupt('raised by the plugin')\n",
        "unavailable: KeyboardInterrupt: raised by the plugin",
    ),
    "import-generatorexit": ("raise GeneratorExit('closed')\n", "unavailable: GeneratorExit: closed"),
    "configure-runtimeerror": (
        QUERY + "@hookimpl\ndef configure(config):\n    raise RuntimeError('configure broke')\n",
        "unavailable: RuntimeError: configure broke",
    ),
    "configure-systemexit": (
        QUERY + "@hookimpl\ndef configure(config):\n    raise SystemExit(4)\n",
        "unavailable: SystemExit: 4",
    ),
    "commands-runtimeerror": (
        QUERY + "@hookimpl\ndef register_commands(cli):\n"
        "    @cli.command('half-made')\n    def half_made():\n        pass\n"
        "    raise RuntimeError('commands broke')\n",
        "unavailable: RuntimeError: commands broke",
    ),
    "queries-runtimeerror": (
        QUERY + "@hookimpl\ndef register_queries(register):\n"
        "    register(Query('half-made', 'never', lambda archive, commit: 1))\n"
        "    raise RuntimeError('queries broke')\n",
        "unavailable: RuntimeError: queries broke",
    ),
    "queries-duplicate": (
        QUERY + "@hookimpl\ndef register_queries(register):\n"
        "    register(Query('summary', 'a third party taking a built-in query', lambda archive, commit: 1))\n",
        "unavailable: RegistrationError: query 'summary' is registered twice (by 'core-queries' and "
        "'queries-duplicate')",
    ),
    "commands-takeover": (
        QUERY + "@hookimpl\ndef register_commands(cli):\n"
        "    @cli.command('query')\n    def query():\n        print('not the real query')\n",
        "unavailable: command 'query' is taken by cmd-query",
    ),
    "settings-unknown-type": (
        QUERY + "@hookimpl\ndef register_settings(register):\n    register('level', type='complex')\n",
        "unavailable: ValueError: setting settings-unknown-type.level: unknown type 'complex'",
    ),
    "settings-baseexception": (
        QUERY + "@hookimpl\ndef register_settings(register):\n    raise SystemExit('settings broke')\n",
        "unavailable: SystemExit: settings broke",
    ),
}
NOISY = {  # plugins that print to stdout where they must not reach it
    "noisy-import": "print('PLUGIN NOISE at import')\n",
    "noisy-configure": QUERY + "@hookimpl\ndef configure(config):\n    print('PLUGIN NOISE in configure')\n",
    "noisy-queries": QUERY
    + "@hookimpl\ndef register_queries(register):\n    print('PLUGIN NOISE in queries')\n",
    "noisy-commands": QUERY
    + "@hookimpl\ndef register_commands(cli):\n    print('PLUGIN NOISE in commands')\n",
}


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return build_archive(tmp_path_factory.mktemp("archive") / "site.nitpicker")


def _install(root: Path, plugins: dict[str, str]) -> dict[str, str]:
    """Each plugin as its own distribution ``nitpicker-<name>`` on one path; the env that loads them."""
    for name, source in plugins.items():
        make_dist(root, f"nitpicker-{name}", name, name.replace("-", "_") + "_plugin", source)
    return {"PYTHONPATH": str(root), "NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, *plugins])}


def test_failing_plugins_are_unavailable_and_everything_else_works(tmp_path, cli, archive):
    """Every failure mode installed at once (one run of each command keeps this affordable)."""
    env = _install(tmp_path / "dists", {name: source for name, (source, _) in FAILURES.items()})
    result = cli("plugins", env=env)
    assert result.returncode == 0, result.stderr
    plugins = {(p["name"], p["distribution"]): p for p in json.loads(result.stdout)}
    for name, (_, status) in FAILURES.items():
        assert plugins[(name, f"nitpicker-{name}")]["status"] == status
        assert plugins[(name, f"nitpicker-{name}")]["hooks"] == []
    assert all(plugins[(p, "nitpicker")]["status"] == "enabled" for p in BUILTIN_PLUGINS if p != "lighthouse")
    version = cli("--version", env=env)
    assert (version.returncode, version.stdout.strip()) == (0, f"nitpicker, version {__version__}"), (
        version.stderr
    )
    helped = cli("--help", env=env)
    assert helped.returncode == 0 and "query" in helped.stdout and "half-made" not in helped.stdout
    assert "Traceback" not in helped.stderr
    listed = cli("query", "--list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "half-made" not in [q["name"] for q in json.loads(listed.stdout)]
    summary = cli("query", str(archive), "summary", env=env)
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["counts"]["internal"]["pages"] == 4
    assert "Traceback" not in summary.stderr


@pytest.mark.parametrize("name", ["import-systemexit", "configure-runtimeerror", "commands-runtimeerror"])
def test_one_failing_plugin_alone_leaves_every_command(tmp_path, cli, name):
    """The three failures the issue saw take everything down, each installed on its own."""
    env = _install(tmp_path / "dists", {name: FAILURES[name][0]})
    version = cli("--version", env=env)
    assert (version.returncode, version.stdout.strip()) == (0, f"nitpicker, version {__version__}"), (
        version.stderr
    )
    result = cli("plugins", env=env)
    assert result.returncode == 0, result.stderr
    assert {p["name"]: p["status"] for p in json.loads(result.stdout)}[name] == FAILURES[name][1]


def test_print_in_a_plugin_never_reaches_json_output(tmp_path, cli, archive):
    env = _install(tmp_path / "dists", NOISY)
    for args in (("query", str(archive), "summary"), ("query", "--list"), ("plugins",)):
        result = cli(*args, env=env)
        assert result.returncode == 0, result.stderr
        json.loads(result.stdout)  # the whole of stdout is one JSON document
        assert "PLUGIN NOISE" not in result.stdout
        assert all(
            f"PLUGIN NOISE {where}" in result.stderr for where in ("at import", "in configure", "in commands")
        )
    assert "PLUGIN NOISE in queries" in result.stderr  # `plugins` asks every plugin for its contributions


IMPOSTOR = (
    QUERY
    + """
@hookimpl
def register_queries(register):
    register(Query("impostor", "must never be registered", lambda archive, commit: 1))
"""
)


@pytest.mark.parametrize("impostor_first", [True, False])
def test_a_third_party_cannot_take_a_builtin_name(tmp_path, cli, impostor_first):
    root = tmp_path / "dists"
    make_dist(root, "evil-markup", "markup", "evil_markup", IMPOSTOR)
    env = {"NITPICKER_LOAD_PLUGINS": ",".join(BUILTIN_PLUGINS)}
    if impostor_first:  # PYTHONPATH comes before site-packages: the impostor's dist-info is found first
        result = cli("plugins", env={**env, "PYTHONPATH": str(root)})
    else:  # appended to sys.path: nitpicker's own dist-info is found first
        code = (
            f"import sys; sys.path.append({str(root)!r}); from nitpicker_cli.main import main; "
            "sys.exit(main(sys.argv[1:]))"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, "plugins"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **env},
            cwd=ROOT,
        )
    assert result.returncode == 0, result.stderr
    plugins = {(p["name"], p["distribution"]): p for p in json.loads(result.stdout)}
    assert plugins[("markup", "nitpicker")]["status"] == "enabled"
    assert plugins[("markup", "nitpicker")]["module"] == "nitpicker_markup"
    assert (
        plugins[("markup", "evil-markup")]["status"]
        == "unavailable: name taken by nitpicker's built-in markup"
    )
    assert plugins[("markup", "evil-markup")]["hooks"] == []


def test_unknown_names_in_load_plugins_are_reported(cli):
    env = {"NITPICKER_LOAD_PLUGINS": ",".join([*BUILTIN_PLUGINS, "nosuch", "typo-markup"])}
    result = cli("plugins", env=env)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "not installed" in line]
    assert warnings == [
        "nitpicker: warning: NITPICKER_LOAD_PLUGINS names plugins that are not installed: nosuch, typo-markup"
    ]
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["nosuch"]["status"] == plugins["typo-markup"]["status"] == "unknown: not installed"


@pytest.mark.parametrize("value", ["", " , ,", "  "])
def test_an_empty_load_plugins_means_unset(cli, value):
    result = cli("plugins", env={"NITPICKER_LOAD_PLUGINS": value})
    assert result.returncode == 0, result.stderr
    status = {p["name"]: p["status"] for p in json.loads(result.stdout) if p["distribution"] == "nitpicker"}
    assert set(status) == set(BUILTIN_PLUGINS)
    assert {s for name, s in status.items() if name != "lighthouse"} == {"enabled"}


def test_a_command_whose_plugin_is_not_loaded_says_why(cli):
    result = cli("query", "--list", env={"NITPICKER_LOAD_PLUGINS": "markup"})
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == (
        "nitpicker: error: No such command 'query': its plugin cmd-query is disabled: not in "
        "NITPICKER_LOAD_PLUGINS (see `nitpicker --help`)"
    )
    helped = cli("--help", env={"NITPICKER_LOAD_PLUGINS": "markup"})
    assert helped.returncode == 0, helped.stderr
    listed = helped.stdout.split("Commands not loaded:")[1].split()
    assert listed[listed.index("query") : listed.index("query") + 7] == [
        "query",
        "plugin",
        "cmd-query",
        "is",
        "disabled:",
        "not",
        "in",
    ]


# A plugin whose import never ends (it loops, sleeping, inside the plugin): the test waits on its marker file,
# never on the sleep, then sends Ctrl-C.
SLOW_IMPORT = """
import pathlib, time
pathlib.Path({marker!r}).write_text("loading")
while True:
    time.sleep(0.05)
"""


def test_ctrl_c_while_a_plugin_loads_still_stops_nitpicker(tmp_path):
    marker = tmp_path / "loading"
    env = _install(tmp_path / "dists", {"slow": SLOW_IMPORT.format(marker=str(marker))})
    process = subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "plugins"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
        preexec_fn=as_from_a_terminal,
    )
    try:
        wait_until(marker.exists, "the slow plugin to start loading")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "nitpicker: interrupted" in err and out == ""


def test_print_in_a_plugin_never_reaches_the_mcp_stream(tmp_path):
    env = _install(tmp_path / "dists", NOISY)
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
        cwd=tmp_path,
    )
    # stdin stays open until the last answer came, as a real client keeps it: at EOF a server may stop
    # before it answered what it had read
    server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    server.stdin.flush()
    answers = []
    for line in server.stdout:  # every line must be a protocol message
        answers.append(json.loads(line))
        if answers[-1].get("id") == 2:
            break
    server.stdin.close()
    answers += [json.loads(line) for line in server.stdout]
    stderr = server.stderr.read()
    server.wait(timeout=120)
    assert {a.get("id") for a in answers} >= {1, 2}, stderr
    assert "PLUGIN NOISE at import" in stderr and "PLUGIN NOISE in queries" in stderr
