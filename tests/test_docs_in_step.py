"""The README and docs/ stay in step with the code.

- Every command's options, as its `--help` prints them, are the options its guide's option tables list: an
  option added to a command without a line in its guide fails, and so does a documented option that is gone.
- The README's command table names every installed command, and only those.
- The README starts with the two commands CI and a new user run: the pipeline, then `bin/test`, which is
  exactly what `.ci/run` runs.
- Every relative link of README.md and docs/**/*.md reaches a file, and a `#fragment` a heading of it.
- The generated parts of the reference (the checks and queries catalogues) are what the registries hold, the
  exit-code table is the one `--help` prints.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
from functools import cache
from pathlib import Path
from types import ModuleType

import click
import pytest
from click.testing import CliRunner
from support import ROOT

from nitpicker_cli import exit_codes
from nitpicker_cli.app import App
from nitpicker_cli.main import build_cli
from nitpicker_core.plugins import make_plugin_manager

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]


# The guide that documents each command (its option tables must be there, or in a page listed for it).
GUIDES = {
    "nitpicker": "guide/cli.md",
    "plugins": "guide/cli.md",
    "crawl": "guide/crawl.md",
    "login": "guide/login.md",
    "analyze": "guide/analyze.md",
    "pipeline": "guide/pipeline.md",
    "issues": "guide/issues.md",
    "query": "guide/query.md",
    "log": "guide/generations.md",
    "diff": "guide/generations.md",
    "gc": "guide/generations.md",
    "viewer": "guide/viewer.md",
    "report": "guide/report.md",
    "mcp": "guide/mcp.md",
    "dashboard": "guide/dashboard.md",
    "config init": "guide/config.md",
    "config show": "guide/config.md",
}
# Option tables of a command may also sit in these shared pages (crawl's options are pipeline's too, …).
SHARED = {
    "pipeline": {"guide/crawl.md", "guide/report.md", "reference/settings.md"},
    "analyze": {"reference/settings.md"},
    "crawl": {"reference/settings.md"},  # the check settings
    "issues": {"reference/settings.md"},
}

TAG = re.compile(r"^<!-- options: (.+) -->$")
OPTION = re.compile(r"--[a-z][\w-]*")
HELP_OPTION = re.compile(r"^  (?:-\w, )?(--[a-z][\w-]*)", re.M)


@pytest.fixture(scope="module")
def cli() -> click.Group:
    pm = make_plugin_manager()
    cli = build_cli(pm)
    cli.context_settings = {**cli.context_settings, "obj": App(pm)}
    return cli


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command's path below the group, and the group itself."""
    found: list[tuple[str, ...]] = [prefix]
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += [path for path in commands(command, (*prefix, name)) if path != (*prefix, name)]
        else:
            found.append((*prefix, name))
    return found


def help_options(cli: click.Group, path: tuple[str, ...]) -> set[str]:
    """The long options `nitpicker PATH --help` prints, --help itself left out."""
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="nitpicker", terminal_width=200)
    assert result.exit_code == 0, result.output
    return set(HELP_OPTION.findall(result.output)) - {"--help"}


@cache
def option_tables() -> dict[str, dict[str, set[str]]]:
    """Command → page → the options that page's tables tagged `<!-- options: COMMAND, … -->` list."""
    tables: dict[str, dict[str, set[str]]] = {}
    for page in PAGES:
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            tag = TAG.match(line)
            if not tag:
                continue
            documented: set[str] = set()
            for row in lines[i + 3 :]:
                if not row.startswith("|"):
                    break
                documented |= set(OPTION.findall(row.split("|")[1]))
            for command in (name.strip() for name in tag.group(1).split(",")):
                where = tables.setdefault(command, {}).setdefault(page.relative_to(DOCS).as_posix(), set())
                where |= documented
    return tables


def name(path: tuple[str, ...]) -> str:
    return " ".join(path) or "nitpicker"


def test_every_command_has_a_guide(cli) -> None:
    assert {name(path) for path in commands(cli)} == set(GUIDES)


def test_every_option_in_help_is_documented_in_the_commands_guide(cli) -> None:
    tables = option_tables()
    undocumented = {}
    for path in commands(cli):
        command = name(path)
        pages = tables.get(command, {})
        assert GUIDES[command] in pages, f"{command}: no option table in docs/{GUIDES[command]}"
        assert set(pages) <= {GUIDES[command], *SHARED.get(command, ())}, f"{command}: tables in {set(pages)}"
        missing = help_options(cli, path) - set().union(*pages.values())
        if missing:
            undocumented[command] = sorted(missing)
    assert undocumented == {}, "options missing from their guide's option table"


def test_every_documented_option_is_in_help(cli) -> None:
    tables = option_tables()
    known = {name(path): path for path in commands(cli)}
    gone = {}
    for command, pages in tables.items():
        assert command in known, f"an option table names {command!r}, which is no command"
        offered = help_options(cli, known[command])
        for page, documented in pages.items():
            if documented - offered:
                gone[f"{command} in docs/{page}"] = sorted(documented - offered)
    assert gone == {}, "documented options that --help does not offer"


def test_the_readme_names_every_command(cli) -> None:
    text = README.read_text()
    table = text[text.index("## Commands") :].split("\n## ")[0]
    named = set(re.findall(r"^\| `nitpicker ([a-z-]+)", table, re.M))
    named |= set(re.findall(r"^\| `nitpicker [a-z-]+`, `([a-z-]+)`, `([a-z-]+)`", table, re.M)[0])
    assert named == set(cli.commands)


# -- the two commands ------------------------------------------------------------------------------------------


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```(?:sh|bash)?\n(.*?)^```", text, re.M | re.S)


def commands_of(script: str) -> list[str]:
    return [
        line.strip()
        for line in script.splitlines()
        if line.strip() and not line.strip().startswith("#") and not line.startswith(("set ", "cd "))
    ]


def test_the_readme_starts_with_the_two_commands() -> None:
    text = README.read_text()
    first_section = text.split("\n## ")[1]
    assert first_section.startswith("Two commands")
    run, test = code_blocks(text)[:2]
    assert run.strip() == "bin/nitpicker-run https://example.com/"
    assert test.strip() == "bin/test"
    for command in (run, test):
        script = ROOT / shlex.split(command)[0]
        assert script.is_file() and os.access(script, os.X_OK), script


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    test = code_blocks(README.read_text())[1].strip()
    assert commands_of((ROOT / ".ci" / "run").read_text()) == [test]


def test_the_run_command_sets_up_and_runs_the_pipeline() -> None:
    steps = commands_of((ROOT / "bin" / "nitpicker-run").read_text())
    assert any("bin/setup" in step for step in steps)
    assert steps[-1].startswith("exec ") and steps[-1].endswith('nitpicker" pipeline "$@"')


# -- links -----------------------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


@cache
def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose_keeping_code_spans(page.read_text()), re.M):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def prose_keeping_code_spans(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def links(page: Path) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", prose(page.read_text()))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{target}: no heading #{fragment}")
    assert broken == []


def test_every_page_of_docs_is_reachable_from_the_index() -> None:
    index = DOCS / "README.md"
    linked = {(index.parent / t.partition("#")[0]).resolve() for t in links(index) if not t.startswith("#")}
    unlisted = [p.relative_to(DOCS).as_posix() for p in PAGES[1:] if p != index and p.resolve() not in linked]
    assert unlisted == []


# -- generated reference ---------------------------------------------------------------------------------------


def make_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_reference", DOCS / "reference" / "make_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("catalogue", ["checks", "queries"])
def test_the_reference_is_the_registry(catalogue: str) -> None:
    generator = make_reference()
    page, build = generator.PAGES[catalogue]
    assert generator.current(catalogue, page.read_text()) == build(), (
        f"docs/reference/{page.name} differs from the registry: run .venv/bin/python docs/reference/make_reference.py"
    )


def test_the_query_summary_names_every_query() -> None:
    generator = make_reference()
    text = (DOCS / "reference" / "queries.md").read_text()
    summary = set(re.findall(r"^\| `([a-z0-9-]+)` \|", text.split("## Every query")[0], re.M))
    listed = set(re.findall(r"^### ([a-z0-9-]+)$", generator.queries_catalogue(), re.M))
    assert summary == listed


def test_the_exit_codes_page_is_the_help_table() -> None:
    text = (DOCS / "reference" / "exit-codes.md").read_text()
    documented = [int(code) for code in re.findall(r"^\| `(\d+)` \|", text, re.M)]
    assert documented == [code for code, _ in exit_codes.TABLE]


def test_the_crawl_checks_table_is_the_registry() -> None:
    """The hand-written table of crawl checks by priority and type names each crawl check once, in its cell."""
    from nitpicker_core.registries import check_registry

    registry = check_registry(make_plugin_manager())
    expected = {
        registry[name].id: (registry[name].priority, registry[name].type)
        for name in registry.names()
        if registry.plugin_of(name) == "checks"
    }
    text = (DOCS / "reference" / "checks.md").read_text()
    table = text.split("## Built-in crawl checks")[1].split("\n\n| priority |")[1].split("\n\n")[0]
    found: dict[str, tuple[str, str]] = {}
    for row in table.splitlines()[2:]:
        priority, *cells = (cell.strip() for cell in row.strip("|").split(" | "))
        for kind, cell in zip(("issue", "warning", "opportunity"), cells, strict=True):
            while re.search(r"\([^()]*\)", cell):  # notes in parentheses name other checks
                cell = re.sub(r"\([^()]*\)", "", cell)
            for check in re.findall(r"`([a-z0-9-]+)`", cell):
                assert check not in found, f"{check} twice"
                found[check] = (priority, kind)
    assert found == expected


def test_the_readme_stays_short() -> None:
    """The README says what nitpicker is and how to start; the rest belongs in docs/."""
    assert len(README.read_text().splitlines()) <= 300


def test_every_benchmark_is_in_the_benchmarks_page() -> None:
    text = (DOCS / "benchmarks.md").read_text()
    missing = [path.name for path in sorted((ROOT / "benchmarks").glob("*.py")) if path.name not in text]
    assert missing == []
