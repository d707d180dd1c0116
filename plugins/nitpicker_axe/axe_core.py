"""axe-core itself: the script shipped by axe-playwright-python, its version, and its locale files."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from nitpicker_core import UsageError, node_prefix

# bin/install-lighthouse puts npm packages here (axe-core for its locales, lighthouse for its CLI)
INSTALL_HINT = "bin/install-lighthouse installs them (npm i -E --prefix .venv/lighthouse axe-core@{version})"


@cache
def axe_source() -> str:
    """axe.min.js as shipped inside the axe-playwright-python wheel (read once per process)."""
    return (files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")


@cache
def axe_version() -> str:
    """The axe-core version from the banner of axe.min.js, without loading the whole script."""
    with (files("axe_playwright_python") / "axe.min.js").open("r", encoding="utf-8") as handle:
        found = re.search(r"axe v(\d[\w.-]*)", handle.read(200))
    return found.group(1) if found else "unknown"


def locale_dirs(extra: str = "") -> list[Path]:
    """Folders searched for ``<lang>.json``: the ``locale_dir`` setting, then npm axe-core's ``locales``."""
    dirs = [Path(extra)] if extra else []
    dirs.append(node_prefix() / "node_modules" / "axe-core" / "locales")
    return dirs


def _candidates(lang: str) -> list[str]:
    # axe-core names its files pt_BR.json, zh_CN.json, ja.json: try the full tag, then the language alone
    tag = lang.strip().replace("-", "_")
    language, _, region = tag.partition("_")
    names = [f"{language.lower()}_{region.upper()}" if region else language.lower()]
    if region:
        names.append(language.lower())
    return names


def load_locale(lang: str, extra_dir: str = "") -> dict[str, Any] | None:
    """The axe-core locale object for ``lang`` (BCP 47); None for English (axe's built-in messages).

    Raises UsageError when ``lang`` is set but no locale file matches: silently falling back to
    English would make a report look localized when it is not.
    """
    if not lang or lang.strip().lower() in {"en", "en-us", "en_us"}:
        return None
    dirs = locale_dirs(extra_dir)
    for name in _candidates(lang):
        for folder in dirs:
            path = folder / f"{name}.json"
            if path.is_file():
                return json.loads(path.read_text(encoding="utf-8"))
    available = sorted(
        {
            p.stem
            for folder in dirs
            if folder.is_dir()
            for p in folder.glob("*.json")
            if not p.stem.startswith("_")
        }
    )
    if not available:
        raise UsageError(
            f"axe: no axe-core locale files found for lang {lang!r}; "
            + INSTALL_HINT.format(version=axe_version())
        )
    raise UsageError(f"axe: no axe-core locale for lang {lang!r} (available: {', '.join(available)})")
