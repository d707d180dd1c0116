"""One definition of each shared default, no import cycles between core modules, dead code stays gone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import ROOT

PACKAGES = ("nitpicker_core", "nitpicker_cli", "nitpicker_viewer", "nitpicker_dashboard", "plugins")


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "build" not in p.parts)


def _literal_strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _definitions(wanted: set[str]) -> list[str]:
    """Module:line of every collection literal holding all of ``wanted`` (a definition, not a mere use)."""
    found = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) and wanted <= _literal_strings(
                node
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


@pytest.mark.parametrize(
    ("wanted", "home"),
    [
        ({"text/html", "application/xhtml+xml"}, "nitpicker_core/content_types.py"),
        ({"desktop-compact", "mobile-small"}, "nitpicker_core/defaults.py"),
        ({"navigation", "dom", "idle", "preset"}, "nitpicker_core/defaults.py"),
    ],
)
def test_a_shared_default_is_defined_once(wanted, home):
    # scrape/images.py maps each preset to its viewport: that is the presets' own table, not a default
    found = [f for f in _definitions(wanted) if not f.startswith("plugins/nitpicker_scrape/images.py")]
    assert len(found) == 1 and found[0].startswith(home + ":"), found


def test_the_node_prefix_is_defined_once():
    users = [
        p.relative_to(ROOT).as_posix()
        for p in _modules()
        if "NITPICKER_NODE_PREFIX" in _literal_strings(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert users == ["nitpicker_core/defaults.py"]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_registries_leave_no_cycle_between_engine_pool_and_reports():
    core = ROOT / "nitpicker_core"
    assert not {m for m in _imports(core / "analyze" / "pool.py") if m.startswith("nitpicker_core.analyze")}
    assert not {m for m in _imports(core / "report.py") if m.startswith("nitpicker_core.analyze")}
    assert not {
        m
        for m in _imports(core / "registries.py")
        if m.startswith(("nitpicker_core.analyze", "nitpicker_core.report"))
    }


def test_dead_code_is_gone():
    import nitpicker_core.config as config
    from nitpicker_core.crawler.options import CrawlOptions
    from nitpicker_core.records import CrawlContext

    assert not hasattr(config, "settings_of") and not hasattr(config, "collect_settings")
    assert "retry_failed" not in CrawlOptions.__dataclass_fields__
    assert "archive" not in CrawlContext.__dataclass_fields__  # the crawler keeps the sink (crawl contract)
    assert "_browser_module" not in (ROOT / "plugins" / "nitpicker_lighthouse" / "runner.py").read_text()
