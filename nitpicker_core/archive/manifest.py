"""The environment manifest a commit records: which tools made it, so a diff can tell site changes from tool changes."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .logical import STATE_HASH_VERSION

PLUGIN_GROUP = "nitpicker"


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def plugin_distributions() -> dict[str, str]:
    """Every installed plugin (entry point name) with the distribution and version that provides it.

    A scan of the installed distributions, for callers without a plugin manager: a crawl records what its
    manager found when it loaded the entry points (``NitpickerPluginManager.distributions``) instead.
    """
    found = {}
    labels: dict[int, str] = {}  # each distribution's METADATA parsed once, not once per entry point
    for ep in importlib.metadata.entry_points(group=PLUGIN_GROUP):
        dist = ep.dist
        if dist is None:
            found[ep.name] = "unknown"
            continue
        if id(dist) not in labels:
            meta = dist.metadata
            labels[id(dist)] = f"{meta['Name']} {meta['Version']}"
        found[ep.name] = labels[id(dist)]
    return dict(sorted(found.items()))


# --- the Chromium version, cached per binary -------------------------------------------------------------

CACHE_FILE = "chromium-versions.json"


def cache_path() -> Path:
    """Where the versions of the Chromium binaries already asked are kept: the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nitpicker" / CACHE_FILE


def _read_cache(path: Path) -> dict[str, Any]:
    """The cache's entries; a missing, unreadable or malformed file is an empty cache (rewritten later)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(path: Path, entries: Mapping[str, Any]) -> None:
    """Replace the cache file atomically (a temporary file renamed over it); failing to is no error."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(dict(entries), out, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _ask_version(executable: str) -> str | None:
    try:
        done = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip().splitlines()
    return text[0].strip() if done.returncode == 0 and text else None


@functools.cache
def chromium_version(executable: str | None) -> str | None:
    """What ``executable --version`` says (``Chromium 120.0.6099.224``), or None when it cannot say.

    Starting Chromium to ask takes seconds on a busy machine, so the answer is kept in the user's cache
    (``cache_path()``) keyed by the binary's path, mtime and size: asked again only when the binary changed.
    """
    if not executable:
        return None
    executable = os.path.abspath(executable)
    try:
        stat = os.stat(executable)
    except OSError:
        return None
    key = {"mtime_ns": stat.st_mtime_ns, "size": stat.st_size}
    path = cache_path()
    entries = _read_cache(path)
    entry = entries.get(executable)
    if isinstance(entry, dict) and isinstance(entry.get("version"), str) and key.items() <= entry.items():
        return str(entry["version"])
    version = _ask_version(executable)
    if version is not None:
        # a binary gone since (an old Playwright download) leaves the cache with it
        entries = {p: e for p, e in entries.items() if isinstance(e, dict) and os.path.exists(p)}
        entries[executable] = {**key, "version": version}
        _write_cache(path, entries)
    return version


def crawl_environment(
    extra: Mapping[str, Any] | None = None, *, browser: str | None = None
) -> dict[str, Any]:
    """nitpicker, state hash, Python, OS, Playwright and Chromium versions and the plugins, plus ``extra``.

    The plugins are ``extra["plugins"]`` when the crawler put its plugin manager's records there (what the
    manager found loading the entry points); without them the installed distributions are scanned.
    ``browser`` is the Chromium executable the crawl uses (``nitpicker_core.find_browser()``; the archive
    never asks the crawler itself), None when there is none.
    """
    extra = dict(extra or {})
    env: dict[str, Any] = {
        "nitpicker": _version("nitpicker") or "0.0.0",
        "state_hash": STATE_HASH_VERSION,
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "os": platform.platform(),
        "playwright": _version("playwright"),
        "chromium": chromium_version(browser),
        "plugins": extra.pop("plugins", None) or plugin_distributions(),
    }
    if os.environ.get("NITPICKER_BROWSER"):
        env["browser_override"] = True  # $NITPICKER_BROWSER chose the executable
    env.update(extra)
    return env


def differs(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Whether ``current`` names other tools than the newest run ``recorded`` (a commit's environment) has."""
    newest = (recorded.get("later_runs") or [recorded])[-1]
    return any(newest.get(key) != value for key, value in current.items() if key != "later_runs")


def rule_set(version: str) -> str | None:
    """The rule set an analyzer version names after ``+`` (``1.2+axe-core.4.10.2`` → ``axe-core 4.10.2``)."""
    if "+" not in version:
        return None
    local = version.split("+", 1)[1]
    for index, char in enumerate(local):  # the name ends at the first dot followed by a digit
        if char == "." and local[index + 1 : index + 2].isdigit():
            return f"{local[:index]} {local[index + 1 :]}"
    return local


def analyzer_manifest(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per analyzer run of a commit: its version, settings hash, rule set and status."""
    return [
        {
            "analyzer": run["analyzer"],
            "version": run["version"],
            "settings_hash": run.get("settings_hash") or "",
            "rule_set": rule_set(str(run["version"])),
            "status": run["status"],
        }
        for run in runs
    ]


def tools_line(commit: Mapping[str, Any]) -> str:
    """The tools that made a commit, short: nitpicker, Chromium and the analyzers' rule sets."""
    env = commit.get("environment") or {}
    parts = [f"nitpicker {env['nitpicker']}"] if env.get("nitpicker") else []
    if env.get("chromium"):
        parts.append(" ".join(str(env["chromium"]).split()[:2]))  # "Chromium 156.0…", not the build notes
    for run in commit.get("analyzers") or ():
        label = run["rule_set"] or f"{run['analyzer']} {run['version']}"
        if label not in parts:
            parts.append(label)
    return ", ".join(parts)


# --- shared storage: a commit's options and environment, once per distinct value --------------------------

# A commits column that holds ``{"$manifest": id}`` names the row of commit_manifest holding its value: every
# re-crawl with the same tools and options repeats 2 KB of JSON otherwise. Short values stay inline.
SHARED_KEY = "$manifest"
SHARED_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS commit_manifest (id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, "
    "value TEXT NOT NULL)"
)
INLINE_BELOW = 64  # bytes: a reference and its row would cost more
COLUMNS = ("options", "environment")


def create_table(conn: sqlite3.Connection) -> None:
    conn.execute(SHARED_SCHEMA)


def share(conn: sqlite3.Connection, text: str) -> str:
    """What a commits column stores for the JSON ``text``: a reference to its shared row, or ``text`` itself."""
    if len(text) < INLINE_BELOW:
        return text
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    row = conn.execute("SELECT id FROM commit_manifest WHERE digest = ?", (key,)).fetchone()
    if row is None:
        row = conn.execute(
            "INSERT INTO commit_manifest (digest, value) VALUES (?, ?) RETURNING id", (key, text)
        ).fetchone()
    return json.dumps({SHARED_KEY: int(row[0])})


def shared_values(conn: sqlite3.Connection) -> dict[int, Any]:
    """Every shared value by id (none in an archive written before they were shared)."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'commit_manifest'"
    ).fetchone():
        return {}
    return {int(r[0]): json.loads(r[1]) for r in conn.execute("SELECT id, value FROM commit_manifest")}


def resolve(value: Any, shared: Mapping[int, Any]) -> Any:
    """A decoded commits column with its reference, if any, replaced by the shared value."""
    if isinstance(value, dict) and len(value) == 1 and SHARED_KEY in value:
        return shared.get(int(value[SHARED_KEY]), {})
    return value


def gc(conn: sqlite3.Connection) -> int:
    """Drop the shared values no commit refers to any more; how many."""
    used = " UNION ".join(
        f"SELECT json_extract({c}, '$.\"{SHARED_KEY}\"') AS id FROM commits WHERE json_valid({c})"
        for c in COLUMNS
    )
    return int(
        conn.execute(
            f"DELETE FROM commit_manifest WHERE id NOT IN (SELECT id FROM ({used}) WHERE id IS NOT NULL)"
        ).rowcount
    )
