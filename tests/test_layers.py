"""The layering contracts of pyproject's [tool.importlinter]: kept by the tree, broken by a planted back edge,
and covering every plugin package and every core module (docs/architecture.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
CONTRACTS = {c["id"]: c for c in CONFIG["contracts"]}
# what a plugin may import: the package, the archive package and the modules it re-exports, indexing, read
PUBLIC = {
    "nitpicker_core",
    "nitpicker_core.archive",
    "nitpicker_core.archive.aggregates",
    "nitpicker_core.archive.digest",
    "nitpicker_core.archive.findings_store",
    "nitpicker_core.archive.linkgraph",
    "nitpicker_core.archive.pagediff",
    "nitpicker_core.archive.referrers",
    "nitpicker_core.archive.times",
    "nitpicker_core.indexing",
    "nitpicker_core.read",
}


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("lint-imports")
    command = [str(script)] if script.exists() else [shutil.which("lint-imports") or "lint-imports"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(root / "plugins")]))
    return subprocess.run(
        [*command, "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the packages the contracts look at, with pyproject.toml as it is."""
    for name in CONFIG["root_packages"]:
        source = ROOT / name if (ROOT / name).is_dir() else ROOT / "plugins" / name
        target = tmp_path / (name if source.parent == ROOT else f"plugins/{name}")
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.js"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_every_contract() -> None:
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("module", "source", "broken"),
    [
        # the archive reaching up into the plugin system: the circle this layering removed
        (
            "nitpicker_core/archive/planted.py",
            "from nitpicker_core.registries import check_registry\n",
            "the archive imports nothing above it",
        ),
        # a back edge through a helper module no layer names: still a chain from a low layer to a high one
        (
            "nitpicker_core/records_planted.py",
            "from nitpicker_core.plugins import make_plugin_manager\n",
            "nitpicker_core: commands above the plugin system",
        ),
        # a plugin reaching past the public names into the writer's internals
        (
            "plugins/nitpicker_csv/planted.py",
            "from nitpicker_core.archive.store import Store\n",
            "plugins import nitpicker_core's public names only",
        ),
        (
            "plugins/nitpicker_csv/planted.py",
            "import nitpicker_checks\n",
            "a plugin never imports another plugin",
        ),
    ],
)
def test_a_planted_back_edge_breaks_its_contract(tree: Path, module: str, source: str, broken: str) -> None:
    clean = _lint_imports(tree)
    assert clean.returncode == 0, clean.stdout + clean.stderr  # the copy alone keeps them all
    if module == "nitpicker_core/records_planted.py":  # records (data, below the archive) now reaches up
        (tree / "nitpicker_core/records.py").write_text(
            (tree / "nitpicker_core/records.py").read_text()
            + "\nfrom nitpicker_core import records_planted\n"
        )
    (tree / module).write_text(source)
    done = _lint_imports(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    report = " ".join(done.stdout.split())
    assert f"{broken}" in report and "BROKEN" in report
    assert "planted" in report  # the planted module is what the report names


def test_every_plugin_package_is_under_contract() -> None:
    plugins = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "__init__.py").exists())
    assert sorted(CONTRACTS["plugins-independent"]["modules"]) == plugins
    assert sorted(CONTRACTS["plugins-public-api"]["source_modules"]) == plugins
    assert set(plugins) <= set(CONFIG["root_packages"])


def test_every_core_module_is_public_or_internal_to_plugins() -> None:
    forbidden = set(CONTRACTS["plugins-public-api"]["forbidden_modules"])
    unclassified = []
    for path in sorted((ROOT / "nitpicker_core").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        covered = any(name == f or name.startswith(f + ".") for f in forbidden)
        if not covered and name not in PUBLIC:
            unclassified.append(name)
    assert unclassified == [], "classify in pyproject's plugins-public-api contract (public or forbidden)"
