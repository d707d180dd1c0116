"""Defaults said three ways agree: each `(default: X)` / `[default: X]` in the help of crawl, analyze, pipeline
and report, the value the command really uses (`nitpicker config show`), and the README and docs/ where they
name one."""

from __future__ import annotations

import json
import re

import click
import pytest
from support import ROOT, run_cli

from nitpicker_cli.main import build_cli
from nitpicker_core.plugins import make_plugin_manager

COMMANDS = ("crawl", "analyze", "pipeline", "report")
SAID = re.compile(r"[(\[]default:? ([^)\]]*)[)\]]")


@pytest.fixture(scope="module")
def cli() -> click.Group:
    return build_cli(make_plugin_manager())


@pytest.fixture(scope="module")
def effective(tmp_path_factory) -> dict[str, dict[str, object]]:
    """Section → key → the value in effect with no flag and no config file."""
    shown = run_cli(
        "config",
        "show",
        "--json",
        cwd=tmp_path_factory.mktemp("no-config"),
        env={"XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("no-user-config"))},
    )
    assert shown.returncode == 0, shown.stderr
    settings = json.loads(shown.stdout)["settings"]
    assert all(v["source"] == "default" for section in settings.values() for v in section.values())
    return {section: {k: v["value"] for k, v in values.items()} for section, values in settings.items()}


def _help_lines(cli: click.Group, name: str) -> dict[str, str]:
    """Each option's help line as `--help` prints it (wrapping undone), by its longest flag."""
    command = cli.commands[name]
    ctx = click.Context(command, info_name=name, parent=click.Context(cli, info_name="nitpicker"))
    lines = {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if isinstance(param, click.Option) and record:
            lines[max(param.opts, key=len)] = " ".join(" ".join(record).split())
    return lines


def _value(said: str) -> object:
    """A default as written in help or README text, as a value (None when it describes rather than names)."""
    # click's "[default: 2; 1<=x<=64]" adds the range; "(default 0: only check them)" says what it means
    said = said.split(";")[0].split(": ")[0].strip().strip("`'\"")
    if re.fullmatch(r"-?\d+(\.\d+)?", said):
        return float(said)
    if "," in said and all(re.fullmatch(r"[\w-]+", p.strip()) for p in said.split(",")):
        return [p.strip() for p in said.split(",")]
    return said if re.fullmatch(r"[\w.-]+", said) else None


def _same(said: object, value: object) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)) and isinstance(said, float):
        return float(value) == said
    return said == value or (isinstance(value, list) and said == [str(v) for v in value])


def _section(flag: str, command: str, effective: dict[str, dict[str, object]]) -> tuple[str, str] | None:
    """Where `config show` keeps the setting of ``flag``: the command's section, or a plugin's."""
    key = flag.lstrip("-").replace("-", "_")
    if key in effective.get(command, {}):
        return command, key
    for section, values in effective.items():
        if section.startswith("plugins.") and flag.startswith(f"--{section[8:]}-"):
            setting = flag[len(section[8:]) + 3 :].replace("-", "_")
            if setting in values:
                return section, setting
    return None


def test_every_default_in_help_is_the_default_in_effect(cli, effective) -> None:
    checked, wrong = 0, []
    for command in COMMANDS:
        for flag, line in _help_lines(cli, command).items():
            where = _section(flag, command, effective)
            for said in SAID.findall(line):
                value = _value(said)
                actual = effective[where[0]][where[1]] if where else None
                if value is None or actual is None:
                    # "(default: HEAD)", "(default 2000)" for an unset option: what the command does without it
                    continue
                checked += 1
                if not _same(value, actual):
                    wrong.append(f"{command} {flag}: help says {said!r}, in effect {actual!r}")
    assert not wrong
    assert checked >= 10  # the parse found the defaults (parallels, retry, heartbeat, axe timeout, …)


def test_no_option_says_its_default_twice(cli) -> None:
    doubled = [
        f"{command} {flag}"
        for command in COMMANDS
        for flag, line in _help_lines(cli, command).items()
        if len(SAID.findall(line)) > 1
    ]
    assert not doubled


def test_the_docs_name_the_same_defaults(cli, effective) -> None:
    docs = "\n".join(
        page.read_text() for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    )
    stated = re.findall(
        r"`(--[a-z][\w-]*)[^`]*`[^`\n.;]{0,40}?(?:\(default:? |, default |defaults to )`?([\w.]+)", docs
    )
    compared, wrong = 0, []
    for flag, said in stated:
        value = _value(said)
        for command in COMMANDS:
            where = _section(flag, command, effective)
            if value is None or where is None or effective[where[0]][where[1]] is None:
                continue
            compared += 1
            if not _same(value, effective[where[0]][where[1]]):
                wrong.append(f"docs: {flag} default {said}; {command} uses {effective[where[0]][where[1]]!r}")
    assert not wrong
    assert compared >= 2  # --parallels, --heartbeat at least
