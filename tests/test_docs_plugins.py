"""docs/plugins.md covers every public name a plugin author meets, and its tutorial is the tested example."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from support import ROOT

DOC = ROOT / "docs" / "plugins.md"
EXAMPLE = ROOT / "tests" / "example_plugin"
TEMPLATES = ROOT / "nitpicker_viewer" / "templates"

# The shape of an entry, per kind of name: a heading for objects, a list item for reader members and
# template blocks, a table row for hooks.
ENTRY = {
    "core": r"^#{{3,4}} `{name}`$",
    "fixture": r"^### `{name}`$",
    "reader": r"^- `ArchiveReader\.{name}\b",
    "hook": r"^\| `{name}` \|",
    "block": r"^- `\{{% block {name} %\}}`",
}


def core_names() -> set[str]:
    import nitpicker_core

    return set(nitpicker_core.__all__)


def reader_names() -> set[str]:
    from nitpicker_core.archive.reader import ArchiveReader

    members = {name for name in vars(ArchiveReader) if not name.startswith("_")}
    attributes = set(
        re.findall(r"self\.([a-z][a-z_]*)\s*(?::[^=\n]+)?=", inspect.getsource(ArchiveReader.__init__))
    )
    return members | attributes


def hook_names() -> set[str]:
    from nitpicker_core import hookspecs

    return {name for name, func in vars(hookspecs).items() if hasattr(func, f"{hookspecs.PROJECT}_spec")}


def block_names() -> set[str]:
    return {
        name
        for path in TEMPLATES.glob("*.html")
        for name in re.findall(r"\{%-?\s*block\s+(\w+)", path.read_text())
    }


def fixture_names() -> set[str]:
    from nitpicker_testing import pytest_plugin

    def is_fixture(value: object) -> bool:  # pytest 8.4+ wraps fixtures; older versions mark the function
        return type(value).__name__ == "FixtureFunctionDefinition" or hasattr(value, "_pytestfixturefunction")

    return {
        name for name, value in vars(pytest_plugin).items() if not name.startswith("_") and is_fixture(value)
    }


NAMES = {
    "core": core_names,
    "fixture": fixture_names,
    "reader": reader_names,
    "hook": hook_names,
    "block": block_names,
}


def missing(text: str, kind: str, names: set[str]) -> list[str]:
    """The names of ``kind`` that ``text`` has no entry for."""
    return sorted(
        name for name in names if not re.search(ENTRY[kind].format(name=re.escape(name)), text, re.MULTILINE)
    )


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_every_public_name_has_its_entry(kind):
    names = NAMES[kind]()
    assert len(names) >= 4, f"found too few {kind} names to check: {names}"  # the collector itself works
    assert missing(DOC.read_text(), kind, names) == []


@pytest.mark.parametrize(
    "kind, name",
    [
        ("core", "PageInput"),
        ("reader", "analyzer_errors"),
        ("hook", "crawl_page_filter"),
        ("block", "content"),
        ("fixture", "nitpicker_analyze"),
    ],
)
def test_a_name_without_its_entry_is_reported(kind, name):
    text = DOC.read_text()
    entry = re.compile(ENTRY[kind].format(name=re.escape(name)) + ".*$", re.MULTILINE)
    assert entry.search(text), f"{name} should have an entry to remove"
    assert missing(entry.sub("", text), kind, NAMES[kind]()) == [name]


def test_entries_name_only_what_exists():
    """A renamed or removed member leaves no stale entry behind."""
    text = DOC.read_text()
    stale = {
        "reader": set(re.findall(r"^- `ArchiveReader\.(\w+)", text, re.MULTILINE)) - reader_names(),
        "hook": set(re.findall(r"^\| `(\w+)` \|", text, re.MULTILINE)) - hook_names(),
        "block": set(re.findall(r"^- `\{% block (\w+) %\}`", text, re.MULTILINE)) - block_names(),
        "fixture": set(re.findall(r"^### `(nitpicker_\w+)`$", text, re.MULTILINE)) - fixture_names(),
    }
    assert {kind: names for kind, names in stale.items() if names} == {}


def example_sources() -> str:
    files = [
        *EXAMPLE.glob("nitpicker_example/*.py"),
        EXAMPLE / "conftest.py",
        *EXAMPLE.glob("tests/*.py"),
        EXAMPLE / "pyproject.toml",
    ]
    return "\n".join(path.read_text() for path in files)


def code_blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(python|toml)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def test_tutorial_code_is_the_tested_example_plugin():
    """Every python/toml block of the doc is copied from tests/example_plugin, whose tests run it."""
    sources = example_sources()
    blocks = code_blocks(DOC.read_text())
    assert len(blocks) >= 10
    stale = [block for _, block in blocks if block.strip() not in sources]
    assert stale == []


def test_a_block_changed_from_the_example_is_reported():
    changed = DOC.read_text().replace("register(WordCount())", "register(WordCounter())")
    sources = example_sources()
    assert [b for _, b in code_blocks(changed) if b.strip() not in sources] != []


def test_the_doc_links_resolve():
    text = DOC.read_text()
    anchors = {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.*)$", text, re.MULTILINE)
    }
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links and sorted(set(links) - anchors) == []
    for target in re.findall(r"\]\(([^)#:]+\.md)\)", text):
        assert (DOC.parent / target).is_file(), target


def test_the_pytest_plugin_imports_nothing_of_nitpicker(tmp_path):
    """Loaded in every pytest run of the environment (nitpicker's own included): it must cost nothing."""
    import subprocess
    import sys

    probe = (
        "import sys, nitpicker_testing.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith(('nitpicker', 'flask', 'lxml', 'click'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['nitpicker_testing', 'nitpicker_testing.pytest_plugin']"


def test_the_distribution_declares_the_pytest_plugin():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"nitpicker": "nitpicker_testing.pytest_plugin"}
    assert Path(ROOT / "nitpicker_testing" / "pytest_plugin.py").is_file()
