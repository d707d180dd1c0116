"""Commit indexing: the registered checks run over a finished commit and their findings stored with it.

The archive stores and reads findings but never runs a check; this service does, with the plugin manager
of the command that made the commit (the crawl, `analyze`, the pipeline), never one found in a global.
The crawler hands the archive sink an ``Indexer`` (``crawl_open_archive``'s ``indexer``); the built-in
sink calls it when a crawl's commit completes, and `analyze` calls ``index_analysis`` when an analyzer's
run completes. Stored findings only make `issues` faster: a commit without them is computed in memory.
"""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version
from typing import Any

from nitpicker_core.archive import findings_store
from nitpicker_core.archive.reader import ArchiveReader
from nitpicker_core.archive.writer import ArchiveWriter
from nitpicker_core.check_context import CheckContext
from nitpicker_core.checks import Check
from nitpicker_core.config import config_of
from nitpicker_core.records import Finding
from nitpicker_core.registries import check_registry, query_registry

__all__ = ["Indexer", "check_settings", "code_versions", "evaluate", "index_analysis", "index_commit"]

log = logging.getLogger(__name__)


class Indexer:
    """Indexes commits with one plugin manager's checks (what ``crawl_open_archive`` receives as ``indexer``)."""

    def __init__(self, pm: Any) -> None:
        self.pm = pm

    def commit(self, writer: ArchiveWriter, commit_id: int) -> int:
        """Store the crawl checks' findings on the completed commit; how many checks were stored."""
        return index_commit(writer, commit_id, self.pm)

    def analysis(self, writer: ArchiveWriter, commit_id: int, analyzer: str) -> int:
        """Store ``analyzer``'s checks' findings after its run on the commit completed."""
        return index_analysis(writer, commit_id, analyzer, self.pm)


def index_commit(writer: ArchiveWriter, commit_id: int, pm: Any) -> int:
    """Run and store the commit's crawl checks (those of no analyzer); how many checks were stored."""
    return _index(writer, commit_id, None, pm)


def index_analysis(writer: ArchiveWriter, commit_id: int, analyzer: str, pm: Any) -> int:
    """Run and store ``analyzer``'s checks on the commit; how many checks were stored."""
    return _index(writer, commit_id, analyzer, pm)


def _core_version() -> str:
    # nitpicker_core.__version__, read without importing the package root (which reaches the crawler)
    try:
        return _dist_version("nitpicker")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def code_versions(pm: Any, checks: Any) -> dict[str, str]:
    """What made each check's findings (check id → text): its plugin, that plugin's distribution version and
    the values of the settings the check names (``Check.settings``), as ``pm``'s configuration gives them.

    Raises ``SettingsError`` when a check names settings of a plugin whose settings are malformed.
    """
    core = _core_version()
    config = config_of(pm) if any(entry.item.settings for entry in checks.entries()) else None
    versions: dict[str, str] = {}
    dists = {}
    try:
        dists = {
            id(plugin): f"{dist.project_name}=={dist.version}" for plugin, dist in pm.list_plugin_distinfo()
        }
    except Exception:  # noqa: BLE001 - a manager without entry points: the core's version stands for all
        pass
    for entry in checks.entries():
        plugin = pm.get_plugin(entry.plugin) if pm is not None else None
        dist = dists.get(id(plugin), f"nitpicker=={core}")
        versions[entry.name] = f"{entry.plugin}:{dist}"
        if entry.item.settings and config is not None:
            values = config.settings_for(entry.plugin)
            used = {key: values.get(key) for key in entry.item.settings}
            versions[entry.name] += "|settings:" + json.dumps(used, sort_keys=True, ensure_ascii=False)
    return versions


def check_settings(pm: Any) -> None:
    """Raise ``SettingsError`` (one line) when a setting some check reads is malformed: a command that indexes
    or shows findings refuses it before it starts, rather than storing nothing or failing the check."""
    code_versions(pm, check_registry(pm))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a commit's checks run, back as it was after.

    The checks of a large commit hold millions of objects (URL rows, the link graph, findings), none of them
    in a cycle; every full collection walked them all again, a third of the checks' time at 100,000 pages.
    Reference counting still frees them; what a cycle holds waits for the next collection after.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def evaluate(check: Check, ctx: CheckContext) -> tuple[set[Finding], str | None]:
    """The check's findings on ``ctx``'s commit, or its error in one line (plugin code may fail)."""
    try:  # one check's failure is that check's row, never the whole build
        found = set(check.findings(ctx)) if check.findings is not None else set()
        wrong = (
            next((f for f in found if not isinstance(f, Finding)), None)
            if set(map(type, found)) - {Finding}  # a million findings: their types at C speed first
            else None
        )
        if wrong is not None:
            raise TypeError(f"findings gave a {type(wrong).__name__}, not a nitpicker_core.Finding")
        return found, None
    except Exception as exc:  # noqa: BLE001 - plugin code
        return set(), f"{type(exc).__name__}: {exc}".splitlines()[0]


def _page_facts(
    check: Check, ctx: CheckContext, token: str
) -> list[tuple[str, Mapping[str, Mapping[str, Any]]]]:
    """The check's per-URL facts with its token, or none when its code fails (the columns stay empty)."""
    assert check.page_facts is not None
    try:
        return [(token, check.page_facts(ctx))]
    except Exception:  # noqa: BLE001 - plugin code
        log.warning("page facts of check %s not stored", check.id, exc_info=True)
        return []


def _index(writer: ArchiveWriter, commit_id: int, analyzer: str | None, pm: Any) -> int:
    """Never raises: the archive stays right without stored findings; readers compute them in memory."""
    if not findings_store.enabled():
        return 0
    try:
        registry = check_registry(pm)
        codes = code_versions(pm, registry)
        checks = [c for c in registry if (c.analyzer == analyzer if analyzer else not c.analyzer)]
        # the live working directory, read-only: it holds what the writer committed a moment ago
        with ArchiveReader(writer.stub) as reader:
            reader.map_for_scans()
            ctx = CheckContext(reader, commit_id, query_registry(pm), config_of(pm))
            tokens = findings_store.Tokens(reader, codes)
            results: list[findings_store.Result] = []
            facts: list[tuple[str, Mapping[str, Mapping[str, Any]]]] = []
            with collector_paused():
                for check in checks:
                    wanted = tokens.of(check, commit_id)
                    if wanted is not None:  # an unfinished commit or run: nothing worth storing
                        results.append((check, wanted, *evaluate(check, ctx)))
                        if check.page_facts is not None and results[-1][3] is None:
                            facts += _page_facts(check, ctx, wanted)
            return writer.store_findings(commit_id, reader, results, tokens, facts)
    except Exception:  # noqa: BLE001 - plugin code and a second reader: the commit itself is already safe
        log.warning("findings of commit %s not stored", commit_id, exc_info=True)
        return 0
